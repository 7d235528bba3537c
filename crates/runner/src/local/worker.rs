//! One GPU's worker of the local executor: its job server (with `--preload`), then units from
//! the shared queue, their runs one after another, until none is left or something stops the
//! campaign (a stop signal, a GPU others use, a teardown that failed; the time budget stops
//! this GPU only); then the interleaved baselines' runs it still owes. Before each run that
//! starts jobs: the time budget, the busy-GPU check and, with `--settle`, the settling run.

use anyhow::{anyhow, bail, Context, Result};
use colloc_plan::{Plan, PlannedWorkload};
use colloc_trace::layout::{self, QUARANTINE_DIR, RUNS_DIR};
use colloc_trace::meta::{HostInfo, SoftwareInfo};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::shared::{Shared, Stop};
use crate::backend::Backend;
use crate::budget::{run_past_budget, unit_past_budget};
use crate::leftovers::Leftovers;
use crate::modes::{busy, MpsDirs};
use crate::options::RunOptions;
use crate::preload::Preload;
use crate::progress::Progress;
use crate::queue::{starts_here, Checkpoint, Todo};
use crate::run::{self, Env, Outcome, Request};
use crate::settle::Settling;
use crate::signals;
use crate::summary::RunOutcome;

/// What every GPU's worker is given.
pub(super) struct Setting<'a> {
    pub plan: &'a Plan,
    pub opts: &'a RunOptions,
    pub dir: &'a Path,
    pub campaign: &'a str,
    pub progress: &'a Progress,
    pub leftovers: &'a Arc<Leftovers>,
    pub host: &'a HostInfo,
    pub software: &'a SoftwareInfo,
    pub shared: &'a Shared<'a>,
    /// When this invocation started (RFC 3339 UTC): every run's `meta.json` → `invocation`.
    pub invocation: &'a str,
    /// The pipe directories of the campaign's MPS daemons (one per GPU).
    pub ours: &'a [PathBuf],
    /// Whether the MPS and MIG commands run.
    pub exec_modes: bool,
}

/// A worker per GPU, each on a thread of its own (`dirs`: each GPU's MPS directories); an
/// error on one GPU stops the others after their run in progress. Returns each worker's
/// telemetry sampler CPU seconds, or its error.
pub(super) fn run_all(s: &Setting, gpus: &[Box<dyn Backend>], dirs: &[MpsDirs], several: bool) -> Vec<Result<f64>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = gpus
            .iter()
            .zip(dirs)
            .map(|(gpu, mps_dirs)| {
                scope.spawn(move || -> Result<f64> {
                    let r = gpu_worker(s, gpu.as_ref(), mps_dirs, several);
                    if r.is_err() {
                        s.shared.stop.store(true, Ordering::SeqCst);
                    }
                    r
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("a GPU's worker panicked")))).collect()
    })
}

/// One GPU: its job server (with `--preload`), then its share of the runs.
fn gpu_worker(s: &Setting, gpu: &dyn Backend, mps_dirs: &MpsDirs, several: bool) -> Result<f64> {
    let progress = if several { s.progress.for_gpu(gpu.index()) } else { s.progress.clone() };
    let mut preload = job_server(s, gpu, several, &progress)?;
    let env = Env {
        plan: s.plan,
        opts: s.opts,
        backend: gpu,
        campaign_dir: s.dir,
        campaign: s.campaign,
        progress: &progress,
        leftovers: s.leftovers,
        mps_dirs,
        host: s.host,
        software: s.software,
        job_command: preload.as_ref().map(Preload::job_command).unwrap_or_else(|| s.opts.job_command.clone()),
        preloaded: preload.is_some(),
        invocation: s.invocation,
    };
    let worker = Worker {
        env: &env,
        shared: s.shared,
        ours: s.ours,
        exec_modes: s.exec_modes,
        preload: preload.as_mut(),
        sampler_cpu: 0.0,
        made_here: 0,
        settling: Settling::default(),
        last: None,
    };
    worker.work()
}

/// With `--preload` and runs to make: this GPU's job server, started.
fn job_server(s: &Setting, gpu: &dyn Backend, several: bool, progress: &Progress) -> Result<Option<Preload>> {
    if !s.opts.preload || s.shared.total.load(Ordering::SeqCst) == 0 {
        return Ok(None);
    }
    let tag = if several { format!("-gpu{}", gpu.index()) } else { String::new() };
    let p = Preload::start(&s.opts.job_command, &s.opts.job_env, &std::env::temp_dir(), &tag)?;
    progress.log(&format!(
        "job server up: PyTorch and timm imported once in {:.1} s ({:.1} s to serve)",
        p.import_seconds, p.start_seconds
    ));
    Ok(Some(p))
}

/// A unit taken from the queue, as this GPU makes it.
struct Unit<'a> {
    /// The first run of the unit as queued.
    first: String,
    /// Its runs in order: the baselines this GPU lacks, then the unit's own runs with the
    /// interleaved baselines among them.
    runs: Vec<Todo<'a>>,
    /// How many of `runs` were moved before the unit's own.
    before: usize,
    /// Seconds of the interleaved baselines owed after the unit.
    owed: f64,
    /// The book as it was before the unit was taken, to restore when it is not begun.
    checkpoint: Option<Checkpoint>,
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
    /// With `--settle`: the data this GPU has read in this invocation, and the unrecorded
    /// runs made for it.
    settling: Settling,
    /// The last run this GPU made.
    last: Option<String>,
}

impl<'s> Worker<'_, '_, 's, '_> {
    /// This GPU's share of the campaign, then the interleaved baselines it owes. Returns the
    /// telemetry sampler's CPU seconds.
    fn work(mut self) -> Result<f64> {
        let go_on = self.units()?;
        // A stop signal or a fault ends the work at once; the end of the queue or of the time
        // budget leaves time for the interleaved baselines still owed (each unit left it).
        if go_on && !self.shared.interrupted.load(Ordering::SeqCst) {
            self.close()?;
        }
        Ok(self.sampler_cpu)
    }

    /// Units from the queue until none is left (`true`), the time budget stops this GPU
    /// (`true`) or the campaign stops (`false`).
    fn units(&mut self) -> Result<bool> {
        let (shared, gpu, opts) = (self.shared, self.env.backend, self.env.opts);
        loop {
            if shared.stop.load(Ordering::SeqCst) {
                return Ok(false);
            }
            let Some(unit) = self.next_unit() else { return Ok(true) };
            let used = shared.started.elapsed();
            if let Some(why) = unit_past_budget(&unit.runs, gpu, opts, used, self.made_here, unit.owed)? {
                if let (Some(book), Some(c)) = (&shared.book, unit.checkpoint) {
                    book.lock().unwrap_or_else(|p| p.into_inner()).restore(c);
                }
                shared.stop_here(Stop::Budget(why));
                return Ok(true);
            }
            self.announce(&unit);
            if !self.make(&unit.runs)? {
                return Ok(false);
            }
        }
    }

    /// The next unit of the queue; where each host measures its baselines, with those this
    /// GPU lacks before it and the interleaved ones among its runs.
    fn next_unit(&self) -> Option<Unit<'s>> {
        let (shared, gpu) = (self.shared, self.env.backend);
        let starts = |wl: &PlannedWorkload| starts_here(wl, gpu).unwrap_or(true);
        let mut queue = shared.units.lock().unwrap_or_else(|p| p.into_inner());
        let unit = queue.pop_front()?;
        let first = unit[0].run_id.clone();
        let Some(book) = &shared.book else {
            return Some(Unit { first, runs: unit, before: 0, owed: 0.0, checkpoint: None });
        };
        let mut book = book.lock().unwrap_or_else(|p| p.into_inner());
        let checkpoint = book.checkpoint();
        let mut runs = book.before(shared.plan, &unit, gpu.uuid(), &starts, &mut queue);
        let before = runs.len();
        runs.extend(unit);
        let runs = book.interleave(shared.plan, runs, gpu.uuid(), &starts, &mut queue);
        let owed = book.owed_seconds(shared.plan, gpu.uuid());
        Some(Unit { first, runs, before, owed, checkpoint: Some(checkpoint) })
    }

    /// Says which runs the unit added (baselines) and which it moved forward.
    fn announce(&self, unit: &Unit) {
        let progress = self.env.progress;
        for t in &unit.runs {
            match &t.added {
                Some(why) => {
                    self.shared.total.fetch_add(1, Ordering::SeqCst);
                    progress.log(&format!("added {}: {why}", t.run_id));
                }
                None if unit.runs[..unit.before].iter().any(|b| b.run_id == t.run_id) => progress.log(&format!(
                    "moved forward {}: the baseline on this host of {}, which comes first",
                    t.run_id, unit.first
                )),
                None => {}
            }
        }
    }

    /// The interleaved baselines this GPU still owes after its last run.
    fn close(&mut self) -> Result<()> {
        let shared = self.shared;
        let Some(book) = &shared.book else { return Ok(()) };
        let after = self.last.clone().unwrap_or_default();
        let uuid = self.env.backend.uuid();
        let closing = book.lock().unwrap_or_else(|p| p.into_inner()).close(shared.plan, uuid, &after);
        for t in &closing {
            shared.total.fetch_add(1, Ordering::SeqCst);
            self.env.progress.log(&format!("added {}: {}", t.run_id, t.added.as_deref().unwrap_or_default()));
        }
        self.make(&closing)?;
        Ok(())
    }

    /// Makes `runs` one after another; `false` when the campaign (or this GPU, at its time
    /// budget) stops.
    fn make(&mut self, runs: &[Todo<'_>]) -> Result<bool> {
        for t in runs {
            if !self.make_one(t)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Makes run `t`; `false` when the campaign (or this GPU) stops instead.
    fn make_one(&mut self, t: &Todo<'_>) -> Result<bool> {
        let (env, shared) = (self.env, self.shared);
        if signals::interrupted() {
            shared.interrupt(signals::interrupt_text());
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
        let will_start = starts_here(t.workload, env.backend)?;
        if will_start && !self.may_start(t)? {
            return Ok(false);
        }
        self.made_here += 1;
        let outcome = self.execute(t)?;
        if will_start {
            self.last = Some(t.run_id.clone());
        }
        Ok(self.record(t, outcome))
    }

    /// Whether run `t`, which starts jobs on this GPU, may begin: within the time budget, on
    /// a GPU no one else uses, after its settling run where one is due. `false` stops this
    /// GPU (at the time budget) or the campaign.
    fn may_start(&mut self, t: &Todo<'_>) -> Result<bool> {
        let (env, shared, opts) = (self.env, self.shared, self.env.opts);
        let (used, estimated) = (shared.started.elapsed(), t.workload.estimated_seconds);
        if let Some(why) = run_past_budget(opts, used, estimated, t.added.is_some()) {
            shared.stop_here(Stop::Budget(format!("{} {why}", t.run_id)));
            return Ok(false);
        }
        if !opts.allow_busy_gpu && self.exec_modes && !self.gpu_free()? {
            return Ok(false);
        }
        if opts.settle {
            if let Some(text) = self.settling.before(env, t, shared.started.elapsed())? {
                shared.interrupt(text);
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether no one else uses the GPU (after the invocation's first run, waiting up to 10 s
    /// for what the last run left to go). A GPU in use is an error before the invocation's
    /// first run, and stops the campaign after it.
    fn gpu_free(&self) -> Result<bool> {
        let (env, shared, gpu) = (self.env, self.shared, self.env.backend);
        let first = shared.started_runs.load(Ordering::SeqCst) == 0;
        let patience = if first { Duration::ZERO } else { Duration::from_secs(10) };
        let why = busy::reasons_after(gpu, self.ours, self.exec_modes, patience)?;
        if why.is_empty() {
            return Ok(true);
        }
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
        Ok(false)
    }

    /// Makes run `t` and writes its trace; an error stops the campaign.
    fn execute(&self, t: &Todo<'_>) -> Result<Outcome> {
        let shared = self.shared;
        let n = shared.started_runs.fetch_add(1, Ordering::SeqCst) + 1;
        let req = Request {
            workload: t.workload,
            repetition: t.repetition,
            attempt: t.attempt,
            run_id: t.run_id.clone(),
            n,
            total: shared.total.load(Ordering::SeqCst),
            added: t.added.clone(),
            settled: self.settling.note(),
        };
        run::execute(self.env, &req).with_context(|| {
            format!(
                "{}: the campaign stops; nothing of this run entered {}, and the next invocation moves what \
                 it left in {}/ to {QUARANTINE_DIR}/ and makes it again",
                t.run_id,
                layout::MANIFEST,
                RUNS_DIR
            )
        })
    }

    /// Counts what came of run `t`; `false` when it stops the campaign (a teardown that
    /// failed, a stop signal).
    fn record(&mut self, t: &Todo<'_>, outcome: Outcome) -> bool {
        let shared = self.shared;
        match outcome {
            Outcome::Finished { status, reason, fatal, sampler_cpu_seconds, .. } => {
                self.sampler_cpu += sampler_cpu_seconds;
                shared.add_made(RunOutcome { run_id: t.run_id.clone(), status, reason });
                if let Some(f) = fatal {
                    shared.stop_all(Stop::Other(format!("{}: {f}", t.run_id)));
                    return false;
                }
                true
            }
            Outcome::Interrupted { tmp, teardown_error } => {
                let mut text = format!(
                    "{}; the interrupted run's partial trace is in {}",
                    signals::interrupt_text(),
                    tmp.display()
                );
                if let Some(e) = teardown_error {
                    text.push_str(&format!("; teardown failed: {e}"));
                }
                shared.interrupt(text);
                false
            }
        }
    }
}
