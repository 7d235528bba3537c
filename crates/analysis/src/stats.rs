//! Median and spread over groups of rows, with polars.
//!
//! The median is [`Stats::of`]'s, everywhere: the middle value, or the midpoint
//! `(a + b) / 2` of the two middle ones ([`median`], polars' `Midpoint` quantile; polars'
//! own `median` interpolates as `a + (b - a) / 2`, which may differ in the last bit).

use anyhow::Result;
use polars::prelude::{col, lit, Column, DataFrame, DataType, Expr, IntoLazy, QuantileMethod, SortMultipleOptions};
use std::collections::BTreeMap;

use crate::model::Stats;

/// A frame being built row by row: text key columns and numeric metric columns.
pub(crate) struct FrameBuilder {
    keys: Vec<(String, Vec<String>)>,
    metrics: Vec<(String, Vec<Option<f64>>)>,
}

impl FrameBuilder {
    pub(crate) fn new(keys: &[&str], metrics: &[&str]) -> Self {
        FrameBuilder {
            keys: keys.iter().map(|k| (k.to_string(), Vec::new())).collect(),
            metrics: metrics.iter().map(|m| (m.to_string(), Vec::new())).collect(),
        }
    }

    /// Appends a row; `keys` and `metrics` in the order given to [`FrameBuilder::new`].
    pub(crate) fn push(&mut self, keys: &[String], metrics: &[Option<f64>]) {
        debug_assert_eq!(keys.len(), self.keys.len());
        debug_assert_eq!(metrics.len(), self.metrics.len());
        for ((_, col), k) in self.keys.iter_mut().zip(keys) {
            col.push(k.clone());
        }
        for ((_, col), v) in self.metrics.iter_mut().zip(metrics) {
            col.push(v.filter(|x| x.is_finite()));
        }
    }

    pub(crate) fn finish(self) -> Result<DataFrame> {
        let mut columns = Vec::new();
        for (name, values) in self.keys {
            columns.push(Column::new(name.into(), values));
        }
        for (name, values) in self.metrics {
            columns.push(Column::new(name.into(), values));
        }
        Ok(DataFrame::new_infer_height(columns)?)
    }
}

/// Group key (the key columns' values, in order) → metric → its median, min, max over the
/// group's non-null values (`None` when the group has none).
pub(crate) type Grouped = BTreeMap<Vec<String>, BTreeMap<String, Option<Stats>>>;

/// The median of `values` as [`Stats::of`] takes it.
pub(crate) fn median(values: Expr) -> Expr {
    values.quantile(lit(0.5), QuantileMethod::Midpoint)
}

/// Median, min, max and count of each metric per group of `keys`.
pub(crate) fn stats_by(df: &DataFrame, keys: &[&str], metrics: &[&str]) -> Result<Grouped> {
    let mut out = Grouped::new();
    if df.height() == 0 {
        return Ok(out);
    }
    let mut aggs: Vec<Expr> = Vec::new();
    for m in metrics {
        let v = col(*m).drop_nulls();
        aggs.push(median(v.clone()).alias(format!("{m}|median")));
        aggs.push(v.clone().min().alias(format!("{m}|min")));
        aggs.push(v.clone().max().alias(format!("{m}|max")));
        aggs.push(v.count().cast(DataType::Float64).alias(format!("{m}|n")));
    }
    let key_exprs: Vec<Expr> = keys.iter().map(|k| col(*k)).collect();
    let keys_owned: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let g =
        df.clone().lazy().group_by(key_exprs).agg(aggs).sort(keys_owned, SortMultipleOptions::default()).collect()?;
    let key_columns = keys
        .iter()
        .map(|k| -> Result<Vec<String>> {
            let c = g.column(k)?.cast(&DataType::String)?;
            Ok(c.str()?.iter().map(|s| s.unwrap_or_default().to_string()).collect())
        })
        .collect::<Result<Vec<_>>>()?;
    for i in 0..g.height() {
        let key: Vec<String> = key_columns.iter().map(|c| c[i].clone()).collect();
        let mut by_metric = BTreeMap::new();
        for m in metrics {
            let n = f64_at(&g, &format!("{m}|n"), i)?.unwrap_or(0.0);
            let s = match (
                f64_at(&g, &format!("{m}|median"), i)?,
                f64_at(&g, &format!("{m}|min"), i)?,
                f64_at(&g, &format!("{m}|max"), i)?,
            ) {
                (Some(median), Some(min), Some(max)) if n > 0.0 => Some(Stats { median, min, max, n: n as u32 }),
                _ => None,
            };
            by_metric.insert(m.to_string(), s);
        }
        out.insert(key, by_metric);
    }
    Ok(out)
}

/// The statistics of `metric` in `group`, if any.
pub(crate) fn get(g: &Grouped, key: &[String], metric: &str) -> Option<Stats> {
    g.get(key).and_then(|m| m.get(metric).copied().flatten())
}

/// Value `i` of a Float64 column, `None` when null or not finite.
fn f64_at(df: &DataFrame, column: &str, i: usize) -> Result<Option<f64>> {
    let c = df.column(column)?.cast(&DataType::Float64)?;
    Ok(c.f64()?.get(i).filter(|v| v.is_finite()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max_per_group() {
        let mut b = FrameBuilder::new(&["w"], &["x"]);
        for (w, x) in [("a", Some(1.0)), ("a", Some(3.0)), ("a", Some(2.0)), ("a", None), ("b", Some(5.0)), ("c", None)]
        {
            b.push(&[w.to_string()], &[x]);
        }
        let g = stats_by(&b.finish().unwrap(), &["w"], &["x"]).unwrap();
        assert_eq!(get(&g, &["a".into()], "x"), Some(Stats { median: 2.0, min: 1.0, max: 3.0, n: 3 }));
        assert_eq!(get(&g, &["b".into()], "x").unwrap().n, 1);
        assert_eq!(get(&g, &["c".into()], "x"), None);
    }

    /// polars' median of a group is bit for bit [`Stats::of`]'s, also for an even count
    /// whose two middle values `a + (b - a) / 2` would round otherwise.
    #[test]
    fn the_median_of_a_group_is_that_of_stats_of_bit_for_bit() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut b = FrameBuilder::new(&["g"], &["x"]);
        let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for g in 0..2000 {
            let n = 1 + (next() % 6) as usize;
            for _ in 0..n {
                // Throughput-like values with every bit of the mantissa in play.
                let x = f64::from_bits(0x4090_0000_0000_0000 | (next() >> 12)) * (1 + next() % 3) as f64;
                b.push(&[format!("{g:04}")], &[Some(x)]);
                groups.entry(format!("{g:04}")).or_default().push(x);
            }
        }
        let g = stats_by(&b.finish().unwrap(), &["g"], &["x"]).unwrap();
        let mut differs_from_interpolation = 0;
        for (key, values) in &groups {
            let ours = Stats::of(values.iter().copied()).unwrap();
            let polars = get(&g, std::slice::from_ref(key), "x").unwrap();
            assert_eq!(polars.median.to_bits(), ours.median.to_bits(), "group {key}: {values:?}");
            assert_eq!((polars.min, polars.max, polars.n), (ours.min, ours.max, ours.n));
            let mut v = values.clone();
            v.sort_by(f64::total_cmp);
            if v.len() % 2 == 0 {
                let (a, b) = (v[v.len() / 2 - 1], v[v.len() / 2]);
                differs_from_interpolation += usize::from(a + (b - a) * 0.5 != (a + b) / 2.0);
            }
        }
        // The case the test is for occurs among these groups.
        assert!(differs_from_interpolation > 0);
    }
}
