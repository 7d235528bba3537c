//! The spec as resolved: every spec file merged, every name checked, defaults applied, each
//! experiment's form expanded into workloads. What the planner reads; the YAML as written is
//! [`crate::written`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::diag::Diagnostic;
use crate::written::{ImageFormat, ModelClass, Source, TrainingDecl};
use colloc_trace::Mode;

/// Where something was written, to point at it in a later diagnostic (e.g. a MIG profile
/// that the target GPU lacks, found only at plan time).
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub file: PathBuf,
    pub line: u64,
    pub column: u64,
    pub source_line: Option<String>,
}

impl Origin {
    pub fn diagnostic(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: self.file.clone(),
            line: self.line,
            column: self.column,
            message: message.into(),
            source_line: self.source_line.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Model {
    pub name: String,
    pub class: ModelClass,
    pub input_size: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Dataset {
    pub name: String,
    pub image_size: Option<u32>,
    pub generated_size: Option<u32>,
    pub train: u64,
    pub val: u64,
    pub format: ImageFormat,
    pub path: Option<String>,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProtocolKind {
    Epochs {
        epochs: u32,
    },
    Window {
        warmup_steps: u32,
        window_seconds: f64,
        min_iterations: u32,
        /// Noise-adaptive stopping, both or neither: the relative half-width of the 95%
        /// interval of each job's throughput that meets the window, and the window's most
        /// seconds.
        precision_target: Option<f64>,
        max_window_seconds: Option<f64>,
    },
}

#[derive(Debug, Clone)]
pub struct Protocol {
    pub name: String,
    pub description: Option<String>,
    pub kind: ProtocolKind,
    pub data_fraction: f64,
    pub sample_every: u32,
    pub repetitions: u32,
    pub timeout_seconds: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct Experiment {
    pub id: u32,
    pub title: String,
    pub workloads: Vec<Workload>,
}

/// A workload as declared, before it meets a GPU and a campaign.
#[derive(Debug, Clone)]
pub struct Workload {
    pub id: String,
    pub experiment: u32,
    pub label: String,
    pub mode: Mode,
    pub jobs: Vec<Job>,
    pub radt: Option<u32>,
    /// Set for a workload of an experiment's `mixes`.
    pub mix: Option<Mix>,
    pub origin: Origin,
}

/// A workload written as a mix of job classes (`L+M+2S`).
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    /// Place of the mix in its experiment's `mixes` list, from 0.
    pub position: u32,
    /// The mix's terms in the order written.
    pub classes: Vec<MixClass>,
}

/// One term of a mix: `count` jobs of class `letter`.
#[derive(Debug, Clone, PartialEq)]
pub struct MixClass {
    pub letter: char,
    pub count: u32,
    pub model: String,
    pub dataset: String,
    pub batch_size: u32,
    /// The class's MIG profile as declared (`1g`).
    pub mig: String,
}

#[derive(Debug, Clone)]
pub struct Job {
    pub model: String,
    pub dataset: String,
    pub batch_size: u32,
    /// MIG profile as written (class or name) and where.
    pub mig: Option<(String, Origin)>,
    pub training: TrainingDecl,
}

/// Every spec file merged and checked.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    pub models: BTreeMap<String, Model>,
    pub datasets: BTreeMap<String, Dataset>,
    pub protocols: BTreeMap<String, Protocol>,
    pub training_defaults: TrainingDecl,
    pub experiments: Vec<Experiment>,
    /// The files read, in order, with their text (for hashing and diagnostics).
    pub files: Vec<(PathBuf, String)>,
}
