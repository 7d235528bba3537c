//! What a campaign run is told: where, on which GPU, which runs, how.

use anyhow::{bail, Result};
use colloc_plan::GpuTarget;
use std::path::PathBuf;
use std::time::Duration;

use crate::backend::Backend;
use crate::gpu::NvmlGpu;
use crate::sim::{SimGpu, SimOptions};

/// Options of [`crate::run_campaign`] (serialised for the tasks of `--executor slurm`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunOptions {
    /// The campaign directory (`data/<campaign>`): `runs/`, `SHA256SUMS`, `quarantine/`.
    pub out: PathBuf,
    /// NVML / nvidia-smi index of the GPU to run on (when `gpus` is `None`).
    pub gpu_index: u32,
    /// Several GPUs of this host, each running one workload at a time (`--gpus`).
    pub gpus: Option<GpuList>,
    /// Workload ids or run ids (`<workload>.r<N>`) to run; empty: all. A trailing `*` matches
    /// a prefix.
    pub only: Vec<String>,
    /// Run the selected runs again as new attempts beside the existing ones.
    pub force: bool,
    /// Run although foreign compute processes or a foreign MPS daemon use the GPU.
    pub allow_busy_gpu: bool,
    /// Telemetry samples per second; 0 turns telemetry off.
    pub telemetry_hz: f64,
    /// Multiplies the protocol's per-run timeout.
    pub timeout_scale: f64,
    /// Seconds between SIGTERM and SIGKILL when a job's process group is stopped.
    pub kill_grace: Duration,
    /// The job program and its leading arguments; `--job-file <path>` is appended.
    pub job_command: Vec<String>,
    /// Extra environment variables for every job (after the runner's own environment).
    pub job_env: Vec<(String, String)>,
    /// `Some`: simulated GPU and simulated telemetry (the job command is then normally the
    /// runner's `fake-job`).
    pub simulate: Option<SimOptions>,
    pub tools: Tools,
    pub progress: ProgressMode,
    /// Provenance override for hosts without the project's git checkout:
    /// (commit, dirty).
    pub source_commit: Option<(String, Option<bool>)>,
    /// Fork every job from one preloaded job server per invocation (the job command run
    /// with `--serve SOCKET`; each job then with `--via SOCKET`), instead of starting a
    /// fresh interpreter per job: PyTorch and timm are imported once.
    pub preload: bool,
    /// Measure again on this host (GPU UUID) the baselines (each model alone) that the
    /// selected collocated runs are divided by, where the campaign has none from this host:
    /// each just before the first run that needs it.
    pub host_baselines: bool,
    /// Add runs to a campaign whose runs another version of the runner or the training
    /// program made (otherwise refused).
    pub allow_mixed_versions: bool,
    /// Refuse a host whose Python environment differs from the training program's lock, or
    /// cannot be checked against one.
    pub strict_env: bool,
    /// Start no run that could end after this long from the start of the invocation (the
    /// run's plan estimate with [`BUDGET_MARGIN`]; a baseline added to a unit that was begun
    /// within it, its bare estimate).
    pub time_budget: Option<Duration>,
    /// `Some`: the runs go to Slurm as a job array (`--executor slurm`) instead of running
    /// here.
    pub slurm: Option<SlurmOptions>,
    /// The GPU model (NVML's name) every run must be made on; `None`: the model of the
    /// campaign's runs, when it has some. A campaign is made on one model.
    pub gpu_model: Option<String>,
    /// This runner is a task of `--executor slurm`: MIG runs are recorded as skipped (a
    /// task holds one whole GPU; MIG slices under Slurm are pre-partitioned and requested as
    /// typed GRES, which the tasks do not request).
    #[serde(default)]
    pub in_slurm_task: bool,
    /// Before each GPU's first run in the invocation on data it has not read yet in it, make
    /// that run once unrecorded (in a scratch directory, removed after), so the recorded runs
    /// do not meet a freshly started host's cold caches.
    #[serde(default)]
    pub settle: bool,
}

/// The GPUs of a campaign run on several GPUs of one host.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GpuList {
    /// These NVML / nvidia-smi indices.
    Indices(Vec<u32>),
    /// Every GPU NVML sees.
    All,
}

impl std::str::FromStr for GpuList {
    type Err = String;

    /// `all`, or indices separated by commas (`0,1,3`).
    fn from_str(s: &str) -> Result<GpuList, String> {
        if s.trim() == "all" {
            return Ok(GpuList::All);
        }
        let mut out = Vec::new();
        for part in s.split(',') {
            let i: u32 = part.trim().parse().map_err(|_| {
                format!("`{part}` is not a GPU index: expected `all` or indices separated by commas, such as 0,1,3")
            })?;
            if out.contains(&i) {
                return Err(format!("GPU {i} is named twice"));
            }
            out.push(i);
        }
        Ok(GpuList::Indices(out))
    }
}

/// How the runs go to Slurm.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    pub account: Option<String>,
    /// Each task's time limit; `None`: from the plan's estimate of the array's longest run.
    pub time_per_run: Option<Duration>,
    /// At most this many tasks at once (`--array=…%N`); `None`: as many as the cluster gives.
    pub max_parallel: Option<u32>,
    /// Print the batch script and the `sbatch` command; submit nothing.
    pub dry_run: bool,
    /// The program the tasks run (`<program> slurm-task …`); `None`: this program.
    pub task_program: Option<PathBuf>,
    /// Seconds a task may be gone from the queue without an exit record before it is lost.
    pub lost_after: Duration,
    /// How often the queue and the stage directories are looked at.
    pub poll: Duration,
}

impl Default for SlurmOptions {
    fn default() -> Self {
        SlurmOptions {
            partition: None,
            account: None,
            time_per_run: None,
            max_parallel: None,
            dry_run: false,
            task_program: None,
            lost_after: Duration::from_secs(10),
            poll: Duration::from_secs(1),
        }
    }
}

/// How much longer than its plan estimate a run may take, for `time_budget`.
pub(crate) const BUDGET_MARGIN: f64 = 1.25;

/// External programs used to set up MPS and MIG.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Tools {
    pub nvidia_smi: String,
    pub mps_control: String,
    /// Limit for one invocation.
    pub command_timeout: Duration,
    /// How often a MIG instance still "in use" is tried again, and how long apart.
    pub busy_retries: u32,
    pub busy_retry_delay: Duration,
}

impl Default for Tools {
    fn default() -> Self {
        Tools {
            nvidia_smi: "nvidia-smi".into(),
            mps_control: "nvidia-cuda-mps-control".into(),
            command_timeout: Duration::from_secs(60),
            busy_retries: 10,
            busy_retry_delay: Duration::from_secs(2),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum ProgressMode {
    /// Bars when stderr is a terminal, plain lines otherwise.
    Auto,
    /// Plain log lines on stderr.
    Plain,
    /// Nothing but errors.
    Quiet,
}

impl RunOptions {
    /// Defaults for a campaign directory: GPU 0, 10 Hz telemetry, the Python training job.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        RunOptions {
            out: out.into(),
            gpu_index: 0,
            gpus: None,
            only: Vec::new(),
            force: false,
            allow_busy_gpu: false,
            telemetry_hz: 10.0,
            timeout_scale: 1.0,
            kill_grace: Duration::from_secs(10),
            job_command: vec!["python3".into(), "workloads/train.py".into()],
            job_env: Vec::new(),
            simulate: None,
            tools: Tools::default(),
            progress: ProgressMode::Auto,
            source_commit: None,
            preload: false,
            host_baselines: true,
            allow_mixed_versions: false,
            strict_env: false,
            time_budget: None,
            slurm: None,
            gpu_model: None,
            in_slurm_task: false,
            settle: false,
        }
    }

    /// Whether `only` selects a run of `workload_id`.
    pub(crate) fn selects(&self, workload_id: &str, run_id: &str) -> bool {
        if self.only.is_empty() {
            return true;
        }
        self.only.iter().any(|pat| match pat.strip_suffix('*') {
            Some(prefix) => workload_id.starts_with(prefix) || run_id.starts_with(prefix),
            None => pat == workload_id || pat == run_id,
        })
    }

    /// An error for options no campaign can run with.
    pub(crate) fn check(&self) -> Result<()> {
        if self.job_command.is_empty() {
            bail!("the job command is empty");
        }
        if !self.telemetry_hz.is_finite() || self.telemetry_hz < 0.0 {
            bail!("the telemetry rate must be a non-negative number of samples per second");
        }
        if self.timeout_scale.is_nan() || self.timeout_scale <= 0.0 {
            bail!("the timeout scale must be positive");
        }
        if let Some(s) = &self.simulate {
            s.check()?;
            if self.preload {
                bail!("--preload forks Python training jobs; the simulated backend has none");
            }
        }
        Ok(())
    }

    /// The NVML indices of the GPUs to run on: `gpus`, else `gpu_index` alone.
    pub(crate) fn gpu_indices(&self) -> Result<Vec<u32>> {
        match &self.gpus {
            None => Ok(vec![self.gpu_index]),
            Some(GpuList::Indices(v)) if v.is_empty() => bail!("--gpus names no GPU"),
            Some(GpuList::Indices(v)) => Ok(v.clone()),
            Some(GpuList::All) => match self.gpus_on_host()? {
                None => bail!("--gpus all: a simulated host has no GPUs to count; name them, such as --gpus 0,1,2,3"),
                Some(0) => bail!("--gpus all: NVML sees no GPU"),
                Some(n) => Ok((0..n).collect()),
            },
        }
    }

    /// How many GPUs this host has, as NVML counts them; `None` on the simulated backend,
    /// whose host has none to count.
    pub(crate) fn gpus_on_host(&self) -> Result<Option<u32>> {
        match &self.simulate {
            Some(_) => Ok(None),
            None => Ok(Some(NvmlGpu::count()?)),
        }
    }

    /// Real seconds of `planned` seconds of the plan's estimates on the chosen backend: the
    /// simulated one passes `--time-scale` real seconds per simulated second.
    pub(crate) fn real_seconds(&self, planned: f64) -> f64 {
        planned * self.simulate.as_ref().map_or(1.0, |s| s.time_scale)
    }

    /// The backend of GPU `index`: the simulated GPU with `simulate`, else the GPU through
    /// NVML.
    pub(crate) fn backend(&self, index: u32, target: &GpuTarget) -> Result<Box<dyn Backend>> {
        Ok(match &self.simulate {
            Some(s) => Box::new(SimGpu::new(index, target, s)),
            None => Box::new(NvmlGpu::open(index)?),
        })
    }

    /// The time after which a run's jobs are killed, from the backend's seconds for the
    /// protocol's timeout ([`Backend::run_seconds`]).
    pub(crate) fn run_timeout(&self, run_seconds: f64) -> Duration {
        let secs = run_seconds * self.timeout_scale;
        Duration::from_secs_f64(if secs.is_finite() && secs > 0.0 { secs } else { 1.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_lists_parse() {
        assert_eq!("all".parse::<GpuList>(), Ok(GpuList::All));
        assert_eq!("0, 1,3".parse::<GpuList>(), Ok(GpuList::Indices(vec![0, 1, 3])));
        assert!("0,x".parse::<GpuList>().unwrap_err().contains("`x` is not a GPU index"));
        assert!("1,1".parse::<GpuList>().unwrap_err().contains("named twice"));
        let mut o = RunOptions::new("/x");
        assert_eq!(o.gpu_indices().unwrap(), [0]);
        o.gpus = Some(GpuList::All);
        o.simulate = Some(SimOptions::default());
        assert!(o.gpu_indices().unwrap_err().to_string().contains("name them"));
    }

    #[test]
    fn only_matches_workloads_runs_and_prefixes() {
        let mut o = RunOptions::new("/x");
        assert!(o.selects("a", "a.r1"));
        o.only = vec!["e33-x".into(), "e34-y.r2".into(), "e35-*".into()];
        assert!(o.selects("e33-x", "e33-x.r1"));
        assert!(!o.selects("e33-xx", "e33-xx.r1"));
        assert!(o.selects("e34-y", "e34-y.r2"));
        assert!(!o.selects("e34-y", "e34-y.r1"));
        assert!(o.selects("e35-z-mps", "e35-z-mps.r3"));
    }
}
