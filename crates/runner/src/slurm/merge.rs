//! Tasks that ended, merged by the submitter alone: a staged run that verifies and holds a
//! complete run of the campaign's GPU model moves into `runs/` and `SHA256SUMS`; any other
//! stage moves to `quarantine/slurm-<run id>.<n>` and its run counts as lost.

use anyhow::{anyhow, bail, Context, Result};
use colloc_trace::layout::{self, RUNS_DIR};
use colloc_trace::manifest;
use colloc_trace::meta::RunMeta;
use std::fs;
use std::path::{Path, PathBuf};

use super::records::{stage_dir, ExitRecord, EXIT_RECORD, SLURM_DIR};
use super::InFlight;
use crate::prepare::quarantine_place;
use crate::progress::Progress;
use crate::summary::{CampaignSummary, RunOutcome};

/// Stages of tasks that ended and are not in the queue: merged or quarantined.
pub(super) fn merge_finished(
    dir: &Path,
    summary: &mut CampaignSummary,
    in_flight: &InFlight,
    gpu_model: &mut Option<String>,
    progress: &Progress,
) -> Result<()> {
    let stages = dir.join(SLURM_DIR).join("stage");
    let Ok(entries) = fs::read_dir(&stages) else { return Ok(()) };
    let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for run in names.into_iter().filter(|r| !in_flight.contains_key(r)) {
        merge_one(dir, &run, summary, gpu_model, progress)?;
    }
    Ok(())
}

/// A task that ended: its run into the campaign when its stage verifies and holds it
/// complete, made on the campaign's GPU model (the first merged run sets it when the
/// campaign has none yet), else its stage into `quarantine/` and the run counted as lost.
pub(super) fn merge_one(
    dir: &Path,
    run: &str,
    summary: &mut CampaignSummary,
    gpu_model: &mut Option<String>,
    progress: &Progress,
) -> Result<()> {
    let stage = stage_dir(dir, run);
    let staged = staged_run(&stage, run).and_then(|meta| {
        let model = meta.gpu.as_ref().map(|g| g.name.clone());
        match (gpu_model.as_deref(), model.as_deref()) {
            (Some(want), Some(got)) if want != got => {
                Err(format!("it was made on {got}, but the campaign's runs are made on {want}"))
            }
            _ => Ok((meta, model)),
        }
    });
    match staged {
        Ok((meta, model)) => {
            if gpu_model.is_none() {
                *gpu_model = model;
            }
            let outcome = merge_staged(dir, run, &stage, meta)?;
            let what = match &outcome.reason {
                Some(r) => format!("{}: {r}", outcome.status.as_str()),
                None => outcome.status.as_str().to_string(),
            };
            progress.log(&format!("{run}: {what} (merged from its Slurm task)"));
            summary.runs.push(outcome);
        }
        Err(why) => {
            let how = how_it_ended(&stage);
            let to = quarantine_stage(dir, run, &stage)?;
            progress.log(&format!(
                "{run}: no complete run ({how}; {why}); its stage is in {}: run again to make it",
                to.display()
            ));
            summary.lost.push(run.to_string());
        }
    }
    Ok(())
}

/// Moves the complete run `run` of `stage` into the campaign's `runs/` and `SHA256SUMS`
/// (checking that every file entered as the stage's manifest lists it), then removes the
/// stage.
fn merge_staged(dir: &Path, run: &str, stage: &Path, meta: RunMeta) -> Result<RunOutcome> {
    let from = stage.join(RUNS_DIR).join(run);
    let to = dir.join(RUNS_DIR).join(run);
    if to.exists() {
        bail!("{} exists already: the staged run in {} is not merged", to.display(), stage.display());
    }
    fs::create_dir_all(dir.join(RUNS_DIR)).with_context(|| format!("cannot create {}/{RUNS_DIR}", dir.display()))?;
    fs::rename(&from, &to).with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
    manifest::fsync_dir(&dir.join(RUNS_DIR))?;
    let staged = manifest::read(stage).map_err(|e| anyhow!("{e}"))?;
    let m = manifest::add_dir(dir, &format!("{RUNS_DIR}/{run}")).map_err(|e| anyhow!("{e}"))?;
    for (rel, sum) in staged.iter() {
        if m.get(rel) != Some(sum) {
            bail!("{rel} changed while it was merged from {}", stage.display());
        }
    }
    fs::remove_dir_all(stage).with_context(|| format!("cannot remove {}", stage.display()))?;
    Ok(RunOutcome { run_id: run.to_string(), status: meta.status, reason: meta.reason })
}

/// How a task without a complete run ended, from its exit record.
fn how_it_ended(stage: &Path) -> String {
    let exit: Option<ExitRecord> =
        fs::read_to_string(stage.join(EXIT_RECORD)).ok().and_then(|t| serde_json::from_str(&t).ok());
    match &exit {
        Some(e) if e.exit_code >= 128 => format!("the task's runner stopped by signal {}", e.exit_code - 128),
        Some(e) => format!("the task's runner exited with {}", e.exit_code),
        None => "the task left the queue without an exit record (cancelled, timed out or lost)".to_string(),
    }
}

/// Moves the stage of run `run` (where there is one) to `quarantine/slurm-<run>.<n>`; returns
/// that place.
fn quarantine_stage(dir: &Path, run: &str, stage: &Path) -> Result<PathBuf> {
    let to = quarantine_place(dir, &format!("slurm-{run}"))?;
    if stage.exists() {
        fs::rename(stage, &to).with_context(|| format!("cannot move {} to {}", stage.display(), to.display()))?;
    }
    Ok(to)
}

/// The `meta.json` of the complete run `run` in a stage directory that verifies.
fn staged_run(stage: &Path, run: &str) -> Result<RunMeta, String> {
    if !stage.join(layout::MANIFEST).exists() {
        return Err("its stage has no manifest".into());
    }
    let problems = manifest::verify(stage).map_err(|e| e.to_string())?;
    if let Some(p) = problems.first() {
        return Err(format!("its stage does not verify: {p}"));
    }
    let listed = manifest::read(stage).map_err(|e| e.to_string())?;
    if !listed.keys().any(|k| k.starts_with(&format!("{RUNS_DIR}/{run}/"))) {
        return Err("its stage holds no complete run".into());
    }
    let p = stage.join(RUNS_DIR).join(run).join(layout::META);
    let text = fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}
