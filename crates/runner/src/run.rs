//! One run: a workload × repetition (× attempt). Sets up the mode, starts every job, waits
//! until all are ready, releases them together, watches them (timeout, interruption,
//! failures), stops the telemetry, tears the mode down and writes the trace.

use anyhow::{Context, Result};
use colloc_plan::{Plan, PlannedWorkload};
use colloc_trace::jobfile::JobFile;
use colloc_trace::layout;
use colloc_trace::meta::{
    ForeignProcess, HostInfo, JobPhases, JobRecord, MpsClientCheck, RunMeta, RunPhases, RunStatus, SoftwareInfo,
    TelemetryInfo,
};
use colloc_trace::Mode;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::Backend;
use crate::jobs::{JobSet, JobSpec, Phase};
use crate::leftovers::Leftovers;
use crate::modes::{self, mps, Applied, ModeContext, ModeGuard, MpsDirs};
use crate::options::RunOptions;
use crate::progress::Progress;
use crate::provenance;
use crate::signals;
use crate::telemetry::{foreign_warning, JobState, Report, Sampler, SharedJobs};
use crate::trace::TraceDir;

/// What every run of a campaign shares.
#[derive(Clone)]
pub(crate) struct Env<'a> {
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
    /// The job command (the preloaded server's client with `--preload`); `--job-file PATH`
    /// is appended.
    pub job_command: Vec<String>,
    /// Jobs are forked from a preloaded job server.
    pub preloaded: bool,
    /// When this invocation of the runner started (RFC 3339 UTC): `meta.json` → `invocation`.
    pub invocation: &'a str,
}

/// The run to make.
pub(crate) struct Request<'a> {
    pub workload: &'a PlannedWorkload,
    pub repetition: u32,
    pub attempt: u32,
    pub run_id: String,
    /// Position in the campaign, for progress.
    pub n: usize,
    pub total: usize,
    /// Why the runner added this run beyond the plan's repetitions.
    pub added: Option<String>,
    /// With `--settle`: the unrecorded runs this GPU made before it (`meta.json` → `settled`).
    pub settled: Option<String>,
}

#[derive(Debug)]
pub(crate) enum Outcome {
    /// The trace is in the manifest.
    Finished {
        status: RunStatus,
        reason: Option<String>,
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
        protocol: plan.protocol_of(w).kind.clone(),
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
        foreign_processes: Vec::new(),
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
            mode: w.mode,
            simulated: self.backend.simulated(),
            workload: serde_json::to_value(w).unwrap_or(serde_json::Value::Null),
            protocol: self.plan.protocol_of(w).clone(),
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
            window_end_mono: None,
            phases: None,
            added: req.added.clone(),
            settled: req.settled.clone(),
            invocation: Some(self.invocation.to_string()),
        }
    }

    /// A run that starts no job (infeasible, skipped): a directory with `meta.json` only.
    fn without_jobs(&self, req: &Request, status: RunStatus, reason: String, started: f64) -> Result<Outcome> {
        let dir = TraceDir::create(self.campaign_dir, &req.run_id)?.with_full_disk(self.backend.disk_full(&req.run_id));
        self.ended_early(req, dir, status, reason, started)
    }

    /// A run that ends before its jobs start: its `meta.json` says why.
    fn ended_early(
        &self,
        req: &Request,
        dir: TraceDir,
        status: RunStatus,
        reason: String,
        started: f64,
    ) -> Result<Outcome> {
        dir.write_json(layout::META, &self.meta(req, status, Some(reason.clone()), started))?;
        dir.finalize()?;
        let what = format!("{}: {reason}", status.as_str());
        self.progress.run_finished(req.n, req.total, &req.run_id, &what, req.workload.estimated_seconds);
        Ok(Outcome::Finished { status, reason: Some(reason), fatal: None, sampler_cpu_seconds: 0.0 })
    }
}

/// Makes one run and writes its trace. An error stops the campaign (disk, NVML failures).
pub(crate) fn execute(env: &Env, req: &Request) -> Result<Outcome> {
    let w = req.workload;
    let started = colloc_trace::wall_seconds();
    let started_mono = colloc_trace::monotonic_seconds();
    if let Some((status, reason)) = env.cannot_start(w)? {
        return env.without_jobs(req, status, reason, started);
    }
    let run = Run::begin(env, req, started)?;
    let job_paths = run.job_files()?;

    // The mode.
    let ctx = ModeContext {
        gpu_index: env.backend.index(),
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
            return env.ended_early(req, run.dir, RunStatus::Failed, reason, started);
        }
    };

    // Telemetry.
    let shared: SharedJobs = Arc::new(Mutex::new(vec![JobState { pid: None, phase: Phase::Setup }; w.jobs.len()]));
    let source = env.backend.telemetry(w, &req.run_id, &applied.mig_devices)?;
    let warn = {
        let (progress, run_id) = (env.progress.clone(), req.run_id.clone());
        Box::new(move |f: &ForeignProcess| progress.log(&format!("{run_id}: {}", foreign_warning(f))))
    };
    let sampler = Sampler::start(&run.dir.path, env.opts.telemetry_hz, source, shared.clone(), warn)?;

    // The jobs, released together, watched until they end, stopped when they must be.
    let spawned_mono = colloc_trace::monotonic_seconds();
    let mut jobs = run.spawn(&applied, &job_paths)?;
    publish(&shared, &jobs);
    let watch = run.supervise(&mut jobs, &shared, &applied);
    let exited_mono = colloc_trace::monotonic_seconds();

    // Telemetry off, mode down.
    let report = sampler.stop();
    let teardown = guard.teardown();
    let report = report.context("telemetry")?;
    let marks = Marks { started_mono, spawned_mono, exited_mono, torn_down_mono: colloc_trace::monotonic_seconds() };
    let end = End {
        marks,
        elapsed: watch.t0.elapsed().as_secs_f64(),
        signal_text: signals::signal().map(|s| format!(" (signal {s})")).unwrap_or_default(),
        teardown_error: teardown.err().map(|e| format!("{e:#}")),
        mps_died: guard.mps_died(),
        watch,
        report,
    };

    let (status, reason) = run.status(&jobs, &end);
    run.record(&jobs, &end, &applied, &guard, status, reason.clone())?;
    drop(jobs);
    run.finish(end, status, reason)
}

impl Env<'_> {
    /// Why a run starts no job (infeasible, MIG mode, no jobs); `None`: it can start.
    fn cannot_start(&self, w: &PlannedWorkload) -> Result<Option<(RunStatus, String)>> {
        if !w.feasible {
            let reason = w.reason.clone().unwrap_or_else(|| "the plan marks this workload infeasible".into());
            return Ok(Some((RunStatus::Infeasible, reason)));
        }
        if w.mode == Mode::Mig && self.opts.in_slurm_task {
            let reason = "a Slurm task holds one whole GPU and makes no MIG instances; MIG runs under Slurm need \
                          pre-partitioned MIG slices requested as typed GRES, which the tasks do not request: \
                          make them with --executor local on a host whose MIG mode is on"
                .to_string();
            return Ok(Some((RunStatus::Skipped, reason)));
        }
        let gpu_i = self.backend.index();
        let mig_on = self.backend.mig_enabled_for(w.mode)?;
        if w.mode == Mode::Mig && !mig_on {
            let reason = format!(
                "MIG mode is off on GPU {gpu_i} ({}); MIG runs need it on, and the runner never changes it",
                self.backend.name()
            );
            return Ok(Some((RunStatus::Skipped, reason)));
        }
        if w.mode != Mode::Mig && mig_on {
            let reason = format!(
                "MIG mode is on on GPU {gpu_i} ({}); {} runs need it off, and the runner never changes it",
                self.backend.name(),
                w.mode
            );
            return Ok(Some((RunStatus::Skipped, reason)));
        }
        if w.jobs.is_empty() {
            return Ok(Some((RunStatus::Failed, "the workload has no jobs".into())));
        }
        Ok(None)
    }
}

/// Tells the sampler the jobs' pids and phases.
fn publish(shared: &SharedJobs, jobs: &JobSet) {
    let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
    for (slot, j) in s.iter_mut().zip(&jobs.jobs) {
        *slot = JobState { pid: j.tree_root(), phase: j.phase };
    }
}

/// A run that starts jobs, from its trace directory on.
struct Run<'a> {
    env: &'a Env<'a>,
    req: &'a Request<'a>,
    w: &'a PlannedWorkload,
    started: f64,
    dir: TraceDir,
    /// How the host's own directories are written in what the jobs and the trace are given.
    dirs: provenance::HostDirs,
}

/// How the jobs were watched and stopped.
struct Watch {
    t0: Instant,
    timeout: Duration,
    release_mono: Option<f64>,
    /// Protocol 2: when the stop line went to every job, once all had met the window.
    window_end_mono: Option<f64>,
    /// Protocol 2: the stop line went out because a job exited first (the run fails).
    stopped_early: Option<usize>,
    /// A job that ended before the release, or a job the MPS daemon does not serve, which
    /// aborted the others.
    early_failure: Option<String>,
    /// `mps`, `mps-limited`: the check, before the release, that the daemon serves every job.
    mps_clients: Option<MpsClientCheck>,
    /// `mps`, `mps-limited`: a released job that failed while the daemon served it; the
    /// others were stopped at once.
    mps_fault: Option<usize>,
    timed_out: bool,
    interrupted: bool,
    /// Jobs still running at the end, stopped by the runner.
    stopped: Vec<usize>,
}

/// The runner's own marks of a run (CLOCK_MONOTONIC seconds).
struct Marks {
    started_mono: f64,
    /// The mode is up and the telemetry on: the jobs are about to be spawned.
    spawned_mono: f64,
    /// Every job has exited (or was stopped).
    exited_mono: f64,
    /// The telemetry is off and the mode torn down.
    torn_down_mono: f64,
}

/// How the run ended, once the telemetry is off and the mode down.
struct End {
    marks: Marks,
    watch: Watch,
    report: Report,
    teardown_error: Option<String>,
    /// `mps`, `mps-limited`: the run's daemon no longer answered at the end.
    mps_died: bool,
    elapsed: f64,
    signal_text: String,
}

impl End {
    /// Why job `i` was stopped, if it was.
    fn stopped_why(&self, i: usize) -> Option<String> {
        let watch = &self.watch;
        if !watch.stopped.contains(&i) {
            return None;
        }
        Some(if watch.interrupted {
            format!("stopped: the runner was interrupted{}", self.signal_text)
        } else if let Some(k) = watch.mps_fault {
            format!("stopped: job {k} failed while the MPS daemon served it")
        } else if watch.timed_out {
            format!("stopped after the run's timeout of {:.1} s", watch.timeout.as_secs_f64())
        } else {
            "stopped".into()
        })
    }
}

impl<'a> Run<'a> {
    /// Creates the trace directory and announces the run.
    fn begin(env: &'a Env<'a>, req: &'a Request<'a>, started: f64) -> Result<Run<'a>> {
        let w = req.workload;
        let dir = TraceDir::create(env.campaign_dir, &req.run_id)?.with_full_disk(env.backend.disk_full(&req.run_id));
        let n_jobs = w.jobs.len();
        let labels: Vec<String> = (0..n_jobs).map(|i| label(w, i)).collect();
        env.progress.run_started(
            req.n,
            req.total,
            &req.run_id,
            &format!("{} ({}, {} job{})", w.label, w.mode, n_jobs, plural(n_jobs)),
            &labels,
        );
        Ok(Run { env, req, w, started, dir, dirs: provenance::HostDirs::of_this_host() })
    }

    /// Writes each job's job file; returns (job file as the job is given it, events log).
    fn job_files(&self) -> Result<Vec<(PathBuf, PathBuf)>> {
        let mut job_paths = Vec::new();
        for i in 0..self.w.jobs.len() {
            let events = self.dir.file(&layout::job_events(i));
            let jf_path = self.dir.file(&layout::job_file(i));
            let jf = job_file(self.env.plan, self.w, &self.req.run_id, i, &self.dirs.relative(&events));
            self.dir.write_json(&layout::job_file(i), &jf)?;
            job_paths.push((self.dirs.relative(&jf_path), events));
        }
        Ok(job_paths)
    }

    /// Starts every job with its environment: the mode's, the backend's, `--job-env`, the
    /// faults injected for tests.
    fn spawn(&self, applied: &Applied, job_paths: &[(PathBuf, PathBuf)]) -> Result<JobSet> {
        let env = self.env;
        let backend_env = env.backend.job_env(self.w, &self.req.run_id);
        let specs: Vec<JobSpec> = (0..self.w.jobs.len())
            .map(|i| {
                let mut envv = applied.jobs[i].env.clone();
                envv.push(("PYTHONUNBUFFERED".into(), "1".into()));
                envv.extend(backend_env[i].iter().cloned());
                envv.extend(env.opts.job_env.iter().cloned());
                envv.extend(self.injected_env(i));
                let mut argv = env.job_command.clone();
                argv.push("--job-file".into());
                argv.push(job_paths[i].0.to_string_lossy().into_owned());
                JobSpec { argv, env: envv, events_path: job_paths[i].1.clone() }
            })
            .collect();
        for s in &specs {
            std::fs::File::create(&s.events_path)
                .with_context(|| format!("cannot create {}", s.events_path.display()))?;
        }
        Ok(JobSet::spawn(specs))
    }

    /// Environment of job `i` from the faults injected for tests, which the backend chooses
    /// ([`Backend::fault_env`]).
    fn injected_env(&self, i: usize) -> Vec<(String, String)> {
        let mps_pipe = self.under_mps().then_some(self.env.mps_dirs.pipe.as_path());
        self.env.backend.fault_env(&self.req.run_id, i, mps_pipe)
    }

    fn under_mps(&self) -> bool {
        matches!(self.w.mode, Mode::Mps | Mode::MpsLimited)
    }

    /// Under MPS, once every job is ready: asks the driver whether the run's daemon serves
    /// each job's own process. `Some(reason)` when it does not serve one (the run fails).
    fn check_mps_clients(&self, jobs: &JobSet, applied: &Applied, watch: &mut Watch) -> Option<String> {
        if !self.under_mps() {
            return None;
        }
        let (env, run_id) = (self.env, &self.req.run_id);
        let pids: Vec<Option<u32>> = jobs.jobs.iter().map(|j| j.tree_root()).collect();
        let check = mps::check_clients(env.backend, &pids, applied.mps_client_pipe.as_deref());
        let models: Vec<String> = self.w.jobs.iter().map(|j| j.model.clone()).collect();
        let unserved = mps::unserved(&check, &models);
        match (&check.reason, &unserved) {
            (Some(why), _) => env.progress.log(&format!("{run_id}: MPS clients not checked: {why}")),
            (None, None) => env.progress.log(&format!("{run_id}: MPS clients checked: the daemon serves every job")),
            (None, Some(_)) => {}
        }
        watch.mps_clients = Some(check);
        unserved
    }

    /// Ends the run before the release: writes `abort` to every job and waits for them.
    fn abort_all(&self, jobs: &mut JobSet, watch: &mut Watch, reason: String) {
        let (env, req) = (self.env, self.req);
        watch.early_failure = Some(reason);
        jobs.abort();
        for (k, phase, detail, log_it) in jobs.wait_all(env.opts.kill_grace) {
            env.progress.job(&req.run_id, k, phase.as_str(), &detail, log_it);
        }
    }

    /// The barrier and the watch: releases the jobs when all are ready (under MPS, once the
    /// daemon serves each of them), aborts them all when one ends before, until every job
    /// has ended, the timeout passed or a stop signal came; under MPS a job that fails after
    /// the release ends the watch too. Then stops what still runs.
    fn supervise(&self, jobs: &mut JobSet, shared: &SharedJobs, applied: &Applied) -> Watch {
        let (env, req, n_jobs) = (self.env, self.req, self.w.jobs.len());
        let grace = env.opts.kill_grace;
        let mut watch = Watch {
            t0: Instant::now(),
            timeout: env.opts.run_timeout(env.backend.run_seconds(env.plan.protocol_of(self.w).timeout_seconds)),
            release_mono: None,
            window_end_mono: None,
            stopped_early: None,
            early_failure: None,
            mps_clients: None,
            mps_fault: None,
            timed_out: false,
            interrupted: false,
            stopped: Vec::new(),
        };
        let common_window = !env.plan.protocol_of(self.w).kind.whole_epochs();
        let mut stop_sent = false;
        loop {
            for (i, phase, detail, log_it) in jobs.poll() {
                env.progress.job(&req.run_id, i, phase.as_str(), &detail, log_it);
            }
            publish(shared, jobs);
            if signals::interrupted() {
                watch.interrupted = true;
                break;
            }
            if watch.t0.elapsed() > watch.timeout {
                watch.timed_out = true;
                break;
            }
            if watch.release_mono.is_none() {
                if let Some(i) = jobs.dead_before_ready() {
                    let j = &jobs.jobs[i];
                    let why = j.failure().unwrap_or_else(|| "exited".into());
                    let text = format!("job {i} ({}) ended before it was ready: {why}", self.w.jobs[i].model);
                    let text = with_stderr(text, j);
                    self.abort_all(jobs, &mut watch, text);
                    break;
                }
                if jobs.all_ready() {
                    if let Some(why) = self.check_mps_clients(jobs, applied, &mut watch) {
                        env.progress.log(&format!("{}: {why}: abort", req.run_id));
                        self.abort_all(jobs, &mut watch, why);
                        break;
                    }
                    watch.release_mono = Some(jobs.release());
                    env.progress.log(&format!("{}: released {n_jobs} job{}", req.run_id, plural(n_jobs)));
                }
            } else if let Some(i) = jobs.failed_after_release().filter(|_| self.under_mps()) {
                // A client's fault can reach every client of the MPS server: the run is lost,
                // its other jobs stop now (protocol 2: told to stop, within the grace period)
                // and its daemon goes with the teardown.
                watch.mps_fault = Some(i);
                env.progress.log(&format!(
                    "{}: job {i} failed under MPS: stopping the other jobs and the daemon (the next run starts a fresh one)",
                    req.run_id
                ));
                if common_window {
                    if !stop_sent {
                        jobs.stop_window();
                    }
                    for (k, phase, detail, log_it) in jobs.wait_all(grace) {
                        env.progress.job(&req.run_id, k, phase.as_str(), &detail, log_it);
                    }
                }
                break;
            } else if jobs.all_exited() {
                break;
            } else if common_window && !stop_sent {
                // The common window: ends for every job at once when all have met it; a job
                // that exits first fails the run, and the others are stopped with it.
                if jobs.all_window_met() {
                    watch.window_end_mono = Some(jobs.stop_window());
                    stop_sent = true;
                    env.progress.log(&format!("{}: window met by every job: stop", req.run_id));
                } else if let Some(i) = jobs.exited_before_stop() {
                    watch.stopped_early = Some(i);
                    jobs.stop_window();
                    stop_sent = true;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        watch.stopped = if jobs.all_exited() { Vec::new() } else { jobs.stop(grace) };
        publish(shared, jobs);
        watch
    }

    /// The run's status and reason: interrupted, timed out, a job that failed, a teardown
    /// that failed, or ok.
    fn status(&self, jobs: &JobSet, end: &End) -> (RunStatus, Option<String>) {
        let (w, watch, teardown_error) = (self.w, &end.watch, end.teardown_error.as_deref());
        let (status, mut reason) = if watch.interrupted {
            (RunStatus::Failed, Some(format!("interrupted{} after {:.1} s", end.signal_text, end.elapsed)))
        } else if watch.timed_out {
            let list: Vec<String> = watch.stopped.iter().map(|i| i.to_string()).collect();
            (
                RunStatus::Failed,
                Some(format!(
                    "timeout after {:.1} s: job{} {} still running and stopped",
                    watch.timeout.as_secs_f64(),
                    plural(list.len()),
                    list.join(", ")
                )),
            )
        } else if let Some(f) = &watch.early_failure {
            (RunStatus::Failed, Some(f.clone()))
        } else if end.mps_died && jobs.jobs.iter().all(|j| j.failure().is_none()) {
            (
                RunStatus::Failed,
                Some(
                    "the run's MPS daemon died during the run (it no longer answered get_server_list when the run \
                     ended), so its jobs may not have run under MPS throughout; the next run starts a fresh daemon"
                        .to_string(),
                ),
            )
        } else if let Some(i) = watch.mps_fault {
            let j = &jobs.jobs[i];
            let f = j.failure().unwrap_or_else(|| "failed".into());
            let text = format!(
                "job {i} ({}): {f}, while the run's MPS daemon served it; the other jobs were stopped and the \
                 daemon shut down (a client's fault can reach every client of the MPS server)",
                w.jobs[i].model
            );
            (RunStatus::Failed, Some(with_stderr(text, j)))
        } else {
            let failing =
                jobs.jobs.iter().enumerate().find_map(|(i, j)| {
                    j.failure().map(|f| with_stderr(format!("job {i} ({}): {f}", w.jobs[i].model), j))
                });
            let quick = !self.env.plan.protocol_of(w).kind.whole_epochs();
            match failing {
                Some(f) => (RunStatus::Failed, Some(f)),
                None if quick && watch.window_end_mono.is_none() => {
                    let who = watch.stopped_early.map(|i| format!(": job {i} ended before it")).unwrap_or_default();
                    (RunStatus::Failed, Some(format!("the common window was never met by every job{who}")))
                }
                None => (RunStatus::Ok, None),
            }
        };
        if end.mps_died && status != RunStatus::Ok && !reason.as_deref().unwrap_or("").contains("MPS daemon died") {
            reason = reason.map(|r| format!("{r}; the run's MPS daemon had died by the end of the run"));
        }
        if let Some(t) = teardown_error {
            let text = format!("tearing down {} failed: {t}", w.mode);
            reason = Some(match reason {
                Some(r) => format!("{r}; {text}"),
                None => text,
            });
        }
        let status = if teardown_error.is_some() { RunStatus::Failed } else { status };
        (status, reason)
    }

    /// Writes `meta.json` and each job's stderr tail into the trace directory.
    fn record(
        &self,
        jobs: &JobSet,
        end: &End,
        applied: &Applied,
        guard: &ModeGuard,
        status: RunStatus,
        reason: Option<String>,
    ) -> Result<()> {
        let (env, dirs, report) = (self.env, &self.dirs, &end.report);
        let inherited: Vec<(String, String)> = std::env::vars().filter(|(k, _)| provenance::matters(k)).collect();
        let mut meta = env.meta(self.req, status, reason, self.started);
        meta.mps = applied.mps.clone().map(|mut m| {
            m.clients = end.watch.mps_clients.clone();
            m
        });
        meta.mig = applied.mig.clone().map(|mut m| {
            m.torn_down = guard.mig_torn_down();
            m
        });
        meta.release_mono = end.watch.release_mono;
        meta.window_end_mono = end.watch.window_end_mono;
        meta.phases = Some(phases(jobs, end, env.preloaded));
        meta.telemetry = TelemetryInfo {
            rate_hz: report.rate_hz,
            samples: report.samples,
            source: report.source.clone(),
            unavailable: report.unavailable.clone(),
            sampler_cpu_seconds: Some(report.cpu_seconds),
            foreign_processes: report.foreign.clone(),
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
                    failure: end.stopped_why(i).or_else(|| j.failure()),
                }
            })
            .collect();
        for (i, j) in jobs.jobs.iter().enumerate() {
            self.dir.write(&layout::job_stderr(i), &j.output.bytes())?;
            for (line, e) in &j.tail.bad_lines {
                env.progress
                    .log(&format!("{}: job {i}: line {line} of its event log is not an event: {e}", self.req.run_id));
            }
        }
        self.dir.write_json(layout::META, &meta)
    }

    /// Puts the trace into the manifest (an interrupted run's stays in its temporary
    /// directory) and reports the run.
    fn finish(self, end: End, status: RunStatus, reason: Option<String>) -> Result<Outcome> {
        let (env, req, report) = (self.env, self.req, &end.report);
        if report.samples > 0 && report.wall_seconds > 0.0 && report.read_the_host {
            env.progress.log(&format!(
                "{}: telemetry: {} samples at {} Hz, sampler CPU {:.2} s ({:.2}% of one core)",
                req.run_id,
                report.samples,
                report.rate_hz,
                report.cpu_seconds,
                100.0 * report.cpu_seconds / report.wall_seconds
            ));
        }
        if end.watch.interrupted {
            let tmp = self.dir.path.clone();
            env.progress.log(&format!("{}: interrupted; its partial trace stays in {}", req.run_id, tmp.display()));
            return Ok(Outcome::Interrupted { tmp, teardown_error: end.teardown_error });
        }
        self.dir.finalize()?;
        let what = match &reason {
            Some(r) => format!("{}: {r} ({:.1} s)", status.as_str(), end.elapsed),
            None => format!("{} ({:.1} s)", status.as_str(), end.elapsed),
        };
        env.progress.run_finished(req.n, req.total, &req.run_id, &what, self.w.estimated_seconds);
        Ok(Outcome::Finished { status, reason, fatal: end.teardown_error, sampler_cpu_seconds: report.cpu_seconds })
    }
}

/// Where the run's time went, from the runner's marks and the jobs' `ready` events.
fn phases(jobs: &JobSet, end: &End, preloaded: bool) -> RunPhases {
    let (m, w) = (&end.marks, &end.watch);
    let ready = jobs.jobs.iter().map(|j| j.ready_mono).collect::<Option<Vec<f64>>>();
    let ready = ready.and_then(|r| r.into_iter().reduce(f64::max));
    let window_end = w.window_end_mono.or(w.release_mono.map(|_| m.exited_mono));
    let window = match (w.release_mono, window_end) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let total = m.torn_down_mono - m.started_mono;
    RunPhases {
        mode_setup_seconds: m.spawned_mono - m.started_mono,
        to_ready_seconds: ready.map(|r| r - m.spawned_mono),
        barrier_seconds: match (ready, w.release_mono) {
            (Some(r), Some(rel)) => Some((rel - r).max(0.0)),
            _ => None,
        },
        window_seconds: window,
        exit_seconds: w.window_end_mono.map(|e| m.exited_mono - e),
        teardown_seconds: m.torn_down_mono - m.exited_mono,
        total_seconds: total,
        outside_window_seconds: window.map(|win| total - win),
        preloaded,
        jobs: jobs
            .jobs
            .iter()
            .map(|j| {
                j.ready_info.map(|(setup, warmup, steps)| JobPhases {
                    setup_seconds: setup,
                    warmup_seconds: warmup,
                    warmup_steps: steps as u32,
                })
            })
            .collect(),
    }
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

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
