//! Incomplete entries of a campaign's `runs/` (a run directory not listed in `SHA256SUMS`,
//! a temporary one a stopped run left) moved to `quarantine/<name>.<n>`, and the check that
//! every listed run still matches the manifest.

use anyhow::{anyhow, bail, Context, Result};
use colloc_trace::layout::{self, QUARANTINE_DIR, RUNS_DIR};
use colloc_trace::manifest::{self, Problem};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::progress::Progress;
use crate::summary::CampaignSummary;
use crate::trace::TMP_PREFIX;

/// Incomplete entries of `runs/` to `quarantine/`, then the check of the listed runs.
pub(crate) fn tidy(
    dir: &Path,
    listed: &BTreeSet<String>,
    summary: &mut CampaignSummary,
    progress: &Progress,
) -> Result<()> {
    summary.quarantined = quarantine(dir, listed)?;
    for (from, to) in &summary.quarantined {
        progress.log(&format!("incomplete {} moved to {}", from.display(), to.display()));
    }
    check_listed_runs(dir)
}

/// Moves incomplete entries of `runs/` to `quarantine/<name>.<n>`.
fn quarantine(dir: &Path, listed: &BTreeSet<String>) -> Result<Vec<(PathBuf, PathBuf)>> {
    let runs = dir.join(RUNS_DIR);
    let mut moved = Vec::new();
    let Ok(entries) = fs::read_dir(&runs) else { return Ok(moved) };
    let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names {
        if listed.contains(&name) {
            continue;
        }
        let base = name.strip_prefix(TMP_PREFIX).unwrap_or(&name).trim_start_matches('.').to_string();
        let to = quarantine_place(dir, &base)?;
        let from = runs.join(&name);
        fs::rename(&from, &to).with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
        moved.push((from, to));
    }
    if !moved.is_empty() {
        manifest::fsync_dir(&runs)?;
        manifest::fsync_dir(&dir.join(QUARANTINE_DIR))?;
    }
    Ok(moved)
}

/// The first free `quarantine/<base>.<n>` of a campaign (`quarantine/` made if missing).
pub(crate) fn quarantine_place(dir: &Path, base: &str) -> Result<PathBuf> {
    let qdir = dir.join(QUARANTINE_DIR);
    fs::create_dir_all(&qdir).with_context(|| format!("cannot create {}", qdir.display()))?;
    let mut n = 1;
    loop {
        let cand = qdir.join(format!("{base}.{n}"));
        if !cand.exists() {
            return Ok(cand);
        }
        n += 1;
    }
}

/// An error when a run listed in the manifest no longer matches it (listed runs are never
/// modified, so nothing may run).
fn check_listed_runs(dir: &Path) -> Result<()> {
    let problems: Vec<Problem> = manifest::verify(dir)
        .map_err(|e| anyhow!("{e}"))?
        .into_iter()
        .filter(|p| match p {
            Problem::Missing(f) | Problem::Extra(f) => f.starts_with(&format!("{RUNS_DIR}/")),
            Problem::Altered { path, .. } | Problem::Unreadable { path, .. } | Problem::NotAFile { path, .. } => {
                path.starts_with(&format!("{RUNS_DIR}/"))
            }
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    let mut text: Vec<String> = problems.iter().take(20).map(|p| format!("  {p}")).collect();
    if problems.len() > 20 {
        text.push(format!("  ... and {} more", problems.len() - 20));
    }
    bail!(
        "{} does not match its {}; runs in the manifest are never modified, so nothing was run. \
         Restore the listed files (or move the affected run out of the campaign) and run again:\n{}",
        dir.display(),
        layout::MANIFEST,
        text.join("\n")
    );
}
