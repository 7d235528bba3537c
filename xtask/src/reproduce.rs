//! `cargo xtask reproduce`: verify the traces, analyse them, regenerate `figures/` and
//! `paper/`, print the claims.
//!
//! Needs no GPU. The campaign is `--campaign NAME` or the one `artifact.yaml` ships
//! (`shipped_campaign`); its traces are `data/<name>/` (or the campaign's `out`). A trace
//! that differs from its `SHA256SUMS` stops everything with an error naming the files.
//! `--check` regenerates in memory and fails if the files under the project differ.

use anyhow::{bail, Result};
use colloc_analysis::{evaluate, ClaimOutcome};
use colloc_report::{Inputs, Layout};
use colloc_spec::gpu::GpuTable;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Campaign to analyse (default: artifact.yaml's `shipped_campaign`).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Run the campaign on this machine's GPU first.
    #[arg(long)]
    pub run: bool,
    /// Do not write: fail if the outputs under the project are not what the traces give.
    #[arg(long)]
    pub check: bool,
    /// Write the outputs under this folder (same layout) instead of the project. Default:
    /// the project for the shipped campaign, `target/reproduce/<campaign>/` for any other,
    /// so the committed outputs always stay those of the shipped traces.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Read the campaign's traces from this directory (default: the campaign's `out` in
    /// artifact.yaml, or data/<campaign>), e.g. a subset of it run elsewhere.
    #[arg(long)]
    pub traces: Option<PathBuf>,
}

/// What a reproduction produced.
pub struct Outcome {
    pub campaign: String,
    pub claims: Vec<ClaimOutcome>,
    /// `--check`: how the project's outputs differ (empty: up to date). Otherwise: the files written.
    pub changes: Vec<String>,
    pub outputs: usize,
    /// Where the outputs were written or compared.
    pub out_root: PathBuf,
    pub timing: String,
    /// The campaign lacks planned runs: how many.
    pub incomplete: Option<String>,
}

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root();
    if a.run {
        // First what the campaign lacks, on this machine's GPU (runs already made are kept).
        let name = match &a.campaign {
            Some(c) => c.clone(),
            None => {
                colloc_spec::load_project(&root).map_err(|d| anyhow::anyhow!("{d}"))?.artifact.shipped_campaign.value
            }
        };
        let code = crate::run::main(crate::run::Args::for_campaign(&name))?;
        if code != ExitCode::SUCCESS {
            eprintln!("the run of campaign {name} did not complete; nothing was reproduced");
            return Ok(code);
        }
    }
    let o = reproduce_traces(&root, a.campaign.as_deref(), a.traces.as_deref(), a.check, a.out.as_deref())?;
    print!("{}", colloc_report::claims_console(&o.claims));
    if let Some(note) = &o.incomplete {
        println!("note: incomplete campaign: {note}; the verdicts cover the runs made so far");
    }
    println!("{}", o.timing);
    if a.check {
        if o.changes.is_empty() {
            println!("outputs are up to date with campaign {}", o.campaign);
            Ok(ExitCode::SUCCESS)
        } else {
            eprintln!("outputs are stale (run `cargo xtask reproduce` and commit the result):");
            for c in &o.changes {
                eprintln!("  {c}");
            }
            Ok(ExitCode::FAILURE)
        }
    } else {
        println!("{} of {} output files rewritten under {}", o.changes.len(), o.outputs, o.out_root.display());
        Ok(ExitCode::SUCCESS)
    }
}

/// Verifies, analyses and renders `campaign` (default: the shipped one) of the project at
/// `root`; writes the outputs (under `out`, see [`Args::out`]) unless `check`.
pub fn reproduce(root: &Path, campaign: Option<&str>, check: bool, out: Option<&Path>) -> Result<Outcome> {
    reproduce_traces(root, campaign, None, check, out)
}

/// [`reproduce`] of the traces in `traces` (default: the campaign's directory).
pub fn reproduce_traces(
    root: &Path,
    campaign: Option<&str>,
    traces: Option<&Path>,
    check: bool,
    out: Option<&Path>,
) -> Result<Outcome> {
    let project = colloc_spec::load_project(root).map_err(|d| anyhow::anyhow!("{d}"))?;
    let artifact = &project.artifact;
    let name = campaign.map(str::to_string).unwrap_or_else(|| artifact.shipped_campaign.value.clone());
    let out_root: PathBuf = match out {
        Some(o) => o.to_path_buf(),
        None if name == artifact.shipped_campaign.value => root.to_path_buf(),
        None => root.join("target/reproduce").join(&name),
    };
    let dir = match traces {
        Some(t) => t.to_path_buf(),
        None => crate::campaign_dir(artifact, root, &name),
    };
    if !dir.is_dir() {
        bail!("campaign {name}: no traces at {} (run it with `cargo xtask run --campaign {name}`)", dir.display());
    }

    let t0 = Instant::now();
    // The campaign's plan, as `cargo xtask run` makes it: the analysis reads each run as its
    // planned workload and says what the campaign still lacks.
    let plan = match artifact.campaigns.iter().any(|c| c.name.value == name) {
        true => Some(colloc_plan::plan_project_campaign(&project, &name, None).map_err(|d| anyhow::anyhow!("{d}"))?),
        false => None,
    };
    let results = colloc_analysis::analyse(&dir, plan.as_ref())?;
    let t_analyse = t0.elapsed();

    let claims = evaluate(&results, &artifact.claims)?;
    let gpus: Vec<GpuTable> = project.gpus.values().cloned().collect();
    // The paper's GPU: the one its own campaign targets.
    let paper_gpu = artifact
        .campaigns
        .iter()
        .find(|c| c.name.value == "paper")
        .and_then(|c| gpus.iter().find(|g| g.key == c.gpu.value));
    let layout = Layout {
        tables: artifact.outputs.tables.clone(),
        figures: artifact.outputs.figures.clone(),
        claims: artifact.outputs.claims.clone(),
        report: artifact.outputs.report.clone(),
    };
    let t1 = Instant::now();
    let outputs =
        colloc_report::outputs(&Inputs { results: &results, claims: &claims, gpus: &gpus, paper_gpu }, &layout)?;
    let t_render = t1.elapsed();
    let t2 = Instant::now();
    let changes = if check {
        colloc_report::stale(&out_root, &outputs, &layout)?
    } else {
        colloc_report::write(&out_root, &outputs, &layout)?
    };
    let t_write = t2.elapsed();
    let timing = format!(
        "timing: verify + analyse {:.2} s ({} runs), render {:.2} s ({} files), {} {:.2} s",
        t_analyse.as_secs_f64(),
        results.runs.len(),
        t_render.as_secs_f64(),
        outputs.len(),
        if check { "compare" } else { "write" },
        t_write.as_secs_f64()
    );
    let incomplete = results.incomplete();
    Ok(Outcome { campaign: name, claims, changes, outputs: outputs.len(), out_root, timing, incomplete })
}

#[cfg(test)]
mod tests {
    /// The committed figures, tables and report are what the shipped traces give.
    #[test]
    fn committed_outputs_are_up_to_date() {
        let root = crate::project_root();
        let Ok(project) = colloc_spec::load_project(&root) else {
            panic!("artifact.yaml or the specs do not load: run `cargo xtask validate`");
        };
        let shipped = project.artifact.shipped_campaign.value.clone();
        assert!(
            root.join("data").join(&shipped).join("SHA256SUMS").exists(),
            "the shipped campaign data/{shipped}/ is missing"
        );
        let o = super::reproduce(&root, None, true, None).unwrap();
        assert!(o.changes.is_empty(), "outputs are stale; run `cargo xtask reproduce`:\n{}", o.changes.join("\n"));
    }

    fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }

    /// A campaign from a stranger whose checksums match but whose trace is damaged: the
    /// reproduction stops with one paragraph naming the campaign, the run, the file, the
    /// line and what is wrong (what `cargo xtask reproduce` prints after `error:`, exiting 1).
    #[test]
    fn a_damaged_trace_stops_the_reproduction_with_one_paragraph() {
        let root = crate::project_root();
        let d = tempfile::tempdir().unwrap();
        let project = d.path();
        std::fs::copy(root.join("artifact.yaml"), project.join("artifact.yaml")).unwrap();
        copy_dir(&root.join("experiments"), &project.join("experiments"));
        let run = "e37-M+S-mps@syn.r1";
        let campaign = project.join("data/stranger");
        let run_dir = campaign.join("runs").join(run);
        copy_dir(&root.join("data/h200-quick/runs").join(run), &run_dir);
        // Line 5 of job 1's log: a negative time.
        let log = run_dir.join("job-1.events.jsonl");
        let text = std::fs::read_to_string(&log).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        assert!(lines[4].starts_with("{\"mono\": "), "{}", lines[4]);
        lines[4] = lines[4].replacen("{\"mono\": ", "{\"mono\": -", 1);
        std::fs::write(&log, lines.join("\n") + "\n").unwrap();
        colloc_trace::manifest::add_dir(&campaign, "runs").unwrap();

        let out = d.path().join("out");
        let r = super::reproduce(project, Some("stranger"), false, Some(&out));
        let Err(e) = r else {
            panic!("a damaged campaign was reproduced");
        };
        let message = format!("{e:#}");
        assert!(!message.contains('\n'), "{message}");
        assert!(
            message.starts_with(&format!("campaign stranger: run {run} is unreadable, nothing was analysed: "))
                && message.contains(&format!("runs/{run}/job-1.events.jsonl: line 5: mono is -")),
            "{message}"
        );
        assert!(!out.exists(), "nothing is written for a campaign that cannot be analysed");
    }
}
