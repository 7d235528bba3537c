//! The project stage: what `cargo xtask` does with a campaign of this project, above the
//! report and below the command line.
//!
//! [`reproduce`] opens a campaign (its directory and plan, from `artifact.yaml`), analyses
//! it once (with artifact.yaml's validation campaign when it is the shipped one), grades the
//! claims, and lays out every output: the report's tables, figures and claims, and the
//! artifact appendix ([`appendix`]). [`analyse_directory`] does the same analysis for any
//! directory of traces, and [`compare_directories`] sets two of them side by side; [`evidence`] prints one claim's evidence;
//! [`claim_selection`] and [`smoke_subset`] choose workloads of a plan; [`export`] writes a
//! campaign's results as tidy frames for polars, pandas and DuckDB.
//!
//! Modules: `campaign` (a campaign's directory, every campaign's plan, the paper's GPU, the
//! output layout), `compare` (two directories compared, and the files that say it), `reproduce` (the pipeline from traces to outputs), `directory` (a
//! directory of traces analysed against the plan of the campaign its runs name),
//! `runs` (a campaign's runs counted against its plan), `selection` (a claim's workloads;
//! the smoke subset), `appendix` (`paper/APPENDIX.md`),
//! `evidence` (one claim's evidence), `export` (the results as tidy CSV frames, with their
//! schema: `cargo xtask export`), `metadata` (the citation files made from
//! artifact.yaml), `words` (durations as people read them).

#![warn(unreachable_pub)]

pub mod appendix;
mod campaign;
mod compare;
mod directory;
pub mod evidence;
pub mod export;
mod metadata;
mod reproduce;
mod runs;
mod selection;
mod words;

pub use campaign::{campaign_dir, layout, paper_gpu, plans};
pub use compare::{compare_directories, comparison_files};
pub use directory::{analyse_directory, campaign_of, Analysed};
pub use metadata::metadata_files;
pub use reproduce::{report_outputs, reproduce, Outcome, Request};
pub use runs::{count_runs, RunCount};
pub use selection::{claim_selection, smoke_subset, ClaimSelection};
pub use words::duration;
