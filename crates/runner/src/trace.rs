//! A run's trace directory: written as `runs/.tmp-<run-id>`, every file fsynced, renamed to
//! `runs/<run-id>`, then added to the campaign's `SHA256SUMS` (by one thread at a time). Once
//! in the manifest it is never touched again.

use anyhow::{bail, Context, Result};
use colloc_trace::layout::RUNS_DIR;
use colloc_trace::manifest;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

pub(crate) const TMP_PREFIX: &str = ".tmp-";

/// One writer of `SHA256SUMS` at a time: the GPUs of a campaign finish runs at once.
static MANIFEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) struct TraceDir {
    pub campaign: PathBuf,
    pub run_id: String,
    /// The temporary directory being written.
    pub path: PathBuf,
    /// For tests: every write fails as on a full disk (the backend's
    /// [`crate::backend::Backend::disk_full`]).
    full_disk: bool,
}

impl TraceDir {
    /// Creates `runs/.tmp-<run-id>`; fails when it or `runs/<run-id>` exists.
    pub(crate) fn create(campaign: &Path, run_id: &str) -> Result<TraceDir> {
        let runs = campaign.join(RUNS_DIR);
        fs::create_dir_all(&runs).with_context(|| format!("cannot create {}", runs.display()))?;
        if runs.join(run_id).exists() {
            bail!("{} exists already: a run directory is never overwritten", runs.join(run_id).display());
        }
        let path = runs.join(format!("{TMP_PREFIX}{run_id}"));
        fs::create_dir(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(TraceDir { campaign: campaign.to_path_buf(), run_id: run_id.to_string(), path, full_disk: false })
    }

    /// For tests: with `full`, every later write fails with `ENOSPC`, as on a full disk.
    pub(crate) fn with_full_disk(mut self, full: bool) -> TraceDir {
        self.full_disk = full;
        self
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Writes a file and syncs it.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let p = self.file(name);
        let mut f = fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))?;
        if self.full_disk {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
                .with_context(|| format!("cannot write {}", p.display()));
        }
        f.write_all(bytes).and_then(|_| f.sync_all()).with_context(|| format!("cannot write {}", p.display()))
    }

    /// Writes pretty JSON with a final newline.
    pub(crate) fn write_json<T: serde::Serialize>(&self, name: &str, value: &T) -> Result<()> {
        let mut text = serde_json::to_string_pretty(value).context("serialising JSON")?;
        text.push('\n');
        self.write(name, text.as_bytes())
    }

    /// Syncs every file (including those the jobs wrote), renames the directory into place
    /// and adds it to the manifest. Returns the final path.
    pub(crate) fn finalize(self) -> Result<PathBuf> {
        for entry in fs::read_dir(&self.path).with_context(|| format!("cannot list {}", self.path.display()))? {
            let p = entry?.path();
            if p.is_file() {
                fs::File::open(&p)
                    .and_then(|f| f.sync_all())
                    .with_context(|| format!("cannot sync {}", p.display()))?;
            }
        }
        manifest::fsync_dir(&self.path)?;
        let runs = self.campaign.join(RUNS_DIR);
        let dest = runs.join(&self.run_id);
        if dest.exists() {
            bail!("{} appeared while the run was written; the trace stays in {}", dest.display(), self.path.display());
        }
        fs::rename(&self.path, &dest)
            .with_context(|| format!("cannot rename {} to {}", self.path.display(), dest.display()))?;
        manifest::fsync_dir(&runs)?;
        let _one_writer = MANIFEST.lock().unwrap_or_else(|p| p.into_inner());
        manifest::add_dir(&self.campaign, &format!("{RUNS_DIR}/{}", self.run_id))
            .with_context(|| format!("cannot add {} to {}", dest.display(), colloc_trace::layout::MANIFEST))?;
        Ok(dest)
    }
}
