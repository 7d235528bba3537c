//! `--executor slurm`: the campaign's pending runs as a Slurm job array, one task per run and
//! one whole GPU each (`--gres=gpu:1`), the files being the truth (no accounting database is
//! needed).
//!
//! Under the campaign directory, `.slurm/` holds the submitter's state: `plan.json` and
//! `options.json` (what every task runs with), one `batch-<n>.sh` and `tasks-<n>.txt` (a run id
//! per array index) per submitted array, `submissions.jsonl` (array job ids), the tasks'
//! output in `logs/`, and one stage directory per task, `stage/<run id>/`: a campaign of one
//! run that the task makes with the ordinary runner, then `.task-started.json` and
//! `.task-exit.json` (exit code, times) that its batch script writes atomically. The submitting process alone
//! writes the campaign's `SHA256SUMS`: it moves each staged run whose stage verifies into
//! `runs/` and adds it. `squeue` is only a liveness probe: a task gone from the queue without
//! an exit record after a grace period is lost, and a task that ended without a complete run
//! (cancelled, timed out, lost) leaves its stage in `quarantine/`; the next invocation makes
//! exactly those runs again. An invocation finds the arrays of an earlier one by their job
//! ids and waits for their tasks instead of submitting them again.
//!
//! * [`script`]: the job name, a task's time limit, the batch script.
//! * [`records`]: the files under `.slurm/`.
//! * [`squeue`]: what Slurm's queue and configuration say.
//! * [`merge`]: finished tasks' stages merged into the campaign or quarantined.
//! * [`task`]: the task side, a campaign of one run in its stage directory.

mod merge;
mod records;
mod script;
mod squeue;
mod task;

use anyhow::{bail, Context, Result};
use colloc_plan::Plan;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::command::Cmd;
use crate::executor::Executor;
use crate::options::{RunOptions, SlurmOptions};
use crate::prepare::{self, Opened};
use crate::progress::Progress;
use crate::signals;
use crate::summary::CampaignSummary;

use records::{Submission, EXIT_RECORD, SLURM_DIR};
pub(crate) use task::task_options;

/// The tasks in Slurm's queue: run id → (array job id, index).
type InFlight = BTreeMap<String, (String, usize)>;

/// The runs made by a Slurm job array.
pub(crate) struct Slurm(pub SlurmOptions);

impl Executor for Slurm {
    fn check(&self, opts: &RunOptions) -> Result<()> {
        if opts.force {
            bail!(
                "--force with --executor slurm is not supported: make new attempts on a GPU host with --executor local"
            );
        }
        if opts.gpus.is_some() {
            bail!("--gpus with --executor slurm: each task gets one GPU from Slurm; leave --gpus out");
        }
        Ok(())
    }

    fn make<'a>(&self, plan: &'a Plan, opts: &RunOptions, campaign: Opened<'a>) -> Result<CampaignSummary> {
        let progress = Progress::new(opts.progress, 0, 0.0);
        let Opened { dir, lock: _lock, campaign, listed, mut summary, todo, metas, .. } = campaign;
        prepare::tidy(&dir, &listed, &mut summary, &progress)?;
        let todo: Vec<String> = todo.into_iter().map(|t| t.run_id).collect();
        if !todo.is_empty() {
            let now = prepare::software(plan, opts);
            prepare::check_versions(&dir, listed.len(), &metas, &now, opts.allow_mixed_versions, &progress)?;
        }
        // Every task makes its run on the campaign's GPU model (the first merged run sets it).
        let mut gpu_model = prepare::campaign_gpu_model(&metas.read, opts.gpu_model.as_deref())?;
        let s = Submitter {
            plan,
            opts,
            slurm: &self.0,
            sdir: dir.join(SLURM_DIR),
            name: script::job_name(plan, &dir),
            dir: &dir,
            progress: &progress,
        };

        // What earlier invocations submitted and is still in the queue; the stages of tasks
        // that ended, merged or quarantined to be made again.
        let submissions = records::read_submissions(&s.sdir)?;
        let mut in_flight = s.in_flight(&submissions)?;
        if !s.slurm.dry_run {
            merge::merge_finished(&dir, &mut summary, &in_flight, &mut gpu_model, &progress)?;
        }
        let done_now: BTreeSet<&str> = summary.runs.iter().map(|r| r.run_id.as_str()).collect();
        let pending: Vec<&str> =
            todo.iter().map(String::as_str).filter(|r| !in_flight.contains_key(*r) && !done_now.contains(r)).collect();
        progress.log(&format!(
            "campaign {campaign}: {} run(s) to submit to Slurm as `{}`, {} still in its queue from an earlier invocation, {} already done",
            pending.len(),
            s.name,
            in_flight.len(),
            summary.already_done.len()
        ));
        s.submit(&pending, submissions.len(), gpu_model.as_deref(), &mut in_flight)?;
        if s.slurm.dry_run {
            return Ok(summary);
        }
        s.wait(in_flight, &mut summary, &mut gpu_model)?;
        if !summary.lost.is_empty() && summary.stopped.is_none() {
            summary.stopped = Some(format!(
                "{} task(s) ended without a complete run (cancelled, timed out or lost): {}; run again to make them",
                summary.lost.len(),
                summary.lost.join(", ")
            ));
        }
        progress.finish();
        Ok(summary)
    }
}

/// A campaign's side of Slurm in this invocation.
struct Submitter<'a> {
    plan: &'a Plan,
    opts: &'a RunOptions,
    slurm: &'a SlurmOptions,
    dir: &'a Path,
    /// The submitter's directory, `.slurm/`.
    sdir: PathBuf,
    /// The job name of the campaign's arrays.
    name: String,
    progress: &'a Progress,
}

impl Submitter<'_> {
    /// The runs of `submissions` whose tasks are still in Slurm's queue (none on a dry run).
    fn in_flight(&self, submissions: &[Submission]) -> Result<InFlight> {
        let queued = if self.slurm.dry_run { BTreeSet::new() } else { squeue::queued_tasks(&self.name)? };
        let mut in_flight = InFlight::new();
        for s in submissions {
            for (i, run) in s.runs.iter().enumerate() {
                if queued.contains(&(s.job_id.clone(), i)) {
                    in_flight.insert(run.clone(), (s.job_id.clone(), i));
                }
            }
        }
        Ok(in_flight)
    }

    /// Submits the `pending` runs as arrays below the cluster's largest (`earlier` arrays were
    /// submitted before), after writing the plan and options the tasks run with (each on
    /// `gpu_model`); on a dry run, prints each batch script and `sbatch` line instead.
    fn submit(
        &self,
        pending: &[&str],
        earlier: usize,
        gpu_model: Option<&str>,
        in_flight: &mut InFlight,
    ) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        if !self.slurm.dry_run {
            let sdir = &self.sdir;
            fs::create_dir_all(sdir.join("logs")).with_context(|| format!("cannot create {}", sdir.display()))?;
            records::write_json(&sdir.join("plan.json"), self.plan)?;
            let mut task_opts = self.opts.clone();
            task_opts.gpu_model = gpu_model.map(str::to_string);
            records::write_json(&sdir.join("options.json"), &task_opts)?;
        }
        let max_array = if self.slurm.dry_run { 1001 } else { squeue::max_array_size() };
        let chunk = max_array.saturating_sub(1).max(1);
        for (k, part) in pending.chunks(chunk).enumerate() {
            if let Some(job_id) = self.submit_array(earlier + k + 1, part)? {
                for (i, r) in part.iter().enumerate() {
                    in_flight.insert(r.to_string(), (job_id.clone(), i));
                }
            }
        }
        Ok(())
    }

    /// Submits array `n` of the runs `part`; returns its job id (`None` on a dry run, which
    /// prints the batch script and the `sbatch` line).
    fn submit_array(&self, n: usize, part: &[&str]) -> Result<Option<String>> {
        let (sdir, slurm) = (&self.sdir, self.slurm);
        let limit = script::time_limit(self.plan, self.opts, slurm, part);
        let text = script::batch_script(self.dir, sdir, n, &self.name, part, slurm, limit)?;
        let tasks = sdir.join(format!("tasks-{n}.txt"));
        let script_path = sdir.join(format!("batch-{n}.sh"));
        let array = match slurm.max_parallel {
            Some(p) => format!("0-{}%{p}", part.len() - 1),
            None => format!("0-{}", part.len() - 1),
        };
        if slurm.dry_run {
            println!("# {}\n{text}", script_path.display());
            println!("sbatch --parsable --array={array} {}", script_path.display());
            return Ok(None);
        }
        fs::write(&tasks, part.join("\n") + "\n").with_context(|| format!("cannot write {}", tasks.display()))?;
        fs::write(&script_path, &text).with_context(|| format!("cannot write {}", script_path.display()))?;
        let out = Cmd::new(
            "sbatch",
            &["--parsable", &format!("--array={array}"), &script_path.to_string_lossy()],
            Duration::from_secs(60),
        )
        .run()?;
        if !out.success {
            bail!("sbatch refused the array of {} run(s): {}", part.len(), out.text());
        }
        let job_id = out.stdout.trim().split(';').next().unwrap_or("").to_string();
        if job_id.is_empty() || !job_id.chars().all(|c| c.is_ascii_digit()) {
            bail!("sbatch printed no job id: {}", out.text());
        }
        let s = Submission { job_id: job_id.clone(), runs: part.iter().map(|r| r.to_string()).collect() };
        records::append_submission(sdir, &s)?;
        self.progress.log(&format!(
            "submitted {} run(s) as job array {job_id} ({array}, {} min per task)",
            part.len(),
            limit.as_secs().div_ceil(60)
        ));
        Ok(Some(job_id))
    }

    /// Waits for the tasks `in_flight`, merging each that ended; a task gone from the queue
    /// without an exit record for `lost_after` is lost. A stop signal leaves the tasks in the
    /// queue, for the next invocation.
    fn wait(
        &self,
        mut in_flight: InFlight,
        summary: &mut CampaignSummary,
        gpu_model: &mut Option<String>,
    ) -> Result<()> {
        let mut gone_since: BTreeMap<String, Instant> = BTreeMap::new();
        while !in_flight.is_empty() {
            if signals::interrupted() {
                summary.interrupted = true;
                summary.stopped = Some(format!(
                    "interrupted while waiting; {} task(s) stay in Slurm's queue, and the next invocation waits for them and merges their runs",
                    in_flight.len()
                ));
                break;
            }
            std::thread::sleep(self.slurm.poll);
            let ended = self.ended(&in_flight, &mut gone_since)?;
            let before = summary.runs.len();
            for run in ended {
                in_flight.remove(&run);
                merge::merge_one(self.dir, &run, summary, gpu_model, self.progress)?;
            }
            if summary.runs.len() != before {
                self.progress.log(&format!("{} task(s) in Slurm's queue", in_flight.len()));
            }
        }
        Ok(())
    }

    /// The tasks of `in_flight` that ended: with an exit record, or gone from the queue for
    /// `lost_after` (`gone_since`: when each was first found gone).
    fn ended(&self, in_flight: &InFlight, gone_since: &mut BTreeMap<String, Instant>) -> Result<Vec<String>> {
        let queued = squeue::queued_tasks(&self.name)?;
        let mut ended = Vec::new();
        for (run, task) in in_flight {
            if records::stage_dir(self.dir, run).join(EXIT_RECORD).exists() {
                ended.push(run.clone());
            } else if !queued.contains(task) {
                let since = *gone_since.entry(run.clone()).or_insert_with(Instant::now);
                if since.elapsed() >= self.slurm.lost_after {
                    ended.push(run.clone());
                }
            }
        }
        Ok(ended)
    }
}
