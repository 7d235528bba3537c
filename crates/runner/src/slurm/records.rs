//! The submitter's files under `.slurm/`: the submitted arrays (`submissions.jsonl`), each
//! task's stage directory and the exit record its batch script writes there.

use anyhow::{anyhow, Context, Result};
use colloc_trace::manifest;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// A task's exit record in its stage directory (a dot-file, which no manifest lists).
pub(super) const EXIT_RECORD: &str = ".task-exit.json";

/// The submitter's directory in a campaign directory.
pub(super) const SLURM_DIR: &str = ".slurm";

/// A submitted array: its job id and the run id of each array index.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Submission {
    pub job_id: String,
    pub runs: Vec<String>,
}

/// What a task's batch script writes when the runner has exited.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct ExitRecord {
    pub exit_code: i32,
}

/// A task's stage directory: a campaign of its one run.
pub(super) fn stage_dir(dir: &Path, run: &str) -> PathBuf {
    dir.join(SLURM_DIR).join("stage").join(run)
}

/// Writes `v` as pretty JSON, atomically.
pub(super) fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).context("serialising JSON")? + "\n";
    manifest::write_atomic(path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}

/// The arrays earlier invocations submitted, in order.
pub(super) fn read_submissions(sdir: &Path) -> Result<Vec<Submission>> {
    let path = sdir.join("submissions.jsonl");
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(anyhow!("cannot read {}: {e}", path.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{}:{}: not a submission record", path.display(), i + 1))
        })
        .collect()
}

/// Records a submitted array (synced before the tasks can end).
pub(super) fn append_submission(sdir: &Path, s: &Submission) -> Result<()> {
    use std::io::Write;
    let path = sdir.join("submissions.jsonl");
    let mut f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    writeln!(f, "{}", serde_json::to_string(s).context("serialising a submission")?)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}
