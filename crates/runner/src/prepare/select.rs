//! The runs a campaign invocation makes: `--only` checked against the plan, the selected
//! runs that have no listed run yet (with `--force`, new attempts of those that have), in
//! plan order, and the listed runs' `meta.json`.

use anyhow::{bail, Result};
use colloc_plan::Plan;
use colloc_trace::ids;
use colloc_trace::layout::{self, RUNS_DIR};
use colloc_trace::manifest;
use colloc_trace::meta::RunMeta;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use crate::options::RunOptions;
use crate::queue::Todo;
use crate::summary::CampaignSummary;

/// Run directory names listed in the manifest.
pub(super) fn listed_runs(m: &manifest::Manifest) -> BTreeSet<String> {
    m.keys()
        .filter_map(|k| k.strip_prefix(&format!("{RUNS_DIR}/")))
        .filter_map(|rest| rest.split_once('/').map(|(d, _)| d.to_string()))
        .collect()
}

/// An error for an `--only` pattern that selects no run of the plan.
pub(super) fn check_only(plan: &Plan, opts: &RunOptions) -> Result<()> {
    for pat in &opts.only {
        let hit = plan.workloads.iter().any(|w| {
            (1..=w.repetitions.max(1)).any(|r| {
                let single = RunOptions { only: vec![pat.clone()], ..opts.clone() };
                single.selects(&w.id, &ids::run_id(&w.id, r, 1))
            })
        });
        if !hit {
            bail!("--only {pat}: no workload or run of the plan has this id");
        }
    }
    Ok(())
}

/// The selected runs still to make, in plan order (with `force`, new attempts of those made).
/// Counts the selection and the runs already done in `summary`.
pub(super) fn select<'a>(
    plan: &'a Plan,
    opts: &RunOptions,
    listed: &BTreeSet<String>,
    summary: &mut CampaignSummary,
) -> Vec<Todo<'a>> {
    let mut todo = Vec::new();
    for w in &plan.workloads {
        for rep in 1..=w.repetitions {
            let base = ids::run_id(&w.id, rep, 1);
            if !opts.selects(&w.id, &base) {
                continue;
            }
            summary.selected += 1;
            let prefix = format!("{base}.a");
            let attempts: Vec<u32> = listed
                .iter()
                .filter_map(|d| if *d == base { Some(1) } else { d.strip_prefix(&prefix).and_then(|a| a.parse().ok()) })
                .collect();
            let attempt = match attempts.iter().max() {
                Some(_) if !opts.force => {
                    summary.already_done.push(base);
                    continue;
                }
                Some(max) => max + 1,
                None => 1,
            };
            todo.push(Todo {
                workload: w,
                repetition: rep,
                attempt,
                run_id: ids::run_id(&w.id, rep, attempt),
                added: None,
            });
        }
    }
    todo
}

/// The listed runs' `meta.json`, by run directory name: those read, and why each of the
/// others could not be (verification, which follows, tells whether one was altered; one
/// that verifies but does not parse was written by another version of the runner, and the
/// version check refuses it).
#[derive(Debug, Default)]
pub(crate) struct ListedMetas {
    pub read: BTreeMap<String, RunMeta>,
    pub unreadable: BTreeMap<String, String>,
}

/// Reads the `meta.json` of each listed run, keeping the reason of each one that cannot be.
pub(super) fn listed_metas(dir: &Path, listed: &BTreeSet<String>) -> ListedMetas {
    let mut m = ListedMetas::default();
    for name in listed {
        let path = dir.join(RUNS_DIR).join(name).join(layout::META);
        let parsed = fs::read(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|b| serde_json::from_slice::<RunMeta>(&b).map_err(|e| format!("{}: {e}", path.display())));
        match parsed {
            Ok(meta) => {
                m.read.insert(name.clone(), meta);
            }
            Err(why) => {
                m.unreadable.insert(name.clone(), why);
            }
        }
    }
    m
}
