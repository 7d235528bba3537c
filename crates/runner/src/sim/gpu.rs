//! The simulated backend: a GPU that looks like the plan's target GPU (`Simulated <name>` in
//! its name), its simulated telemetry, and the simulated training job ([`super::job`]),
//! whose speeds and memory come from the plan's model ([`colloc_plan::perf`]).

use anyhow::{bail, Result};
use colloc_plan::perf::{model_workload, GIB};
use colloc_plan::{GpuTarget, PlannedWorkload};
use colloc_trace::meta::{DriverListing, GpuInfo};
use colloc_trace::Mode;
use std::collections::BTreeMap;
use std::path::Path;

use super::faults;
use super::job::{FakeParams, PARAMS_ENV};
use super::model::{power_limit_watts, Rng};
use super::telemetry::SimSource;
use crate::backend::{Backend, GpuProcess};
use crate::telemetry::{procfs, GpuSource};

/// The simulated backend's settings (`--simulate`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SimOptions {
    /// Wall-clock seconds per simulated second (0.01: a 60 s window takes 0.6 s).
    pub time_scale: f64,
    /// MIG mode of the simulated GPU; `None`: as each workload needs it.
    pub mig_mode: Option<bool>,
    /// Run the MPS and MIG commands (`nvidia-cuda-mps-control`, `nvidia-smi mig`) for real
    /// instead of pretending; meant for stand-in programs on the PATH.
    pub exec_mode_commands: bool,
    /// Seed of the simulated telemetry and jobs.
    pub seed: u64,
    /// Whether the simulated driver can list MPS clients (`false`: as a driver without
    /// `nvmlDeviceGetMPSComputeRunningProcesses`).
    pub lists_mps_clients: bool,
    /// A foreign process the simulated driver lists on the GPU during some runs.
    pub foreign_process: Option<SimForeign>,
    /// NVML failing mid-run: in runs whose id contains `.0`, from `.1` simulated seconds
    /// after the release on, power, energy and the GPM metrics cannot be read.
    pub nvml_errors: Option<(String, f64)>,
    /// The jobs of `mps` and `mps-limited` runs this selects (the grammar of
    /// [`super::faults`]: `INDEX`, `*`, `PATTERN:INDEX`, comma-separated) look for the MPS
    /// daemon in a pipe directory where none serves (the one above the daemon's own: it
    /// exists while the daemon runs, and holds no daemon's pipes), so the driver lists them
    /// as plain compute processes and the check of the run's MPS clients must fail the run.
    #[serde(default)]
    pub fault_wrong_mps_pipe: Option<String>,
    /// Runs whose id contains this fail every write of their trace as on a full disk
    /// (`ENOSPC`).
    #[serde(default)]
    pub fault_disk_full: Option<String>,
}

/// A process of someone else that the simulated driver lists on the GPU, from some time
/// after the release to the end of the run (pid [`super::telemetry::FOREIGN_PID`], a pid no
/// host has, named `simulated-foreign`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SimForeign {
    /// Runs whose id contains this (empty: every run).
    pub runs: String,
    /// Simulated seconds after the release when it appears.
    pub after_seconds: f64,
    /// The GPU memory the driver lists for it.
    pub memory_bytes: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            time_scale: 0.01,
            mig_mode: None,
            exec_mode_commands: false,
            seed: 42,
            lists_mps_clients: true,
            foreign_process: None,
            nvml_errors: None,
            fault_wrong_mps_pipe: None,
            fault_disk_full: None,
        }
    }
}

impl SimOptions {
    /// An error for settings the simulation cannot use.
    pub(crate) fn check(&self) -> Result<()> {
        if !self.time_scale.is_finite() || self.time_scale <= 0.0 {
            bail!("the simulation time scale must be positive");
        }
        Ok(())
    }
}

/// The simulated GPU.
pub(crate) struct SimGpu {
    index: u32,
    uuid: String,
    name: String,
    target: GpuTarget,
    opts: SimOptions,
}

impl SimGpu {
    /// GPU `index`, looking like `target`. With `opts.mig_mode == None`, MIG mode is as each
    /// workload needs it (as if MIG workloads ran on a second, MIG-enabled GPU, the way the
    /// paper's authors ran them).
    pub(crate) fn new(index: u32, target: &GpuTarget, opts: &SimOptions) -> SimGpu {
        SimGpu {
            index,
            uuid: format!("GPU-5e5e5e5e-0000-4000-8000-{index:012}"),
            name: format!("Simulated {}", target.name),
            target: target.clone(),
            opts: opts.clone(),
        }
    }
}

impl Backend for SimGpu {
    fn index(&self) -> u32 {
        self.index
    }

    fn uuid(&self) -> &str {
        &self.uuid
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn simulated(&self) -> bool {
        true
    }

    fn info(&self) -> GpuInfo {
        let mig = self.opts.mig_mode;
        GpuInfo {
            index: self.index,
            name: self.name.clone(),
            uuid: self.uuid.clone(),
            driver_version: None,
            cuda_version: None,
            nvml_version: None,
            architecture: Some("simulated".into()),
            memory_total_bytes: self.memory_total(),
            sm_count: Some(self.target.sms),
            mig_mode_current: mig,
            mig_mode_pending: mig,
            compute_mode: None,
            persistence_mode: None,
            power_limit_watts: Some(power_limit_watts(&self.target)),
            clocks_max_mhz: BTreeMap::new(),
            clocks_applied_mhz: BTreeMap::new(),
        }
    }

    fn memory_total(&self) -> Option<u64> {
        Some((self.target.memory_gib * GIB) as u64)
    }

    fn mig_enabled_for(&self, mode: Mode) -> Result<bool> {
        Ok(self.opts.mig_mode.unwrap_or(mode == Mode::Mig))
    }

    fn compute_processes(&self) -> Result<Vec<GpuProcess>> {
        Ok(Vec::new())
    }

    /// As the driver does: a running process is an MPS client when it reached the daemon,
    /// that is when it looked for one where the daemon serves (its own
    /// `CUDA_MPS_PIPE_DIRECTORY` is `client_pipe`), and a plain compute process otherwise.
    fn mps_listing(&self, pids: &[u32], client_pipe: Option<&str>) -> Result<Vec<DriverListing>> {
        if !self.opts.lists_mps_clients {
            bail!("the simulated driver cannot list MPS clients: Not Supported");
        }
        Ok(pids
            .iter()
            .map(|&pid| match procfs::env_var(pid, "CUDA_MPS_PIPE_DIRECTORY") {
                None => DriverListing::NotListed,
                Some(pipe) if pipe.as_deref() == client_pipe => DriverListing::MpsClient,
                Some(_) => DriverListing::ComputeProcess,
            })
            .collect())
    }

    fn executes_mode_commands(&self) -> bool {
        self.opts.exec_mode_commands
    }

    fn run_seconds(&self, protocol_seconds: f64) -> f64 {
        // Simulated durations shrink by the time scale; process start-up does not.
        protocol_seconds * self.opts.time_scale + 10.0
    }

    fn telemetry(
        &self,
        w: &PlannedWorkload,
        run_id: &str,
        mig_devices: &[(u32, String)],
    ) -> Result<Box<dyn GpuSource>> {
        let foreign = self
            .opts
            .foreign_process
            .as_ref()
            .filter(|f| run_id.contains(&f.runs))
            .map(|f| (f.after_seconds * self.opts.time_scale, f.memory_bytes));
        Ok(Box::new(
            SimSource::new(
                &self.target,
                model_workload(&self.target, w),
                Rng::derive(self.opts.seed, run_id).next_u64(),
                self.opts.time_scale,
                mig_devices,
                &w.jobs.iter().map(|j| j.mig_slice.as_ref().map(|s| s.memory_bytes)).collect::<Vec<_>>(),
            )
            .with_foreign(foreign)
            .with_nvml_errors(
                self.opts
                    .nvml_errors
                    .as_ref()
                    .filter(|(runs, _)| run_id.contains(runs.as_str()))
                    .map(|(_, after)| after * self.opts.time_scale),
            ),
        ))
    }

    /// `--fault-wrong-mps-pipe`: under MPS, the selected jobs get the directory above the
    /// daemon's pipe directory as theirs.
    fn fault_env(&self, run_id: &str, job: usize, mps_pipe: Option<&Path>) -> Vec<(String, String)> {
        let selected = |sel: &String| faults::selects(sel, run_id, job as u32);
        match (self.opts.fault_wrong_mps_pipe.as_ref().filter(|s| selected(s)), mps_pipe.and_then(Path::parent)) {
            (Some(_), Some(nowhere)) => {
                vec![("CUDA_MPS_PIPE_DIRECTORY".into(), nowhere.to_string_lossy().into_owned())]
            }
            _ => Vec::new(),
        }
    }

    /// `--fault-disk-full`: the runs whose id contains its pattern.
    fn disk_full(&self, run_id: &str) -> bool {
        self.opts.fault_disk_full.as_deref().is_some_and(|p| run_id.contains(p))
    }

    /// Each job's simulated behaviour, for the simulated job ([`super::job`]).
    fn job_env(&self, w: &PlannedWorkload, run_id: &str) -> Vec<Vec<(String, String)>> {
        let s = &self.opts;
        let model = model_workload(&self.target, w);
        model
            .jobs
            .iter()
            .enumerate()
            .map(|(i, js)| {
                let params = FakeParams {
                    time_scale: s.time_scale,
                    seed: s.seed,
                    images_per_second: js.images_per_second,
                    data_wait_fraction: js.data_wait_fraction,
                    memory_bytes: js.memory_bytes,
                    oom: js.oom.clone(),
                    setup_seconds: Rng::derive(s.seed, &format!("{run_id}/{i}/setup")).range(4.0, 12.0),
                };
                vec![(PARAMS_ENV.into(), serde_json::to_string(&params).expect("params serialise"))]
            })
            .collect()
    }
}
