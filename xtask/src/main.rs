//! `cargo xtask`: the command line over the pipeline's crates; what it does with a campaign
//! of this project is `colloc_reproduce`'s.
//! spec (YAML) → plan → run (traces + manifest) → verify → analyse → tables, figures, claims.

mod bench;
mod compare;
mod export;
mod package;
mod plan;
mod reproduce;
mod run;
mod smoke;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Reproduce \"An Analysis of Collocation on GPUs for Deep Learning Training\"")]
struct Cli {
    /// The project: the directory of its artifact.yaml (default: $COLLOC_ROOT, else the
    /// working directory or the nearest one above it with artifact.yaml and Cargo.toml).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<std::path::PathBuf>,
    #[command(subcommand)]
    task: Option<Task>,
}

#[derive(Subcommand)]
enum Task {
    /// Check spec files (every spec and artifact.yaml when none is given).
    Validate(validate::Args),
    /// Print the expanded plan of a campaign, or of every experiment.
    Plan(plan::Args),
    /// Turn an experiment CSV of the authors' tool radT into our YAML.
    ImportRadt(plan::ImportArgs),
    /// Run a campaign's workloads on a GPU (or simulated) and write checksummed traces.
    Run(Box<run::Args>),
    /// Verify the shipped traces, analyse them, regenerate figures/ and paper/, print the claims.
    Reproduce(reproduce::Args),
    /// Write a campaign's results as tidy CSV frames (runs, jobs, workloads, baselines, hosts,
    /// telemetry, provenance) with their schema, for polars, pandas or DuckDB.
    Export(export::Args),
    /// Compare two campaign directories (e.g. a re-run against the shipped traces): a verdict per workload.
    Compare(compare::Args),
    /// Pack the tracked sources, traces and outputs into a deterministic .tar.gz for archiving.
    Package(package::Args),
    /// Check an archive made by `package` against the checksums inside it.
    VerifyPackage(package::VerifyArgs),
    /// The getting-started path in timed phases: validate, plan, verify, reproduce --check,
    /// a short simulated campaign (`--gpu`: on this GPU) reproduced and compared.
    Smoke(smoke::Args),
    /// Measured figures beside baselines measured in the same run (verification and the whole
    /// verify + analyse at scale, against sha256sum).
    Bench(bench::Args),
    /// The analysis process that `bench` times and measures (verify, analyse, render in memory).
    #[command(hide = true)]
    BenchAnalyseChild(bench::ChildArgs),
    /// One task of `run --executor slurm`: makes one run of the campaign in its stage directory.
    #[command(hide = true, name = "slurm-task")]
    SlurmJob {
        #[arg(long)]
        dir: std::path::PathBuf,
        #[arg(long)]
        run: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(root) = cli.root {
        ROOT.set(root).expect("the root is set once, before any task");
    }
    let Some(task) = cli.task else {
        use clap::CommandFactory;
        let mut cmd = Cli::command();
        let _ = cmd.print_help();
        return ExitCode::SUCCESS;
    };
    let result = match task {
        Task::Validate(a) => validate::main(a),
        Task::Plan(a) => plan::main(a),
        Task::ImportRadt(a) => plan::import_main(a),
        Task::Run(a) => run::main(*a),
        Task::Reproduce(a) => reproduce::main(a),
        Task::Compare(a) => compare::main(a),
        Task::Export(a) => export::main(a),
        Task::Package(a) => package::main(a),
        Task::VerifyPackage(a) => package::verify_main(a),
        Task::Bench(a) => bench::main(a),
        Task::BenchAnalyseChild(a) => bench::child_main(a),
        Task::Smoke(a) => smoke::main(a),
        Task::SlurmJob { dir, run } => colloc_runner::slurm_task(&dir, &run),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The project root of this invocation, once found.
static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// The project root: `--root DIR`, else `colloc_spec::names::project_root` ($COLLOC_ROOT, or
/// found from the working directory up). Found at run time, never compiled in: a binary
/// built in another checkout sharing the target directory reads and writes this one.
pub fn project_root() -> anyhow::Result<std::path::PathBuf> {
    if let Some(root) = ROOT.get() {
        return Ok(root.clone());
    }
    let found = colloc_spec::names::project_root()?;
    Ok(ROOT.get_or_init(|| found).clone())
}
