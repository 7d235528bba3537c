//! Every output file in memory ([`outputs`]), written under a root ([`write`]) or compared
//! with what is there ([`stale`]).

use anyhow::{Context, Result};
use colloc_analysis::{ClaimOutcome, Results};
use colloc_spec::gpu::GpuTable;

use crate::{claims, figures, html, tables};
use std::path::Path;

/// What the report is made from.
pub struct Inputs<'a> {
    pub results: &'a Results,
    pub claims: &'a [ClaimOutcome],
    /// Known GPU tables, among them, when known, the traces' GPU's.
    pub gpus: &'a [GpuTable],
    /// The GPU the paper measured on (artifact.yaml: `paper.gpu`), when
    /// its table is known.
    pub paper_gpu: Option<&'a GpuTable>,
    /// Another campaign's results whose protocol validation (the same workloads under a
    /// window protocol and under whole epochs) goes beside these outputs, as its table, its
    /// figure and their place in the report; ignored when `results` has one of its own.
    pub validation: Option<&'a Results>,
}

/// Where outputs go, relative to the project root (`artifact.yaml` → `outputs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub tables: String,
    pub figures: String,
    pub claims: String,
    pub report: String,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            tables: "paper/tables".into(),
            figures: "figures".into(),
            claims: "paper/claims.md".into(),
            report: "paper/report.html".into(),
        }
    }
}

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Relative to the project root, with `/`.
    pub path: String,
    pub bytes: Vec<u8>,
}

/// Every table, in report order; the protocol validation only for a campaign with the same
/// workloads under a window protocol and under whole epochs.
fn all_tables(inputs: &Inputs) -> Vec<tables::Table> {
    let r = inputs.results;
    let mut all = vec![
        tables::campaign::hardware(r),
        tables::campaign::hosts(r),
        tables::campaign::mig_profiles(r, inputs.paper_gpu, inputs.gpus),
        tables::campaign::experiment_matrix(r),
        tables::results::baselines(r),
        tables::results::homogeneous(r),
        tables::results::mixes(r),
        tables::results::interference(r),
        tables::results::utilisation(r),
    ];
    all.extend(tables::protocols::validation(r));
    all.extend(validation(inputs).and_then(tables::protocols::validation));
    all
}

/// [`Inputs::validation`] when it is used: `results` has no protocol validation of its own.
fn validation<'a>(inputs: &Inputs<'a>) -> Option<&'a Results> {
    inputs.validation.filter(|v| inputs.results.protocol_validation.is_empty() && !v.protocol_validation.is_empty())
}

/// Every output file, sorted by path.
pub fn outputs(inputs: &Inputs, layout: &Layout) -> Result<Vec<Output>> {
    let r = inputs.results;
    let mut out = Vec::new();
    let mut push = |path: String, bytes: Vec<u8>| out.push(Output { path, bytes });

    let tables = all_tables(inputs);
    let claims_table = claims::table(r, inputs.claims, inputs.paper_gpu);
    for t in tables.iter().chain(std::iter::once(&claims_table)) {
        for (name, text) in tables::render(t) {
            push(format!("{}/{name}", layout.tables), text.into_bytes());
        }
    }
    let mut svgs = Vec::new();
    let own = figures::for_results(r).into_iter().map(|f| (f, r));
    let other = validation(inputs).map(|v| (figures::Figure::ProtocolValidation, v));
    for (f, from) in own.chain(other) {
        let svg = f.svg(from).with_context(|| format!("figure {}", f.id()))?;
        let png = png_bytes(f, from).with_context(|| format!("figure {}", f.id()))?;
        push(format!("{}/{}.svg", layout.figures, f.id()), svg.clone().into_bytes());
        push(format!("{}/{}.png", layout.figures, f.id()), png);
        svgs.push((f, svg));
    }
    push(layout.claims.clone(), claims::markdown(r, inputs.claims).into_bytes());
    push(
        layout.report.clone(),
        html::report(r, &svgs, &tables, &claims_table, inputs.claims, &layout.claims).into_bytes(),
    );
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn png_bytes(f: figures::Figure, r: &Results) -> Result<Vec<u8>> {
    let (w, h, rgb) = f.rgb(r)?;
    figures::encode_png(w, h, &rgb)
}

/// Files in generated directories that this renderer produces (by extension).
fn generated_kind(path: &str) -> bool {
    [".svg", ".png", ".tex", ".csv", ".md"].iter().any(|e| path.ends_with(e))
}

/// Generated files present under `root` in the output directories but no longer produced.
fn leftovers(root: &Path, outputs: &[Output], layout: &Layout) -> Result<Vec<String>> {
    let mut extra = Vec::new();
    for dir in [&layout.figures, &layout.tables] {
        let full = root.join(dir);
        if !full.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&full).with_context(|| format!("{}: cannot list", full.display()))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = format!("{dir}/{name}");
            if entry.file_type()?.is_file() && generated_kind(&name) && !outputs.iter().any(|o| o.path == rel) {
                extra.push(rel);
            }
        }
    }
    extra.sort();
    Ok(extra)
}

/// Writes the outputs under `root` (only files whose bytes change are rewritten) and
/// removes generated files that are no longer produced. Returns the paths written.
pub fn write(root: &Path, outputs: &[Output], layout: &Layout) -> Result<Vec<String>> {
    let mut written = Vec::new();
    for o in outputs {
        let path = root.join(&o.path);
        if std::fs::read(&path).map(|b| b == o.bytes).unwrap_or(false) {
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
        }
        std::fs::write(&path, &o.bytes).with_context(|| format!("{}: cannot write", path.display()))?;
        written.push(o.path.clone());
    }
    for rel in leftovers(root, outputs, layout)? {
        std::fs::remove_file(root.join(&rel)).with_context(|| format!("{rel}: cannot remove"))?;
        written.push(format!("{rel} (removed)"));
    }
    Ok(written)
}

/// How the files under `root` differ from `outputs`: `path: missing`, `path: differs`,
/// `path: no longer generated`. Empty when everything is up to date.
pub fn stale(root: &Path, outputs: &[Output], layout: &Layout) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for o in outputs {
        match std::fs::read(root.join(&o.path)) {
            Ok(b) if b == o.bytes => {}
            Ok(_) => problems.push(format!("{}: differs from what the traces give", o.path)),
            Err(_) => problems.push(format!("{}: missing", o.path)),
        }
    }
    for rel in leftovers(root, outputs, layout)? {
        problems.push(format!("{rel}: no longer generated"));
    }
    Ok(problems)
}
