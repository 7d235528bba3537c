//! Validation of spec files, GPU tables and artifact files in the project's context.

use std::path::{Path, PathBuf};

use crate::diag::parse_yaml;
use crate::load::{check_gpu_file, load_project_with, shown};
use crate::{Diagnostic, Diagnostics};

/// Checks the project, with `files` checked in its context: a GPU table (a file under a
/// `gpus/` folder) on its own; an artifact file in place of `artifact.yaml`; any other
/// file as a spec file beside the project's own.
pub fn check(root: &Path, files: &[PathBuf]) -> Result<String, Diagnostics> {
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
            let workloads: usize = p.spec.experiments.iter().map(|e| e.workloads.len()).sum();
            Ok(format!(
                "valid: {} spec files ({} experiments, {workloads} workloads), {} GPU tables, artifact.yaml ({} campaigns){}",
                p.spec.files.len(),
                p.spec.experiments.len(),
                p.gpus.len(),
                p.artifact.campaigns.len(),
                if checked > 0 { format!(", {checked} more files") } else { String::new() }
            ))
        }
        Err(d) => {
            diags.extend(d.0);
            Err(Diagnostics(diags))
        }
    }
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
