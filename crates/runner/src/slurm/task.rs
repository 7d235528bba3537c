//! The task side of `--executor slurm` (`slurm-task`): the submitter's plan and options,
//! turned into those of a campaign of one run in the task's stage directory on the GPU Slurm
//! gave it.

use anyhow::{Context, Result};
use colloc_plan::Plan;
use std::fs;
use std::path::Path;

use super::records::{stage_dir, SLURM_DIR};
use crate::options::{ProgressMode, RunOptions};

/// The plan and options of a task making run `run` of the campaign in `dir`: the
/// submitter's, for a campaign of that run alone in its stage directory, made here on the GPU
/// Slurm gave it.
pub(crate) fn task_options(dir: &Path, run: &str) -> Result<(Plan, RunOptions)> {
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
    opts.progress = ProgressMode::Plain;
    opts.gpu_index = slurm_gpu(&opts)?;
    opts.in_slurm_task = true;
    Ok((plan, opts))
}

/// The GPU of a task: the first of `CUDA_VISIBLE_DEVICES` Slurm set (its index among the
/// host's GPUs, or 0 where the task sees only its own, as under device cgroups; a host whose
/// GPUs cannot be counted, as the simulated one, keeps the index).
fn slurm_gpu(opts: &RunOptions) -> Result<u32> {
    let first = std::env::var("CUDA_VISIBLE_DEVICES")
        .ok()
        .and_then(|v| v.split(',').next().and_then(|s| s.trim().parse::<u32>().ok()));
    let Some(i) = first else { return Ok(0) };
    Ok(match opts.gpus_on_host()? {
        Some(n) if i >= n => 0,
        _ => i,
    })
}
