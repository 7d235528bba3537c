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
    let mut a = a;
    if let Some(id) = &a.claim {
        let project = project.as_ref().context("--claim needs the project's artifact.yaml")?;
        let sel = claim_selection(project, &plan, id)?;
        println!("{}", sel.render());
        a.run.only = sel.workloads.iter().map(|(w, _, _)| w.clone()).collect();
    }
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

/// `1 h 7 min`, `42 min 10 s`, `9 s`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    match (h, m) {
        (0, 0) => format!("{sec} s"),
        (0, _) => format!("{m} min {sec} s"),
        _ => format!("{h} h {m} min"),
    }
}

/// The workloads one claim reads in a plan, with their estimated GPU time.
pub struct ClaimSelection {
    pub claim: String,
    pub campaign: String,
    /// (workload id, repetitions, estimated seconds per repetition), in plan order.
    pub workloads: Vec<(String, u32, f64)>,
}

impl ClaimSelection {
    /// Estimated GPU seconds of every repetition of the selected workloads.
    pub fn estimated_seconds(&self) -> f64 {
        self.workloads.iter().map(|(_, n, s)| f64::from(*n) * s).sum()
    }

    pub fn render(&self) -> String {
        let runs: u32 = self.workloads.iter().map(|(_, n, _)| n).sum();
        let mut s = format!(
            "claim {} on campaign {}: {} workloads, {runs} runs, estimated GPU time {} (plan `estimated_seconds` x repetitions)\n",
            self.claim,
            self.campaign,
            self.workloads.len(),
            duration(self.estimated_seconds()),
        );
        for (w, n, e) in &self.workloads {
            s.push_str(&format!("  {w}  x{n}  {e:.0} s each\n"));
        }
        s
    }
}

/// The workloads of `plan` that claim `id` reads ([`colloc_analysis::claim_workloads`]).
pub fn claim_selection(
    project: &colloc_spec::Project,
    plan: &colloc_plan::Plan,
    id: &str,
) -> anyhow::Result<ClaimSelection> {
    let Some(claim) = project.artifact.claims.iter().find(|c| c.id.eq_ignore_ascii_case(id)) else {
        let known: Vec<&str> = project.artifact.claims.iter().map(|c| c.id.as_str()).collect();
        anyhow::bail!("no claim `{id}` in artifact.yaml (known: {})", known.join(", "));
    };
    let ids = colloc_analysis::claim_workloads(claim, plan)?;
    let workloads = plan
        .workloads
        .iter()
        .filter(|w| ids.contains(&w.id))
        .map(|w| (w.id.clone(), w.repetitions, w.estimated_seconds))
        .collect();
    Ok(ClaimSelection {
        claim: claim.id.clone(),
        campaign: plan.campaign.clone().unwrap_or_else(|| "(none)".into()),
        workloads,
    })
}

#[cfg(test)]
mod tests {
    /// `--claim C7` selects, from the h200-quick plan, the 7 × resnet26 MIG workload, its
    /// mps-limited stand-in (both data sources) and resnet26 alone on each: nothing else.
    #[test]
    fn claim_c7_selects_its_workloads_in_h200_quick() {
        let root = crate::project_root();
        let project = colloc_spec::load_project(&root).unwrap();
        let plan = colloc_plan::plan_project_campaign(&project, "h200-quick", None).unwrap();
        let sel = super::claim_selection(&project, &plan, "C7").unwrap();
        let ids: Vec<&str> = sel.workloads.iter().map(|(w, _, _)| w.as_str()).collect();
        let mut want = vec![
            "e33-resnet26-cifar10-x1-exclusive@gen",
            "e33-resnet26-cifar10-x1-exclusive@syn",
            "e33-resnet26-cifar10-x7-mig1g@syn",
            "e33-resnet26-cifar10-x7-mpslim1g@gen",
            "e33-resnet26-cifar10-x7-mpslim1g@syn",
        ];
        let mut got = ids.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        let est: f64 = plan
            .workloads
            .iter()
            .filter(|w| ids.contains(&w.id.as_str()))
            .map(|w| f64::from(w.repetitions) * w.estimated_seconds)
            .sum();
        assert!(est > 0.0 && (sel.estimated_seconds() - est).abs() < 1e-9);
        assert!(sel.render().starts_with("claim C7 on campaign h200-quick: 5 workloads"));
        // `run --claim` is `--only` with that set.
        assert!(super::Args::parse(&["--campaign", "h200-quick", "--claim", "C7", "--only", "x"]).is_err());
        assert!(super::claim_selection(&project, &plan, "C99").is_err());
    }

    /// Every claim selects at least one planned workload of the shipped campaign.
    #[test]
    fn every_claim_selects_workloads_of_the_shipped_campaign() {
        let root = crate::project_root();
        let project = colloc_spec::load_project(&root).unwrap();
        let plan =
            colloc_plan::plan_project_campaign(&project, &project.artifact.shipped_campaign.value, None).unwrap();
        for c in &project.artifact.claims {
            let sel = super::claim_selection(&project, &plan, &c.id).unwrap();
            assert!(!sel.workloads.is_empty(), "claim {} selects nothing", c.id);
        }
    }
}
