//! `cargo xtask export`: a campaign's results as tidy frames (CSV files and their
//! `SCHEMA.md`) that polars, pandas and DuckDB load directly; `colloc_reproduce::export`
//! makes them, this parses the arguments and prints what it wrote.

use anyhow::Result;
use colloc_reproduce::export::{self, Request};
use std::path::PathBuf;
use std::process::ExitCode;

/// The file format of the frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// RFC 4180 CSV, one file per frame.
    Csv,
}

#[derive(clap::Args)]
#[command(after_help = "Parquet is not offered: polars' `parquet` feature would add 124 crates to a cold build \
    (its streaming engine, an HTTP and TLS stack, C compression libraries; their non-polars part alone took 90 s \
    on 2 cores). Convert in Python: `pl.read_csv(\"workloads.csv\").write_parquet(\"workloads.parquet\")`.")]
pub struct Args {
    /// Campaign to export (default: artifact.yaml's `shipped_campaign`).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Read the campaign's traces from this directory (default: the campaign's `out` in
    /// artifact.yaml, or data/<campaign>).
    #[arg(long)]
    pub traces: Option<PathBuf>,
    /// The file format: csv only (see below for parquet).
    #[arg(long, value_enum, default_value = "csv")]
    pub format: Format,
    /// Write the files under this folder (default: target/export/<campaign>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root()?;
    let Format::Csv = a.format;
    let req = Request { campaign: a.campaign.as_deref(), traces: a.traces.as_deref(), out: a.out.as_deref() };
    let e = export::export(&root, &req)?;
    println!("campaign {}: {} frames under {}", e.campaign, e.frames.len(), e.out.display());
    for f in &e.frames {
        println!("  {:<20} {:>6} rows  {:>3} columns", format!("{}.csv", f.name), f.rows.len(), f.columns.len());
    }
    println!("  {} (one line per column: type, unit, meaning)", export::SCHEMA_FILE);
    Ok(ExitCode::SUCCESS)
}
