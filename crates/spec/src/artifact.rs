//! `artifact.yaml`: the paper, the GPUs supported, the campaigns, the datasets, the outputs
//! and the claims.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::model::Source;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    pub paper: Paper,
    /// GPU table keys (`experiments/gpus/<key>.yaml`) the pipeline supports.
    #[schemars(with = "Vec<String>")]
    pub gpus: Vec<Spanned<String>>,
    /// The campaign whose traces `cargo xtask reproduce` analyses by default.
    #[schemars(with = "String")]
    pub shipped_campaign: Spanned<String>,
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
    /// Traces directory relative to the project (default `data/<name>`); must stay inside.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub out: Option<Spanned<String>>,
    /// How the campaign differs from the paper's protocol, in words.
    #[serde(default)]
    pub differs_from_paper: Option<String>,
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
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeadlineDecl {
    #[schemars(with = "u32")]
    pub experiment: Spanned<u32>,
    #[schemars(with = "Vec<String>")]
    pub models: Vec<Spanned<String>>,
    pub repetitions: u32,
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
