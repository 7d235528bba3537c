//! `cargo xtask run`: plans a campaign and hands it to the runner (`colloc_runner`).
//! The standalone `colloc-runner` binary does the same from a plan file on hosts without
//! a Rust toolchain.

use anyhow::Context;
use colloc_runner::{run_campaign, RunArgs};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Campaign of artifact.yaml to plan and run.
    #[arg(long, required_unless_present_any = ["plan", "fake_job"])]
    pub campaign: Option<String>,
    /// Run this plan (JSON, as `cargo xtask plan --json` prints it) instead of planning.
    #[arg(long, conflicts_with = "campaign")]
    pub plan: Option<PathBuf>,
    /// Target GPU of the plan (a100-40gb, h200-141gb, ...); default: the campaign's.
    #[arg(long, conflicts_with = "plan")]
    pub target: Option<String>,
    /// Campaign directory (default: the campaign's `out` in artifact.yaml, or data/<campaign>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Be the simulated job (the runner starts `cargo xtask run --fake-job --job-file F`).
    #[arg(long, hide = true)]
    pub fake_job: bool,
    #[arg(long, hide = true, requires = "fake_job")]
    pub job_file: Option<PathBuf>,
}

impl Args {
    /// The arguments `cargo xtask run --campaign NAME` would get, defaults otherwise.
    pub fn for_campaign(name: &str) -> Args {
        Args::parse(&["--campaign", name]).expect("--campaign NAME parses")
    }

    /// The arguments of `cargo xtask run ARGS...`.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Args, clap::Error> {
        #[derive(clap::Parser)]
        struct Wrap {
            #[command(flatten)]
            args: Args,
        }
        let argv = std::iter::once("run").chain(args.iter().map(AsRef::as_ref));
        <Wrap as clap::Parser>::try_parse_from(argv).map(|w| w.args)
    }
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    if a.fake_job {
        let file = a.job_file.context("--fake-job needs --job-file")?;
        return Ok(ExitCode::from(colloc_runner::fake_job(&file) as u8));
    }
    let summary = execute(&crate::project_root(), a)?;
    eprintln!("{}", summary.render());
    Ok(summary.exit_code())
}

/// Plans (unless given a plan) and runs the campaign of the project at `root`.
pub fn execute(root: &std::path::Path, a: Args) -> anyhow::Result<colloc_runner::CampaignSummary> {
    // The project, where a plan or the campaign directory comes from it.
    let project = match (&a.plan, &a.out) {
        (Some(_), Some(_)) => None,
        _ => Some(colloc_spec::load_project(root).map_err(|d| anyhow::anyhow!("{d}"))?),
    };
    let plan = match (&a.plan, &a.campaign, &project) {
        (Some(path), _, _) => colloc_plan::Plan::from_file(path)?,
        (None, Some(c), Some(p)) => {
            colloc_plan::plan_project_campaign(p, c, a.target.as_deref()).map_err(|d| anyhow::anyhow!("{d}"))?
        }
        _ => anyhow::bail!("give --campaign NAME or --plan FILE"),
    };
    let out = match (&a.out, &plan.campaign, &project) {
        (Some(o), _, _) => o.clone(),
        (None, Some(c), Some(p)) => crate::campaign_dir(&p.artifact, root, c),
        _ => anyhow::bail!("the plan names no campaign: give --out DIR"),
    };
    let training = vec!["python3".into(), root.join("workloads/train.py").to_string_lossy().into_owned()];
    let o = a.run.options(out, Some(training), || {
        let exe = std::env::current_exe().context("cannot find the xtask executable")?;
        Ok(vec![exe.to_string_lossy().into_owned(), "run".into(), "--fake-job".into()])
    })?;
    run_campaign(&plan, &o)
}
