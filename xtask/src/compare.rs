//! `cargo xtask compare BASE NEW`: a re-run of (a subset of) a campaign against another,
//! e.g. a reviewer's traces against the shipped `data/h200`.
//!
//! Both directories are verified against their `SHA256SUMS` and analysed as `reproduce`
//! does (with the plan of the campaign their runs' `meta.json` name, when it can be
//! planned); `colloc_report::compare` makes the verdicts: per workload STP's difference split
//! into the aggregate throughput's and the baseline's, each against a tolerance from the two
//! campaigns' 95 % intervals. Writes `compare.md`, `compare.csv` and the figure
//! `compare.svg` / `compare.png` (new ratio against base ratio, y = x, the tolerance floors,
//! each campaign's 95 % interval as error bars) under `--out` (default `target/compare/`)
//! and prints a summary with both campaigns' baselines per host.
//!
//! `--json` prints one JSON document to stdout instead (`colloc_report::compare::Document`,
//! `schemas/compare.schema.json`); the line naming the files written goes to stderr.
//!
//! Exit status: 0 when every workload measured in both `agrees` or `agrees, the host
//! differs` (the collocated jobs ran alike; only the host's runs alone differ), 1 when one
//! `differs`, 2 on an error (a directory unreadable or failing verification, named in the
//! message).

use anyhow::{Context, Result};
use colloc_report::compare::Comparison;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The campaign directory compared against (e.g. data/h200).
    pub base: PathBuf,
    /// The campaign directory compared (e.g. a reviewer's re-run).
    pub new: PathBuf,
    /// Where to write compare.md, compare.csv, compare.svg and compare.png (default: target/compare/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one JSON document to stdout instead of the summary (schemas/compare.schema.json):
    /// per workload the verdict, STP of both with their intervals, the difference, the
    /// tolerance and the factors; per claim the grades in both; the totals.
    #[arg(long)]
    pub json: bool,
}

pub fn main(a: Args) -> Result<ExitCode> {
    match crate::project_root().and_then(|root| run(&root, &a)) {
        Ok(c) => Ok(if c.differs() { ExitCode::FAILURE } else { ExitCode::SUCCESS }),
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(ExitCode::from(2))
        }
    }
}

/// Compares with the project at `root`, writes the outputs, prints the summary (with
/// `--json`, the document).
pub fn run(root: &Path, a: &Args) -> Result<Comparison> {
    let (c, out, written) = compare_and_write(root, a)?;
    if a.json {
        let files = written.iter().map(|p| p.display().to_string()).collect();
        println!("{}", serde_json::to_string_pretty(&c.document(files))?);
        eprintln!("wrote compare.md, compare.csv, compare.svg and compare.png under {}", out.display());
    } else {
        print!("{}", c.console());
        println!("wrote compare.md, compare.csv, compare.svg and compare.png under {}", out.display());
    }
    Ok(c)
}

/// Compares, and writes the outputs under `--out`: the comparison, that folder and the files.
fn compare_and_write(root: &Path, a: &Args) -> Result<(Comparison, PathBuf, Vec<PathBuf>)> {
    let project = colloc_spec::load_project(root)?;
    let c = colloc_reproduce::compare_directories(&project, &a.base, &a.new)?;
    let out = a.out.clone().unwrap_or_else(|| root.join("target/compare"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let files = colloc_reproduce::comparison_files(&c)?;
    let mut written = Vec::new();
    for (name, bytes) in &files {
        let p = out.join(name);
        std::fs::write(&p, bytes).with_context(|| format!("writing {}", p.display()))?;
        written.push(p);
    }
    Ok((c, out, written))
}
