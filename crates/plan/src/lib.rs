//! Expands experiment specifications into a plan of workloads and jobs, with MIG
//! feasibility on the target GPU and GPU-time estimates; [`perf`] is the one model of speed
//! and memory that the estimates, the simulated backend and the test fixtures share.

#![warn(unreachable_pub)]

pub mod estimate;
pub mod expand;
pub mod model;
pub mod perf;

pub use expand::{plan_all, plan_campaign, plan_project_campaign};
pub use model::{
    DataSource, GpuTarget, Interleave, JobData, MigSlice, MixClass, MpsLimits, Plan, PlannedJob, PlannedWorkload,
    ProtocolKind, RadtRef, RunProtocol, Totals, Training, WorkloadForm,
};
