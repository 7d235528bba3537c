//! Analysing a campaign's runs into [`Results`], verifying its traces in the same pass: no
//! result is returned unless every file the analysis read has the sum its manifest lists.

use anyhow::{Context, Result};
use colloc_plan::{Plan, PlannedWorkload};
use colloc_trace::manifest::{OnePass, Problem};

use crate::model::{PendingWorkload, Results, Timeline, WorkloadResult};
use crate::parallel::par_map;
use crate::{aggregate, load, per_run, protocols, provenance};

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The campaign differs from its manifest; no result is returned.
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

/// Begins to verify `campaign_dir` against its manifest: a missing manifest, or any file
/// missing, extra or not a regular file, is an error naming the files (with those whose sums
/// differ). The sums are compared as the files are read ([`OnePass`]).
fn begin_verification(campaign_dir: &Path) -> Result<OnePass> {
    let name = campaign_name(campaign_dir);
    let manifest_path = campaign_dir.join(colloc_trace::layout::MANIFEST);
    if !manifest_path.is_file() {
        anyhow::bail!("campaign {name}: no {} in {}", colloc_trace::layout::MANIFEST, campaign_dir.display());
    }
    match OnePass::begin(campaign_dir).with_context(|| format!("campaign {name}: cannot verify"))? {
        Ok(pass) => Ok(pass),
        Err(problems) if problems.is_empty() => {
            anyhow::bail!("campaign {name}: its files changed while it was being verified")
        }
        Err(problems) => Err(VerificationFailed { campaign: name, problems }.into()),
    }
}

/// `analysed`, the outcome of reading the campaign through `pass`, once every file of the
/// campaign has the sum its manifest lists (those no reader read are hashed now); else the
/// files that differ, whatever the analysis found.
fn verified<T>(campaign_dir: &Path, pass: OnePass, analysed: Result<T>) -> Result<T> {
    let problems = pass.finish();
    if !problems.is_empty() {
        return Err(VerificationFailed { campaign: campaign_name(campaign_dir), problems }.into());
    }
    analysed
}

/// Verifies and analyses the campaign in `campaign_dir` (`data/<campaign>/`), in one pass
/// over its bytes: which files it holds is checked against its manifest before any is read,
/// each file is hashed as it is read, and no result is returned unless every file's sum is
/// the manifest's (an error naming the files that differ).
///
/// With the campaign's `plan`, each run is analysed as the plan's workload of its id (its
/// form and roles included; the copy in the run's `meta.json` when the plan has no such
/// workload or its jobs differ), and the results say which planned runs are not made yet.
pub fn analyse(campaign_dir: &Path, plan: Option<&Plan>) -> Result<Results> {
    let pass = begin_verification(campaign_dir)?;
    let analysed = analyse_read(campaign_dir, plan, &pass);
    verified(campaign_dir, pass, analysed)
}

/// [`analyse`]'s reading and measuring, every file read through `pass`.
fn analyse_read(campaign_dir: &Path, plan: Option<&Plan>, pass: &OnePass) -> Result<Results> {
    let campaign = plan.and_then(|p| p.campaign.clone()).unwrap_or_else(|| campaign_name(campaign_dir));

    // Each run is read, then measured at once, on its own: only its measured values are
    // kept (its events and samples are dropped before the next run is read), so memory
    // stays that of one run per core whatever the campaign's size. The runs are spread over
    // the cores and kept in their order (an error is that of the first run, in order, that
    // has one).
    let dirs = load::run_dirs(campaign_dir)?;
    let runs = par_map(&dirs, |dir| {
        let run_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let unreadable = || format!("campaign {campaign}: run {run_name} is unreadable, nothing was analysed");
        let mut run = load::read_run(dir, pass).with_context(unreadable)?;
        if let Some(w) = plan.and_then(|p| p.workloads.iter().find(|w| w.id == run.workload.id)) {
            if same_jobs(w, &run.workload) {
                run.workload = w.clone();
            }
        }
        // The samples are summed as they are read, over the window the meta and events give.
        let mut m = per_run::measurement(&run);
        m.has_telemetry = load::read_telemetry(dir, pass, &mut m.gpu).with_context(unreadable)?;
        m.has_processes = load::read_processes(&run, pass, &mut m.host).with_context(unreadable)?;
        let a = per_run::analyse_run(&run, m);
        Ok(Measured { meta: run.meta, workload: run.workload, analysis: a, dir: run.dir })
    })
    .into_iter()
    .collect::<Result<Vec<_>>>()?;
    let provenance = provenance::provenance(campaign_dir, &campaign, runs.iter().map(|r| &r.meta))
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

    let mut run_protocols: BTreeMap<String, protocols::RecordedProtocol> = BTreeMap::new();
    for r in &runs {
        run_protocols.entry(r.workload.id.clone()).or_insert((r.meta.protocol.name.clone(), r.meta.whole_epochs()));
    }
    let mut results = Vec::with_capacity(runs.len());
    let mut timelines = Vec::new();
    for r in runs {
        let mut result = r.analysis.result;
        result.superseded = latest.get(&(r.meta.workload_id.clone(), r.meta.repetition)) != Some(&r.meta.attempt);
        if let (true, true, false, Some(w)) =
            (r.workload.timeline, r.analysis.has_timeline, result.superseded, result.window)
        {
            timelines.push((r.workload, result.run_id.clone(), result.repetition, (r.dir, w)));
        }
        results.push(result);
    }
    results.sort_by(|a, b| a.run_id.cmp(&b.run_id));

    let baselines = aggregate::baselines(&results, &workloads)?;
    aggregate::apply_baselines(&mut results, &workloads, &baselines)?;
    let workload_results = aggregate::workload_results(&results, &workloads)?;
    let comparisons = aggregate::comparisons(&workload_results)?;
    let interference = aggregate::interference(&workload_results)?;
    let protocol_validation = protocols::validation(&workload_results, &run_protocols);

    // One timeline per workload of the timeline role: its lowest repetition, whose samples
    // are read again (only the shown timelines are ever held).
    timelines.sort_by(|a, b| (&a.0.id, a.2, &a.1).cmp(&(&b.0.id, b.2, &b.1)));
    timelines.dedup_by(|b, a| a.0.id == b.0.id);
    let timelines = timelines
        .into_iter()
        .map(|(w, run_id, _, (dir, window))| {
            let (points, bins) = per_run::timeline(&dir, pass, window)
                .with_context(|| format!("campaign {campaign}: run {run_id} is unreadable, nothing was analysed"))?;
            Ok(Timeline {
                layout: aggregate::layout(&w),
                workload_id: w.id,
                run_id,
                label: w.label,
                mode: w.mode,
                data: w.data,
                points,
                bins,
            })
        })
        .collect::<Result<Vec<_>>>()?;

    let primary_data = primary_data(&workload_results);
    let mut results = Results {
        simulated: provenance.simulated,
        campaign,
        provenance,
        primary_data,
        runs: results,
        workloads: workload_results,
        baselines,
        comparisons,
        timelines,
        interference,
        pending: Vec::new(),
        target: plan.map(|p| p.gpu.clone()),
        protocol_validation,
    };
    if let Some(plan) = plan {
        against_plan(&mut results, &plan.workloads);
    }
    Ok(results)
}

/// A run once measured: what the campaign's aggregation needs of it.
struct Measured {
    meta: colloc_trace::meta::RunMeta,
    workload: PlannedWorkload,
    analysis: per_run::RunAnalysis,
    /// The run directory, whose telemetry a timeline reads again.
    dir: std::path::PathBuf,
}

/// The plan's workload describes the jobs that ran: as many, of the same models and batches.
fn same_jobs(planned: &PlannedWorkload, ran: &PlannedWorkload) -> bool {
    planned.jobs.len() == ran.jobs.len()
        && planned.jobs.iter().zip(&ran.jobs).all(|(a, b)| (&a.model, a.batch_size) == (&b.model, b.batch_size))
}

/// Records which of the plan's runs (workload, repetition) have no run directory, and the
/// workloads without any: a campaign still being run is analysed as far as it goes, and
/// says so.
fn against_plan(results: &mut Results, plan: &[PlannedWorkload]) {
    let made: BTreeSet<(&str, u32)> = results.runs.iter().map(|r| (r.workload_id.as_str(), r.repetition)).collect();
    let mut total = 0;
    let mut missing = Vec::new();
    let mut pending = Vec::new();
    for w in plan {
        let reps = w.repetitions.max(1);
        total += reps as usize;
        let absent: Vec<u32> = (1..=reps).filter(|rep| !made.contains(&(w.id.as_str(), *rep))).collect();
        missing.extend(absent.iter().map(|rep| colloc_trace::ids::run_id(&w.id, *rep, 1)));
        if absent.len() == reps as usize && !results.workloads.iter().any(|x| x.id == w.id) {
            pending.push(PendingWorkload {
                id: w.id.clone(),
                experiment: w.experiment,
                label: w.label.clone(),
                mode: w.mode,
                layout: aggregate::layout(w),
                data: w.data.clone(),
                timeline: w.timeline,
                form: w.form.clone(),
                feasible: w.feasible,
                reason: w.reason.clone(),
                repetitions: reps,
            });
        }
    }
    missing.sort();
    pending.sort_by(|a, b| a.id.cmp(&b.id));
    let planned: BTreeSet<(&str, u32)> =
        plan.iter().flat_map(|w| (1..=w.repetitions.max(1)).map(move |rep| (w.id.as_str(), rep))).collect();
    results.provenance.attempts_again = results.runs.iter().filter(|r| r.attempt > 1).count();
    results.provenance.beyond_plan = results
        .runs
        .iter()
        .filter(|r| r.attempt <= 1 && !planned.contains(&(r.workload_id.as_str(), r.repetition)))
        .count();
    results.provenance.planned_runs = Some(total);
    results.provenance.missing_runs = missing;
    results.pending = pending;
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
