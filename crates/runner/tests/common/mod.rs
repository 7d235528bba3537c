//! Plans, options and trace readers shared by the runner's tests.
#![allow(dead_code)]

use colloc_plan::{JobData, MpsLimits, Plan, PlannedJob, PlannedWorkload, ProtocolKind, RunProtocol, Totals, Training};
use colloc_runner::{ProgressMode, RunOptions, SimOptions};
use colloc_trace::events::{Event, EventBody};
use colloc_trace::jobfile::DataSource;
use colloc_trace::meta::RunMeta;
use colloc_trace::Mode;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub fn runner_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_colloc-runner"))
}

pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

pub fn job(model: &str) -> PlannedJob {
    PlannedJob {
        model: model.into(),
        model_class: "small".into(),
        dataset: "cifar10".into(),
        batch_size: 128,
        mig_profile: None,
        mig_class: None,
        mps_limits: None,
        mig_slice: None,
        data: JobData {
            source: DataSource::Synthetic,
            name: "cifar10".into(),
            path: None,
            image_size: 32,
            train_count: 50_000,
            val_count: 10_000,
            fraction: 1.0,
            format: "png".into(),
        },
        training: Training::paper(128),
    }
}

/// The shipped campaign's plan (the H200 with its GPU table's speeds and MIG slices).
fn h200_plan() -> &'static Plan {
    static PLAN: OnceLock<Plan> = OnceLock::new();
    PLAN.get_or_init(|| colloc_plan::plan_campaign(&project_root(), "h200-quick", None).expect("h200-quick plans"))
}

/// A job in a MIG slice of the H200, as the planner gives it.
pub fn mig_job(model: &str, profile: &str) -> PlannedJob {
    let mut j = job(model);
    j.mig_profile = Some(profile.into());
    j.mig_class = profile.split('.').next().map(str::to_string);
    j.mig_slice = h200_plan()
        .workloads
        .iter()
        .flat_map(|w| &w.jobs)
        .find_map(|j| j.mig_slice.clone().filter(|s| s.profile == profile));
    assert!(j.mig_slice.is_some(), "the H200 plan has no {profile} slice");
    j
}

pub fn limited_job(model: &str, pct: u32, mib: u64) -> PlannedJob {
    let mut j = job(model);
    j.mps_limits =
        Some(MpsLimits { active_thread_percentage: pct, pinned_mem_limit_mib: mib, stands_in_for: "3g.71gb".into() });
    j
}

pub fn workload(id: &str, mode: Mode, jobs: Vec<PlannedJob>) -> PlannedWorkload {
    PlannedWorkload {
        id: id.into(),
        experiment: 33,
        label: id.into(),
        mode,
        feasible: true,
        reason: None,
        repetitions: 1,
        data: "synthetic".into(),
        headline: false,
        timeline: false,
        form: Default::default(),
        radt: None,
        estimated_seconds: 60.0,
        jobs,
        protocol: None,
        interleaved: false,
    }
}

/// `w` with one repetition, estimated at `estimated_seconds` (for the time-budget tests).
pub fn once(mut w: PlannedWorkload, estimated_seconds: f64) -> PlannedWorkload {
    w.repetitions = 1;
    w.estimated_seconds = estimated_seconds;
    w
}

pub fn plan(workloads: Vec<PlannedWorkload>) -> Plan {
    let jobs = workloads.iter().map(|w| w.jobs.len()).sum();
    let runs = workloads.iter().map(|w| w.repetitions as usize).sum();
    Plan {
        plan_version: 1,
        campaign: Some("test".into()),
        gpu: h200_plan().gpu.clone(),
        protocol: RunProtocol {
            name: "quick".into(),
            kind: ProtocolKind::Window {
                warmup_steps: 10,
                window_seconds: 20.0,
                sample_every: 10,
                min_iterations: Some(20),
                precision_target: None,
                max_window_seconds: None,
            },
            timeout_seconds: 600.0,
        },
        totals: Totals {
            workloads: workloads.len(),
            jobs,
            infeasible: 0,
            runs,
            estimated_gpu_seconds: 60.0 * runs as f64,
            interleaved_runs: 0,
            interleaved_seconds: 0.0,
        },
        workloads,
        spec_hash: "0".repeat(64),
        interleave: None,
    }
}

/// [`plan`] under a quick protocol with noise-adaptive stopping: `precision_target` and
/// `max_window_seconds`.
pub fn precise_plan(workloads: Vec<PlannedWorkload>, target: f64, max_window: f64) -> Plan {
    let mut p = plan(workloads);
    if let ProtocolKind::Window { precision_target, max_window_seconds, .. } = &mut p.protocol.kind {
        (*precision_target, *max_window_seconds) = (Some(target), Some(max_window));
    }
    p.protocol.name = "precise".into();
    p
}

/// `p` with a quick protocol's window of `seconds` simulated seconds (at the time scale of
/// 0.01 of [`sim_options`], a hundredth of that in real seconds). For tests that need the
/// telemetry sampler to take samples while the jobs train: the default window of 20 s is
/// 0.2 s of real time, within which a sampler thread starved of CPU on a loaded machine may
/// take none.
pub fn with_window(mut p: Plan, seconds: f64) -> Plan {
    match &mut p.protocol.kind {
        ProtocolKind::Window { window_seconds, .. } => *window_seconds = seconds,
        ProtocolKind::Epochs { .. } => panic!("with_window needs a quick protocol"),
    }
    p
}

/// Options for a simulated campaign in `out` (quiet, fast).
pub fn sim_options(out: &Path) -> RunOptions {
    let mut o = RunOptions::new(out);
    o.simulate = Some(SimOptions { time_scale: 0.01, seed: 7, ..SimOptions::default() });
    o.job_command = vec![runner_bin().to_string_lossy().into_owned(), "fake-job".into()];
    o.progress = ProgressMode::Plain;
    // How long a job that was told to stop or abort is given to exit by itself before the
    // runner sends SIGTERM. The simulated jobs exit at once when told, so a passing test never
    // waits this out; it is long so that a job process starved of CPU on a loaded machine
    // (CI: two busy cores) still exits by itself with its own code rather than by a signal.
    o.kill_grace = Duration::from_secs(10);
    o.telemetry_hz = 20.0;
    o
}

pub fn write_plan(dir: &Path, p: &Plan) -> PathBuf {
    let path = dir.join("plan.json");
    std::fs::write(&path, serde_json::to_string_pretty(p).unwrap()).unwrap();
    path
}

pub fn meta(campaign: &Path, run_id: &str) -> RunMeta {
    let p = campaign.join("runs").join(run_id).join("meta.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

pub fn events(run_dir: &Path, job: usize) -> Vec<Event> {
    let p = run_dir.join(format!("job-{job}.events.jsonl"));
    colloc_trace::events::parse_log(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

pub fn first(events: &[Event], kind: &str) -> Option<f64> {
    events.iter().find(|e| e.body.kind() == kind).map(|e| e.mono)
}

/// Pids from the `hello` events of every job log under `dir` (recursively).
pub fn job_pids(dir: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(job_pids(&p));
        } else if p.to_string_lossy().ends_with(".events.jsonl") {
            for line in std::fs::read_to_string(&p).unwrap_or_default().lines() {
                if let Ok(Event { body: EventBody::Hello { pid, .. }, .. }) = serde_json::from_str::<Event>(line) {
                    out.push(pid);
                }
            }
        }
    }
    out
}

pub fn alive(pid: u32) -> bool {
    // A zombie is dead for our purposes.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

/// `sha256sum -c SHA256SUMS` in the campaign directory.
pub fn sha256sum_check(campaign: &Path) -> (bool, String) {
    let out = Command::new("sha256sum")
        .args(["--quiet", "-c", "SHA256SUMS"])
        .current_dir(campaign)
        .output()
        .expect("sha256sum runs");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Waits for `cond`, panicking with `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() > limit {
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `python3 workloads/validate_events.py` on logs; `None` when the script or Python is
/// missing.
pub fn validate_events(logs: &[PathBuf], partial: bool) -> Option<(bool, String)> {
    let script = project_root().join("workloads/validate_events.py");
    if !script.exists() {
        eprintln!("note: {} is absent; event logs not validated", script.display());
        return None;
    }
    let mut cmd = Command::new("python3");
    cmd.arg(&script);
    if partial {
        cmd.arg("--partial");
    }
    match cmd.args(logs).output() {
        Ok(out) => Some((
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )),
        Err(e) => {
            eprintln!("note: python3 cannot run ({e}); event logs not validated");
            None
        }
    }
}

pub fn logs_in(run_dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(run_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".events.jsonl"))
        .collect();
    v.sort();
    v
}
