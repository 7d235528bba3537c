//! One run: a workload × repetition (× attempt). Sets up the mode, starts every job, waits
//! until all are ready, releases them together, watches them (timeout, interruption,
//! failures), stops the telemetry, tears the mode down and writes the trace.

use anyhow::{Context, Result};
use colloc_plan::{Mode, Plan, PlannedWorkload, ProtocolKind};
use colloc_trace::jobfile::{JobFile, JobProtocol};
use colloc_trace::layout;
use colloc_trace::meta::{HostInfo, JobRecord, RunMeta, RunStatus, SoftwareInfo, TelemetryInfo};
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::jobs::{JobSet, JobSpec, Phase};
use crate::leftovers::Leftovers;
use crate::modes::{self, ModeContext, MpsDirs};
use crate::options::RunOptions;
use crate::progress::Progress;
use crate::provenance;
use crate::signals;
use crate::telemetry::{JobState, Sampler, SharedJobs};
use crate::trace::TraceDir;

/// What every run of a campaign shares.
pub struct Env<'a> {
    pub plan: &'a Plan,
    pub opts: &'a RunOptions,
    pub backend: &'a dyn Backend,
    pub campaign_dir: &'a Path,
    pub campaign: &'a str,
    pub progress: &'a Progress,
    pub leftovers: &'a Arc<Leftovers>,
    pub mps_dirs: &'a MpsDirs,
    pub host: &'a HostInfo,
    pub software: &'a SoftwareInfo,
}

/// The run to make.
pub struct Request<'a> {
    pub workload: &'a PlannedWorkload,
    pub repetition: u32,
    pub attempt: u32,
    pub run_id: String,
    /// Position in the campaign, for progress.
    pub n: usize,
    pub total: usize,
}

#[derive(Debug)]
pub enum Outcome {
    /// The trace is in the manifest.
    Finished {
        status: RunStatus,
        reason: Option<String>,
        dir: PathBuf,
        /// Something that must stop the campaign (a teardown that failed).
        fatal: Option<String>,
        sampler_cpu_seconds: f64,
    },
    /// A stop signal arrived; the jobs were stopped and the mode torn down; the partial
    /// trace stays in its temporary directory (quarantined by the next run).
    Interrupted { tmp: PathBuf, teardown_error: Option<String> },
}

fn job_file(plan: &Plan, w: &PlannedWorkload, run_id: &str, i: usize, events: &Path) -> JobFile {
    let j = &w.jobs[i];
    JobFile {
        protocol_version: colloc_trace::events::PROTOCOL_VERSION,
        run_id: run_id.to_string(),
        workload_id: w.id.clone(),
        job: i as u32,
        model: j.model.clone(),
        batch_size: j.batch_size,
        data: j.data.clone(),
        training: j.training.clone(),
        protocol: match plan.protocol.kind {
            ProtocolKind::Paper { epochs, sample_every } => JobProtocol::Paper { epochs, sample_every },
            ProtocolKind::Quick { warmup_steps, window_seconds, sample_every } => {
                JobProtocol::Quick { warmup_steps, window_seconds, sample_every }
            }
        },
        events_path: events.to_string_lossy().into_owned(),
    }
}

fn label(w: &PlannedWorkload, i: usize) -> String {
    let j = &w.jobs[i];
    let cap = match (w.mode, &j.mig_profile, &j.mps_limits) {
        (Mode::Mig, Some(p), _) => format!(" {p}"),
        (Mode::MpsLimited, _, Some(l)) => format!(" {}%", l.active_thread_percentage),
        _ => String::new(),
    };
    format!("job {i} {} b{}{cap}", j.model, j.batch_size)
}

fn no_telemetry() -> TelemetryInfo {
    TelemetryInfo {
        rate_hz: 0.0,
        samples: 0,
        source: "off".into(),
        unavailable: BTreeMap::new(),
        sampler_cpu_seconds: None,
    }
}

impl Env<'_> {
    fn meta(&self, req: &Request, status: RunStatus, reason: Option<String>, started_wall: f64) -> RunMeta {
        let w = req.workload;
        RunMeta {
            format_version: colloc_trace::FORMAT_VERSION,
            run_id: req.run_id.clone(),
            campaign: self.campaign.to_string(),
            workload_id: w.id.clone(),
            experiment: w.experiment,
            repetition: req.repetition,
            attempt: req.attempt,
            status,
            reason,
            mode: w.mode.as_str().to_string(),
            simulated: self.backend.simulated(),
            workload: serde_json::to_value(w).unwrap_or(serde_json::Value::Null),
            protocol: serde_json::to_value(&self.plan.protocol).unwrap_or(serde_json::Value::Null),
            gpu: Some({
                let mut g = self.backend.info();
                if let Ok(on) = self.backend.mig_enabled_for(w.mode) {
                    g.mig_mode_current = Some(on);
                    g.mig_mode_pending = g.mig_mode_pending.or(Some(on));
                }
                g
            }),
            mps: None,
            mig: None,
            host: self.host.clone(),
            software: self.software.clone(),
            telemetry: no_telemetry(),
            jobs: Vec::new(),
            started_at: provenance::rfc3339(started_wall),
            ended_at: provenance::rfc3339(colloc_trace::wall_seconds()),
            release_mono: None,
        }
    }

    /// A run that starts no job (infeasible, skipped): a directory with `meta.json` only.
    fn without_jobs(&self, req: &Request, status: RunStatus, reason: String, started: f64) -> Result<Outcome> {
        let dir = TraceDir::create(self.campaign_dir, &req.run_id)?;
        dir.write_json(layout::META, &self.meta(req, status, Some(reason.clone()), started))?;
        let path = dir.finalize()?;
        let what = format!("{}: {reason}", status.as_str());
        self.progress.run_finished(req.n, req.total, &req.run_id, &what, req.workload.estimated_seconds);
        Ok(Outcome::Finished { status, reason: Some(reason), dir: path, fatal: None, sampler_cpu_seconds: 0.0 })
    }
}

/// Makes one run and writes its trace. An error stops the campaign (disk, NVML failures).
pub fn execute(env: &Env, req: &Request) -> Result<Outcome> {
    let w = req.workload;
    let started = colloc_trace::wall_seconds();
    let gpu_i = env.backend.index();
    if !w.feasible {
        let reason = w.reason.clone().unwrap_or_else(|| "the plan marks this workload infeasible".into());
        return env.without_jobs(req, RunStatus::Infeasible, reason, started);
    }
    let mig_on = env.backend.mig_enabled_for(w.mode)?;
    if w.mode == Mode::Mig && !mig_on {
        let reason = format!(
            "MIG mode is off on GPU {gpu_i} ({}); MIG runs need it on, and the runner never changes it",
            env.backend.name()
        );
        return env.without_jobs(req, RunStatus::Skipped, reason, started);
    }
    if w.mode != Mode::Mig && mig_on {
        let reason = format!(
            "MIG mode is on on GPU {gpu_i} ({}); {} runs need it off, and the runner never changes it",
            env.backend.name(),
            w.mode
        );
        return env.without_jobs(req, RunStatus::Skipped, reason, started);
    }
    if w.jobs.is_empty() {
        return env.without_jobs(req, RunStatus::Failed, "the workload has no jobs".into(), started);
    }

    let dir = TraceDir::create(env.campaign_dir, &req.run_id)?;
    let n_jobs = w.jobs.len();
    let labels: Vec<String> = (0..n_jobs).map(|i| label(w, i)).collect();
    env.progress.run_started(
        req.n,
        req.total,
        &req.run_id,
        &format!("{} ({}, {} job{})", w.label, w.mode, n_jobs, if n_jobs == 1 { "" } else { "s" }),
        &labels,
    );
    let mut job_paths = Vec::new();
    // How the host's own directories are written in what the jobs and the trace are given.
    let dirs = provenance::HostDirs::of_this_host();
    for i in 0..n_jobs {
        let events = dir.file(&layout::job_events(i));
        let jf_path = dir.file(&layout::job_file(i));
        dir.write_json(&layout::job_file(i), &job_file(env.plan, w, &req.run_id, i, &dirs.relative(&events)))?;
        job_paths.push((dirs.relative(&jf_path), events));
    }

    // The mode.
    let ctx = ModeContext {
        gpu_index: gpu_i,
        gpu_uuid: env.backend.uuid(),
        tools: &env.opts.tools,
        exec: env.backend.executes_mode_commands(),
        mps_dirs: env.mps_dirs,
        leftovers: env.leftovers,
        progress: env.progress,
    };
    let (mut guard, applied) = match modes::apply(&ctx, w) {
        Ok(x) => x,
        Err(e) => {
            let reason = format!("setting up {} failed: {e:#}", w.mode);
            let meta = env.meta(req, RunStatus::Failed, Some(reason.clone()), started);
            dir.write_json(layout::META, &meta)?;
            let path = dir.finalize()?;
            env.progress.run_finished(req.n, req.total, &req.run_id, &format!("failed: {reason}"), w.estimated_seconds);
            return Ok(Outcome::Finished {
                status: RunStatus::Failed,
                reason: Some(reason),
                dir: path,
                fatal: None,
                sampler_cpu_seconds: 0.0,
            });
        }
    };

    // Telemetry.
    let shared: SharedJobs = Arc::new(Mutex::new(vec![JobState { pid: None, phase: Phase::Setup }; n_jobs]));
    let source = env.backend.telemetry(w, &req.run_id, &applied.mig_devices)?;
    let sampler = Sampler::start(&dir.path, env.opts.telemetry_hz, source, shared.clone())?;

    // The jobs.
    let backend_env = env.backend.job_env(w, &req.run_id);
    let specs: Vec<JobSpec> = (0..n_jobs)
        .map(|i| {
            let mut envv = applied.jobs[i].env.clone();
            envv.push(("PYTHONUNBUFFERED".into(), "1".into()));
            envv.extend(backend_env[i].iter().cloned());
            envv.extend(env.opts.job_env.iter().cloned());
            let mut argv = env.opts.job_command.clone();
            argv.push("--job-file".into());
            argv.push(job_paths[i].0.to_string_lossy().into_owned());
            JobSpec { index: i as u32, argv, env: envv, events_path: job_paths[i].1.clone() }
        })
        .collect();
    for s in &specs {
        std::fs::File::create(&s.events_path).with_context(|| format!("cannot create {}", s.events_path.display()))?;
    }
    let mut jobs = JobSet::spawn(specs);
    let publish = |jobs: &JobSet| {
        let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
        for (slot, j) in s.iter_mut().zip(&jobs.jobs) {
            *slot = JobState { pid: j.pid, phase: j.phase };
        }
    };
    publish(&jobs);

    let timeout = env.opts.run_timeout(env.backend.run_seconds(env.plan.protocol.timeout_seconds));
    let t0 = Instant::now();
    let grace = env.opts.kill_grace;
    let mut release_mono: Option<f64> = None;
    let mut early_failure: Option<String> = None;
    let (mut timed_out, mut interrupted) = (false, false);
    loop {
        for (i, phase, detail, log_it) in jobs.poll() {
            env.progress.job(&req.run_id, i, phase.as_str(), &detail, log_it);
        }
        publish(&jobs);
        if signals::interrupted() {
            interrupted = true;
            break;
        }
        if t0.elapsed() > timeout {
            timed_out = true;
            break;
        }
        if release_mono.is_none() {
            if let Some(i) = jobs.dead_before_ready() {
                let j = &jobs.jobs[i];
                let why = j.failure().unwrap_or_else(|| "exited".into());
                early_failure =
                    Some(with_stderr(format!("job {i} ({}) ended before it was ready: {why}", w.jobs[i].model), j));
                jobs.abort();
                for (k, phase, detail, log_it) in jobs.wait_all(grace) {
                    env.progress.job(&req.run_id, k, phase.as_str(), &detail, log_it);
                }
                break;
            }
            if jobs.all_ready() {
                release_mono = Some(jobs.release());
                env.progress.log(&format!(
                    "{}: released {n_jobs} job{}",
                    req.run_id,
                    if n_jobs == 1 { "" } else { "s" }
                ));
            }
        } else if jobs.all_exited() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let stopped = if jobs.all_exited() { Vec::new() } else { jobs.stop(grace) };
    publish(&jobs);

    // Telemetry off, mode down.
    let report = sampler.stop();
    let teardown = guard.teardown();
    let report = report.context("telemetry")?;
    let teardown_error = teardown.err().map(|e| format!("{e:#}"));

    // Status.
    let elapsed = t0.elapsed().as_secs_f64();
    let signal_text = signals::signal().map(|s| format!(" (signal {s})")).unwrap_or_default();
    let stopped_why = |i: usize| -> Option<String> {
        if !stopped.contains(&i) {
            return None;
        }
        Some(if interrupted {
            format!("stopped: the runner was interrupted{signal_text}")
        } else if timed_out {
            format!("stopped after the run's timeout of {:.1} s", timeout.as_secs_f64())
        } else {
            "stopped".into()
        })
    };
    let (status, mut reason) = if interrupted {
        (RunStatus::Failed, Some(format!("interrupted{signal_text} after {elapsed:.1} s")))
    } else if timed_out {
        let list: Vec<String> = stopped.iter().map(|i| i.to_string()).collect();
        (
            RunStatus::Failed,
            Some(format!(
                "timeout after {:.1} s: job{} {} still running and stopped",
                timeout.as_secs_f64(),
                if list.len() == 1 { "" } else { "s" },
                list.join(", ")
            )),
        )
    } else if let Some(f) = early_failure {
        (RunStatus::Failed, Some(f))
    } else {
        let failing = jobs
            .jobs
            .iter()
            .enumerate()
            .find_map(|(i, j)| j.failure().map(|f| with_stderr(format!("job {i} ({}): {f}", w.jobs[i].model), j)));
        match failing {
            Some(f) => (RunStatus::Failed, Some(f)),
            None => (RunStatus::Ok, None),
        }
    };
    if let Some(t) = &teardown_error {
        let text = format!("tearing down {} failed: {t}", w.mode);
        reason = Some(match reason {
            Some(r) => format!("{r}; {text}"),
            None => text,
        });
    }
    let status = if teardown_error.is_some() { RunStatus::Failed } else { status };

    // The trace.
    let inherited: Vec<(String, String)> = std::env::vars().filter(|(k, _)| provenance::matters(k)).collect();
    let mut meta = env.meta(req, status, reason.clone(), started);
    meta.mps = applied.mps.clone();
    meta.mig = applied.mig.clone().map(|mut m| {
        m.torn_down = guard.mig_torn_down();
        m
    });
    meta.release_mono = release_mono;
    meta.telemetry = TelemetryInfo {
        rate_hz: report.rate_hz,
        samples: report.samples,
        source: report.source.clone(),
        unavailable: report.unavailable.clone(),
        sampler_cpu_seconds: Some(report.cpu_seconds),
    };
    meta.jobs = jobs
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let mut envm: BTreeMap<String, String> = inherited.iter().cloned().collect();
            for (k, v) in &j.env {
                if provenance::matters(k) {
                    envm.insert(k.clone(), v.clone());
                }
            }
            let envm = envm.into_iter().map(|(k, v)| (k, dirs.portable(&v))).collect();
            JobRecord {
                index: i as u32,
                command: j.argv.iter().map(|a| dirs.portable(a)).collect(),
                env: envm,
                pid: j.pid,
                exit_code: j.status.and_then(|s| s.code()),
                signal: j.status.and_then(|s| s.signal()),
                device: Some(applied.jobs[i].device.clone()),
                versions: j.versions.clone(),
                started_wall: j.started_wall,
                ended_wall: j.ended_wall,
                failure: stopped_why(i).or_else(|| j.failure()),
            }
        })
        .collect();
    for (i, j) in jobs.jobs.iter().enumerate() {
        dir.write(&layout::job_stderr(i), &j.output.bytes())?;
        for (line, e) in &j.tail.bad_lines {
            env.progress.log(&format!("{}: job {i}: line {line} of its event log is not an event: {e}", req.run_id));
        }
    }
    dir.write_json(layout::META, &meta)?;
    drop(jobs);

    if report.samples > 0 && report.wall_seconds > 0.0 && !env.backend.simulated() {
        env.progress.log(&format!(
            "{}: telemetry: {} samples at {} Hz, sampler CPU {:.2} s ({:.2}% of one core)",
            req.run_id,
            report.samples,
            report.rate_hz,
            report.cpu_seconds,
            100.0 * report.cpu_seconds / report.wall_seconds
        ));
    }
    if interrupted {
        let tmp = dir.path.clone();
        env.progress.log(&format!("{}: interrupted; its partial trace stays in {}", req.run_id, tmp.display()));
        return Ok(Outcome::Interrupted { tmp, teardown_error });
    }
    let path = dir.finalize()?;
    let what = match &reason {
        Some(r) => format!("{}: {r} ({elapsed:.1} s)", status.as_str()),
        None => format!("{} ({elapsed:.1} s)", status.as_str()),
    };
    env.progress.run_finished(req.n, req.total, &req.run_id, &what, w.estimated_seconds);
    Ok(Outcome::Finished { status, reason, dir: path, fatal: teardown_error, sampler_cpu_seconds: report.cpu_seconds })
}

/// A failure with the last lines of the job's stderr.
fn with_stderr(text: String, j: &crate::jobs::Job) -> String {
    let tail = j.output.last_lines(3, 400);
    if tail.is_empty() {
        text
    } else {
        format!("{text}; stderr: {tail}")
    }
}
