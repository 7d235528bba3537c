//! Renders analysis results into the paper's tables (LaTeX, CSV, Markdown), figures (SVG,
//! PNG), the claims check and a self-contained HTML report.
//!
//! [`outputs`] computes every output file in memory, sorted by path; [`write()`] puts them
//! under a root directory and removes generated files that are no longer produced;
//! [`stale`] tells which files under a root differ from what would be generated. Outputs
//! depend only on the results: no clock, no host name, fixed number formats, so rendering
//! twice gives byte-identical files. The report classifies nothing itself: mixes, their
//! order and classes, the timeline workloads and the paper's GPU come with the results and
//! the inputs.
//!
//! Modules: `outputs` (every file, written or compared), `compare` (two campaigns side by
//! side: a verdict per workload, the claims of both), `tables` (the table model and its
//! LaTeX, CSV and Markdown), `figures` (plotters drawings, SVG and PNG), `claims` (the claims
//! check), `html` (the one-page report), `legend` (what captions say of mixes and timeline
//! workloads), `order` (modes, mixes and workloads in display order), `format` (numbers and
//! words), `escape` (text from the traces made safe for Markdown, HTML, LaTeX and CSV: every
//! output passes trace strings through it), `json` (the machine-readable document of
//! `reproduce --json`; `compare::Document` is that of `compare --json`).

#![warn(unreachable_pub)]

mod claims;
pub mod compare;
pub mod escape;
mod figures;
mod format;
pub mod glossary;
mod html;
pub mod json;
mod legend;
mod order;
mod outputs;
mod tables;

pub use crate::{
    claims::{console as claims_console, summary_markdown as claims_summary},
    figures::{
        compare::{png as compare_png, svg as compare_svg},
        Figure, ALL as FIGURES,
    },
    outputs::{outputs, stale, write, Inputs, Layout, Output},
};
