//! A campaign's run directories counted by how they relate to its plan: the plan's runs,
//! their later attempts, the baselines the runner added, and any other.

use colloc_plan::Plan;
use colloc_trace::ids::{parse_run_id, run_id};
use std::collections::BTreeSet;
use std::path::Path;

/// The run directories of a campaign, by how they relate to its plan.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunCount {
    /// First attempts of planned runs.
    pub planned: usize,
    /// Later attempts of planned runs (`--force`), each replacing the first in every statistic.
    pub again: usize,
    /// Baselines the runner added on hosts new to the campaign (`meta.json` → `added`).
    pub added: usize,
    /// Neither: not planned, not a later attempt, not added (or its `meta.json` unreadable).
    pub other: usize,
}

/// The run directories under `dir` (none without any), counted against `plan`.
pub fn count_runs(dir: &Path, plan: &Plan) -> RunCount {
    let planned: BTreeSet<String> =
        plan.workloads.iter().flat_map(|w| (1..=w.repetitions).map(move |r| run_id(&w.id, r, 1))).collect();
    let added = |run: &Path| {
        colloc_trace::limits::read_file_text(
            &run.join(colloc_trace::layout::META),
            colloc_trace::limits::MAX_META_BYTES,
        )
        .ok()
        .and_then(|text| colloc_trace::meta::read(&text).ok())
        .is_some_and(|m| m.added.is_some())
    };
    let again = |name: &str| {
        parse_run_id(name).is_some_and(|(w, rep, attempt)| attempt > 1 && planned.contains(&run_id(w, rep, 1)))
    };
    let mut n = RunCount::default();
    for e in std::fs::read_dir(dir.join(colloc_trace::layout::RUNS_DIR)).into_iter().flatten().flatten() {
        let path = e.path();
        if !path.is_dir() {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        if planned.contains(&name) {
            n.planned += 1;
        } else if again(&name) {
            n.again += 1;
        } else if added(&path) {
            n.added += 1;
        } else {
            n.other += 1;
        }
    }
    n
}
