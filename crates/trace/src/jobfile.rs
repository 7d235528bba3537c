//! The job file: everything a training job needs, written by the runner as `job-N.json`
//! and passed as `--job-file PATH`. See `workloads/PROTOCOL.md`.

use serde::{Deserialize, Serialize};

/// Reads a job file (`job-N.json`) as a job does: JSON of a [`JobFile`], no unknown field.
pub fn read(text: &str) -> Result<JobFile, String> {
    serde_json::from_str(text).map_err(|e| format!("not a job file: {e}"))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    pub protocol_version: u32,
    pub run_id: String,
    pub workload_id: String,
    /// Index of the job in its workload.
    pub job: u32,
    /// timm model name.
    pub model: String,
    pub batch_size: u32,
    pub data: JobData,
    pub training: Training,
    pub protocol: JobProtocol,
    /// Where the job appends its events (JSON lines).
    pub events_path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobData {
    /// `synthetic`, `generated` or `imagefolder`.
    pub source: DataSource,
    /// Dataset name from the spec (`cifar10`, `imagenet64`, `imagenet`).
    pub name: String,
    /// `imagefolder`: the dataset root with `train/` and `val/`; `generated`: the cache
    /// directory under which the generated set is written once and reused.
    pub path: Option<String>,
    /// Stored image side in pixels (32 for CIFAR-10, 64 for ImageNet 64×64, 0 for variable).
    pub image_size: u32,
    pub train_count: u64,
    pub val_count: u64,
    /// Fraction of the counts actually used (generated sets cut to size).
    pub fraction: f64,
    /// Image file format of generated sets (`png` or `jpeg`).
    pub format: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    Synthetic,
    Generated,
    Imagefolder,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Training {
    pub lr: f64,
    pub momentum: f64,
    pub weight_decay: f64,
    pub label_smoothing: f64,
    /// `cosine` (per epoch) or `constant`.
    pub schedule: String,
    /// `fp32` or `amp`.
    pub precision: String,
    pub channels_last: bool,
    pub workers: u32,
    /// Input side in pixels; `None` takes the model's default (224, 288 for efficientnetv2_s).
    pub input_size: Option<u32>,
    pub num_classes: u32,
    pub color_jitter: f64,
    pub validate_every_epoch: bool,
    pub seed: u64,
}

impl Training {
    /// The paper's settings (timm 0.9.5 `train.py` defaults as the authors ran them): SGD
    /// with momentum 0.9, weight decay 2e-5, lr 0.1 × batch / 256 on a cosine schedule,
    /// label smoothing 0.1, FP32, 4 loader workers, colour jitter 0.4, the model's input
    /// size, 1000 classes, validation every epoch, seed 42.
    pub fn paper(batch_size: u32) -> Training {
        Training {
            lr: 0.1 * batch_size as f64 / 256.0,
            momentum: 0.9,
            weight_decay: 2e-5,
            label_smoothing: 0.1,
            schedule: "cosine".into(),
            precision: "fp32".into(),
            channels_last: false,
            workers: 4,
            input_size: None,
            num_classes: 1000,
            color_jitter: 0.4,
            validate_every_epoch: true,
            seed: 42,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum JobProtocol {
    /// Train whole epochs, as the paper did.
    Paper { epochs: u32, sample_every: u32 },
    /// Warm up for `warmup_steps`, then measure for `window_seconds` after release; version
    /// 2: and at least `min_iterations`, until the runner's `stop`.
    Quick {
        warmup_steps: u32,
        window_seconds: f64,
        sample_every: u32,
        #[serde(default)]
        min_iterations: u32,
        /// Noise-adaptive stopping (both or neither): the window is met only once, in
        /// addition, the 95% interval of the job's throughput since release is within
        /// ±`precision_target` (relative half-width, in (0, 0.5]; [`crate::precision`]), or
        /// once `max_window_seconds` (at least `window_seconds`) have passed.
        precision_target: Option<f64>,
        max_window_seconds: Option<f64>,
    },
}
