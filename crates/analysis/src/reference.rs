//! The polars queries that measured a run's samples before they were summed as they are
//! read (`gpu_use`, `host_use`, `per_run::job_throughputs`), kept as the reference the tests
//! hold those sums to, value for value and bit for bit.

use anyhow::Result;
use colloc_trace::events::{Event, EventBody};
use colloc_trace::telemetry::{self, Values};
use polars::prelude::{
    col, lit, when, Column, DataFrame, DataType, Expr, IntoLazy, LazyFrame, SortMultipleOptions, NULL,
};

use crate::model::{JobRun, TimelinePoint, Utilisation, Window};

/// GPU metrics averaged over the window (percentages and power).
const MEAN_METRICS: &[&str] = &[
    "sm_activity_pct",
    "sm_occupancy_pct",
    "tensor_activity_pct",
    "dram_bw_util_pct",
    "gpu_util_pct",
    "mem_util_pct",
    "power_w",
];

/// Reads a telemetry file's text into a frame: the numeric columns as Float64, the others as text.
pub(crate) fn read_csv(text: &str, numeric: &[&str], jobs: Option<usize>) -> Result<DataFrame> {
    let table = telemetry::read_csv(text, numeric, jobs).map_err(anyhow::Error::msg)?;
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

/// Per job, the images, seconds and data wait of the samples that end inside the window.
/// Samples are summed in their own seconds (the job's clock), never in host time.
pub(crate) fn job_throughputs(samples: &DataFrame, w: Window) -> Result<Vec<[f64; 5]>> {
    let df = in_window_by(samples, "end", w.start_mono, w.end_mono)
        .filter(col("seconds").gt(lit(0.0)))
        .group_by([col("job")])
        .agg([
            exact_sum(col("images"), FINE).alias("images"),
            exact_sum(col("seconds"), FINE).alias("seconds"),
            exact_sum(col("data_wait"), FINE).alias("data_wait"),
            exact_sum(col("slow_steps"), FINE).alias("slow_steps"),
        ])
        .sort(["job"], SortMultipleOptions::default())
        .collect()?;
    let mut out = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        out.push([
            f64_at(&df, "job", i)?.unwrap_or(-1.0),
            f64_at(&df, "images", i)?.unwrap_or(0.0),
            f64_at(&df, "seconds", i)?.unwrap_or(0.0),
            f64_at(&df, "data_wait", i)?.unwrap_or(0.0),
            f64_at(&df, "slow_steps", i)?.unwrap_or(0.0),
        ]);
    }
    Ok(out)
}

/// CPU, RSS and device memory of each job's processes in the window.
pub(crate) fn host_use(processes: &DataFrame, w: Window, jobs: &mut [JobRun]) -> Result<()> {
    let df = in_window(processes, w.start_mono, w.end_mono)
        .group_by([col("job")])
        .agg([
            exact_mean(col("cpu_pct"), FINE).alias("cpu_pct"),
            col("rss_bytes").max().alias("rss_bytes"),
            col("gpu_mem_bytes").max().alias("gpu_mem_bytes"),
        ])
        .sort(["job"], SortMultipleOptions::default())
        .collect()?;
    for i in 0..df.height() {
        let Some(j) = f64_at(&df, "job", i)? else { continue };
        if let Some(job) = jobs.get_mut(j as usize) {
            job.cpu_cores = f64_at(&df, "cpu_pct", i)?.map(|p| p / 100.0);
            job.rss_bytes_max = f64_at(&df, "rss_bytes", i)?;
            job.gpu_mem_bytes_max = f64_at(&df, "gpu_mem_bytes", i)?;
        }
    }
    Ok(())
}

/// The telemetry rows inside the window, where a row with some GPM metrics missing (the
/// first four of [`MEAN_METRICS`]) keeps none of them.
fn telemetry_in_window(telemetry: &DataFrame, w: Window) -> LazyFrame {
    let gpm = &MEAN_METRICS[..crate::gpu_use::GPM_METRICS];
    let any = |f: fn(Expr) -> Expr| gpm.iter().map(|m| f(col(*m))).reduce(|a, b| a.or(b)).expect("GPM metrics");
    let partial = any(|c| c.is_null()).and(any(|c| c.is_not_null()));
    in_window(telemetry, w.start_mono, w.end_mono).with_columns(
        gpm.iter()
            .map(|m| when(partial.clone()).then(lit(NULL).cast(DataType::Float64)).otherwise(col(*m)).alias(*m))
            .collect::<Vec<_>>(),
    )
}

/// Whole-GPU rows (instance < 0 or empty).
fn gpu_rows(lf: LazyFrame) -> LazyFrame {
    lf.filter(col("instance").lt(lit(0.0)).or(col("instance").is_null()))
}

/// MIG instance rows, combined per sample time: percentages averaged, memory summed.
fn instance_rows(lf: LazyFrame) -> LazyFrame {
    let mut aggs: Vec<Expr> = MEAN_METRICS.iter().map(|m| exact_mean(col(*m), FINE).alias(*m)).collect();
    aggs.push(exact_sum(col("mem_used_bytes"), COARSE).alias("mem_used_bytes"));
    aggs.push(exact_sum(col("mem_total_bytes"), COARSE).alias("mem_total_bytes"));
    aggs.push(col("energy_j").max().alias("energy_j"));
    lf.filter(col("instance").gt_eq(lit(0.0)))
        .group_by([col("mono")])
        .agg(aggs)
        .sort(["mono"], SortMultipleOptions::default())
}

/// Averages over the window of one set of per-sample rows.
fn summarise(lf: LazyFrame) -> Result<DataFrame> {
    let mut aggs: Vec<Expr> = MEAN_METRICS.iter().map(|m| exact_mean(col(*m), FINE).alias(*m)).collect();
    aggs.extend([
        col("mem_used_bytes").max().alias("mem_used_bytes"),
        col("mem_total_bytes").max().alias("mem_total_bytes"),
        col("mono").count().alias("samples"),
        col("mono").filter(col("energy_j").is_not_null()).first().alias("e_t0"),
        col("mono").filter(col("energy_j").is_not_null()).last().alias("e_t1"),
        col("energy_j").drop_nulls().first().alias("e0"),
        col("energy_j").drop_nulls().last().alias("e1"),
    ]);
    Ok(lf.sort(["mono"], SortMultipleOptions::default()).select(aggs).collect()?)
}

pub(crate) fn utilisation(telemetry: &DataFrame, w: Window) -> Result<Option<Utilisation>> {
    let rows = telemetry_in_window(telemetry, w);
    let gpu = summarise(gpu_rows(rows.clone()))?;
    let inst = summarise(instance_rows(rows))?;
    let n_gpu = f64_at(&gpu, "samples", 0)?.unwrap_or(0.0);
    let n_inst = f64_at(&inst, "samples", 0)?.unwrap_or(0.0);
    if n_gpu == 0.0 && n_inst == 0.0 {
        return Ok(None);
    }
    // Per metric: the whole GPU's value, else the instances' mean.
    let pick = |m: &str| -> Result<Option<f64>> {
        let g = if n_gpu > 0.0 { f64_at(&gpu, m, 0)? } else { None };
        Ok(match g {
            Some(v) => Some(v),
            None if n_inst > 0.0 => f64_at(&inst, m, 0)?,
            None => None,
        })
    };
    let energy_of = |df: &DataFrame| -> Result<Option<f64>> {
        let (t0, t1, e0, e1) =
            (f64_at(df, "e_t0", 0)?, f64_at(df, "e_t1", 0)?, f64_at(df, "e0", 0)?, f64_at(df, "e1", 0)?);
        Ok(match (t0, t1, e0, e1) {
            // The counter's power on the jobs' clock, over the whole window.
            (Some(t0), Some(t1), Some(e0), Some(e1)) if t1 > t0 && e1 >= e0 => {
                Some((e1 - e0) / ((t1 - t0) * w.clock_scale) * w.job_seconds())
            }
            _ => None,
        })
    };
    let power = pick("power_w")?;
    let energy = match energy_of(&gpu)? {
        Some(e) => Some(e),
        None => energy_of(&inst)?.or(power.map(|p| p * w.job_seconds())),
    };
    let mem_used = pick("mem_used_bytes")?;
    let mem_total = pick("mem_total_bytes")?;
    Ok(Some(Utilisation {
        sm_activity_pct: pick("sm_activity_pct")?,
        sm_occupancy_pct: pick("sm_occupancy_pct")?,
        tensor_activity_pct: pick("tensor_activity_pct")?,
        dram_bw_util_pct: pick("dram_bw_util_pct")?,
        gpu_util_pct: pick("gpu_util_pct")?,
        mem_util_pct: pick("mem_util_pct")?,
        power_w: power,
        mem_used_bytes_max: mem_used,
        mem_total_bytes: mem_total,
        mem_used_share: match (mem_used, mem_total) {
            (Some(u), Some(t)) if t > 0.0 => Some(u / t),
            _ => None,
        },
        energy_j: energy,
        samples: n_gpu.max(n_inst) as u32,
        scope: if n_gpu > 0.0 { "gpu" } else { "instances" }.to_string(),
    }))
}

pub(crate) fn timeline_points(telemetry: &DataFrame, w: Window) -> Result<Vec<TimelinePoint>> {
    let rows = telemetry_in_window(telemetry, w);
    let gpu = gpu_rows(rows.clone()).sort(["mono"], SortMultipleOptions::default()).collect()?;
    let has_activity =
        |df: &DataFrame| -> Result<bool> { Ok(f64_column(df, "sm_activity_pct")?.iter().any(Option::is_some)) };
    let df = if gpu.height() > 0 && has_activity(&gpu)? {
        gpu
    } else {
        let inst = instance_rows(rows).collect()?;
        if inst.height() > 0 && (has_activity(&inst)? || gpu.height() == 0) {
            inst
        } else {
            gpu
        }
    };
    let cols = |m: &str| f64_column(&df, m);
    let (mono, sm, occ, tensor, dram, util, mem, power) = (
        cols("mono")?,
        cols("sm_activity_pct")?,
        cols("sm_occupancy_pct")?,
        cols("tensor_activity_pct")?,
        cols("dram_bw_util_pct")?,
        cols("gpu_util_pct")?,
        cols("mem_used_bytes")?,
        cols("power_w")?,
    );
    Ok((0..df.height())
        .filter_map(|i| {
            mono[i].map(|t| TimelinePoint {
                t: (t - w.start_mono) * w.clock_scale,
                sm_activity_pct: sm[i],
                sm_occupancy_pct: occ[i],
                tensor_activity_pct: tensor[i],
                dram_bw_util_pct: dram[i],
                gpu_util_pct: util[i],
                mem_used_bytes: mem[i],
                power_w: power[i],
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_use::GpuUse;
    use crate::host_use::HostUse;
    use colloc_trace::rows;
    use colloc_trace::telemetry::{GPU_COLUMNS, GPU_NUMERIC, PROCESS_COLUMNS, PROCESS_NUMERIC};

    /// xorshift64: the same cases on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        fn chance(&mut self, p: f64) -> bool {
            (self.next() % 1_000_000) as f64 / 1e6 < p
        }
    }

    /// A field of a numeric column: empty with probability `empty`, else a number of one of
    /// the sizes the runner writes, now and then one too large for the sums' units (but no
    /// sum of the others overflows them: polars' debug build panics on that).
    fn number(r: &mut Rng, empty: f64) -> String {
        if r.chance(empty) {
            return String::new();
        }
        match r.below(20) {
            0 => format!("{}", r.below(1 << 40) as f64 * 1e-3),
            1 => format!("{}", r.below(10_000_000_000)),
            2 => "0".to_string(),
            3 => format!("{}", 10_000_000_000_000 + r.below(100_000_000_000_000)),
            4..=9 => format!("{}.{:03}", r.below(100), r.below(1000)),
            _ => format!("{}.{:06}", r.below(1000), r.below(1_000_000)),
        }
    }

    /// A window over samples from `base` every 0.1 s, `n` of them: its edges on samples, between
    /// them or outside, now and then empty; the jobs' clock now and then not the host's.
    fn window(r: &mut Rng, base: f64, n: u64) -> Window {
        let edge = |r: &mut Rng| {
            let k = r.below(n + 4) as f64 - 2.0;
            base + k * 0.1 + if r.chance(0.5) { 0.0 } else { 0.05 }
        };
        let (a, b) = (edge(r), edge(r));
        let (start, end) = if r.chance(0.9) { (a.min(b), a.max(b)) } else { (a.max(b), a.min(b)) };
        let clock_scale = if r.chance(0.8) { 1.0 } else { 2.5 };
        Window { start_mono: start, end_mono: end, seconds: end - start, clock_scale }
    }

    /// Telemetry as the runner writes it: per sample time a whole-GPU row (instance -1, or
    /// the field empty) and the rows of up to three MIG instances, fields missing at random;
    /// now and then a column left out.
    fn telemetry_text(r: &mut Rng, base: f64, n: u64) -> String {
        let dropped = if r.chance(0.2) { Some(1 + r.below(GPU_COLUMNS.len() as u64 - 1) as usize) } else { None };
        let empty = [0.0, 0.1, 0.5, 1.0][r.below(4) as usize];
        let columns: Vec<&str> =
            GPU_COLUMNS.iter().enumerate().filter(|(i, _)| Some(*i) != dropped).map(|(_, c)| *c).collect();
        let mut text = columns.join(",");
        let instances = r.below(4);
        for k in 0..n {
            let mono = format!("{:.3}", base + k as f64 * 0.1);
            let whole = r.chance(0.8);
            for instance in (-1..instances as i64).filter(|i| *i >= 0 || whole) {
                let fields: Vec<String> = columns
                    .iter()
                    .map(|c| match *c {
                        "mono" | "wall" => mono.clone(),
                        "instance" if instance < 0 && r.chance(0.2) => String::new(),
                        "instance" => instance.to_string(),
                        "throttle_reasons" => "0".to_string(),
                        _ => number(r, empty),
                    })
                    .collect();
                text.push('\n');
                text.push_str(&fields.join(","));
            }
        }
        text
    }

    #[test]
    fn gpu_use_gives_what_the_polars_queries_gave() {
        let mut r = Rng(0x2545_f491_4f6c_dd1d);
        for case in 0..400 {
            // Some long enough for the timeline to be binned.
            let long = case % 100 == 99;
            let (base, n) = (1000.0 + r.below(100) as f64, if long { 6000 + r.below(3000) } else { r.below(40) });
            let text = telemetry_text(&mut r, base, n);
            let w = if long {
                let (start, end) = (base - 0.05, base + n as f64 * 0.1);
                Window { start_mono: start, end_mono: end, seconds: end - start, clock_scale: 1.0 }
            } else {
                window(&mut r, base, n)
            };
            let df = read_csv(&text, GPU_NUMERIC, None).unwrap();
            let want = (utilisation(&df, w).unwrap(), crate::timeline::bounded(timeline_points(&df, w).unwrap(), w));
            let mut sums = GpuUse::new(Some(w), true);
            rows::read_text_rows(&text, GPU_NUMERIC, None, &mut sums).unwrap();
            let got = (sums.utilisation(), sums.timeline());
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "case {case}: {w:?}\n{text}");
            assert!(!long || got.1 .1.is_some() || got.1 .0.is_empty(), "case {case}: binned");
        }
    }

    /// A sample whose GPM metrics came back partly missing (DRAM bandwidth NaN, the others
    /// 0 with the GPU busy) counts for none of them, in both implementations; the GPU's other
    /// metrics of that sample still count.
    #[test]
    fn a_sample_with_some_gpm_metrics_missing_counts_for_none_of_them() {
        let row = |mono: &str, gpm: [&str; 4], util: &str| {
            let fields: Vec<String> = GPU_COLUMNS
                .iter()
                .map(|c| match *c {
                    "mono" | "wall" => mono.to_string(),
                    "instance" => "-1".to_string(),
                    "sm_activity_pct" => gpm[0].to_string(),
                    "sm_occupancy_pct" => gpm[1].to_string(),
                    "tensor_activity_pct" => gpm[2].to_string(),
                    "dram_bw_util_pct" => gpm[3].to_string(),
                    "gpu_util_pct" => util.to_string(),
                    _ => "1".to_string(),
                })
                .collect();
            fields.join(",")
        };
        let text = [
            GPU_COLUMNS.join(","),
            row("10.0", ["90", "50", "10", "40"], "100"),
            row("10.1", ["0", "0", "0", ""], "100"),
            row("10.2", ["92", "52", "12", "42"], "100"),
            row("10.3", ["", "", "", ""], "40"),
        ]
        .join("\n");
        let w = Window { start_mono: 9.95, end_mono: 10.35, seconds: 0.4, clock_scale: 1.0 };
        let df = read_csv(&text, GPU_NUMERIC, None).unwrap();
        let want = utilisation(&df, w).unwrap().unwrap();
        let mut sums = GpuUse::new(Some(w), false);
        rows::read_text_rows(&text, GPU_NUMERIC, None, &mut sums).unwrap();
        let got = sums.utilisation().unwrap();
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
        assert_eq!(got.sm_activity_pct, Some(91.0));
        assert_eq!(got.dram_bw_util_pct, Some(41.0));
        assert_eq!(got.gpu_util_pct, Some(85.0));
    }

    #[test]
    fn host_use_gives_what_the_polars_query_gave() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..400 {
            let (base, n, jobs) = (50.0 + r.below(100) as f64, r.below(40), 1 + r.below(7) as usize);
            let empty = [0.0, 0.1, 0.5, 1.0][r.below(4) as usize];
            let mut text = PROCESS_COLUMNS.join(",");
            for k in 0..n {
                let mono = format!("{:.3}", base + k as f64 * 0.1);
                for j in 0..jobs {
                    if r.chance(0.2) {
                        continue;
                    }
                    let job = if r.chance(0.05) { String::new() } else { j.to_string() };
                    let (cpu, rss, mem) = (number(&mut r, empty), number(&mut r, empty), number(&mut r, empty));
                    text.push_str(&format!("\n{mono},{mono},{job},3,{cpu},{rss},{mem}"));
                }
            }
            let w = window(&mut r, base, n);
            let df = read_csv(&text, PROCESS_NUMERIC, Some(jobs)).unwrap();
            let mut want: Vec<JobRun> = (0..jobs as u32).map(JobRun::new).collect();
            host_use(&df, w, &mut want).unwrap();
            let mut sums = HostUse::new(Some(w), jobs);
            rows::read_text_rows(&text, PROCESS_NUMERIC, Some(jobs), &mut sums).unwrap();
            let mut got: Vec<JobRun> = (0..jobs as u32).map(JobRun::new).collect();
            sums.fill(&mut got);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "case {case}: {w:?}\n{text}");
        }
    }
}
