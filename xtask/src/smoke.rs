//! `cargo xtask smoke`: the getting-started path, in timed phases, each saying what it
//! expects and what it got.
//!
//! 1. validate the specs (as `validate`);
//! 2. plan the shipped campaign (as `plan`: as many runs as the shipped traces hold);
//! 3. verify the shipped traces against their `SHA256SUMS`;
//! 4. `reproduce --check` (up to date);
//! 5. a handful of the shipped campaign's workloads (one per mode, with the headline
//!    7 × resnet26 naive and MPS) run by the simulated backend into a fresh `target/smoke/`
//!    directory, verified and reproduced into `target/smoke/outputs/`;
//! 6. `compare` of that campaign against itself.
//!
//! With `--gpu`, phase 5 runs the same workloads on this machine's GPU with the real
//! runner (`--preload`) and phase 6 compares them with the shipped campaign. `--dry-run`
//! prints what each phase would do (the selection, the commands) and runs nothing.
//!
//! Every phase calls the library functions the other tasks use; the commands printed are
//! what a user types to do the same by hand. Exit 1 when a phase missed its expectation.

use anyhow::{anyhow, bail, Context, Result};
use colloc_plan::Plan;
use colloc_report::compare::WorkloadVerdict;
use colloc_trace::meta::RunStatus;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Run phase 5 on this machine's GPU (real runner, `--preload`) and compare it with the
    /// shipped campaign in phase 6, instead of the simulated backend against itself.
    #[arg(long)]
    pub gpu: bool,
    /// NVML / nvidia-smi index of the GPU (with --gpu).
    #[arg(long, default_value_t = 0, requires = "gpu")]
    pub gpu_index: u32,
    /// Print the selection and the commands of every phase; run nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// One phase's outcome.
pub struct Phase {
    pub name: &'static str,
    pub expected: String,
    pub got: String,
    pub seconds: f64,
    pub ok: bool,
}

/// What phases 5 and 6 do: where, with which arguments.
pub struct Steps {
    pub campaign: String,
    pub selected: Vec<String>,
    /// The new campaign directory.
    pub dir: PathBuf,
    pub outputs: PathBuf,
    pub compare_out: PathBuf,
    /// `cargo xtask run` arguments.
    pub run: Vec<String>,
    /// `cargo xtask reproduce` arguments.
    pub reproduce: Vec<String>,
    /// `cargo xtask compare` arguments: base, new, `--out`.
    pub compare: Vec<String>,
}

/// The steps of phases 5 and 6 for the shipped campaign `plan` of the project at `root`.
/// `stamp` names the GPU run's directory (a real run is never overwritten).
pub fn steps(root: &Path, plan: &Plan, shipped_dir: &Path, gpu: Option<u32>, stamp: u64) -> Result<Steps> {
    let campaign = plan.campaign.clone().context("the shipped campaign's plan names no campaign")?;
    let selected = colloc_reproduce::smoke_subset(plan);
    if selected.is_empty() {
        bail!("the plan of campaign {campaign} has no feasible workload to run");
    }
    let smoke = root.join("target/smoke");
    let dir = match gpu {
        None => smoke.join(format!("sim-{campaign}")),
        Some(_) => smoke.join(format!("gpu-{campaign}-{stamp}")),
    };
    let outputs = smoke.join("outputs");
    let compare_out = smoke.join("compare");
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let mut run = vec!["--campaign".to_string(), campaign.clone(), "--out".into(), rel(&dir)];
    match gpu {
        None => run.push("--simulate".into()),
        Some(i) => run.extend(["--gpu".into(), i.to_string(), "--preload".into()]),
    }
    run.push("--only".into());
    run.extend(selected.iter().cloned());
    let reproduce =
        vec!["--campaign".into(), campaign.clone(), "--traces".into(), rel(&dir), "--out".into(), rel(&outputs)];
    let base = match gpu {
        None => rel(&dir),
        Some(_) => rel(shipped_dir),
    };
    let compare = vec![base, rel(&dir), "--out".into(), rel(&compare_out)];
    Ok(Steps { campaign, selected, dir, outputs, compare_out, run, reproduce, compare })
}

/// `cargo xtask TASK ARGS`, as a user types it (arguments with `*`, `@` or spaces quoted).
pub fn command(task: &str, args: &[String]) -> String {
    let mut s = format!("cargo xtask {task}");
    for a in args {
        if a.chars().any(|c| matches!(c, '*' | '@' | ' ' | '?' | '$')) {
            let _ = write!(s, " '{a}'");
        } else {
            let _ = write!(s, " {a}");
        }
    }
    s
}

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root()?;
    let phases = smoke(&root, a.gpu.then_some(a.gpu_index), a.dry_run)?;
    if a.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", summary(&phases));
    Ok(if phases.iter().all(|p| p.ok) { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The phases run so far, each printed as it goes.
struct Phases(Vec<Phase>);

impl Phases {
    /// Runs phase `n` (`f` gives what it got and whether that meets `expected`), prints and keeps it.
    fn run(
        &mut self,
        n: usize,
        name: &'static str,
        expected: String,
        f: impl FnOnce() -> Result<(String, bool)>,
    ) -> bool {
        println!("[{n}/6] {name}: expect {expected}");
        let t = Instant::now();
        let (got, ok) = f().unwrap_or_else(|e| {
            let e = format!("{e:#}");
            println!("      error: {e}");
            (format!("error: {e}"), false)
        });
        let seconds = t.elapsed().as_secs_f64();
        println!("      got {got} ({seconds:.1} s) {}", if ok { "ok" } else { "FAILED" });
        self.0.push(Phase { name, expected, got, seconds, ok });
        ok
    }
}

/// Runs the phases (prints them only, with `dry_run`), printing each as it goes.
pub fn smoke(root: &Path, gpu: Option<u32>, dry_run: bool) -> Result<Vec<Phase>> {
    // What the phases need from the project; without it nothing can be checked.
    let project = colloc_spec::load_project(root)?;
    let shipped = project.artifact.shipped_campaign.value.clone();
    let shipped_dir = colloc_reproduce::campaign_dir(&project.artifact, root, &shipped);
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let plan = colloc_plan::plan_project_campaign(&project, &shipped, None)?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let st = steps(root, &plan, &shipped_dir, gpu, stamp)?;
    let backend = if gpu.is_some() { "this machine's GPU" } else { "the simulated backend" };
    if dry_run {
        print_dry_run(root, &shipped, &shipped_dir, &st, backend);
        return Ok(Vec::new());
    }
    let mut phases = Phases(Vec::new());

    // 1. The specs, as `cargo xtask validate` checks them.
    phases.run(1, "validate", "no errors".into(), || {
        let summary = colloc_spec::validate::check(root, &[])?;
        colloc_analysis::validate_claims(&project.artifact.claims).context("artifact.yaml")?;
        Ok((format!("{summary}, {} claims", project.artifact.claims.len()), true))
    });

    // 2. The shipped campaign's plan: one planned run per run the shipped traces hold,
    // beside later attempts of planned runs and the baselines the runner added on hosts new
    // to the campaign.
    phases.run(
        2,
        "plan",
        format!("{shipped}: every run of {} planned (or made again) or an added baseline", rel(&shipped_dir)),
        || plan_phase(root, &project, &shipped, &shipped_dir),
    );

    // 3. The shipped traces against their manifest.
    phases.run(3, "verify", format!("0 problems in {}", rel(&shipped_dir)), || verify(&shipped_dir));

    // 4. The committed outputs against what the shipped traces give.
    phases.run(4, "reproduce --check", "up to date".into(), || {
        let o = colloc_reproduce::reproduce(root, &colloc_reproduce::Request { check: true, ..Default::default() })?;
        Ok(match o.changes.len() {
            0 => (format!("up to date ({} outputs)", o.outputs), true),
            n => (format!("{n} of {} outputs stale: {}", o.outputs, o.changes.join("; ")), false),
        })
    });

    // 5. The selected workloads, run, verified and reproduced.
    let n = st.selected.len();
    let expected5 = match gpu {
        None => format!("{n} runs ok, 0 problems, outputs written"),
        Some(_) => format!("{n} runs ok (MIG may be skipped), 0 problems, outputs written"),
    };
    println!("      on {backend}: {}", st.selected.join(" "));
    let ran = phases.run(5, "run (subset)", expected5, || run_phase(root, &st, gpu));

    // 6. The new campaign compared: with itself (simulated), with the shipped one (GPU).
    let expected6 = match gpu {
        None => "every workload agrees with itself".to_string(),
        Some(_) => format!("every workload measured in both agrees with {}", rel(&shipped_dir)),
    };
    phases.run(6, "compare", expected6, || compare_phase(root, &st, ran));
    Ok(phases.0)
}

/// What the dry run prints: every phase's command, and the selection.
fn print_dry_run(root: &Path, shipped: &str, shipped_dir: &Path, st: &Steps, backend: &str) {
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    println!("smoke (dry run): shipped campaign {shipped}, phase 5 on {backend}");
    println!("[1/6] validate: cargo xtask validate");
    println!("[2/6] plan: {}", command("plan", &["--campaign".into(), shipped.to_string()]));
    println!("[3/6] verify: sha256sum -c SHA256SUMS in {}", rel(shipped_dir));
    println!("[4/6] reproduce: cargo xtask reproduce --check");
    println!("[5/6] run {} workloads of {}:", st.selected.len(), st.campaign);
    for id in &st.selected {
        println!("        {id}");
    }
    println!("      $ {}", command("run", &st.run));
    println!("      verify: sha256sum -c SHA256SUMS in {}", rel(&st.dir));
    println!("      $ {}", command("reproduce", &st.reproduce));
    println!("[6/6] $ {}", command("compare", &st.compare));
}

/// Phase 2: the shipped campaign planned, and its runs counted against the plan.
fn plan_phase(
    root: &Path,
    project: &colloc_spec::Project,
    shipped: &str,
    shipped_dir: &Path,
) -> Result<(String, bool)> {
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let plan = colloc_plan::plan_project_campaign(project, shipped, None)?;
    let t = &plan.totals;
    let colloc_reproduce::RunCount { planned, again, added, other } = colloc_reproduce::count_runs(shipped_dir, &plan)?;
    let again = if again > 0 { format!(", {again} made again") } else { String::new() };
    let neither = if other > 0 { format!(", {other} neither") } else { String::new() };
    let got = format!(
        "{shipped}: {} runs ({} workloads, {} jobs, {} infeasible); {planned} planned{again} and {added} added baselines in {}{neither}",
        t.runs,
        t.workloads,
        t.jobs,
        t.infeasible,
        rel(shipped_dir),
    );
    Ok((got, t.runs > 0 && planned == t.runs && other == 0))
}

/// Phase 5: the selected workloads run, verified and reproduced.
fn run_phase(root: &Path, st: &Steps, gpu: Option<u32>) -> Result<(String, bool)> {
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let n = st.selected.len();
    println!("      $ {}", command("run", &st.run));
    if gpu.is_none() && st.dir.exists() {
        std::fs::remove_dir_all(&st.dir).with_context(|| format!("removing {}", st.dir.display()))?;
    }
    if st.outputs.exists() {
        std::fs::remove_dir_all(&st.outputs).with_context(|| format!("removing {}", st.outputs.display()))?;
    }
    let mut args = crate::run::Args::parse(&st.run).map_err(|e| anyhow!("{e}"))?;
    // The printed --out is relative to the project, where a user types it.
    args.out = Some(st.dir.clone());
    if gpu.is_none() {
        // The simulated runs take a second; their per-job lines would fill the screen.
        args.run.progress = colloc_runner::ProgressMode::Quiet;
    }
    let summary = crate::run::execute(root, args)?;
    let fine = |r: &&colloc_runner::RunOutcome| {
        r.status == RunStatus::Ok || (gpu.is_some() && r.status == RunStatus::Skipped && r.run_id.contains("-mig"))
    };
    let ok_runs = summary.runs.iter().filter(fine).count();
    let mut got = format!("{ok_runs}/{} runs ok", summary.runs.len());
    let mut ok = summary.stopped.is_none() && ok_runs == n && summary.runs.len() == n;
    if let Some(why) = &summary.stopped {
        let _ = write!(got, " (stopped: {why})");
    }
    println!("      verify: {}", rel(&st.dir));
    let (v, vok) = verify(&st.dir)?;
    let _ = write!(got, ", {v}");
    ok &= vok;
    println!("      $ {}", command("reproduce", &st.reproduce));
    let o = colloc_reproduce::reproduce(
        root,
        &colloc_reproduce::Request {
            campaign: Some(&st.campaign),
            traces: Some(&st.dir),
            check: false,
            out: Some(&st.outputs),
        },
    )?;
    let _ = write!(got, ", {} of {} outputs written under {}", o.changes.len(), o.outputs, rel(&st.outputs));
    ok &= o.outputs > 0 && o.changes.len() == o.outputs;
    Ok((got, ok))
}

/// Phase 6: the new campaign compared (with itself when simulated, else with the shipped one).
fn compare_phase(root: &Path, st: &Steps, ran: bool) -> Result<(String, bool)> {
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    if !ran {
        bail!("phase 5 failed: nothing to compare");
    }
    println!("      $ {}", command("compare", &st.compare));
    let [base, new, _, out] = &st.compare[..] else { unreachable!("base, new, --out, dir") };
    let a = crate::compare::Args { base: root.join(base), new: root.join(new), out: Some(root.join(out)), json: false };
    let c = crate::compare::run(root, &a)?;
    let agree = c.count(WorkloadVerdict::Agrees);
    let differ = c.count(WorkloadVerdict::Differs);
    let got = format!("{agree} agree, {differ} differ (compare.md under {})", rel(&st.compare_out));
    Ok((got, agree > 0 && !c.differs()))
}

/// `0 problems (N files)` or the problems.
fn verify(dir: &Path) -> Result<(String, bool)> {
    if !dir.is_dir() {
        bail!("{}: not a directory", dir.display());
    }
    let problems = colloc_trace::manifest::verify(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    if problems.is_empty() {
        let files = colloc_trace::manifest::read(dir).map(|m| m.len()).unwrap_or(0);
        Ok((format!("0 problems ({files} files)"), true))
    } else {
        let list: Vec<String> = problems.iter().take(3).map(|p| p.to_string()).collect();
        let more = if problems.len() > 3 { format!("; {} more", problems.len() - 3) } else { String::new() };
        Ok((format!("{} problems: {}{more}", problems.len(), list.join("; ")), false))
    }
}

/// The one-screen table of the phases.
pub fn summary(phases: &[Phase]) -> String {
    let cut = |s: &str, w: usize| {
        if s.chars().count() > w {
            s.chars().take(w - 1).collect::<String>() + "…"
        } else {
            s.to_string()
        }
    };
    let mut s = String::from("\nsmoke summary\n");
    let _ = writeln!(s, "{:<17} {:<38} {:<46} {:>7}  result", "phase", "expected", "got", "seconds");
    for p in phases {
        let _ = writeln!(
            s,
            "{:<17} {:<38} {:<46} {:>7.1}  {}",
            p.name,
            cut(&p.expected, 38),
            cut(&p.got, 46),
            p.seconds,
            if p.ok { "ok" } else { "FAILED" }
        );
    }
    let failed: Vec<&str> = phases.iter().filter(|p| !p.ok).map(|p| p.name).collect();
    let total: f64 = phases.iter().map(|p| p.seconds).sum();
    match failed.len() {
        0 => {
            let _ = writeln!(s, "all {} phases ok in {total:.1} s", phases.len());
        }
        _ => {
            let _ = writeln!(s, "FAILED phases: {} (of {}, {total:.1} s)", failed.join(", "), phases.len());
        }
    }
    s
}
