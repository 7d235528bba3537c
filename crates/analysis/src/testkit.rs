//! Writes small, plausible campaigns in the trace format, for tests: a handful of the
//! paper's workloads with made-up but self-consistent throughput, telemetry and processes.
//! Every campaign written here is marked simulated. Output is a function of the options
//! alone (no clock, no randomness), so two campaigns written alike are byte-identical.

use anyhow::{Context, Result};
use colloc_plan::{MpsLimits, PlannedJob, PlannedWorkload};
use colloc_spec::Mode;
use colloc_trace::events::{EndReason, ErrorKind, Event, EventBody};
use colloc_trace::jobfile::{DataSource, JobData, Training};
use colloc_trace::meta::{
    GpuInfo, HostInfo, JobRecord, MigInfo, MigInstance, MpsInfo, RunMeta, RunStatus, SoftwareInfo, TelemetryInfo,
};
use colloc_trace::{layout, manifest};
use flate2::write::GzEncoder;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What to put in a fixture campaign.
#[derive(Debug, Clone)]
pub struct FixtureOptions {
    pub name: String,
    pub repetitions: u32,
    /// `false`: MIG runs are `skipped` (MIG could not be enabled) and `mps-limited` stands in.
    pub mig_available: bool,
    /// All three models and all fourteen mixes (about 150 runs with 2 repetitions) instead
    /// of a small subset.
    pub full: bool,
    /// Length of each run's measurement window, in seconds (1 Hz samples).
    pub window_seconds: u32,
}

impl Default for FixtureOptions {
    fn default() -> Self {
        FixtureOptions { name: "fixture".into(), repetitions: 2, mig_available: false, full: false, window_seconds: 12 }
    }
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const GPU_MEM: u64 = 150_754_820_096; // 140.4 GiB
const GPU_NAME: &str = "NVIDIA H200";

struct Model {
    name: &'static str,
    class: &'static str,
    dataset: &'static str,
    train_count: u64,
    /// Images/s alone at batch 128.
    base: f64,
    /// Share of the GPU the job keeps busy alone.
    busy: f64,
    mem_gib_b128: f64,
}

const S: Model = Model {
    name: "resnet26",
    class: "small",
    dataset: "cifar10",
    train_count: 50_000,
    base: 3200.0,
    busy: 0.35,
    mem_gib_b128: 4.2,
};
const M: Model = Model {
    name: "resnet50",
    class: "medium",
    dataset: "imagenet64",
    train_count: 1_281_167,
    base: 2100.0,
    busy: 0.75,
    mem_gib_b128: 11.0,
};
const L: Model = Model {
    name: "resnet152",
    class: "large",
    dataset: "imagenet",
    train_count: 1_281_167,
    base: 1000.0,
    busy: 0.95,
    mem_gib_b128: 23.0,
};

fn profile(class: &str) -> (&'static str, u32) {
    match class {
        "1g" => ("1g.18gb", 19),
        "2g" => ("2g.35gb", 14),
        "3g" => ("3g.71gb", 9),
        "4g" => ("4g.71gb", 5),
        _ => ("7g.141gb", 0),
    }
}

fn profile_mem_gib(class: &str) -> f64 {
    match class {
        "1g" => 16.0,
        "2g" => 32.5,
        "3g" | "4g" => 69.75,
        _ => 140.0,
    }
}

fn profile_sms(class: &str) -> f64 {
    match class {
        "1g" => 16.0,
        "2g" => 32.0,
        "3g" => 60.0,
        "4g" => 64.0,
        _ => 132.0,
    }
}

struct JobPlan {
    model: &'static Model,
    batch: u32,
    class: Option<&'static str>,
}

/// Writes the campaign under `root/<name>` (replacing nothing: the directory must not
/// exist) with its `SHA256SUMS`, and returns its path.
pub fn write_campaign(root: &Path, opts: &FixtureOptions) -> Result<PathBuf> {
    let dir = root.join(&opts.name);
    anyhow::ensure!(!dir.exists(), "{} exists already", dir.display());
    std::fs::create_dir_all(dir.join(layout::RUNS_DIR))?;
    let mut clock = 1000.0_f64;
    for w in workloads(opts) {
        for rep in 1..=opts.repetitions {
            write_run(&dir, opts, &w, rep, &mut clock).with_context(|| format!("fixture run {}.r{rep}", w.id))?;
        }
    }
    manifest::add_dir(&dir, layout::RUNS_DIR)?;
    Ok(dir)
}

/// The fixture campaign's plan: the workloads [`write_campaign`] makes runs of, with its
/// repetitions.
pub fn planned_workloads(opts: &FixtureOptions) -> Vec<PlannedWorkload> {
    workloads(opts).into_iter().map(|w| PlannedWorkload { repetitions: opts.repetitions, ..w }).collect()
}

fn workloads(opts: &FixtureOptions) -> Vec<PlannedWorkload> {
    let mut out = Vec::new();
    let homogeneous: Vec<&'static Model> = if opts.full { vec![&S, &M, &L] } else { vec![&S, &L] };
    let layouts: [(usize, &str); 4] = [(1, "7g"), (2, "3g"), (3, "2g"), (7, "1g")];
    for m in &homogeneous {
        let one = |class| vec![JobPlan { model: m, batch: 128, class }];
        out.push(workload(33, Mode::Exclusive, "synthetic", one(None)));
        out.push(workload(33, Mode::Mps, "synthetic", one(None)));
        out.push(workload(33, Mode::Mig, "synthetic", one(Some("4g"))));
        for (n, class) in layouts {
            let jobs = |class| (0..n).map(|_| JobPlan { model: m, batch: 128, class }).collect::<Vec<_>>();
            if n > 1 {
                out.push(workload(33, Mode::Naive, "synthetic", jobs(None)));
                out.push(workload(33, Mode::Mps, "synthetic", jobs(None)));
            }
            out.push(workload(33, Mode::Mig, "synthetic", jobs(Some(class))));
            out.push(workload(33, Mode::MpsLimited, "synthetic", jobs(Some(class))));
        }
    }
    // Data loading: resnet26 from generated image files.
    for (mode, n) in [(Mode::Exclusive, 1), (Mode::Naive, 7), (Mode::Mps, 7)] {
        out.push(workload(
            33,
            mode,
            "generated",
            (0..n).map(|_| JobPlan { model: &S, batch: 128, class: None }).collect(),
        ));
    }
    // Heterogeneous mixes: S and M at batch 128, L at batch 32, alone first.
    if !opts.full {
        out.push(workload(37, Mode::Exclusive, "synthetic", vec![JobPlan { model: &M, batch: 128, class: None }]));
    }
    out.push(workload(37, Mode::Exclusive, "synthetic", vec![JobPlan { model: &L, batch: 32, class: None }]));
    let mixes: &[&str] = if opts.full {
        &[
            "M+S", "M+2S", "2M+S", "M+3S", "2M+2S", "3M+S", "L+S", "L+2S", "L+3S", "L+M", "L+M+S", "L+2M", "L+M+2S",
            "L+M+3S",
        ]
    } else {
        &["M+S", "L+S", "L+M", "L+M+S", "L+M+2S", "L+2M"]
    };
    for mix in mixes {
        let jobs = |mig: bool| -> Vec<JobPlan> {
            let mut v = Vec::new();
            for part in mix.split('+') {
                let (n, c) = part.split_at(part.len() - 1);
                let n: usize = if n.is_empty() { 1 } else { n.parse().unwrap_or(1) };
                let (model, batch, class): (&'static Model, u32, &'static str) = match c {
                    "S" => (&S, 128, "1g"),
                    "M" => (&M, 128, "2g"),
                    _ => (&L, 32, "4g"),
                };
                for _ in 0..n {
                    v.push(JobPlan { model, batch, class: mig.then_some(class) });
                }
            }
            v
        };
        for mode in [Mode::Naive, Mode::Mps, Mode::Mig] {
            let mut w = workload(37, mode, "synthetic", jobs(mode == Mode::Mig));
            w.label = mix.to_string();
            w.id = format!("e37-{mix}-{mode}");
            out.push(w);
        }
    }
    out
}

fn workload(experiment: u32, mode: Mode, data: &str, jobs: Vec<JobPlan>) -> PlannedWorkload {
    let n = jobs.len();
    let model = jobs[0].model.name;
    let label = if n == 1 { model.to_string() } else { format!("{n} × {model}") };
    let slices: u32 =
        jobs.iter().filter_map(|j| j.class).map(|c| c.trim_end_matches('g').parse::<u32>().unwrap_or(7)).sum();
    let feasible = mode != Mode::Mig || slices <= 7;
    let layout_tag =
        jobs.first().and_then(|j| j.class).filter(|_| n == 1 && matches!(mode, Mode::Mig | Mode::MpsLimited));
    let mut id = format!("e{experiment}-{model}-x{n}-{mode}");
    if let Some(c) = layout_tag {
        id.push_str(&format!("-{c}"));
    }
    if data != "synthetic" {
        id.push_str(&format!("@{data}"));
    }
    PlannedWorkload {
        id,
        experiment,
        label,
        mode,
        feasible,
        reason: (!feasible).then(|| format!("needs {slices} of the GPU's 7 compute slices")),
        repetitions: 2,
        data: data.to_string(),
        headline: n == 7 && model == "resnet26",
        timeline: n == 7 && model == "resnet26",
        form: Default::default(),
        radt: None,
        estimated_seconds: 60.0,
        jobs: jobs.iter().map(|j| planned_job(j, mode, data)).collect(),
    }
}

fn planned_job(j: &JobPlan, mode: Mode, data: &str) -> PlannedJob {
    let class = j.class.filter(|_| matches!(mode, Mode::Mig | Mode::MpsLimited));
    PlannedJob {
        model: j.model.name.to_string(),
        model_class: j.model.class.to_string(),
        dataset: j.model.dataset.to_string(),
        batch_size: j.batch,
        mig_profile: class.filter(|_| mode == Mode::Mig).map(|c| profile(c).0.to_string()),
        mig_class: class.map(str::to_string),
        mps_limits: class.filter(|_| mode == Mode::MpsLimited).map(|c| MpsLimits {
            active_thread_percentage: (profile_sms(c) / 132.0 * 100.0).round() as u32,
            pinned_mem_limit_mib: (profile_mem_gib(c) * 1024.0) as u64,
            stands_in_for: profile(c).0.to_string(),
        }),
        mig_slice: None,
        data: JobData {
            source: if data == "generated" { DataSource::Generated } else { DataSource::Synthetic },
            name: j.model.dataset.to_string(),
            path: None,
            image_size: if j.model.dataset == "cifar10" { 32 } else { 64 },
            train_count: j.model.train_count,
            val_count: 10_000,
            fraction: 1.0,
            format: "png".into(),
        },
        training: Training::paper(j.batch),
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

struct JobModel {
    throughput: f64,
    data_wait: f64,
    busy: f64,
    mem_bytes: f64,
    cpu_pct: f64,
    oom: bool,
}

fn simulate(w: &PlannedWorkload) -> Vec<JobModel> {
    let models: Vec<&Model> = w
        .jobs
        .iter()
        .map(|j| match j.model.as_str() {
            "resnet26" => &S,
            "resnet50" => &M,
            _ => &L,
        })
        .collect();
    let generated = w.data == "generated";
    let demand: f64 = models.iter().map(|m| m.busy).sum();
    let total_mem: f64 = w.jobs.iter().zip(&models).map(|(j, m)| mem_gib(m, j.batch_size)).sum();
    w.jobs
        .iter()
        .zip(&models)
        .map(|(j, m)| {
            let batch_scale = if j.batch_size == 128 { 1.0 } else { 0.8 };
            let alone = m.base * batch_scale * if generated { 0.55 } else { 1.0 };
            let n = w.jobs.len() as f64;
            let share = match w.mode {
                Mode::Exclusive => 1.0,
                Mode::Naive => (0.92 / demand).min(1.0) * (1.0 - 0.015 * (n - 1.0)),
                Mode::Mps => (1.05 / demand).min(1.0) * (1.0 - 0.01 * (n - 1.0)),
                Mode::Mig | Mode::MpsLimited => {
                    let c = j.mig_class.as_deref().unwrap_or("7g");
                    let s = (profile_sms(c) / 132.0 / m.busy).min(1.0);
                    if w.mode == Mode::Mig {
                        s
                    } else {
                        s * 0.95 * (1.0 - 0.01 * (n - 1.0))
                    }
                }
            };
            let mem = mem_gib(m, j.batch_size);
            let limit = match w.mode {
                Mode::Mig | Mode::MpsLimited => profile_mem_gib(j.mig_class.as_deref().unwrap_or("7g")),
                _ => GPU_MEM as f64 / GIB,
            };
            let oom = mem > limit || (matches!(w.mode, Mode::Naive | Mode::Mps) && total_mem > GPU_MEM as f64 / GIB);
            JobModel {
                throughput: alone * share,
                data_wait: if generated { 0.3 + 0.1 * (n - 1.0) / 6.0 } else { 0.01 },
                busy: m.busy * share,
                mem_bytes: mem * GIB,
                cpu_pct: if generated { 390.0 } else { 105.0 },
                oom,
            }
        })
        .collect()
}

fn mem_gib(m: &Model, batch: u32) -> f64 {
    m.mem_gib_b128 * (0.3 + 0.7 * batch as f64 / 128.0)
}

fn gz(text: &str) -> Result<Vec<u8>> {
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes())?;
    Ok(e.finish()?)
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

fn write_run(dir: &Path, opts: &FixtureOptions, w: &PlannedWorkload, rep: u32, clock: &mut f64) -> Result<()> {
    let run_id = layout::run_id(&w.id, rep, 1);
    let run_dir = dir.join(layout::RUNS_DIR).join(&run_id);
    std::fs::create_dir_all(&run_dir)?;
    let sims = simulate(w);
    let seed = hash(&run_id);
    let (status, reason) = if !w.feasible {
        (RunStatus::Infeasible, w.reason.clone())
    } else if w.mode == Mode::Mig && !opts.mig_available {
        (RunStatus::Skipped, Some("MIG mode could not be enabled on GPU 0: insufficient permissions".to_string()))
    } else if sims.iter().any(|s| s.oom) {
        (RunStatus::Failed, Some("job 0 ran out of memory".to_string()))
    } else {
        (RunStatus::Ok, None)
    };
    let ran = matches!(status, RunStatus::Ok | RunStatus::Failed);
    let t0 = *clock + 5.0;
    let window = opts.window_seconds as f64;
    let wall0 = 1_735_689_600.0 + *clock;
    let mut jobs = Vec::new();
    if ran {
        for (i, s) in sims.iter().enumerate() {
            let mut events = Vec::new();
            let ev = |mono: f64, body: EventBody| Event { mono, wall: mono - t0 + wall0, job: i as u32, body };
            events.push(ev(t0 - 4.0, EventBody::Hello { pid: 1000 + i as u32, protocol_version: 1, simulated: true }));
            events.push(ev(
                t0 - 4.0,
                EventBody::Versions {
                    python: "3.10.12".into(),
                    torch: Some("2.3.1".into()),
                    timm: Some("0.9.5".into()),
                    cuda: Some("12.1".into()),
                    cudnn: Some("8902".into()),
                    device: Some(GPU_NAME.into()),
                },
            ));
            if s.oom {
                events.push(ev(
                    t0 - 2.0,
                    EventBody::Error { kind: ErrorKind::Oom, message: "CUDA out of memory".into() },
                ));
                events.push(ev(t0 - 2.0, EventBody::End { reason: EndReason::Oom, exit_code: 1 }));
            } else {
                events
                    .push(ev(t0 - 1.0, EventBody::Ready { setup_seconds: 2.0, warmup_seconds: 1.0, warmup_steps: 20 }));
                events.push(ev(t0, EventBody::Release));
                let start = t0 + 0.2 + 0.1 * i as f64;
                events.push(ev(start, EventBody::WindowStart { step: 1 }));
                let mut t = start;
                let mut step = 1;
                let mut total = 0u64;
                for k in 0..opts.window_seconds as u64 {
                    let secs = 1.0 + 0.02 * noise(&[seed, i as u64, k, 1]);
                    let tp = s.throughput * (1.0 + 0.02 * noise(&[seed, i as u64, k, 2]));
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
                            data_wait_seconds: s.data_wait * secs,
                            slow_data_steps: if s.data_wait > 0.1 { 3 } else { 0 },
                            loss: 6.9 - 0.01 * k as f64,
                        },
                    ));
                }
                events.push(ev(
                    t,
                    EventBody::Memory {
                        allocated_bytes: (s.mem_bytes * 0.8) as u64,
                        reserved_bytes: (s.mem_bytes * 0.9) as u64,
                        peak_allocated_bytes: (s.mem_bytes * 0.85) as u64,
                        peak_reserved_bytes: (s.mem_bytes * 0.95) as u64,
                    },
                ));
                events.push(ev(t, EventBody::WindowEnd { step, images: total, seconds: t - start }));
                events.push(ev(t, EventBody::End { reason: EndReason::WindowDone, exit_code: 0 }));
            }
            let mut text = String::new();
            for e in &events {
                text.push_str(&serde_json::to_string(e)?);
                text.push('\n');
            }
            std::fs::write(run_dir.join(layout::job_events(i)), text)?;
            std::fs::write(
                run_dir.join(layout::job_stderr(i)),
                if s.oom { "RuntimeError: CUDA out of memory\n" } else { "" },
            )?;
            jobs.push(JobRecord {
                index: i as u32,
                command: vec!["python".into(), "workloads/train.py".into(), "--job-file".into(), layout::job_file(i)],
                env: BTreeMap::from([("CUDA_VISIBLE_DEVICES".to_string(), "0".to_string())]),
                pid: Some(1000 + i as u32),
                exit_code: Some(if s.oom { 1 } else { 0 }),
                signal: None,
                device: Some("GPU-00000000-0000-0000-0000-000000000000".into()),
                versions: Some(serde_json::json!({"python": "3.10.12", "torch": "2.3.1", "timm": "0.9.5", "cuda": "12.1", "cudnn": "8902"})),
                started_wall: Some(wall0 - 4.0),
                ended_wall: Some(wall0 + window),
                failure: s.oom.then(|| "out of memory".to_string()),
            });
        }
    }
    if status == RunStatus::Ok {
        write_telemetry(&run_dir, w, &sims, t0, window, wall0, seed)?;
    }
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
    });
    let started = format!(
        "2025-01-01T{:02}:{:02}:{:02}Z",
        (*clock as u64 / 3600) % 24,
        (*clock as u64 / 60) % 60,
        *clock as u64 % 60
    );
    *clock += if ran { window + 10.0 } else { 1.0 };
    let ended = format!(
        "2025-01-01T{:02}:{:02}:{:02}Z",
        (*clock as u64 / 3600) % 24,
        (*clock as u64 / 60) % 60,
        *clock as u64 % 60
    );
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
        mode: w.mode.to_string(),
        simulated: true,
        workload: serde_json::to_value(w)?,
        protocol: serde_json::json!({"name": "quick", "kind": "quick", "warmup_steps": 20, "window_seconds": window, "sample_every": 10, "timeout_seconds": 600.0}),
        gpu: Some(GpuInfo {
            index: 0,
            name: GPU_NAME.into(),
            uuid: "GPU-00000000-0000-0000-0000-000000000000".into(),
            driver_version: Some("570.124.06".into()),
            cuda_version: Some("12.8".into()),
            nvml_version: Some("12.570.124.06".into()),
            architecture: Some("Hopper".into()),
            memory_total_bytes: Some(GPU_MEM),
            sm_count: Some(132),
            mig_mode_current: Some(w.mode == Mode::Mig && opts.mig_available),
            mig_mode_pending: Some(false),
            compute_mode: Some("Default".into()),
            persistence_mode: Some(true),
            power_limit_watts: Some(700.0),
            clocks_max_mhz: BTreeMap::from([("sm".to_string(), 1980)]),
            clocks_applied_mhz: BTreeMap::from([("sm".to_string(), 1980)]),
        }),
        mps,
        mig,
        host: HostInfo {
            hostname: Some("sim-host".into()),
            cpu_model: Some("Simulated 16-core CPU".into()),
            cpu_cores: Some(16),
            memory_total_bytes: Some(128 * 1024 * 1024 * 1024),
            kernel: Some("6.1.0".into()),
            os: Some("Debian GNU/Linux 12".into()),
        },
        software: SoftwareInfo {
            runner_version: "0.1.0".into(),
            git_commit: Some("0000000".into()),
            git_dirty: Some(false),
            plan_hash: "f".repeat(64),
            spec_hash: None,
        },
        telemetry: TelemetryInfo {
            rate_hz: 1.0,
            samples: if status == RunStatus::Ok { opts.window_seconds as u64 + 4 } else { 0 },
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
        },
        jobs,
        started_at: started,
        ended_at: ended,
        release_mono: ran.then_some(t0),
    };
    std::fs::write(run_dir.join(layout::META), serde_json::to_string_pretty(&meta)? + "\n")?;
    Ok(())
}

fn write_telemetry(
    run_dir: &Path,
    w: &PlannedWorkload,
    sims: &[JobModel],
    t0: f64,
    window: f64,
    wall0: f64,
    seed: u64,
) -> Result<()> {
    let mig = w.mode == Mode::Mig;
    let mut tel = colloc_trace::telemetry::GPU_COLUMNS.join(",") + "\n";
    let mut procs = colloc_trace::telemetry::PROCESS_COLUMNS.join(",") + "\n";
    let busy: f64 = sims.iter().map(|s| s.busy).sum::<f64>().min(1.0);
    let mem_used: f64 = sims.iter().map(|s| s.mem_bytes).sum::<f64>() + 0.5 * GIB;
    let mut energy = 5.0e6;
    let n = window as u64 + 4;
    for k in 0..n {
        let t = t0 - 1.0 + k as f64;
        let active = t >= t0 && t <= t0 + window + 0.5;
        let b = if active { busy * (1.0 + 0.03 * noise(&[seed, k, 7])) } else { 0.02 };
        let power = 90.0 + 560.0 * b;
        energy += power;
        let sm = (100.0 * b * 0.92).min(99.0);
        let wall = t - t0 + wall0;
        let used = if active { mem_used } else { 0.5 * GIB };
        let gpm = |v: f64| if mig { None } else { Some(v) };
        writeln!(
            tel,
            "{t:.3},{wall:.3},-1,{:.1},{energy:.1},{:.0},{:.0},{used:.0},{GPU_MEM},1980,2619,45,0,{},{},{},{}",
            power,
            (b * 100.0 + 5.0).min(100.0),
            b * 60.0,
            opt(gpm(sm)),
            opt(gpm(sm * 0.45)),
            opt(gpm(sm * 0.04)),
            opt(gpm(sm * 0.55)),
        )?;
        if mig {
            for (i, (s, j)) in sims.iter().zip(&w.jobs).enumerate() {
                let c = j.mig_class.as_deref().unwrap_or("7g");
                let share = profile_sms(c) / 132.0;
                let bi = if active { (s.busy / share).min(1.0) } else { 0.02 };
                let smi = 100.0 * bi * 0.92;
                writeln!(
                    tel,
                    "{t:.3},{wall:.3},{},,,,,{:.0},{:.0},,,,,{:.3},{:.3},{:.3},{:.3}",
                    1 + i,
                    if active { s.mem_bytes + 0.1 * GIB } else { 0.1 * GIB },
                    profile_mem_gib(c) * GIB,
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
                "{t:.3},{wall:.3},{i},5,{:.1},{:.0},{:.0}",
                if active { s.cpu_pct * (1.0 + 0.05 * noise(&[seed, k, i as u64, 9])) } else { 20.0 },
                3.0 * GIB,
                if active { s.mem_bytes + 0.5 * GIB } else { 0.5 * GIB },
            )?;
        }
    }
    std::fs::write(run_dir.join(layout::TELEMETRY), gz(&tel)?)?;
    std::fs::write(run_dir.join(layout::PROCESSES), gz(&procs)?)?;
    Ok(())
}
