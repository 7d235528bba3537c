//! The runner: executes a plan's workloads one after another on one GPU, in the collocation
//! mode each workload asks for, and writes a checksummed trace per run.
//!
//! * [`campaign`]: the campaign loop: resume, quarantine, the order of runs, the summary.
//! * [`run`]: one run (a workload × repetition): mode set-up, jobs behind a start barrier,
//!   telemetry, timeout, teardown, the trace.
//! * [`modes`]: `exclusive`/`naive` (plain processes), `mps` and `mps-limited` (a private MPS
//!   daemon), `mig` (GPU and compute instances), and the checks for a busy GPU.
//! * [`jobs`]: the job processes: process groups, the stdin release line, event logs.
//! * [`telemetry`]: the sampler thread: NVML or simulated GPU samples, `/proc` per job.
//! * [`trace`]: a run directory written into a temporary directory and renamed into place.
//! * [`backend`]: what the runs run on, chosen once per campaign: [`gpu`] (NVML, the real
//!   training program) or [`sim`] (the simulated backend, `--simulate`).
//!
//! The trace format itself is `colloc_trace`'s.

pub mod backend;
pub mod campaign;
pub mod cli;
pub mod command;
pub mod gpu;
pub mod jobs;
pub mod leftovers;
pub mod modes;
pub mod options;
pub mod progress;
pub mod provenance;
pub mod run;
pub mod signals;
pub mod sim;
pub mod telemetry;
pub mod trace;

pub use campaign::{run_campaign, verify_campaign, CampaignSummary, RunOutcome};
pub use cli::RunArgs;
pub use options::{ProgressMode, RunOptions, Tools};
pub use sim::SimOptions;
