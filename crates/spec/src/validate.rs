//! Validation of spec files, GPU tables and artifact files in the project's context, and
//! its machine-readable document (`cargo xtask validate --json`, whose JSON Schema
//! `schemas/validate.schema.json` is generated from [`Document`]).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diag::parse_yaml;
use crate::load::{check_gpu_file, load_project_with, shown};
use crate::{Diagnostic, Diagnostics};

/// Checks the project, with `files` checked in its context: a GPU table (a file under a
/// `gpus/` folder) on its own; an artifact file in place of `artifact.yaml`; any other
/// file as a spec file beside the project's own.
pub fn check(root: &Path, files: &[PathBuf]) -> Result<String, Diagnostics> {
    check_counts(root, files).map(|s| s.to_string())
}

/// What [`check`] found valid, counted: its `Display` is [`check`]'s line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// Spec files under `experiments/` (and those given that are spec files).
    pub spec_files: usize,
    pub experiments: usize,
    /// Workloads of every experiment, as resolved.
    pub workloads: usize,
    /// GPU tables under `experiments/gpus/`.
    pub gpu_tables: usize,
    /// Campaigns declared in `artifact.yaml`.
    pub campaigns: usize,
    /// Claims declared in `artifact.yaml`.
    pub claims: usize,
    /// Files given that were checked on their own (GPU tables, artifact files).
    pub more_files: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "valid: {} spec files ({} experiments, {} workloads), {} GPU tables, artifact.yaml ({} campaigns)",
            self.spec_files, self.experiments, self.workloads, self.gpu_tables, self.campaigns
        )?;
        if self.more_files > 0 {
            write!(f, ", {} more files", self.more_files)?;
        }
        Ok(())
    }
}

/// [`check`], with what it found valid counted.
pub fn check_counts(root: &Path, files: &[PathBuf]) -> Result<Summary, Diagnostics> {
    let mut specs = Vec::new();
    let mut diags = Vec::new();
    let mut artifacts = Vec::new();
    let mut checked = 0;
    for f in files {
        let f =
            if f.is_absolute() { f.clone() } else { std::env::current_dir().map(|d| d.join(f)).unwrap_or(f.clone()) };
        if !f.is_file() {
            diags.push(Diagnostic::file(&shown(root, &f), "no such file"));
        } else if f.parent().and_then(|p| p.file_name()).is_some_and(|n| n == "gpus") {
            if let Err(d) = check_gpu_file(root, &f) {
                diags.push(d);
            }
            checked += 1;
        } else if f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("artifact")) {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            match parse_yaml::<crate::artifact::Artifact>(&shown(root, &f), &text) {
                // Checked against the project's specs and GPU tables once they are loaded.
                Ok(a) => artifacts.push((shown(root, &f), text, a)),
                Err(d) => diags.push(d),
            }
            checked += 1;
        } else {
            specs.push(f);
        }
    }
    let loaded = load_project_with(root, &specs);
    for (path, text, a) in artifacts {
        diags.extend(match &loaded {
            Ok(p) => crate::artifact::check(&p.spec, &p.gpus, &a, &(path, text)),
            Err(_) => crate::claims::diagnose(&a.claims, &path, &text),
        });
    }
    match loaded {
        Ok(p) => {
            if !diags.is_empty() {
                return Err(Diagnostics(diags));
            }
            Ok(Summary {
                spec_files: p.spec.files.len(),
                experiments: p.spec.experiments.len(),
                workloads: p.spec.experiments.iter().map(|e| e.workloads.len()).sum(),
                gpu_tables: p.gpus.len(),
                campaigns: p.artifact.campaigns.len(),
                claims: p.artifact.claims.len(),
                more_files: checked,
            })
        }
        Err(d) => {
            diags.extend(d.0);
            Err(Diagnostics(diags))
        }
    }
}

/// The version of the machine-readable documents' format: `format_version` in each.
pub const FORMAT_VERSION: u32 = 1;

/// What `cargo xtask validate --json` prints: the problems found, or what was found valid.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Document {
    /// The format of this document: 1.
    pub format_version: u32,
    /// No problem was found (the exit status is 0; 1 otherwise).
    pub valid: bool,
    /// Every problem, in the order the text output gives them.
    pub problems: Vec<Problem>,
    /// What was found valid; `null` when some problem was found.
    pub summary: Option<Summary>,
}

/// One problem: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// The file, relative to the project root when it lies inside it.
    pub file: String,
    /// 1-based; `null` when the problem has no place in the file (e.g. it cannot be read).
    pub line: Option<u64>,
    /// 1-based, in characters; `null` with `line`.
    pub column: Option<u64>,
    pub message: String,
    /// The offending line of the file, when known.
    pub source_line: Option<String>,
}

impl From<&Diagnostic> for Problem {
    fn from(d: &Diagnostic) -> Self {
        let placed = d.line > 0;
        Problem {
            file: d.file.display().to_string(),
            line: placed.then_some(d.line),
            column: placed.then_some(d.column),
            message: d.message.clone(),
            source_line: d.source_line.clone(),
        }
    }
}

impl Document {
    /// The document of what was found valid.
    pub fn valid(summary: Summary) -> Self {
        Document { format_version: FORMAT_VERSION, valid: true, problems: Vec::new(), summary: Some(summary) }
    }

    /// The document of the problems found.
    pub fn problems(problems: Vec<Problem>) -> Self {
        Document { format_version: FORMAT_VERSION, valid: false, problems, summary: None }
    }
}

/// The JSON Schema of [`Document`], as published in `schemas/validate.schema.json`.
pub fn schema() -> String {
    let s = schemars::schema_for!(Document);
    serde_json::to_string_pretty(&s).expect("a schema serialises") + "\n"
}

/// Checks one file's text as each kind of YAML file of the project, outside its context:
/// a spec file (resolved alone, as `experiments/input.yaml`), an artifact file (its claims
/// checked) and a GPU table (`experiments/gpus/input.yaml`). The spec's verdict is the
/// result: `Ok` with the number of workloads, or every diagnostic printed. The fuzz target
/// `spec` runs this, and `tests/fuzz_corpus.rs` replays the committed corpus through it.
pub fn check_text(bytes: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("input.yaml: error: cannot read: {e}"))?;
    let artifact_file = Path::new("artifact.yaml");
    let artifact = match parse_yaml::<crate::artifact::Artifact>(artifact_file, text) {
        Ok(a) => Diagnostics(crate::claims::diagnose(&a.claims, artifact_file, text)),
        Err(d) => Diagnostics(vec![d]),
    };
    let gpu_file = Path::new("experiments/gpus/input.yaml");
    let gpu = match parse_yaml::<crate::gpu::GpuTable>(gpu_file, text) {
        Ok(g) => Diagnostics(crate::load::check_gpu(gpu_file, &g).into_iter().collect()),
        Err(d) => Diagnostics(vec![d]),
    };
    // Every diagnostic is printed, as `validate` prints it: the snippets must not panic.
    let _ = (artifact.to_string(), gpu.to_string());
    match crate::resolve_spec(vec![(PathBuf::from("experiments/input.yaml"), text.to_string())]) {
        Ok(spec) => Ok(spec.experiments.iter().map(|e| e.workloads.len()).sum()),
        Err(d) => Err(d.to_string()),
    }
}
