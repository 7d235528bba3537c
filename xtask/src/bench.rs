//! `cargo xtask bench [--quick]` and the child process it times: the benchmarks of
//! `colloc_bench`, each figure beside a baseline measured in the same run.

use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Fewer repetitions and smaller scaled copies (under half a minute).
    #[arg(long)]
    pub quick: bool,
    /// The campaign to verify (default: the shipped one).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Sizes of the generated campaigns, in whole-GPU telemetry samples (default: 1e5 with
    /// `--quick`, else 1e6,1e7); `0` generates none.
    #[arg(long, value_delimiter = ',', value_name = "N,..")]
    pub samples: Vec<f64>,
    /// Where the generated campaigns are written, and kept (default: a temporary directory
    /// in the target directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// The child process `bench` times: verify + analyse the campaign in `dir`, then the claims
/// and the outputs in memory; prints one line of figures (`runs`, `analyse_s`, `render_s`,
/// `peak_kb`: this process' peak resident memory, and `analysed_peak_kb`: the same once
/// analysed, before the claims and the render).
#[derive(clap::Args)]
pub struct ChildArgs {
    pub dir: PathBuf,
    #[arg(long)]
    pub campaign: Option<String>,
    /// Also write the per-run and per-workload values the pandas script computes, as JSON.
    #[arg(long)]
    pub dump: Option<PathBuf>,
}

pub fn main(a: Args) -> Result<ExitCode> {
    let o = colloc_bench::Options { quick: a.quick, campaign: a.campaign, samples: a.samples, scratch: a.scratch };
    colloc_bench::run(&crate::project_root()?, &o)?;
    Ok(ExitCode::SUCCESS)
}

pub fn child_main(a: ChildArgs) -> Result<ExitCode> {
    colloc_bench::child_main(&crate::project_root()?, &a.dir, a.campaign.as_deref(), a.dump.as_deref())?;
    Ok(ExitCode::SUCCESS)
}
