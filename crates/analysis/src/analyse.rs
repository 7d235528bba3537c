//! Verifying a campaign's traces, then analysing its runs into [`Results`].

use anyhow::{Context, Result};
use colloc_plan::PlannedWorkload;
use colloc_trace::manifest::{self, Problem};

use crate::model::{Results, Timeline, WorkloadResult};
use crate::{aggregate, load, per_run, provenance};

use std::collections::BTreeMap;
use std::path::Path;

/// The campaign differs from its manifest; nothing was analysed.
#[derive(Debug)]
struct VerificationFailed {
    campaign: String,
    problems: Vec<Problem>,
}

impl std::fmt::Display for VerificationFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "campaign {} does not match its {}:", self.campaign, colloc_trace::layout::MANIFEST)?;
        for p in &self.problems {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerificationFailed {}

/// Verifies `campaign_dir` against its manifest: a missing manifest, or any file missing,
/// extra, truncated or altered, is an error naming the files.
fn verify(campaign_dir: &Path) -> Result<()> {
    let name = campaign_name(campaign_dir);
    let manifest_path = campaign_dir.join(colloc_trace::layout::MANIFEST);
    if !manifest_path.is_file() {
        anyhow::bail!("campaign {name}: no {} in {}", colloc_trace::layout::MANIFEST, campaign_dir.display());
    }
    let problems = manifest::verify(campaign_dir).with_context(|| format!("campaign {name}: cannot verify"))?;
    if !problems.is_empty() {
        return Err(VerificationFailed { campaign: name, problems }.into());
    }
    Ok(())
}

/// Verifies, then analyses, the campaign in `campaign_dir` (`data/<campaign>/`).
pub fn analyse(campaign_dir: &Path) -> Result<Results> {
    verify(campaign_dir)?;
    let campaign = campaign_name(campaign_dir);

    let mut runs = Vec::new();
    for dir in load::run_dirs(campaign_dir)? {
        runs.push(load::read_run(&dir)?);
    }
    let provenance = provenance::provenance(campaign_dir, &campaign, &runs)
        .with_context(|| format!("campaign {campaign}: reading {}", colloc_trace::layout::MANIFEST))?;

    // The planned workloads, as the runs embed them.
    let mut workloads: BTreeMap<String, PlannedWorkload> = BTreeMap::new();
    for r in &runs {
        workloads.entry(r.workload.id.clone()).or_insert_with(|| r.workload.clone());
    }

    // A later attempt of the same repetition replaces the earlier ones.
    let mut latest: BTreeMap<(String, u32), u32> = BTreeMap::new();
    for r in &runs {
        let e = latest.entry((r.meta.workload_id.clone(), r.meta.repetition)).or_insert(r.meta.attempt);
        *e = (*e).max(r.meta.attempt);
    }

    let mut results = Vec::with_capacity(runs.len());
    let mut timelines = Vec::new();
    for r in &runs {
        let headline = aggregate::is_headline(&r.workload);
        let a = per_run::analyse_run(r, headline)?;
        let mut result = a.result;
        result.superseded = latest.get(&(r.meta.workload_id.clone(), r.meta.repetition)) != Some(&r.meta.attempt);
        if let (Some(points), false) = (a.timeline, result.superseded) {
            timelines.push((r.workload.clone(), result.run_id.clone(), result.repetition, points));
        }
        results.push(result);
    }
    results.sort_by(|a, b| a.run_id.cmp(&b.run_id));

    let baselines = aggregate::baselines(&results, &workloads)?;
    aggregate::apply_baselines(&mut results, &workloads, &baselines);
    let workload_results = aggregate::workload_results(&results, &workloads)?;
    let comparisons = aggregate::comparisons(&workload_results);

    // One timeline per headline workload: its lowest repetition.
    timelines.sort_by(|a, b| (&a.0.id, a.2, &a.1).cmp(&(&b.0.id, b.2, &b.1)));
    timelines.dedup_by(|b, a| a.0.id == b.0.id);
    let timelines = timelines
        .into_iter()
        .map(|(w, run_id, _, points)| Timeline {
            layout: aggregate::layout(&w),
            workload_id: w.id,
            run_id,
            label: w.label,
            mode: w.mode,
            data: w.data,
            points,
        })
        .collect();

    let primary_data = primary_data(&workload_results);
    Ok(Results {
        simulated: provenance.simulated,
        campaign,
        provenance,
        primary_data,
        runs: results,
        workloads: workload_results,
        baselines,
        comparisons,
        timelines,
        pending: Vec::new(),
    })
}

/// The data source most workloads used (ties: alphabetical).
fn primary_data(workloads: &[WorkloadResult]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for w in workloads {
        *counts.entry(w.data.as_str()).or_default() += 1;
    }
    counts
        .iter()
        .fold(None::<(&str, usize)>, |acc, (d, n)| match acc {
            Some((_, best)) if best >= *n => acc,
            _ => Some((d, *n)),
        })
        .map(|(d, _)| d.to_string())
        .unwrap_or_else(|| "synthetic".to_string())
}

fn campaign_name(dir: &Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| dir.display().to_string())
}
