//! Expands experiment specifications into a plan of workloads and jobs, with MIG
//! feasibility on the target GPU and GPU-time estimates.

pub mod estimate;
pub mod expand;
pub mod model;

pub use expand::{plan_all, plan_campaign, plan_project_campaign};
pub use model::*;
