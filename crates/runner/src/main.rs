//! `colloc-runner`: runs a plan's workloads on a GPU and writes checksummed traces.
//!
//! ```text
//! colloc-runner run --plan PLAN.json --out CAMPAIGN_DIR [--gpu INDEX] [--only ID...] [--force]
//!     [--allow-busy-gpu] [--telemetry-hz 10] [--timeout-scale F] [--kill-grace SECONDS]
//!     [--simulate [--time-scale F] [--sim-mig auto|on|off] [--seed N]]
//!     [--workload-cmd "python3 workloads/train.py"] [--job-env KEY=VALUE...]
//!     [--source-commit SHA [--source-dirty true|false]] [--progress auto|plain|quiet]
//! colloc-runner verify --out CAMPAIGN_DIR
//! ```
//! Exit status: 0 when every selected run was made (a failed run is a result, listed in the
//! summary), 1 on an error or an early stop, 128 + N when stopped by signal N.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use colloc_runner::{run_campaign, ProgressMode, RunOptions, SimOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "colloc-runner",
    version,
    about = "Runs planned collocation workloads on a GPU and writes checksummed traces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run (or resume) a campaign.
    Run(RunArgs),
    /// Check a campaign directory against its SHA256SUMS.
    Verify {
        #[arg(long)]
        out: PathBuf,
    },
    /// The simulated training job (used by --simulate).
    #[command(hide = true)]
    FakeJob {
        #[arg(long)]
        job_file: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum MigArg {
    /// As each workload needs it (MIG runs on a MIG-enabled GPU, the others on one without).
    Auto,
    On,
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProgressArg {
    Auto,
    Plain,
    Quiet,
}

#[derive(clap::Args)]
struct RunArgs {
    /// The plan (JSON, as `cargo xtask plan --json` prints it).
    #[arg(long)]
    plan: PathBuf,
    /// The campaign directory (runs/, SHA256SUMS, quarantine/).
    #[arg(long)]
    out: PathBuf,
    /// NVML / nvidia-smi index of the GPU.
    #[arg(long, default_value_t = 0)]
    gpu: u32,
    /// Only these workload ids or run ids (`<workload>.r<N>`); a trailing * matches a prefix.
    #[arg(long, num_args = 1..)]
    only: Vec<String>,
    /// Run the selected runs again, as new attempts beside the existing ones.
    #[arg(long)]
    force: bool,
    /// Run although other processes or a foreign MPS daemon use the GPU.
    #[arg(long)]
    allow_busy_gpu: bool,
    /// Telemetry samples per second (0: off).
    #[arg(long, default_value_t = 10.0)]
    telemetry_hz: f64,
    /// Multiplies the protocol's per-run timeout.
    #[arg(long, default_value_t = 1.0)]
    timeout_scale: f64,
    /// Seconds between SIGTERM and SIGKILL when jobs are stopped.
    #[arg(long, default_value_t = 10.0)]
    kill_grace: f64,
    /// Simulated GPU, telemetry and jobs: no GPU or Python needed.
    #[arg(long)]
    simulate: bool,
    /// With --simulate: real seconds per simulated second.
    #[arg(long, default_value_t = 0.01, requires = "simulate")]
    time_scale: f64,
    /// With --simulate: MIG mode of the simulated GPU.
    #[arg(long, value_enum, default_value = "auto", requires = "simulate")]
    sim_mig: MigArg,
    /// With --simulate: run the MPS and MIG commands found on the PATH instead of pretending.
    #[arg(long, requires = "simulate", hide = true)]
    sim_exec_mode_commands: bool,
    /// With --simulate: seed of the simulated values.
    #[arg(long, default_value_t = 42, requires = "simulate")]
    seed: u64,
    /// Seconds between attempts to destroy a MIG instance the driver says is in use.
    #[arg(long, default_value_t = 2.0, hide = true)]
    busy_retry_delay: f64,
    /// The training job's command; `--job-file PATH` is appended.
    #[arg(long)]
    workload_cmd: Option<String>,
    /// Extra environment variables for the jobs.
    #[arg(long, value_name = "KEY=VALUE", num_args = 1..)]
    job_env: Vec<String>,
    /// Git commit of the sources, for hosts without the git checkout.
    #[arg(long)]
    source_commit: Option<String>,
    /// Whether the sources had uncommitted changes (with --source-commit).
    #[arg(long, requires = "source_commit")]
    source_dirty: Option<bool>,
    #[arg(long, value_enum, default_value = "auto")]
    progress: ProgressArg,
}

fn options(a: &RunArgs) -> Result<RunOptions> {
    let mut o = RunOptions::new(&a.out);
    o.gpu_index = a.gpu;
    o.only = a.only.clone();
    o.force = a.force;
    o.allow_busy_gpu = a.allow_busy_gpu;
    o.telemetry_hz = a.telemetry_hz;
    o.timeout_scale = a.timeout_scale;
    o.kill_grace = Duration::try_from_secs_f64(a.kill_grace).context("--kill-grace must be a non-negative number")?;
    o.tools.busy_retry_delay =
        Duration::try_from_secs_f64(a.busy_retry_delay).context("--busy-retry-delay must be a non-negative number")?;
    if a.simulate {
        o.simulate = Some(SimOptions {
            time_scale: a.time_scale,
            mig_mode: match a.sim_mig {
                MigArg::Auto => None,
                MigArg::On => Some(true),
                MigArg::Off => Some(false),
            },
            exec_mode_commands: a.sim_exec_mode_commands,
            seed: a.seed,
        });
        let exe = std::env::current_exe().context("cannot find the runner's own executable")?;
        o.job_command = vec![exe.to_string_lossy().into_owned(), "fake-job".into()];
    }
    if let Some(cmd) = &a.workload_cmd {
        o.job_command = cmd.split_whitespace().map(str::to_string).collect();
        if o.job_command.is_empty() {
            anyhow::bail!("--workload-cmd is empty");
        }
    }
    for kv in &a.job_env {
        let (k, v) = kv.split_once('=').with_context(|| format!("--job-env {kv}: expected KEY=VALUE"))?;
        o.job_env.push((k.to_string(), v.to_string()));
    }
    o.source_commit = a.source_commit.clone().map(|c| (c, a.source_dirty));
    o.progress = match a.progress {
        ProgressArg::Auto => ProgressMode::Auto,
        ProgressArg::Plain => ProgressMode::Plain,
        ProgressArg::Quiet => ProgressMode::Quiet,
    };
    Ok(o)
}

fn run(a: RunArgs) -> Result<ExitCode> {
    let plan = colloc_plan::Plan::from_file(&a.plan)?;
    let opts = options(&a)?;
    let summary = run_campaign(&plan, &opts)?;
    eprintln!("{}", summary.render());
    Ok(summary.exit_code())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::FakeJob { job_file } => return ExitCode::from(colloc_runner::sim::fake_job(&job_file) as u8),
        Command::Run(a) => run(a),
        Command::Verify { out } => colloc_runner::verify_campaign(&out).map(|problems| {
            for p in &problems {
                eprintln!("{p}");
            }
            if problems.is_empty() {
                eprintln!("{}: every file matches SHA256SUMS", out.display());
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }),
    };
    match result {
        Ok(c) => c,
        Err(e) => {
            eprintln!("colloc-runner: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
