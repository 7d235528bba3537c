//! `meta.json`: one run's status, the mode actually applied, and its provenance.
//!
//! Fields that could not be read are `null`, never invented. The workload as planned is
//! embedded verbatim (`workload`), so a run directory is self-describing.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::protocol::RunProtocol;
use crate::Mode;

/// Reads a run's `meta.json` as the analysis does: JSON of a [`RunMeta`] that is consistent
/// in itself (what a planned workload adds is checked by its reader): repetition and
/// attempt ≥ 1, the `run_id` of its workload, repetition and attempt, job records in index
/// order, monotonic marks finite and ≥ 0 (a foreign process's too, last seen not before
/// first seen), a positive CPU calibration, and for a run that is
/// `ok` a release and a window that ends after it.
pub fn read(text: &str) -> Result<RunMeta, String> {
    let meta: RunMeta = serde_json::from_str(text).map_err(|e| format!("not a run's meta.json: {e}"))?;
    check(&meta)?;
    Ok(meta)
}

fn check(meta: &RunMeta) -> Result<(), String> {
    if meta.repetition == 0 || meta.attempt == 0 {
        return Err(format!("repetition {} and attempt {} must both be ≥ 1", meta.repetition, meta.attempt));
    }
    let id = crate::ids::run_id(&meta.workload_id, meta.repetition, meta.attempt);
    if meta.run_id != id {
        return Err(format!(
            "run_id {} is not that of workload {}, repetition {}, attempt {} ({id})",
            meta.run_id, meta.workload_id, meta.repetition, meta.attempt
        ));
    }
    if let Some((k, j)) = meta.jobs.iter().enumerate().find(|(k, j)| j.index as usize != *k) {
        return Err(format!("`jobs[{k}]` has index {}, expected {k}", j.index));
    }
    for (what, v) in [("release_mono", meta.release_mono), ("window_end_mono", meta.window_end_mono)] {
        if let Some(v) = v.filter(|v| !v.is_finite() || *v < 0.0) {
            return Err(format!("`{what}` is {v}, not a finite number ≥ 0"));
        }
    }
    for (k, f) in meta.telemetry.foreign_processes.iter().enumerate() {
        for (what, v) in [("first_seen_mono", f.first_seen_mono), ("last_seen_mono", f.last_seen_mono)] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("`telemetry.foreign_processes[{k}].{what}` is {v}, not a finite number ≥ 0"));
            }
        }
        if f.last_seen_mono < f.first_seen_mono {
            return Err(format!(
                "`telemetry.foreign_processes[{k}]` was last seen at {} before it was first seen at {}",
                f.last_seen_mono, f.first_seen_mono
            ));
        }
    }
    if let Some(c) = &meta.host.calibration {
        if !(c.single_thread_mib_s.is_finite() && c.single_thread_mib_s > 0.0) {
            return Err(format!(
                "`host.calibration.single_thread_mib_s` is {}, not a positive number",
                c.single_thread_mib_s
            ));
        }
    }
    if meta.status == RunStatus::Ok {
        let Some(release) = meta.release_mono else {
            return Err("status ok without a `release_mono` (an ok run was released)".to_string());
        };
        if let Some(end) = meta.window_end_mono.filter(|end| *end <= release) {
            return Err(format!("`window_end_mono` {end} is not after `release_mono` {release}"));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub format_version: u32,
    pub run_id: String,
    pub campaign: String,
    pub workload_id: String,
    pub experiment: u32,
    pub repetition: u32,
    pub attempt: u32,
    pub status: RunStatus,
    /// Why the run is not `ok` (failed, skipped, infeasible); `null` when ok.
    pub reason: Option<String>,
    /// The collocation mode actually applied (`exclusive`, `naive`, `mps`, `mps-limited`,
    /// `mig`), or the planned one when nothing ran.
    pub mode: Mode,
    /// `true` for traces of the simulated backend: never to be mistaken for measurements.
    pub simulated: bool,
    /// The planned workload (a `colloc_plan::PlannedWorkload`), verbatim. Untyped here: its
    /// type is the plan's, and the trace format comes before the plan (the plan depends on
    /// this crate, not the other way); its reader (the analysis) reads it as that type.
    pub workload: serde_json::Value,
    /// The run's protocol: its workload's own, else the plan's (a plan's protocol is of
    /// this type). Traces made before protocol version 2 have no `min_iterations`.
    pub protocol: RunProtocol,
    pub gpu: Option<GpuInfo>,
    pub mps: Option<MpsInfo>,
    pub mig: Option<MigInfo>,
    pub host: HostInfo,
    pub software: SoftwareInfo,
    pub telemetry: TelemetryInfo,
    pub jobs: Vec<JobRecord>,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub ended_at: String,
    /// Monotonic seconds of the barrier release (`null` if never released).
    pub release_mono: Option<f64>,
    /// Protocol version 2: monotonic seconds at which the runner wrote `stop` to every job,
    /// the end of the workload's common window `[release_mono, window_end_mono]` (`null`
    /// when the window was never met, and absent in version-1 traces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_end_mono: Option<f64>,
    /// Where the run's time went, on the runner's monotonic clock (absent in older traces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<RunPhases>,
    /// Why the runner added this run to the selection: a baseline (one model alone) measured
    /// on this host for the collocated workloads named, as a new repetition when the
    /// campaign has runs of it from other hosts only; absent for selected runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<String>,
    /// With `--settle`: the unrecorded run this GPU made first in the invocation, so that
    /// this run does not meet a freshly started host's cold caches (its run id, status and
    /// seconds); absent when the invocation did not settle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<String>,
    /// The runner invocation that made the run: when it started (RFC 3339 UTC). With the
    /// GPU's UUID it names the host and the stretch of time whose interleaved baselines the
    /// run is divided by; absent in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<String>,
}

impl RunMeta {
    /// The run's protocol trains whole epochs (`protocol.kind` is `paper`): no common window.
    pub fn whole_epochs(&self) -> bool {
        self.protocol.kind.whole_epochs()
    }
}

/// Where a run's time went: seconds between the runner's own marks (monotonic clock), and
/// per job the phases it reported in its `ready` event. A mark the run never reached is
/// `null` (a run that failed before its release has no window).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPhases {
    /// From the run's start to every job spawned: trace directory, job files, the mode set
    /// up (MPS daemon started, MIG instances made).
    pub mode_setup_seconds: f64,
    /// From the jobs spawned to the last job ready (interpreter, imports, model, data,
    /// warm-up).
    pub to_ready_seconds: Option<f64>,
    /// From the last job ready to the release (the runner's poll).
    pub barrier_seconds: Option<f64>,
    /// The measurement window: release to stop (protocol 2), release to the last job's
    /// exit otherwise.
    pub window_seconds: Option<f64>,
    /// From the stop to the last job reaped.
    pub exit_seconds: Option<f64>,
    /// Telemetry stopped and the mode torn down (MPS daemon quit, MIG instances destroyed).
    pub teardown_seconds: f64,
    /// From the run's start to the end of its teardown.
    pub total_seconds: f64,
    /// `total_seconds - window_seconds`: the run's GPU time outside its window.
    pub outside_window_seconds: Option<f64>,
    /// Jobs were forked from a preloaded job server (PyTorch and timm imported once per
    /// runner invocation) instead of started as fresh interpreters.
    pub preloaded: bool,
    /// Per job, in job order: what its `ready` event reported (`null` where it never came).
    pub jobs: Vec<Option<JobPhases>>,
}

/// One job's phases before its release, from its `ready` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPhases {
    /// From the job's start to its warm-up: imports (none when preloaded), CUDA, model,
    /// data.
    pub setup_seconds: f64,
    /// The warm-up iterations, synchronised.
    pub warmup_seconds: f64,
    pub warmup_steps: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Failed,
    Skipped,
    Infeasible,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Skipped => "skipped",
            RunStatus::Infeasible => "infeasible",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub index: u32,
    pub name: String,
    pub uuid: String,
    pub driver_version: Option<String>,
    /// CUDA driver API version, e.g. "13.0".
    pub cuda_version: Option<String>,
    pub nvml_version: Option<String>,
    pub architecture: Option<String>,
    pub memory_total_bytes: Option<u64>,
    pub sm_count: Option<u32>,
    pub mig_mode_current: Option<bool>,
    pub mig_mode_pending: Option<bool>,
    pub compute_mode: Option<String>,
    pub persistence_mode: Option<bool>,
    pub power_limit_watts: Option<f64>,
    pub clocks_max_mhz: BTreeMap<String, u32>,
    pub clocks_applied_mhz: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpsInfo {
    /// The daemon was started by this run and was serving.
    pub daemon_started: bool,
    pub pipe_directory: String,
    pub log_directory: String,
    /// Per job: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, if set.
    pub active_thread_percentage: Vec<Option<u32>>,
    /// Per job: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT in MiB, if set.
    pub pinned_mem_limit_mib: Vec<Option<u64>>,
    /// Whether the daemon served every job: checked once every job was ready, before the
    /// release (absent in older traces and for runs whose jobs never all became ready).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<MpsClientCheck>,
}

/// The check that each job's own process (the pid of its `hello` event) is a client of the
/// run's MPS daemon: the driver lists it among the GPU's MPS clients
/// (`nvmlDeviceGetMPSComputeRunningProcesses`). A job that is not one fails the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpsClientCheck {
    /// `false` when the driver's process lists could not be read (`reason` says why); the
    /// run then goes on unchecked.
    pub checked: bool,
    pub reason: Option<String>,
    /// Per job, in job order (empty when not checked).
    pub jobs: Vec<MpsClientJob>,
}

/// How the driver listed one job's process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpsClientJob {
    /// The job's own process as it reported it in `hello` (the spawned one without it).
    pub pid: Option<u32>,
    pub listed_as: DriverListing,
}

/// How the driver lists a process on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverListing {
    /// Among the MPS clients (and the compute processes).
    MpsClient,
    /// Among the compute processes only: it uses the GPU outside MPS.
    ComputeProcess,
    /// In neither list.
    NotListed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigInfo {
    pub instances: Vec<MigInstance>,
    /// All instances created by the run were destroyed and checked gone.
    pub torn_down: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigInstance {
    pub job: u32,
    pub profile: String,
    pub gpu_instance_id: u32,
    pub compute_instance_id: u32,
    pub device_uuid: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub cpu_cores: Option<u32>,
    pub memory_total_bytes: Option<u64>,
    pub kernel: Option<String>,
    pub os: Option<String>,
    /// The host's CPU speed, measured by the runner at the start of its invocation (absent
    /// in older traces): with the GPU's UUID, what tells hosts apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CpuCalibration>,
}

/// A short CPU benchmark run by the runner once per invocation, before any run: SHA-256
/// over an in-memory buffer, on one thread and on every core at once. Its scores compare
/// hosts; they are not a model of the loaders' work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuCalibration {
    /// What was measured, e.g. "sha256 of 64 MiB, best of 3".
    pub method: String,
    /// MiB/s on one thread.
    pub single_thread_mib_s: f64,
    /// MiB/s summed over `threads` threads running at once.
    pub all_threads_mib_s: f64,
    pub threads: u32,
    /// Wall seconds the calibration took.
    pub seconds: f64,
    /// RFC 3339 UTC: when it was measured.
    pub measured_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoftwareInfo {
    pub runner_version: String,
    pub git_commit: Option<String>,
    pub git_dirty: Option<bool>,
    /// sha256 of the plan the run came from.
    pub plan_hash: String,
    pub spec_hash: Option<String>,
    /// sha256 of the runner binary that made the run (absent in older traces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_sha256: Option<String>,
    /// sha256 of each file of the training program's directory (`workloads/*.py`, named as
    /// the job command names its directory), absent in older traces and for the simulated
    /// job.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_files: BTreeMap<String, String>,
    /// The GPU host's Python environment against the training program's lock
    /// (`workloads/envcheck.py`), checked once per invocation before any GPU time; absent
    /// in older traces and for the simulated job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<EnvironmentCheck>,
}

/// What `envcheck.py` found on the host: the lock it read (as the job command names the
/// training program's directory), each locked name's version here (`None`: not
/// installed), and one line per difference; `error` when the check could not be made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentCheck {
    pub lock: String,
    #[serde(default)]
    pub here: BTreeMap<String, Option<String>>,
    #[serde(default)]
    pub differs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TelemetryInfo {
    /// Samples per second asked for; 0 when telemetry was off.
    pub rate_hz: f64,
    pub samples: u64,
    /// Source: `nvml`, `simulated` or `off`.
    pub source: String,
    /// Columns of telemetry.csv.gz that stayed empty because the GPU or driver did not
    /// provide them, with why.
    pub unavailable: BTreeMap<String, String>,
    /// Host CPU time the sampler itself used during the run, in seconds (the cost of
    /// measuring, beside the jobs' own CPU use); absent in traces of older runners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampler_cpu_seconds: Option<f64>,
    /// Processes on the GPU during the run that were neither a job's (its process tree)
    /// nor the run's MPS server: someone else's work beside the measurement. Absent when
    /// none was seen (and in traces of older runners).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_processes: Vec<ForeignProcess>,
}

/// The program name of MPS servers, which the driver lists among the compute processes.
pub const MPS_SERVER: &str = "nvidia-cuda-mps-server";

/// Whether a process's command name (`/proc/<pid>/comm`) is an MPS server's. The kernel
/// keeps at most 15 bytes of a command name, so an MPS server's reads `nvidia-cuda-mps`;
/// the whole name (from its command line) counts too.
pub fn is_mps_server_name(name: &str) -> bool {
    const COMM_LEN: usize = 15;
    name == MPS_SERVER || (name.len() == COMM_LEN && MPS_SERVER.starts_with(name))
}

impl ForeignProcess {
    /// Whether this is an MPS server: the run's own daemon's, which an `mps` or
    /// `mps-limited` run starts itself. A runner that matched the server's whole name only
    /// recorded it under its 15-byte command name; readers of such traces skip it with this.
    pub fn is_mps_server(&self) -> bool {
        self.name.as_deref().is_some_and(is_mps_server_name)
    }
}

/// A process the sampler found on the GPU that belongs to no job of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignProcess {
    pub pid: u32,
    /// Its command name (`/proc/<pid>/comm`), when readable.
    #[serde(default)]
    pub name: Option<String>,
    /// The first and the last sample that saw it on the GPU, host monotonic seconds.
    pub first_seen_mono: f64,
    pub last_seen_mono: f64,
    /// The most GPU memory the driver reported for it, when it did.
    #[serde(default)]
    pub gpu_memory_bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub index: u32,
    pub command: Vec<String>,
    /// The environment variables that matter (CUDA_*, OMP_*, PYTHON*) as set for the job.
    pub env: BTreeMap<String, String>,
    pub pid: Option<u32>,
    /// Exit code, or `null` if killed by a signal.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The device the job was given (GPU or MIG device UUID).
    pub device: Option<String>,
    /// The `versions` event of the job, verbatim.
    pub versions: Option<serde_json::Value>,
    pub started_wall: Option<f64>,
    pub ended_wall: Option<f64>,
    /// Why this job failed, if it did (`out of memory`, `exit code 1`, `timeout`...).
    pub failure: Option<String>,
}
