//! The campaign loop. Before running: one runner per campaign directory (a lock), removal of
//! what an earlier, killed runner left on the GPU, quarantine of incomplete run directories,
//! and verification of the runs already in `SHA256SUMS` (a listed run is never modified, so
//! a corrupted one stops the campaign). Then every selected workload × repetition that has
//! no run yet, in plan order, one after another on each GPU; a failed run does not stop the
//! campaign. On several GPUs (`--gpus`) each GPU has a worker thread that takes the next
//! workload's runs from a shared queue ([`crate::queue`]) and measures, before them, the
//! baselines they need on that GPU; one `SHA256SUMS` takes every GPU's runs.

use anyhow::{anyhow, bail, Context, Result};
use colloc_plan::perf::GIB;
use colloc_plan::Plan;
use colloc_trace::ids;
use colloc_trace::layout::{self, QUARANTINE_DIR, RUNS_DIR};
use colloc_trace::manifest::{self, Problem};
use colloc_trace::meta::{EnvironmentCheck, RunMeta, RunStatus, SoftwareInfo};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::backend::Backend;
use crate::leftovers::Leftovers;
use crate::modes::{busy, mig, mps, MpsDirs};
use crate::options::RunOptions;
use crate::preload::Preload;
use crate::progress::Progress;
use crate::queue::{self, starts_here, BaselineBook, Todo};
use crate::run::{self, Env, Outcome, Request};
use crate::trace::TMP_PREFIX;
use crate::{provenance, signals};

pub(crate) const LOCK_FILE: &str = ".runner.lock";

/// One run made by this invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub run_id: String,
    pub status: RunStatus,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct CampaignSummary {
    pub campaign_dir: PathBuf,
    /// Runs the selection asked for (done now or before).
    pub selected: usize,
    /// Runs found complete in the manifest and not run again.
    pub already_done: Vec<String>,
    /// Runs made now.
    pub runs: Vec<RunOutcome>,
    /// (from, to) of incomplete directories moved to `quarantine/`.
    pub quarantined: Vec<(PathBuf, PathBuf)>,
    /// Why the campaign stopped before its end (interruption, a busy GPU, a teardown that
    /// failed); `None` when every selected run was made.
    pub stopped: Option<String>,
    pub interrupted: bool,
    /// CPU seconds used by the telemetry sampler over all runs.
    pub sampler_cpu_seconds: f64,
    /// `--executor slurm`: runs whose task ended without a complete run (cancelled, timed
    /// out, lost); the next invocation makes them.
    pub lost: Vec<String>,
}

impl CampaignSummary {
    pub fn count(&self, status: RunStatus) -> usize {
        self.runs.iter().filter(|r| r.status == status).count()
    }

    /// The process exit status this outcome calls for: 0 when every selected run was made,
    /// 1 after an early stop, 128 + N after signal N.
    pub fn exit_code(&self) -> std::process::ExitCode {
        if self.interrupted {
            std::process::ExitCode::from(128 + crate::signals::signal().unwrap_or(2).clamp(1, 127) as u8)
        } else if self.stopped.is_some() {
            std::process::ExitCode::FAILURE
        } else {
            std::process::ExitCode::SUCCESS
        }
    }

    /// A short human summary.
    pub fn render(&self) -> String {
        let mut s = format!(
            "{}: {} run(s) selected, {} already done, {} made now: {} ok, {} failed, {} skipped, {} infeasible",
            self.campaign_dir.display(),
            self.selected,
            self.already_done.len(),
            self.runs.len(),
            self.count(RunStatus::Ok),
            self.count(RunStatus::Failed),
            self.count(RunStatus::Skipped),
            self.count(RunStatus::Infeasible),
        );
        for (from, to) in &self.quarantined {
            s.push_str(&format!("\nquarantined {} → {}", from.display(), to.display()));
        }
        for r in &self.lost {
            s.push_str(&format!("\nnot made (its Slurm task ended without a complete run): {r}"));
        }
        for r in self.runs.iter().filter(|r| r.status == RunStatus::Failed) {
            s.push_str(&format!("\nfailed {}: {}", r.run_id, r.reason.as_deref().unwrap_or("")));
        }
        if self.sampler_cpu_seconds > 0.0 {
            s.push_str(&format!("\ntelemetry sampler CPU time: {:.2} s", self.sampler_cpu_seconds));
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!("\nstopped early: {why}"));
        }
        s
    }
}

/// Verifies a campaign directory against its `SHA256SUMS`.
pub fn verify_campaign(dir: &Path) -> Result<Vec<Problem>> {
    manifest::verify(dir).map_err(|e| anyhow!("{e}"))
}

/// Holds the campaign's lock file while the runner works.
struct Lock(#[allow(dead_code)] fs::File);

fn lock(dir: &Path) -> Result<Lock> {
    let path = dir.join(LOCK_FILE);
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // A lock just released can stay held for a moment by a child process forked elsewhere in
    // this program and not yet exec'd (it shares the descriptor until exec closes it): try
    // for a while before deciding another runner holds it.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Lock(f));
        }
        if std::time::Instant::now() >= deadline {
            bail!("another runner is working on {} (its lock {} is held)", dir.display(), path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Run directory names listed in the manifest.
fn listed_runs(m: &manifest::Manifest) -> BTreeSet<String> {
    m.keys()
        .filter_map(|k| k.strip_prefix(&format!("{RUNS_DIR}/")))
        .filter_map(|rest| rest.split_once('/').map(|(d, _)| d.to_string()))
        .collect()
}

/// Moves incomplete entries of `runs/` to `quarantine/<name>.<n>`.
fn quarantine(dir: &Path, listed: &BTreeSet<String>) -> Result<Vec<(PathBuf, PathBuf)>> {
    let runs = dir.join(RUNS_DIR);
    let mut moved = Vec::new();
    let Ok(entries) = fs::read_dir(&runs) else { return Ok(moved) };
    let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names {
        if listed.contains(&name) {
            continue;
        }
        let base = name.strip_prefix(TMP_PREFIX).unwrap_or(&name).trim_start_matches('.').to_string();
        let to = quarantine_place(dir, &base)?;
        let from = runs.join(&name);
        fs::rename(&from, &to).with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
        moved.push((from, to));
    }
    if !moved.is_empty() {
        manifest::fsync_dir(&runs)?;
        manifest::fsync_dir(&dir.join(QUARANTINE_DIR))?;
    }
    Ok(moved)
}

/// The first free `quarantine/<base>.<n>` of a campaign (`quarantine/` made if missing).
pub(crate) fn quarantine_place(dir: &Path, base: &str) -> Result<PathBuf> {
    let qdir = dir.join(QUARANTINE_DIR);
    fs::create_dir_all(&qdir).with_context(|| format!("cannot create {}", qdir.display()))?;
    let mut n = 1;
    loop {
        let cand = qdir.join(format!("{base}.{n}"));
        if !cand.exists() {
            return Ok(cand);
        }
        n += 1;
    }
}

/// Removes what a killed runner left: MPS daemons it started and MIG instances it created
/// (only those whose MIG device UUID proves they are the ones it created).
fn clean_leftovers(leftovers: &Leftovers, opts: &RunOptions, dirs: &MpsDirs, progress: &Progress) -> Result<()> {
    let state = leftovers.snapshot();
    let tools = &opts.tools;
    for pipe in &state.mps_pipe_dirs {
        let p = Path::new(pipe);
        if mps::answers(tools, p, &dirs.log).map(|(up, _)| up).unwrap_or(false) {
            progress.log(&format!("an MPS daemon left by an earlier run still serves {pipe}: stopping it"));
            mps::quit_at(tools, p, &dirs.log)?;
        }
        leftovers.remove_mps(pipe)?;
    }
    for m in &state.mig {
        let Some(uuid) = &m.uuid else {
            progress.log(&format!(
                "warning: GPU instance {} on GPU {} may be left by an interrupted run, but it cannot be proven \
                 to be ours, so it is not destroyed; check `nvidia-smi mig -i {} -lgi`",
                m.gpu_instance, m.gpu, m.gpu
            ));
            leftovers.remove_mig(m.gpu, m.gpu_instance)?;
            continue;
        };
        let out = crate::command::Cmd::new(&tools.nvidia_smi, &["-L"], tools.command_timeout).run()?;
        if out.success && mig::parse_list(&out.stdout, m.gpu).contains(uuid) {
            progress.log(&format!(
                "MIG GPU instance {} ({uuid}) on GPU {} was left by an earlier run: destroying it",
                m.gpu_instance, m.gpu
            ));
            if let Some(ci) = m.compute_instance {
                mig::destroy_step(tools, progress, m.gpu, m.gpu_instance, Some(ci))?;
            }
            mig::destroy_step(tools, progress, m.gpu, m.gpu_instance, None)?;
            if mig::gpu_instances(tools, m.gpu)?.contains(&m.gpu_instance) {
                bail!(
                    "MIG GPU instance {} on GPU {} left by an earlier run could not be destroyed",
                    m.gpu_instance,
                    m.gpu
                );
            }
        } else if !out.success {
            bail!("`nvidia-smi -L` failed while checking for leftover MIG instances: {}", out.text());
        }
        leftovers.remove_mig(m.gpu, m.gpu_instance)?;
    }
    Ok(())
}

/// The MPS daemon's directories of a campaign on GPU `gpu`: one daemon per GPU, each with
/// its own pipe directory. A campaign on one GPU keeps the one of a single daemon.
fn mps_dirs(dir: &Path, gpu: Option<u32>) -> MpsDirs {
    let digest = manifest::sha256_bytes(dir.to_string_lossy().as_bytes());
    let name = match gpu {
        None => format!("colloc-mps-{}", &digest[..12]),
        Some(i) => format!("colloc-mps-{}-gpu{i}", &digest[..12]),
    };
    let base = std::env::temp_dir().join(name);
    MpsDirs { pipe: base.join("pipe"), log: base.join("log") }
}

fn software(plan: &Plan, opts: &RunOptions) -> SoftwareInfo {
    let (git_commit, git_dirty) = match &opts.source_commit {
        Some((c, d)) => (Some(c.clone()), *d),
        None => std::env::current_dir()
            .ok()
            .and_then(|d| provenance::find_checkout(&d))
            .or_else(|| provenance::find_checkout(&opts.out))
            .or_else(|| std::env::current_exe().ok().and_then(|e| provenance::find_checkout(&e)))
            .map(|root| provenance::git_state(&root))
            .unwrap_or((None, None)),
    };
    SoftwareInfo {
        runner_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit,
        git_dirty,
        plan_hash: manifest::sha256_bytes(&serde_json::to_vec(plan).expect("plans serialise")),
        spec_hash: Some(plan.spec_hash.clone()),
        runner_sha256: std::env::current_exe().ok().and_then(|e| fs::read(e).ok()).map(|b| manifest::sha256_bytes(&b)),
        workload_files: provenance::workload_files(&opts.job_command),
        environment: None,
    }
}

/// A campaign directory made ready for runs made elsewhere (`--executor slurm`): locked,
/// its listed runs checked, its incomplete entries quarantined, the runs to make selected.
pub(crate) struct Prepared {
    pub dir: PathBuf,
    pub campaign: String,
    /// Run ids to make, in plan order (no baseline is added: the hosts are not known).
    pub todo: Vec<String>,
    /// The GPU model of the campaign's runs, when it has some (or the options say).
    pub gpu_model: Option<String>,
    pub summary: CampaignSummary,
    _lock: Lock,
}

pub(crate) fn prepare(plan: &Plan, opts: &RunOptions, progress: &Progress) -> Result<Prepared> {
    let o = open(plan, opts)?;
    let mut summary = o.summary;
    tidy(&o.dir, &o.listed, &mut summary, progress)?;
    let todo: Vec<String> = o.todo.into_iter().map(|t| t.run_id).collect();
    if !todo.is_empty() {
        check_versions(&o.dir, o.listed.len(), &o.metas, &software(plan, opts), opts.allow_mixed_versions, progress)?;
    }
    let gpu_model = campaign_gpu_model(&o.metas, opts.gpu_model.as_deref())?;
    Ok(Prepared { dir: o.dir, campaign: o.campaign, todo, gpu_model, summary, _lock: o.lock })
}

/// A campaign directory opened for runs: locked, its manifest read, the runs to make
/// selected, and (when there are any) the listed runs' `meta.json` read once.
struct Opened<'a> {
    dir: PathBuf,
    lock: Lock,
    campaign: String,
    listed: BTreeSet<String>,
    summary: CampaignSummary,
    todo: Vec<Todo<'a>>,
    metas: BTreeMap<String, RunMeta>,
}

fn open<'a>(plan: &'a Plan, opts: &RunOptions) -> Result<Opened<'a>> {
    opts.check()?;
    fs::create_dir_all(&opts.out).with_context(|| format!("cannot create {}", opts.out.display()))?;
    let dir = opts.out.canonicalize().with_context(|| format!("cannot resolve {}", opts.out.display()))?;
    let lock = lock(&dir)?;
    signals::install();
    let campaign = plan
        .campaign
        .clone()
        .unwrap_or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    let m = manifest::read(&dir).map_err(|e| anyhow!("{e}"))?;
    let listed = listed_runs(&m);
    check_only(plan, opts)?;
    let mut summary = CampaignSummary { campaign_dir: dir.clone(), ..Default::default() };
    let todo = select(plan, opts, &listed, &mut summary);
    // Read once; verified (by `tidy`) before anything runs (a mismatch stops the campaign).
    let metas = if todo.is_empty() { BTreeMap::new() } else { listed_metas(&dir, &listed) };
    Ok(Opened { dir, lock, campaign, listed, summary, todo, metas })
}

/// Incomplete entries of `runs/` to `quarantine/`, then the check of the listed runs.
fn tidy(dir: &Path, listed: &BTreeSet<String>, summary: &mut CampaignSummary, progress: &Progress) -> Result<()> {
    summary.quarantined = quarantine(dir, listed)?;
    for (from, to) in &summary.quarantined {
        progress.log(&format!("incomplete {} moved to {}", from.display(), to.display()));
    }
    check_listed_runs(dir)
}

/// Runs a plan's selected workloads into `opts.out`.
pub(crate) fn run_campaign(plan: &Plan, opts: &RunOptions) -> Result<CampaignSummary> {
    let started = std::time::Instant::now();
    let Opened { dir, lock: _lock, campaign, listed, mut summary, todo, metas } = open(plan, opts)?;
    let indices = opts.gpu_indices()?;
    let several = indices.len() > 1;
    let gpus = indices.iter().map(|&i| opts.backend(i, &plan.gpu)).collect::<Result<Vec<_>>>()?;
    let exec_modes = gpus[0].executes_mode_commands();
    if !todo.is_empty() {
        check_gpu_model(&dir, campaign_gpu_model(&metas, opts.gpu_model.as_deref())?.as_deref(), &gpus)?;
    }
    // The baselines a GPU lacks are measured just before the first run divided by them (so
    // an invocation that stops early, at its time budget, measures none it does not use); a
    // selected baseline that the plan puts later is made there instead of at its place, so
    // no run waits for a baseline that a stop could keep from being made on its host.
    let book = BaselineBook::new(&metas, &todo);
    let estimate: f64 = todo.iter().map(|t| t.workload.estimated_seconds).sum::<f64>() / gpus.len() as f64;
    let progress = Progress::new(opts.progress, todo.len(), estimate);

    // State left by earlier runners, then the runs already there.
    let dirs: Vec<MpsDirs> = indices.iter().map(|&i| mps_dirs(&dir, several.then_some(i))).collect();
    let leftovers = Arc::new(Leftovers::load(&dir)?);
    if exec_modes {
        clean_leftovers(&leftovers, opts, &dirs[0], &progress)?;
    }
    if opts.settle {
        for stale in remove_stale_settle_dirs(&std::env::temp_dir(), &process_alive) {
            progress.log(&format!("removed {}, left by a runner that is gone", stale.display()));
        }
    }
    tidy(&dir, &listed, &mut summary, &progress)?;
    let mut sw = software(plan, opts);
    if !todo.is_empty() {
        sw.environment = provenance::environment_check(&opts.job_command);
        check_environment(sw.environment.as_ref(), opts.strict_env, &progress)?;
        check_versions(&dir, listed.len(), &metas, &sw, opts.allow_mixed_versions, &progress)?;
    }

    for gpu in &gpus {
        if let Some(total) = gpu.memory_total() {
            let planned = plan.gpu.memory_gib * GIB;
            if (total as f64 - planned).abs() > 0.1 * planned {
                progress.log(&format!(
                    "warning: the plan targets {} ({:.0} GiB) but GPU {} is {} ({:.0} GiB)",
                    plan.gpu.name,
                    plan.gpu.memory_gib,
                    gpu.index(),
                    gpu.name(),
                    total as f64 / GIB
                ));
            }
        }
    }
    let on = gpus.iter().map(|g| format!("GPU {} ({}, {})", g.index(), g.name(), g.uuid())).collect::<Vec<_>>();
    progress.log(&format!(
        "campaign {campaign}: {} run(s) to make on {}, {} already done",
        todo.len(),
        on.join(", "),
        summary.already_done.len()
    ));

    let mut host = provenance::host_info();
    if !todo.is_empty() {
        let c = provenance::calibrate();
        progress.log(&format!(
            "host CPU calibration: {:.0} MiB/s on one thread, {:.0} MiB/s on {} threads ({:.2} s)",
            c.single_thread_mib_s, c.all_threads_mib_s, c.threads, c.seconds
        ));
        host.calibration = Some(c);
    }
    let shared = Shared {
        plan,
        total: AtomicUsize::new(todo.len()),
        units: Mutex::new(queue::units(todo)),
        book: opts.host_baselines.then_some(Mutex::new(book)),
        made: Mutex::new(Vec::new()),
        started_runs: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        stopped: Mutex::new(None),
        interrupted: AtomicBool::new(false),
        started,
    };
    let ours: Vec<PathBuf> = dirs.iter().map(|d| d.pipe.clone()).collect();
    let invocation = provenance::rfc3339(colloc_trace::wall_seconds());
    let results: Vec<Result<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = gpus
            .iter()
            .zip(&dirs)
            .map(|(gpu, mps_dirs)| {
                let common = Common {
                    plan,
                    opts,
                    dir: &dir,
                    campaign: &campaign,
                    progress: &progress,
                    leftovers: &leftovers,
                    host: &host,
                    software: &sw,
                    shared: &shared,
                    invocation: &invocation,
                    ours: &ours,
                    exec_modes,
                };
                scope.spawn(move || -> Result<f64> {
                    let r = gpu_worker(&common, gpu.as_ref(), mps_dirs, several);
                    if r.is_err() {
                        common.shared.stop.store(true, Ordering::SeqCst);
                    }
                    r
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("a GPU's worker panicked")))).collect()
    });
    progress.finish();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(cpu) => summary.sampler_cpu_seconds += cpu,
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let made = std::mem::take(&mut *shared.made.lock().unwrap_or_else(|p| p.into_inner()));
    let left = shared.total.load(Ordering::SeqCst).saturating_sub(made.len());
    summary.runs = made;
    summary.interrupted = shared.interrupted.load(Ordering::SeqCst);
    summary.stopped = shared.stopped.lock().unwrap_or_else(|p| p.into_inner()).take().map(|why| match why {
        Stop::Budget(text) => format!("time budget: {text}; {left} run(s) left: run again to go on"),
        Stop::Other(text) => text,
    });
    if let Some(e) = first_error {
        // Like one GPU's campaign: an error stops it, after every GPU's run in progress ended.
        if summary.runs.is_empty() || !several {
            return Err(e);
        }
        summary.stopped.get_or_insert_with(|| format!("{e:#}"));
    }
    Ok(summary)
}

/// What every GPU's worker is given.
struct Common<'a> {
    plan: &'a Plan,
    opts: &'a RunOptions,
    dir: &'a Path,
    campaign: &'a str,
    progress: &'a Progress,
    leftovers: &'a Arc<Leftovers>,
    host: &'a colloc_trace::meta::HostInfo,
    software: &'a SoftwareInfo,
    shared: &'a Shared<'a>,
    /// When this invocation started (RFC 3339 UTC): every run's `meta.json` → `invocation`.
    invocation: &'a str,
    /// The pipe directories of the campaign's MPS daemons (one per GPU).
    ours: &'a [PathBuf],
    exec_modes: bool,
}

/// One GPU: its job server (with `--preload`), then its share of the runs.
fn gpu_worker(c: &Common, gpu: &dyn Backend, mps_dirs: &MpsDirs, several: bool) -> Result<f64> {
    let progress = if several { c.progress.for_gpu(gpu.index()) } else { c.progress.clone() };
    let mut preload = None;
    if c.opts.preload && c.shared.total.load(Ordering::SeqCst) > 0 {
        let tag = if several { format!("-gpu{}", gpu.index()) } else { String::new() };
        let p = Preload::start(&c.opts.job_command, &c.opts.job_env, &std::env::temp_dir(), &tag)?;
        progress.log(&format!(
            "job server up: PyTorch and timm imported once in {:.1} s ({:.1} s to serve)",
            p.import_seconds, p.start_seconds
        ));
        preload = Some(p);
    }
    let env = Env {
        plan: c.plan,
        opts: c.opts,
        backend: gpu,
        campaign_dir: c.dir,
        campaign: c.campaign,
        progress: &progress,
        leftovers: c.leftovers,
        mps_dirs,
        host: c.host,
        software: c.software,
        job_command: preload.as_ref().map(Preload::job_command).unwrap_or_else(|| c.opts.job_command.clone()),
        preloaded: preload.is_some(),
        invocation: c.invocation,
    };
    work(&env, c.shared, c.ours, c.exec_modes, preload.as_mut())
}

/// The GPU model the campaign is made on: `expected`, else the model its runs record (the
/// first run's; runs of several models are an error naming them).
pub(crate) fn campaign_gpu_model(metas: &BTreeMap<String, RunMeta>, expected: Option<&str>) -> Result<Option<String>> {
    let models: BTreeSet<&str> = metas.values().filter_map(|m| m.gpu.as_ref()).map(|g| g.name.as_str()).collect();
    if models.len() > 1 {
        bail!(
            "the campaign's runs were made on several GPU models ({}); a campaign is made on one",
            models.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let found = models.into_iter().next();
    match (expected, found) {
        (Some(e), Some(f)) if e != f => bail!("the campaign's runs were made on {f}, not on {e}"),
        (Some(e), _) => Ok(Some(e.to_string())),
        (None, f) => Ok(f.map(str::to_string)),
    }
}

/// An error when a GPU is not the campaign's model: ratios and throughputs of two models do
/// not pool, so runs on another model go into a campaign directory of their own.
pub(crate) fn check_gpu_model(dir: &Path, model: Option<&str>, gpus: &[Box<dyn Backend>]) -> Result<()> {
    let first = model.map(str::to_string).or_else(|| gpus.first().map(|g| g.name().to_string()));
    for g in gpus {
        if let Some(m) = &first {
            if g.name() != m {
                bail!(
                    "GPU {} is {}, but the runs of {} are made on {m}: a campaign is made on one GPU model \
                     (ratios of two models do not pool); run on a GPU of that model, or into a new directory \
                     (`cargo xtask run --here` names one after the GPU), and compare the two with `cargo xtask compare`",
                    g.index(),
                    g.name(),
                    dir.display()
                );
            }
        }
    }
    Ok(())
}

/// An error for an `--only` pattern that selects no run of the plan.
fn check_only(plan: &Plan, opts: &RunOptions) -> Result<()> {
    for pat in &opts.only {
        let hit = plan.workloads.iter().any(|w| {
            (1..=w.repetitions.max(1)).any(|r| {
                let single = RunOptions { only: vec![pat.clone()], ..opts.clone() };
                single.selects(&w.id, &ids::run_id(&w.id, r, 1))
            })
        });
        if !hit {
            bail!("--only {pat}: no workload or run of the plan has this id");
        }
    }
    Ok(())
}

/// The selected runs still to make, in plan order (with `force`, new attempts of those made).
/// Counts the selection and the runs already done in `summary`.
fn select<'a>(
    plan: &'a Plan,
    opts: &RunOptions,
    listed: &BTreeSet<String>,
    summary: &mut CampaignSummary,
) -> Vec<Todo<'a>> {
    let mut todo = Vec::new();
    for w in &plan.workloads {
        for rep in 1..=w.repetitions {
            let base = ids::run_id(&w.id, rep, 1);
            if !opts.selects(&w.id, &base) {
                continue;
            }
            summary.selected += 1;
            let prefix = format!("{base}.a");
            let attempts: Vec<u32> = listed
                .iter()
                .filter_map(|d| if *d == base { Some(1) } else { d.strip_prefix(&prefix).and_then(|a| a.parse().ok()) })
                .collect();
            let attempt = match attempts.iter().max() {
                Some(_) if !opts.force => {
                    summary.already_done.push(base);
                    continue;
                }
                Some(max) => max + 1,
                None => 1,
            };
            todo.push(Todo {
                workload: w,
                repetition: rep,
                attempt,
                run_id: ids::run_id(&w.id, rep, attempt),
                added: None,
            });
        }
    }
    todo
}

/// The `meta.json` of each listed run, by run directory name; a run whose `meta.json` does
/// not parse is left out (verification, which follows, tells whether it was altered).
fn listed_metas(dir: &Path, listed: &BTreeSet<String>) -> BTreeMap<String, RunMeta> {
    listed
        .iter()
        .filter_map(|name| {
            let bytes = fs::read(dir.join(RUNS_DIR).join(name).join(layout::META)).ok()?;
            Some((name.clone(), serde_json::from_slice::<RunMeta>(&bytes).ok()?))
        })
        .collect()
}

/// What differs between the software that made a run (`then`) and this invocation's
/// (`now`): the source commit; with no commit or uncommitted changes on either side, the
/// runner binary; the runner's version; each file of the training program.
pub(crate) fn version_differences(then: &SoftwareInfo, now: &SoftwareInfo) -> Vec<String> {
    let mut out = Vec::new();
    let show = |c: &Option<String>| c.as_deref().map_or("unknown".to_string(), |c| c.chars().take(12).collect());
    if then.git_commit != now.git_commit {
        out.push(format!("source commit {} vs {} now", show(&then.git_commit), show(&now.git_commit)));
    } else if (then.git_commit.is_none() || then.git_dirty != Some(false) || now.git_dirty != Some(false))
        && then.runner_sha256 != now.runner_sha256
    {
        out.push(format!(
            "runner binary {} vs {} now (the commit alone does not identify it: uncommitted changes or none recorded)",
            show(&then.runner_sha256),
            show(&now.runner_sha256)
        ));
    }
    if then.runner_version != now.runner_version {
        out.push(format!("runner version {} vs {} now", then.runner_version, now.runner_version));
    }
    if then.workload_files.is_empty() && !now.workload_files.is_empty() {
        out.push("the training program's files were not recorded then".to_string());
    } else {
        let names: BTreeSet<&String> = then.workload_files.keys().chain(now.workload_files.keys()).collect();
        for name in names {
            match (then.workload_files.get(name), now.workload_files.get(name)) {
                (Some(a), Some(b)) if a != b => out.push(format!("{name} differs")),
                (Some(_), None) => out.push(format!("{name} is gone")),
                (None, Some(_)) => out.push(format!("{name} is new")),
                _ => {}
            }
        }
    }
    if let (Some(a), Some(b)) = (&then.environment, &now.environment) {
        let names: BTreeSet<&String> = a.here.keys().chain(b.here.keys()).collect();
        let show = |v: Option<&Option<String>>| match v {
            Some(Some(v)) => v.clone(),
            Some(None) => "not installed".to_string(),
            None => "not checked".to_string(),
        };
        for name in names {
            let (x, y) = (a.here.get(name), b.here.get(name));
            if x != y {
                out.push(format!("Python package {name} {} then, {} now", show(x), show(y)));
            }
        }
    }
    out
}

/// Says how the host's Python environment compares with the training program's lock, before
/// any GPU time is spent; with `strict`, a difference, a failed check or no lock at all
/// stops the invocation.
fn check_environment(env: Option<&EnvironmentCheck>, strict: bool, progress: &Progress) -> Result<()> {
    let problem = match env {
        None => Some("the training program has no environment check (envcheck.py beside its script)".to_string()),
        Some(EnvironmentCheck { lock, error: Some(why), .. }) => Some(format!("cannot check it against {lock}: {why}")),
        Some(EnvironmentCheck { lock, differs, .. }) if !differs.is_empty() => {
            Some(format!("it differs from {lock}:\n  {}", differs.join("\n  ")))
        }
        Some(EnvironmentCheck { lock, here, .. }) => {
            let versions: Vec<String> =
                here.iter().map(|(k, v)| format!("{k} {}", v.as_deref().unwrap_or("not installed"))).collect();
            progress.log(&format!("Python environment: as {lock} locks it ({})", versions.join(", ")));
            None
        }
    };
    match problem {
        Some(p) if strict => bail!("Python environment: {p}\n--strict-env refuses to run on it"),
        Some(p) if env.is_some() => {
            progress.log(&format!(
                "warning: Python environment: {p}\n(recorded in each run's meta.json; --strict-env refuses)"
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Refuses to add runs to a campaign made by another version of the runner or the training
/// program (unless `allow`, which only warns), naming what differs and for how many runs.
fn check_versions(
    dir: &Path,
    listed: usize,
    metas: &BTreeMap<String, RunMeta>,
    now: &SoftwareInfo,
    allow: bool,
    progress: &Progress,
) -> Result<()> {
    let mut differing: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for meta in metas.values() {
        let diff = version_differences(&meta.software, now);
        if !diff.is_empty() {
            *differing.entry(diff).or_insert(0) += 1;
        }
    }
    if differing.is_empty() {
        return Ok(());
    }
    let n: usize = differing.values().sum();
    let what: Vec<String> = differing.iter().map(|(d, k)| format!("  {k} run(s): {}", d.join("; "))).collect();
    let text = format!(
        "{} holds {n} of {} run(s) made by another version of the runner or the training program:\n{}",
        dir.display(),
        listed,
        what.join("\n")
    );
    if allow {
        progress.log(&format!("warning: {text}\nadding runs anyway (--allow-mixed-versions)"));
        return Ok(());
    }
    bail!("{text}\nA campaign is made by one version: run into a new directory, or pass --allow-mixed-versions to add runs anyway");
}

/// An error when a run listed in the manifest no longer matches it (listed runs are never
/// modified, so nothing may run).
fn check_listed_runs(dir: &Path) -> Result<()> {
    let problems: Vec<Problem> = verify_campaign(dir)?
        .into_iter()
        .filter(|p| match p {
            Problem::Missing(f) | Problem::Extra(f) => f.starts_with(&format!("{RUNS_DIR}/")),
            Problem::Altered { path, .. } | Problem::Unreadable { path, .. } | Problem::NotAFile { path, .. } => {
                path.starts_with(&format!("{RUNS_DIR}/"))
            }
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    let mut text: Vec<String> = problems.iter().take(20).map(|p| format!("  {p}")).collect();
    if problems.len() > 20 {
        text.push(format!("  ... and {} more", problems.len() - 20));
    }
    bail!(
        "{} does not match its {}; runs in the manifest are never modified, so nothing was run. \
         Restore the listed files (or move the affected run out of the campaign) and run again:\n{}",
        dir.display(),
        layout::MANIFEST,
        text.join("\n")
    );
}

/// Why the GPUs stopped before the selection's end.
enum Stop {
    /// A run could pass the time budget (the text names it; the count of runs left follows).
    Budget(String),
    Other(String),
}

/// What the GPUs of a campaign share while they work.
struct Shared<'a> {
    /// The plan the runs come from.
    plan: &'a Plan,
    /// The runs to make, in units a GPU takes whole.
    units: Mutex<VecDeque<Vec<Todo<'a>>>>,
    /// Runs to make: the selection and the baselines added to it.
    total: AtomicUsize,
    /// Which baselines each GPU has or is about to make (none with `--no-host-baselines`).
    book: Option<Mutex<BaselineBook>>,
    made: Mutex<Vec<RunOutcome>>,
    /// Runs begun, for the progress's `run N/M`.
    started_runs: AtomicUsize,
    /// Every GPU stops after its run in progress.
    stop: AtomicBool,
    /// The first reason to stop.
    stopped: Mutex<Option<Stop>>,
    interrupted: AtomicBool,
    started: std::time::Instant,
}

impl Shared<'_> {
    fn stop_all(&self, why: Stop) {
        self.stop.store(true, Ordering::SeqCst);
        self.stopped.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(why);
    }

    /// Stops this GPU only (the others may still fit theirs in the budget).
    fn stop_here(&self, why: Stop) {
        self.stopped.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(why);
    }
}

/// One GPU's share of the campaign: units from the queue, their runs one after another,
/// until none is left or something stops the campaign (a stop signal, a GPU others use, a
/// teardown that failed; the time budget stops this GPU only); then the interleaved
/// baselines' runs it still owes. Returns the telemetry sampler's CPU seconds.
fn work(env: &Env, shared: &Shared, ours: &[PathBuf], exec_modes: bool, preload: Option<&mut Preload>) -> Result<f64> {
    let gpu = env.backend;
    let mut w = Worker {
        env,
        shared,
        ours,
        exec_modes,
        preload,
        sampler_cpu: 0.0,
        made_here: 0,
        warmed: BTreeSet::new(),
        settled: Vec::new(),
        last: None,
    };
    let starts = |wl: &colloc_plan::PlannedWorkload| starts_here(wl, gpu).unwrap_or(true);
    let mut go_on = true;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            go_on = false;
            break;
        }
        let mut queue = shared.units.lock().unwrap_or_else(|p| p.into_inner());
        let Some(unit) = queue.pop_front() else { break };
        let first = unit[0].run_id.clone();
        let (runs, before, owed, checkpoint) = match &shared.book {
            Some(book) => {
                let mut book = book.lock().unwrap_or_else(|p| p.into_inner());
                let checkpoint = book.checkpoint();
                let mut runs = book.before(shared.plan, &unit, gpu.uuid(), &starts, &mut queue);
                let before = runs.len();
                runs.extend(unit);
                let runs = book.interleave(shared.plan, runs, gpu.uuid(), &starts, &mut queue);
                let owed = book.owed_seconds(shared.plan, gpu.uuid());
                (runs, before, owed, Some(checkpoint))
            }
            None => (unit, 0, 0.0, None),
        };
        drop(queue);
        if let Some(why) = unit_past_budget(&runs, gpu, env.opts, shared.started.elapsed(), w.made_here, owed)? {
            if let (Some(book), Some(c)) = (&shared.book, checkpoint) {
                book.lock().unwrap_or_else(|p| p.into_inner()).restore(c);
            }
            shared.stop_here(Stop::Budget(why));
            break;
        }
        for t in &runs {
            match &t.added {
                Some(why) => {
                    shared.total.fetch_add(1, Ordering::SeqCst);
                    env.progress.log(&format!("added {}: {why}", t.run_id));
                }
                None if runs[..before].iter().any(|b| b.run_id == t.run_id) => env.progress.log(&format!(
                    "moved forward {}: the baseline on this host of {first}, which comes first",
                    t.run_id
                )),
                None => {}
            }
        }
        if !w.make(&runs)? {
            go_on = false;
            break;
        }
    }
    // A stop signal or a fault ends the work at once; the end of the queue or of the time
    // budget leaves time for the interleaved baselines still owed (each unit left it).
    if go_on && !shared.interrupted.load(Ordering::SeqCst) {
        if let Some(book) = &shared.book {
            let after = w.last.clone().unwrap_or_default();
            let closing = book.lock().unwrap_or_else(|p| p.into_inner()).close(shared.plan, gpu.uuid(), &after);
            for t in &closing {
                shared.total.fetch_add(1, Ordering::SeqCst);
                env.progress.log(&format!("added {}: {}", t.run_id, t.added.as_deref().unwrap_or_default()));
            }
            w.make(&closing)?;
        }
    }
    Ok(w.sampler_cpu)
}

/// One GPU's state while it makes runs.
struct Worker<'e, 'a, 's, 'p> {
    env: &'e Env<'a>,
    shared: &'e Shared<'s>,
    ours: &'e [PathBuf],
    exec_modes: bool,
    preload: Option<&'p mut Preload>,
    sampler_cpu: f64,
    /// Runs this GPU has started in this invocation.
    made_here: usize,
    /// With `--settle`: the data this GPU has read in this invocation, and what the
    /// recorded runs say of the unrecorded runs made for it.
    warmed: BTreeSet<String>,
    settled: Vec<String>,
    /// The last run this GPU made.
    last: Option<String>,
}

impl Worker<'_, '_, '_, '_> {
    /// Makes `runs` one after another; `false` when the campaign (or this GPU, at its time
    /// budget) stops.
    fn make(&mut self, runs: &[Todo<'_>]) -> Result<bool> {
        let (env, shared, gpu, opts) = (self.env, self.shared, self.env.backend, self.env.opts);
        for t in runs {
            if signals::interrupted() {
                shared.interrupted.store(true, Ordering::SeqCst);
                shared.stop_all(Stop::Other(interrupt_text()));
                return Ok(false);
            }
            if shared.stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            if let Some(p) = self.preload.as_deref_mut() {
                if let Some(why) = p.ensure_running()? {
                    env.progress.log(&why);
                }
            }
            let will_start = starts_here(t.workload, gpu)?;
            if let Some(why) =
                past_budget(opts, shared.started.elapsed(), t.workload.estimated_seconds).filter(|_| will_start)
            {
                shared.stop_here(Stop::Budget(format!("{} {why}", t.run_id)));
                return Ok(false);
            }
            if will_start && !opts.allow_busy_gpu && self.exec_modes {
                let first = shared.started_runs.load(Ordering::SeqCst) == 0;
                let patience = if first { Duration::ZERO } else { Duration::from_secs(10) };
                let why = busy::reasons_after(gpu, self.ours, self.exec_modes, patience)?;
                if !why.is_empty() {
                    let text = format!(
                        "GPU {} is in use by others: {}; pass --allow-busy-gpu to run anyway (measurements will be disturbed)",
                        gpu.index(),
                        why.join("; ")
                    );
                    if first {
                        env.progress.finish();
                        bail!(text);
                    }
                    shared.stop_all(Stop::Other(text));
                    return Ok(false);
                }
            }
            let new_data: Vec<String> = match will_start && opts.settle {
                true => data_read(t.workload).into_iter().filter(|d| !self.warmed.contains(d)).collect(),
                false => Vec::new(),
            };
            if !new_data.is_empty() {
                self.warmed.extend(new_data);
                match settle(env, t, shared.started.elapsed())? {
                    Settled::Made(text) => self.settled.push(text),
                    Settled::NotMade(why) => env.progress.log(&why),
                    Settled::Interrupted(text) => {
                        shared.interrupted.store(true, Ordering::SeqCst);
                        shared.stop_all(Stop::Other(text));
                        return Ok(false);
                    }
                }
            }
            self.made_here += 1;
            let n = shared.started_runs.fetch_add(1, Ordering::SeqCst) + 1;
            let req = Request {
                workload: t.workload,
                repetition: t.repetition,
                attempt: t.attempt,
                run_id: t.run_id.clone(),
                n,
                total: shared.total.load(Ordering::SeqCst),
                added: t.added.clone(),
                settled: (!self.settled.is_empty()).then(|| self.settled.join("; ")),
            };
            let outcome = run::execute(env, &req).with_context(|| {
                format!(
                    "{}: the campaign stops; nothing of this run entered {}, and the next invocation moves what \
                     it left in {}/ to {QUARANTINE_DIR}/ and makes it again",
                    t.run_id,
                    layout::MANIFEST,
                    RUNS_DIR
                )
            })?;
            if will_start {
                self.last = Some(t.run_id.clone());
            }
            match outcome {
                Outcome::Finished { status, reason, fatal, sampler_cpu_seconds, .. } => {
                    self.sampler_cpu += sampler_cpu_seconds;
                    let outcome = RunOutcome { run_id: t.run_id.clone(), status, reason };
                    shared.made.lock().unwrap_or_else(|p| p.into_inner()).push(outcome);
                    if let Some(f) = fatal {
                        shared.stop_all(Stop::Other(format!("{}: {f}", t.run_id)));
                        return Ok(false);
                    }
                }
                Outcome::Interrupted { tmp, teardown_error } => {
                    shared.interrupted.store(true, Ordering::SeqCst);
                    let mut text =
                        format!("{}; the interrupted run's partial trace is in {}", interrupt_text(), tmp.display());
                    if let Some(e) = teardown_error {
                        text.push_str(&format!("; teardown failed: {e}"));
                    }
                    shared.stop_all(Stop::Other(text));
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

/// What came of `--settle`'s unrecorded run.
enum Settled {
    /// Made: what each recorded run of this GPU says of it (`meta.json` → `settled`).
    Made(String),
    /// Not made (with the first run it could pass the time budget): why.
    NotMade(String),
    /// A stop signal arrived during it.
    Interrupted(String),
}

/// A directory under the system's temporary directory, removed with what is in it when
/// dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn create(name: &str) -> Result<Scratch> {
        let path = std::env::temp_dir().join(name);
        if path.exists() {
            fs::remove_dir_all(&path).with_context(|| format!("cannot remove the stale {}", path.display()))?;
        }
        fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Scratch(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The data a workload's jobs read: `synthetic`, or each data set read from files.
fn data_read(w: &colloc_plan::PlannedWorkload) -> BTreeSet<String> {
    w.jobs
        .iter()
        .map(|j| match j.data.source {
            colloc_trace::jobfile::DataSource::Synthetic => "synthetic".to_string(),
            source => format!("{source:?} {} ({} of its images)", j.data.name, j.data.fraction),
        })
        .collect()
}

/// The name of a settling run's scratch directory, before `<pid>-gpu<index>`.
const SETTLE_PREFIX: &str = "colloc-settle-";

/// Removes the settling scratch directories under `tmp` whose runner (the pid in the name)
/// is no longer alive, as a killed runner leaves them; returns those removed. Anything else,
/// a symbolic link included, is left alone.
fn remove_stale_settle_dirs(tmp: &Path, alive: &dyn Fn(u32) -> Option<bool>) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for e in fs::read_dir(tmp).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(SETTLE_PREFIX)
            .and_then(|rest| rest.split_once("-gpu"))
            .filter(|(_, gpu)| !gpu.is_empty() && gpu.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let is_dir = fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir());
        if is_dir && alive(pid) == Some(false) && fs::remove_dir_all(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed.sort();
    removed
}

/// Whether process `pid` is alive; `None` where this system cannot tell (no `/proc`).
fn process_alive(pid: u32) -> Option<bool> {
    Path::new("/proc/self").exists().then(|| Path::new(&format!("/proc/{pid}")).exists())
}

/// `--settle`: makes run `t` once unrecorded, in a scratch directory removed after, before
/// this GPU's first run in the invocation on data it has not read yet in it, so that the
/// recorded runs do not meet a freshly started host's cold caches (the data set's pages,
/// the libraries, the GPU's first kernels); the first run on such a host can be 14-20%
/// slower where the data loaders are the limit. Its time counts in the time budget: it is
/// made only when it and `t` fit.
fn settle(env: &Env, t: &Todo, used: Duration) -> Result<Settled> {
    if let Some(why) = past_budget(env.opts, used, 2.0 * t.workload.estimated_seconds) {
        return Ok(Settled::NotMade(format!("not settling first: {} made twice {why}", t.run_id)));
    }
    let scratch = Scratch::create(&format!("{SETTLE_PREFIX}{}-gpu{}", std::process::id(), env.backend.index()))?;
    env.progress.log(&format!("settling: {} once unrecorded first (--settle)", t.run_id));
    let quiet = Progress::new(crate::options::ProgressMode::Quiet, 1, t.workload.estimated_seconds);
    let scratch_env = Env { campaign_dir: scratch.path(), progress: &quiet, ..env.clone() };
    let req = Request {
        workload: t.workload,
        repetition: t.repetition,
        attempt: t.attempt,
        run_id: t.run_id.clone(),
        n: 1,
        total: 1,
        added: None,
        settled: None,
    };
    let began = std::time::Instant::now();
    let outcome = run::execute(&scratch_env, &req).with_context(|| format!("settling with {}", t.run_id))?;
    let seconds = began.elapsed().as_secs_f64();
    match outcome {
        Outcome::Finished { status, reason, fatal, .. } => {
            if let Some(f) = fatal {
                bail!("settling with {}: {f}", t.run_id);
            }
            let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
            let text = format!("{} made once unrecorded first ({}{why}, {seconds:.1} s)", t.run_id, status.as_str());
            env.progress.log(&format!("settled: {text}"));
            Ok(Settled::Made(text))
        }
        Outcome::Interrupted { teardown_error, .. } => {
            let mut text = format!("{} while settling with {}", interrupt_text(), t.run_id);
            if let Some(e) = teardown_error {
                text.push_str(&format!("; teardown failed: {e}"));
            }
            Ok(Settled::Interrupted(text))
        }
    }
}

/// With a time budget: why work estimated at `estimated` seconds is not begun after `used`,
/// because with the margin it could end after the budget; `None` when it fits.
fn past_budget(opts: &RunOptions, used: Duration, estimated: f64) -> Option<String> {
    let budget = opts.time_budget?.as_secs_f64();
    let (needs, used) = (estimated * crate::options::BUDGET_MARGIN, used.as_secs_f64());
    (used + needs > budget).then(|| {
        format!(
            "(estimated {estimated:.0} s, with the margin {needs:.0} s) could end after the budget of {budget:.0} s ({used:.0} s used)"
        )
    })
}

/// With a time budget: why a unit of several runs that start here (its added baselines
/// and its own runs) is not begun, because together they could end after the budget.
/// `None` when they fit, when the unit has one such run (each run is checked on its own as
/// it comes), or when this GPU has started nothing yet, so that a unit larger than any
/// budget still makes progress run by run.
fn unit_past_budget(
    runs: &[Todo<'_>],
    gpu: &dyn Backend,
    opts: &RunOptions,
    used: Duration,
    made_here: usize,
    owed: f64,
) -> Result<Option<String>> {
    if opts.time_budget.is_none() || made_here == 0 {
        return Ok(None);
    }
    let mut starting = Vec::new();
    for t in runs {
        if starts_here(t.workload, gpu)? {
            starting.push(t);
        }
    }
    if starting.len() < 2 && owed == 0.0 {
        return Ok(None);
    }
    let Some(first) = starting.first() else { return Ok(None) };
    let estimated: f64 = starting.iter().map(|t| t.workload.estimated_seconds).sum::<f64>() + owed;
    let owing = if owed > 0.0 {
        format!(" (and {owed:.0} s for the interleaved baselines owed after them)")
    } else {
        String::new()
    };
    Ok(past_budget(opts, used, estimated).map(|why| {
        format!("{} and the {} run(s) made with it on one host{owing} {why}", first.run_id, starting.len() - 1)
    }))
}

fn interrupt_text() -> String {
    match signals::signal() {
        Some(s) => format!("interrupted by signal {s}"),
        None => "interrupted".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sw(commit: Option<&str>, dirty: Option<bool>, binary: &str, files: &[(&str, &str)]) -> SoftwareInfo {
        SoftwareInfo {
            runner_version: "0.1.0".into(),
            git_commit: commit.map(str::to_string),
            git_dirty: dirty,
            plan_hash: String::new(),
            spec_hash: None,
            runner_sha256: Some(binary.into()),
            workload_files: files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            environment: None,
        }
    }

    /// Only the settling directories of runners that are gone are removed: not a live
    /// runner's, not one whose liveness cannot be told, not a link, not other names.
    #[test]
    fn stale_settle_dirs_of_dead_runners_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let make = |name: &str| {
            let p = tmp.path().join(name);
            fs::create_dir_all(p.join("runs")).unwrap();
            fs::write(p.join("runs/x"), "x").unwrap();
            p
        };
        let dead = make("colloc-settle-41-gpu0");
        let dead1 = make("colloc-settle-41-gpu1");
        let live = make("colloc-settle-42-gpu0");
        let unknown = make("colloc-settle-43-gpu0");
        let others = [
            make("colloc-settle-41"),
            make("colloc-settle-41-gpu"),
            make("colloc-settle-x-gpu0"),
            make("other-41-gpu0"),
        ];
        let target = make("target");
        std::os::unix::fs::symlink(&target, tmp.path().join("colloc-settle-44-gpu0")).unwrap();
        let alive = |pid: u32| match pid {
            42 => Some(true),
            43 => None,
            _ => Some(false),
        };
        let removed = remove_stale_settle_dirs(tmp.path(), &alive);
        assert_eq!(removed, [dead.clone(), dead1.clone()]);
        assert!(!dead.exists() && !dead1.exists());
        assert!(live.exists() && unknown.exists() && others.iter().all(|p| p.exists()));
        assert!(target.join("runs/x").exists() && tmp.path().join("colloc-settle-44-gpu0").exists());
        assert!(remove_stale_settle_dirs(tmp.path(), &alive).is_empty());
        // This process is alive by /proc.
        assert_eq!(process_alive(std::process::id()), Some(true));
    }

    #[test]
    fn version_differences_name_what_differs() {
        let files = [("workloads/train.py", "1"), ("workloads/events.py", "2")];
        let a = sw(Some("abc"), Some(false), "x", &files);
        assert!(version_differences(&a, &a).is_empty());
        // A clean commit identifies the version: another binary of it is the same version.
        assert!(version_differences(&a, &sw(Some("abc"), Some(false), "y", &files)).is_empty());
        let d = version_differences(&a, &sw(Some("abd"), Some(false), "x", &files));
        assert_eq!(d, ["source commit abc vs abd now"]);
        // With uncommitted changes the binary counts.
        let d =
            version_differences(&sw(Some("abc"), Some(true), "x", &files), &sw(Some("abc"), Some(true), "y", &files));
        assert!(d.len() == 1 && d[0].starts_with("runner binary x vs y now"), "{d:?}");
        let d = version_differences(
            &a,
            &sw(Some("abc"), Some(false), "x", &[("workloads/train.py", "9"), ("workloads/new.py", "3")]),
        );
        assert_eq!(d, ["workloads/events.py is gone", "workloads/new.py is new", "workloads/train.py differs"]);
        let d = version_differences(&sw(Some("abc"), Some(false), "x", &[]), &a);
        assert_eq!(d, ["the training program's files were not recorded then"]);
        // The Python packages, where both invocations checked them.
        let env = |torch: Option<&str>| EnvironmentCheck {
            lock: "workloads/environment.lock".into(),
            here: [("timm".to_string(), Some("1.0".to_string())), ("torch".to_string(), torch.map(str::to_string))]
                .into(),
            ..Default::default()
        };
        let (mut then, mut now) = (a.clone(), a.clone());
        then.environment = Some(env(Some("2.11")));
        now.environment = Some(env(None));
        assert_eq!(version_differences(&then, &now), ["Python package torch 2.11 then, not installed now"]);
        now.environment = Some(env(Some("2.11")));
        assert!(version_differences(&then, &now).is_empty());
        now.environment = None;
        assert!(version_differences(&then, &now).is_empty(), "an unchecked side compares nothing");
    }

    /// A held lock refuses a second runner (after a few seconds' patience); one released
    /// within them is taken.
    #[test]
    fn the_campaign_lock_waits_briefly_then_refuses() {
        let d = tempfile::tempdir().unwrap();
        let held = lock(d.path()).unwrap();
        let t = std::time::Instant::now();
        let e = lock(d.path()).err().expect("the lock is held").to_string();
        assert!(e.contains("another runner is working on") && t.elapsed() >= Duration::from_secs(2), "{e}");
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        assert!(lock(d.path()).is_ok(), "released within the patience: taken");
        release.join().unwrap();
    }

    #[test]
    fn strict_env_refuses_a_difference_a_failed_check_and_no_check() {
        let quiet = Progress::new(crate::options::ProgressMode::Quiet, 0, 0.0);
        let matching = EnvironmentCheck {
            lock: "w/environment.lock".into(),
            here: [("torch".to_string(), Some("2.11".to_string()))].into(),
            ..Default::default()
        };
        let differing = EnvironmentCheck { differs: vec!["torch: 2.10 here, 2.11 locked".into()], ..matching.clone() };
        let failed = EnvironmentCheck { error: Some("no python3".into()), ..matching.clone() };
        for strict in [false, true] {
            assert!(check_environment(Some(&matching), strict, &quiet).is_ok());
        }
        for (env, says) in [
            (Some(&differing), "it differs from w/environment.lock:\n  torch: 2.10 here, 2.11 locked"),
            (Some(&failed), "cannot check it against w/environment.lock: no python3"),
            (None, "the training program has no environment check"),
        ] {
            assert!(check_environment(env, false, &quiet).is_ok());
            let e = check_environment(env, true, &quiet).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--strict-env refuses"), "{e}");
        }
    }
}
