//! `colloc-runner`: runs a plan's workloads on a GPU and writes checksummed traces.
//!
//! ```text
//! colloc-runner run --plan PLAN.json --out CAMPAIGN_DIR [OPTIONS]
//! colloc-runner verify --out CAMPAIGN_DIR
//! ```
//! The run options are [`colloc_runner::RunArgs`], shared with `cargo xtask run`
//! (`colloc-runner run --help` lists them).
//! Exit status: 0 when every selected run was made (a failed run is a result, listed in the
//! summary), 1 on an error or an early stop, 128 + N when stopped by signal N.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use colloc_runner::{run_campaign, RunArgs};
use std::path::PathBuf;
use std::process::ExitCode;

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
    Run(Box<RunCmd>),
    /// Check a campaign directory against its SHA256SUMS.
    Verify {
        #[arg(long)]
        out: PathBuf,
    },
    /// One task of `--executor slurm`: makes one run of the campaign in its stage directory.
    #[command(hide = true)]
    SlurmTask {
        /// The campaign directory.
        #[arg(long)]
        dir: PathBuf,
        /// The run id.
        #[arg(long)]
        run: String,
    },
    /// The simulated training job (used by --simulate).
    #[command(hide = true)]
    FakeJob {
        #[arg(long)]
        job_file: PathBuf,
    },
}

#[derive(clap::Args)]
struct RunCmd {
    /// The plan (JSON, as `cargo xtask plan --json` prints it).
    #[arg(long)]
    plan: PathBuf,
    /// The campaign directory (runs/, SHA256SUMS, quarantine/).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    args: RunArgs,
}

fn run(a: RunCmd) -> Result<ExitCode> {
    let plan = colloc_plan::Plan::from_file(&a.plan)?;
    let opts = a.args.options(&a.out, None, || {
        let exe = std::env::current_exe().context("cannot find the runner's own executable")?;
        Ok(vec![exe.to_string_lossy().into_owned(), "fake-job".into()])
    })?;
    let summary = run_campaign(&plan, &opts)?;
    eprintln!("{}", summary.render());
    Ok(summary.exit_code())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::FakeJob { job_file } => return ExitCode::from(colloc_runner::fake_job(&job_file) as u8),
        Command::Run(a) => run(*a),
        Command::SlurmTask { dir, run } => colloc_runner::slurm_task(&dir, &run),
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
