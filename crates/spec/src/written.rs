//! The experiment specification as written in YAML under `experiments/`.
//!
//! Every file has the same shape ([`SpecFile`]); the files are merged, and a name defined
//! twice is an error. `experiments/schema.json` is generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

/// One YAML file under `experiments/`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// Models by timm name.
    #[serde(default)]
    pub models: Vec<ModelDecl>,
    /// Datasets, with their real shape and where the real data lives.
    #[serde(default)]
    pub datasets: Vec<DatasetDecl>,
    /// How long each job trains and how it is measured.
    #[serde(default)]
    pub protocols: Vec<ProtocolDecl>,
    /// Training settings shared by every job unless a job overrides them.
    #[serde(default)]
    pub training_defaults: Option<TrainingDecl>,
    #[serde(default)]
    pub experiments: Vec<ExperimentDecl>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelDecl {
    /// timm model name, e.g. `resnet50`.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Size class, as in the paper.
    pub class: ModelClass,
    /// Input side in pixels if not 224 (the model's default, e.g. 288 for efficientnetv2_s).
    #[serde(default)]
    pub input_size: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelClass {
    Small,
    Medium,
    Large,
    Extra,
}

impl ModelClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ModelClass::Small => "small",
            ModelClass::Medium => "medium",
            ModelClass::Large => "large",
            ModelClass::Extra => "extra",
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatasetDecl {
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Stored image side in pixels (32 for CIFAR-10); omit for datasets of varying size.
    #[serde(default)]
    pub image_size: Option<u32>,
    /// Side used when a stand-in is generated for a dataset of varying size.
    #[serde(default)]
    pub generated_size: Option<u32>,
    /// Training images.
    #[schemars(with = "u64")]
    pub train: Spanned<u64>,
    /// Validation images.
    #[schemars(with = "u64")]
    pub val: Spanned<u64>,
    /// Image file format of the original (`png`, `jpeg`).
    pub format: ImageFormat,
    /// Where the real data is (an ImageFolder root with `train/` and `val/`). May be
    /// absolute: real datasets live outside the project.
    #[serde(default)]
    pub path: Option<String>,
    /// Where the data comes from unless a campaign says otherwise.
    #[serde(default = "default_source")]
    pub source: Source,
}

fn default_source() -> Source {
    Source::Imagefolder
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Png,
    Jpeg,
}

/// Where a job's data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Random tensors made on the GPU: no loader, the GPU side alone.
    Synthetic,
    /// Image files generated deterministically with the dataset's shape and count.
    Generated,
    /// The real dataset at `path`.
    Imagefolder,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Synthetic => "synthetic",
            Source::Generated => "generated",
            Source::Imagefolder => "imagefolder",
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProtocolDecl {
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    pub description: Option<String>,
    /// `paper`-style: whole epochs over the dataset.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub epochs: Option<Spanned<u32>>,
    /// `quick`-style: warm-up iterations before the barrier.
    #[serde(default)]
    pub warmup_steps: Option<u32>,
    /// `quick`-style: seconds of steady-state measurement after the release.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub window_seconds: Option<Spanned<f64>>,
    /// `quick`-style: iterations every job trains at least in the common window (as well as
    /// `window_seconds`) before the runner ends it (0: the seconds alone).
    #[serde(default)]
    pub min_iterations: Option<u32>,
    /// `quick`-style, with `max_window_seconds`: noise-adaptive stopping. A job meets the
    /// window only once, in addition, the 95% confidence interval of its throughput since the
    /// release is within ± this fraction of it (relative half-width, in (0, 0.5]; 0.01: ±1%),
    /// or once `max_window_seconds` have passed. Both or neither.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub precision_target: Option<Spanned<f64>>,
    /// `quick`-style, with `precision_target`: seconds after the release at which a job meets
    /// the window even if its interval is not yet within the target (at least
    /// `window_seconds`); the estimate counts it as the window's length.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_window_seconds: Option<Spanned<f64>>,
    /// Fraction of each dataset used by `generated` data (1.0: the full count).
    #[serde(default)]
    pub data_fraction: Option<f64>,
    /// Iterations between two `sample` events.
    #[serde(default)]
    pub sample_every: Option<u32>,
    /// Repetitions of each workload.
    #[serde(default)]
    pub repetitions: Option<u32>,
    /// A run is killed after this many seconds; default: 3 × the estimate + 10 minutes.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
}

/// Training settings; every field defaults to the paper's value.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrainingDecl {
    /// Learning rate; default 0.1 × batch / 256.
    pub lr: Option<f64>,
    pub momentum: Option<f64>,
    pub weight_decay: Option<f64>,
    pub label_smoothing: Option<f64>,
    /// `cosine` (per epoch) or `constant`.
    pub schedule: Option<Schedule>,
    pub precision: Option<Precision>,
    pub channels_last: Option<bool>,
    /// Data-loader worker processes per job.
    pub workers: Option<u32>,
    /// Input side; default the model's (224, or the model's declared input_size).
    pub input_size: Option<u32>,
    pub num_classes: Option<u32>,
    pub color_jitter: Option<f64>,
    pub validate_every_epoch: Option<bool>,
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    Cosine,
    Constant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Fp32,
    Amp,
}

/// One experiment of the paper. Exactly one of `matrix`, `mixes` or `workloads` says what
/// runs.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentDecl {
    #[schemars(with = "u32")]
    pub id: Spanned<u32>,
    pub title: String,
    /// Homogeneous collocation: models × job counts × modes.
    #[serde(default)]
    #[schemars(with = "Option<MatrixDecl>")]
    pub matrix: Option<Spanned<MatrixDecl>>,
    /// Heterogeneous collocation: job classes mixed as `L+M+2S`.
    #[serde(default)]
    #[schemars(with = "Option<MixesDecl>")]
    pub mixes: Option<Spanned<MixesDecl>>,
    /// Workloads listed one by one.
    #[serde(default)]
    pub workloads: Vec<WorkloadDecl>,
}

/// `models × layouts`: for every entry of `models`, every layout's job count in each of its
/// modes, in the order written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixDecl {
    #[schemars(with = "u32")]
    pub batch_size: Spanned<u32>,
    pub models: Vec<JobTemplate>,
    pub layouts: Vec<LayoutDecl>,
    #[serde(default)]
    pub training: Option<TrainingDecl>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobTemplate {
    #[schemars(with = "String")]
    pub model: Spanned<String>,
    #[schemars(with = "String")]
    pub dataset: Spanned<String>,
    /// Overrides the matrix's batch size.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub batch_size: Option<Spanned<u32>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayoutDecl {
    /// Identical jobs that run together.
    #[schemars(with = "u32")]
    pub jobs: Spanned<u32>,
    /// `exclusive`, `naive`, `mps`, `mig:<profile>` or `mps-limited:<profile>`, where the
    /// profile is a compute-slice class (`1g`..`7g`) or a profile name of the target GPU.
    #[schemars(with = "Vec<ModeSpelling>")]
    pub modes: Vec<Spanned<String>>,
}

/// A mode as written in a layout.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct ModeSpelling(
    #[schemars(regex(pattern = r"^(exclusive|naive|mps|(mig|mps-limited):[1-7]g(\.[0-9]+gb(\+me)?)?)$"))] String,
);

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixesDecl {
    /// Job classes by letter.
    pub classes: BTreeMap<String, ClassDecl>,
    /// Mixes such as `M+2S`: a count (default 1) before each class letter.
    #[schemars(with = "Vec<String>")]
    pub mixes: Vec<Spanned<String>>,
    /// Each mix runs in each of these modes (`naive`, `mps`, `mig`, `mps-limited`), in order.
    #[schemars(with = "Vec<String>")]
    pub modes: Vec<Spanned<String>>,
    #[serde(default)]
    pub training: Option<TrainingDecl>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassDecl {
    #[schemars(with = "String")]
    pub model: Spanned<String>,
    #[schemars(with = "String")]
    pub dataset: Spanned<String>,
    #[schemars(with = "u32")]
    pub batch_size: Spanned<u32>,
    /// MIG profile (class or name) the job gets in `mig` and `mps-limited` modes.
    #[schemars(with = "String")]
    pub mig: Spanned<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadDecl {
    /// Optional explicit id; by default one is made from the content.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub id: Option<Spanned<String>>,
    /// `exclusive`, `naive`, `mps`, `mps-limited` or `mig`.
    #[schemars(with = "String")]
    pub mode: Spanned<String>,
    pub jobs: Vec<JobDecl>,
    /// The authors' radT workload number this came from.
    #[serde(default)]
    pub radt: Option<u32>,
    #[serde(default)]
    pub training: Option<TrainingDecl>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobDecl {
    #[schemars(with = "String")]
    pub model: Spanned<String>,
    #[schemars(with = "String")]
    pub dataset: Spanned<String>,
    #[schemars(with = "u32")]
    pub batch_size: Spanned<u32>,
    /// MIG profile (class or name), for `mig` and `mps-limited` workloads.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub mig: Option<Spanned<String>>,
    /// Repeat this job so many times (default 1).
    #[serde(default)]
    pub count: Option<u32>,
}
