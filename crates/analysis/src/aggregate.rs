//! Over runs: baselines (each model alone), ratios and slowdowns, statistics per workload
//! over repetitions, and the modes of each configuration compared.

use anyhow::Result;
use colloc_plan::{Mode, PlannedWorkload};
use colloc_trace::meta::RunStatus;
use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Baseline, JobStats, ModeComparison, PlannedJobInfo, RunResult, WorkloadResult};
use crate::stats::{get, stats_by, FrameBuilder, Grouped};

/// Identifies "the same model alone": model, dataset, batch size, data source.
pub(crate) type BaselineKey = (String, String, u32, String);

pub(crate) fn baseline_key(w: &PlannedWorkload, job: usize) -> BaselineKey {
    let j = &w.jobs[job];
    (j.model.clone(), j.dataset.clone(), j.batch_size, w.data.clone())
}

fn key_vec(k: &BaselineKey) -> Vec<String> {
    vec![k.0.clone(), k.1.clone(), k.2.to_string(), k.3.clone()]
}

/// Runs that count in statistics: ok and not replaced by a later attempt.
fn counted(r: &RunResult) -> bool {
    r.status == RunStatus::Ok && !r.superseded
}

const BASELINE_METRICS: &[&str] = &[
    "throughput",
    "epoch_seconds",
    "measured_epoch_seconds",
    "memory_bytes",
    "data_wait_share",
    "cpu_cores",
    "sm_activity_pct",
];

/// Each model alone on the whole GPU: `exclusive` runs, else one job in `naive` mode.
pub(crate) fn baselines(runs: &[RunResult], workloads: &BTreeMap<String, PlannedWorkload>) -> Result<Vec<Baseline>> {
    let mut frame = FrameBuilder::new(&["model", "dataset", "batch", "data", "mode"], BASELINE_METRICS);
    let mut ids: BTreeMap<(BaselineKey, Mode), BTreeSet<String>> = BTreeMap::new();
    for r in runs.iter().filter(|r| counted(r)) {
        let Some(w) = workloads.get(&r.workload_id) else { continue };
        if w.jobs.len() != 1 || !matches!(w.mode, Mode::Exclusive | Mode::Naive) {
            continue;
        }
        let j = &r.jobs[0];
        let key = baseline_key(w, 0);
        let mut keys = key_vec(&key);
        keys.push(w.mode.to_string());
        let memory = j.gpu_mem_bytes_max.or(j.torch_peak_reserved_bytes);
        let sm = r.utilisation.as_ref().and_then(|u| u.sm_activity_pct);
        frame.push(
            &keys,
            &[j.throughput, j.epoch_seconds, j.measured_epoch_seconds, memory, j.data_wait_share, j.cpu_cores, sm],
        );
        ids.entry((key, w.mode)).or_default().insert(w.id.clone());
    }
    let g = stats_by(&frame.finish()?, &["model", "dataset", "batch", "data", "mode"], BASELINE_METRICS)?;
    let mut out: Vec<Baseline> = Vec::new();
    let keys: BTreeSet<BaselineKey> = ids.keys().map(|(k, _)| k.clone()).collect();
    for key in keys {
        for mode in [Mode::Exclusive, Mode::Naive] {
            let mut gk = key_vec(&key);
            gk.push(mode.to_string());
            let Some(throughput) = get(&g, &gk, "throughput") else { continue };
            out.push(Baseline {
                model: key.0.clone(),
                dataset: key.1.clone(),
                batch_size: key.2,
                data: key.3.clone(),
                mode,
                workload_ids: ids.get(&(key.clone(), mode)).map(|s| s.iter().cloned().collect()).unwrap_or_default(),
                throughput,
                epoch_seconds: get(&g, &gk, "epoch_seconds"),
                measured_epoch_seconds: get(&g, &gk, "measured_epoch_seconds"),
                memory_bytes: get(&g, &gk, "memory_bytes"),
                data_wait_share: get(&g, &gk, "data_wait_share"),
                cpu_cores: get(&g, &gk, "cpu_cores"),
                sm_activity_pct: get(&g, &gk, "sm_activity_pct"),
            });
            break;
        }
    }
    Ok(out)
}

/// Fills per-job slowdowns and the runs' aggregate ratios from the baselines.
pub(crate) fn apply_baselines(
    runs: &mut [RunResult],
    workloads: &BTreeMap<String, PlannedWorkload>,
    baselines: &[Baseline],
) {
    let alone: BTreeMap<BaselineKey, f64> = baselines
        .iter()
        .map(|b| ((b.model.clone(), b.dataset.clone(), b.batch_size, b.data.clone()), b.throughput.median))
        .collect();
    for r in runs.iter_mut().filter(|r| r.status == RunStatus::Ok) {
        let Some(w) = workloads.get(&r.workload_id) else { continue };
        let mut ratio = Some(0.0);
        for (i, job) in r.jobs.iter_mut().enumerate() {
            let base = alone.get(&baseline_key(w, i)).copied().filter(|b| *b > 0.0);
            match (base, job.throughput) {
                (Some(b), Some(t)) if t > 0.0 => {
                    job.slowdown = Some(b / t);
                    ratio = ratio.map(|s| s + t / b);
                }
                (Some(_), Some(_)) => {}
                _ => ratio = None,
            }
        }
        r.aggregate_ratio = ratio.filter(|_| r.aggregate_throughput.is_some());
        if r.aggregate_ratio.is_none() && r.aggregate_throughput.is_some() {
            r.notes.push("no run of a job's model alone on the whole GPU with the same data: no ratio".to_string());
        }
    }
}

const RUN_METRICS: &[&str] = &[
    "aggregate_throughput",
    "aggregate_ratio",
    "energy_per_image_j",
    "cpu_cores_total",
    "mem_used_bytes_max",
    "mem_used_share",
    "sm_activity_pct",
    "sm_occupancy_pct",
    "tensor_activity_pct",
    "dram_bw_util_pct",
    "gpu_util_pct",
    "power_w",
];

const JOB_METRICS: &[&str] = &[
    "throughput",
    "epoch_seconds",
    "measured_epoch_seconds",
    "slowdown",
    "data_wait_share",
    "cpu_cores",
    "gpu_mem_bytes_max",
    "torch_peak_reserved_bytes",
];

/// Statistics per workload over its counted repetitions; every workload with runs appears.
pub(crate) fn workload_results(
    runs: &[RunResult],
    workloads: &BTreeMap<String, PlannedWorkload>,
) -> Result<Vec<WorkloadResult>> {
    let mut run_frame = FrameBuilder::new(&["workload"], RUN_METRICS);
    let mut job_frame = FrameBuilder::new(&["workload", "job"], JOB_METRICS);
    for r in runs.iter().filter(|r| counted(r)) {
        let u = r.utilisation.as_ref();
        let cpu: Option<f64> = r.jobs.iter().map(|j| j.cpu_cores).sum();
        run_frame.push(
            std::slice::from_ref(&r.workload_id),
            &[
                r.aggregate_throughput,
                r.aggregate_ratio,
                r.energy_per_image_j,
                cpu,
                u.and_then(|u| u.mem_used_bytes_max),
                u.and_then(|u| u.mem_used_share),
                u.and_then(|u| u.sm_activity_pct),
                u.and_then(|u| u.sm_occupancy_pct),
                u.and_then(|u| u.tensor_activity_pct),
                u.and_then(|u| u.dram_bw_util_pct),
                u.and_then(|u| u.gpu_util_pct),
                u.and_then(|u| u.power_w),
            ],
        );
        for j in &r.jobs {
            job_frame.push(
                &[r.workload_id.clone(), format!("{:04}", j.index)],
                &[
                    j.throughput,
                    j.epoch_seconds,
                    j.measured_epoch_seconds,
                    j.slowdown,
                    j.data_wait_share,
                    j.cpu_cores,
                    j.gpu_mem_bytes_max,
                    j.torch_peak_reserved_bytes,
                ],
            );
        }
    }
    let job_frame = job_frame.finish()?;
    let per_run = stats_by(&run_frame.finish()?, &["workload"], RUN_METRICS)?;
    let per_job = stats_by(&job_frame, &["workload", "job"], JOB_METRICS)?;
    let over_jobs = stats_by(&job_frame, &["workload"], &["epoch_seconds", "slowdown", "data_wait_share"])?;

    let mut out = Vec::new();
    for (id, w) in workloads {
        let mine: Vec<&RunResult> = runs.iter().filter(|r| &r.workload_id == id && !r.superseded).collect();
        let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
        for r in &mine {
            *by_status.entry(r.status.as_str().to_string()).or_default() += 1;
        }
        let status = [RunStatus::Ok, RunStatus::Infeasible, RunStatus::Failed, RunStatus::Skipped]
            .into_iter()
            .find(|s| mine.iter().any(|r| r.status == *s))
            .unwrap_or(if w.feasible { RunStatus::Skipped } else { RunStatus::Infeasible });
        let reasons: BTreeSet<String> =
            mine.iter().filter(|r| r.status != RunStatus::Ok).filter_map(|r| r.reason.clone()).collect();
        let key = vec![id.clone()];
        let run_stat = |m: &str| get(&per_run, &key, m);
        let job_stats = job_stats(w, id, &per_job);
        out.push(WorkloadResult {
            id: id.clone(),
            experiment: w.experiment,
            label: w.label.clone(),
            mode: w.mode,
            layout: layout(w),
            data: w.data.clone(),
            headline: is_headline(w),
            feasible: w.feasible,
            plan_reason: w.reason.clone(),
            config: config_key(w),
            jobs: w
                .jobs
                .iter()
                .enumerate()
                .map(|(i, j)| PlannedJobInfo {
                    index: i as u32,
                    model: j.model.clone(),
                    model_class: j.model_class.clone(),
                    dataset: j.dataset.clone(),
                    batch_size: j.batch_size,
                    train_count: j.data.train_count,
                    mig_profile: j.mig_profile.clone(),
                    mig_class: j.mig_class.clone(),
                    stands_in_for: j.mps_limits.as_ref().map(|l| l.stands_in_for.clone()),
                    mps_thread_pct: j.mps_limits.as_ref().map(|l| l.active_thread_percentage),
                    mps_mem_limit_mib: j.mps_limits.as_ref().map(|l| l.pinned_mem_limit_mib),
                })
                .collect(),
            repetitions_planned: w.repetitions,
            runs_by_status: by_status,
            status,
            reasons: reasons.into_iter().collect(),
            aggregate_throughput: run_stat("aggregate_throughput"),
            aggregate_ratio: run_stat("aggregate_ratio"),
            energy_per_image_j: run_stat("energy_per_image_j"),
            per_job_epoch_seconds: get(&over_jobs, &key, "epoch_seconds"),
            per_job_slowdown: get(&over_jobs, &key, "slowdown"),
            data_wait_share: get(&over_jobs, &key, "data_wait_share"),
            cpu_cores_total: run_stat("cpu_cores_total"),
            mem_used_bytes_max: run_stat("mem_used_bytes_max"),
            mem_used_share: run_stat("mem_used_share"),
            sm_activity_pct: run_stat("sm_activity_pct"),
            sm_occupancy_pct: run_stat("sm_occupancy_pct"),
            tensor_activity_pct: run_stat("tensor_activity_pct"),
            dram_bw_util_pct: run_stat("dram_bw_util_pct"),
            gpu_util_pct: run_stat("gpu_util_pct"),
            power_w: run_stat("power_w"),
            job_stats,
        });
    }
    out.sort_by(|a, b| {
        (a.experiment, &a.label, &a.data, a.mode, &a.layout, &a.id).cmp(&(
            b.experiment,
            &b.label,
            &b.data,
            b.mode,
            &b.layout,
            &b.id,
        ))
    });
    Ok(out)
}

fn job_stats(w: &PlannedWorkload, id: &str, per_job: &Grouped) -> Vec<JobStats> {
    w.jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let key = vec![id.to_string(), format!("{i:04}")];
            let s = |m: &str| get(per_job, &key, m);
            JobStats {
                index: i as u32,
                model: j.model.clone(),
                throughput: s("throughput"),
                epoch_seconds: s("epoch_seconds"),
                measured_epoch_seconds: s("measured_epoch_seconds"),
                slowdown: s("slowdown"),
                data_wait_share: s("data_wait_share"),
                cpu_cores: s("cpu_cores"),
                gpu_mem_bytes_max: s("gpu_mem_bytes_max"),
                torch_peak_reserved_bytes: s("torch_peak_reserved_bytes"),
            }
        })
        .collect()
}

/// The headline workloads: marked so in the plan, or seven resnet26 jobs.
pub(crate) fn is_headline(w: &PlannedWorkload) -> bool {
    w.headline || (w.jobs.len() == 7 && w.jobs.iter().all(|j| j.model == "resnet26"))
}

/// `1g×7`, `4g+2g+1g`: the MIG slices of the jobs (largest first); empty outside MIG modes.
pub(crate) fn layout(w: &PlannedWorkload) -> String {
    if !matches!(w.mode, Mode::Mig | Mode::MpsLimited) {
        return String::new();
    }
    let mut classes: Vec<String> = w
        .jobs
        .iter()
        .map(|j| {
            j.mig_class
                .clone()
                .or_else(|| j.mig_profile.as_ref().and_then(|p| p.split('.').next().map(str::to_string)))
                .unwrap_or_else(|| "?".into())
        })
        .collect();
    classes.sort_by(|a, b| slices(b).cmp(&slices(a)).then(a.cmp(b)));
    let mut parts: Vec<(String, usize)> = Vec::new();
    for c in classes {
        match parts.last_mut() {
            Some((last, n)) if *last == c => *n += 1,
            _ => parts.push((c, 1)),
        }
    }
    parts.iter().map(|(c, n)| if *n > 1 { format!("{c}×{n}") } else { c.clone() }).collect::<Vec<_>>().join("+")
}

/// Compute slices of a class name such as `3g` (0 when unknown).
pub(crate) fn slices(class: &str) -> u32 {
    class.trim_end_matches('g').parse().unwrap_or(0)
}

/// Same experiment, data and jobs (model, dataset, batch), whatever the mode.
pub(crate) fn config_key(w: &PlannedWorkload) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for j in &w.jobs {
        *counts.entry(format!("{}/{}/b{}", j.model, j.dataset, j.batch_size)).or_default() += 1;
    }
    let sig: Vec<String> = counts.iter().map(|(k, n)| format!("{k}×{n}")).collect();
    format!("e{}|{}|{}", w.experiment, w.data, sig.join("+"))
}

/// The collocation modes of each configuration with more than one job, side by side.
pub(crate) fn comparisons(workloads: &[WorkloadResult]) -> Vec<ModeComparison> {
    let mut by_config: BTreeMap<&str, Vec<&WorkloadResult>> = BTreeMap::new();
    for w in workloads {
        by_config.entry(w.config.as_str()).or_default().push(w);
    }
    let mut out = Vec::new();
    for (config, ws) in by_config {
        let first = ws[0];
        // Jobs of different models weigh alike when each is counted against its model alone
        // (raw images per second would favour a mode that starves the slower model); raw
        // throughput only where some measured workload lacks that reference.
        let normalised = ws.iter().filter(|w| w.aggregate_throughput.is_some()).all(|w| w.aggregate_ratio.is_some());
        let mut best: BTreeMap<String, f64> = BTreeMap::new();
        for w in &ws {
            let value = if normalised { w.aggregate_ratio } else { w.aggregate_throughput };
            if let Some(s) = value {
                let e = best.entry(w.mode.to_string()).or_insert(s.median);
                *e = e.max(s.median);
            }
        }
        let get = |m: Mode| best.get(m.as_str()).copied();
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let (stand_in, mig) = match get(Mode::Mig) {
            Some(v) => (Some(Mode::Mig), Some(v)),
            None => match get(Mode::MpsLimited) {
                Some(v) => (Some(Mode::MpsLimited), Some(v)),
                None => (None, None),
            },
        };
        let best_mode = [Mode::Naive, Mode::Mps, Mode::MpsLimited, Mode::Mig]
            .into_iter()
            .filter_map(|m| get(m).map(|v| (m, v)))
            .fold(None::<(Mode, f64)>, |acc, (m, v)| match acc {
                Some((_, bv)) if bv >= v => acc,
                _ => Some((m, v)),
            })
            .map(|(m, _)| m);
        out.push(ModeComparison {
            config: config.to_string(),
            experiment: first.experiment,
            label: first.label.clone(),
            data: first.data.clone(),
            n_jobs: first.n_jobs(),
            mps_over_naive: ratio(get(Mode::Mps), get(Mode::Naive)),
            mps_over_mig: ratio(get(Mode::Mps), mig),
            mig_stand_in: stand_in.filter(|_| get(Mode::Mps).is_some()),
            best_mode,
            normalised,
            per_mode: best,
            mig_infeasible: ws
                .iter()
                .any(|w| w.mode == Mode::Mig && (!w.feasible || w.status == RunStatus::Infeasible)),
        });
    }
    out
}
