//! `cargo xtask run`: plans a campaign and hands it to the runner (`colloc_runner`).
//! The standalone `colloc-runner` binary does the same from a plan file on hosts without
//! a Rust toolchain.

use anyhow::Context;
use colloc_runner::{run_campaign, RunArgs};
use colloc_trace::Mode;
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
            let table = table_for(&p.gpus, &device)?;
            let out = here_dir(root, c, &table.key, &today());
            for other in &p.artifact.campaigns {
                anyhow::ensure!(
                    crate::campaign_dir(&p.artifact, root, &other.name.value) != out,
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
        a.run.only = smoke_subset(&plan);
        anyhow::ensure!(!a.run.only.is_empty(), "--smoke: the plan has no feasible workload");
    }
    if let Some(id) = &a.claim {
        let project = project.as_ref().context("--claim needs the project's artifact.yaml")?;
        let sel = claim_selection(project, &plan, id)?;
        println!("{}", sel.render());
        a.run.only = sel.workloads.iter().map(|(w, _, _)| w.clone()).collect();
    }
    let out = match (&a.out, &plan.campaign, &project) {
        _ if here.is_some() => here.clone().expect("checked"),
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

/// The workloads of `smoke`'s phase 5 and of `run --smoke`: for every mode the plan runs, one feasible workload (the
/// headline 7 × resnet26 one for naive and MPS, else the plan's first of that mode), as the
/// run ids of their first repetition, in mode order.
pub fn smoke_subset(plan: &colloc_plan::Plan) -> Vec<String> {
    let headline = |w: &&colloc_plan::PlannedWorkload| {
        w.headline && w.jobs.len() == 7 && w.jobs.iter().all(|j| j.model == "resnet26")
    };
    let mut ids = Vec::new();
    for mode in [Mode::Exclusive, Mode::Naive, Mode::Mps, Mode::MpsLimited, Mode::Mig] {
        let of_mode = || plan.workloads.iter().filter(move |w| w.mode == mode && w.feasible);
        let pick = match mode {
            Mode::Naive | Mode::Mps => of_mode().find(headline).or_else(|| of_mode().next()),
            _ => of_mode().next(),
        };
        if let Some(w) = pick {
            ids.push(format!("{}.r1", w.id));
        }
    }
    ids
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

/// The GPU table whose `nvml_names` the device's name contains (the longest such name when
/// several do); none is an error that lists the tables and says how to add one.
pub fn table_for<'a>(
    tables: &'a std::collections::BTreeMap<String, colloc_spec::GpuTable>,
    device: &str,
) -> anyhow::Result<&'a colloc_spec::GpuTable> {
    let best = tables
        .values()
        .flat_map(|t| t.nvml_names.iter().filter(|n| device.contains(n.as_str())).map(move |n| (n.len(), t)))
        .max_by_key(|(len, _)| *len);
    match best {
        Some((_, t)) => Ok(t),
        None => {
            let known: Vec<String> = tables
                .values()
                .map(|t| format!("  {}: {} (names {})", t.key, t.name, t.nvml_names.join(", ")))
                .collect();
            anyhow::bail!(
                "--here: no GPU table matches `{device}`. Supported:\n{}\nTo add this GPU, write \
                 experiments/gpus/<key>.yaml (schema: experiments/gpu.schema.json; `nvidia-smi mig -lgip` \
                 lists its MIG profiles) with `nvml_names` holding part of its name, then run again.",
                known.join("\n")
            )
        }
    }
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

/// `1 h 7 min`, `42 min 10 s`, `9 s`: to the nearest second under an hour, else to the
/// nearest minute.
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s < 3600 {
        return match s / 60 {
            0 => format!("{s} s"),
            m => format!("{m} min {} s", s % 60),
        };
    }
    let minutes = (s + 30) / 60;
    format!("{} h {} min", minutes / 60, minutes % 60)
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
        let root = crate::project_root().unwrap();
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

    /// A device name picks the table whose `nvml_names` it contains, the longest match
    /// winning; an unknown GPU is refused with the supported ones and how to add one.
    #[test]
    fn the_device_name_picks_its_gpu_table() {
        let project = colloc_spec::load_project(&crate::project_root().unwrap()).unwrap();
        for (device, key) in [
            ("NVIDIA H200", "h200-141gb"),
            ("NVIDIA H200 NVL", "h200-141gb"),
            ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
            ("NVIDIA A100 80GB PCIe", "a100-80gb"),
            ("NVIDIA H100 80GB HBM3", "h100-80gb"),
        ] {
            assert_eq!(super::table_for(&project.gpus, device).unwrap().key, key, "{device}");
        }
        let e = super::table_for(&project.gpus, "Tesla V100-SXM2-16GB").unwrap_err().to_string();
        assert!(e.contains("no GPU table matches `Tesla V100-SXM2-16GB`") && e.contains("h100-80gb: "), "{e}");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_date(0), "1970-01-01");
        assert_eq!(super::civil_date(11_016), "2000-02-29");
        assert_eq!(super::civil_date(20_422), "2025-11-30");
        assert_eq!(super::civil_date(20_788), "2026-12-01");
    }

    /// Every claim selects at least one planned workload of the shipped campaign.
    #[test]
    fn every_claim_selects_workloads_of_the_shipped_campaign() {
        let root = crate::project_root().unwrap();
        let project = colloc_spec::load_project(&root).unwrap();
        let plan =
            colloc_plan::plan_project_campaign(&project, &project.artifact.shipped_campaign.value, None).unwrap();
        for c in &project.artifact.claims {
            let sel = super::claim_selection(&project, &plan, &c.id).unwrap();
            assert!(!sel.workloads.is_empty(), "claim {} selects nothing", c.id);
        }
    }
}
