//! `cargo xtask run`: plans a campaign and hands it to the runner (`colloc_runner`).
//! The standalone `colloc-runner` binary does the same from a plan file on hosts without
//! a Rust toolchain.

use anyhow::Context;
use colloc_runner::{run_campaign, RunOptions, SimOptions};
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
    /// NVML / nvidia-smi index of the GPU to run on.
    #[arg(long, default_value_t = 0)]
    pub gpu: u32,
    /// Only these workload ids or run ids (`<workload>.r<N>`); a trailing * matches a prefix.
    #[arg(long, num_args = 1..)]
    pub only: Vec<String>,
    /// Campaign directory (default: data/<campaign>).
    #[arg(long)]
    pub out: Option<PathBuf>,
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
    /// Simulated GPU, telemetry and jobs (no GPU or Python needed); traces say so.
    #[arg(long)]
    pub simulate: bool,
    /// With --simulate: real seconds per simulated second.
    #[arg(long, default_value_t = 0.01, requires = "simulate")]
    pub time_scale: f64,
    /// With --simulate: seed of the simulated values.
    #[arg(long, default_value_t = 42, requires = "simulate")]
    pub seed: u64,
    /// The training job's command (default: python3 workloads/train.py); `--job-file PATH`
    /// is appended.
    #[arg(long)]
    pub workload_cmd: Option<String>,
    /// Be the simulated job (the runner starts `cargo xtask run --fake-job --job-file F`).
    #[arg(long, hide = true)]
    pub fake_job: bool,
    #[arg(long, hide = true, requires = "fake_job")]
    pub job_file: Option<PathBuf>,
}

impl Args {
    /// The arguments `cargo xtask run --campaign NAME` would get, defaults otherwise.
    pub fn for_campaign(name: &str) -> Args {
        #[derive(clap::Parser)]
        struct Wrap {
            #[command(flatten)]
            args: Args,
        }
        <Wrap as clap::Parser>::parse_from(["run", "--campaign", name]).args
    }
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    if a.fake_job {
        let file = a.job_file.context("--fake-job needs --job-file")?;
        return Ok(ExitCode::from(colloc_runner::sim::fake_job(&file) as u8));
    }
    let root = crate::project_root();
    let plan = match (&a.plan, &a.campaign) {
        (Some(path), _) => colloc_plan::Plan::from_file(path)?,
        (None, Some(c)) => colloc_plan::plan_campaign(&root, c, a.target.as_deref())?,
        (None, None) => anyhow::bail!("give --campaign NAME or --plan FILE"),
    };
    let out = match (&a.out, &plan.campaign) {
        (Some(o), _) => o.clone(),
        (None, Some(c)) => root.join("data").join(c),
        (None, None) => anyhow::bail!("the plan names no campaign: give --out DIR"),
    };
    let mut o = RunOptions::new(out);
    o.gpu_index = a.gpu;
    o.only = a.only;
    o.force = a.force;
    o.allow_busy_gpu = a.allow_busy_gpu;
    o.telemetry_hz = a.telemetry_hz;
    o.timeout_scale = a.timeout_scale;
    o.job_command = vec!["python3".into(), root.join("workloads/train.py").to_string_lossy().into_owned()];
    if a.simulate {
        o.simulate = Some(SimOptions { time_scale: a.time_scale, seed: a.seed, ..SimOptions::default() });
        let exe = std::env::current_exe().context("cannot find the xtask executable")?;
        o.job_command = vec![exe.to_string_lossy().into_owned(), "run".into(), "--fake-job".into()];
    }
    if let Some(cmd) = &a.workload_cmd {
        o.job_command = cmd.split_whitespace().map(str::to_string).collect();
    }
    let summary = run_campaign(&plan, &o)?;
    eprintln!("{}", summary.render());
    Ok(summary.exit_code())
}
