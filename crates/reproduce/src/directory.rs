//! A directory of traces, from anywhere (a reviewer's re-run, a generated campaign),
//! verified and analysed as `reproduce` does: against the plan of the campaign its runs'
//! `meta.json` name when that campaign is one of this project's.

use anyhow::{bail, Context, Result};
use colloc_analysis::{ClaimOutcome, Results};
use colloc_plan::Plan;
use colloc_spec::Project;
use std::path::{Path, PathBuf};

/// One directory analysed: its plan (when its campaign is the project's), results and grades.
pub struct Analysed {
    pub campaign: Option<String>,
    pub plan: Option<Plan>,
    pub results: Results,
    pub claims: Vec<ClaimOutcome>,
}

/// Verifies and analyses the campaign directory `dir` and grades the claims on it; `label`
/// names it in every error (`base`, `new`).
pub fn analyse_directory(project: &Project, label: &str, dir: &Path) -> Result<Analysed> {
    let what = format!("{label} campaign directory {}", dir.display());
    if !dir.is_dir() {
        bail!("{what}: not a directory");
    }
    let campaign = campaign_of(dir).with_context(|| what.clone())?;
    let artifact = &project.artifact;
    // A campaign of this project is analysed against its plan; one that cannot be planned is
    // an error of the project, said, not dropped.
    let plan = campaign
        .as_deref()
        .filter(|n| artifact.campaigns.iter().any(|c| c.name.value == *n))
        .map(|n| {
            colloc_plan::plan_project_campaign(project, n, None)
                .map_err(|e| anyhow::anyhow!("{what}: campaign {n} of artifact.yaml cannot be planned: {e}"))
        })
        .transpose()?;
    let results = colloc_analysis::analyse(dir, plan.as_ref()).with_context(|| what.clone())?;
    let claims = colloc_analysis::evaluate(&results, &artifact.claims).with_context(|| what.clone())?;
    Ok(Analysed { campaign, plan, results, claims })
}

/// The campaign named in the first run's `meta.json` (`None` without runs).
pub fn campaign_of(dir: &Path) -> Result<Option<String>> {
    let runs = dir.join(colloc_trace::layout::RUNS_DIR);
    if !runs.is_dir() {
        return Ok(None);
    }
    let mut names: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(&runs).with_context(|| format!("reading {}", runs.display()))? {
        let meta = e.with_context(|| format!("reading {}", runs.display()))?.path().join(colloc_trace::layout::META);
        if meta.is_file() {
            names.push(meta);
        }
    }
    names.sort();
    let Some(meta) = names.first() else { return Ok(None) };
    let text = colloc_trace::limits::read_file_text(meta, colloc_trace::limits::MAX_META_BYTES)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", meta.display()))?;
    let meta = colloc_trace::meta::read(&text).map_err(|e| anyhow::anyhow!("{}: {e}", meta.display()))?;
    Ok(Some(meta.campaign))
}
