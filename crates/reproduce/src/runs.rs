//! A campaign's run directories counted by how they relate to its plan: the plan's runs,
//! their later attempts, the baselines the runner added, and any other.

use anyhow::{anyhow, Result};
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
    /// Neither: not planned, not a later attempt, not added.
    pub other: usize,
}

/// The run directories under `dir` (none without any), counted against `plan`. A run that
/// is neither planned nor a later attempt is told apart by its `meta.json` (`added`); one
/// that cannot be read or parsed is an error naming the file.
pub fn count_runs(dir: &Path, plan: &Plan) -> Result<RunCount> {
    let planned: BTreeSet<String> =
        plan.workloads.iter().flat_map(|w| (1..=w.repetitions).map(move |r| run_id(&w.id, r, 1))).collect();
    let added = |run: &Path| -> Result<bool> {
        let path = run.join(colloc_trace::layout::META);
        let text = colloc_trace::limits::read_file_text(&path, colloc_trace::limits::MAX_META_BYTES)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let meta = colloc_trace::meta::read(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        Ok(meta.added.is_some())
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
        } else if added(&path)? {
            n.added += 1;
        } else {
            n.other += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> (std::path::PathBuf, Plan) {
        let root = colloc_spec::names::project_root().unwrap();
        let project = colloc_spec::load_project(&root).unwrap();
        (root.join("data/h200"), colloc_plan::plan_project_campaign(&project, "h200", None).unwrap())
    }

    /// The shipped campaign holds every planned run, and nothing the counts cannot place.
    #[test]
    fn the_shipped_runs_are_counted_against_their_plan() {
        let (dir, plan) = h200();
        let n = count_runs(&dir, &plan).unwrap();
        assert_eq!(n.planned, plan.totals.runs);
        assert_eq!(n.other, 0, "{n:?}");
        assert!(n.added > 0 && n.again > 0, "h200 has added baselines and later attempts: {n:?}");
    }

    /// A run the plan does not know whose `meta.json` does not parse is an error naming the
    /// file, not a run counted as "other".
    #[test]
    fn an_unplanned_run_whose_meta_does_not_parse_is_an_error_naming_it() {
        let (_, plan) = h200();
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join(colloc_trace::layout::RUNS_DIR).join("not-planned.r1");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join(colloc_trace::layout::META), "{ not json").unwrap();
        let e = count_runs(d.path(), &plan).unwrap_err().to_string();
        assert!(e.contains("not-planned.r1") && e.contains("meta.json"), "{e}");
    }
}
