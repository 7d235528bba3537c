//! The results of an analysis: plain data, serialisable, free of polars.
//!
//! Units are in the field names (`_bytes`, `_seconds`, `_pct`, `_j`, `_w`); throughputs
//! are images per second. A value that could not be measured is `None`, never zero.

pub use colloc_plan::{GpuTarget, MixClass, WorkloadForm};
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything the report needs from one campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub campaign: String,
    /// Any run of the campaign came from the simulated backend.
    pub simulated: bool,
    pub provenance: Provenance,
    /// The data source most workloads used; the main figures show that one.
    pub primary_data: String,
    /// Every run directory, sorted by run id, whatever its status.
    pub runs: Vec<RunResult>,
    /// Every workload with runs, sorted by (experiment, label, data, mode, id).
    pub workloads: Vec<WorkloadResult>,
    /// Each model alone on the whole GPU, per data source.
    pub baselines: Vec<Baseline>,
    /// Per configuration (same jobs, same data), the modes compared.
    pub comparisons: Vec<ModeComparison>,
    /// GPU activity over time of the headline workloads (one run each).
    pub timelines: Vec<Timeline>,
    /// Exp-37-style mixes: each job class's normalised throughput beside its co-runners,
    /// per mode and data source (see [`InterferenceCell`]).
    #[serde(default)]
    pub interference: Vec<InterferenceCell>,
    /// Planned workloads without any run yet (empty unless analysed with the plan).
    #[serde(default)]
    pub pending: Vec<PendingWorkload>,
    /// The GPU the campaign's plan targets (when analysed with the plan).
    #[serde(default)]
    pub target: Option<GpuTarget>,
    /// Workloads measured under a window protocol and again under whole epochs, side by
    /// side (empty, and absent from the JSON, unless the campaign has both).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protocol_validation: Vec<ProtocolValidation>,
}

/// How close a window protocol's numbers must come to whole epochs' (relative): the goal
/// of the protocol validation.
pub const PROTOCOL_GOAL: f64 = 0.03;

/// One workload under a window protocol (`quick`) and under whole epochs: the medians over
/// their repetitions, and each difference as window / epochs − 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolValidation {
    /// The workload under the window protocol, and its twin under whole epochs.
    pub window_id: String,
    pub epochs_id: String,
    pub experiment: u32,
    pub label: String,
    pub mode: Mode,
    pub layout: String,
    pub data: String,
    pub n_jobs: usize,
    pub window_protocol: String,
    pub epoch_protocol: String,
    /// Repetitions with an aggregate ratio under each protocol.
    pub window_runs: u32,
    pub epoch_runs: u32,
    /// Aggregate ratio (STP), the median over repetitions.
    pub window_ratio: Option<f64>,
    pub epoch_ratio: Option<f64>,
    pub ratio_difference: Option<f64>,
    /// Per-job epoch time (the dataset's training images over the job's throughput: in the
    /// common window; over the epochs after the first), the median over jobs and repetitions.
    pub window_epoch_seconds: Option<f64>,
    pub epoch_epoch_seconds: Option<f64>,
    pub epoch_seconds_difference: Option<f64>,
    /// The window protocol's precision: the relative half-width of the 95% interval of a
    /// job's throughput over its window, over its jobs and repetitions.
    #[serde(default)]
    pub window_ci_rel: Option<Stats>,
    /// Under whole epochs: the seconds an epoch after the first loses at its start, which a
    /// window inside one epoch does not see; the median over jobs and repetitions.
    #[serde(default)]
    pub epoch_start_seconds: Option<f64>,
    /// Both differences within ±[`PROTOCOL_GOAL`]; `None` when one is missing.
    pub within_goal: Option<bool>,
}

/// One cell of an interference matrix: how fast the jobs of one class of a mix train beside
/// the mix's other jobs, relative to the class's model alone on the whole GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterferenceCell {
    pub experiment: u32,
    pub mode: Mode,
    pub data: String,
    /// The mix (`L+2S`) and its place in the experiment's declared list (the plan's form).
    pub mix: String,
    pub position: u32,
    /// The class's letter (`S`), what its jobs run, and how many of them the mix has.
    pub class: String,
    pub model: String,
    pub batch_size: u32,
    pub count: u32,
    /// The other jobs of the mix (`L+S` for an S job in L+2S; empty when it runs alone).
    pub co_runners: String,
    /// Median over the class's jobs of their median normalised throughput over the
    /// repetitions; min and max over every job and repetition; n the values behind them.
    pub normalised_throughput: Option<Stats>,
    /// Some of those values divide by a baseline measured on another host than the job's
    /// (see [`BaselineHost`]).
    #[serde(default)]
    pub cross_host_baseline: bool,
    /// Some of those values come from a run a foreign process disturbed (the mix's
    /// [`WorkloadResult::disturbed_runs`]).
    #[serde(default)]
    pub disturbed: bool,
}

/// A workload of the campaign's plan none of whose runs is made yet. Whether its layout
/// can be made is known from the plan alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingWorkload {
    pub id: String,
    pub experiment: u32,
    pub label: String,
    pub mode: Mode,
    /// As [`WorkloadResult::layout`].
    pub layout: String,
    pub data: String,
    /// As [`WorkloadResult::timeline`] and [`WorkloadResult::form`].
    pub timeline: bool,
    pub form: WorkloadForm,
    pub feasible: bool,
    /// The plan's reason for infeasibility.
    pub reason: Option<String>,
    pub repetitions: u32,
}

/// Median and spread over repetitions (or over jobs and repetitions where said).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Number of values.
    pub n: u32,
}

impl Stats {
    /// Median, min and max of the finite values; `None` when there are none.
    pub(crate) fn of(values: impl IntoIterator<Item = f64>) -> Option<Stats> {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Stats { median, min: v[0], max: v[n - 1], n: n as u32 })
    }
}

// Statistics over runs. Every summarised metric is declared once, in a `measures!` block:
// its field, its doc and where each row's value comes from; the block makes the struct, its
// frame column and its statistics (`aggregate::measure`).

/// Where a metric's rows come from: one per counted run, or one per job of each counted run.
pub(crate) enum Source {
    Run(fn(&RunResult) -> Option<f64>),
    Job(fn(&JobRun) -> Option<f64>),
}

/// One metric of a [`Measures`] struct: its frame column, its rows, and its field.
pub(crate) struct Metric<S> {
    pub(crate) name: &'static str,
    pub(crate) source: Source,
    pub(crate) set: fn(&mut S, Option<Stats>),
}

/// A struct of statistics (median, min, max over rows) whose every field is a metric.
pub(crate) trait Measures: Default + Sized + 'static {
    const METRICS: &'static [Metric<Self>];
}

/// Declares a struct of `Option<Stats>` fields, one per metric, each with its source:
/// `field: Run(|r| value of RunResult r)` or `field: Job(|j| value of JobRun j)`.
macro_rules! measures {
    ($(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* $field:ident: $src:ident(|$x:ident| $value:expr),)*
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
        pub struct $name {
            $($(#[$fm])* pub $field: Option<Stats>,)*
        }
        impl $name {
            /// Every field's name (its serialised name too), in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// The statistic of the field named `name` (`None`: no such field).
            pub fn by_name(&self, name: &str) -> Option<Option<Stats>> {
                match name {
                    $(stringify!($field) => Some(self.$field),)*
                    _ => None,
                }
            }
        }
        impl Measures for $name {
            const METRICS: &'static [Metric<Self>] = &[$(Metric {
                name: stringify!($field),
                source: Source::$src(|$x| $value),
                set: |s, v| s.$field = v,
            },)*];
        }
    };
}

measures! {
    /// A model alone on the whole GPU, over its counted runs.
    pub struct BaselineStats {
        /// Always present: a baseline is a run alone that measured a throughput.
        throughput: Job(|j| j.throughput),
        epoch_seconds: Job(|j| j.epoch_seconds),
        measured_epoch_seconds: Job(|j| j.measured_epoch_seconds),
        /// Peak device memory of the job (NVML, else PyTorch reserved).
        memory_bytes: Job(|j| j.gpu_mem_bytes_max.or(j.torch_peak_reserved_bytes)),
        data_wait_share: Job(|j| j.data_wait_share),
        cpu_cores: Job(|j| j.cpu_cores),
        sm_activity_pct: Run(|r| r.utilisation.as_ref().and_then(|u| u.sm_activity_pct)),
        /// The relative half-width of the 95% confidence interval of the throughput (see
        /// [`ThroughputCi`]), over the runs with one.
        throughput_ci_rel: Job(|j| j.throughput_ci.map(|c| c.relative_half_width)),
    }
}

measures! {
    /// One workload over its counted repetitions.
    pub struct WorkloadStats {
        aggregate_throughput: Run(|r| r.aggregate_throughput),
        /// System throughput (STP): the jobs' normalised throughputs (each over its model
        /// alone on the whole GPU) summed; the aggregate throughput ratio.
        aggregate_ratio: Run(|r| r.aggregate_ratio),
        /// Average normalised turnaround time (ANTT): the mean over the jobs of alone
        /// throughput over collocated throughput (1: as fast as alone; higher is worse).
        antt: Run(|r| slowdowns(r).map(|s| s.iter().sum::<f64>() / s.len() as f64)),
        /// Fairness: the lowest normalised throughput of the jobs over the highest (1: every
        /// job progresses alike).
        fairness: Run(|r| fairness(r)),
        /// Over all jobs and repetitions: a job's throughput over its model alone.
        per_job_normalised_throughput: Job(|j| j.slowdown.map(|s| 1.0 / s)),
        energy_per_image_j: Run(|r| r.energy_per_image_j),
        /// Over all jobs and repetitions.
        per_job_epoch_seconds: Job(|j| j.epoch_seconds),
        /// Whole epochs, over all jobs and repetitions: the seconds an epoch after the first
        /// loses at its start.
        per_job_epoch_start_seconds: Job(|j| j.epoch_start_seconds),
        /// Over all jobs and repetitions.
        per_job_slowdown: Job(|j| j.slowdown),
        /// Over all jobs and repetitions.
        data_wait_share: Job(|j| j.data_wait_share),
        /// Over all jobs and repetitions: the share of the window spent starting epochs.
        epoch_start_wait_share: Job(|j| j.epoch_start_wait_share),
        /// Over all jobs and repetitions with one: the relative half-width of the 95%
        /// confidence interval of the job's throughput (see [`ThroughputCi`]).
        throughput_ci_rel: Job(|j| j.throughput_ci.map(|c| c.relative_half_width)),
        cpu_cores_total: Run(|r| r.jobs.iter().map(|j| j.cpu_cores).sum()),
        mem_used_bytes_max: Run(|r| r.utilisation.as_ref().and_then(|u| u.mem_used_bytes_max)),
        mem_used_share: Run(|r| r.utilisation.as_ref().and_then(|u| u.mem_used_share)),
        sm_activity_pct: Run(|r| r.utilisation.as_ref().and_then(|u| u.sm_activity_pct)),
        sm_occupancy_pct: Run(|r| r.utilisation.as_ref().and_then(|u| u.sm_occupancy_pct)),
        tensor_activity_pct: Run(|r| r.utilisation.as_ref().and_then(|u| u.tensor_activity_pct)),
        dram_bw_util_pct: Run(|r| r.utilisation.as_ref().and_then(|u| u.dram_bw_util_pct)),
        gpu_util_pct: Run(|r| r.utilisation.as_ref().and_then(|u| u.gpu_util_pct)),
        power_w: Run(|r| r.utilisation.as_ref().and_then(|u| u.power_w)),
    }
}

measures! {
    /// One job position of a workload over its repetitions.
    pub struct JobStats {
        throughput: Job(|j| j.throughput),
        epoch_seconds: Job(|j| j.epoch_seconds),
        measured_epoch_seconds: Job(|j| j.measured_epoch_seconds),
        /// Alone throughput over this job's: its normalised turnaround time.
        slowdown: Job(|j| j.slowdown),
        /// This job's throughput over its model alone: its normalised progress.
        normalised_throughput: Job(|j| j.slowdown.map(|s| 1.0 / s)),
        data_wait_share: Job(|j| j.data_wait_share),
        cpu_cores: Job(|j| j.cpu_cores),
        gpu_mem_bytes_max: Job(|j| j.gpu_mem_bytes_max),
        torch_peak_reserved_bytes: Job(|j| j.torch_peak_reserved_bytes),
        /// The relative half-width of the 95% confidence interval of the throughput.
        throughput_ci_rel: Job(|j| j.throughput_ci.map(|c| c.relative_half_width)),
    }
}

/// A run's fairness: the lowest of its jobs' normalised throughputs over the highest (the
/// lowest slowdown over the highest).
pub(crate) fn fairness(r: &RunResult) -> Option<f64> {
    slowdowns(r).map(|s| s.iter().copied().fold(f64::INFINITY, f64::min) / s.iter().copied().fold(0.0, f64::max))
}

/// Every job's slowdown (alone throughput over its own) when each has one.
fn slowdowns(r: &RunResult) -> Option<Vec<f64>> {
    let s: Vec<f64> = r.jobs.iter().map(|j| j.slowdown).collect::<Option<_>>()?;
    (!s.is_empty() && s.iter().all(|x| x.is_finite() && *x > 0.0)).then_some(s)
}

impl Source {
    pub(crate) fn of_run(&self, r: &RunResult) -> Option<f64> {
        match self {
            Source::Run(f) => f(r),
            Source::Job(_) => None,
        }
    }
    pub(crate) fn of_job(&self, j: &JobRun) -> Option<f64> {
        match self {
            Source::Job(f) => f(j),
            Source::Run(_) => None,
        }
    }
}

/// Where the traces came from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Provenance {
    pub campaign: String,
    /// sha256 of the campaign's `SHA256SUMS`.
    pub manifest_sha256: String,
    /// Files listed in the manifest.
    pub manifest_files: usize,
    pub runs_by_status: BTreeMap<String, usize>,
    pub simulated: bool,
    /// Distinct values over the runs, sorted.
    pub gpu_names: Vec<String>,
    pub gpu_uuids: Vec<String>,
    pub driver_versions: Vec<String>,
    pub cuda_driver_versions: Vec<String>,
    pub gpu_memory_total_bytes: Option<u64>,
    pub gpu_sm_count: Option<u32>,
    pub gpu_power_limit_w: Option<f64>,
    pub mig_mode: Vec<String>,
    pub hostnames: Vec<String>,
    pub cpu_models: Vec<String>,
    pub cpu_cores: Vec<u32>,
    pub host_memory_total_bytes: Vec<u64>,
    pub kernels: Vec<String>,
    pub oses: Vec<String>,
    pub runner_versions: Vec<String>,
    pub git_commits: Vec<String>,
    pub plan_hashes: Vec<String>,
    pub spec_hashes: Vec<String>,
    /// Versions the training jobs reported: `python` → values, `torch` → values, ...
    pub job_software: BTreeMap<String, Vec<String>>,
    /// Protocol names and kinds (`quick: window 60 s`, ...).
    pub protocols: Vec<String>,
    pub telemetry_sources: Vec<String>,
    /// Telemetry columns left empty, with why (first reason seen per column).
    pub telemetry_unavailable: BTreeMap<String, String>,
    /// RFC 3339, earliest start and latest end over the runs.
    pub first_started_at: Option<String>,
    pub last_ended_at: Option<String>,
    /// Runs the campaign's plan asks for, when the analysis was given the plan.
    #[serde(default)]
    pub planned_runs: Option<usize>,
    /// Planned runs (`<workload>.r<n>`) without a run directory yet.
    #[serde(default)]
    pub missing_runs: Vec<String>,
    /// Run directories of a later attempt of a run (`.a2`, ...): the latest attempt counts.
    #[serde(default)]
    pub attempts_again: usize,
    /// Runs of a repetition the plan does not ask for, which the runner added (a model alone
    /// measured again on a host, or interleaved with the runs it divides).
    #[serde(default)]
    pub beyond_plan: usize,
}

/// One run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub run_id: String,
    pub workload_id: String,
    pub repetition: u32,
    pub attempt: u32,
    /// A later attempt of the same repetition replaces this one in every statistic.
    pub superseded: bool,
    pub status: RunStatus,
    pub reason: Option<String>,
    /// The mode the runner applied (or planned, when nothing ran).
    pub mode_applied: String,
    pub simulated: bool,
    pub started_at: String,
    pub ended_at: String,
    /// The host the run ran on: its GPU's UUID (`meta.json`, `gpu.uuid`); `None` when the
    /// trace does not name its GPU. The lent GPUs of one model are several physical hosts,
    /// whose CPUs differ, so a job's speed alone differs between them.
    #[serde(default)]
    pub host_id: Option<String>,
    /// The host's single-thread CPU score (`host.calibration.single_thread_mib_s`, MiB/s of
    /// SHA-256), when the runner measured it (absent in older traces).
    #[serde(default)]
    pub host_cpu_single_thread_mib_s: Option<f64>,
    /// The source commit of the runner that made the run (`software.git_commit`), its first
    /// 12 characters.
    #[serde(default)]
    pub git_commit: Option<String>,
    /// The job protocol the run's jobs spoke (`hello.protocol_version`): 1, the first quick
    /// protocol (each job's own window, cut at its sample boundaries, intersected); 2, one
    /// common window ended by the runner, measured from per-iteration times.
    pub protocol_version: u32,
    /// The interval in which every job of the workload trained.
    pub window: Option<Window>,
    pub jobs: Vec<JobRun>,
    /// Sum of the jobs' throughputs in the common window.
    pub aggregate_throughput: Option<f64>,
    /// Sum over jobs of throughput / the same job's model alone on the whole GPU (on the
    /// same host when that host has such a run: see [`JobRun::baseline_host`]).
    pub aggregate_ratio: Option<f64>,
    /// Some job's ratio divides by the baseline pooled over other hosts, this run's host
    /// having no run of that model alone (a note names it).
    #[serde(default)]
    pub cross_host_baseline: bool,
    /// The runner invocation that made the run (`meta.json` → `invocation`); absent in
    /// older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<String>,
    /// The runner made an unrecorded run first on this host in the invocation (`--settle`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settled: bool,
    /// A process of no job was on the GPU during the run's measurement (`meta.json` →
    /// `telemetry.foreign_processes`; a note names it): its numbers are disturbed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    pub utilisation: Option<Utilisation>,
    /// GPU energy in the window over the images trained in it.
    pub energy_per_image_j: Option<f64>,
    /// Why some value is missing.
    pub notes: Vec<String>,
}

/// `[start, end]` in the host's monotonic seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub start_mono: f64,
    pub end_mono: f64,
    /// Host seconds.
    pub seconds: f64,
    /// The jobs' seconds per host second: 1 for real traces, the time scale of simulated
    /// ones (whose jobs count simulated seconds while their events carry host time).
    pub clock_scale: f64,
}

impl Window {
    /// The window's length on the jobs' clock.
    pub(crate) fn job_seconds(&self) -> f64 {
        self.seconds * self.clock_scale
    }

    /// Whether host monotonic time `mono` lies in `[start, end]` (never for NaN).
    pub(crate) fn contains(&self, mono: f64) -> bool {
        mono >= self.start_mono && mono <= self.end_mono
    }
}

/// One job of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRun {
    pub index: u32,
    /// Images per second in the common window.
    pub throughput: Option<f64>,
    /// The dataset's training images over the throughput.
    pub epoch_seconds: Option<f64>,
    /// Median of the `epoch_end` events' training seconds, scaled to the dataset's training
    /// images (a generated set may be a fraction of it), when the job finished epochs.
    pub measured_epoch_seconds: Option<f64>,
    pub epochs_measured: u32,
    /// Whole epochs: the seconds an epoch after the first loses at its start (the loader's
    /// workers restarting and filling their queues), the median over those epochs: the first
    /// `sample` interval's seconds beyond its images at the rate of the epoch's other ones.
    #[serde(default)]
    pub epoch_start_seconds: Option<f64>,
    /// Alone-on-the-GPU throughput over this throughput (> 1: slower than alone).
    pub slowdown: Option<f64>,
    /// Which baseline `slowdown` divides by: the same host's, or (the run's host having no
    /// run of the model alone) the one pooled over the other hosts. `None` without a ratio.
    #[serde(default)]
    pub baseline_host: Option<BaselineHost>,
    /// The runs alone whose median `slowdown` divides by, with their throughputs (what the
    /// intervals resample); empty without a ratio.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baseline_runs: Vec<BaselineRun>,
    /// How far one run of the model alone strays from another made beside it: the pooled
    /// standard deviation of the log throughput of its runs alone within each of the run's
    /// host's invocations (the host, where the traces name no invocation) that has two or
    /// more; where those give the host fewer than 4 degrees of freedom (a threshold of ours),
    /// or the ratio borrows other hosts' baseline, the same pooled over every host's; `None`
    /// when no host has two. The intervals draw each
    /// baseline run within it, so that a ratio resting on one or two runs alone is as
    /// uncertain as such a run is on its host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_spread: Option<f64>,
    /// The 95% confidence interval of `throughput` by batch means (see [`ThroughputCi`]);
    /// `None` with the reason in `throughput_ci_missing`.
    #[serde(default)]
    pub throughput_ci: Option<ThroughputCi>,
    #[serde(default)]
    pub throughput_ci_missing: Option<String>,
    /// Share of the window spent waiting for data.
    pub data_wait_share: Option<f64>,
    /// Iterations in the window whose data wait exceeded 0.1 s.
    pub slow_data_steps: Option<f64>,
    /// Share of the window the job's loader spent starting epochs: the data waits of each
    /// epoch's first iteration beyond the mean wait of the others, over the window (the
    /// epoch's first iterations told by the largest summed wait among the iterations'
    /// positions in an epoch). `None` where the window holds fewer than two epochs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch_start_wait_share: Option<f64>,
    /// Host CPU use of the job's process tree, in cores (100 % of one core = 1).
    pub cpu_cores: Option<f64>,
    pub rss_bytes_max: Option<f64>,
    /// Device memory of the job's processes as NVML reports it, peak in the window.
    pub gpu_mem_bytes_max: Option<f64>,
    /// Peak reserved memory of PyTorch's caching allocator.
    pub torch_peak_reserved_bytes: Option<f64>,
    /// Protocol 2: the host monotonic interval `[from, to]` the job's throughput and data
    /// wait were measured over (the workload's common window when its iterations cover it);
    /// `None` for protocol-1 runs, measured on their samples.
    pub measured_over: Option<[f64; 2]>,
    /// Why this job failed (meta.json), or its error event.
    pub failure: Option<String>,
}

impl JobRun {
    /// Job `index` with nothing measured.
    pub(crate) fn new(index: u32) -> Self {
        JobRun {
            index,
            throughput: None,
            epoch_seconds: None,
            measured_epoch_seconds: None,
            epochs_measured: 0,
            epoch_start_seconds: None,
            slowdown: None,
            baseline_host: None,
            baseline_runs: Vec::new(),
            baseline_spread: None,
            throughput_ci: None,
            throughput_ci_missing: None,
            data_wait_share: None,
            slow_data_steps: None,
            epoch_start_wait_share: None,
            cpu_cores: None,
            rss_bytes_max: None,
            gpu_mem_bytes_max: None,
            torch_peak_reserved_bytes: None,
            measured_over: None,
            failure: None,
        }
    }
}

/// One run alone that a job's ratio divides by (with others: their median).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineRun {
    pub run_id: String,
    /// Its throughput, images per second.
    pub throughput: f64,
    /// The relative half-width of its window's 95% interval, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_rel: Option<f64>,
    /// It was its host's first run in the campaign (or in its invocation) with no settling
    /// run before it: a freshly started host reads slow.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_on_host: bool,
}

/// The 95% intervals of a workload's ratios (percentile bootstrap over its repetitions,
/// the baseline runs each ratio divides by, and each job's window interval).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioIntervals {
    /// STP `[low, high]`.
    pub stp: [f64; 2],
    pub antt: [f64; 2],
    pub fairness: [f64; 2],
    /// The aggregate throughput `[low, high]` (repetitions and window intervals only: no
    /// baseline).
    pub aggregate_throughput: [f64; 2],
    /// Resamples drawn.
    pub resamples: u32,
}

/// Which host's runs alone a job's ratio divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineHost {
    /// The median of the model's runs alone made on the run's own host in the run's own
    /// invocation, the (up to) three nearest to it in time: baselines interleaved with it.
    Interleaved,
    /// The median of the model's runs alone on the run's own host.
    SameHost,
    /// The run's host has no run of the model alone: the median pooled over every host
    /// that has (all of them other hosts).
    OtherHosts,
}

/// The 95% confidence interval of one job's throughput over its measured window, by batch
/// means (`per_run::throughput_ci` computes it; a job-side stopping rule uses the same
/// definition):
///
/// * The window `[a, b]` is the job's measured interval: [`JobRun::measured_over`] for
///   protocol 2 (the common window `[release_mono, window_end_mono]`, or up to the job's
///   last iteration when its records stop short of it); for protocol 1 the job's own: from
///   the start of its first `sample` ending in the common window (the previous sample's
///   end, else its `window_start`) to the end of its last.
/// * `N` is the number of the job's iteration records whose end lies in `[a, b]` (protocol
///   2: its per-iteration ends; protocol 1: its samples, each one record covering the
///   iterations since the previous sample). `[a, b]` is split into
///   `k = min(10, floor(N / 5))` sub-intervals of equal duration; `k < 4` gives no interval.
/// * A sub-interval's throughput is the images credited to it over its duration, records
///   straddling an edge credited pro rata in time (as the window's own crediting,
///   `per_run::credit`); the mean of the `k` batch throughputs is the job's throughput over
///   `[a, b]`.
/// * With `s` the sample standard deviation of the batch throughputs (divisor `k − 1`), the
///   half-width is `t(0.975, k − 1) · s / √k`, `t` = 3.182, 2.776, 2.571, 2.447, 2.365,
///   2.306, 2.262 for 3 to 9 degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThroughputCi {
    /// `[a, b]`, host monotonic seconds.
    pub window: [f64; 2],
    /// `N`: the records ending in the window.
    pub records: u32,
    /// `k`: the batches.
    pub batches: u32,
    /// The mean of the batch throughputs, images per second.
    pub mean: f64,
    /// Images per second.
    pub half_width: f64,
    /// `half_width / mean`.
    pub relative_half_width: f64,
}

/// GPU activity averaged over the common window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Utilisation {
    pub sm_activity_pct: Option<f64>,
    pub sm_occupancy_pct: Option<f64>,
    pub tensor_activity_pct: Option<f64>,
    pub dram_bw_util_pct: Option<f64>,
    pub gpu_util_pct: Option<f64>,
    pub mem_util_pct: Option<f64>,
    pub power_w: Option<f64>,
    /// Peak device memory used in the window.
    pub mem_used_bytes_max: Option<f64>,
    pub mem_total_bytes: Option<f64>,
    /// mem_used_bytes_max / mem_total_bytes.
    pub mem_used_share: Option<f64>,
    /// From the energy counter; the power mean times the window when there is none.
    pub energy_j: Option<f64>,
    pub samples: u32,
    /// `gpu` (whole-GPU samples) or `instances` (mean over MIG instances).
    pub scope: String,
}

/// One workload over its repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub id: String,
    pub experiment: u32,
    pub label: String,
    pub mode: Mode,
    /// MIG slices per job (`1g×7`, `4g`) in `mig` and `mps-limited` modes, else empty.
    pub layout: String,
    pub data: String,
    /// The plan's roles: a headline workload, one the utilisation timeline shows.
    pub headline: bool,
    pub timeline: bool,
    /// One job, identical jobs, listed jobs, or a mix of job classes (the plan's).
    pub form: WorkloadForm,
    pub feasible: bool,
    /// The plan's reason for infeasibility.
    pub plan_reason: Option<String>,
    /// Same jobs and data, any mode: the key of [`ModeComparison`].
    pub config: String,
    /// The protocol of the campaign part that named its own (the id's `~<protocol>`);
    /// empty, and absent from the JSON, under the campaign's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub own_protocol: String,
    pub jobs: Vec<PlannedJobInfo>,
    pub repetitions_planned: u32,
    /// Runs counted per status (superseded attempts left out).
    pub runs_by_status: BTreeMap<String, usize>,
    /// `ok` when any repetition is ok, else the status of the runs.
    pub status: RunStatus,
    /// Distinct reasons of the runs that are not ok.
    pub reasons: Vec<String>,
    /// Statistics over the counted repetitions (see [`WorkloadStats`]).
    #[serde(flatten)]
    pub stats: WorkloadStats,
    /// Per job, in the order of `jobs`.
    pub job_stats: Vec<JobStats>,
    /// Counted repetitions whose ratio divides some job by another host's baseline (see
    /// [`RunResult::cross_host_baseline`]).
    #[serde(default)]
    pub cross_host_runs: u32,
    /// Per job, in the order of `jobs`: counted repetitions in which that job's ratio used
    /// another host's baseline.
    #[serde(default)]
    pub job_cross_host_runs: Vec<u32>,
    /// Counted repetitions during whose window a foreign process was on the GPU (see
    /// [`RunResult::disturbed`]).
    #[serde(default)]
    pub disturbed_runs: u32,
    /// The 95% intervals of STP, ANTT, fairness and the aggregate throughput; `None`
    /// without a ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<RatioIntervals>,
    /// Why the workload's ratios are not to be trusted as they stand: ANTT below 1 (every
    /// job faster beside others than alone), STP above the number of jobs, a ratio resting
    /// on one run alone or on a host's first run. Marked § in the tables and figures and
    /// counted in the claims' evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implausible: Vec<String>,
}

impl WorkloadResult {
    pub fn n_jobs(&self) -> usize {
        self.jobs.len()
    }
    /// `mps`, `naive`, `mig 1g×7`...
    pub(crate) fn mode_label(&self) -> String {
        if self.layout.is_empty() {
            self.mode.to_string()
        } else {
            format!("{} {}", self.mode, self.layout)
        }
    }
    /// Some run failed because a job ran out of device memory (an outcome of the
    /// workload, not a fault of the tooling).
    pub fn out_of_memory(&self) -> bool {
        self.status == RunStatus::Failed && self.reasons.iter().any(|s| is_memory_reason(s))
    }
    /// The status in one word for a table cell: `ok`, `OOM`, `failed`, `skipped`, `infeasible`.
    pub fn status_word(&self) -> &'static str {
        if self.out_of_memory() {
            "OOM"
        } else {
            self.status.as_str()
        }
    }
    /// All jobs run the same model on the same data with the same batch.
    pub fn homogeneous(&self) -> bool {
        self.jobs
            .windows(2)
            .all(|w| w[0].model == w[1].model && w[0].dataset == w[1].dataset && w[0].batch_size == w[1].batch_size)
    }
}

/// A reason names running out of device memory (CUDA's or the workload's own words).
pub(crate) fn is_memory_reason(s: &str) -> bool {
    let s = s.to_lowercase();
    s.contains("out of memory") || s.contains("oom")
}

/// A run's reason cut to what a reader of a table note needs: without the captured
/// stderr, and to whole sentences of at most about `BRIEF` characters.
pub fn brief_reason(reason: &str) -> String {
    const BRIEF: usize = 160;
    let r = reason.split("; stderr:").next().unwrap_or(reason).trim();
    if r.chars().count() <= BRIEF {
        return r.to_string();
    }
    // The longest run of whole sentences that fits.
    let mut cut = None;
    for (i, _) in r.match_indices(". ") {
        if r[..=i].chars().count() > BRIEF {
            break;
        }
        cut = Some(i + 1);
    }
    match cut {
        Some(i) => format!("{} …", &r[..i]),
        None => format!("{}…", r.chars().take(BRIEF).collect::<String>().trim_end()),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedJobInfo {
    pub index: u32,
    pub model: String,
    pub model_class: String,
    pub dataset: String,
    pub batch_size: u32,
    pub train_count: u64,
    pub mig_profile: Option<String>,
    pub mig_class: Option<String>,
    /// `mps-limited`: the MIG profile the caps stand in for.
    pub stands_in_for: Option<String>,
    /// `mps-limited`: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.
    pub mps_thread_pct: Option<u32>,
    /// `mps-limited`: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT in MiB.
    pub mps_mem_limit_mib: Option<u64>,
}

/// A model alone on the whole GPU (`exclusive` mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub model: String,
    pub dataset: String,
    pub batch_size: u32,
    pub data: String,
    /// The protocol of a campaign part that names its own (the workloads' `~<protocol>`);
    /// empty, and absent from the JSON, under the campaign's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub protocol: String,
    /// `exclusive`, or `naive` with one job when the campaign has no exclusive run of it.
    pub mode: Mode,
    pub workload_ids: Vec<String>,
    /// Over the runs of every host.
    #[serde(flatten)]
    pub stats: BaselineStats,
    /// Per host with runs of this baseline (the same mode), sorted by host id: what a
    /// collocated run on that host is divided by.
    #[serde(default)]
    pub hosts: Vec<HostBaseline>,
    /// Hosts with runs of this baseline.
    #[serde(default)]
    pub host_count: u32,
    /// The between-host spread: the largest per-host median throughput over the smallest;
    /// `None` with fewer than two hosts.
    #[serde(default)]
    pub host_spread: Option<f64>,
}

/// A baseline's runs on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostBaseline {
    /// The GPU's UUID ([`RunResult::host_id`]).
    pub host_id: Option<String>,
    /// Median, min and max over the host's runs, and their number.
    pub throughput: Stats,
    /// The host's single-thread CPU score, when its runs carry one (the median over them).
    pub cpu_single_thread_mib_s: Option<f64>,
}

/// The modes of one configuration side by side (medians over repetitions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeComparison {
    pub config: String,
    pub experiment: u32,
    pub label: String,
    pub data: String,
    pub n_jobs: usize,
    /// The compared value per mode, its median over repetitions (the best layout when a mode
    /// has several): the aggregate throughput ratio (each job over its model alone, summed)
    /// when `normalised`, else the aggregate throughput in images per second.
    pub per_mode: BTreeMap<String, f64>,
    /// Whether every measured workload of the configuration has an aggregate ratio, so that
    /// the modes are compared on it.
    pub normalised: bool,
    pub mps_over_naive: Option<f64>,
    /// MPS over MIG, or over `mps-limited` where no MIG run is ok (see `mig_stand_in`).
    pub mps_over_mig: Option<f64>,
    /// `mig`, or `mps-limited` when it stood in, for `mps_over_mig`.
    pub mig_stand_in: Option<Mode>,
    /// The mode with the highest aggregate throughput among the collocation modes.
    pub best_mode: Option<Mode>,
    /// MIG layouts of this configuration that cannot be made on the GPU.
    pub mig_infeasible: bool,
}

/// GPU activity over time in one run's common window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub workload_id: String,
    pub run_id: String,
    pub label: String,
    pub mode: Mode,
    pub layout: String,
    pub data: String,
    /// The window's samples in time order; when they are more than 4,000, each of `bins`
    /// equal spans of the window as its least values at its first sample time and its
    /// greatest at its last.
    pub points: Vec<TimelinePoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds since the window opened.
    pub t: f64,
    pub sm_activity_pct: Option<f64>,
    pub sm_occupancy_pct: Option<f64>,
    pub tensor_activity_pct: Option<f64>,
    pub dram_bw_util_pct: Option<f64>,
    pub gpu_util_pct: Option<f64>,
    pub mem_used_bytes: Option<f64>,
    pub power_w: Option<f64>,
}

impl Results {
    /// `114 of 157 planned runs made, 43 not yet` while the campaign is incomplete, and how
    /// many runs there are beside them: `, and 12 runs beyond the plan's repetitions (...)`.
    pub fn incomplete(&self) -> Option<String> {
        let planned = self.provenance.planned_runs?;
        let missing = self.provenance.missing_runs.len();
        let beyond = match self.provenance.beyond_plan {
            0 => String::new(),
            n => format!(
                ", and {n} run{} beyond the plan's repetitions (models alone measured again on a host or \
                 interleaved with the runs they divide)",
                if n == 1 { "" } else { "s" }
            ),
        };
        (missing > 0)
            .then(|| format!("{} of {planned} planned runs made, {missing} not yet{beyond}", planned - missing))
    }
    /// Device memory of the campaign's GPU.
    pub fn gpu_memory_bytes(&self) -> Option<f64> {
        self.provenance.gpu_memory_total_bytes.map(|b| b as f64)
    }
    /// `NVIDIA H200` or `unknown GPU`.
    pub fn gpu_name(&self) -> String {
        if self.provenance.gpu_names.is_empty() {
            "unknown GPU".to_string()
        } else {
            self.provenance.gpu_names.join(", ")
        }
    }
    pub fn workload(&self, id: &str) -> Option<&WorkloadResult> {
        self.workloads.iter().find(|w| w.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_brief_reason_drops_stderr_and_keeps_whole_sentences() {
        let long = "job 6 (resnet152) ended before it was ready: out of memory: CUDA out of memory. \
                    Tried to allocate 392.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 293.62 MiB \
                    is free. Process 4243 has 25.36 GiB memory in use.; stderr: …Traceback";
        let b = brief_reason(long);
        assert_eq!(
            b,
            "job 6 (resnet152) ended before it was ready: out of memory: CUDA out of memory. \
             Tried to allocate 392.00 MiB. …"
        );
        assert_eq!(brief_reason("MIG mode is off; stderr: x"), "MIG mode is off");
        let one_sentence = "x".repeat(300);
        assert_eq!(brief_reason(&one_sentence).chars().count(), 161);
        assert!(is_memory_reason("out of memory: CUDA out of memory") && !is_memory_reason("timed out"));
    }
}
