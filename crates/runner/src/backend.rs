//! What the runner runs on, chosen once per campaign: the real GPU through NVML with the real
//! training program ([`crate::gpu::NvmlGpu`]), or the simulated GPU with simulated telemetry
//! and jobs ([`crate::sim::SimGpu`], `--simulate`). The campaign and its runs see only this
//! trait; the simulated GPU's faults for tests reach a run only through it.

use anyhow::Result;
use colloc_plan::PlannedWorkload;
use colloc_trace::meta::{DriverListing, GpuInfo};
use colloc_trace::Mode;
use std::path::Path;

use crate::telemetry::GpuSource;

/// A process using the GPU.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuProcess {
    pub pid: u32,
    pub used_bytes: Option<u64>,
}

/// The GPU of a campaign and how its runs reach it. Read-only: nothing here changes a GPU
/// setting.
pub(crate) trait Backend: Send + Sync {
    /// NVML / `nvidia-smi` index.
    fn index(&self) -> u32;
    fn uuid(&self) -> &str;
    fn name(&self) -> &str;
    /// Whether the traces are simulated (`meta.json` → `simulated`).
    fn simulated(&self) -> bool;
    /// Provenance of the GPU as it is now.
    fn info(&self) -> GpuInfo;
    /// Total memory in bytes.
    fn memory_total(&self) -> Option<u64>;
    /// Whether MIG mode is enabled for a run of a workload in `mode`.
    fn mig_enabled_for(&self, mode: Mode) -> Result<bool>;
    /// Compute processes on the GPU and on its MIG devices.
    fn compute_processes(&self) -> Result<Vec<GpuProcess>>;
    /// How the driver lists each of `pids` (the host's pid namespace) on the GPU now: among
    /// its MPS clients, among its compute processes only, or neither. `client_pipe`: the
    /// `CUDA_MPS_PIPE_DIRECTORY` the run's MPS daemon serves its clients on (the driver knows
    /// its clients without it; a simulated GPU compares it with each process's own). An
    /// error when the driver cannot list MPS clients.
    fn mps_listing(&self, pids: &[u32], client_pipe: Option<&str>) -> Result<Vec<DriverListing>>;
    /// Whether the MPS and MIG commands run (otherwise ids and UUIDs are made up).
    fn executes_mode_commands(&self) -> bool;
    /// Real seconds a run may take under a protocol timeout of `protocol_seconds`, before
    /// the `--timeout-scale`.
    fn run_seconds(&self, protocol_seconds: f64) -> f64;
    /// The GPU samples of one run; `mig_devices`: (GPU-instance id, MIG device UUID) per job.
    fn telemetry(&self, w: &PlannedWorkload, run_id: &str, mig_devices: &[(u32, String)])
        -> Result<Box<dyn GpuSource>>;
    /// Environment each job of a run gets from the backend (before `--job-env`).
    fn job_env(&self, w: &PlannedWorkload, run_id: &str) -> Vec<Vec<(String, String)>>;

    /// For tests, the one hook of faults in a job's environment: what the backend gives job
    /// `job` of run `run_id` last, after `--job-env`; `mps_pipe`: the run's MPS daemon's pipe
    /// directory, under `mps` and `mps-limited`. Nothing on a real GPU.
    fn fault_env(&self, _run_id: &str, _job: usize, _mps_pipe: Option<&Path>) -> Vec<(String, String)> {
        Vec::new()
    }

    /// For tests, the one hook of faults in the trace: whether every write of run `run_id`'s
    /// trace fails as on a full disk. Never on a real GPU.
    fn disk_full(&self, _run_id: &str) -> bool {
        false
    }
}
