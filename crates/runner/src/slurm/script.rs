//! What goes to `sbatch`: the arrays' job name, a task's time limit, and the batch script
//! each task runs (its run made with this program's `slurm-task` in its stage directory,
//! then how the runner exited recorded atomically).

use anyhow::{Context, Result};
use colloc_plan::Plan;
use colloc_trace::manifest;
use std::path::Path;
use std::time::Duration;

use crate::options::{RunOptions, SlurmOptions};

/// The job name of a campaign's arrays: its name and a hash of its directory.
pub(super) fn job_name(plan: &Plan, dir: &Path) -> String {
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

/// A task's time limit: the given one, or twice the longest planned run (in the backend's real
/// seconds) and a minute, in whole minutes.
pub(super) fn time_limit(plan: &Plan, opts: &RunOptions, slurm: &SlurmOptions, runs: &[&str]) -> Duration {
    if let Some(t) = slurm.time_per_run {
        return t;
    }
    let longest = runs
        .iter()
        .filter_map(|r| colloc_trace::ids::parse_run_id(r))
        .filter_map(|(w, _, _)| plan.workloads.iter().find(|x| x.id == w))
        .map(|w| w.estimated_seconds)
        .fold(0.0, f64::max);
    let secs = opts.real_seconds(2.0 * longest) + 60.0;
    Duration::from_secs(((secs / 60.0).ceil() as u64).max(1) * 60)
}

/// The batch script of array `n`: each task makes its run in its stage directory with this
/// program's `slurm-task`, then records how the runner exited.
pub(super) fn batch_script(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
