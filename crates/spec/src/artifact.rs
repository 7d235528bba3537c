//! `artifact.yaml`: the paper, the GPUs supported, the campaigns, the datasets, the outputs
//! and the claims.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diag::Diagnostic;
use crate::gpu::GpuTable;
use crate::names::{escapes, GPUS_DIR};
use crate::resolved::Spec;
use crate::written::Source;
use colloc_trace::Mode;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    pub paper: Paper,
    /// The artifact itself as software: what its citation and archive metadata say.
    pub software: Software,
    /// GPU table keys (`experiments/gpus/<key>.yaml`) the pipeline supports.
    #[schemars(with = "Vec<String>")]
    pub gpus: Vec<Spanned<String>>,
    /// The campaign whose traces `cargo xtask reproduce` analyses by default.
    #[schemars(with = "String")]
    pub shipped_campaign: Spanned<String>,
    /// A campaign with the headline workloads under a window protocol and under whole
    /// epochs: `cargo xtask reproduce` adds its protocol validation (table and figure) to the
    /// shipped campaign's outputs.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub validation_campaign: Option<Spanned<String>>,
    pub campaigns: Vec<CampaignDecl>,
    pub datasets: Vec<DatasetInfo>,
    pub outputs: Outputs,
    /// The paper's claims and how each is checked against our results.
    #[serde(default)]
    pub claims: Vec<crate::claims::ClaimSpec>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    pub title: String,
    pub authors: Vec<String>,
    pub venue: String,
    pub arxiv: String,
    pub doi: String,
    pub license: String,
    /// The GPU the paper measured on (a key of `gpus`): the outputs compare our
    /// measurements with its MIG layouts and memory.
    #[schemars(with = "String")]
    pub gpu: Spanned<String>,
}

/// The artifact as software: the one source of `CITATION.cff`, `.zenodo.json` and
/// `codemeta.json` and of the archive `cargo xtask package` makes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Software {
    /// Lowercase letters, digits and `-`: the archive's name.
    pub name: String,
    pub title: String,
    pub version: String,
    pub description: String,
    /// SPDX expression of the code's licence.
    pub license: String,
    /// SPDX identifier of the licence of the traces, tables and figures.
    pub data_license: String,
    /// Who made the artifact (people or an organisation).
    pub authors: Vec<String>,
    #[serde(default)]
    pub keywords: Vec<String>,
}

/// A set of workloads run together under one protocol on one GPU model, whose traces
/// live in one directory with one manifest.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignDecl {
    /// Lowercase letters, digits and `-`; also the trace directory `data/<name>/`.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    pub description: String,
    /// Protocol name (`paper`, `quick`).
    #[schemars(with = "String")]
    pub protocol: Spanned<String>,
    /// GPU table key the campaign targets.
    #[schemars(with = "String")]
    pub gpu: Spanned<String>,
    /// What runs; workloads selected by two parts are an error.
    pub parts: Vec<PartDecl>,
    /// Workloads that get more repetitions (the paper's headline results).
    #[serde(default)]
    pub headline: Option<HeadlineDecl>,
    /// The workloads whose telemetry the utilisation timeline shows (one per mode).
    #[serde(default)]
    pub timeline: Option<TimelineDecl>,
    /// Traces directory relative to the project (default `data/<name>`); must stay inside.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub out: Option<Spanned<String>>,
    /// How the campaign differs from the paper's protocol, in words.
    #[serde(default)]
    pub differs_from_paper: Option<String>,
    /// Further workloads with more repetitions than their part's (after `headline`): e.g. one
    /// representative workload of each experiment.
    #[serde(default)]
    pub repeat: Vec<RepeatDecl>,
    /// Baselines the runner measures interleaved with the collocated runs divided by them,
    /// on the same host and in the same invocation (absent: each host's baselines once).
    #[serde(default)]
    pub interleaved_baselines: Option<InterleaveDecl>,
}

/// Which models alone are held by the host's CPU (their loader workers), so that their speed
/// moves with the shared host's cores from minute to minute, and how their runs are
/// interleaved with the collocated runs divided by them: a baseline run before the first
/// such run, again after at most `between` of them, and one after the last, at least
/// `runs_per_invocation` of each on every host and invocation.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterleaveDecl {
    /// Every model alone on these data sources (`generated`, `imagefolder`).
    #[serde(default)]
    pub data: Vec<Source>,
    /// These models alone, at this batch size, on any data source.
    #[serde(default)]
    pub models: Vec<ModelBatchDecl>,
    /// At most this many collocated runs between two runs of their baseline (≥ 1).
    #[schemars(with = "u32")]
    pub between: Spanned<u32>,
    /// Baseline runs of each model and data on each host and invocation (≥ 2).
    #[schemars(with = "u32")]
    pub runs_per_invocation: Spanned<u32>,
}

/// Workloads, by id, that get `repetitions`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepeatDecl {
    /// Workload ids of the campaign's plan; one ending in `*` selects the ids it begins.
    #[schemars(with = "Vec<String>")]
    pub workloads: Vec<Spanned<String>>,
    #[schemars(with = "u32")]
    pub repetitions: Spanned<u32>,
}

impl RepeatDecl {
    /// Whether `pattern` (an id, or a prefix ending in `*`) selects workload `id`.
    pub fn selects(pattern: &str, id: &str) -> bool {
        match pattern.strip_suffix('*') {
            Some(prefix) => id.starts_with(prefix),
            None => id == pattern,
        }
    }
}

/// A model at a batch size.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelBatchDecl {
    #[schemars(with = "String")]
    pub model: Spanned<String>,
    pub batch_size: u32,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PartDecl {
    #[schemars(with = "Vec<u32>")]
    pub experiments: Vec<Spanned<u32>>,
    /// Keep only workloads whose every job is one of these models.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub models: Option<Vec<Spanned<String>>>,
    /// Keep only these modes (`exclusive`, `naive`, `mps`, `mps-limited`, `mig`).
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub modes: Option<Vec<Spanned<String>>>,
    /// Data source for every job; default: each dataset's own.
    #[serde(default)]
    pub data: Option<Source>,
    /// Add, for every MIG workload, its `mps-limited` stand-in.
    #[serde(default)]
    pub mig_stand_in: bool,
    /// Repetitions of each selected workload (default: the protocol's); the campaign's
    /// `headline` sets its own workloads' repetitions over this.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub repetitions: Option<Spanned<u32>>,
    /// Protocol of this part's workloads (default: the campaign's). A part under another
    /// protocol than the campaign's adds `~<protocol>` to its workload ids, so that one
    /// campaign can hold the same workload under two protocols.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub protocol: Option<Spanned<String>>,
    /// Share of a generated dataset's counts this part's jobs use, in (0, 1] (default: the
    /// protocol's `data_fraction`); e.g. 1.0 to read the whole generated set under `quick`.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub data_fraction: Option<Spanned<f64>>,
    /// Per dataset, its share in (0, 1] over `data_fraction`: e.g. `{ cifar10: 1.0 }` reads
    /// the whole CIFAR-10-like set while the larger sets stay at the protocol's share.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, f64>")]
    pub dataset_fractions: BTreeMap<String, Spanned<f64>>,
}

impl PartDecl {
    /// The share of generated dataset `dataset` this part's jobs use, with the protocol's
    /// `default`.
    pub fn fraction_of(&self, dataset: &str, default: f64) -> f64 {
        match self.dataset_fractions.get(dataset) {
            Some(f) => f.value,
            None => self.data_fraction.as_ref().map_or(default, |f| f.value),
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeadlineDecl {
    #[schemars(with = "u32")]
    pub experiment: Spanned<u32>,
    #[schemars(with = "Vec<String>")]
    pub models: Vec<Spanned<String>>,
    /// Only workloads on this data source (default: any).
    #[serde(default)]
    pub data: Option<Source>,
    pub repetitions: u32,
}

/// Selects the workloads of one experiment with `jobs` jobs, all of one of `models`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineDecl {
    #[schemars(with = "u32")]
    pub experiment: Spanned<u32>,
    #[schemars(with = "Vec<String>")]
    pub models: Vec<Spanned<String>>,
    pub jobs: u32,
}

impl CampaignDecl {
    /// The campaign's trace directory: `out:` when given, else `data/<name>`, under `root`.
    pub fn data_dir(&self, root: &Path) -> PathBuf {
        match &self.out {
            Some(o) => root.join(&o.value),
            None => root.join("data").join(&self.name.value),
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatasetInfo {
    pub name: String,
    pub description: String,
    pub obtain: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outputs {
    pub tables: String,
    pub figures: String,
    pub claims: String,
    pub report: String,
}

/// Checks `artifact.yaml` against the spec and GPU tables.
pub(crate) fn check(
    spec: &Spec,
    gpus: &BTreeMap<String, GpuTable>,
    a: &Artifact,
    (f, t): &(PathBuf, String),
) -> Vec<Diagnostic> {
    let mut diags = crate::claims::diagnose(&a.claims, f, t);
    check_gpus(gpus, a, f, t, &mut diags);
    let mut names = BTreeSet::new();
    for c in &a.campaigns {
        check_campaign(spec, gpus, c, &mut names, f, t, &mut diags);
    }
    check_unselected_mig_profiles(spec, gpus, a, &mut diags);
    check_named_campaigns(a, &names, f, t, &mut diags);
    diags.dedup();
    diags
}

/// Diagnoses a supported GPU with no table and a paper GPU not among the supported ones.
fn check_gpus(gpus: &BTreeMap<String, GpuTable>, a: &Artifact, f: &Path, t: &str, diags: &mut Vec<Diagnostic>) {
    let d = |s: &Spanned<String>, m: String| Diagnostic::spanned(f, t, s, m);
    for g in &a.gpus {
        if !gpus.contains_key(&g.value) {
            diags.push(d(g, format!("no GPU table `{}` under {GPUS_DIR}/", g.value)));
        }
    }
    if !a.gpus.iter().any(|g| g.value == a.paper.gpu.value) {
        let known: Vec<&str> = a.gpus.iter().map(|g| g.value.as_str()).collect();
        diags.push(d(
            &a.paper.gpu,
            format!("the paper's GPU `{}` is not among `gpus`: {}", a.paper.gpu.value, known.join(", ")),
        ));
    }
}

/// Checks one campaign: its name (recorded in `names`), protocol, GPU, `out`, parts,
/// interleaved baselines, headline and timeline, and the MIG profiles its GPU lacks.
fn check_campaign(
    spec: &Spec,
    gpus: &BTreeMap<String, GpuTable>,
    c: &CampaignDecl,
    names: &mut BTreeSet<String>,
    f: &Path,
    t: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let d = |s: &Spanned<String>, m: String| Diagnostic::spanned(f, t, s, m);
    let n = &c.name.value;
    if n.is_empty() || !n.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-') {
        diags.push(d(&c.name, format!("campaign name `{n}` may hold lowercase letters, digits and `-` only")));
    }
    if !names.insert(n.clone()) {
        diags.push(d(&c.name, format!("campaign `{n}` is declared twice")));
    }
    if !spec.protocols.contains_key(&c.protocol.value) {
        let known: Vec<&str> = spec.protocols.keys().map(String::as_str).collect();
        diags.push(d(
            &c.protocol,
            format!("unknown protocol `{}`; expected one of: {}", c.protocol.value, known.join(", ")),
        ));
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
        check_part(spec, p, f, t, diags);
    }
    if let Some(i) = &c.interleaved_baselines {
        check_interleaved_baselines(spec, i, f, t, diags);
    }
    check_campaign_roles(spec, c, f, t, diags);
    if let Some(gpu) = gpus.get(&c.gpu.value) {
        check_campaign_mig_profiles(spec, gpu, c, diags);
    }
}

/// Checks one part of a campaign: its protocol, data fractions, experiments, models and modes.
fn check_part(spec: &Spec, p: &PartDecl, f: &Path, t: &str, diags: &mut Vec<Diagnostic>) {
    let d = |s: &Spanned<String>, m: String| Diagnostic::spanned(f, t, s, m);
    if let Some(pr) = p.protocol.as_ref().filter(|pr| !spec.protocols.contains_key(&pr.value)) {
        let known: Vec<&str> = spec.protocols.keys().map(String::as_str).collect();
        diags.push(d(pr, format!("unknown protocol `{}` for a part; expected one of: {}", pr.value, known.join(", "))));
    }
    if let Some(fr) = p.data_fraction.as_ref().filter(|fr| !(fr.value > 0.0 && fr.value <= 1.0)) {
        diags.push(Diagnostic::spanned(f, t, fr, format!("`data_fraction` must be in (0, 1], not {}", fr.value)));
    }
    for (name, fr) in &p.dataset_fractions {
        if !spec.datasets.contains_key(name) {
            let known: Vec<&str> = spec.datasets.keys().map(String::as_str).collect();
            diags.push(Diagnostic::spanned(
                f,
                t,
                fr,
                format!("`dataset_fractions` names an unknown dataset `{name}`; datasets: {}", known.join(", ")),
            ));
        } else if !(fr.value > 0.0 && fr.value <= 1.0) {
            diags.push(Diagnostic::spanned(
                f,
                t,
                fr,
                format!("`dataset_fractions.{name}` must be in (0, 1], not {}", fr.value),
            ));
        }
    }
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
        if m.value.parse::<Mode>().is_err() {
            diags.push(d(m, format!("unknown mode `{}`; expected exclusive, naive, mps, mps-limited or mig", m.value)));
        }
    }
}

/// Checks a campaign's interleaved baselines: `between`, `runs_per_invocation` and their models.
fn check_interleaved_baselines(spec: &Spec, i: &InterleaveDecl, f: &Path, t: &str, diags: &mut Vec<Diagnostic>) {
    if i.between.value == 0 {
        diags.push(Diagnostic::spanned(f, t, &i.between, "`between` must be at least 1".to_string()));
    }
    if i.runs_per_invocation.value < 2 {
        diags.push(Diagnostic::spanned(
            f,
            t,
            &i.runs_per_invocation,
            format!(
                "`runs_per_invocation` must be at least 2 (a run before and one after), not {}",
                i.runs_per_invocation.value
            ),
        ));
    }
    for m in &i.models {
        if !spec.models.contains_key(&m.model.value) {
            diags.push(Diagnostic::spanned(f, t, &m.model, format!("unknown model `{}`", m.model.value)));
        }
    }
}

/// Checks the experiment and models a campaign's `headline` and `timeline` select.
fn check_campaign_roles(spec: &Spec, c: &CampaignDecl, f: &Path, t: &str, diags: &mut Vec<Diagnostic>) {
    let roles = [
        c.headline.as_ref().map(|h| (&h.experiment, &h.models)),
        c.timeline.as_ref().map(|h| (&h.experiment, &h.models)),
    ];
    for (experiment, models) in roles.into_iter().flatten() {
        if !spec.experiments.iter().any(|x| x.id == experiment.value) {
            diags.push(Diagnostic::spanned(f, t, experiment, format!("unknown experiment {}", experiment.value)));
        }
        for m in models {
            if !spec.models.contains_key(&m.value) {
                diags.push(Diagnostic::spanned(f, t, m, format!("unknown model `{}`", m.value)));
            }
        }
    }
}

/// Diagnoses the MIG profiles of the experiments a campaign selects that its GPU lacks.
fn check_campaign_mig_profiles(spec: &Spec, gpu: &GpuTable, c: &CampaignDecl, diags: &mut Vec<Diagnostic>) {
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

/// Diagnoses the MIG profiles of experiments no campaign selects that no supported GPU has.
fn check_unselected_mig_profiles(
    spec: &Spec,
    gpus: &BTreeMap<String, GpuTable>,
    a: &Artifact,
    diags: &mut Vec<Diagnostic>,
) {
    let selected =
        |id: u32| a.campaigns.iter().any(|c| c.parts.iter().any(|p| p.experiments.iter().any(|x| x.value == id)));
    for e in spec.experiments.iter().filter(|e| !selected(e.id)) {
        for w in &e.workloads {
            for (p, origin) in w.jobs.iter().filter_map(|j| j.mig.as_ref()) {
                if !a.gpus.iter().filter_map(|g| gpus.get(&g.value)).any(|g| g.profile(p).is_some()) {
                    diags.push(origin.diagnostic(format!(
                        "MIG profile `{p}` does not exist on any supported GPU ({})",
                        a.gpus.iter().map(|g| g.value.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                }
            }
        }
    }
}

/// Checks that the shipped and validation campaigns are campaigns of the file, and not the same.
fn check_named_campaigns(a: &Artifact, names: &BTreeSet<String>, f: &Path, t: &str, diags: &mut Vec<Diagnostic>) {
    let d = |s: &Spanned<String>, m: String| Diagnostic::spanned(f, t, s, m);
    if !names.contains(&a.shipped_campaign.value) {
        diags.push(d(&a.shipped_campaign, format!("`{}` is not a campaign of this file", a.shipped_campaign.value)));
    }
    if let Some(v) = &a.validation_campaign {
        if !names.contains(&v.value) {
            diags.push(d(v, format!("validation_campaign `{}` is not a campaign of this file", v.value)));
        } else if v.value == a.shipped_campaign.value {
            diags.push(d(v, format!("validation_campaign `{}` is the shipped campaign: name another one", v.value)));
        }
    }
}
