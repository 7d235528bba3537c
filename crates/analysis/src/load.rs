//! Reading the run directories of a verified campaign into typed records.

use anyhow::{Context, Result};
use colloc_plan::PlannedWorkload;
use colloc_trace::events::{parse_log, Event};
use colloc_trace::layout;
use colloc_trace::meta::RunMeta;
use polars::prelude::DataFrame;
use std::fs;
use std::path::{Path, PathBuf};

use crate::frames;

/// One run directory, read.
pub(crate) struct RunData {
    /// `runs/<run-id>`, for messages.
    pub rel: String,
    pub meta: RunMeta,
    pub workload: PlannedWorkload,
    /// Events per job index; empty for a job that wrote none.
    pub events: Vec<Vec<Event>>,
    pub telemetry: Option<DataFrame>,
    pub processes: Option<DataFrame>,
}

/// The run directories under `campaign/runs/`, sorted by name.
pub(crate) fn run_dirs(campaign: &Path) -> Result<Vec<PathBuf>> {
    let runs = campaign.join(layout::RUNS_DIR);
    if !runs.is_dir() {
        return Ok(Vec::new());
    }
    let mut dirs = Vec::new();
    for entry in fs::read_dir(&runs).with_context(|| format!("{}: cannot list", runs.display()))? {
        let entry = entry.with_context(|| format!("{}: cannot list", runs.display()))?;
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false)
            && !entry.file_name().to_string_lossy().starts_with('.')
        {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

pub(crate) fn read_run(dir: &Path) -> Result<RunData> {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let rel = format!("{}/{name}", layout::RUNS_DIR);
    let meta_path = dir.join(layout::META);
    let text = fs::read_to_string(&meta_path).with_context(|| format!("{rel}/{}: cannot read", layout::META))?;
    let meta: RunMeta =
        serde_json::from_str(&text).with_context(|| format!("{rel}/{}: not a run's meta.json", layout::META))?;
    let workload: PlannedWorkload = serde_json::from_value(meta.workload.clone())
        .with_context(|| format!("{rel}/{}: `workload` is not a planned workload", layout::META))?;
    anyhow::ensure!(!workload.jobs.is_empty(), "{rel}/{}: workload {} has no jobs", layout::META, workload.id);
    anyhow::ensure!(
        meta.workload_id == workload.id,
        "{rel}/{}: workload_id {} differs from the embedded workload's id {}",
        layout::META,
        meta.workload_id,
        workload.id
    );

    let mut events = Vec::with_capacity(workload.jobs.len());
    for i in 0..workload.jobs.len() {
        let file = layout::job_events(i);
        let path = dir.join(&file);
        if !path.exists() {
            events.push(Vec::new());
            continue;
        }
        let text = fs::read_to_string(&path).with_context(|| format!("{rel}/{file}: cannot read"))?;
        let parsed = parse_log(&text).map_err(|e| anyhow::anyhow!("{rel}/{file}: {e}"))?;
        events.push(parsed);
    }

    let telemetry = read_optional_csv(dir, &rel, layout::TELEMETRY, frames::TELEMETRY_NUMERIC)?;
    let processes = read_optional_csv(dir, &rel, layout::PROCESSES, frames::PROCESS_NUMERIC)?;
    Ok(RunData { rel, meta, workload, events, telemetry, processes })
}

fn read_optional_csv(dir: &Path, rel: &str, file: &str, numeric: &[&str]) -> Result<Option<DataFrame>> {
    let path = dir.join(file);
    if !path.exists() {
        return Ok(None);
    }
    frames::read_gz_csv(&path, numeric).with_context(|| format!("{rel}/{file}")).map(Some)
}
