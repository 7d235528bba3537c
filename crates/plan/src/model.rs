//! The plan: what `cargo xtask plan --json` prints and what the runner executes.
//! Plain data, serialised as JSON; the shape is documented in the README.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use colloc_trace::jobfile::{DataSource, JobData, Training};
/// The plan's protocol and each workload's own: the trace format's, which the runner hands
/// each job (its `kind`) and records in each run's `meta.json`.
pub use colloc_trace::protocol::{ProtocolKind, RunProtocol};
use colloc_trace::Mode;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub plan_version: u32,
    /// Campaign name, or `null` when every experiment was planned.
    pub campaign: Option<String>,
    /// The GPU the plan targets (`a100-40gb`, `h200-141gb`, ...).
    pub gpu: GpuTarget,
    pub protocol: RunProtocol,
    pub workloads: Vec<PlannedWorkload>,
    pub totals: Totals,
    /// sha256 over the spec files the plan was made from.
    pub spec_hash: String,
    /// How the runner interleaves the baselines marked `interleaved` with the collocated
    /// runs divided by them (the campaign's `interleaved_baselines`); absent: each host
    /// measures a baseline once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<Interleave>,
}

/// How baseline runs are interleaved with the collocated runs divided by them, on one host
/// in one invocation: `runs_per_invocation - 1` before the first such run, one again after
/// at most `between` of them, and one after the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interleave {
    pub between: u32,
    pub runs_per_invocation: u32,
}

impl Plan {
    /// Reads a plan written by `cargo xtask plan --json`.
    pub fn from_file(path: &std::path::Path) -> anyhow::Result<Plan> {
        use anyhow::Context;
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the plan {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{}: not a plan", path.display()))
    }

    /// The protocol `w` runs under: its own when its campaign part names one, else the plan's.
    pub fn protocol_of<'a>(&'a self, w: &'a PlannedWorkload) -> &'a RunProtocol {
        w.protocol.as_ref().unwrap_or(&self.protocol)
    }

    /// The workload whose runs job `job` of `w` is normalised by: the same model, dataset,
    /// batch size, data source and protocol alone on the whole GPU (`exclusive`, else one
    /// job under `naive`). `None` when the plan has none.
    pub fn baseline_of(&self, w: &PlannedWorkload, job: usize) -> Option<&PlannedWorkload> {
        let key = w.baseline_key(job)?;
        [Mode::Exclusive, Mode::Naive].into_iter().find_map(|mode| {
            self.workloads
                .iter()
                .find(|b| b.mode == mode && b.jobs.len() == 1 && b.baseline_key(0).as_ref() == Some(&key))
        })
    }
}

impl PlannedWorkload {
    /// What identifies "the same model alone" for job `job`: (model, dataset, batch size,
    /// data source, own protocol: empty under the plan's).
    pub fn baseline_key(&self, job: usize) -> Option<(String, String, u32, String, String)> {
        let j = self.jobs.get(job)?;
        Some((j.model.clone(), j.dataset.clone(), j.batch_size, self.data.clone(), self.own_protocol().to_string()))
    }

    /// The name of the workload's own protocol (its part's), empty under the plan's.
    pub fn own_protocol(&self) -> &str {
        self.protocol.as_ref().map_or("", |p| p.name.as_str())
    }

    /// Its runs are baselines: one job alone on the whole GPU (`exclusive` or `naive`).
    pub fn is_baseline(&self) -> bool {
        self.jobs.len() == 1 && matches!(self.mode, Mode::Exclusive | Mode::Naive)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuTarget {
    pub key: String,
    pub name: String,
    pub sms: u32,
    pub memory_gib: f64,
    pub compute_slices: u32,
    pub memory_slices: u32,
    /// Board power limit in watts, from the GPU table.
    #[serde(default)]
    pub power_limit_watts: f64,
    /// Images/s of one job of each model alone (batch 128, FP32, synthetic data), from the
    /// GPU table: the speed model's input ([`crate::perf`]), never a result.
    #[serde(default)]
    pub images_per_second: BTreeMap<String, f64>,
    /// How each model uses this GPU, fitted to measurements (the GPU table's
    /// `estimate_profiles`): the speed model's input in place of its own profile.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub profiles: BTreeMap<String, colloc_spec::gpu::ProfileFit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedWorkload {
    /// Unique within the plan, e.g. `e33-resnet26-x7-mps` or `e37-L+M+2S-mig@generated`.
    pub id: String,
    pub experiment: u32,
    /// Human label: `7 × resnet26`, `L+M+2S`.
    pub label: String,
    pub mode: Mode,
    /// `false` when the workload cannot be laid out on the target GPU (MIG slices).
    pub feasible: bool,
    /// Why it is infeasible, else `null`.
    pub reason: Option<String>,
    pub repetitions: u32,
    /// `synthetic`, `generated` or `imagefolder`: where every job's data comes from.
    pub data: String,
    /// Headline workloads get more repetitions in quick campaigns.
    pub headline: bool,
    /// The campaign's utilisation timeline shows this workload's telemetry.
    #[serde(default)]
    pub timeline: bool,
    /// One job, identical jobs, jobs listed one by one, or a mix of job classes.
    #[serde(default)]
    pub form: WorkloadForm,
    /// The authors' radT workload this corresponds to, when it does.
    pub radt: Option<RadtRef>,
    /// Estimated seconds of GPU time per repetition under the protocol.
    pub estimated_seconds: f64,
    pub jobs: Vec<PlannedJob>,
    /// The workload's own protocol, when its campaign part names another than the
    /// campaign's (its id then ends in `~<protocol>`); absent: the plan's `protocol`. Read it
    /// through [`Plan::protocol_of`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<RunProtocol>,
    /// A baseline held by the host's CPU (the campaign's `interleaved_baselines`): the
    /// runner measures it interleaved with the collocated runs divided by it, on their host
    /// and in their invocation, as the plan's [`Interleave`] says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interleaved: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RadtRef {
    pub experiment: u32,
    pub workload: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedJob {
    pub model: String,
    /// `small`, `medium`, `large` or `extra`.
    pub model_class: String,
    pub dataset: String,
    pub batch_size: u32,
    /// The host GPU's MIG profile name (`1g.5gb`, `1g.18gb`...): MIG mode only.
    pub mig_profile: Option<String>,
    /// The compute-slice class the job was declared with (`1g`..`7g`), in `mig` and
    /// `mps-limited` modes.
    pub mig_class: Option<String>,
    /// `mps-limited` only: the caps standing in for the MIG profile.
    pub mps_limits: Option<MpsLimits>,
    /// `mig` and `mps-limited`: the MIG profile the job runs in (or stands in for), as the
    /// target GPU's table gives it.
    #[serde(default)]
    pub mig_slice: Option<MigSlice>,
    pub data: JobData,
    pub training: Training,
}

/// How a workload is composed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadForm {
    /// One job.
    #[default]
    Single,
    /// Several jobs of one model, dataset and batch size.
    Homogeneous,
    /// Jobs listed one by one, not all alike.
    Listed,
    /// A mix of job classes (`L+M+2S`), from an experiment's `mixes`.
    Mix {
        /// Place of the mix in its experiment's declared list, from 0.
        position: u32,
        /// The terms in the order written.
        classes: Vec<MixClass>,
    },
}

/// One term of a mix: `count` jobs of the class `letter`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MixClass {
    pub letter: String,
    pub count: u32,
    pub model: String,
    pub dataset: String,
    pub batch_size: u32,
    /// The compute-slice class the class's jobs get under MIG (`1g`).
    pub mig_class: String,
}

/// A MIG profile of the target GPU as a job gets it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigSlice {
    /// `1g.18gb`.
    pub profile: String,
    pub compute_slices: u32,
    pub sms: u32,
    pub memory_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpsLimits {
    /// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: the profile's SMs over the GPU's SMs, in percent.
    pub active_thread_percentage: u32,
    /// CUDA_MPS_PINNED_DEVICE_MEM_LIMIT in MiB: the profile's memory.
    pub pinned_mem_limit_mib: u64,
    /// The host GPU's MIG profile this stands in for.
    pub stands_in_for: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub workloads: usize,
    pub jobs: usize,
    pub infeasible: usize,
    /// Workloads × repetitions.
    pub runs: usize,
    /// Every planned run and the interleaved baselines' runs.
    pub estimated_gpu_seconds: f64,
    /// The interleaved baselines' runs the plan adds to `runs` (estimated: each collocated
    /// workload's repetitions divided by `between`, rounded up, and one after them, per
    /// baseline it needs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interleaved_runs: usize,
    /// Their part of `estimated_gpu_seconds`.
    #[serde(default, skip_serializing_if = "is_zero_f")]
    pub interleaved_seconds: f64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_zero_f(x: &f64) -> bool {
    *x == 0.0
}
