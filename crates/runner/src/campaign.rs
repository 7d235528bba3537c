//! A campaign from start to end: the executor chosen once from the options (here, or through
//! Slurm with `--executor slurm`), the campaign directory opened for it ([`crate::prepare`]),
//! its runs made; and a Slurm task, which makes its one run here.

use anyhow::Result;
use colloc_plan::Plan;
use std::path::Path;

use crate::executor::Executor;
use crate::local::Local;
use crate::options::RunOptions;
use crate::prepare;
use crate::slurm::{self, Slurm};
use crate::summary::CampaignSummary;

/// Runs a plan's selected runs into `opts.out`: here (on one GPU or several), or through
/// Slurm with `opts.slurm`.
pub fn run_campaign(plan: &Plan, opts: &RunOptions) -> Result<CampaignSummary> {
    let executor = executor(opts);
    executor.check(opts)?;
    let campaign = prepare::open(plan, opts)?;
    executor.make(plan, opts, campaign)
}

/// The executor the options choose: Slurm's with `opts.slurm`, else the local one.
fn executor(opts: &RunOptions) -> Box<dyn Executor> {
    match &opts.slurm {
        Some(s) => Box::new(Slurm(s.clone())),
        None => Box::new(Local),
    }
}

/// A task of `--executor slurm` (`slurm-task`): makes run `run` of the campaign in `dir` in
/// its stage directory, with the submitter's plan and options, on the GPU Slurm gave it, with
/// the local executor. Returns the exit code.
pub fn slurm_task(dir: &Path, run: &str) -> Result<std::process::ExitCode> {
    let (plan, opts) = slurm::task_options(dir, run)?;
    let summary = run_campaign(&plan, &opts)?;
    eprintln!("{}", summary.render());
    Ok(summary.exit_code())
}
