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
    /// Only the workloads this claim of artifact.yaml reads (C1…C9): `--only` with the
    /// workloads its checks' queries select, and their baselines.
    #[arg(long, conflicts_with = "only")]
    pub claim: Option<String>,
    /// Re-target the campaign to this machine's GPU (its `nvidia-smi` name matched against
    /// the GPU tables of experiments/gpus, MIG classes mapped to its own profiles) and write
    /// a new directory, data/<campaign>-<gpu table>-<date>, never a shipped campaign's.
    #[arg(long, requires = "campaign", conflicts_with_all = ["plan", "target", "out"])]
    pub here: bool,
    /// Only the real subset of `cargo xtask smoke --gpu`: one workload per mode (the
    /// headline 7 × resnet26 for naive and MPS).
    #[arg(long, conflicts_with_all = ["only", "claim"])]
    pub smoke: bool,
    /// The `nvidia-smi` that `--here` asks (a stand-in in tests).
    #[arg(long, hide = true, default_value = "nvidia-smi")]
    pub nvidia_smi: String,
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
    let root = crate::project_root()?;
    let summary = execute(&root, a)?;
    eprintln!("{}", summary.render());
    Ok(summary.exit_code())
}

/// Plans (unless given a plan) and runs the campaign of the project at `root`.
pub fn execute(root: &std::path::Path, a: Args) -> anyhow::Result<colloc_runner::CampaignSummary> {
    // The project, where a plan or the campaign directory comes from it.
    let project = match (&a.plan, &a.out) {
        (Some(_), Some(_)) => None,
        _ => Some(colloc_spec::load_project(root)?),
    };
    let mut a = a;
    let here = match (a.here, &a.campaign, &project) {
        (true, Some(c), Some(p)) => {
            let device = device_name(&a.nvidia_smi, a.run.gpu)?;
            let table = colloc_spec::table_for_device(&p.gpus, &device).map_err(|e| anyhow::anyhow!("--here: {e}"))?;
            let out = here_dir(root, c, &table.key, &today());
            for other in &p.artifact.campaigns {
                anyhow::ensure!(
                    colloc_reproduce::campaign_dir(&p.artifact, root, &other.name.value) != out,
                    "--here would write into campaign {}'s directory {}",
                    other.name.value,
                    out.display()
                );
            }
            println!(
                "here: GPU {} is {device}: table {} ({}); campaign {c} re-targeted to it, written to {}",
                a.run.gpu,
                table.key,
                table.name,
                out.strip_prefix(root).unwrap_or(&out).display()
            );
            a.target = Some(table.key.clone());
            Some(out)
        }
        _ => None,
    };
    let plan = match (&a.plan, &a.campaign, &project) {
        (Some(path), _, _) => colloc_plan::Plan::from_file(path)?,
        (None, Some(c), Some(p)) => colloc_plan::plan_project_campaign(p, c, a.target.as_deref())?,
        _ => anyhow::bail!("give --campaign NAME or --plan FILE"),
    };
    if a.smoke {
        a.run.only = colloc_reproduce::smoke_subset(&plan);
        anyhow::ensure!(!a.run.only.is_empty(), "--smoke: the plan has no feasible workload");
    }
    if let Some(id) = &a.claim {
        let project = project.as_ref().context("--claim needs the project's artifact.yaml")?;
        let sel = colloc_reproduce::claim_selection(project, &plan, id)?;
        println!("{}", sel.render());
        a.run.only = sel.workloads.iter().map(|(w, _, _)| w.clone()).collect();
    }
    let out = match (&a.out, &plan.campaign, &project) {
        _ if here.is_some() => here.clone().expect("checked"),
        (Some(o), _, _) => o.clone(),
        (None, Some(c), Some(p)) => colloc_reproduce::campaign_dir(&p.artifact, root, c),
        _ => anyhow::bail!("the plan names no campaign: give --out DIR"),
    };
    let training = vec!["python3".into(), root.join("workloads/train.py").to_string_lossy().into_owned()];
    let o = a.run.options(out, Some(training), || {
        let exe = std::env::current_exe().context("cannot find the xtask executable")?;
        Ok(vec![exe.to_string_lossy().into_owned(), "run".into(), "--fake-job".into()])
    })?;
    run_campaign(&plan, &o)
}

/// The name `nvidia-smi` gives the runner's GPU (`--gpu`).
fn device_name(smi: &str, gpu: u32) -> anyhow::Result<String> {
    let out = std::process::Command::new(smi)
        .args(["--query-gpu=name", "--format=csv,noheader", "-i", &gpu.to_string()])
        .output()
        .with_context(|| format!("--here: cannot run `{smi}` to learn this machine's GPU"))?;
    let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
    anyhow::ensure!(
        out.status.success() && !name.is_empty() && !name.contains('\n'),
        "--here: `{smi} -i {}` did not name one GPU: {}{}",
        gpu,
        name,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(name)
}

/// data/<campaign>-<table>-<date>.
pub fn here_dir(root: &std::path::Path, campaign: &str, table: &str, date: &str) -> PathBuf {
    root.join("data").join(format!("{campaign}-{table}-{date}"))
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    civil_date(secs / 86_400)
}

/// The date of a day count since 1970-01-01.
pub fn civil_date(days: u64) -> String {
    let (y, m, d) = colloc_trace::civil::civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    /// `run --claim` is `--only` with the claim's workloads: the two do not go together.
    #[test]
    fn claim_and_only_exclude_each_other() {
        assert!(super::Args::parse(&["--campaign", "h200-quick", "--claim", "C7", "--only", "x"]).is_err());
        assert!(super::Args::parse(&["--campaign", "h200-quick", "--claim", "C7"]).is_ok());
    }

    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_date(0), "1970-01-01");
        assert_eq!(super::civil_date(11_016), "2000-02-29");
        assert_eq!(super::civil_date(20_422), "2025-11-30");
        assert_eq!(super::civil_date(20_788), "2026-12-01");
    }
}
