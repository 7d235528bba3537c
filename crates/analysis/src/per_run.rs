//! One run: the common training window, per-job throughput and data wait, host CPU, memory
//! and the GPU's activity in that window.

use anyhow::{Context, Result};
use colloc_trace::events::{EndReason, Event, EventBody};
use colloc_trace::meta::RunStatus;
use polars::prelude::{col, lit, DataFrame, Expr, LazyFrame, SortMultipleOptions};

use crate::frames::{exact_mean, exact_sum, f64_at, f64_column, in_window, in_window_by, samples_frame, COARSE, FINE};
use crate::load::RunData;
use crate::model::{JobRun, RunResult, TimelinePoint, Utilisation, Window};

/// What one run yields: its result (ratios filled in later) and, when asked, its timeline.
pub(crate) struct RunAnalysis {
    pub result: RunResult,
    pub timeline: Option<Vec<TimelinePoint>>,
}

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

pub(crate) fn analyse_run(run: &RunData, want_timeline: bool) -> Result<RunAnalysis> {
    let m = &run.meta;
    let mut notes = Vec::new();
    let mut jobs: Vec<JobRun> = (0..run.workload.jobs.len()).map(|i| empty_job(run, i)).collect();
    let mut result = RunResult {
        run_id: m.run_id.clone(),
        workload_id: m.workload_id.clone(),
        repetition: m.repetition,
        attempt: m.attempt,
        superseded: false,
        status: m.status,
        reason: m.reason.clone(),
        mode_applied: m.mode.clone(),
        simulated: m.simulated,
        started_at: m.started_at.clone(),
        ended_at: m.ended_at.clone(),
        window: None,
        jobs: Vec::new(),
        aggregate_throughput: None,
        aggregate_ratio: None,
        utilisation: None,
        energy_per_image_j: None,
        notes: Vec::new(),
    };
    if m.status != RunStatus::Ok {
        result.jobs = jobs;
        return Ok(RunAnalysis { result, timeline: None });
    }

    let window = common_window(&run.events, &mut notes).map(|w| Window { clock_scale: clock_scale(&run.events), ..w });
    let mut timeline = None;
    if let Some(w) = window {
        if w.clock_scale != 1.0 {
            notes.push(format!("the jobs' clock runs {:.3}× the host's (simulated time)", w.clock_scale));
        }
        let samples = samples_frame(&run.events)?;
        let per_job = job_throughputs(&samples, w).with_context(|| format!("{}: training samples", run.rel))?;
        let mut images_total = 0.0;
        let mut have_all = true;
        for (i, job) in jobs.iter_mut().enumerate() {
            match per_job.iter().find(|r| r.job == i) {
                Some(r) if r.seconds > 0.0 => {
                    let tp = r.images / r.seconds;
                    job.throughput = Some(tp);
                    job.data_wait_share = Some(r.data_wait / r.seconds);
                    job.slow_data_steps = Some(r.slow_steps);
                    let train = run.workload.jobs[i].data.train_count as f64;
                    job.epoch_seconds = (tp > 0.0 && train > 0.0).then(|| train / tp);
                    images_total += tp * w.job_seconds();
                }
                _ => {
                    have_all = false;
                    notes.push(format!("job {i}: no training samples inside the common window"));
                }
            }
        }
        if have_all {
            result.aggregate_throughput = Some(jobs.iter().filter_map(|j| j.throughput).sum());
        }
        if let Some(p) = &run.processes {
            host_use(p, w, &mut jobs).with_context(|| format!("{}: processes", run.rel))?;
        }
        if let Some(t) = &run.telemetry {
            let u = utilisation(t, w).with_context(|| format!("{}: telemetry", run.rel))?;
            if let (Some(e), true) = (u.as_ref().and_then(|u| u.energy_j), have_all && images_total > 0.0) {
                result.energy_per_image_j = Some(e / images_total);
            }
            result.utilisation = u;
            if want_timeline {
                timeline = Some(timeline_points(t, w).with_context(|| format!("{}: telemetry", run.rel))?);
            }
        } else {
            notes.push("no telemetry".to_string());
        }
        result.window = Some(w);
    }
    result.jobs = jobs;
    result.notes = notes;
    Ok(RunAnalysis { result, timeline })
}

/// The job's record without window measurements: failure, epochs, PyTorch memory.
fn empty_job(run: &RunData, i: usize) -> JobRun {
    let events = run.events.get(i).map(Vec::as_slice).unwrap_or(&[]);
    let train_count = run.workload.jobs.get(i).map_or(0.0, |j| j.data.train_count as f64);
    let mut epochs: Vec<f64> = Vec::new();
    let mut peak_reserved: Option<f64> = None;
    let mut error = None;
    let mut end_reason = None;
    for e in events {
        match &e.body {
            // Scaled to the whole training set: a generated set may be cut to a fraction.
            EventBody::EpochEnd { train_seconds, images, .. } if *images > 0 && train_count > 0.0 => {
                epochs.push(*train_seconds * train_count / *images as f64)
            }
            EventBody::Memory { peak_reserved_bytes, reserved_bytes, .. } => {
                let v = (*peak_reserved_bytes).max(*reserved_bytes) as f64;
                peak_reserved = Some(peak_reserved.map_or(v, |p: f64| p.max(v)));
            }
            EventBody::Error { kind, message } => error = Some(format!("{kind:?}: {message}").to_lowercase()),
            EventBody::End { reason, .. } => end_reason = Some(*reason),
            _ => {}
        }
    }
    let record_failure = run.meta.jobs.iter().find(|j| j.index as usize == i).and_then(|j| j.failure.clone());
    let failure = record_failure.or(error).or_else(|| match end_reason {
        Some(EndReason::Oom) => Some("out of memory".to_string()),
        Some(EndReason::Error) => Some("error".to_string()),
        _ => None,
    });
    JobRun {
        index: i as u32,
        throughput: None,
        epoch_seconds: None,
        measured_epoch_seconds: crate::model::Stats::of(epochs.iter().copied()).map(|s| s.median),
        epochs_measured: epochs.len() as u32,
        slowdown: None,
        data_wait_share: None,
        slow_data_steps: None,
        cpu_cores: None,
        rss_bytes_max: None,
        gpu_mem_bytes_max: None,
        torch_peak_reserved_bytes: peak_reserved,
        failure,
    }
}

/// The intersection of the jobs' `[window_start, window_end]`.
fn common_window(events: &[Vec<Event>], notes: &mut Vec<String>) -> Option<Window> {
    let mut start = f64::NEG_INFINITY;
    let mut end = f64::INFINITY;
    for (i, evs) in events.iter().enumerate() {
        let s = evs
            .iter()
            .find(|e| matches!(e.body, EventBody::WindowStart { .. }))
            .or_else(|| evs.iter().find(|e| matches!(e.body, EventBody::Release)))
            .map(|e| e.mono);
        let t = evs
            .iter()
            .rev()
            .find(|e| matches!(e.body, EventBody::WindowEnd { .. }))
            .or_else(|| evs.iter().rev().find(|e| matches!(e.body, EventBody::Sample { .. })))
            .map(|e| e.mono);
        match (s, t) {
            (Some(s), Some(t)) => {
                start = start.max(s);
                end = end.min(t);
            }
            _ => {
                notes.push(format!("job {i}: no measurement window in its events"));
                return None;
            }
        }
    }
    if events.is_empty() || end.partial_cmp(&start) != Some(std::cmp::Ordering::Greater) {
        notes.push("the jobs' measurement windows do not overlap".to_string());
        return None;
    }
    Some(Window { start_mono: start, end_mono: end, seconds: end - start, clock_scale: 1.0 })
}

struct JobWindowSums {
    job: usize,
    images: f64,
    seconds: f64,
    data_wait: f64,
    slow_steps: f64,
}

/// Per job, the images, seconds and data wait of the samples that end inside the window.
/// Samples are summed in their own seconds (the job's clock), never in host time.
fn job_throughputs(samples: &DataFrame, w: Window) -> Result<Vec<JobWindowSums>> {
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
        out.push(JobWindowSums {
            job: f64_at(&df, "job", i)?.unwrap_or(-1.0) as usize,
            images: f64_at(&df, "images", i)?.unwrap_or(0.0),
            seconds: f64_at(&df, "seconds", i)?.unwrap_or(0.0),
            data_wait: f64_at(&df, "data_wait", i)?.unwrap_or(0.0),
            slow_steps: f64_at(&df, "slow_steps", i)?.unwrap_or(0.0),
        });
    }
    Ok(out)
}

/// Job seconds per host second: the jobs' own window lengths (`window_end.seconds`) over the
/// window in host monotonic time. 1 for real traces; the time scale for simulated ones,
/// whose jobs count simulated seconds while their events carry host time.
fn clock_scale(events: &[Vec<Event>]) -> f64 {
    let ratios = events.iter().filter_map(|evs| {
        let start = evs.iter().find(|e| matches!(e.body, EventBody::WindowStart { .. }))?.mono;
        let end = evs.iter().rev().find(|e| matches!(e.body, EventBody::WindowEnd { .. }))?;
        let EventBody::WindowEnd { seconds, .. } = end.body else { return None };
        let host = end.mono - start;
        (host > 0.0 && seconds > 0.0).then(|| seconds / host)
    });
    match crate::model::Stats::of(ratios) {
        // Within 5 %: the same clock (the job's window is measured a little apart from its events).
        Some(s) if (s.median - 1.0).abs() > 0.05 => s.median,
        _ => 1.0,
    }
}

/// CPU, RSS and device memory of each job's processes in the window.
fn host_use(processes: &DataFrame, w: Window, jobs: &mut [JobRun]) -> Result<()> {
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

fn utilisation(telemetry: &DataFrame, w: Window) -> Result<Option<Utilisation>> {
    let rows = in_window(telemetry, w.start_mono, w.end_mono);
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

fn timeline_points(telemetry: &DataFrame, w: Window) -> Result<Vec<TimelinePoint>> {
    let rows = in_window(telemetry, w.start_mono, w.end_mono);
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
