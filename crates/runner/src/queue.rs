//! What a campaign's GPUs take their runs from: the selected runs grouped into units (every
//! repetition of a workload, and of its twin under a part's own protocol, is one unit, so
//! it stays on one GPU), and
//! the book of baselines per GPU, from which each GPU learns which baselines (each model
//! alone) it must measure just before a unit whose runs are divided by them.

use anyhow::Result;
use colloc_plan::{Mode, Plan, PlannedWorkload};
use colloc_trace::ids;
use colloc_trace::meta::{RunMeta, RunStatus};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::backend::Backend;

/// A run to make.
pub(crate) struct Todo<'a> {
    pub workload: &'a PlannedWorkload,
    pub repetition: u32,
    pub attempt: u32,
    pub run_id: String,
    /// Why the runner added it beyond the selection (a baseline on this host).
    pub added: Option<String>,
}

/// Whether a run of `w` starts jobs on this GPU: feasible, with jobs, and the GPU's MIG mode
/// as its mode needs (else it is recorded infeasible or skipped at once).
pub(crate) fn starts_here(w: &PlannedWorkload, gpu: &dyn Backend) -> Result<bool> {
    Ok(w.feasible && !w.jobs.is_empty() && (w.mode == Mode::Mig) == gpu.mig_enabled_for(w.mode)?)
}

/// The runs in units, in plan order: every run of a workload together, with those of its
/// twin under a campaign part's own protocol (`<id>~<protocol>`, which the plan puts right
/// after it). A GPU takes a unit whole, and a time budget starts a unit only when all of it
/// fits, so the repetitions of a workload, and its runs under both protocols, are made on
/// one host.
pub(crate) fn units(todo: Vec<Todo<'_>>) -> VecDeque<Vec<Todo<'_>>> {
    let mut out: VecDeque<Vec<Todo>> = VecDeque::new();
    for t in todo {
        match out.back_mut() {
            Some(last) if ids::workload_base(&last[0].workload.id) == ids::workload_base(&t.workload.id) => {
                last.push(t)
            }
            _ => out.push_back(vec![t]),
        }
    }
    out
}

/// Which GPU has (or is making) a run of which baseline, and the repetition numbers given
/// out, so that GPUs working at once never make the same run id.
pub(crate) struct BaselineBook {
    /// (baseline workload id, GPU UUID): an `ok` run in the campaign, or one on its way.
    on_gpu: BTreeSet<(String, String)>,
    /// Workload id → the highest repetition number in the campaign or given out.
    last_rep: BTreeMap<String, u32>,
    /// Workload id → its runs in the campaign before this invocation.
    runs_before: BTreeMap<String, usize>,
}

impl BaselineBook {
    /// From the campaign's runs (`metas`, by run directory name) and the selected runs.
    pub fn new<'a>(metas: &BTreeMap<String, RunMeta>, todo: impl IntoIterator<Item = &'a Todo<'a>>) -> BaselineBook {
        let mut book =
            BaselineBook { on_gpu: BTreeSet::new(), last_rep: BTreeMap::new(), runs_before: BTreeMap::new() };
        for (dir, m) in metas {
            let Some((w, rep, _)) = ids::parse_run_id(dir) else { continue };
            book.note_rep(w, rep);
            *book.runs_before.entry(w.to_string()).or_default() += 1;
            if let (RunStatus::Ok, Some(g)) = (m.status, &m.gpu) {
                book.on_gpu.insert((w.to_string(), g.uuid.clone()));
            }
        }
        for t in todo {
            book.note_rep(&t.workload.id, t.repetition);
        }
        book
    }

    fn note_rep(&mut self, workload: &str, rep: u32) {
        let e = self.last_rep.entry(workload.to_string()).or_insert(0);
        *e = (*e).max(rep);
    }

    /// The baselines among `runs` count as on their way to GPU `uuid`.
    fn expect(&mut self, runs: &[Todo<'_>], uuid: &str) {
        for t in runs.iter().filter(|t| t.workload.is_baseline()) {
            self.on_gpu.insert((t.workload.id.clone(), uuid.to_string()));
        }
    }

    /// The runs of baselines that GPU `uuid` must make before `runs`: those their
    /// collocated runs that `starts` here are divided by, where the GPU has no `ok` run of
    /// them and none is on its way. A selected run of such a baseline still waiting in
    /// `queue` (later in plan order) is taken from there and comes first; otherwise one new
    /// repetition is given out here (its `added` says why). The baselines among `runs`
    /// themselves count as on their way.
    pub fn before<'a>(
        &mut self,
        plan: &'a Plan,
        runs: &[Todo<'a>],
        uuid: &str,
        starts: &dyn Fn(&PlannedWorkload) -> bool,
        queue: &mut VecDeque<Vec<Todo<'a>>>,
    ) -> Vec<Todo<'a>> {
        self.expect(runs, uuid);
        // Baseline workload id → the workloads of `runs` that need it.
        let mut needed: BTreeMap<&str, (&'a PlannedWorkload, Vec<&str>)> = BTreeMap::new();
        for t in runs.iter().filter(|t| !t.workload.is_baseline() && starts(t.workload)) {
            for i in 0..t.workload.jobs.len() {
                let Some(b) = plan.baseline_of(t.workload, i) else { continue };
                if !b.feasible || self.on_gpu.contains(&(b.id.clone(), uuid.to_string())) {
                    continue;
                }
                let e = needed.entry(b.id.as_str()).or_insert((b, Vec::new()));
                if !e.1.contains(&t.workload.id.as_str()) {
                    e.1.push(t.workload.id.as_str());
                }
            }
        }
        let mut out = Vec::new();
        for (id, (b, users)) in needed {
            self.on_gpu.insert((id.to_string(), uuid.to_string()));
            if let Some(at) = queue.iter().position(|u| u.iter().all(|t| t.workload.id == id)) {
                out.extend(queue.remove(at).into_iter().flatten());
                continue;
            }
            let rep = self.last_rep.get(id).copied().unwrap_or(0) + 1;
            self.note_rep(id, rep);
            let before = self.runs_before.get(id).copied().unwrap_or(0);
            let shown: Vec<&str> = users.iter().take(3).copied().collect();
            let more = if users.len() > 3 { format!(" and {} more", users.len() - 3) } else { String::new() };
            out.push(Todo {
                workload: b,
                repetition: rep,
                attempt: 1,
                run_id: ids::run_id(&b.id, rep, 1),
                added: Some(format!(
                    "the baseline on this host ({uuid}) of {}{more}: the campaign had {} before this invocation",
                    shown.join(", "),
                    if before == 0 {
                        "no run of it".to_string()
                    } else {
                        format!("{before} run(s) of it, none ok on this host")
                    }
                )),
            });
        }
        out
    }
}
