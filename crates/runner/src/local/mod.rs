//! The local executor: the campaign's runs on this host's GPU, or on several of its GPUs at
//! once (`--gpus`). Before the runs: the GPUs opened and checked to be the campaign's model,
//! what a killed runner left removed, the campaign directory tidied and its versions checked,
//! the host's CPU calibrated. Then every selected run that has no run yet, in plan order, one
//! after another on each GPU; a failed run does not stop the campaign. Each GPU has a worker
//! thread ([`worker`]) that takes the next workload's runs from a shared queue
//! ([`crate::queue`]) and measures, before them, the baselines they need on that GPU; one
//! `SHA256SUMS` takes every GPU's runs. [`shared`] holds what the workers share.

mod shared;
mod worker;

use anyhow::Result;
use colloc_plan::perf::GIB;
use colloc_plan::Plan;
use colloc_trace::manifest;
use colloc_trace::meta::{HostInfo, SoftwareInfo};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::backend::Backend;
use crate::executor::Executor;
use crate::leftovers::Leftovers;
use crate::modes::MpsDirs;
use crate::options::RunOptions;
use crate::prepare::{self, Opened};
use crate::progress::Progress;
use crate::queue::BaselineBook;
use crate::summary::CampaignSummary;
use crate::{provenance, settle};

use shared::{Shared, Stop};
use worker::Setting;

/// The runs made here, on this host's GPUs.
pub(crate) struct Local;

impl Executor for Local {
    fn check(&self, _opts: &RunOptions) -> Result<()> {
        Ok(())
    }

    fn make<'a>(&self, plan: &'a Plan, opts: &RunOptions, campaign: Opened<'a>) -> Result<CampaignSummary> {
        let Opened { started, dir, lock: _lock, campaign, listed, mut summary, todo, metas } = campaign;
        let indices = opts.gpu_indices()?;
        let several = indices.len() > 1;
        let gpus = indices.iter().map(|&i| opts.backend(i, &plan.gpu)).collect::<Result<Vec<_>>>()?;
        let exec_modes = gpus[0].executes_mode_commands();
        if !todo.is_empty() {
            let model = prepare::campaign_gpu_model(&metas.read, opts.gpu_model.as_deref())?;
            prepare::check_gpu_model(&dir, model.as_deref(), &gpus)?;
        }
        // The baselines a GPU lacks are measured just before the first run divided by them (so
        // an invocation that stops early, at its time budget, measures none it does not use); a
        // selected baseline that the plan puts later is made there instead of at its place, so
        // no run waits for a baseline that a stop could keep from being made on its host.
        let book = BaselineBook::new(&metas.read, &todo);
        let estimate: f64 = todo.iter().map(|t| t.workload.estimated_seconds).sum::<f64>() / gpus.len() as f64;
        let progress = Progress::new(opts.progress, todo.len(), estimate);

        // State left by earlier runners, then the runs already there.
        let dirs: Vec<MpsDirs> = indices.iter().map(|&i| mps_dirs(&dir, several.then_some(i))).collect();
        let leftovers = Arc::new(Leftovers::load(&dir)?);
        if exec_modes {
            prepare::clean_leftovers(&leftovers, opts, &dirs[0], &progress)?;
        }
        if opts.settle {
            settle::remove_stale(&progress);
        }
        prepare::tidy(&dir, &listed, &mut summary, &progress)?;
        let listed = Listed { dir: &dir, names: &listed, metas: &metas };
        let software = checked_software(plan, opts, &listed, !todo.is_empty(), &progress)?;
        announce(plan, &gpus, &campaign, todo.len(), summary.already_done.len(), &progress);
        let host = host_info(!todo.is_empty(), &progress);

        let shared = Shared::new(plan, todo, opts.host_baselines.then_some(book), started);
        let ours: Vec<PathBuf> = dirs.iter().map(|d| d.pipe.clone()).collect();
        let invocation = provenance::rfc3339(colloc_trace::wall_seconds());
        let setting = Setting {
            plan,
            opts,
            dir: &dir,
            campaign: &campaign,
            progress: &progress,
            leftovers: &leftovers,
            host: &host,
            software: &software,
            shared: &shared,
            invocation: &invocation,
            ours: &ours,
            exec_modes,
        };
        let results = worker::run_all(&setting, &gpus, &dirs, several);
        progress.finish();
        summarise(summary, &shared, results, several)
    }
}

/// The MPS daemon's directories of a campaign on GPU `gpu`: one daemon per GPU, each with
/// its own pipe directory. A campaign on one GPU keeps the one of a single daemon.
fn mps_dirs(dir: &Path, gpu: Option<u32>) -> MpsDirs {
    let digest = manifest::sha256_bytes(dir.to_string_lossy().as_bytes());
    let name = match gpu {
        None => format!("colloc-mps-{}", &digest[..12]),
        Some(i) => format!("colloc-mps-{}-gpu{i}", &digest[..12]),
    };
    let base = std::env::temp_dir().join(name);
    MpsDirs { pipe: base.join("pipe"), log: base.join("log") }
}

/// The runs a campaign directory lists, whose versions a new run must match.
struct Listed<'o> {
    dir: &'o Path,
    names: &'o BTreeSet<String>,
    metas: &'o prepare::ListedMetas,
}

/// This invocation's software; when it has runs to make (`to_make`), with the host's Python
/// environment checked against the training program's lock and the listed runs' versions
/// compared with it, before any GPU time is spent.
fn checked_software(
    plan: &Plan,
    opts: &RunOptions,
    listed: &Listed,
    to_make: bool,
    progress: &Progress,
) -> Result<SoftwareInfo> {
    let mut sw = prepare::software(plan, opts);
    if to_make {
        sw.environment = provenance::environment_check(&opts.job_command);
        prepare::check_environment(sw.environment.as_ref(), opts.strict_env, progress)?;
        let n = listed.names.len();
        prepare::check_versions(listed.dir, n, listed.metas, &sw, opts.allow_mixed_versions, progress)?;
    }
    Ok(sw)
}

/// Says which GPUs the runs go to (warning of one whose memory is not the plan's target's)
/// and how many runs there are to make.
fn announce(plan: &Plan, gpus: &[Box<dyn Backend>], campaign: &str, todo: usize, done: usize, progress: &Progress) {
    for gpu in gpus {
        if let Some(total) = gpu.memory_total() {
            let planned = plan.gpu.memory_gib * GIB;
            if (total as f64 - planned).abs() > 0.1 * planned {
                progress.log(&format!(
                    "warning: the plan targets {} ({:.0} GiB) but GPU {} is {} ({:.0} GiB)",
                    plan.gpu.name,
                    plan.gpu.memory_gib,
                    gpu.index(),
                    gpu.name(),
                    total as f64 / GIB
                ));
            }
        }
    }
    let on = gpus.iter().map(|g| format!("GPU {} ({}, {})", g.index(), g.name(), g.uuid())).collect::<Vec<_>>();
    progress.log(&format!("campaign {campaign}: {todo} run(s) to make on {}, {done} already done", on.join(", ")));
}

/// The host's provenance; when there are runs to make (`to_make`), with its CPU calibrated.
fn host_info(to_make: bool, progress: &Progress) -> HostInfo {
    let mut host = provenance::host_info();
    if to_make {
        let c = provenance::calibrate();
        progress.log(&format!(
            "host CPU calibration: {:.0} MiB/s on one thread, {:.0} MiB/s on {} threads ({:.2} s)",
            c.single_thread_mib_s, c.all_threads_mib_s, c.threads, c.seconds
        ));
        host.calibration = Some(c);
    }
    host
}

/// The summary of the GPUs' work: the runs made, why they stopped early. An error on one GPU
/// is the campaign's error, unless other GPUs made runs (then it is why the campaign stopped).
fn summarise(
    mut summary: CampaignSummary,
    shared: &Shared,
    results: Vec<Result<f64>>,
    several: bool,
) -> Result<CampaignSummary> {
    let mut first_error = None;
    for r in results {
        match r {
            Ok(cpu) => summary.sampler_cpu_seconds += cpu,
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let made = shared.take_made();
    let left = shared.total.load(Ordering::SeqCst).saturating_sub(made.len());
    summary.runs = made;
    summary.interrupted = shared.interrupted.load(Ordering::SeqCst);
    summary.stopped = shared.take_stopped().map(|why| match why {
        Stop::Budget(text) => format!("time budget: {text}; {left} run(s) left: run again to go on"),
        Stop::Other(text) => text,
    });
    if let Some(e) = first_error {
        // Like one GPU's campaign: an error stops it, after every GPU's run in progress ended.
        if summary.runs.is_empty() || !several {
            return Err(e);
        }
        summary.stopped.get_or_insert_with(|| format!("{e:#}"));
    }
    Ok(summary)
}
