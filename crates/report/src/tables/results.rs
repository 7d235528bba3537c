//! Tables of measurements: single-job baselines, homogeneous collocation, heterogeneous
//! mixes, utilisation.

use colloc_analysis::{Results, WorkloadResult};
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;

use super::{implausible_notes, status_notes, Cell, Column, Marks, Prose, Table};
use crate::format::{number_word, Quantity};
use crate::legend::{mix_classes, mix_experiments, mix_jobs_and_slices, mix_sizes};
use crate::order::{is_mix, mix_position, mode_layout, mode_name, workload_key, MODES};

pub(crate) fn baselines(results: &Results) -> Table {
    let mut bs: Vec<_> = results.baselines.iter().collect();
    bs.sort_by(|a, b| {
        (&a.model, &a.dataset, a.batch_size, &a.data).cmp(&(&b.model, &b.dataset, b.batch_size, &b.data))
    });
    let rows = bs
        .iter()
        .map(|b| {
            vec![
                Cell::text(b.model.clone()),
                Cell::text(b.dataset.clone()),
                Cell::Value(Some(b.batch_size as f64)),
                Cell::text(b.data.clone()),
                Cell::text(mode_name(b.mode)),
                Cell::Stats(b.stats.throughput),
                Cell::Ci(b.stats.throughput_ci_rel),
                Cell::Value(Some(b.host_count as f64)),
                Cell::Value(b.host_spread),
                Cell::Stats(b.stats.epoch_seconds),
                Cell::Stats(b.stats.measured_epoch_seconds),
                Cell::Stats(b.stats.memory_bytes),
                Cell::Stats(b.stats.data_wait_share),
                Cell::Stats(b.stats.cpu_cores),
                Cell::Stats(b.stats.sm_activity_pct),
            ]
        })
        .collect();
    Table {
        id: "baselines",
        title: "Single-job baselines".to_string(),
        caption: "Each model alone on the whole GPU: the reference of every ratio and slowdown.".into(),
        columns: vec![
            Column::text("Model"),
            Column::text("Dataset"),
            Column::number("Batch", Quantity::Count),
            Column::text("Data"),
            Column::text("Mode"),
            Column::number("Throughput", Quantity::Throughput),
            Column::number("95% CI", Quantity::HalfWidth),
            Column::number("Hosts", Quantity::Count),
            Column::number("Between hosts", Quantity::Ratio),
            Column::number("Epoch time", Quantity::Seconds),
            Column::number("Epoch time, measured", Quantity::Seconds),
            Column::number("Memory", Quantity::GiB),
            Column::number("Data wait", Quantity::Share),
            Column::number("Host CPU", Quantity::Cores),
            Column::number("SM activity", Quantity::Percent),
        ],
        rows,
        notes: [
            "Hosts: the lent GPUs (told apart by their UUID; each is a host of its own) with runs of the model alone; between hosts: the highest of the hosts' median throughputs over the lowest (— with one host). A collocated run is divided by the median of its own host's runs alone, or, where its host has none, by the median over all hosts (marked † in the tables).".into(),
        ]
        .into_iter()
        .chain(host_lines(&bs))
        .chain([
            "Epoch time: the dataset's training images over the throughput; measured: the jobs' own epoch_end events (scaled to the whole training set when a generated set is a fraction of it), when they trained whole epochs.".into(),
            "Memory: peak device memory of the job's processes (NVML), else PyTorch's peak reserved memory.".into(),
        ])
        .collect(),
        simulated: results.simulated,
    }
}

/// Per baseline measured on more than one host, each host's median (and CPU score).
fn host_lines(bs: &[&colloc_analysis::Baseline]) -> Vec<Prose> {
    bs.iter()
        .filter(|b| b.hosts.len() > 1)
        .map(|b| {
            let hosts: Vec<String> = b
                .hosts
                .iter()
                .map(|h| {
                    let cpu = h.cpu_single_thread_mib_s.map_or_else(String::new, |c| {
                        format!(", CPU {} MiB/s on one thread", Quantity::Throughput.number(c))
                    });
                    format!(
                        "{} {} ({} run{}{cpu})",
                        short_host(h.host_id.as_deref()),
                        Quantity::Throughput.with_unit(h.throughput.median),
                        h.throughput.n,
                        if h.throughput.n == 1 { "" } else { "s" },
                    )
                })
                .collect();
            Prose::default()
                .trace(format!("{} b{} ({}) per host: {}", b.model, b.batch_size, b.data, hosts.join("; ")))
                .own(".")
        })
        .collect()
}

/// `GPU-aea83523`: a GPU UUID cut to its first group.
fn short_host(host: Option<&str>) -> String {
    match host {
        Some(h) => h.splitn(3, '-').take(2).collect::<Vec<_>>().join("-"),
        None => "unnamed host".to_string(),
    }
}

pub(crate) fn homogeneous(results: &Results) -> Table {
    let mut ws: Vec<&WorkloadResult> = results.workloads.iter().filter(|w| !is_mix(w) && w.homogeneous()).collect();
    ws.sort_by_key(|w| workload_key(w));
    let rows = ws
        .iter()
        .map(|w| {
            let j = &w.jobs[0];
            vec![
                Cell::text(w.experiment.to_string()),
                Cell::text(j.model.clone()),
                Cell::text(j.dataset.clone()),
                Cell::Value(Some(j.batch_size as f64)),
                Cell::text(w.data.clone()),
                Cell::Value(Some(w.n_jobs() as f64)),
                Cell::text(mode_label(w)),
                Cell::text(w.status_word()),
                Cell::Stats(w.stats.per_job_epoch_seconds),
                Cell::Stats(w.stats.aggregate_throughput),
                Cell::Ci(w.stats.throughput_ci_rel),
                Cell::ratio(w.stats.aggregate_ratio, w.intervals.map(|i| i.stp), Marks::of(w)),
                Cell::ratio(w.stats.antt, w.intervals.map(|i| i.antt), Marks::of(w)),
                Cell::ratio(w.stats.fairness, w.intervals.map(|i| i.fairness), Marks::of(w)),
                Cell::Stats(w.stats.mem_used_bytes_max),
                Cell::Value(w.stats.mem_used_share.map(|s| s.median)),
            ]
        })
        .collect();
    Table {
        id: "homogeneous",
        title: "Homogeneous collocation".to_string(),
        caption: format!(
            "{} of the same job per mode: per-job epoch time, aggregate throughput and its ratio to the model alone, device memory.",
            copies(&ws)
        )
        .into(),
        columns: vec![
            Column::text("Exp."),
            Column::text("Model"),
            Column::text("Dataset"),
            Column::number("Batch", Quantity::Count),
            Column::text("Data"),
            Column::number("Jobs", Quantity::Count),
            Column::text("Mode"),
            Column::text("Status"),
            Column::number("Per-job epoch time", Quantity::Seconds),
            Column::number("Aggregate throughput", Quantity::Throughput),
            Column::number("95% CI", Quantity::HalfWidth),
            Column::number("STP", Quantity::Ratio),
            Column::number("ANTT", Quantity::Ratio),
            Column::number("Fairness", Quantity::Ratio),
            Column::number("Memory used", Quantity::GiB),
            Column::number("Memory of GPU", Quantity::Share),
        ],
        rows,
        notes: [
            "STP (system throughput): the sum over jobs of each job's throughput over the same model's alone on the whole GPU.".into(),
            "ANTT (average normalised turnaround time): the mean over jobs of the model's throughput alone over the job's; 1 is as fast as alone, higher is slower.".into(),
            "Fairness: the lowest normalised throughput of a workload's jobs over the highest; 1 is even progress.".into(),
            "Per-job epoch time: statistics over every job of every repetition.".into(),
            "OOM: a job ran out of device memory, an outcome of the workload recorded as such.".into(),
        ]
        .into_iter()
        .chain(status_notes(ws.iter().copied()))
        .chain(implausible_notes(ws.iter().copied()))
        .collect(),
        simulated: results.simulated,
    }
}

/// The mixes' interference matrix: per mode, a row per job class, a column per mix, each
/// cell the class's normalised throughput beside the mix's other jobs.
pub(crate) fn interference(results: &Results) -> Table {
    let cells = &results.interference;
    let mut mixes: Vec<(u32, String)> = cells.iter().map(|c| (c.position, c.mix.clone())).collect();
    mixes.sort();
    mixes.dedup();
    let mut rows_keys: Vec<(u32, String, usize, String, String, String)> = cells
        .iter()
        .map(|c| {
            let mode_rank = MODES.iter().position(|m| *m == c.mode).unwrap_or(MODES.len());
            (
                c.experiment,
                c.data.clone(),
                mode_rank,
                c.class.clone(),
                format!("{} b{}", c.model, c.batch_size),
                c.mode.to_string(),
            )
        })
        .collect();
    rows_keys.sort();
    rows_keys.dedup();
    let rows = rows_keys
        .iter()
        .map(|(e, data, _, class, job, mode)| {
            let mut row = vec![
                Cell::text(e.to_string()),
                Cell::text(data.clone()),
                Cell::text(mode.clone()),
                Cell::text(format!("{class} ({job})")),
            ];
            for (_, mix) in &mixes {
                let c = cells.iter().find(|c| {
                    // The row's key and the column's mix.
                    (c.experiment, &c.data, c.mode.to_string(), &c.class, &c.mix)
                        == (*e, data, mode.clone(), class, mix)
                });
                row.push(match c {
                    None => Cell::text("·"),
                    Some(c) if c.normalised_throughput.is_some() => Cell::ratio(
                        c.normalised_throughput,
                        None,
                        Marks { cross_host: c.cross_host_baseline, disturbed: c.disturbed, implausible: false },
                    ),
                    Some(_) => Cell::text("—"),
                });
            }
            row
        })
        .collect();
    let mut columns = vec![Column::text("Exp."), Column::text("Data"), Column::text("Mode"), Column::text("Class")];
    columns.extend(mixes.iter().map(|(_, m)| Column::number(m, Quantity::Ratio)));
    Table {
        id: "interference",
        title: "Interference between job classes".to_string(),
        caption: "Each job class's normalised throughput (its throughput over its model alone on the whole GPU) in each mix, per mode."
            .into(),
        columns,
        rows,
        notes: vec![
            "A cell: the median over the class's jobs in the mix of their median over repetitions; 1 is as fast as alone.".into(),
            "·: the class is not in the mix; —: the mix was not measured in that mode (infeasible, skipped or failed).".into(),
        ],
        simulated: results.simulated,
    }
}

/// `One to seven copies`: the fewest and the most jobs of the workloads.
fn copies(ws: &[&WorkloadResult]) -> String {
    let n = ws.iter().map(|w| w.n_jobs());
    match (n.clone().min(), n.max()) {
        (Some(lo), Some(hi)) if lo < hi => format!("{} to {} copies", capitalised(&number_word(lo)), number_word(hi)),
        (Some(n), _) => format!("{} {}", capitalised(&number_word(n)), if n == 1 { "copy" } else { "copies" }),
        _ => "Copies".to_string(),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// `MPS`, `MIG 1g×7`, `MPS-limited 1g×7`.
pub(crate) fn mode_label(w: &WorkloadResult) -> String {
    mode_layout(w.mode, &w.layout)
}

pub(crate) fn mixes(results: &Results) -> Table {
    let mixes: Vec<&WorkloadResult> = results.workloads.iter().filter(|w| is_mix(w)).collect();
    let modes: Vec<Mode> = MODES.iter().copied().filter(|m| mixes.iter().any(|w| w.mode == *m)).collect();
    let mut keys: Vec<(usize, String, String)> =
        mixes.iter().map(|w| (mix_position(&w.form).unwrap_or(0), w.label.clone(), w.data.clone())).collect();
    keys.sort();
    keys.dedup();
    let mut rows = Vec::new();
    for (_, label, data) in &keys {
        let of = |m: Mode| mixes.iter().find(|w| &w.label == label && &w.data == data && w.mode == m).copied();
        let any = mixes.iter().find(|w| &w.label == label && &w.data == data).expect("a mix of the key");
        let mut kinds: Vec<(String, usize)> = Vec::new();
        for j in &any.jobs {
            let k = format!("{} b{}", j.model, j.batch_size);
            match kinds.iter_mut().find(|(x, _)| *x == k) {
                Some((_, n)) => *n += 1,
                None => kinds.push((k, 1)),
            }
        }
        let jobs = kinds
            .iter()
            .map(|(k, n)| if *n > 1 { format!("{n} × {k}") } else { k.clone() })
            .collect::<Vec<_>>()
            .join(" + ");
        let layout = of(Mode::Mig).or_else(|| of(Mode::MpsLimited)).map(|w| w.layout.clone()).unwrap_or_default();
        let mut row = vec![Cell::text(label.clone()), Cell::text(data.clone()), Cell::text(jobs), Cell::text(layout)];
        for m in &modes {
            row.push(match of(*m) {
                None => Cell::text("·"),
                Some(w) if w.stats.aggregate_ratio.is_some() => {
                    Cell::ratio(w.stats.aggregate_ratio, w.intervals.map(|i| i.stp), Marks::of(w))
                }
                Some(w) if !w.feasible || w.status == RunStatus::Infeasible => Cell::text("infeasible"),
                Some(w) if w.status == RunStatus::Ok => Cell::text(match w.stats.aggregate_throughput {
                    Some(t) => format!("{} (no run alone)", Quantity::Throughput.with_unit(t.median)),
                    None => "ok, not measured".to_string(),
                }),
                Some(w) => Cell::text(w.status_word()),
            });
            row.push(match of(*m) {
                None => Cell::text("·"),
                Some(w) => Cell::Ci(w.stats.throughput_ci_rel),
            });
            type Metric = fn(&WorkloadResult) -> (Option<colloc_analysis::Stats>, Option<[f64; 2]>);
            let metrics: [Metric; 2] = [
                |w| (w.stats.antt, w.intervals.map(|i| i.antt)),
                |w| (w.stats.fairness, w.intervals.map(|i| i.fairness)),
            ];
            for metric in metrics {
                row.push(match of(*m) {
                    Some(w) if metric(w).0.is_some() => Cell::ratio(metric(w).0, metric(w).1, Marks::of(w)),
                    _ => Cell::text("·"),
                });
            }
        }
        rows.push(row);
    }
    let mut columns = vec![Column::text("Mix"), Column::text("Data"), Column::text("Jobs"), Column::text("MIG slices")];
    for m in &modes {
        columns.push(Column::number(mode_name(*m), Quantity::Ratio));
        columns.push(Column::number(&format!("{} 95% CI", mode_name(*m)), Quantity::HalfWidth));
        columns.push(Column::number(&format!("{} ANTT", mode_name(*m)), Quantity::Ratio));
        columns.push(Column::number(&format!("{} fairness", mode_name(*m)), Quantity::Ratio));
    }
    Table {
        id: "mixes",
        title: "Heterogeneous mixes".to_string(),
        caption: match mix_experiments(results) {
            Some(e) => Prose::from(format!("{e}: mixes of "))
                .trace(mix_sizes(results, true))
                .own(" jobs per mode; each cell is the sum over jobs of throughput over the same model alone."),
            None => "Mixes of job classes per mode: none in this campaign.".into(),
        },
        columns,
        rows,
        notes: (!mix_classes(results).is_empty())
            .then(|| Prose::default().trace(mix_jobs_and_slices(results)).own("."))
            .into_iter()
            .chain([
                "Per mode: STP (the cell named after the mode: the sum over the mix's jobs of each job's throughput over its model alone), the 95% interval, ANTT (the mean over the jobs of the model's throughput alone over the job's; 1 is as fast as alone) and fairness (the lowest normalised throughput of the mix's jobs over the highest; 1 is even progress).".into(),
                format!(
                "infeasible: the MIG layout cannot be made on the GPU (more than its {}compute slices, or no placement).",
                results.target.as_ref().map_or_else(String::new, |g| format!("{} ", number_word(g.compute_slices as usize)))
            ).into()])
        .chain(status_notes(mixes.iter().copied().filter(|w| w.status != RunStatus::Infeasible && w.feasible)))
        .chain(implausible_notes(mixes.iter().copied()))
        .collect(),
        simulated: results.simulated,
    }
}

pub(crate) fn utilisation(results: &Results) -> Table {
    let mut ws: Vec<&WorkloadResult> = results.workloads.iter().filter(|w| w.status == RunStatus::Ok).collect();
    ws.sort_by_key(|w| workload_key(w));
    let med = |s: Option<colloc_analysis::Stats>| Cell::Value(s.map(|s| s.median));
    let rows = ws
        .iter()
        .map(|w| {
            vec![
                Cell::text(w.experiment.to_string()),
                Cell::text(w.label.clone()),
                Cell::text(w.data.clone()),
                Cell::text(mode_label(w)),
                med(w.stats.sm_activity_pct),
                med(w.stats.sm_occupancy_pct),
                med(w.stats.tensor_activity_pct),
                med(w.stats.dram_bw_util_pct),
                med(w.stats.gpu_util_pct),
                med(w.stats.mem_used_bytes_max),
                med(w.stats.mem_used_share),
                med(w.stats.power_w),
                med(w.stats.energy_per_image_j),
                med(w.stats.cpu_cores_total),
                med(w.stats.data_wait_share),
                med(w.stats.epoch_start_wait_share),
            ]
        })
        .collect();
    Table {
        id: "utilisation",
        title: "Utilisation".to_string(),
        caption: "GPU activity, memory, power and host CPU over the window in which all jobs trained (medians over repetitions).".into(),
        columns: vec![
            Column::text("Exp."),
            Column::text("Workload"),
            Column::text("Data"),
            Column::text("Mode"),
            Column::number("SM activity", Quantity::Percent),
            Column::number("SM occupancy", Quantity::Percent),
            Column::number("Tensor activity", Quantity::Percent),
            Column::number("DRAM bandwidth", Quantity::Percent),
            Column::number("GPU utilisation", Quantity::Percent),
            Column::number("Memory used", Quantity::GiB),
            Column::number("Memory of GPU", Quantity::Share),
            Column::number("Power", Quantity::Watts),
            Column::number("Energy per image", Quantity::JoulesPerImage),
            Column::number("Host CPU", Quantity::Cores),
            Column::number("Data wait", Quantity::Share),
            Column::number("Epoch starts", Quantity::Share),
        ],
        rows,
        notes: vec![
            "SM activity, occupancy, tensor activity and DRAM bandwidth from NVML GPM (whole GPU; for MIG, the mean over instances when the whole-GPU value is not available); GPU utilisation is NVML's coarser busy time.".into(),
            "Energy per image: the increase of the GPU's total-energy counter (NVML) between its first and its last reading inside the window, scaled from their interval to the whole window, over the images all jobs trained in it (the sum of their throughputs times the window); the mean power times the window only where the GPU reports no energy counter.".into(),
            "Host CPU: the jobs' process trees summed, in cores; data wait: share of training time spent waiting for the next batch (median over the jobs).".into(),
            "Epoch starts: share of the window a job's loader spent starting epochs (the data waits of each epoch's first iteration beyond the mean wait of the others; median over the jobs); — where a job's window held fewer than two epochs of its data set.".into(),
        ],
        simulated: results.simulated,
    }
}
