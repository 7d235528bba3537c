//! A campaign of the project: its trace directory, every campaign's plan, the paper's GPU
//! and where the outputs go.

use anyhow::Result;
use colloc_plan::Plan;
use colloc_report::Layout;
use colloc_spec::gpu::GpuTable;
use colloc_spec::{Artifact, Project};
use std::path::{Path, PathBuf};

/// A campaign's trace directory: its `out:` in artifact.yaml, else `data/<name>` (also for a
/// campaign artifact.yaml does not declare).
pub fn campaign_dir(artifact: &Artifact, root: &Path, name: &str) -> PathBuf {
    match artifact.campaigns.iter().find(|c| c.name.value == name) {
        Some(c) => c.data_dir(root),
        None => root.join("data").join(name),
    }
}

/// Every campaign of artifact.yaml with its plan, in declaration order (as `cargo xtask
/// run` plans them).
pub fn plans(project: &Project) -> Result<Vec<(String, Plan)>> {
    let mut plans = Vec::new();
    for c in &project.artifact.campaigns {
        let n = &c.name.value;
        plans.push((n.clone(), colloc_plan::plan_project_campaign(project, n, None)?));
    }
    Ok(plans)
}

/// The GPU the paper measured on: artifact.yaml's `paper.gpu`, when its table loaded.
pub fn paper_gpu(project: &Project) -> Option<&GpuTable> {
    project.gpus.get(&project.artifact.paper.gpu.value)
}

/// Where artifact.yaml puts the tables, figures, claims and report.
pub fn layout(artifact: &Artifact) -> Layout {
    Layout {
        tables: artifact.outputs.tables.clone(),
        figures: artifact.outputs.figures.clone(),
        claims: artifact.outputs.claims.clone(),
        report: artifact.outputs.report.clone(),
    }
}
