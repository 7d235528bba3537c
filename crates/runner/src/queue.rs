//! What a campaign's GPUs take their runs from: the selected runs grouped into units (every
//! repetition of a workload, and of its twin under a part's own protocol, is one unit, so
//! it stays on one GPU), and
//! the book of baselines per GPU, from which each GPU learns which baselines (each model
//! alone) it must measure just before a unit whose runs are divided by them.

use anyhow::Result;
use colloc_plan::{Plan, PlannedWorkload};
use colloc_trace::ids;
use colloc_trace::meta::{RunMeta, RunStatus};
use colloc_trace::Mode;
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
    /// (GPU UUID, interleaved baseline id) → its runs given out on that GPU in this
    /// invocation, and the collocated runs given out there since the last of them.
    interleaved: BTreeMap<(String, String), Tally>,
}

/// The interleaved baselines' tallies at one moment.
pub(crate) struct Checkpoint(BTreeMap<(String, String), Tally>);

/// One interleaved baseline on one GPU in this invocation.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    made: u32,
    since: u32,
}

impl Tally {
    /// The runs still owed at the end of the GPU's work: one after the collocated runs
    /// since the last, and more until the invocation has `runs_per_invocation`.
    fn owed(&self, rule: colloc_plan::Interleave) -> u32 {
        u32::from(self.since > 0).max(rule.runs_per_invocation.saturating_sub(self.made))
    }
}

impl BaselineBook {
    /// From the campaign's runs (`metas`, by run directory name) and the selected runs.
    pub(crate) fn new<'a>(
        metas: &BTreeMap<String, RunMeta>,
        todo: impl IntoIterator<Item = &'a Todo<'a>>,
    ) -> BaselineBook {
        let mut book = BaselineBook {
            on_gpu: BTreeSet::new(),
            last_rep: BTreeMap::new(),
            runs_before: BTreeMap::new(),
            interleaved: BTreeMap::new(),
        };
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
    pub(crate) fn before<'a>(
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
                // An interleaved baseline is measured beside its runs in every invocation.
                let interleaved = b.interleaved && plan.interleave.is_some();
                if !b.feasible || interleaved || self.on_gpu.contains(&(b.id.clone(), uuid.to_string())) {
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

    /// What [`Self::restore`] brings back: the interleaved baselines' tallies.
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint(self.interleaved.clone())
    }

    /// The tallies as they were at `c` (a unit given out was not begun).
    pub(crate) fn restore(&mut self, c: Checkpoint) {
        self.interleaved = c.0;
    }

    /// A new repetition of baseline `b`, added beyond the selection for `why`.
    fn new_run<'a>(&mut self, b: &'a PlannedWorkload, why: String) -> Todo<'a> {
        let rep = self.last_rep.get(&b.id).copied().unwrap_or(0) + 1;
        self.note_rep(&b.id, rep);
        Todo { workload: b, repetition: rep, attempt: 1, run_id: ids::run_id(&b.id, rep, 1), added: Some(why) }
    }

    /// `runs` (a unit, after the baselines [`Self::before`] put first) with the runs of its
    /// interleaved baselines between them, on GPU `uuid`: before the first collocated run
    /// that a baseline divides in this invocation, `runs_per_invocation - 1` runs of it
    /// (selected runs of it still in `queue` first); before a later one, one run of it when
    /// `between` collocated runs have passed since its last; after the unit, one run of it
    /// when `between` have passed. Those fewer than `between` wait for [`Self::close`].
    pub(crate) fn interleave<'a>(
        &mut self,
        plan: &'a Plan,
        runs: Vec<Todo<'a>>,
        uuid: &str,
        starts: &dyn Fn(&PlannedWorkload) -> bool,
        queue: &mut VecDeque<Vec<Todo<'a>>>,
    ) -> Vec<Todo<'a>> {
        let Some(rule) = plan.interleave else { return runs };
        let mut out = Vec::new();
        let mut touched: Vec<&'a PlannedWorkload> = Vec::new();
        for t in runs {
            if t.workload.is_baseline() {
                if t.workload.interleaved && starts(t.workload) {
                    let e = self.interleaved.entry((uuid.to_string(), t.workload.id.clone())).or_default();
                    e.made += 1;
                    e.since = 0;
                }
                out.push(t);
                continue;
            }
            if !starts(t.workload) {
                out.push(t);
                continue;
            }
            let needed = interleaved_of(plan, t.workload);
            for b in &needed {
                if !touched.iter().any(|x| x.id == b.id) {
                    touched.push(b);
                }
                let key = (uuid.to_string(), b.id.clone());
                let tally = self.interleaved.get(&key).copied().unwrap_or_default();
                let n = if tally.made == 0 {
                    rule.runs_per_invocation.saturating_sub(1).max(1)
                } else if tally.since >= rule.between {
                    1
                } else {
                    0
                };
                let mut given = 0;
                if tally.made == 0 {
                    while given < n {
                        let Some(at) = queue.iter().position(|u| u.iter().all(|q| q.workload.id == b.id)) else {
                            break;
                        };
                        let unit = queue.remove(at).into_iter().flatten();
                        for q in unit {
                            given += 1;
                            out.push(q);
                        }
                    }
                }
                for _ in given..n {
                    out.push(self.new_run(b, interleaved_why(b, uuid, "before", &t.run_id)));
                }
                if n > 0 {
                    let e = self.interleaved.entry(key).or_default();
                    e.made += n.max(given);
                    e.since = 0;
                }
            }
            out.push(t);
            for b in &needed {
                self.interleaved.entry((uuid.to_string(), b.id.clone())).or_default().since += 1;
            }
        }
        for b in touched {
            let key = (uuid.to_string(), b.id.clone());
            let tally = self.interleaved.get(&key).copied().unwrap_or_default();
            if tally.since >= rule.between {
                let after = out.last().map(|t: &Todo| t.run_id.clone()).unwrap_or_default();
                out.push(self.new_run(b, interleaved_why(b, uuid, "just after", &after)));
                let e = self.interleaved.entry(key).or_default();
                e.made += 1;
                e.since = 0;
            }
        }
        out
    }

    /// The interleaved baselines' runs still owed on GPU `uuid` at the end of its work: one
    /// run of each with collocated runs since its last, and more until it has
    /// `runs_per_invocation` in this invocation. `after` names the GPU's last run.
    pub(crate) fn close<'a>(&mut self, plan: &'a Plan, uuid: &str, after: &str) -> Vec<Todo<'a>> {
        let Some(rule) = plan.interleave else { return Vec::new() };
        let mut out = Vec::new();
        let owed: Vec<(String, Tally)> = self
            .interleaved
            .iter()
            .filter(|((g, _), t)| g == uuid && t.made > 0)
            .map(|((_, b), t)| (b.clone(), *t))
            .collect();
        for (id, tally) in owed {
            let Some(b) = plan.workloads.iter().find(|w| w.id == id) else { continue };
            let n = tally.owed(rule);
            for _ in 0..n {
                out.push(self.new_run(b, interleaved_why(b, uuid, "after", after)));
            }
            let e = self.interleaved.entry((uuid.to_string(), id)).or_default();
            e.made += n;
            e.since = 0;
        }
        out
    }

    /// The estimated seconds of what [`Self::close`] would add now on GPU `uuid`: the time
    /// a unit must leave for them under a time budget.
    pub(crate) fn owed_seconds(&self, plan: &Plan, uuid: &str) -> f64 {
        let Some(rule) = plan.interleave else { return 0.0 };
        self.interleaved
            .iter()
            .filter(|((g, _), t)| g == uuid && t.made > 0)
            .filter_map(|((_, b), t)| {
                let w = plan.workloads.iter().find(|w| &w.id == b)?;
                Some(t.owed(rule) as f64 * w.estimated_seconds)
            })
            .sum()
    }
}

/// The interleaved baselines that divide the jobs of `w`, each once, in job order.
pub(crate) fn interleaved_of<'a>(plan: &'a Plan, w: &PlannedWorkload) -> Vec<&'a PlannedWorkload> {
    let mut out: Vec<&PlannedWorkload> = Vec::new();
    if plan.interleave.is_none() {
        return out;
    }
    for i in 0..w.jobs.len() {
        if let Some(b) = plan.baseline_of(w, i).filter(|b| b.interleaved && b.feasible) {
            if !out.iter().any(|x| x.id == b.id) {
                out.push(b);
            }
        }
    }
    out
}

fn interleaved_why(b: &PlannedWorkload, uuid: &str, place: &str, run: &str) -> String {
    format!("an interleaved baseline on this host ({uuid}) of {}, {place} {run}", b.label)
}
