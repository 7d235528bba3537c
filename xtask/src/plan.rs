//! `cargo xtask plan` and `cargo xtask import-radt`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use colloc_plan::Plan;
use colloc_trace::Mode;

#[derive(clap::Args)]
pub struct Args {
    /// Campaign of artifact.yaml; none: every experiment under the `paper` protocol.
    #[arg(long)]
    pub campaign: Option<String>,
    /// Target GPU: a100-40gb, a100-80gb, h100-80gb, h200-141gb (default: the campaign's, or the paper's: artifact.yaml's `paper.gpu`).
    #[arg(long)]
    pub gpu: Option<String>,
    /// Print one JSON object (the plan) instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// The radT experiment CSV (columns Experiment, Workload, ..., Collocation, ..., Params).
    pub file: PathBuf,
    /// Write the YAML here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub fn make(campaign: Option<&str>, gpu: Option<&str>) -> anyhow::Result<Plan> {
    let root = crate::project_root()?;
    let project = colloc_spec::load_project(&root)?;
    Ok(match campaign {
        Some(c) => colloc_plan::plan_project_campaign(&project, c, gpu)?,
        None => colloc_plan::plan_all(&project, gpu.unwrap_or(&project.artifact.paper.gpu.value), "paper")?,
    })
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let plan = match make(a.campaign.as_deref(), a.gpu.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        print!("{}", render(&plan));
    }
    Ok(ExitCode::SUCCESS)
}

/// The plan as a table a person reads.
pub fn render(p: &Plan) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "plan: {} on {} ({}), protocol `{}`",
        p.campaign.as_deref().unwrap_or("every experiment"),
        p.gpu.name,
        p.gpu.key,
        p.protocol.name
    );
    let idw = p.workloads.iter().map(|w| w.id.len()).max().unwrap_or(2).max(2);
    let _ =
        writeln!(s, "{:<idw$}  {:>3}  {:<11}  {:>4}  {:>3}  {:>8}  layout", "id", "exp", "mode", "jobs", "rep", "est");
    for w in &p.workloads {
        let layout = if !w.feasible {
            format!("INFEASIBLE: {}", w.reason.as_deref().unwrap_or(""))
        } else {
            match w.mode {
                Mode::Mig => {
                    w.jobs.iter().map(|j| j.mig_profile.clone().unwrap_or_default()).collect::<Vec<_>>().join(" + ")
                }
                Mode::MpsLimited => w
                    .jobs
                    .iter()
                    .filter_map(|j| j.mps_limits.as_ref())
                    .map(|l| {
                        format!(
                            "{}%/{}MiB (as {})",
                            l.active_thread_percentage, l.pinned_mem_limit_mib, l.stands_in_for
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" + "),
                _ => w.label.clone(),
            }
        };
        let _ = writeln!(
            s,
            "{:<idw$}  {:>3}  {:<11}  {:>4}  {:>3}  {:>8}  {}",
            w.id,
            w.experiment,
            w.mode.as_str(),
            w.jobs.len(),
            w.repetitions,
            hms(w.estimated_seconds),
            layout
        );
    }
    let t = &p.totals;
    let _ = write!(
        s,
        "total: {} workloads, {} jobs, {} infeasible, {} runs, estimated GPU time {}",
        t.workloads,
        t.jobs,
        t.infeasible,
        t.runs,
        hms(t.estimated_gpu_seconds)
    );
    // A GPU whose MIG mode is off skips the MIG runs at once: say what they make of the total.
    let mig: f64 = p
        .workloads
        .iter()
        .filter(|w| w.mode == Mode::Mig && w.feasible)
        .map(|w| w.estimated_seconds * w.repetitions as f64)
        .sum();
    if mig > 0.0 {
        let _ = write!(
            s,
            " ({} of it MIG runs, skipped at once where the GPU's MIG mode is off: {} without them)",
            hms(mig),
            hms(t.estimated_gpu_seconds - mig)
        );
    }
    if let Some(i) = p.interleave.filter(|_| t.interleaved_runs > 0) {
        let _ = write!(
            s,
            "\ninterleaved baselines: about {} runs ({}) included above, one after every {} collocated run(s) \
             that a baseline held by the host's CPU divides, and {} of each on every host and invocation",
            t.interleaved_runs,
            hms(t.interleaved_seconds),
            i.between,
            i.runs_per_invocation
        );
    }
    s.push('\n');
    s
}

pub fn hms(secs: f64) -> String {
    let s = secs.round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

pub fn import_main(a: ImportArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&a.file).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    let project = colloc_spec::load_project(&crate::project_root()?)?;
    let yaml = match colloc_spec::radt::import(&a.file, &text, &project.spec) {
        Ok(y) => y,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    match a.output {
        Some(o) => std::fs::write(&o, yaml).map_err(|e| anyhow::anyhow!("{}: {e}", o.display()))?,
        None => print!("{yaml}"),
    }
    Ok(ExitCode::SUCCESS)
}
