//! `cargo xtask reproduce`: verify the traces, analyse them, regenerate `figures/` and
//! `paper/`, print the claims.
//!
//! Needs no GPU. The campaign is `--campaign NAME` or the one `artifact.yaml` ships
//! (`shipped_campaign`); its traces are `data/<name>/` (or the campaign's `out`). A trace
//! that differs from its `SHA256SUMS` stops everything with an error naming the files.
//! `--check` regenerates in memory and fails if the files under the project differ.
//! `--json` prints one JSON document to stdout instead of the claims table
//! (`colloc_report::json::ReproduceDocument`, `schemas/reproduce.schema.json`); the notes
//! and the timing go to stderr.

use anyhow::Result;
use colloc_reproduce::Request;
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// Print this claim's evidence (C1…C9) from the analysed traces: the runs, the values
    /// its queries used and the rule of its grade, per data source. Writes nothing.
    #[arg(long, conflicts_with_all = ["run", "check", "out"])]
    pub claim: Option<String>,
    /// Print one JSON document to stdout instead of the claims table
    /// (schemas/reproduce.schema.json): the run counts, the outputs and every claim's grades
    /// and checks. The notes and the timing go to stderr; the exit status is unchanged.
    #[arg(long, conflicts_with_all = ["run", "claim"])]
    pub json: bool,
}

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root()?;
    if a.run {
        // First what the campaign lacks, on this machine's GPU (runs already made are kept).
        let name = match &a.campaign {
            Some(c) => c.clone(),
            None => colloc_spec::load_project(&root)?.artifact.shipped_campaign.value,
        };
        let code = crate::run::main(crate::run::Args::for_campaign(&name))?;
        if code != ExitCode::SUCCESS {
            eprintln!("the run of campaign {name} did not complete; nothing was reproduced");
            return Ok(code);
        }
    }
    if let Some(id) = &a.claim {
        let req = Request { campaign: a.campaign.as_deref(), traces: a.traces.as_deref(), check: true, out: None };
        let o = colloc_reproduce::reproduce(&root, &req)?;
        print!("{}", colloc_reproduce::evidence::render(&o.evidence(), id)?);
        return Ok(ExitCode::SUCCESS);
    }
    let req =
        Request { campaign: a.campaign.as_deref(), traces: a.traces.as_deref(), check: a.check, out: a.out.as_deref() };
    let o = colloc_reproduce::reproduce(&root, &req)?;
    // With --json, stdout holds the document alone and the human lines go to stderr.
    let say = |line: String| if a.json { eprintln!("{line}") } else { println!("{line}") };
    if a.json {
        let outputs = colloc_report::json::OutputCounts {
            check: a.check,
            root: o.out_root.display().to_string(),
            files: o.outputs,
            changed: o.changes.len(),
            changes: o.changes.clone(),
        };
        let doc = colloc_report::json::reproduce_document(&o.campaign, &o.results, &o.claims, outputs);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", colloc_report::claims_console(&o.claims));
    }
    if let Some(note) = &o.incomplete {
        say(format!("note: incomplete campaign: {note}; the verdicts cover the runs made so far"));
    }
    say(o.timing.clone());
    if a.check {
        if o.changes.is_empty() {
            say(format!("outputs are up to date with campaign {}", o.campaign));
            Ok(ExitCode::SUCCESS)
        } else {
            eprintln!("outputs are stale (run `cargo xtask reproduce` and commit the result):");
            for c in &o.changes {
                eprintln!("  {c}");
            }
            Ok(ExitCode::FAILURE)
        }
    } else {
        say(format!("{} of {} output files rewritten under {}", o.changes.len(), o.outputs, o.out_root.display()));
        Ok(ExitCode::SUCCESS)
    }
}
