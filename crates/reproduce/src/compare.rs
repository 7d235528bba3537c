//! Two campaign directories compared (`cargo xtask compare BASE NEW`): both verified and
//! analysed as [`crate::analyse_directory`] does, the verdicts of `colloc_report::compare`,
//! and the files that say them.

use anyhow::{Context, Result};
use colloc_report::compare::{compare, Comparison, Side};
use colloc_spec::Project;
use std::path::Path;

/// The comparison of the campaign directory `new` against `base`.
pub fn compare_directories(project: &Project, base: &Path, new: &Path) -> Result<Comparison> {
    let b = crate::analyse_directory(project, "base", base)?;
    let n = crate::analyse_directory(project, "new", new)?;
    let (bl, nl) = (base.display().to_string(), new.display().to_string());
    Ok(compare(
        &Side { label: &bl, results: &b.results, claims: &b.claims },
        &Side { label: &nl, results: &n.results, claims: &n.claims },
    ))
}

/// The files of a comparison, by name: `compare.md`, `compare.csv`, `compare.svg` and `compare.png`.
pub fn comparison_files(c: &Comparison) -> Result<[(&'static str, Vec<u8>); 4]> {
    Ok([
        ("compare.md", c.markdown().into_bytes()),
        ("compare.csv", c.csv().into_bytes()),
        ("compare.svg", colloc_report::compare_svg(c).context("drawing the comparison")?.into_bytes()),
        ("compare.png", colloc_report::compare_png(c).context("drawing the comparison")?),
    ])
}
