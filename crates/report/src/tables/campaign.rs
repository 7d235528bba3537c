//! Tables about the campaign rather than its measurements: MIG profiles and the mapping
//! used, the experiment matrix with each cell's status, the hardware and software.

use colloc_analysis::{Results, WorkloadResult};
use colloc_spec::gpu::GpuTable;
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use std::collections::{BTreeMap, BTreeSet};

use super::{status_notes, Cell, Column, Prose, Table};
use crate::format::{gib, Quantity};
use crate::order::{mix_position, mode_name, mode_rank, slices, workload_key, MODES};

/// The traces' GPU's table: the one the campaign's plan targets, else the one whose NVML
/// names match the GPU the traces recorded.
pub(crate) fn host_table<'a>(results: &Results, gpus: &'a [GpuTable]) -> Option<&'a GpuTable> {
    let planned = results.target.as_ref().and_then(|t| gpus.iter().find(|g| g.key == t.key));
    planned.or_else(|| {
        gpus.iter()
            .find(|g| results.provenance.gpu_names.iter().any(|n| g.nvml_names.iter().any(|m| n.contains(m.as_str()))))
    })
}

/// MIG profiles per compute-slice class on the paper's GPU and on the traces' GPU, with
/// what the campaign's MIG and mps-limited workloads used for each class.
pub(crate) fn mig_profiles(results: &Results, paper: Option<&GpuTable>, gpus: &[GpuTable]) -> Table {
    let host = host_table(results, gpus);
    let host_name = host.map(|h| h.name.clone()).unwrap_or_else(|| results.gpu_name());
    // class → profiles used by MIG runs, caps used by mps-limited runs
    let mut used_mig: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut used_caps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for w in &results.workloads {
        for j in &w.jobs {
            let Some(class) = &j.mig_class else { continue };
            match w.mode {
                Mode::Mig => {
                    used_mig.entry(class.clone()).or_default().insert(j.mig_profile.clone().unwrap_or_default());
                }
                Mode::MpsLimited => {
                    let caps = format!(
                        "{} % of SMs, {}",
                        j.mps_thread_pct.map_or("?".to_string(), |p| p.to_string()),
                        j.mps_mem_limit_mib.map_or("?".to_string(), |m| gib(m as f64 * 1024.0 * 1024.0))
                    );
                    used_caps.entry(class.clone()).or_default().insert(caps);
                }
                _ => {}
            }
        }
    }
    let side = |t: Option<&GpuTable>, class: &str| -> [Cell; 4] {
        match t.and_then(|t| t.profile(class)) {
            Some(p) => [
                Cell::text(p.name.clone()),
                Cell::Value(Some(p.sms as f64)),
                Cell::Value(Some(p.memory_gib)),
                Cell::Value(Some(p.max_instances as f64)),
            ],
            None => [Cell::text(""), Cell::Value(None), Cell::Value(None), Cell::Value(None)],
        }
    };
    // The classes the two GPU tables name and the campaign used, from the smallest slice up.
    let mut classes: Vec<&str> = [paper, host]
        .into_iter()
        .flatten()
        .flat_map(|t| t.profiles.iter().filter_map(|p| p.class.as_deref()))
        .chain(used_mig.keys().chain(used_caps.keys()).map(String::as_str))
        .collect();
    classes.sort_by_key(|c| (slices(c), c.to_string()));
    classes.dedup();
    let mut rows = Vec::new();
    for class in classes {
        let mut row = vec![Cell::text(class)];
        row.extend(side(paper, class));
        row.extend(side(host, class));
        let join = |m: &BTreeMap<String, BTreeSet<String>>| {
            m.get(class).map(|s| s.iter().cloned().collect::<Vec<_>>().join(", ")).unwrap_or_default()
        };
        row.push(Cell::text(join(&used_mig)));
        row.push(Cell::text(join(&used_caps)));
        rows.push(row);
    }
    let mut notes: Vec<Prose> = vec![
        "A workload declares each job's compute-slice class; MIG runs get the traces' GPU's profile of that class, mps-limited runs cap MPS at that profile's share of SMs and its memory.".into(),
    ];
    if let Some(h) = host {
        let extra: Vec<&str> = h.profiles.iter().filter(|p| p.class.is_none()).map(|p| p.name.as_str()).collect();
        if !extra.is_empty() {
            notes.push(format!("{} also offers {} (not used).", h.name, extra.join(", ")).into());
        }
        notes.push(
            format!(
                "{}: {} SMs, {} without MIG; source: {}.",
                h.name,
                h.sms,
                Quantity::Plain.number(h.memory_gib) + " GiB",
                h.source
            )
            .into(),
        );
    } else {
        notes.push(
            Prose::from("The traces' GPU (").trace(&host_name).own(") has no MIG profile table in experiments/gpus."),
        );
    }
    if let Some(p) = paper {
        notes.push(format!("{}: {} SMs without MIG; source: {}.", p.name, p.sms, p.source).into());
    }
    let paper_name = paper.map(|p| p.name.clone()).unwrap_or_else(|| "unknown GPU".to_string());
    Table {
        id: "mig_profiles",
        title: "MIG profiles".to_string(),
        caption: Prose::from(format!("MIG profiles per compute-slice class on the paper's {paper_name} and on the "))
            .trace(&host_name)
            .own(" of the traces, and what this campaign used."),
        columns: vec![
            Column::text("Class"),
            Column::text(&format!("{paper_name} profile")),
            Column::number("SMs", Quantity::Count),
            Column::number("Memory (GiB)", Quantity::Plain),
            Column::number("Max", Quantity::Count),
            Column::text(&format!("{host_name} profile")),
            Column::number("SMs", Quantity::Count),
            Column::number("Memory (GiB)", Quantity::Plain),
            Column::number("Max", Quantity::Count),
            Column::text("MIG runs used"),
            Column::text("mps-limited caps used"),
        ],
        rows,
        notes,
        simulated: results.simulated,
    }
}

/// `ok 2/2`, `skipped`, `infeasible`, `failed 0/2`, `OOM 0/1`.
fn status_cell(w: &WorkloadResult) -> String {
    let total: usize = w.runs_by_status.values().sum();
    let ok = w.runs_by_status.get("ok").copied().unwrap_or(0);
    match w.status.as_str() {
        "ok" | "failed" => format!("{} {ok}/{total}", w.status_word()),
        s => s.to_string(),
    }
}

/// Rows: experiment × workload × data; columns: the modes the campaign has; cells: status.
/// Workloads of the plan without runs yet read `not yet 0/N` (or `infeasible`, which the
/// plan knows without running).
pub(crate) fn experiment_matrix(results: &Results) -> Table {
    let modes: Vec<Mode> = MODES
        .iter()
        .copied()
        .filter(|m| results.workloads.iter().any(|w| w.mode == *m) || results.pending.iter().any(|w| w.mode == *m))
        .collect();
    let mut ws: Vec<&WorkloadResult> = results.workloads.iter().collect();
    ws.sort_by_key(|w| workload_key(w));
    // Row key: experiment, label, data, in the workloads' order; then rows only the plan has.
    let mut order: Vec<(u32, String, String)> = Vec::new();
    // Per row, per mode: (layout, text) of each workload.
    type Row = BTreeMap<usize, Vec<(String, String)>>;
    let mut cells: BTreeMap<(u32, String, String), Row> = BTreeMap::new();
    for w in ws {
        let key = (w.experiment, w.label.clone(), w.data.clone());
        if !order.contains(&key) {
            order.push(key.clone());
        }
        cells.entry(key).or_default().entry(mode_rank(w.mode)).or_default().push((w.layout.clone(), status_cell(w)));
    }
    let mut pending: Vec<&colloc_analysis::PendingWorkload> = results.pending.iter().collect();
    // As the measured rows: larger MIG slices first within a mode.
    let widest = |layout: &str| 99 - layout.split(['+', '×']).map(slices).max().unwrap_or(0).min(99);
    pending.sort_by_key(|w| {
        (
            w.experiment,
            mix_position(&w.form).unwrap_or(0),
            w.label.clone(),
            w.data.clone(),
            mode_rank(w.mode),
            widest(&w.layout),
        )
    });
    for w in pending {
        let key = (w.experiment, w.label.clone(), w.data.clone());
        if !order.contains(&key) {
            // After the last row of the same experiment.
            let at = order.iter().rposition(|k| k.0 <= key.0).map_or(0, |i| i + 1);
            order.insert(at, key.clone());
        }
        let text = if w.feasible { format!("not yet 0/{}", w.repetitions) } else { "infeasible".to_string() };
        cells.entry(key).or_default().entry(mode_rank(w.mode)).or_default().push((w.layout.clone(), text));
    }
    let mut rows = Vec::new();
    for key in &order {
        let by_mode = &cells[key];
        let mut row = vec![Cell::text(key.0.to_string()), Cell::text(key.1.clone()), Cell::text(key.2.clone())];
        for m in &modes {
            let text = match by_mode.get(&mode_rank(*m)) {
                None => "·".to_string(),
                Some(list) if list.len() == 1 => list[0].1.clone(),
                Some(list) => list.iter().map(|(l, t)| format!("{l}: {t}")).collect::<Vec<_>>().join("; "),
            };
            row.push(Cell::text(text));
        }
        rows.push(row);
    }
    let mut columns = vec![Column::text("Exp."), Column::text("Workload"), Column::text("Data")];
    columns.extend(modes.iter().map(|m| Column::text(mode_name(*m))));
    let mut notes: Vec<Prose> = vec!["ok n/N: n of the N runs measured; ·: not in this campaign.".into()];
    notes.extend(status_notes(&results.workloads));
    if let Some(note) = results.incomplete() {
        notes.push(
            Prose::from(format!("not yet 0/N: planned, none of its N runs made yet; in all, {note} ("))
                .code(format!("data/{}/", results.campaign))
                .own(")."),
        );
    }
    Table {
        id: "experiment_matrix",
        title: "Experiment matrix".to_string(),
        caption: Prose::from("The workloads of campaign ")
            .trace(&results.campaign)
            .own(" by mode, with the status of their runs."),
        columns,
        rows,
        notes,
        simulated: results.simulated,
    }
}

/// The hardware and software the traces came from.
pub(crate) fn hardware(results: &Results) -> Table {
    let p = &results.provenance;
    let list = |v: &[String]| if v.is_empty() { String::new() } else { v.join(", ") };
    let mut rows: Vec<(String, String)> = vec![
        ("Campaign".into(), p.campaign.clone()),
        ("Simulated".into(), if p.simulated { "yes: SIMULATED, not measured".into() } else { "no".into() }),
        ("GPU".into(), list(&p.gpu_names)),
        ("GPU memory".into(), p.gpu_memory_total_bytes.map(|b| gib(b as f64)).unwrap_or_default()),
        ("GPU SMs".into(), p.gpu_sm_count.map(|s| s.to_string()).unwrap_or_default()),
        ("GPU power limit".into(), p.gpu_power_limit_w.map(|w| Quantity::Watts.with_unit(w)).unwrap_or_default()),
        ("MIG mode".into(), list(&p.mig_mode)),
        ("Driver".into(), list(&p.driver_versions)),
        ("CUDA (driver API)".into(), list(&p.cuda_driver_versions)),
        ("Host CPU".into(), list(&p.cpu_models)),
        ("Host CPU cores".into(), p.cpu_cores.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")),
        ("Host memory".into(), p.host_memory_total_bytes.iter().map(|b| gib(*b as f64)).collect::<Vec<_>>().join(", ")),
        ("Kernel".into(), list(&p.kernels)),
        ("OS".into(), list(&p.oses)),
    ];
    for (k, v) in &p.job_software {
        rows.push((format!("Jobs: {k}"), v.join(", ")));
    }
    rows.extend([
        ("Runner".into(), list(&p.runner_versions)),
        ("Git commit".into(), list(&p.git_commits)),
        ("Plan sha256".into(), list(&p.plan_hashes)),
        ("Protocol".into(), list(&p.protocols)),
        ("Telemetry".into(), list(&p.telemetry_sources)),
        (
            "Telemetry not available".into(),
            p.telemetry_unavailable.iter().map(|(k, v)| format!("{k} ({v})")).collect::<Vec<_>>().join("; "),
        ),
        ("First run started".into(), p.first_started_at.clone().unwrap_or_default()),
        ("Last run ended".into(), p.last_ended_at.clone().unwrap_or_default()),
        ("Runs".into(), crate::format::runs_line(p)),
        ("SHA256SUMS sha256".into(), p.manifest_sha256.clone()),
        ("Files in SHA256SUMS".into(), p.manifest_files.to_string()),
    ]);
    Table {
        id: "hardware",
        title: "Hardware and software".to_string(),
        caption: Prose::from("Where the traces of campaign ")
            .trace(&results.campaign)
            .own(" came from, as recorded in each run's meta.json."),
        columns: vec![Column::text("Item"), Column::text("Value")],
        rows: rows.into_iter().map(|(k, v)| vec![Cell::Text(k), Cell::Text(v)]).collect(),
        notes: Vec::new(),
        simulated: results.simulated,
    }
}

/// Which host (GPU, by its UUID) made which runs, with which version of the runner: one row
/// per host in the order the hosts were first used, then the runs that name no GPU.
pub(crate) fn hosts(results: &Results) -> Table {
    let mut order: Vec<Option<&str>> = Vec::new();
    let mut by: BTreeMap<Option<&str>, Vec<&colloc_analysis::RunResult>> = BTreeMap::new();
    let mut runs: Vec<&colloc_analysis::RunResult> = results.runs.iter().collect();
    runs.sort_by(|a, b| a.started_at.cmp(&b.started_at).then_with(|| a.run_id.cmp(&b.run_id)));
    for r in runs {
        let key = r.host_id.as_deref();
        if !by.contains_key(&key) {
            order.push(key);
        }
        by.entry(key).or_default().push(r);
    }
    // Runs that name no GPU (skipped or infeasible before any GPU was asked) go last.
    order.sort_by_key(|k| k.is_none());
    let data: BTreeMap<&str, &str> = results.workloads.iter().map(|w| (w.id.as_str(), w.data.as_str())).collect();
    let rows = order
        .iter()
        .map(|key| {
            let runs = &by[key];
            let ok = runs.iter().filter(|r| r.status == RunStatus::Ok).count();
            let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
            for r in runs {
                *statuses.entry(r.status.as_str().to_string()).or_default() += 1;
            }
            let status_text: Vec<String> = statuses.iter().map(|(s, n)| format!("{n} {s}")).collect();
            let mut by_data: BTreeMap<&str, usize> = BTreeMap::new();
            for r in runs.iter().filter(|r| r.status == RunStatus::Ok) {
                *by_data.entry(data.get(r.workload_id.as_str()).copied().unwrap_or_default()).or_default() += 1;
            }
            let data_text: Vec<String> = by_data.iter().map(|(d, n)| format!("{d} {n}")).collect();
            let workloads: BTreeSet<&str> =
                runs.iter().filter(|r| r.status == RunStatus::Ok).map(|r| r.workload_id.as_str()).collect();
            let alone = runs
                .iter()
                .filter(|r| r.status == RunStatus::Ok && r.mode_applied == "exclusive")
                .map(|r| r.workload_id.as_str())
                .collect::<BTreeSet<_>>()
                .len();
            let commits: BTreeSet<&str> = runs.iter().filter_map(|r| r.git_commit.as_deref()).collect();
            let mut cpu: Vec<f64> = runs.iter().filter_map(|r| r.host_cpu_single_thread_mib_s).collect();
            cpu.sort_by(f64::total_cmp);
            let first = runs.iter().map(|r| r.started_at.as_str()).min().unwrap_or_default();
            let last = runs.iter().map(|r| r.ended_at.as_str()).max().unwrap_or_default();
            vec![
                Cell::text(key.unwrap_or("none named")),
                Cell::text(format!("{ok} of {}", runs.len())),
                Cell::text(status_text.join(", ")),
                Cell::text(data_text.join(", ")),
                Cell::Value(Some(workloads.len() as f64)),
                Cell::Value(Some(alone as f64)),
                Cell::text(commits.into_iter().collect::<Vec<_>>().join(", ")),
                Cell::Value(if cpu.is_empty() { None } else { Some(cpu[cpu.len() / 2]) }),
                Cell::text(first),
                Cell::text(last),
            ]
        })
        .collect();
    Table {
        id: "hosts",
        title: "Hosts".to_string(),
        caption: Prose::from("The hosts that made campaign ")
            .trace(&results.campaign)
            .own("'s runs, each told apart by its GPU's UUID, in the order they were first used: their runs, the workloads measured on each, and the version of the runner that made them."),
        columns: vec![
            Column::text("GPU UUID"),
            Column::text("Ok runs"),
            Column::text("Runs by status"),
            Column::text("Ok runs by data"),
            Column::number("Workloads", Quantity::Count),
            Column::number("Models alone", Quantity::Count),
            Column::text("Runner commit"),
            Column::number("CPU, one thread (MiB/s)", Quantity::Count),
            Column::text("First run started"),
            Column::text("Last run ended"),
        ],
        rows,
        notes: vec![
            "Models alone: the baselines measured on the host (the workloads it ran in the exclusive mode); each collocated run is divided by its own host's (the baselines table).".into(),
            "CPU, one thread: the median over the host's runs of the runner's calibration (SHA-256 of 32 MiB, `host.calibration` in meta.json); — where no run recorded one.".into(),
        ],
        simulated: results.simulated,
    }
}
