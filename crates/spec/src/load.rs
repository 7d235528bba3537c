//! Loading: the project's YAML files read from disk, parsed with located diagnostics,
//! resolved ([`crate::resolve`]) and checked against the GPU tables and `artifact.yaml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::artifact::Artifact;
use crate::diag::{parse_yaml, Diagnostic, Diagnostics};
use crate::gpu::GpuTable;
use crate::names::{ARTIFACT, EXPERIMENTS_DIR, GPUS_DIR};
use crate::resolve::resolve_spec;
use crate::resolved::Spec;

/// The whole project: spec, GPU tables, artifact.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub spec: Spec,
    pub gpus: BTreeMap<String, GpuTable>,
    pub artifact: Artifact,
    pub artifact_file: (PathBuf, String),
}

/// YAML files directly in a directory, sorted.
pub(crate) fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
    let rd = std::fs::read_dir(dir).map_err(|e| Diagnostic::file(dir, format!("cannot read directory: {e}")))?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    v.sort();
    Ok(v)
}

/// A path as shown in messages: relative to `root` when inside it.
pub fn shown(root: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(root).map(Path::to_path_buf).unwrap_or_else(|_| p.to_path_buf())
}

fn read(root: &Path, p: &Path) -> Result<(PathBuf, String), Diagnostic> {
    let show = shown(root, p);
    std::fs::read_to_string(p)
        .map(|t| (show.clone(), t))
        .map_err(|e| Diagnostic::file(&show, format!("cannot read: {e}")))
}

/// Loads the project at `root`. `extra` spec files are checked together with the project's
/// own (a file that is one of the project's replaces it).
pub fn load_project(root: &Path) -> Result<Project, Diagnostics> {
    load_project_with(root, &[])
}

pub fn load_project_with(root: &Path, extra: &[PathBuf]) -> Result<Project, Diagnostics> {
    let mut diags = Vec::new();
    let mut spec_paths = yaml_files(&root.join(EXPERIMENTS_DIR)).map_err(|d| Diagnostics(vec![d]))?;
    for e in extra {
        let canon = std::fs::canonicalize(e).unwrap_or_else(|_| e.clone());
        if !spec_paths.iter().any(|p| std::fs::canonicalize(p).map(|c| c == canon).unwrap_or(false)) {
            spec_paths.push(e.clone());
        }
    }
    let mut files = Vec::new();
    for p in &spec_paths {
        match read(root, p) {
            Ok(f) => files.push(f),
            Err(d) => diags.push(d),
        }
    }
    let spec = match resolve_spec(files) {
        Ok(s) => Some(s),
        Err(d) => {
            diags.extend(d.0);
            None
        }
    };
    let gpus = match load_gpus(root) {
        Ok(g) => g,
        Err(d) => {
            diags.extend(d.0);
            BTreeMap::new()
        }
    };
    let artifact = match read(root, &root.join(ARTIFACT)) {
        Ok((file, text)) => match parse_yaml::<Artifact>(&file, &text) {
            Ok(a) => Some((a, (file, text))),
            Err(d) => {
                diags.push(d);
                None
            }
        },
        Err(d) => {
            diags.push(d);
            None
        }
    };
    if let (Some(spec), Some((artifact, afile))) = (&spec, &artifact) {
        diags.extend(crate::artifact::check(spec, &gpus, artifact, afile));
    }
    if !diags.is_empty() {
        return Err(Diagnostics(diags));
    }
    let (artifact, artifact_file) = artifact.expect("no diagnostics, so the artifact parsed");
    Ok(Project { root: root.to_path_buf(), spec: spec.expect("no diagnostics"), gpus, artifact, artifact_file })
}

pub fn load_gpus(root: &Path) -> Result<BTreeMap<String, GpuTable>, Diagnostics> {
    let mut diags = Vec::new();
    let mut gpus = BTreeMap::new();
    for p in yaml_files(&root.join(GPUS_DIR)).map_err(|d| Diagnostics(vec![d]))? {
        match read(root, &p).and_then(|(f, t)| parse_yaml::<GpuTable>(&f, &t).map(|g| (f, g))) {
            Ok((f, g)) => {
                if let Some(d) = check_gpu(&f, &g) {
                    diags.push(d);
                } else {
                    gpus.insert(g.key.clone(), g);
                }
            }
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(gpus)
    } else {
        Err(Diagnostics(diags))
    }
}

pub(crate) fn check_gpu(file: &Path, g: &GpuTable) -> Option<Diagnostic> {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if stem != g.key {
        return Some(Diagnostic::file(file, format!("key `{}` differs from the file name `{stem}`", g.key)));
    }
    for p in &g.profiles {
        for &s in &p.placements {
            if s + p.memory_slices > g.memory_slices {
                return Some(Diagnostic::file(
                    file,
                    format!("profile {}: placement {s} runs past the {} memory slices", p.name, g.memory_slices),
                ));
            }
        }
        if p.compute_slices > g.compute_slices || p.sms > g.sms {
            return Some(Diagnostic::file(file, format!("profile {}: larger than the GPU", p.name)));
        }
    }
    for (model, f) in &g.estimate_profiles {
        for (what, v) in [("busy", f.busy), ("occupancy", f.occupancy)] {
            if !(v > 0.0 && v <= 1.0) {
                return Some(Diagnostic::file(
                    file,
                    format!("estimate_profiles {model}: `{what}` {v} must lie in (0, 1]"),
                ));
            }
        }
    }
    None
}

/// Checks a single GPU table file.
pub(crate) fn check_gpu_file(root: &Path, p: &Path) -> Result<GpuTable, Diagnostic> {
    let (f, t) = read(root, p)?;
    let g = parse_yaml::<GpuTable>(&f, &t)?;
    match check_gpu(&f, &g) {
        Some(d) => Err(d),
        None => Ok(g),
    }
}
