//! Experiment specifications: the YAML under `experiments/`, the GPU MIG profile tables
//! under `experiments/gpus/`, and `artifact.yaml`.
//!
//! Two layers, as ripgrep parses arguments: [`written`] holds the YAML as written (serde
//! types with spans, what the JSON Schemas publish); [`resolved`] holds the spec as resolved
//! (files merged, names checked, defaults applied, experiments expanded into workloads),
//! which is all the planner reads. Loading ([`load_project`]) reads the files, resolves them
//! and checks `artifact.yaml` and the GPU tables against them, with `file:line:column`
//! diagnostics.

#![warn(unreachable_pub)]

pub mod artifact;
pub mod claims;
mod diag;
mod forms;
pub mod gpu;
mod load;
pub mod names;
pub mod radt;
mod resolve;
pub mod resolved;
pub mod validate;
pub mod written;

pub use artifact::{Artifact, CampaignDecl};
pub use diag::{parse_yaml, Diagnostic, Diagnostics};
pub use gpu::{table_for_device, GpuTable, MigProfile};
pub use load::{load_gpus, load_project, load_project_with, shown, Project};
pub use resolve::resolve_spec;
pub use resolved::{Dataset, Protocol, ProtocolKind, Spec, Workload};

/// JSON Schema of a spec file under `experiments/`, as published in `experiments/schema.json`.
pub fn spec_schema() -> String {
    let s = schemars::schema_for!(written::SpecFile);
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
