//! Loading and checking: YAML files → a resolved [`Spec`] with every name checked, or
//! located diagnostics.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_saphyr::Spanned;

use crate::artifact::Artifact;
use crate::diag::{Diagnostic, Diagnostics};
use crate::gpu::GpuTable;
use crate::model::*;
use crate::Mode;

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
    Epochs { epochs: u32 },
    Window { warmup_steps: u32, window_seconds: f64 },
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

/// The whole project: spec, GPU tables, artifact.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub spec: Spec,
    pub gpus: BTreeMap<String, GpuTable>,
    pub artifact: Artifact,
    pub artifact_file: (PathBuf, String),
}

pub const EXPERIMENTS_DIR: &str = "experiments";
pub const GPUS_DIR: &str = "experiments/gpus";
pub const ARTIFACT: &str = "artifact.yaml";

pub const MAX_BATCH: u32 = 4096;
pub const MAX_JOBS: u32 = 64;

/// YAML files directly in a directory, sorted.
pub fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
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

/// Parses YAML text into `T`, or a located diagnostic.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(file: &Path, text: &str) -> Result<T, Diagnostic> {
    serde_saphyr::from_str::<T>(text).map_err(|e| Diagnostic::from_yaml(file, text, &e))
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

fn check_gpu(file: &Path, g: &GpuTable) -> Option<Diagnostic> {
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
    None
}

/// Checks a single GPU table file.
pub fn check_gpu_file(root: &Path, p: &Path) -> Result<GpuTable, Diagnostic> {
    let (f, t) = read(root, p)?;
    let g = parse_yaml::<GpuTable>(&f, &t)?;
    match check_gpu(&f, &g) {
        Some(d) => Err(d),
        None => Ok(g),
    }
}

/// Merges and checks spec files given as (shown path, text).
pub fn resolve_spec(files: Vec<(PathBuf, String)>) -> Result<Spec, Diagnostics> {
    let mut diags = Vec::new();
    let mut parsed = Vec::new();
    for (f, t) in &files {
        match parse_yaml::<SpecFile>(f, t) {
            Ok(s) => parsed.push((f.clone(), t.clone(), s)),
            Err(d) => diags.push(d),
        }
    }
    let mut spec = Spec { files: files.clone(), ..Default::default() };
    // Names first, so experiments may refer to models of any file.
    let mut defaults_from: Option<PathBuf> = None;
    for (f, t, s) in &parsed {
        let d = |sp: &Spanned<String>, m: String| Diagnostic::spanned(f, t, sp, m);
        for m in &s.models {
            if spec.models.contains_key(&m.name.value) {
                diags.push(d(&m.name, format!("model `{}` is defined twice", m.name.value)));
            }
            if !valid_name(&m.name.value) {
                diags.push(d(
                    &m.name,
                    format!("`{}` is not a timm model name (letters, digits, `_`, `.`, `-`)", m.name.value),
                ));
            }
            spec.models.insert(
                m.name.value.clone(),
                Model { name: m.name.value.clone(), class: m.class, input_size: m.input_size },
            );
        }
        for ds in &s.datasets {
            if spec.datasets.contains_key(&ds.name.value) {
                diags.push(d(&ds.name, format!("dataset `{}` is defined twice", ds.name.value)));
            }
            for (n, what) in [(&ds.train, "train"), (&ds.val, "val")] {
                if n.value == 0 || n.value > 100_000_000 {
                    diags.push(Diagnostic::spanned(
                        f,
                        t,
                        n,
                        format!("`{what}` must be between 1 and 100000000 images, not {}", n.value),
                    ));
                }
            }
            if ds.source == Source::Imagefolder && ds.path.is_none() {
                diags.push(d(
                    &ds.name,
                    format!("dataset `{}` comes from an imagefolder but has no `path`", ds.name.value),
                ));
            }
            if let Some(p) = &ds.path {
                if Path::new(p).is_relative() && escapes(p) {
                    diags.push(d(&ds.name, format!("relative path `{p}` leaves the project")));
                }
            }
            spec.datasets.insert(
                ds.name.value.clone(),
                Dataset {
                    name: ds.name.value.clone(),
                    image_size: ds.image_size,
                    generated_size: ds.generated_size,
                    train: ds.train.value,
                    val: ds.val.value,
                    format: ds.format,
                    path: ds.path.clone(),
                    source: ds.source,
                },
            );
        }
        for p in &s.protocols {
            if spec.protocols.contains_key(&p.name.value) {
                diags.push(d(&p.name, format!("protocol `{}` is defined twice", p.name.value)));
            }
            let kind = match (&p.epochs, &p.window_seconds) {
                (Some(e), None) if (1..=1000).contains(&e.value) => Some(ProtocolKind::Epochs { epochs: e.value }),
                (Some(e), None) => {
                    diags.push(Diagnostic::spanned(
                        f,
                        t,
                        e,
                        format!("`epochs` must be between 1 and 1000, not {}", e.value),
                    ));
                    None
                }
                (None, Some(w)) if w.value > 0.0 && w.value <= 86_400.0 => {
                    Some(ProtocolKind::Window { warmup_steps: p.warmup_steps.unwrap_or(20), window_seconds: w.value })
                }
                (None, Some(w)) => {
                    diags.push(Diagnostic::spanned(
                        f,
                        t,
                        w,
                        format!("`window_seconds` must be in (0, 86400], not {}", w.value),
                    ));
                    None
                }
                _ => {
                    diags.push(d(&p.name, "a protocol needs exactly one of `epochs` (whole epochs) or `window_seconds` (a measurement window)".into()));
                    None
                }
            };
            let fraction = p.data_fraction.unwrap_or(1.0);
            if !(fraction > 0.0 && fraction <= 1.0) {
                diags.push(d(&p.name, format!("`data_fraction` must be in (0, 1], not {fraction}")));
            }
            if let Some(kind) = kind {
                spec.protocols.insert(
                    p.name.value.clone(),
                    Protocol {
                        name: p.name.value.clone(),
                        description: p.description.clone(),
                        kind,
                        data_fraction: fraction,
                        sample_every: p.sample_every.unwrap_or(10).max(1),
                        repetitions: p.repetitions.unwrap_or(1).max(1),
                        timeout_seconds: p.timeout_seconds,
                    },
                );
            }
        }
        if let Some(td) = &s.training_defaults {
            if let Some(prev) = &defaults_from {
                diags.push(Diagnostic::file(f, format!("`training_defaults` is also set in {}", prev.display())));
            }
            defaults_from = Some(f.clone());
            spec.training_defaults = td.clone();
        }
    }
    let mut exp_ids = BTreeSet::new();
    let mut workload_ids: BTreeMap<String, Origin> = BTreeMap::new();
    for (f, t, s) in &parsed {
        for e in &s.experiments {
            if !exp_ids.insert(e.id.value) {
                diags.push(Diagnostic::spanned(f, t, &e.id, format!("experiment {} is declared twice", e.id.value)));
                continue;
            }
            let mut cx = crate::forms::Cx { spec: &spec, file: f, text: t, diags: &mut diags };
            let workloads = cx.experiment(e);
            for w in &workloads {
                if let Some(prev) = workload_ids.get(&w.id) {
                    let msg = format!(
                        "workload id `{}` is used twice (first at {}:{})",
                        w.id,
                        prev.file.display(),
                        prev.line
                    );
                    diags.push(w.origin.diagnostic(msg));
                } else {
                    workload_ids.insert(w.id.clone(), w.origin.clone());
                }
            }
            spec.experiments.push(Experiment { id: e.id.value, title: e.title.clone(), workloads });
        }
    }
    spec.experiments.sort_by_key(|e| e.id);
    if diags.is_empty() {
        Ok(spec)
    } else {
        Err(Diagnostics(diags))
    }
}

pub(crate) fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Whether a relative path climbs out of the directory it is relative to.
pub fn escapes(p: &str) -> bool {
    let mut depth = 0i32;
    for c in Path::new(p).components() {
        match c {
            std::path::Component::ParentDir => depth -= 1,
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::RootDir | std::path::Component::Prefix(_) => return true,
            std::path::Component::CurDir => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

pub use crate::forms::{default_id, is_profile_spelling, merge_training};
