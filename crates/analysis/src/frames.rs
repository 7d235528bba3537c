//! Polars data frames of a run: telemetry and process samples (gzip CSV), training samples
//! (from the job events).
//!
//! Sums and means go through [`exact_sum`] and [`exact_mean`]: the values are summed as
//! fixed-point integers, so the result does not depend on the order in which polars'
//! threads combine partial sums, and outputs are byte-identical on every machine.

use anyhow::{Context, Result};
use colloc_trace::events::{Event, EventBody};
use colloc_trace::telemetry::{self, Values};
use polars::prelude::{col, lit, Column, DataFrame, DataType, Expr, IntoLazy, LazyFrame};
use std::path::Path;

/// Reads a telemetry file ([`colloc_trace::telemetry::read_gz_csv`]: the reader the fuzz
/// target `telemetry` runs) into a frame: the numeric columns as Float64, the others as text.
pub(crate) fn read_gz_csv(path: &Path, numeric: &[&str], jobs: Option<usize>) -> Result<DataFrame> {
    let gz = std::fs::read(path).context("cannot open")?;
    let table = telemetry::read_gz_csv(&gz, numeric, jobs).map_err(anyhow::Error::msg)?;
    let columns: Vec<Column> = table
        .columns
        .into_iter()
        .map(|(name, values)| match values {
            Values::Numbers(v) => Column::new(name.into(), v),
            Values::Text(v) => Column::new(name.into(), v),
        })
        .collect();
    let mut df = DataFrame::new_infer_height(columns)?;
    df.rechunk_mut();
    Ok(df)
}

/// The `sample` events of every job: job, end (mono), seconds, images, data wait, slow steps.
pub(crate) fn samples_frame(events: &[Vec<Event>]) -> Result<DataFrame> {
    let (mut job, mut end, mut seconds, mut images, mut wait, mut slow) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (i, evs) in events.iter().enumerate() {
        for e in evs {
            if let EventBody::Sample { images: n, seconds: s, data_wait_seconds, slow_data_steps, .. } = &e.body {
                job.push(i as f64);
                end.push(e.mono);
                seconds.push(*s);
                images.push(*n as f64);
                wait.push(*data_wait_seconds);
                slow.push(*slow_data_steps as f64);
            }
        }
    }
    let df = DataFrame::new_infer_height(vec![
        Column::new("job".into(), job),
        Column::new("end".into(), end),
        Column::new("seconds".into(), seconds),
        Column::new("images".into(), images),
        Column::new("data_wait".into(), wait),
        Column::new("slow_steps".into(), slow),
    ])?;
    Ok(df)
}

/// Sum of non-negative values, computed on integers of `1/scale` units (exact and
/// independent of summation order); the values' resolution is `1/scale`.
pub(crate) fn exact_sum(e: Expr, scale: f64) -> Expr {
    (e * lit(scale) + lit(0.5)).cast(DataType::Int64).sum().cast(DataType::Float64) / lit(scale)
}

/// Mean of the non-null, non-negative values (NaN when there are none), order-independent.
pub(crate) fn exact_mean(e: Expr, scale: f64) -> Expr {
    exact_sum(e.clone(), scale) / e.count().cast(DataType::Float64)
}

/// Resolution of percentages, seconds, images and watts in sums.
pub(crate) const FINE: f64 = 1e6;
/// Resolution of joules and bytes in sums.
pub(crate) const COARSE: f64 = 1.0;

/// Rows of a frame with `mono` inside `[start, end]`.
pub(crate) fn in_window(df: &DataFrame, start: f64, end: f64) -> LazyFrame {
    in_window_by(df, "mono", start, end)
}

/// Rows of a frame whose `column` lies inside `[start, end]`.
pub(crate) fn in_window_by(df: &DataFrame, column: &str, start: f64, end: f64) -> LazyFrame {
    df.clone().lazy().filter(col(column).gt_eq(lit(start)).and(col(column).lt_eq(lit(end))))
}

/// Value `i` of a Float64 column, `None` when null or not finite.
pub(crate) fn f64_at(df: &DataFrame, column: &str, i: usize) -> Result<Option<f64>> {
    let c = df.column(column)?.cast(&DataType::Float64)?;
    Ok(c.f64()?.get(i).filter(|v| v.is_finite()))
}

/// A whole Float64 column as options.
pub(crate) fn f64_column(df: &DataFrame, column: &str) -> Result<Vec<Option<f64>>> {
    let c = df.column(column)?.cast(&DataType::Float64)?;
    Ok(c.f64()?.iter().map(|v| v.filter(|x| x.is_finite())).collect())
}
