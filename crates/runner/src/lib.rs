//! The runner: executes a plan's workloads one after another on one GPU (or on each of several
//! GPUs of the host at once, a workload per GPU), in the collocation
//! mode each workload asks for, and writes a checksummed trace per run. The trace format
//! itself is `colloc_trace`'s; `README.md` maps the modules.

#![warn(unreachable_pub)]

mod backend;
mod campaign;
mod cli;
mod command;
mod faults;
mod gpu;
mod jobs;
mod leftovers;
mod modes;
mod options;
mod preload;
mod progress;
mod provenance;
mod queue;
mod run;
mod signals;
mod sim;
mod slurm;
mod telemetry;
mod trace;

pub use campaign::{verify_campaign, CampaignSummary, RunOutcome};
pub use slurm::task as slurm_task;

/// Runs a plan's selected runs into `opts.out`: here (on one GPU or several), or through
/// Slurm with `opts.slurm`.
pub fn run_campaign(plan: &colloc_plan::Plan, opts: &RunOptions) -> anyhow::Result<CampaignSummary> {
    match &opts.slurm {
        Some(s) => slurm::run(plan, opts, s),
        None => campaign::run_campaign(plan, opts),
    }
}
pub use cli::RunArgs;
pub use options::{ProgressMode, RunOptions, SlurmOptions, Tools};
pub use sim::{fake_job, SimForeign, SimOptions};
pub use telemetry::{energy_every, ENERGY_INTERVAL_S};
