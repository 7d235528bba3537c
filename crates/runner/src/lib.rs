//! The runner: executes a plan's workloads one after another on one GPU (or on each of several
//! GPUs of the host at once, a workload per GPU), in the collocation
//! mode each workload asks for, and writes a checksummed trace per run. The trace format
//! itself is `colloc_trace`'s; `README.md` maps the modules.

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
mod telemetry;
mod trace;

pub use campaign::{run_campaign, verify_campaign, CampaignSummary, RunOutcome};
pub use cli::RunArgs;
pub use options::{ProgressMode, RunOptions, Tools};
pub use sim::{fake_job, SimForeign, SimOptions};
