//! A campaign directory made ready for runs, whichever executor makes them: one runner per
//! directory (a lock), the runs the selection asks for and those already listed in
//! `SHA256SUMS`, incomplete run directories moved to `quarantine/`, the listed runs verified (a
//! listed run is never modified, so a corrupted one stops the campaign), the versions and the
//! GPU model the listed runs were made with, and what a killed runner left on the GPU.
//!
//! * [`lock`]: the campaign's lock file.
//! * [`select`]: `--only`, the runs to make in plan order, the listed runs' `meta.json`.
//! * [`quarantine`]: incomplete entries of `runs/` to `quarantine/`, the listed runs' check.
//! * [`versions`]: the software a run was made with against this invocation's, and the
//!   Python environment against the training program's lock.
//! * [`gpu_model`]: the one GPU model a campaign is made on.
//! * [`cleanup`]: MPS daemons and MIG instances a killed runner left.

mod cleanup;
mod gpu_model;
mod lock;
mod quarantine;
mod select;
mod versions;

use anyhow::{anyhow, Context, Result};
use colloc_plan::Plan;
use colloc_trace::manifest::{self, Problem};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::options::RunOptions;
use crate::queue::Todo;
use crate::signals;
use crate::summary::CampaignSummary;

pub(crate) use cleanup::clean_leftovers;
pub(crate) use gpu_model::{campaign_gpu_model, check_gpu_model};
use lock::Lock;
pub(crate) use quarantine::{quarantine_place, tidy};
pub(crate) use select::ListedMetas;
pub(crate) use versions::{check_environment, check_versions, software};

/// Verifies a campaign directory against its `SHA256SUMS`.
pub fn verify_campaign(dir: &Path) -> Result<Vec<Problem>> {
    manifest::verify(dir).map_err(|e| anyhow!("{e}"))
}

/// A campaign directory opened for runs: locked, its manifest read, the runs to make
/// selected, and (when there are any) the listed runs' `meta.json` read once. Nothing in it
/// has moved yet: each executor calls [`tidy`] at its point.
pub(crate) struct Opened<'a> {
    /// When the invocation began to open it (the time budget counts from here).
    pub started: Instant,
    pub dir: PathBuf,
    /// Held while the campaign's runs are made.
    pub lock: Lock,
    pub campaign: String,
    /// Run directory names listed in the manifest.
    pub listed: BTreeSet<String>,
    pub summary: CampaignSummary,
    /// The selected runs still to make, in plan order.
    pub todo: Vec<Todo<'a>>,
    /// The listed runs' `meta.json`, by run directory name (read only when there is a run
    /// to make; verified by [`tidy`] before anything runs).
    pub metas: ListedMetas,
}

/// Opens `opts.out` for the selected runs of `plan` (creating it when missing).
pub(crate) fn open<'a>(plan: &'a Plan, opts: &RunOptions) -> Result<Opened<'a>> {
    let started = Instant::now();
    opts.check()?;
    fs::create_dir_all(&opts.out).with_context(|| format!("cannot create {}", opts.out.display()))?;
    let dir = opts.out.canonicalize().with_context(|| format!("cannot resolve {}", opts.out.display()))?;
    let lock = lock::lock(&dir)?;
    signals::install();
    let campaign = plan
        .campaign
        .clone()
        .unwrap_or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    let m = manifest::read(&dir).map_err(|e| anyhow!("{e}"))?;
    let listed = select::listed_runs(&m);
    select::check_only(plan, opts)?;
    let mut summary = CampaignSummary { campaign_dir: dir.clone(), ..Default::default() };
    let todo = select::select(plan, opts, &listed, &mut summary);
    let metas = if todo.is_empty() { ListedMetas::default() } else { select::listed_metas(&dir, &listed) };
    Ok(Opened { started, dir, lock, campaign, listed, summary, todo, metas })
}
