//! Writes small, plausible campaigns in the trace format, for tests: workloads of the
//! project's own `h200-quick` plan, made by the real planner (all of it, or a subset), with
//! speeds, memory and out-of-memory outcomes from the one speed/memory model
//! (`colloc_plan::perf`) and self-consistent events, telemetry and processes around them.
//! Every campaign written here is marked simulated. Output is a function of the options and
//! the project's spec alone (no clock, no randomness), so two campaigns written alike are
//! byte-identical.

use anyhow::{anyhow, Context, Result};
use colloc_plan::perf::{self, JobModel, GIB};
use colloc_plan::{Plan, PlannedWorkload, ProtocolKind, WorkloadForm};
use colloc_trace::events::{EndReason, ErrorKind, Event, EventBody};
use colloc_trace::jobfile::DataSource;
use colloc_trace::meta::{
    CpuCalibration, GpuInfo, HostInfo, JobRecord, MigInfo, MigInstance, MpsInfo, RunMeta, RunStatus, SoftwareInfo,
    TelemetryInfo,
};
use colloc_trace::Mode;
use colloc_trace::{ids, layout, manifest};
use flate2::write::GzEncoder;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What to put in a fixture campaign.
#[derive(Debug, Clone)]
pub struct FixtureOptions {
    pub name: String,
    /// Of every workload (the plan's own repetitions are replaced).
    pub repetitions: u32,
    /// `false`: MIG runs are `skipped` (MIG could not be enabled) and `mps-limited` stands in.
    pub mig_available: bool,
    /// The whole plan (three models, fourteen mixes: about 240 runs with 2 repetitions)
    /// instead of a subset.
    pub full: bool,
    /// Length of each run's measurement window, in seconds.
    pub window_seconds: u32,
    /// Telemetry and process samples per second (the runner's `--telemetry-hz`).
    pub sample_hz: u32,
    /// The job protocol of the traces: 1 (samples, each job's own window) or 2 (per-iteration
    /// times, one common window `[release, window_end_mono]`).
    pub protocol_version: u32,
    /// The hosts the runs are spread over (each a GPU UUID of its own): run `r` of a
    /// workload goes to host `(hash(workload id) + r) mod hosts`, where every job trains at
    /// `1 − 0.1 · host` times the model's speed. With more than one host, each carries a CPU
    /// calibration.
    pub hosts: u32,
    /// Protocol 2: how long the iterations take.
    pub iterations: IterationPattern,
    /// The project whose plan the fixture takes its workloads from; `None`: the one
    /// `colloc_spec::names::project_root` finds ($COLLOC_ROOT, or from the working directory up).
    pub project: Option<PathBuf>,
}

/// The duration of each iteration of a protocol-2 fixture job (128 images each).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IterationPattern {
    /// The model's step time with 2% deterministic jitter; the first iteration ends a
    /// millisecond or so after its step time.
    Jittered,
    /// Exactly the model's step time, from the release on.
    Regular,
    /// `short_seconds`, `long_seconds`, `short_seconds`, ... from the release on, whatever
    /// the model.
    Alternating { short_seconds: f64, long_seconds: f64 },
}

impl Default for FixtureOptions {
    fn default() -> Self {
        FixtureOptions {
            name: "fixture".into(),
            repetitions: 2,
            mig_available: false,
            full: false,
            window_seconds: 12,
            sample_hz: 1,
            protocol_version: 1,
            hosts: 1,
            iterations: IterationPattern::Jittered,
            project: None,
        }
    }
}

/// The project campaign whose plan the fixtures take their workloads from.
const CAMPAIGN: &str = "h200-quick";

/// The mixes of the subset.
const SUBSET_MIXES: &[&str] = &["M+S", "L+S", "L+M", "L+M+S", "L+M+2S", "L+2M"];

/// The project of `opts`, loaded.
fn project(opts: &FixtureOptions) -> Result<colloc_spec::Project> {
    let root = match &opts.project {
        Some(root) => root.clone(),
        None => colloc_spec::names::project_root()?,
    };
    Ok(colloc_spec::load_project(&root)?)
}

/// The fixture campaign's plan: the real planner's plan of the project's `h200-quick`
/// campaign, named `opts.name`, with `opts.repetitions` of every workload. Without
/// `opts.full`, a subset: the small and large models' matrix with synthetic data, the
/// medium model alone, resnet26 alone and seven times (naive, MPS) with generated data, the
/// large class alone, and six of the mixes.
pub fn plan(opts: &FixtureOptions) -> Result<Plan> {
    let project = project(opts)?;
    let mut plan = colloc_plan::plan_project_campaign(&project, CAMPAIGN, None)?;
    plan.campaign = Some(opts.name.clone());
    plan.workloads.retain(|w| opts.full || in_subset(w));
    for w in &mut plan.workloads {
        w.repetitions = opts.repetitions;
    }
    let t = &mut plan.totals;
    t.workloads = plan.workloads.len();
    t.jobs = plan.workloads.iter().map(|w| w.jobs.len()).sum();
    t.infeasible = plan.workloads.iter().filter(|w| !w.feasible).count();
    t.runs = t.workloads * opts.repetitions as usize;
    t.estimated_gpu_seconds = plan.workloads.iter().map(|w| w.estimated_seconds * w.repetitions as f64).sum();
    Ok(plan)
}

fn in_subset(w: &PlannedWorkload) -> bool {
    let generated = w.jobs.iter().all(|j| j.data.source == DataSource::Generated);
    let classes = |c: &[&str]| w.jobs.iter().all(|j| c.contains(&j.model_class.as_str()));
    match &w.form {
        WorkloadForm::Mix { .. } => SUBSET_MIXES.contains(&w.label.as_str()),
        _ if generated => match w.jobs.len() {
            1 => w.mode == Mode::Exclusive,
            7 => matches!(w.mode, Mode::Naive | Mode::Mps),
            _ => false,
        },
        _ if w.mode == Mode::Exclusive => true,
        _ => w.experiment == 33 && classes(&["small", "large"]),
    }
}

/// Writes the campaign under `root/<name>` (replacing nothing: the directory must not
/// exist) with its `SHA256SUMS`, and returns its path.
pub fn write_campaign(root: &Path, opts: &FixtureOptions) -> Result<PathBuf> {
    let dir = root.join(&opts.name);
    anyhow::ensure!(!dir.exists(), "{} exists already", dir.display());
    let plan = plan(opts)?;
    let gpu = Gpu::of(&plan, opts)?;
    std::fs::create_dir_all(dir.join(layout::RUNS_DIR))?;
    let mut clock = 1000.0_f64;
    for w in &plan.workloads {
        for rep in 1..=w.repetitions {
            write_run(&dir, opts, &plan, &gpu, w, rep, &mut clock)
                .with_context(|| format!("fixture run {}.r{rep}", w.id))?;
        }
    }
    manifest::add_dir(&dir, layout::RUNS_DIR)?;
    Ok(dir)
}

/// The GPU as NVML would describe it, from the plan's target and its GPU table.
struct Gpu {
    /// `NVIDIA H200`: what NVML reports (the table's first NVML name).
    nvml_name: String,
    memory_bytes: u64,
    sms: u32,
    power_limit_w: f64,
}

impl Gpu {
    fn of(plan: &Plan, opts: &FixtureOptions) -> Result<Gpu> {
        let project = project(opts)?;
        let table = project.gpus.get(&plan.gpu.key).ok_or_else(|| anyhow!("no GPU table {}", plan.gpu.key))?;
        let nvml = table.nvml_names.first().ok_or_else(|| anyhow!("GPU table {} has no NVML name", table.key))?;
        Ok(Gpu {
            nvml_name: format!("NVIDIA {nvml}"),
            memory_bytes: (plan.gpu.memory_gib * GIB) as u64,
            sms: plan.gpu.sms,
            power_limit_w: plan.gpu.power_limit_watts,
        })
    }
}

/// Deterministic noise in [-1, 1] from a few integers.
fn noise(parts: &[u64]) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        h ^= *p;
        h = h.wrapping_mul(0x0100_0000_01b3);
        h ^= h >> 29;
    }
    (h % 20_001) as f64 / 10_000.0 - 1.0
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
}

fn gz(text: &str) -> Result<Vec<u8>> {
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes())?;
    Ok(e.finish()?)
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

/// `2025-01-01T00:16:40Z` for a fixture clock in seconds.
fn timestamp(clock: f64) -> String {
    let s = clock as u64;
    format!("2025-01-01T{:02}:{:02}:{:02}Z", (s / 3600) % 24, (s / 60) % 60, s % 60)
}

/// How many runs of the campaign `opts` describes end `ok` (those with telemetry).
pub fn ok_runs(opts: &FixtureOptions) -> Result<usize> {
    let plan = plan(opts)?;
    Ok(plan
        .workloads
        .iter()
        .filter(|w| outcome(opts, w, &perf::model_workload(&plan.gpu, w).jobs).0 == RunStatus::Ok)
        .count()
        * opts.repetitions as usize)
}

/// The run's outcome: infeasible, skipped (MIG unavailable), failed (out of memory) or ok.
fn outcome(opts: &FixtureOptions, w: &PlannedWorkload, sims: &[JobModel]) -> (RunStatus, Option<String>) {
    if !w.feasible {
        return (RunStatus::Infeasible, w.reason.clone());
    }
    if w.mode == Mode::Mig && !opts.mig_available {
        let why = "MIG mode could not be enabled on GPU 0: insufficient permissions";
        return (RunStatus::Skipped, Some(why.to_string()));
    }
    match sims.iter().enumerate().find_map(|(i, s)| s.oom.as_ref().map(|m| (i, m))) {
        Some((i, message)) => {
            let model = &w.jobs[i].model;
            (RunStatus::Failed, Some(format!("job {i} ({model}) ended before it was ready: out of memory: {message}")))
        }
        None => (RunStatus::Ok, None),
    }
}

/// One job's event log: hello and versions, then either its out-of-memory end or its
/// window of 1 Hz samples at the modelled speed.
/// Protocol 2 after the release: iterations of `batch` images at the model's speed with 2%
/// jitter, reported about every second, `window_met`, and training on until just past the
/// stop at `t0 + window_seconds` (the runner's `window_end_mono`).
fn iteration_events(
    opts: &FixtureOptions,
    s: &JobModel,
    i: usize,
    seed: u64,
    t0: f64,
    ev: &dyn Fn(f64, EventBody) -> Event,
    events: &mut Vec<Event>,
) {
    let batch = 128u64;
    let stop = t0 + opts.window_seconds as f64;
    let base0 = match opts.iterations {
        IterationPattern::Jittered => t0 + 0.001 * (1 + i) as f64,
        _ => t0,
    };
    events.push(ev(base0, EventBody::WindowStart { step: 0 }));
    let step_time = batch as f64 / s.images_per_second.max(1.0);
    let (mut end, mut step, mut met) = (base0, 0u64, false);
    let (mut first, mut base, mut ends, mut last_chunk) = (0u64, base0, Vec::new(), base0);
    let flush = |ends: &mut Vec<f64>, first: &mut u64, base: &mut f64, at: f64, events: &mut Vec<Event>| {
        if ends.is_empty() {
            return;
        }
        let n = ends.len();
        events.push(ev(
            at,
            EventBody::Iterations {
                first_step: *first,
                base_mono: *base,
                end_us: ends.iter().map(|e: &f64| ((e - *base) * 1e6).round() as u64).collect(),
                images: vec![batch; n],
                data_wait_us: vec![(s.data_wait_fraction * step_time * 1e6).round() as u64; n],
            },
        ));
        *first += n as u64;
        *base = ends[n - 1];
        ends.clear();
    };
    loop {
        end += match opts.iterations {
            IterationPattern::Jittered => step_time * (1.0 + 0.02 * noise(&[seed, i as u64, step, 3])),
            IterationPattern::Regular => step_time,
            IterationPattern::Alternating { short_seconds, long_seconds } => {
                if step % 2 == 0 {
                    short_seconds
                } else {
                    long_seconds
                }
            }
        };
        step += 1;
        ends.push(end);
        if !met && end - t0 >= opts.window_seconds as f64 - 0.5 {
            met = true;
            events
                .push(ev(end, EventBody::WindowMet { step, seconds: end - base0, ci_rel: None, precision_met: None }));
        }
        if end >= stop {
            break;
        }
        if end - last_chunk >= 1.0 {
            flush(&mut ends, &mut first, &mut base, end, events);
            last_chunk = end;
        }
    }
    flush(&mut ends, &mut first, &mut base, end, events);
    let mem = s.memory_bytes as f64;
    events.push(ev(
        end,
        EventBody::Memory {
            allocated_bytes: (mem * 0.8) as u64,
            reserved_bytes: (mem * 0.9) as u64,
            peak_allocated_bytes: (mem * 0.85) as u64,
            peak_reserved_bytes: (mem * 0.95) as u64,
        },
    ));
    events.push(ev(end, EventBody::WindowEnd { step, images: step * batch, seconds: end - base0 }));
    events.push(ev(end, EventBody::End { reason: EndReason::WindowDone, exit_code: 0 }));
}

fn job_events(opts: &FixtureOptions, gpu: &Gpu, s: &JobModel, i: usize, seed: u64, t0: f64, wall0: f64) -> Vec<Event> {
    let mut events = Vec::new();
    let ev = |mono: f64, body: EventBody| Event { mono, wall: mono - t0 + wall0, job: i as u32, body };
    events.push(ev(
        t0 - 4.0,
        EventBody::Hello { pid: 1000 + i as u32, protocol_version: opts.protocol_version, simulated: true },
    ));
    events.push(ev(
        t0 - 4.0,
        EventBody::Versions {
            python: "3.10.12".into(),
            torch: Some("2.3.1".into()),
            timm: Some("0.9.5".into()),
            cuda: Some("12.1".into()),
            cudnn: Some("8902".into()),
            device: Some(gpu.nvml_name.clone()),
        },
    ));
    if let Some(message) = &s.oom {
        events.push(ev(t0 - 2.0, EventBody::Error { kind: ErrorKind::Oom, message: message.clone() }));
        events.push(ev(t0 - 2.0, EventBody::End { reason: EndReason::Oom, exit_code: 4 }));
        return events;
    }
    events.push(ev(t0 - 1.0, EventBody::Ready { setup_seconds: 2.0, warmup_seconds: 1.0, warmup_steps: 20 }));
    events.push(ev(t0, EventBody::Release));
    if opts.protocol_version >= 2 {
        iteration_events(opts, s, i, seed, t0, &ev, &mut events);
        return events;
    }
    let start = t0 + 0.2 + 0.1 * i as f64;
    events.push(ev(start, EventBody::WindowStart { step: 1 }));
    let mut t = start;
    let mut step = 1;
    let mut total = 0u64;
    for k in 0..opts.window_seconds as u64 {
        let secs = 1.0 + 0.02 * noise(&[seed, i as u64, k, 1]);
        let tp = s.images_per_second * (1.0 + 0.02 * noise(&[seed, i as u64, k, 2]));
        let images = (tp * secs).round() as u64;
        t += secs;
        step += (images / 128).max(1);
        total += images;
        events.push(ev(
            t,
            EventBody::Sample {
                step,
                images,
                seconds: secs,
                data_wait_seconds: s.data_wait_fraction * secs,
                slow_data_steps: if s.data_wait_fraction > 0.1 { 3 } else { 0 },
                loss: 6.9 - 0.01 * k as f64,
            },
        ));
    }
    let mem = s.memory_bytes as f64;
    events.push(ev(
        t,
        EventBody::Memory {
            allocated_bytes: (mem * 0.8) as u64,
            reserved_bytes: (mem * 0.9) as u64,
            peak_allocated_bytes: (mem * 0.85) as u64,
            peak_reserved_bytes: (mem * 0.95) as u64,
        },
    ));
    events.push(ev(t, EventBody::WindowEnd { step, images: total, seconds: t - start }));
    events.push(ev(t, EventBody::End { reason: EndReason::WindowDone, exit_code: 0 }));
    events
}

fn write_run(
    dir: &Path,
    opts: &FixtureOptions,
    plan: &Plan,
    gpu: &Gpu,
    w: &PlannedWorkload,
    rep: u32,
    clock: &mut f64,
) -> Result<()> {
    let run_id = ids::run_id(&w.id, rep, 1);
    let run_dir = dir.join(layout::RUNS_DIR).join(&run_id);
    std::fs::create_dir_all(&run_dir)?;
    let seed = hash(&run_id);
    let host = if opts.hosts > 1 { (hash(&w.id).wrapping_add(rep as u64) % opts.hosts as u64) as u32 } else { 0 };
    let mut sims = perf::model_workload(&plan.gpu, w).jobs;
    for s in &mut sims {
        s.images_per_second *= 1.0 - 0.1 * host as f64;
    }
    let (status, reason) = outcome(opts, w, &sims);
    let ran = matches!(status, RunStatus::Ok | RunStatus::Failed);
    let t0 = *clock + 5.0;
    let window = opts.window_seconds as f64;
    let wall0 = 1_735_689_600.0 + *clock;
    let mut jobs = Vec::new();
    if ran {
        for (i, s) in sims.iter().enumerate() {
            let mut text = String::new();
            for e in job_events(opts, gpu, s, i, seed, t0, wall0) {
                text.push_str(&serde_json::to_string(&e)?);
                text.push('\n');
            }
            std::fs::write(run_dir.join(layout::job_events(i)), text)?;
            std::fs::write(
                run_dir.join(layout::job_stderr(i)),
                if s.oom.is_some() { "RuntimeError: CUDA out of memory\n" } else { "" },
            )?;
            jobs.push(job_record(i, s, wall0, window));
        }
    }
    if status == RunStatus::Ok {
        write_telemetry(&run_dir, gpu, w, &sims, (t0, window, wall0), opts.sample_hz.max(1), seed)?;
    }
    let (mig, mps) = mode_info(w, status);
    let started = timestamp(*clock);
    *clock += if ran { window + 10.0 } else { 1.0 };
    let ended = timestamp(*clock);
    let mut protocol = plan.protocol.clone();
    if let ProtocolKind::Window { window_seconds, .. } = &mut protocol.kind {
        *window_seconds = window;
    }
    let meta = RunMeta {
        format_version: colloc_trace::FORMAT_VERSION,
        run_id: run_id.clone(),
        campaign: opts.name.clone(),
        workload_id: w.id.clone(),
        experiment: w.experiment,
        repetition: rep,
        attempt: 1,
        status,
        reason,
        mode: w.mode,
        simulated: true,
        workload: serde_json::to_value(w)?,
        protocol,
        gpu: Some(gpu_info(gpu, w, opts, host)),
        mps,
        mig,
        host: sim_host(opts, host, &started),
        software: SoftwareInfo {
            runner_version: "0.1.0".into(),
            git_commit: Some("0000000".into()),
            git_dirty: Some(false),
            plan_hash: "f".repeat(64),
            spec_hash: Some(plan.spec_hash.clone()),
            runner_sha256: None,
            workload_files: BTreeMap::new(),
            environment: None,
        },
        telemetry: TelemetryInfo {
            rate_hz: opts.sample_hz.max(1) as f64,
            samples: if status == RunStatus::Ok { telemetry_samples(opts) } else { 0 },
            source: "simulated".into(),
            unavailable: if w.mode == Mode::Mig {
                BTreeMap::from([(
                    "sm_activity_pct".to_string(),
                    "whole-GPU GPM metrics are not available in MIG mode".to_string(),
                )])
            } else {
                BTreeMap::new()
            },
            sampler_cpu_seconds: None,
            foreign_processes: Vec::new(),
        },
        jobs,
        started_at: started,
        ended_at: ended,
        release_mono: ran.then_some(t0),
        window_end_mono: (ran && opts.protocol_version >= 2).then_some(t0 + opts.window_seconds as f64),
        phases: None,
        added: None,
        settled: None,
        invocation: None,
    };
    std::fs::write(run_dir.join(layout::META), serde_json::to_string_pretty(&meta)? + "\n")?;
    Ok(())
}

/// The simulated host `host` of the fixture: a CPU score per host when there are several.
fn sim_host(opts: &FixtureOptions, host: u32, started: &str) -> HostInfo {
    HostInfo {
        hostname: Some("sim-host".into()),
        cpu_model: Some(format!("Simulated {}-core CPU", perf::HOST_CORES)),
        cpu_cores: Some(perf::HOST_CORES as u32),
        memory_total_bytes: Some(128 * 1024 * 1024 * 1024),
        kernel: Some("6.1.0".into()),
        os: Some("Debian GNU/Linux 12".into()),
        calibration: (opts.hosts > 1).then(|| CpuCalibration {
            method: "sha256 of 64 MiB, best of 3".into(),
            single_thread_mib_s: 1000.0 - 100.0 * host as f64,
            all_threads_mib_s: (1000.0 - 100.0 * host as f64) * perf::HOST_CORES,
            threads: perf::HOST_CORES as u32,
            seconds: 2.0,
            measured_at: started.to_string(),
        }),
    }
}

fn job_record(i: usize, s: &JobModel, wall0: f64, window: f64) -> JobRecord {
    JobRecord {
        index: i as u32,
        command: vec!["python".into(), "workloads/train.py".into(), "--job-file".into(), layout::job_file(i)],
        env: BTreeMap::from([("CUDA_VISIBLE_DEVICES".to_string(), "0".to_string())]),
        pid: Some(1000 + i as u32),
        exit_code: Some(if s.oom.is_some() { 4 } else { 0 }),
        signal: None,
        device: Some("GPU-00000000-0000-0000-0000-000000000000".into()),
        versions: Some(
            serde_json::json!({"python": "3.10.12", "torch": "2.3.1", "timm": "0.9.5", "cuda": "12.1", "cudnn": "8902"}),
        ),
        started_wall: Some(wall0 - 4.0),
        ended_wall: Some(wall0 + window),
        failure: s.oom.as_ref().map(|_| "out of memory".to_string()),
    }
}

/// The MIG instances of a MIG run that ran, and the MPS daemon of an MPS run.
fn mode_info(w: &PlannedWorkload, status: RunStatus) -> (Option<MigInfo>, Option<MpsInfo>) {
    let mig = (w.mode == Mode::Mig && status == RunStatus::Ok).then(|| MigInfo {
        instances: w
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| MigInstance {
                job: i as u32,
                profile: j.mig_profile.clone().unwrap_or_default(),
                gpu_instance_id: 1 + i as u32,
                compute_instance_id: 0,
                device_uuid: format!("MIG-{i:08}"),
            })
            .collect(),
        torn_down: true,
    });
    let mps = matches!(w.mode, Mode::Mps | Mode::MpsLimited).then(|| MpsInfo {
        daemon_started: true,
        pipe_directory: "/tmp/mps-pipe".into(),
        log_directory: "/tmp/mps-log".into(),
        active_thread_percentage: w
            .jobs
            .iter()
            .map(|j| j.mps_limits.as_ref().map(|l| l.active_thread_percentage))
            .collect(),
        pinned_mem_limit_mib: w.jobs.iter().map(|j| j.mps_limits.as_ref().map(|l| l.pinned_mem_limit_mib)).collect(),
        clients: None,
    });
    (mig, mps)
}

/// The fixture GPU of `host`: `GPU-00000000-…` for host 0, `GPU-00000001-…` for host 1, ...
pub fn host_uuid(host: u32) -> String {
    format!("GPU-{host:08x}-0000-0000-0000-000000000000")
}

fn gpu_info(gpu: &Gpu, w: &PlannedWorkload, opts: &FixtureOptions, host: u32) -> GpuInfo {
    GpuInfo {
        index: 0,
        name: gpu.nvml_name.clone(),
        uuid: host_uuid(host),
        driver_version: Some("570.124.06".into()),
        cuda_version: Some("12.8".into()),
        nvml_version: Some("12.570.124.06".into()),
        architecture: Some("Hopper".into()),
        memory_total_bytes: Some(gpu.memory_bytes),
        sm_count: Some(gpu.sms),
        mig_mode_current: Some(w.mode == Mode::Mig && opts.mig_available),
        mig_mode_pending: Some(false),
        compute_mode: Some("Default".into()),
        persistence_mode: Some(true),
        power_limit_watts: Some(gpu.power_limit_w),
        clocks_max_mhz: BTreeMap::from([("sm".to_string(), 1980)]),
        clocks_applied_mhz: BTreeMap::from([("sm".to_string(), 1980)]),
    }
}

/// The whole-GPU samples of an ok run: `sample_hz` a second from a second before the window
/// to three seconds after its start plus its length.
pub fn telemetry_samples(opts: &FixtureOptions) -> u64 {
    (opts.window_seconds as u64 + 4) * opts.sample_hz.max(1) as u64
}

/// Whole-GPU samples at `hz` from a second before the window to after it (plus one row per
/// MIG instance under MIG), and each job's process samples. `clock`: the release, the
/// window's length and the wall clock at the release.
fn write_telemetry(
    run_dir: &Path,
    gpu: &Gpu,
    w: &PlannedWorkload,
    sims: &[JobModel],
    clock: (f64, f64, f64),
    hz: u32,
    seed: u64,
) -> Result<()> {
    let (t0, window, wall0) = clock;
    let mig = w.mode == Mode::Mig;
    let mut tel = colloc_trace::telemetry::GPU_COLUMNS.join(",") + "\n";
    let mut procs = colloc_trace::telemetry::PROCESS_COLUMNS.join(",") + "\n";
    let busy: f64 = sims.iter().map(|s| s.sm_activity).sum::<f64>().min(1.0);
    let mem_used: f64 = sims.iter().map(|s| s.memory_bytes as f64).sum::<f64>() + 0.5 * GIB;
    let mut energy = 5.0e6;
    let n = (window as u64 + 4) * hz as u64;
    for k in 0..n {
        let t = t0 - 1.0 + k as f64 / hz as f64;
        let active = t >= t0 && t <= t0 + window + 0.5;
        let b = if active { busy * (1.0 + 0.03 * noise(&[seed, k, 7])) } else { 0.02 };
        let power = gpu.power_limit_w * (0.13 + 0.8 * b.min(1.0));
        energy += power / hz as f64;
        let sm = (100.0 * b).min(99.0);
        let wall = t - t0 + wall0;
        let used = if active { mem_used } else { 0.5 * GIB };
        let gpm = |v: f64| if mig { None } else { Some(v) };
        writeln!(
            tel,
            "{t:.3},{wall:.3},-1,{:.1},{energy:.1},{:.0},{:.0},{used:.0},{},1980,2619,45,0,{},{},{},{}",
            power,
            (b * 100.0 + 5.0).min(100.0),
            b * 60.0,
            gpu.memory_bytes,
            opt(gpm(sm)),
            opt(gpm(sm * 0.45)),
            opt(gpm(sm * 0.04)),
            opt(gpm(sm * 0.55)),
        )?;
        if mig {
            for (i, (s, j)) in sims.iter().zip(&w.jobs).enumerate() {
                let slice = j.mig_slice.as_ref().ok_or_else(|| anyhow!("job {i} has no MIG slice"))?;
                let share = slice.sms as f64 / gpu.sms as f64;
                let bi = if active { (s.sm_activity / share).min(1.0) } else { 0.02 };
                let smi = 100.0 * bi;
                writeln!(
                    tel,
                    "{t:.3},{wall:.3},{},,,,,{:.0},{},,,,,{:.3},{:.3},{:.3},{:.3}",
                    1 + i,
                    if active { s.memory_bytes as f64 + 0.1 * GIB } else { 0.1 * GIB },
                    slice.memory_bytes,
                    smi,
                    smi * 0.45,
                    smi * 0.04,
                    smi * 0.55,
                )?;
            }
        }
        for (i, s) in sims.iter().enumerate() {
            writeln!(
                procs,
                "{t:.3},{wall:.3},{i},{},{:.1},{},{:.0}",
                s.processes,
                if active { s.cpu_pct * (1.0 + 0.05 * noise(&[seed, k, i as u64, 9])) } else { 20.0 },
                s.rss_bytes,
                if active { s.memory_bytes as f64 + 0.5 * GIB } else { 0.5 * GIB },
            )?;
        }
    }
    std::fs::write(run_dir.join(layout::TELEMETRY), gz(&tel)?)?;
    std::fs::write(run_dir.join(layout::PROCESSES), gz(&procs)?)?;
    Ok(())
}
