//! Reading the run directories of a verified campaign into typed records.

use anyhow::{Context, Result};
use colloc_plan::PlannedWorkload;
use colloc_trace::events::{log_protocol_version, read_log_from, Event, EventBody};
use colloc_trace::manifest::OnePass;
use colloc_trace::meta::{self, RunMeta, RunStatus};
use colloc_trace::rows::{self, RowSink};
use colloc_trace::{jobfile, layout, limits, telemetry};
use std::fs;
use std::path::{Path, PathBuf};

/// One run directory, read.
pub(crate) struct RunData {
    pub meta: RunMeta,
    pub workload: PlannedWorkload,
    /// The run directory, whose samples [`read_telemetry`] and [`read_processes`] read.
    pub dir: PathBuf,
    /// Events per job index, but its `iterations`; empty for a job that wrote none.
    pub events: Vec<Vec<Event>>,
    /// Protocol 2: per job index, its iterations, from its `iterations` events.
    pub iterations: Vec<Iterations>,
}

/// One job's iterations from its `iterations` events: end times (host monotonic seconds),
/// images and data waits (host seconds), in order.
#[derive(Default)]
pub(crate) struct Iterations {
    pub ends: Vec<f64>,
    pub images: Vec<f64>,
    pub waits: Vec<f64>,
}

impl Iterations {
    fn add(&mut self, base_mono: f64, end_us: &[u64], images: &[u64], data_wait_us: &[u64]) {
        let n = end_us.len().min(images.len()).min(data_wait_us.len());
        self.ends.extend(end_us[..n].iter().map(|u| base_mono + *u as f64 * 1e-6));
        self.images.extend(images[..n].iter().map(|i| *i as f64));
        self.waits.extend(data_wait_us[..n].iter().map(|u| *u as f64 * 1e-6));
    }
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

/// Reads one run directory, refusing content the runner does not write: each error names
/// the file (`runs/<run-id>/<file>`), and the line or row where there is one. Every file is
/// read within its cap ([`limits`]): `meta.json` and the job files whole up to theirs, the
/// event logs a line at a time, the samples ([`read_telemetry`]) a row at a time; and through
/// `pass`, which hashes its bytes as they are read.
pub(crate) fn read_run(dir: &Path, pass: &OnePass) -> Result<RunData> {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let rel = format!("{}/{name}", layout::RUNS_DIR);
    let meta_file = format!("{rel}/{}", layout::META);
    let text = read_text(pass, &dir.join(layout::META), limits::MAX_META_BYTES)
        .map_err(|e| anyhow::anyhow!("{meta_file}: {e}"))?;
    let meta: RunMeta = meta::read(&text).map_err(|e| anyhow::anyhow!("{meta_file}: {e}"))?;
    let workload: PlannedWorkload = serde_json::from_value(meta.workload.clone())
        .with_context(|| format!("{meta_file}: `workload` is not a planned workload"))?;
    check_meta(&meta, &workload, &name).map_err(|e| anyhow::anyhow!("{meta_file}: {e}"))?;

    let mut events = Vec::with_capacity(workload.jobs.len());
    let mut iterations = Vec::with_capacity(workload.jobs.len());
    for i in 0..workload.jobs.len() {
        iterations.push(Iterations::default());
        let file = layout::job_events(i);
        let path = dir.join(&file);
        if !path.exists() {
            anyhow::ensure!(
                meta.status != RunStatus::Ok,
                "{rel}/{file}: missing, but meta.json says the run is ok (every job of an ok run writes its events)"
            );
            events.push(Vec::new());
            continue;
        }
        let batch_size = job_batch_size(dir, &rel, i, &workload, pass)?;
        let log = pass.open(&path).with_context(|| format!("{rel}/{file}: cannot read"))?;
        // The iterations, the bulk of a protocol-2 log, are kept as their times and images only.
        let its = &mut iterations[i];
        let parsed = read_log_from(log, i as u32, batch_size, |e| match &e.body {
            EventBody::Iterations { base_mono, end_us, images, data_wait_us, .. } => {
                its.add(*base_mono, end_us, images, data_wait_us);
                None
            }
            _ => Some(e),
        })
        .map_err(|e| anyhow::anyhow!("{rel}/{file}: {e}"))?;
        anyhow::ensure!(
            meta.status != RunStatus::Ok || !parsed.is_empty(),
            "{rel}/{file}: no events, but meta.json says the run is ok"
        );
        events.push(parsed);
    }
    check_versions(&meta, &events).map_err(|e| anyhow::anyhow!("{rel}: {e}"))?;
    Ok(RunData { meta, workload, events, iterations, dir: dir.to_path_buf() })
}

/// The batch size of job `i` of the run in `dir` from its job file `job-i.json` (read within
/// [`limits::MAX_JOB_FILE_BYTES`]), which must be that job's and agree with the planned
/// workload's; `None` when the run has no job file (traces made without the runner: the
/// fixtures of the tests), whose iterations are bounded by [`colloc_trace::events::MAX_IMAGES`]
/// only.
fn job_batch_size(dir: &Path, rel: &str, i: usize, workload: &PlannedWorkload, pass: &OnePass) -> Result<Option<u64>> {
    let file = layout::job_file(i);
    let path = dir.join(&file);
    if !path.exists() {
        return Ok(None);
    }
    let at = |e: String| anyhow::anyhow!("{rel}/{file}: {e}");
    let text = read_text(pass, &path, limits::MAX_JOB_FILE_BYTES).map_err(at)?;
    let job = jobfile::read(&text).map_err(|e| at(format!("line {}: {e}", serde_line(&e))))?;
    // The line of a field: where its key first appears.
    let line_of = |key: &str| text.find(&format!("\"{key}\"")).map_or(1, |n| text[..n].matches('\n').count() + 1);
    if job.job as usize != i {
        return Err(at(format!("line {}: `job` is {}, but this is the file of job {i}", line_of("job"), job.job)));
    }
    if let Some(planned) = workload.jobs.get(i).map(|j| j.batch_size).filter(|b| *b != job.batch_size) {
        return Err(at(format!(
            "line {}: `batch_size` is {}, but the planned workload's job {i} (`workload.jobs[{i}]` in meta.json) has {planned}",
            line_of("batch_size"),
            job.batch_size
        )));
    }
    Ok(Some(u64::from(job.batch_size)))
}

/// The line a `serde_json` error message names (`… at line N column M`), else 1.
fn serde_line(e: &str) -> usize {
    e.rsplit_once(" at line ").and_then(|(_, r)| r.split(' ').next()?.parse().ok()).unwrap_or(1)
}

/// Reads the `telemetry.csv.gz` of the run in `dir` into `sink`, refusing what the runner
/// does not write ([`rows::read_gz_rows`]); `false` when the run has none.
pub(crate) fn read_telemetry(dir: &Path, pass: &OnePass, sink: &mut impl RowSink) -> Result<bool> {
    read_samples(dir, layout::TELEMETRY, telemetry::GPU_NUMERIC, None, pass, sink)
}

/// Reads the run's `processes.csv.gz` into `sink`, as [`read_telemetry`] does, its `job`
/// column below the workload's jobs; `false` when the run has none.
pub(crate) fn read_processes(run: &RunData, pass: &OnePass, sink: &mut impl RowSink) -> Result<bool> {
    read_samples(&run.dir, layout::PROCESSES, telemetry::PROCESS_NUMERIC, Some(run.workload.jobs.len()), pass, sink)
}

/// What `meta.json` must say beyond what [`meta::read`] checks of it alone: what the run
/// is (its workload's id, the directory's name) and its jobs (one record per planned job,
/// or none when nothing ran).
fn check_meta(meta: &RunMeta, workload: &PlannedWorkload, dir_name: &str) -> Result<(), String> {
    if workload.jobs.is_empty() {
        return Err(format!("workload {} has no jobs", workload.id));
    }
    if meta.workload_id != workload.id {
        return Err(format!(
            "workload_id {} differs from the embedded workload's id {}",
            meta.workload_id, workload.id
        ));
    }
    if meta.run_id != dir_name {
        return Err(format!("run_id {} differs from the directory's name {dir_name}", meta.run_id));
    }
    let (planned, recorded) = (workload.jobs.len(), meta.jobs.len());
    if recorded != planned && (recorded != 0 || meta.status == RunStatus::Ok) {
        return Err(format!(
            "`jobs` has {recorded} records, but the planned workload (`workload.jobs`) has {planned} jobs"
        ));
    }
    Ok(())
}

/// The jobs of a run speak one protocol version; an ok run of version 2 under a window
/// protocol has its common window's end in `meta.json` (whole epochs have no window).
fn check_versions(meta: &RunMeta, events: &[Vec<Event>]) -> Result<(), String> {
    let versions: Vec<(usize, u32)> =
        events.iter().enumerate().filter(|(_, e)| !e.is_empty()).map(|(i, e)| (i, log_protocol_version(e))).collect();
    if let Some(((i, a), (j, b))) = versions.first().zip(versions.iter().find(|(_, v)| *v != versions[0].1)) {
        return Err(format!(
            "{} declares protocol version {a}, {} version {b}: the jobs of a run speak one version",
            layout::job_events(*i),
            layout::job_events(*j)
        ));
    }
    let v2 = versions.first().is_some_and(|(_, v)| *v >= 2);
    if meta.status == RunStatus::Ok && v2 && meta.window_end_mono.is_none() && !meta.whole_epochs() {
        return Err(format!(
            "{}: status ok without a `window_end_mono`, but the jobs speak protocol version 2 (its runner ends the common window there)",
            layout::META
        ));
    }
    Ok(())
}

fn read_samples(
    dir: &Path,
    file: &str,
    numeric: &[&str],
    jobs: Option<usize>,
    pass: &OnePass,
    sink: &mut impl RowSink,
) -> Result<bool> {
    let path = dir.join(file);
    if !path.exists() {
        return Ok(false);
    }
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let what = || format!("{}/{name}/{file}", layout::RUNS_DIR);
    let gz = pass.open(&path).context("cannot open").with_context(what)?;
    rows::read_gz_rows(gz, numeric, jobs, sink).map_err(anyhow::Error::msg).with_context(what)?;
    Ok(true)
}

/// The file at `path` as text, read through `pass` within `cap` ([`limits::read_text`]).
fn read_text(pass: &OnePass, path: &Path, cap: u64) -> Result<String, String> {
    let f = pass.open(path).map_err(|e| format!("cannot read: {e}"))?;
    let size = f.size().unwrap_or(0);
    limits::read_sized_text(f, size, cap)
}
