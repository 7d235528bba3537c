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

use anyhow::{anyhow, bail, Context, Result};
use colloc_plan::Plan;
use colloc_trace::layout::{self, RUNS_DIR};
use colloc_trace::manifest;
use colloc_trace::meta::RunMeta;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::campaign::{self, CampaignSummary, RunOutcome};
use crate::command::Cmd;
use crate::options::{RunOptions, SlurmOptions};
use crate::progress::Progress;
use crate::signals;

/// A task's records in its stage directory (dot-files, which no manifest lists).
const EXIT_RECORD: &str = ".task-exit.json";

/// The submitter's directory in a campaign directory.
pub(crate) const SLURM_DIR: &str = ".slurm";

/// A submitted array: its job id and the run id of each array index.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Submission {
    job_id: String,
    runs: Vec<String>,
}

/// What a task's batch script writes when the runner has exited.
#[derive(Debug, Clone, Deserialize)]
struct ExitRecord {
    exit_code: i32,
}

/// Runs a plan's selected runs through Slurm.
pub(crate) fn run(plan: &Plan, opts: &RunOptions, slurm: &SlurmOptions) -> Result<CampaignSummary> {
    if opts.force {
        bail!("--force with --executor slurm is not supported: make new attempts on a GPU host with --executor local");
    }
    if opts.gpus.is_some() {
        bail!("--gpus with --executor slurm: each task gets one GPU from Slurm; leave --gpus out");
    }
    let progress = Progress::new(opts.progress, 0, 0.0);
    let prep = campaign::prepare(plan, opts, &progress)?;
    let dir = prep.dir.clone();
    let sdir = dir.join(SLURM_DIR);
    let mut summary = prep.summary;
    // Every task makes its run on the campaign's GPU model (the first merged run sets it).
    let mut gpu_model = prep.gpu_model.clone();
    let name = job_name(plan, &dir);

    // What earlier invocations submitted and is still in the queue.
    let submissions = read_submissions(&sdir)?;
    let queued = if slurm.dry_run { BTreeSet::new() } else { queued_tasks(&name)? };
    let mut in_flight: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for s in &submissions {
        for (i, run) in s.runs.iter().enumerate() {
            if queued.contains(&(s.job_id.clone(), i)) {
                in_flight.insert(run.clone(), (s.job_id.clone(), i));
            }
        }
    }
    // Stages of tasks that ended: merged, or quarantined to be made again.
    if !slurm.dry_run {
        merge_finished(&dir, &mut summary, &in_flight, &mut gpu_model, &progress)?;
    }

    let done_now: BTreeSet<String> = summary.runs.iter().map(|r| r.run_id.clone()).collect();
    let pending: Vec<&str> = prep
        .todo
        .iter()
        .map(|t| t.as_str())
        .filter(|r| !in_flight.contains_key(*r) && !done_now.contains(*r))
        .collect();
    progress.log(&format!(
        "campaign {}: {} run(s) to submit to Slurm as `{name}`, {} still in its queue from an earlier invocation, {} already done",
        prep.campaign,
        pending.len(),
        in_flight.len(),
        summary.already_done.len()
    ));

    if !pending.is_empty() && !slurm.dry_run {
        fs::create_dir_all(sdir.join("logs")).with_context(|| format!("cannot create {}", sdir.display()))?;
        write_json(&sdir.join("plan.json"), plan)?;
        let mut task_opts = opts.clone();
        task_opts.gpu_model = gpu_model.clone();
        write_json(&sdir.join("options.json"), &task_opts)?;
    }
    if !pending.is_empty() {
        let max_array = if slurm.dry_run { 1001 } else { max_array_size() };
        let chunk = max_array.saturating_sub(1).max(1);
        for (k, part) in pending.chunks(chunk).enumerate() {
            let n = submissions.len() + k + 1;
            let limit = time_limit(plan, opts, slurm, part);
            let script = batch_script(&dir, &sdir, n, &name, part, slurm, limit)?;
            let tasks = sdir.join(format!("tasks-{n}.txt"));
            let script_path = sdir.join(format!("batch-{n}.sh"));
            let array = match slurm.max_parallel {
                Some(p) => format!("0-{}%{p}", part.len() - 1),
                None => format!("0-{}", part.len() - 1),
            };
            if slurm.dry_run {
                println!("# {}\n{script}", script_path.display());
                println!("sbatch --parsable --array={array} {}", script_path.display());
                continue;
            }
            fs::write(&tasks, part.join("\n") + "\n").with_context(|| format!("cannot write {}", tasks.display()))?;
            fs::write(&script_path, &script).with_context(|| format!("cannot write {}", script_path.display()))?;
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
            append_submission(&sdir, &s)?;
            progress.log(&format!(
                "submitted {} run(s) as job array {job_id} ({array}, {} min per task)",
                part.len(),
                limit.as_secs().div_ceil(60)
            ));
            for (i, r) in part.iter().enumerate() {
                in_flight.insert(r.to_string(), (job_id.clone(), i));
            }
        }
    }
    if slurm.dry_run {
        return Ok(summary);
    }

    // Wait: merge each finished task; a task gone from the queue without an exit record is lost.
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
        std::thread::sleep(slurm.poll);
        let queued = queued_tasks(&name)?;
        let before = summary.runs.len();
        let mut ended = Vec::new();
        for (run, task) in &in_flight {
            let stage = stage_dir(&dir, run);
            if stage.join(EXIT_RECORD).exists() {
                ended.push(run.clone());
            } else if !queued.contains(task) {
                let since = *gone_since.entry(run.clone()).or_insert_with(Instant::now);
                if since.elapsed() >= slurm.lost_after {
                    ended.push(run.clone());
                }
            }
        }
        for run in ended {
            in_flight.remove(&run);
            merge_one(&dir, &run, &mut summary, &mut gpu_model, &progress)?;
        }
        if summary.runs.len() != before {
            progress.log(&format!("{} task(s) in Slurm's queue", in_flight.len()));
        }
    }
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

/// The job name of a campaign's arrays: its name and a hash of its directory.
fn job_name(plan: &Plan, dir: &Path) -> String {
    let digest = manifest::sha256_bytes(dir.to_string_lossy().as_bytes());
    let campaign: String = plan
        .campaign
        .as_deref()
        .unwrap_or("campaign")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    format!("colloc-{campaign}-{}", &digest[..8])
}

fn stage_dir(dir: &Path, run: &str) -> PathBuf {
    dir.join(SLURM_DIR).join("stage").join(run)
}

/// A task's time limit: the given one, or twice the longest planned run (on the simulated
/// backend, in its real seconds) and a minute, in whole minutes.
fn time_limit(plan: &Plan, opts: &RunOptions, slurm: &SlurmOptions, runs: &[&str]) -> Duration {
    if let Some(t) = slurm.time_per_run {
        return t;
    }
    let scale = opts.simulate.as_ref().map_or(1.0, |s| s.time_scale);
    let longest = runs
        .iter()
        .filter_map(|r| colloc_trace::ids::parse_run_id(r))
        .filter_map(|(w, _, _)| plan.workloads.iter().find(|x| x.id == w))
        .map(|w| w.estimated_seconds)
        .fold(0.0, f64::max);
    let secs = 2.0 * longest * scale + 60.0;
    Duration::from_secs(((secs / 60.0).ceil() as u64).max(1) * 60)
}

/// The batch script of array `n`: each task makes its run in its stage directory with this
/// program's `slurm-task`, then records how the runner exited.
fn batch_script(
    dir: &Path,
    sdir: &Path,
    n: usize,
    name: &str,
    runs: &[&str],
    slurm: &SlurmOptions,
    limit: Duration,
) -> Result<String> {
    let program = match &slurm.task_program {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("cannot find this program's executable")?,
    };
    let minutes = limit.as_secs().div_ceil(60).max(1);
    // Tell the runner to stop (tear MPS down, leave a partial trace) before the limit.
    let lead = (limit.as_secs() / 2).clamp(10, 60);
    let q = |p: &Path| shell_quote(&p.to_string_lossy());
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!("#SBATCH --job-name={name}\n"));
    s.push_str("#SBATCH --gres=gpu:1\n#SBATCH --ntasks=1\n");
    s.push_str(&format!("#SBATCH --time={minutes}\n"));
    s.push_str(&format!("#SBATCH --signal=B:USR2@{lead}\n"));
    s.push_str(&format!("#SBATCH --output={}\n", sdir.join("logs").join(format!("{n}-%A_%a.out")).display()));
    if let Some(p) = &slurm.partition {
        s.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(a) = &slurm.account {
        s.push_str(&format!("#SBATCH --account={a}\n"));
    }
    s.push_str(&format!(
        "# {} run(s) of the campaign in {}; one task per run, one GPU each.\n",
        runs.len(),
        dir.display()
    ));
    s.push_str("set -u\n");
    s.push_str(&format!("cd {}\n", q(&std::env::current_dir().context("cannot read the working directory")?)));
    s.push_str(&format!(
        "RUN=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {})\n",
        q(&sdir.join(format!("tasks-{n}.txt")))
    ));
    s.push_str(&format!("STAGE={}/\"$RUN\"\n", q(&sdir.join("stage"))));
    s.push_str("mkdir -p \"$STAGE\"\n");
    s.push_str(concat!(
        "printf '{\"job\": \"%s\", \"task\": %s, \"host\": \"%s\", \"started_wall\": %s}\\n' ",
        "\"${SLURM_ARRAY_JOB_ID:-}\" \"${SLURM_ARRAY_TASK_ID:-0}\" \"$(hostname -s)\" \"$EPOCHREALTIME\" ",
        "> \"$STAGE/.task-started.tmp\" && mv \"$STAGE/.task-started.tmp\" \"$STAGE/.task-started.json\"\n"
    ));
    s.push_str(&format!("{} slurm-task --dir {} --run \"$RUN\" &\n", q(&program), q(dir)));
    s.push_str("pid=$!\n");
    s.push_str("trap 'kill -INT $pid 2>/dev/null' USR2 TERM INT\n");
    s.push_str("wait $pid; rc=$?\n");
    s.push_str("while kill -0 $pid 2>/dev/null; do wait $pid; rc=$?; done\n");
    s.push_str(concat!(
        "printf '{\"exit_code\": %d, \"ended_wall\": %s}\\n' \"$rc\" \"$EPOCHREALTIME\" ",
        "> \"$STAGE/.task-exit.tmp\" && mv \"$STAGE/.task-exit.tmp\" \"$STAGE/.task-exit.json\"\n"
    ));
    s.push_str("exit $rc\n");
    Ok(s)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).context("serialising JSON")? + "\n";
    manifest::write_atomic(path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}

fn read_submissions(sdir: &Path) -> Result<Vec<Submission>> {
    let path = sdir.join("submissions.jsonl");
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(anyhow!("cannot read {}: {e}", path.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{}:{}: not a submission record", path.display(), i + 1))
        })
        .collect()
}

fn append_submission(sdir: &Path, s: &Submission) -> Result<()> {
    use std::io::Write;
    let path = sdir.join("submissions.jsonl");
    let mut f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    writeln!(f, "{}", serde_json::to_string(s).context("serialising a submission")?)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The array tasks of job name `name` in Slurm's queue (pending, running, completing), as
/// (array job id, index).
fn queued_tasks(name: &str) -> Result<BTreeSet<(String, usize)>> {
    let out = Cmd::new("squeue", &["-h", "-r", "--name", name, "-o", "%i"], Duration::from_secs(60)).run()?;
    if !out.success {
        bail!("squeue failed: {}", out.text());
    }
    Ok(parse_queue(&out.stdout))
}

/// `squeue -r -o %i` lines: `<job>_<index>` per array task.
fn parse_queue(text: &str) -> BTreeSet<(String, usize)> {
    text.lines()
        .filter_map(|l| l.trim().split_once('_'))
        .filter_map(|(job, i)| i.parse().ok().map(|i| (job.to_string(), i)))
        .collect()
}

/// The cluster's `MaxArraySize` (1001 when it cannot be read).
fn max_array_size() -> usize {
    Cmd::new("scontrol", &["show", "config"], Duration::from_secs(60))
        .run()
        .ok()
        .filter(|o| o.success)
        .and_then(|o| {
            o.stdout.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "MaxArraySize").then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(1001)
}

/// Stages of tasks that ended and are not in the queue: merged or quarantined.
fn merge_finished(
    dir: &Path,
    summary: &mut CampaignSummary,
    in_flight: &BTreeMap<String, (String, usize)>,
    gpu_model: &mut Option<String>,
    progress: &Progress,
) -> Result<()> {
    let stages = dir.join(SLURM_DIR).join("stage");
    let Ok(entries) = fs::read_dir(&stages) else { return Ok(()) };
    let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for run in names.into_iter().filter(|r| !in_flight.contains_key(r)) {
        merge_one(dir, &run, summary, gpu_model, progress)?;
    }
    Ok(())
}

/// A task that ended: its run into the campaign when its stage verifies and holds it
/// complete, else its stage into `quarantine/` and the run counted as lost.
fn merge_one(
    dir: &Path,
    run: &str,
    summary: &mut CampaignSummary,
    gpu_model: &mut Option<String>,
    progress: &Progress,
) -> Result<()> {
    let stage = stage_dir(dir, run);
    let exit: Option<ExitRecord> =
        fs::read_to_string(stage.join(EXIT_RECORD)).ok().and_then(|t| serde_json::from_str(&t).ok());
    let staged = staged_run(&stage, run).and_then(|meta| {
        let model = meta.gpu.as_ref().map(|g| g.name.clone());
        match (gpu_model.as_deref(), model.as_deref()) {
            (Some(want), Some(got)) if want != got => {
                Err(format!("it was made on {got}, but the campaign's runs are made on {want}"))
            }
            _ => Ok((meta, model)),
        }
    });
    match staged {
        Ok((meta, model)) => {
            if gpu_model.is_none() {
                *gpu_model = model;
            }
            let from = stage.join(RUNS_DIR).join(run);
            let to = dir.join(RUNS_DIR).join(run);
            if to.exists() {
                bail!("{} exists already: the staged run in {} is not merged", to.display(), stage.display());
            }
            fs::create_dir_all(dir.join(RUNS_DIR))
                .with_context(|| format!("cannot create {}/{RUNS_DIR}", dir.display()))?;
            fs::rename(&from, &to).with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
            manifest::fsync_dir(&dir.join(RUNS_DIR))?;
            let staged = manifest::read(&stage).map_err(|e| anyhow!("{e}"))?;
            let m = manifest::add_dir(dir, &format!("{RUNS_DIR}/{run}")).map_err(|e| anyhow!("{e}"))?;
            for (rel, sum) in staged.iter() {
                if m.get(rel) != Some(sum) {
                    bail!("{rel} changed while it was merged from {}", stage.display());
                }
            }
            fs::remove_dir_all(&stage).with_context(|| format!("cannot remove {}", stage.display()))?;
            let what = match &meta.reason {
                Some(r) => format!("{}: {r}", meta.status.as_str()),
                None => meta.status.as_str().to_string(),
            };
            progress.log(&format!("{run}: {what} (merged from its Slurm task)"));
            summary.runs.push(RunOutcome { run_id: run.to_string(), status: meta.status, reason: meta.reason });
        }
        Err(why) => {
            let how = match &exit {
                Some(e) if e.exit_code >= 128 => format!("the task's runner stopped by signal {}", e.exit_code - 128),
                Some(e) => format!("the task's runner exited with {}", e.exit_code),
                None => "the task left the queue without an exit record (cancelled, timed out or lost)".to_string(),
            };
            let to = campaign::quarantine_place(dir, &format!("slurm-{run}"))?;
            if stage.exists() {
                fs::rename(&stage, &to)
                    .with_context(|| format!("cannot move {} to {}", stage.display(), to.display()))?;
            }
            progress.log(&format!(
                "{run}: no complete run ({how}; {why}); its stage is in {}: run again to make it",
                to.display()
            ));
            summary.lost.push(run.to_string());
        }
    }
    Ok(())
}

/// The `meta.json` of the complete run `run` in a stage directory that verifies.
fn staged_run(stage: &Path, run: &str) -> Result<RunMeta, String> {
    if !stage.join(layout::MANIFEST).exists() {
        return Err("its stage has no manifest".into());
    }
    let problems = manifest::verify(stage).map_err(|e| e.to_string())?;
    if let Some(p) = problems.first() {
        return Err(format!("its stage does not verify: {p}"));
    }
    let listed = manifest::read(stage).map_err(|e| e.to_string())?;
    if !listed.keys().any(|k| k.starts_with(&format!("{RUNS_DIR}/{run}/"))) {
        return Err("its stage holds no complete run".into());
    }
    let p = stage.join(RUNS_DIR).join(run).join(layout::META);
    let text = fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// A task: makes run `run` of the campaign in `dir` in its stage directory, with the
/// submitter's plan and options, on the GPU Slurm gave it. Returns the exit code.
pub fn task(dir: &Path, run: &str) -> Result<std::process::ExitCode> {
    let sdir = dir.join(SLURM_DIR);
    let plan = Plan::from_file(&sdir.join("plan.json"))?;
    let text = fs::read_to_string(sdir.join("options.json")).context("cannot read the submitter's options")?;
    let mut opts: RunOptions = serde_json::from_str(&text).context("the submitter's options do not parse")?;
    opts.out = stage_dir(dir, run);
    opts.only = vec![run.to_string()];
    opts.host_baselines = false;
    opts.gpus = None;
    opts.slurm = None;
    opts.time_budget = None;
    opts.progress = crate::options::ProgressMode::Plain;
    opts.gpu_index = slurm_gpu(&opts)?;
    opts.in_slurm_task = true;
    let summary = campaign::run_campaign(&plan, &opts)?;
    eprintln!("{}", summary.render());
    Ok(summary.exit_code())
}

/// The GPU of a task: the first of `CUDA_VISIBLE_DEVICES` Slurm set (its index among the
/// host's GPUs, or 0 where the task sees only its own, as under device cgroups).
fn slurm_gpu(opts: &RunOptions) -> Result<u32> {
    let first = std::env::var("CUDA_VISIBLE_DEVICES")
        .ok()
        .and_then(|v| v.split(',').next().and_then(|s| s.trim().parse::<u32>().ok()));
    let Some(i) = first else { return Ok(0) };
    if opts.simulate.is_some() {
        return Ok(i);
    }
    Ok(if i < crate::gpu::NvmlGpu::count()? { i } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_lines_are_array_tasks() {
        let q = parse_queue("12_0\n12_3\n 13_1 \n14\n12_[4-9%2]\n");
        let v: Vec<(String, usize)> = q.into_iter().collect();
        assert_eq!(v, [("12".into(), 0), ("12".into(), 3), ("13".into(), 1)]);
    }

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
