//! Polars data frames of a run: telemetry and process samples (gzip CSV), training samples
//! (from the job events).
//!
//! Sums and means go through [`exact_sum`] and [`exact_mean`]: the values are summed as
//! fixed-point integers, so the result does not depend on the order in which polars'
//! threads combine partial sums, and outputs are byte-identical on every machine.

use anyhow::{bail, Context, Result};
use colloc_trace::events::{Event, EventBody};
use flate2::read::GzDecoder;
use polars::prelude::{col, lit, Column, DataFrame, DataType, Expr, IntoLazy, LazyFrame};
use std::io::Read;
use std::path::Path;

/// Columns of `telemetry.csv.gz` read as numbers (the others stay text).
pub(crate) const TELEMETRY_NUMERIC: &[&str] = &[
    "mono",
    "wall",
    "instance",
    "power_w",
    "energy_j",
    "gpu_util_pct",
    "mem_util_pct",
    "mem_used_bytes",
    "mem_total_bytes",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "temperature_c",
    "sm_activity_pct",
    "sm_occupancy_pct",
    "tensor_activity_pct",
    "dram_bw_util_pct",
];

/// Columns of `processes.csv.gz` read as numbers.
pub(crate) const PROCESS_NUMERIC: &[&str] = &["mono", "wall", "job", "pids", "cpu_pct", "rss_bytes", "gpu_mem_bytes"];

/// Reads a gzip CSV as the runner writes it: a header line, then rows of as many fields
/// (no quoting), the listed columns as Float64 (empty field: null), any other column as
/// text. A listed column absent from the file is added as nulls; `mono` must be present.
///
/// A damaged file is an error naming the line (and data row): a truncated gzip stream, a
/// row with another number of fields than the header, a number that does not parse or is
/// not finite, a negative one (`instance` may be -1, the whole GPU), an empty or decreasing
/// `mono`, an `instance` or `job` that is not a whole number, a `job` not below `jobs`.
pub(crate) fn read_gz_csv(path: &Path, numeric: &[&str], jobs: Option<usize>) -> Result<DataFrame> {
    let mut bytes = Vec::new();
    GzDecoder::new(std::fs::File::open(path).context("cannot open")?)
        .read_to_end(&mut bytes)
        .context("not a readable gzip file (truncated or damaged)")?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        anyhow::anyhow!("line {line}: not UTF-8 text")
    })?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let header = lines.next().unwrap_or("");
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if !names.contains(&"mono") {
        bail!("line 1: no `mono` column in the header {header:?}");
    }
    if let Some(dup) = names.iter().enumerate().find_map(|(i, n)| names[..i].contains(n).then_some(n)) {
        bail!("line 1: the column {dup:?} appears twice in the header");
    }
    let is_num: Vec<bool> = names.iter().map(|n| numeric.contains(n)).collect();
    let mut nums: Vec<Vec<Option<f64>>> = vec![Vec::new(); names.len()];
    let mut texts: Vec<Vec<Option<String>>> = vec![Vec::new(); names.len()];
    let mono_at = names.iter().position(|n| *n == "mono").unwrap_or(0);
    let mut last_mono = f64::NEG_INFINITY;
    let mut row = 0usize;
    let mut pending_blank = None;
    for (k, line) in lines.enumerate() {
        let line_no = k + 2;
        if line.is_empty() {
            pending_blank.get_or_insert(line_no);
            continue;
        }
        if let Some(blank) = pending_blank {
            bail!("line {blank}: an empty line between rows");
        }
        row += 1;
        let at = |what: String| anyhow::anyhow!("line {line_no} (row {row}): {what}");
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != names.len() {
            return Err(at(format!("{} fields, the header has {}", fields.len(), names.len())));
        }
        for (c, field) in fields.iter().enumerate() {
            let field = field.trim();
            if !is_num[c] {
                texts[c].push((!field.is_empty()).then(|| field.to_string()));
                continue;
            }
            if field.is_empty() {
                if c == mono_at {
                    return Err(at("`mono` is empty".to_string()));
                }
                nums[c].push(None);
                continue;
            }
            let name = names[c];
            let v: f64 = field.parse().map_err(|_| at(format!("`{name}` is {field:?}, not a number")))?;
            if !v.is_finite() {
                return Err(at(format!("`{name}` is {field:?}, not a finite number")));
            }
            let least = if name == "instance" { -1.0 } else { 0.0 };
            if v < least {
                return Err(at(format!("`{name}` is {v}, below {least}")));
            }
            if (name == "instance" || name == "job") && v.fract() != 0.0 {
                return Err(at(format!("`{name}` is {v}, not a whole number")));
            }
            if let (Some(n), "job") = (jobs, name) {
                if v >= n as f64 {
                    return Err(at(format!("`job` is {v}, but the workload has {n} jobs")));
                }
            }
            if c == mono_at {
                if v < last_mono {
                    return Err(at(format!("`mono` goes backwards ({v} after {last_mono})")));
                }
                last_mono = v;
            }
            nums[c].push(Some(v));
        }
    }
    let mut columns: Vec<Column> = names
        .iter()
        .enumerate()
        .map(|(c, n)| {
            if is_num[c] {
                Column::new((*n).into(), std::mem::take(&mut nums[c]))
            } else {
                Column::new((*n).into(), std::mem::take(&mut texts[c]))
            }
        })
        .collect();
    for n in numeric {
        if !names.contains(n) {
            columns.push(Column::full_null((*n).into(), row, &DataType::Float64));
        }
    }
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
