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
    pub origin: Origin,
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
    std::fs::read_to_string(p).map(|t| (show.clone(), t)).map_err(|e| Diagnostic::file(&show, format!("cannot read: {e}")))
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
        diags.extend(check_artifact(spec, &gpus, artifact, afile));
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
                return Some(Diagnostic::file(file, format!("profile {}: placement {s} runs past the {} memory slices", p.name, g.memory_slices)));
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
                diags.push(d(&m.name, format!("`{}` is not a timm model name (letters, digits, `_`, `.`, `-`)", m.name.value)));
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
                    diags.push(Diagnostic::spanned(f, t, n, format!("`{what}` must be between 1 and 100000000 images, not {}", n.value)));
                }
            }
            if ds.source == Source::Imagefolder && ds.path.is_none() {
                diags.push(d(&ds.name, format!("dataset `{}` comes from an imagefolder but has no `path`", ds.name.value)));
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
                    diags.push(Diagnostic::spanned(f, t, e, format!("`epochs` must be between 1 and 1000, not {}", e.value)));
                    None
                }
                (None, Some(w)) if w.value > 0.0 && w.value <= 86_400.0 => {
                    Some(ProtocolKind::Window { warmup_steps: p.warmup_steps.unwrap_or(20), window_seconds: w.value })
                }
                (None, Some(w)) => {
                    diags.push(Diagnostic::spanned(f, t, w, format!("`window_seconds` must be in (0, 86400], not {}", w.value)));
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
            let mut cx = Cx { spec: &spec, file: f, text: t, diags: &mut diags };
            let workloads = cx.experiment(e);
            for w in &workloads {
                if let Some(prev) = workload_ids.get(&w.id) {
                    let msg = format!("workload id `{}` is used twice (first at {}:{})", w.id, prev.file.display(), prev.line);
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

fn valid_name(s: &str) -> bool {
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

struct Cx<'a> {
    spec: &'a Spec,
    file: &'a Path,
    text: &'a str,
    diags: &'a mut Vec<Diagnostic>,
}

impl Cx<'_> {
    fn origin<T>(&self, s: &Spanned<T>) -> Origin {
        let d = Diagnostic::spanned(self.file, self.text, s, "");
        Origin { file: d.file, line: d.line, column: d.column, source_line: d.source_line }
    }
    fn err<T>(&mut self, s: &Spanned<T>, msg: impl Into<String>) {
        self.diags.push(Diagnostic::spanned(self.file, self.text, s, msg));
    }

    fn model(&mut self, m: &Spanned<String>) -> bool {
        if self.spec.models.contains_key(&m.value) {
            return true;
        }
        let known: Vec<&str> = self.spec.models.keys().map(String::as_str).collect();
        self.err(m, format!("unknown model `{}`; expected one of: {}", m.value, known.join(", ")));
        false
    }
    fn dataset(&mut self, d: &Spanned<String>) -> bool {
        if self.spec.datasets.contains_key(&d.value) {
            return true;
        }
        let known: Vec<&str> = self.spec.datasets.keys().map(String::as_str).collect();
        self.err(d, format!("unknown dataset `{}`; expected one of: {}", d.value, known.join(", ")));
        false
    }
    fn batch(&mut self, b: &Spanned<u32>) -> bool {
        if (1..=MAX_BATCH).contains(&b.value) {
            return true;
        }
        self.err(b, format!("batch size must be between 1 and {MAX_BATCH}, not {}", b.value));
        false
    }
    fn profile(&mut self, p: &Spanned<String>) -> Option<(String, Origin)> {
        if is_profile_spelling(&p.value) {
            Some((p.value.clone(), self.origin(p)))
        } else {
            self.err(p, format!("`{}` is not a MIG profile: expected a class `1g`..`7g` or a profile name such as `1g.5gb`", p.value));
            None
        }
    }

    fn training(&self, own: Option<&TrainingDecl>) -> TrainingDecl {
        merge_training(&self.spec.training_defaults, own)
    }

    fn experiment(&mut self, e: &ExperimentDecl) -> Vec<Workload> {
        let forms = e.matrix.is_some() as u8 + e.mixes.is_some() as u8 + (!e.workloads.is_empty()) as u8;
        if forms != 1 {
            self.err(&e.id, "an experiment needs exactly one of `matrix`, `mixes` or `workloads`");
            return Vec::new();
        }
        let id = e.id.value;
        if let Some(m) = &e.matrix {
            self.matrix(id, m)
        } else if let Some(m) = &e.mixes {
            self.mixes(id, m)
        } else {
            e.workloads.iter().filter_map(|w| self.explicit(id, w)).collect()
        }
    }

    fn matrix(&mut self, exp: u32, m: &Spanned<MatrixDecl>) -> Vec<Workload> {
        let mv = &m.value;
        self.batch(&mv.batch_size);
        let training = self.training(mv.training.as_ref());
        let mut out = Vec::new();
        for t in &mv.models {
            let ok = self.model(&t.model) & self.dataset(&t.dataset);
            let batch = match &t.batch_size {
                Some(b) => {
                    self.batch(b);
                    b.value
                }
                None => mv.batch_size.value,
            };
            for l in &mv.layouts {
                let n = l.jobs.value;
                if n == 0 || n > MAX_JOBS {
                    self.err(&l.jobs, format!("job count must be between 1 and {MAX_JOBS}, not {n}"));
                    continue;
                }
                for ms in &l.modes {
                    let Some((mode, prof)) = self.layout_mode(ms) else { continue };
                    if mode == Mode::Exclusive && n != 1 {
                        self.err(ms, format!("`exclusive` means one job alone, but this layout has {n} jobs"));
                        continue;
                    }
                    if !ok {
                        continue;
                    }
                    let tag = match &prof {
                        Some((p, _)) => format!("{}{}", mode_tag(mode), p.replace('.', "_")),
                        None => mode_tag(mode).to_string(),
                    };
                    let job = Job {
                        model: t.model.value.clone(),
                        dataset: t.dataset.value.clone(),
                        batch_size: batch,
                        mig: prof.clone(),
                        training: training.clone(),
                    };
                    out.push(Workload {
                        id: format!("e{exp}-{}-{}-x{n}-{tag}", t.model.value, t.dataset.value),
                        experiment: exp,
                        label: format!("{n} × {}", t.model.value),
                        mode,
                        jobs: vec![job; n as usize],
                        radt: None,
                        origin: self.origin(ms),
                    });
                }
            }
        }
        out
    }

    /// `exclusive`, `naive`, `mps`, `mig:<profile>`, `mps-limited:<profile>`.
    fn layout_mode(&mut self, s: &Spanned<String>) -> Option<(Mode, Option<(String, Origin)>)> {
        let (m, prof) = match s.value.split_once(':') {
            Some((m, p)) => (m, Some(p)),
            None => (s.value.as_str(), None),
        };
        let mode = match parse_mode(m) {
            Some(mode) => mode,
            None => {
                self.err(s, format!("unknown mode `{}`; expected exclusive, naive, mps, mig:<profile> or mps-limited:<profile>", s.value));
                return None;
            }
        };
        let needs = matches!(mode, Mode::Mig | Mode::MpsLimited);
        match (needs, prof) {
            (true, Some(p)) => {
                let sp = Spanned::new(p.to_string(), s.referenced, s.defined);
                let prof = self.profile(&sp)?;
                Some((mode, Some(prof)))
            }
            (true, None) => {
                self.err(s, format!("`{m}` needs a MIG profile: `{m}:1g`"));
                None
            }
            (false, Some(_)) => {
                self.err(s, format!("`{m}` takes no profile"));
                None
            }
            (false, None) => Some((mode, None)),
        }
    }

    fn mixes(&mut self, exp: u32, m: &Spanned<MixesDecl>) -> Vec<Workload> {
        let mv = &m.value;
        let training = self.training(mv.training.as_ref());
        let mut classes = BTreeMap::new();
        for (letter, c) in &mv.classes {
            let ok = self.model(&c.model) & self.dataset(&c.dataset) & self.batch(&c.batch_size);
            let prof = self.profile(&c.mig);
            if letter.len() != 1 || !letter.chars().all(|ch| ch.is_ascii_uppercase()) {
                self.err(&c.model, format!("class name `{letter}` must be one capital letter"));
                continue;
            }
            if let (true, Some(prof)) = (ok, prof) {
                classes.insert(letter.chars().next().unwrap_or('?'), (c, prof));
            }
        }
        let mut modes = Vec::new();
        for s in &mv.modes {
            match parse_mode(&s.value) {
                Some(Mode::Exclusive) | None => {
                    self.err(s, format!("mixes run in `naive`, `mps`, `mps-limited` or `mig`, not `{}`", s.value))
                }
                Some(mode) => modes.push((mode, s)),
            }
        }
        let mut out = Vec::new();
        for mix in &mv.mixes {
            let Some(parts) = self.parse_mix(mix, &classes) else { continue };
            for (mode, ms) in &modes {
                let mut jobs = Vec::new();
                for (count, letter) in &parts {
                    let (c, prof) = &classes[letter];
                    let job = Job {
                        model: c.model.value.clone(),
                        dataset: c.dataset.value.clone(),
                        batch_size: c.batch_size.value,
                        mig: matches!(mode, Mode::Mig | Mode::MpsLimited).then(|| prof.clone()),
                        training: training.clone(),
                    };
                    jobs.extend(std::iter::repeat_n(job, *count as usize));
                }
                out.push(Workload {
                    id: format!("e{exp}-{}-{}", mix.value, mode_tag(*mode)),
                    experiment: exp,
                    label: mix.value.clone(),
                    mode: *mode,
                    jobs,
                    radt: None,
                    origin: self.origin(ms),
                });
            }
        }
        out
    }

    /// `L+M+2S` → [(1,'L'),(1,'M'),(2,'S')].
    fn parse_mix(&mut self, mix: &Spanned<String>, classes: &BTreeMap<char, (&ClassDecl, (String, Origin))>) -> Option<Vec<(u32, char)>> {
        let mut parts = Vec::new();
        for term in mix.value.split('+') {
            let term = term.trim();
            let digits: String = term.chars().take_while(|c| c.is_ascii_digit()).collect();
            let rest = &term[digits.len()..];
            let count = if digits.is_empty() { 1 } else { digits.parse().unwrap_or(0) };
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                (Some(letter), None) if classes.contains_key(&letter) && (1..=MAX_JOBS).contains(&count) => parts.push((count, letter)),
                (Some(letter), None) if classes.contains_key(&letter) => {
                    self.err(mix, format!("`{term}`: count must be between 1 and {MAX_JOBS}"));
                    return None;
                }
                _ => {
                    let known: String = classes.keys().collect();
                    self.err(mix, format!("`{term}` in mix `{}` is not a count and a class letter (classes: {known})", mix.value));
                    return None;
                }
            }
        }
        Some(parts)
    }

    fn explicit(&mut self, exp: u32, w: &WorkloadDecl) -> Option<Workload> {
        let mode = match parse_mode(&w.mode.value) {
            Some(m) => m,
            None => {
                self.err(&w.mode, format!("unknown mode `{}`; expected exclusive, naive, mps, mps-limited or mig", w.mode.value));
                return None;
            }
        };
        let training = self.training(w.training.as_ref());
        let mut jobs = Vec::new();
        let mut ok = true;
        for j in &w.jobs {
            ok &= self.model(&j.model) & self.dataset(&j.dataset) & self.batch(&j.batch_size);
            let prof = match (&j.mig, matches!(mode, Mode::Mig | Mode::MpsLimited)) {
                (Some(p), true) => self.profile(p),
                (None, true) => {
                    self.err(&j.model, format!("every job of a `{mode}` workload needs `mig: <profile>`"));
                    ok = false;
                    None
                }
                (Some(p), false) => {
                    self.err(p, format!("`mig` is only for `mig` and `mps-limited` workloads, not `{mode}`"));
                    ok = false;
                    None
                }
                (None, false) => None,
            };
            let count = j.count.unwrap_or(1);
            if count == 0 || count > MAX_JOBS {
                self.err(&j.model, format!("`count` must be between 1 and {MAX_JOBS}"));
                ok = false;
            }
            let job = Job { model: j.model.value.clone(), dataset: j.dataset.value.clone(), batch_size: j.batch_size.value, mig: prof, training: training.clone() };
            jobs.extend(std::iter::repeat_n(job, count as usize));
        }
        if jobs.is_empty() {
            self.err(&w.mode, "a workload needs at least one job");
            return None;
        }
        if mode == Mode::Exclusive && jobs.len() != 1 {
            self.err(&w.mode, format!("`exclusive` means one job alone, but this workload has {} jobs", jobs.len()));
            return None;
        }
        if !ok {
            return None;
        }
        let label = label_of(&jobs);
        let id = match &w.id {
            Some(id) if valid_name(&id.value) => id.value.clone(),
            Some(id) => {
                self.err(id, "a workload id may hold letters, digits, `_`, `.`, `-` only");
                return None;
            }
            None => default_id(exp, mode, &jobs),
        };
        Some(Workload { id, experiment: exp, label, mode, jobs, radt: w.radt, origin: self.origin(&w.mode) })
    }
}

/// The id a listed workload gets when none is written: the same as a matrix would give
/// for identical jobs, else the jobs' models joined.
pub fn default_id(exp: u32, mode: Mode, jobs: &[Job]) -> String {
    let first = &jobs[0];
    let same = jobs.iter().all(|j| j.model == first.model && j.dataset == first.dataset && j.mig.as_ref().map(|m| &m.0) == first.mig.as_ref().map(|m| &m.0));
    let tag = match (&first.mig, same) {
        (Some((p, _)), true) => format!("{}{}", mode_tag(mode), p.replace('.', "_")),
        _ => mode_tag(mode).to_string(),
    };
    if same {
        format!("e{exp}-{}-{}-x{}-{tag}", first.model, first.dataset, jobs.len())
    } else {
        let models: Vec<&str> = jobs.iter().map(|j| j.model.as_str()).collect();
        format!("e{exp}-{}-{tag}", models.join("+"))
    }
}

fn label_of(jobs: &[Job]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for j in jobs {
        match counts.iter_mut().find(|(m, _)| *m == j.model) {
            Some((_, n)) => *n += 1,
            None => counts.push((j.model.clone(), 1)),
        }
    }
    counts.iter().map(|(m, n)| format!("{n} × {m}")).collect::<Vec<_>>().join(" + ")
}

pub fn parse_mode(s: &str) -> Option<Mode> {
    Some(match s {
        "exclusive" => Mode::Exclusive,
        "naive" => Mode::Naive,
        "mps" => Mode::Mps,
        "mps-limited" => Mode::MpsLimited,
        "mig" => Mode::Mig,
        _ => return None,
    })
}

/// Short tag of a mode in workload ids.
pub fn mode_tag(m: Mode) -> &'static str {
    match m {
        Mode::Exclusive => "exclusive",
        Mode::Naive => "naive",
        Mode::Mps => "mps",
        Mode::MpsLimited => "mpslim",
        Mode::Mig => "mig",
    }
}

/// `1g`..`7g`, or a profile name like `1g.5gb`, `1g.18gb+me`.
pub fn is_profile_spelling(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 2 || !(b'1'..=b'7').contains(&b[0]) || b[1] != b'g' {
        return false;
    }
    let rest = &s[2..];
    if rest.is_empty() {
        return true;
    }
    let Some(mem) = rest.strip_prefix('.') else { return false };
    let mem = mem.strip_suffix("+me").unwrap_or(mem);
    mem.strip_suffix("gb").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// A job's own settings over the defaults, field by field.
pub fn merge_training(base: &TrainingDecl, own: Option<&TrainingDecl>) -> TrainingDecl {
    let Some(o) = own else { return base.clone() };
    TrainingDecl {
        lr: o.lr.or(base.lr),
        momentum: o.momentum.or(base.momentum),
        weight_decay: o.weight_decay.or(base.weight_decay),
        label_smoothing: o.label_smoothing.or(base.label_smoothing),
        schedule: o.schedule.or(base.schedule),
        precision: o.precision.or(base.precision),
        channels_last: o.channels_last.or(base.channels_last),
        workers: o.workers.or(base.workers),
        input_size: o.input_size.or(base.input_size),
        num_classes: o.num_classes.or(base.num_classes),
        color_jitter: o.color_jitter.or(base.color_jitter),
        validate_every_epoch: o.validate_every_epoch.or(base.validate_every_epoch),
        seed: o.seed.or(base.seed),
    }
}

/// Checks `artifact.yaml` against the spec and GPU tables.
fn check_artifact(spec: &Spec, gpus: &BTreeMap<String, GpuTable>, a: &Artifact, (f, t): &(PathBuf, String)) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let d = |s: &Spanned<String>, m: String| Diagnostic::spanned(f, t, s, m);
    for g in &a.gpus {
        if !gpus.contains_key(&g.value) {
            diags.push(d(g, format!("no GPU table `{}` under {GPUS_DIR}/", g.value)));
        }
    }
    let mut names = BTreeSet::new();
    for c in &a.campaigns {
        let n = &c.name.value;
        if n.is_empty() || !n.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-') {
            diags.push(d(&c.name, format!("campaign name `{n}` may hold lowercase letters, digits and `-` only")));
        }
        if !names.insert(n.clone()) {
            diags.push(d(&c.name, format!("campaign `{n}` is declared twice")));
        }
        if !spec.protocols.contains_key(&c.protocol.value) {
            let known: Vec<&str> = spec.protocols.keys().map(String::as_str).collect();
            diags.push(d(&c.protocol, format!("unknown protocol `{}`; expected one of: {}", c.protocol.value, known.join(", "))));
        }
        if !gpus.contains_key(&c.gpu.value) {
            let known: Vec<&str> = gpus.keys().map(String::as_str).collect();
            diags.push(d(&c.gpu, format!("unknown GPU `{}`; expected one of: {}", c.gpu.value, known.join(", "))));
        }
        if let Some(o) = &c.out {
            if Path::new(&o.value).is_absolute() || escapes(&o.value) {
                diags.push(d(o, format!("`out: {}` must be a path inside the project", o.value)));
            }
        }
        for p in &c.parts {
            for e in &p.experiments {
                if !spec.experiments.iter().any(|x| x.id == e.value) {
                    diags.push(Diagnostic::spanned(f, t, e, format!("unknown experiment {}", e.value)));
                }
            }
            for m in p.models.iter().flatten() {
                if !spec.models.contains_key(&m.value) {
                    diags.push(d(m, format!("unknown model `{}`", m.value)));
                }
            }
            for m in p.modes.iter().flatten() {
                if parse_mode(&m.value).is_none() {
                    diags.push(d(m, format!("unknown mode `{}`; expected exclusive, naive, mps, mps-limited or mig", m.value)));
                }
            }
        }
        if let Some(h) = &c.headline {
            if !spec.experiments.iter().any(|x| x.id == h.experiment.value) {
                diags.push(Diagnostic::spanned(f, t, &h.experiment, format!("unknown experiment {}", h.experiment.value)));
            }
            for m in &h.models {
                if !spec.models.contains_key(&m.value) {
                    diags.push(d(m, format!("unknown model `{}`", m.value)));
                }
            }
        }
        // MIG profiles the campaign's GPU lacks.
        if let Some(gpu) = gpus.get(&c.gpu.value) {
            for e in spec.experiments.iter().filter(|e| c.parts.iter().any(|p| p.experiments.iter().any(|x| x.value == e.id))) {
                for w in &e.workloads {
                    for (p, origin) in w.jobs.iter().filter_map(|j| j.mig.as_ref()) {
                        if gpu.profile(p).is_none() {
                            diags.push(origin.diagnostic(format!(
                                "MIG profile `{p}` does not exist on the {} (campaign `{}`); it has: {}",
                                gpu.name,
                                c.name.value,
                                gpu.profiles.iter().map(|q| q.name.as_str()).collect::<Vec<_>>().join(", ")
                            )));
                        }
                    }
                }
            }
        }
    }
    // Experiments no campaign selects: each profile must exist on some supported GPU.
    let selected = |id: u32| a.campaigns.iter().any(|c| c.parts.iter().any(|p| p.experiments.iter().any(|x| x.value == id)));
    for e in spec.experiments.iter().filter(|e| !selected(e.id)) {
        for w in &e.workloads {
            for (p, origin) in w.jobs.iter().filter_map(|j| j.mig.as_ref()) {
                if !a.gpus.iter().filter_map(|g| gpus.get(&g.value)).any(|g| g.profile(p).is_some()) {
                    diags.push(origin.diagnostic(format!("MIG profile `{p}` does not exist on any supported GPU ({})", a.gpus.iter().map(|g| g.value.as_str()).collect::<Vec<_>>().join(", "))));
                }
            }
        }
    }
    if !names.contains(&a.shipped_campaign.value) {
        diags.push(d(&a.shipped_campaign, format!("`{}` is not a campaign of this file", a.shipped_campaign.value)));
    }
    diags.dedup();
    diags
}
