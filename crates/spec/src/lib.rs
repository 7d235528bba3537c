//! Experiment specifications: the YAML under `experiments/`, the GPU MIG profile tables
//! under `experiments/gpus/`, and `artifact.yaml`.

pub use colloc_trace::Mode;

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
