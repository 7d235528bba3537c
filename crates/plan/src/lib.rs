//! Expands experiment specifications into a plan of workloads and jobs.
pub mod model;
pub use model::*;
