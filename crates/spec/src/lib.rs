//! Experiment specifications: the YAML under `experiments/`, the GPU MIG profile tables
//! under `experiments/gpus/`, and `artifact.yaml`.

use serde::{Deserialize, Serialize};

/// How the jobs of a workload share the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One job alone on the whole GPU.
    Exclusive,
    /// Plain processes sharing the GPU by time slicing.
    Naive,
    /// NVIDIA Multi-Process Service, no limits.
    Mps,
    /// MPS with per-job thread percentage and pinned memory limits derived from the MIG
    /// profile the job would get: a stand-in for MIG where MIG cannot be turned on.
    MpsLimited,
    /// Multi-Instance GPU: one GPU instance per job.
    Mig,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::Naive => "naive",
            Mode::Mps => "mps",
            Mode::MpsLimited => "mps-limited",
            Mode::Mig => "mig",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

pub mod artifact;
pub mod claims;
pub mod diag;
mod forms;
pub mod gpu;
pub mod model;
pub mod radt;
pub mod resolve;
pub mod validate;

pub use diag::{Diagnostic, Diagnostics};
pub use resolve::{load_project, Project, Spec};

/// JSON Schema of a spec file under `experiments/`, as published in `experiments/schema.json`.
pub fn spec_schema() -> String {
    let s = schemars::schema_for!(model::SpecFile);
    serde_json::to_string_pretty(&s).expect("a schema serialises") + "\n"
}

/// JSON Schema of `artifact.yaml`.
pub fn artifact_schema() -> String {
    let s = schemars::schema_for!(artifact::Artifact);
    serde_json::to_string_pretty(&s).expect("a schema serialises") + "\n"
}

/// JSON Schema of a GPU table under `experiments/gpus/`.
pub fn gpu_schema() -> String {
    let s = schemars::schema_for!(gpu::GpuTable);
    serde_json::to_string_pretty(&s).expect("a schema serialises") + "\n"
}
