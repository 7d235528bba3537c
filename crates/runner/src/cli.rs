//! The command line of a campaign run, declared once: `colloc-runner run` and
//! `cargo xtask run` flatten [`RunArgs`] into theirs, beside their own way of naming the
//! plan and the campaign directory.

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use std::path::PathBuf;
use std::time::Duration;

use crate::options::{ProgressMode, RunOptions};
use crate::sim::{SimForeign, SimOptions};

/// MIG mode of the simulated GPU.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SimMig {
    /// As each workload needs it (MIG runs on a MIG-enabled GPU, the others on one without).
    Auto,
    /// On for every workload.
    On,
    /// Off for every workload.
    Off,
}

/// Where the runs are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Executor {
    /// On this host's GPU(s).
    Local,
    /// As a Slurm job array, one task and one GPU per run (the campaign directory must be
    /// on a file system the compute nodes share).
    Slurm,
}

/// How to run a campaign's plan.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// NVML / nvidia-smi index of the GPU.
    #[arg(long, default_value_t = 0, conflicts_with = "gpus")]
    pub gpu: u32,
    /// Several GPUs of this host (`0,1,3` or `all`): each runs one workload at a time, all
    /// repetitions of a workload on the same GPU, each GPU with its own MPS daemon and
    /// telemetry, and the baselines its runs are divided by measured on it.
    #[arg(long, value_name = "LIST")]
    pub gpus: Option<crate::options::GpuList>,
    /// Only these workload ids or run ids (`<workload>.r<N>`); a trailing * matches a prefix.
    #[arg(long, num_args = 1..)]
    pub only: Vec<String>,
    /// Run the selected runs again, as new attempts beside the existing ones.
    #[arg(long)]
    pub force: bool,
    /// Run although other processes or a foreign MPS daemon use the GPU.
    #[arg(long)]
    pub allow_busy_gpu: bool,
    /// Telemetry samples per second (0: off).
    #[arg(long, default_value_t = 10.0)]
    pub telemetry_hz: f64,
    /// Multiplies the protocol's per-run timeout.
    #[arg(long, default_value_t = 1.0)]
    pub timeout_scale: f64,
    /// Seconds between SIGTERM and SIGKILL when jobs are stopped.
    #[arg(long, default_value_t = 10.0)]
    pub kill_grace: f64,
    /// Simulated GPU, telemetry and jobs (no GPU or Python needed); traces say so.
    #[arg(long)]
    pub simulate: bool,
    /// With --simulate: real seconds per simulated second.
    #[arg(long, default_value_t = 0.01, requires = "simulate")]
    pub time_scale: f64,
    /// With --simulate: MIG mode of the simulated GPU.
    #[arg(long, value_enum, default_value = "auto", requires = "simulate")]
    sim_mig: SimMig,
    /// With --simulate: run the MPS and MIG commands found on the PATH instead of pretending.
    #[arg(long, requires = "simulate", hide = true)]
    pub sim_exec_mode_commands: bool,
    /// With --simulate: the simulated driver lists a foreign process (2 GiB) on the GPU from
    /// 10 simulated seconds after the release, in runs whose id contains RUN_PATTERN.
    #[arg(long, value_name = "RUN_PATTERN", requires = "simulate", hide = true)]
    pub sim_foreign_process: Option<String>,
    /// With --simulate: from 5 simulated seconds after the release on, the simulated driver
    /// cannot read power, energy and the GPM metrics, in runs whose id contains RUN_PATTERN.
    #[arg(long, value_name = "RUN_PATTERN", requires = "simulate", hide = true)]
    pub sim_nvml_errors: Option<String>,
    /// With --simulate: seed of the simulated values.
    #[arg(long, default_value_t = 42, requires = "simulate")]
    pub seed: u64,
    /// Seconds between attempts to destroy a MIG instance the driver says is in use.
    #[arg(long, default_value_t = 2.0, hide = true)]
    pub busy_retry_delay: f64,
    /// The training job's command (default: python3 workloads/train.py); `--job-file PATH`
    /// is appended.
    #[arg(long)]
    pub workload_cmd: Option<String>,
    /// Extra environment variables for the jobs.
    #[arg(long, value_name = "KEY=VALUE", num_args = 1..)]
    pub job_env: Vec<String>,
    /// Git commit of the sources, for hosts without the git checkout.
    #[arg(long)]
    pub source_commit: Option<String>,
    /// Whether the sources had uncommitted changes (with --source-commit).
    #[arg(long, requires = "source_commit")]
    pub source_dirty: Option<bool>,
    /// How progress is shown on stderr.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: ProgressMode,
    /// Fork the jobs from one preloaded job server (PyTorch and timm imported once per
    /// invocation, not once per job): the workload command must understand `--serve SOCKET`
    /// and `--via SOCKET`, as workloads/train.py does.
    #[arg(long)]
    pub preload: bool,
    /// Do not measure again on this GPU the baselines of the selected collocated runs that
    /// the campaign only has from other hosts.
    #[arg(long)]
    pub no_host_baselines: bool,
    /// Before this GPU's first run in the invocation on data it has not read yet in it
    /// (synthetic, or each data set on files), make that run once unrecorded (in a scratch
    /// directory, removed after; its time counts in --time-budget): the first run on a
    /// freshly started host can be 14-20% slower where the data loaders are the limit. Each
    /// recorded run names its settling runs in its meta.json (`settled`).
    #[arg(long)]
    pub settle: bool,
    /// Add runs to a campaign made by another version of the runner or the training program
    /// (refused otherwise; the refusal says what differs).
    #[arg(long)]
    pub allow_mixed_versions: bool,
    /// Refuse to run when the host's Python environment differs from the training program's
    /// lock (`workloads/environment.lock`) or cannot be checked; otherwise a difference is
    /// printed and recorded in each run's `meta.json`.
    #[arg(long)]
    pub strict_env: bool,
    /// Start no run that could end after SECONDS from the runner's start (its plan estimate
    /// with a 25% margin), and stop there cleanly: the next invocation goes on from it. A
    /// workload's repetitions (and its twin under a part's own protocol) start only when all
    /// of them fit, unless they come first in the invocation.
    #[arg(long, value_name = "SECONDS")]
    pub time_budget: Option<f64>,
    /// With --simulate, for tests: the selected jobs of MPS runs (INDEX, *, PATTERN:INDEX,
    /// comma-separated) look for the MPS daemon where none serves, so the MPS client check
    /// must fail their run.
    #[arg(long, value_name = "SELECTOR", requires = "simulate", hide = true)]
    pub fault_wrong_mps_pipe: Option<String>,
    /// Where the runs are made: here, or as a Slurm job array (one task per run, one GPU
    /// each, `--gres=gpu:1`).
    #[arg(long, value_enum, default_value = "local")]
    pub executor: Executor,
    /// With --executor slurm: the partition the tasks run in.
    #[arg(long)]
    pub partition: Option<String>,
    /// With --executor slurm: the account the tasks are charged to.
    #[arg(long)]
    pub account: Option<String>,
    /// With --executor slurm: each task's time limit in minutes (default: twice the plan's
    /// estimate of the longest run, and a minute).
    #[arg(long, value_name = "MINUTES")]
    pub time_per_run: Option<u64>,
    /// With --executor slurm: at most N tasks at once (`--array=…%N`).
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<u32>,
    /// With --executor slurm: print the batch script and the sbatch command, submit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --executor slurm: seconds a task may be gone from the queue without an exit
    /// record before its run counts as lost.
    #[arg(long, default_value_t = 10.0, hide = true)]
    pub slurm_lost_after: f64,
    /// With --simulate, for tests: runs whose id contains RUN_PATTERN fail to write their
    /// trace as on a full disk.
    #[arg(long, value_name = "RUN_PATTERN", requires = "simulate", hide = true)]
    pub fault_disk_full: Option<String>,
}

impl RunArgs {
    /// The options of a campaign run into `out`. `training_job`: the training job's command
    /// where it is not [`RunOptions::new`]'s; `simulated_job`: how this program starts the
    /// simulated job (asked only with `--simulate`). `--workload-cmd` overrides both.
    pub fn options(
        &self,
        out: impl Into<PathBuf>,
        training_job: Option<Vec<String>>,
        simulated_job: impl FnOnce() -> Result<Vec<String>>,
    ) -> Result<RunOptions> {
        let mut o = RunOptions::new(out);
        o.gpu_index = self.gpu;
        o.gpus = self.gpus.clone();
        o.only = self.only.clone();
        o.force = self.force;
        o.allow_busy_gpu = self.allow_busy_gpu;
        o.telemetry_hz = self.telemetry_hz;
        o.timeout_scale = self.timeout_scale;
        o.kill_grace =
            Duration::try_from_secs_f64(self.kill_grace).context("--kill-grace must be a non-negative number")?;
        o.tools.busy_retry_delay = Duration::try_from_secs_f64(self.busy_retry_delay)
            .context("--busy-retry-delay must be a non-negative number")?;
        if let Some(cmd) = training_job {
            o.job_command = cmd;
        }
        if self.simulate {
            o.simulate = Some(SimOptions {
                time_scale: self.time_scale,
                mig_mode: match self.sim_mig {
                    SimMig::Auto => None,
                    SimMig::On => Some(true),
                    SimMig::Off => Some(false),
                },
                exec_mode_commands: self.sim_exec_mode_commands,
                seed: self.seed,
                lists_mps_clients: true,
                foreign_process: self.sim_foreign_process.as_ref().map(|runs| SimForeign {
                    runs: runs.clone(),
                    after_seconds: 10.0,
                    memory_bytes: 2 << 30,
                }),
                nvml_errors: self.sim_nvml_errors.clone().map(|runs| (runs, 5.0)),
                fault_wrong_mps_pipe: self.fault_wrong_mps_pipe.clone(),
                fault_disk_full: self.fault_disk_full.clone(),
            });
            o.job_command = simulated_job()?;
        }
        if let Some(cmd) = &self.workload_cmd {
            o.job_command = cmd.split_whitespace().map(str::to_string).collect();
            if o.job_command.is_empty() {
                bail!("--workload-cmd is empty");
            }
        }
        for kv in &self.job_env {
            let (k, v) = kv.split_once('=').with_context(|| format!("--job-env {kv}: expected KEY=VALUE"))?;
            o.job_env.push((k.to_string(), v.to_string()));
        }
        o.source_commit = self.source_commit.clone().map(|c| (c, self.source_dirty));
        o.progress = self.progress;
        o.preload = self.preload;
        o.host_baselines = !self.no_host_baselines;
        o.settle = self.settle;
        o.allow_mixed_versions = self.allow_mixed_versions;
        o.strict_env = self.strict_env;
        if let Some(s) = self.time_budget {
            anyhow::ensure!(s.is_finite() && s > 0.0, "--time-budget {s}: expected a positive number of seconds");
            o.time_budget = Some(Duration::from_secs_f64(s));
        }
        let slurm_only = self.partition.is_some()
            || self.account.is_some()
            || self.time_per_run.is_some()
            || self.max_parallel.is_some()
            || self.dry_run;
        match self.executor {
            Executor::Slurm => {
                anyhow::ensure!(self.time_per_run != Some(0), "--time-per-run must be at least 1 minute");
                anyhow::ensure!(self.max_parallel != Some(0), "--max-parallel must be at least 1");
                o.slurm = Some(crate::options::SlurmOptions {
                    partition: self.partition.clone(),
                    account: self.account.clone(),
                    time_per_run: self.time_per_run.map(|m| Duration::from_secs(m * 60)),
                    max_parallel: self.max_parallel,
                    dry_run: self.dry_run,
                    task_program: None,
                    lost_after: Duration::try_from_secs_f64(self.slurm_lost_after)
                        .context("--slurm-lost-after must be a non-negative number")?,
                    poll: Duration::from_secs(1),
                });
            }
            Executor::Local if slurm_only => {
                bail!("--partition, --account, --time-per-run, --max-parallel and --dry-run need --executor slurm")
            }
            Executor::Local => {}
        }
        Ok(o)
    }
}
