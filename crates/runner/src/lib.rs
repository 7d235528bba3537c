//! The runner: executes a plan's workloads one after another on one GPU (or on each of several
//! GPUs of the host at once, a workload per GPU), in the collocation
//! mode each workload asks for, and writes a checksummed trace per run. The trace format
//! itself is `colloc_trace`'s; `README.md` maps the modules.

#![warn(unreachable_pub)]

mod backend;
mod budget;
mod campaign;
mod cli;
mod command;
mod executor;
mod gpu;
mod jobs;
mod leftovers;
mod local;
mod modes;
mod options;
mod preload;
mod prepare;
mod progress;
mod provenance;
mod queue;
mod run;
mod settle;
mod signals;
mod sim;
mod slurm;
mod summary;
mod telemetry;
mod trace;

pub use campaign::{run_campaign, slurm_task};
pub use cli::RunArgs;
pub use options::{ProgressMode, RunOptions, SlurmOptions, Tools};
pub use prepare::verify_campaign;
pub use sim::{fake_job, SimForeign, SimOptions};
pub use summary::{CampaignSummary, RunOutcome};
pub use telemetry::{energy_every, ENERGY_INTERVAL_S};
