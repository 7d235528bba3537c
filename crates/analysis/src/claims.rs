//! The named queries that claim checks use, and the evaluation of the declared claims
//! against one campaign's results.

use anyhow::{bail, Result};
use colloc_spec::claims::{ArgValue, ClaimCheck, ClaimSpec, PaperNumber};
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

use crate::model::{PendingWorkload, Results, WorkloadResult};

/// A query a claim check may name.
struct QueryInfo {
    name: &'static str,
    args: &'static [&'static str],
    describe: &'static str,
    /// Whether the value comes from measurements; `false` for a query answered by the
    /// plan's rules alone (the MIG placement rules), whose checks are graded
    /// [`Verdict::ByConstruction`].
    measured: bool,
}

/// Workload filters every query over workloads accepts.
const FILTERS: &[&str] = &["experiment", "model", "model_class", "mode", "jobs", "min_jobs", "data", "stand_in"];

const QUERIES: &[QueryInfo] = &[
    QueryInfo {
        name: "max_aggregate_ratio",
        args: FILTERS,
        describe: "highest median aggregate throughput ratio (sum of the jobs' throughput over each model alone on the whole GPU) among the matching workloads",
        measured: true,
    },
    QueryInfo {
        name: "per_job_epoch_time_grows",
        args: FILTERS,
        describe: "share of the matching collocated workloads whose median per-job epoch time exceeds the same model's alone",
        measured: true,
    },
    QueryInfo {
        name: "mps_over_naive_max",
        args: &["experiment", "min_jobs", "data"],
        describe: "highest ratio of MPS's aggregate throughput to naive's for the same jobs (each job's throughput over its model alone, summed)",
        measured: true,
    },
    QueryInfo {
        name: "mps_over_mig_max",
        args: &["experiment", "min_jobs", "data", "stand_in"],
        describe: "highest ratio of MPS's aggregate throughput to MIG's (or mps-limited's, with stand_in) for the same jobs (each job's throughput over its model alone, summed)",
        measured: true,
    },
    QueryInfo {
        name: "mps_best_share",
        args: &["experiment", "min_jobs", "data"],
        describe: "share of the collocated configurations with two or more modes measured in which MPS has the highest aggregate throughput (each job's throughput over its model alone, summed)",
        measured: true,
    },
    QueryInfo {
        name: "infeasible_mig_mixes",
        args: &["experiment", "data"],
        describe: "number of MIG workloads whose layout cannot be made on the GPU",
        measured: false,
    },
    QueryInfo {
        name: "mig_isolation_spread",
        args: &["experiment", "data", "stand_in"],
        describe: "largest relative spread (max/min - 1) of a job's throughput on the same MIG slice across workloads with different neighbours",
        measured: true,
    },
    QueryInfo {
        name: "memory_fit_mismatches",
        args: &["experiment", "data"],
        describe: "collocated naive/MPS workloads whose outcome contradicts the memory rule (fits: runs; does not fit: out of memory), the jobs' memory taken from their runs alone",
        measured: true,
    },
];

/// A grade. Of one check:
/// - `Holds`: the value meets the check's expectation (the direction) and, where the paper
///   gives a number, lies within the claim's tolerance of it;
/// - `DirectionOnly`: the direction holds, the magnitude lies outside the tolerance;
/// - `Inconclusive`: the value's 95 % interval straddles the direction's threshold (some
///   of it meets the expectation, some misses it), or the direction holds over all of it
///   but it straddles an edge of the tolerance band, so that holds and direction only
///   cannot be told apart;
/// - `DoesNotHold`: the value (all of its interval) misses the expectation;
/// - `ByConstruction`: a check whose query reads no measurement (the MIG placement rules
///   answer it: C4, the MIG-layout half of C2) and whose value meets its expectation: it
///   follows from the rules, whatever the GPU measured. One that misses its expectation
///   does not hold;
/// - `NotRun`: no value (nothing the check reads was measured).
///
/// A value without an interval is graded on its own; one with an interval on the interval
/// widened to contain the value (a percentile interval need not contain the median).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Holds,
    DirectionOnly,
    Inconclusive,
    DoesNotHold,
    ByConstruction,
    NotRun,
}

impl Verdict {
    /// Every grade, in the order of [`Verdict::combine`]'s precedence.
    pub const ALL: [Verdict; 6] = [
        Verdict::DoesNotHold,
        Verdict::NotRun,
        Verdict::Inconclusive,
        Verdict::DirectionOnly,
        Verdict::Holds,
        Verdict::ByConstruction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::DirectionOnly => "direction only",
            Verdict::Inconclusive => "inconclusive",
            Verdict::DoesNotHold => "does not hold",
            Verdict::ByConstruction => "by construction",
            Verdict::NotRun => "not run",
        }
    }

    /// The grade of several checks together (a claim on one data source), the first of
    /// these that any check has:
    /// 1. does not hold — one check that misses its expectation sinks the claim, whatever
    ///    the others say;
    /// 2. not run — a claim is graded on all its checks or not at all;
    /// 3. inconclusive — one check that cannot be told leaves the claim untold;
    /// 4. direction only;
    /// 5. holds — the measured checks hold; a check by construction beside them neither
    ///    adds to nor takes from that (C2: the memory rule measured, the MIG layouts by
    ///    the rules, holds);
    /// 6. by construction — every check is (C4).
    ///
    /// With no check at all (never declared: a claim has at least one), not run.
    pub fn combine(grades: impl IntoIterator<Item = Verdict>) -> Verdict {
        let g: Vec<Verdict> = grades.into_iter().collect();
        Verdict::ALL.into_iter().find(|v| g.contains(v)).unwrap_or(Verdict::NotRun)
    }

    /// The grade of one check from its value, its 95 % interval where it has one, its
    /// expectation and the paper's number with the claim's tolerance (see [`Verdict`]).
    pub fn grade(
        value: Option<f64>,
        interval: Option<[f64; 2]>,
        expect: &colloc_spec::claims::Expect,
        paper: Option<(f64, &colloc_spec::claims::Tolerance)>,
        measured: bool,
    ) -> Verdict {
        Verdict::grade_why(value, interval, expect, paper, measured).0
    }

    /// [`Verdict::grade`] with the reason in words: `[1.05, 1.2] straddles ≥ 1.1`.
    fn grade_why(
        value: Option<f64>,
        interval: Option<[f64; 2]>,
        expect: &colloc_spec::claims::Expect,
        paper: Option<(f64, &colloc_spec::claims::Tolerance)>,
        measured: bool,
    ) -> (Verdict, String) {
        let Some(v) = value else { return (Verdict::NotRun, "no value".to_string()) };
        let e = expect.describe();
        if !measured {
            return if expect.holds(v) {
                (
                    Verdict::ByConstruction,
                    format!("{} meets {e} by the MIG placement rules, not by a measurement", num(v)),
                )
            } else {
                (Verdict::DoesNotHold, format!("{} misses {e} by the MIG placement rules", num(v)))
            };
        }
        let (lo, hi) = match interval {
            Some([a, b]) if a.is_finite() && b.is_finite() => (a.min(b).min(v), a.max(b).max(v)),
            _ => (v, v),
        };
        let what = if interval.is_some() { format!("the interval [{}, {}]", num(lo), num(hi)) } else { num(v) };
        match expect.holds_over(lo, hi) {
            Some(false) => return (Verdict::DoesNotHold, format!("{what} misses {e}")),
            None => return (Verdict::Inconclusive, format!("{what} straddles the threshold of {e}")),
            Some(true) => {}
        }
        let Some((p, t)) = paper else { return (Verdict::Holds, format!("{what} meets {e}")) };
        let band = t.describe_around(p);
        match t.contains_over(p, lo, hi) {
            Some(true) => (Verdict::Holds, format!("{what} meets {e} and lies within the paper's {band}")),
            Some(false) => (Verdict::DirectionOnly, format!("{what} meets {e} and lies outside the paper's {band}")),
            None => (Verdict::Inconclusive, format!("{what} meets {e} but straddles an edge of the paper's {band}")),
        }
    }
}

/// The data sources in order of closeness to the paper's (image files read by 4 loader
/// workers per job): the first one measured gives a claim's headline grade.
pub const DATA_CLOSENESS: &[&str] = &["imagefolder", "generated", "synthetic"];

/// Where `data` stands in [`DATA_CLOSENESS`] (unknown sources after the known ones).
fn closeness(data: &str) -> usize {
    DATA_CLOSENESS.iter().position(|d| *d == data).unwrap_or(DATA_CLOSENESS.len())
}

/// The value of a query, or why there is none.
#[derive(Debug, Clone, PartialEq, Default)]
struct QueryValue {
    value: Option<f64>,
    /// What the value is made of (which workload, how many), or why there is no value.
    detail: String,
    /// The value's 95 % interval, where it comes from workloads with intervals.
    interval: Option<[f64; 2]>,
    /// Whether the value comes from `mps-limited` standing in for MIG.
    stand_in: bool,
    /// The workloads the value was picked from (the one whose ratio is the value; the two
    /// whose ratios a ratio divides); empty for a share or a count.
    picked: Vec<String>,
    /// The workloads the query read.
    read: Vec<String>,
}

impl QueryValue {
    fn none(detail: String, read: Vec<String>) -> QueryValue {
        QueryValue { detail, read, ..Default::default() }
    }
}

/// A value as the reasons show it: three decimals, trailing zeros dropped.
fn num(v: f64) -> String {
    let s = format!("{v:.3}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn ids(ws: &[&WorkloadResult]) -> Vec<String> {
    ws.iter().map(|w| w.id.clone()).collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    pub query: String,
    /// `experiment=33, mode=mig`.
    pub args: String,
    pub describe: String,
    /// `≥ 1.1`.
    pub expect: String,
    pub value: Option<f64>,
    pub detail: String,
    /// The paper's number this check is graded against, when it gives one.
    pub paper_value: Option<f64>,
    /// The claim's tolerance around `paper_value`: `±25 % of 4 (3 to 5)`.
    pub tolerance: Option<String>,
    /// Whose the expectation's threshold is: `ours, not the paper's: …`, `the paper's: …`.
    #[serde(default)]
    pub threshold_basis: String,
    /// Whether the threshold is ours rather than the paper's.
    #[serde(default)]
    pub threshold_ours: bool,
    /// The value's 95 % interval `[low, high]`, where the value comes from workloads with
    /// intervals: a workload's STP interval for its aggregate ratio; for a ratio of two
    /// workloads' values, the conservative `[low A / high B, high A / low B]`. `None` for a
    /// share or a count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// The value comes from the `mps-limited` stand-in where the claim speaks of MIG.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stand_in: bool,
    /// The workloads the value was picked from that the analysis marks implausible, with
    /// the reasons (workload id → reasons).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub picked_implausible: BTreeMap<String, Vec<String>>,
    /// How many workloads the check read.
    #[serde(default)]
    pub workloads_read: usize,
    /// Those of them marked implausible, with the reasons (workload id → reasons).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub read_implausible: BTreeMap<String, Vec<String>>,
    /// The query reads no measurement (the plan's rules answer it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_construction: bool,
    pub verdict: Verdict,
    /// Why the grade is what it is: `the interval [1.05, 1.2] straddles the threshold of ≥ 1.1`.
    #[serde(default)]
    pub reason: String,
}

/// A claim's checks on one data source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceOutcome {
    /// `synthetic`, `generated`, `imagefolder`.
    pub data: String,
    pub checks: Vec<CheckOutcome>,
    /// The checks' grades together (see [`Verdict`]).
    pub verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimOutcome {
    pub id: String,
    pub statement: String,
    pub paper: PaperNumber,
    /// The claim's tolerance in words (`±25 %`) and the paper's wording it comes from.
    pub tolerance: Option<(String, String)>,
    /// The GPU the results came from (`NVIDIA H200`, `NVIDIA H200 (SIMULATED)`).
    pub hardware: String,
    /// One per data source the campaign measured, closest to the paper's first.
    pub sources: Vec<SourceOutcome>,
    /// The source of the headline grade: the closest to the paper's on which the claim was
    /// measured (not `not run`); `None` when it was measured on none.
    pub headline_data: Option<String>,
    /// The headline grade: that of `headline_data`, else not run.
    pub verdict: Verdict,
    pub note: Option<String>,
}

impl ClaimOutcome {
    /// The headline source's outcome, else the closest source's (all not run).
    pub fn headline(&self) -> Option<&SourceOutcome> {
        match &self.headline_data {
            Some(d) => self.sources.iter().find(|s| &s.data == d),
            None => self.sources.first(),
        }
    }
}

/// Every check names a known query with known arguments.
pub fn validate_claims(claims: &[ClaimSpec]) -> Result<()> {
    colloc_spec::claims::validate(claims)?;
    for c in claims {
        for k in &c.checks {
            let Some(q) = QUERIES.iter().find(|q| q.name == k.query) else {
                let known: Vec<&str> = QUERIES.iter().map(|q| q.name).collect();
                bail!("claim {}: unknown query `{}` (known: {})", c.id, k.query, known.join(", "));
            };
            for a in k.args.keys() {
                if !q.args.contains(&a.as_str()) {
                    bail!(
                        "claim {}: query `{}` takes no argument `{a}` (it takes: {})",
                        c.id,
                        k.query,
                        q.args.join(", ")
                    );
                }
            }
            Filter::parse(&k.args, "").map_err(|e| anyhow::anyhow!("claim {}: query `{}`: {e}", c.id, k.query))?;
        }
    }
    Ok(())
}

/// Runs every claim's checks over `results`.
pub fn evaluate(results: &Results, claims: &[ClaimSpec]) -> Result<Vec<ClaimOutcome>> {
    validate_claims(claims)?;
    let hardware = if results.simulated { format!("{} (SIMULATED)", results.gpu_name()) } else { results.gpu_name() };
    let sources = data_sources(results);
    let mut out = Vec::new();
    for c in claims {
        let mut per_source = Vec::new();
        for data in &sources {
            let mut checks = Vec::new();
            for k in &c.checks {
                checks.push(check(results, k, c.tolerance.as_ref(), data)?);
            }
            let verdict = Verdict::combine(checks.iter().map(|k| k.verdict));
            per_source.push(SourceOutcome { data: data.clone(), checks, verdict });
        }
        let headline = per_source.iter().find(|s| s.verdict != Verdict::NotRun);
        out.push(ClaimOutcome {
            id: c.id.clone(),
            statement: c.statement.clone(),
            paper: c.paper.clone(),
            tolerance: c.tolerance.as_ref().map(|t| (t.describe(), t.basis.value.clone())),
            hardware: hardware.clone(),
            headline_data: headline.map(|s| s.data.clone()),
            verdict: headline.map_or(Verdict::NotRun, |s| s.verdict),
            sources: per_source,
            note: c.note.clone(),
        });
    }
    Ok(out)
}

/// The data sources the campaign measured or plans, closest to the paper's first.
fn data_sources(results: &Results) -> Vec<String> {
    let mut all: BTreeSet<&str> = results.workloads.iter().map(|w| w.data.as_str()).collect();
    all.extend(results.pending.iter().map(|w| w.data.as_str()));
    if all.is_empty() {
        all.insert(results.primary_data.as_str());
    }
    let mut v: Vec<String> = all.into_iter().map(str::to_string).collect();
    v.sort_by(|a, b| closeness(a).cmp(&closeness(b)).then_with(|| a.cmp(b)));
    v
}

fn check(
    results: &Results,
    k: &ClaimCheck,
    tolerance: Option<&colloc_spec::claims::Tolerance>,
    data: &str,
) -> Result<CheckOutcome> {
    let q = run_query(results, &k.query, &k.args, data)?;
    let paper_value = k.paper_value.as_ref().map(|p| p.value);
    let info = QUERIES.iter().find(|i| i.name == k.query);
    let measured = info.is_none_or(|i| i.measured);
    let (verdict, reason) = Verdict::grade_why(q.value, q.interval, &k.expect, paper_value.zip(tolerance), measured);
    let describe = k.describe.clone().or_else(|| info.map(|i| i.describe.to_string())).unwrap_or_default();
    let marked = |ids: &[String]| -> BTreeMap<String, Vec<String>> {
        ids.iter()
            .filter_map(|id| results.workload(id))
            .filter(|w| !w.implausible.is_empty())
            .map(|w| (w.id.clone(), w.implausible.clone()))
            .collect()
    };
    let read: BTreeSet<String> = q.read.iter().cloned().collect();
    let read: Vec<String> = read.into_iter().collect();
    Ok(CheckOutcome {
        query: k.query.clone(),
        args: k.args.iter().map(|(a, v)| format!("{a}={v}")).collect::<Vec<_>>().join(", "),
        describe,
        expect: k.expect.describe(),
        value: q.value,
        detail: q.detail,
        paper_value,
        tolerance: paper_value.zip(tolerance).map(|(p, t)| t.describe_around(p)),
        threshold_basis: k.expect.basis.describe(),
        threshold_ours: k.expect.basis.is_ours(),
        interval: q.interval,
        stand_in: q.stand_in && q.value.is_some(),
        picked_implausible: marked(&q.picked),
        workloads_read: read.len(),
        read_implausible: marked(&read),
        by_construction: !measured,
        verdict,
        reason,
    })
}

/// Evaluates one named query.
fn run_query(results: &Results, name: &str, args: &BTreeMap<String, ArgValue>, data: &str) -> Result<QueryValue> {
    let f = Filter::parse(args, data)?;
    Ok(match name {
        "max_aggregate_ratio" => max_aggregate_ratio(results, &f),
        "per_job_epoch_time_grows" => per_job_epoch_time_grows(results, &f),
        "mps_over_naive_max" => mode_ratio_max(results, &f, false),
        "mps_over_mig_max" => mode_ratio_max(results, &f, true),
        "mps_best_share" => mps_best_share(results, &f),
        "infeasible_mig_mixes" => infeasible_mig_mixes(results, &f),
        "mig_isolation_spread" => mig_isolation_spread(results, &f),
        "memory_fit_mismatches" => memory_fit_mismatches(results, &f),
        other => bail!("unknown query `{other}`"),
    })
}

/// Which workloads a query looks at.
#[derive(Debug, Clone, Default)]
struct Filter {
    experiments: Option<Vec<u32>>,
    models: Option<Vec<String>>,
    classes: Option<Vec<String>>,
    modes: Option<Vec<Mode>>,
    jobs: Option<usize>,
    min_jobs: Option<usize>,
    data: String,
    /// `mps-limited` may stand in for `mig` when no MIG run is ok.
    stand_in: bool,
}

impl Filter {
    fn parse(args: &BTreeMap<String, ArgValue>, primary_data: &str) -> Result<Filter> {
        let mut f = Filter { data: primary_data.to_string(), ..Default::default() };
        for (k, v) in args {
            match k.as_str() {
                "experiment" => f.experiments = Some(numbers(k, v)?.into_iter().map(|x| x as u32).collect()),
                "model" => f.models = Some(texts(k, v)?),
                "model_class" => f.classes = Some(texts(k, v)?),
                "mode" => {
                    f.modes = Some(
                        texts(k, v)?
                            .iter()
                            .map(|m| {
                                serde_json::from_value::<Mode>(serde_json::Value::String(m.clone()))
                                    .map_err(|_| anyhow::anyhow!("`mode`: unknown mode `{m}`"))
                            })
                            .collect::<Result<_>>()?,
                    )
                }
                "jobs" => f.jobs = Some(one_number(k, v)? as usize),
                "min_jobs" => f.min_jobs = Some(one_number(k, v)? as usize),
                "data" => f.data = texts(k, v)?.join(","),
                "stand_in" => {
                    f.stand_in = v.as_bool().ok_or_else(|| anyhow::anyhow!("`stand_in` must be true or false"))?
                }
                other => bail!("unknown argument `{other}`"),
            }
        }
        Ok(f)
    }

    fn min_jobs(&self, default: usize) -> usize {
        self.min_jobs.unwrap_or(default)
    }

    /// Matches everything but the mode.
    fn matches_config(&self, w: &WorkloadResult) -> bool {
        self.experiments.as_ref().is_none_or(|e| e.contains(&w.experiment))
            && self.models.as_ref().is_none_or(|m| w.jobs.iter().all(|j| m.contains(&j.model)))
            && self.classes.as_ref().is_none_or(|c| w.jobs.iter().all(|j| c.contains(&j.model_class)))
            && self.jobs.is_none_or(|n| w.n_jobs() == n)
            && w.data == self.data
    }

    /// The matching workloads, with `mps-limited` in place of `mig` when allowed and no MIG
    /// workload among the matches is ok. The flag says whether it stood in.
    fn workloads<'a>(&self, r: &'a Results, min_jobs: usize) -> (Vec<&'a WorkloadResult>, bool) {
        let base: Vec<&WorkloadResult> =
            r.workloads.iter().filter(|w| self.matches_config(w) && w.n_jobs() >= min_jobs).collect();
        let Some(modes) = &self.modes else { return (base, false) };
        let pick = |modes: &[Mode]| -> Vec<&'a WorkloadResult> {
            base.iter().copied().filter(|w| modes.contains(&w.mode)).collect()
        };
        let chosen = pick(modes);
        let mig_ok = chosen.iter().any(|w| w.mode == Mode::Mig && w.status == RunStatus::Ok);
        if self.stand_in && modes.contains(&Mode::Mig) && !mig_ok {
            let mut m: Vec<Mode> = modes.iter().copied().filter(|m| *m != Mode::Mig).collect();
            m.push(Mode::MpsLimited);
            let stood = pick(&m);
            if stood.iter().any(|w| w.mode == Mode::MpsLimited && w.status == RunStatus::Ok) {
                return (stood, true);
            }
        }
        (chosen, false)
    }
}

fn numbers(k: &str, v: &ArgValue) -> Result<Vec<f64>> {
    match v {
        ArgValue::Number(x) => Ok(vec![*x]),
        ArgValue::Text(s) => s.parse().map(|x| vec![x]).map_err(|_| anyhow::anyhow!("`{k}` must be a number")),
        ArgValue::List(l) => {
            l.iter().map(|s| s.parse().map_err(|_| anyhow::anyhow!("`{k}`: `{s}` is not a number"))).collect()
        }
        ArgValue::Bool(_) => bail!("`{k}` must be a number"),
    }
}

fn one_number(k: &str, v: &ArgValue) -> Result<f64> {
    match numbers(k, v)?.as_slice() {
        [x] => Ok(*x),
        _ => bail!("`{k}` must be one number"),
    }
}

fn texts(k: &str, v: &ArgValue) -> Result<Vec<String>> {
    v.as_list().ok_or_else(|| anyhow::anyhow!("`{k}` must be a text or a list of texts"))
}

/// Why nothing matched: the candidates that did not run, counted by mode and status with
/// their distinct reasons, else no such workload.
fn why_none(r: &Results, candidates: &[&WorkloadResult], what: &str) -> String {
    let mut groups: BTreeMap<(String, &str), (usize, BTreeSet<String>)> = BTreeMap::new();
    for w in candidates.iter().filter(|w| w.status != RunStatus::Ok) {
        let g = groups.entry((w.mode.to_string(), w.status.as_str())).or_default();
        g.0 += 1;
        // Infeasible layouts differ only in how many slices they would need.
        let why = if w.status == RunStatus::Infeasible {
            Some("the MIG layout cannot be made on the GPU".to_string())
        } else {
            w.reasons.first().or(w.plan_reason.as_ref()).map(|s| crate::model::brief_reason(s))
        };
        g.1.extend(why.filter(|s| !s.is_empty()));
    }
    if groups.is_empty() {
        return format!("no {what} in campaign {}", r.campaign);
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|((mode, status), (n, why))| {
            let noun = if n == 1 { "workload" } else { "workloads" };
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(": {}", why.into_iter().collect::<Vec<_>>().join("; "))
            };
            format!("{n} {mode} {noun} {status}{why}")
        })
        .collect();
    format!("no {what} measured ({})", parts.join("; "))
}

fn stood_in_note(stood: bool) -> &'static str {
    if stood {
        " (mps-limited standing in for MIG)"
    } else {
        ""
    }
}

/// `; against another host's baseline in 1 of 3 runs`: how many of the workloads' counted
/// runs divide some job by a baseline measured on another host (nothing when none).
fn cross_host_note(ws: &[&WorkloadResult]) -> String {
    let crossed: u32 = ws.iter().map(|w| w.cross_host_runs).sum();
    if crossed == 0 {
        return String::new();
    }
    let runs: u32 = ws.iter().filter_map(|w| w.stats.aggregate_ratio.map(|s| s.n)).sum();
    format!("; ratios against another host's baseline in {crossed} of {runs} runs")
}

fn max_aggregate_ratio(r: &Results, f: &Filter) -> QueryValue {
    let (ws, stood) = f.workloads(r, f.min_jobs(if f.jobs.is_some() { 1 } else { 2 }));
    let best = ws
        .iter()
        .filter_map(|w| w.stats.aggregate_ratio.map(|s| (s.median, *w)))
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.id.cmp(&a.1.id)));
    match best {
        Some((v, w)) => QueryValue {
            value: Some(v),
            detail: format!("{} in {}{}{}", w.label, w.mode_label(), stood_in_note(stood), cross_host_note(&[w])),
            // STP is the aggregate ratio: its interval is the value's.
            interval: w.intervals.map(|i| i.stp),
            stand_in: stood && w.mode == Mode::MpsLimited,
            picked: vec![w.id.clone()],
            read: ids(&ws),
        },
        None => QueryValue::none(why_none(r, &ws, "matching workload"), ids(&ws)),
    }
}

fn per_job_epoch_time_grows(r: &Results, f: &Filter) -> QueryValue {
    let (ws, stood) = f.workloads(r, f.min_jobs(2));
    let measured: Vec<f64> = ws.iter().filter_map(|w| w.stats.per_job_slowdown.map(|s| s.median)).collect();
    if measured.is_empty() {
        return QueryValue::none(why_none(r, &ws, "collocated workload"), ids(&ws));
    }
    let grew = measured.iter().filter(|s| **s > 1.0).count();
    let v = grew as f64 / measured.len() as f64;
    QueryValue {
        value: Some(v),
        detail: format!(
            "per-job epoch time longer than alone in {grew} of {} collocated workloads{}",
            measured.len(),
            stood_in_note(stood)
        ),
        stand_in: stood && ws.iter().any(|w| w.mode == Mode::MpsLimited && w.stats.per_job_slowdown.is_some()),
        read: ids(&ws),
        ..Default::default()
    }
}

fn comparisons<'a>(r: &'a Results, f: &Filter, default_min: usize) -> Vec<&'a crate::model::ModeComparison> {
    r.comparisons
        .iter()
        .filter(|c| {
            f.experiments.as_ref().is_none_or(|e| e.contains(&c.experiment))
                && c.data == f.data
                && c.n_jobs >= f.min_jobs(default_min)
        })
        .collect()
}

fn mode_ratio_max(r: &Results, f: &Filter, against_mig: bool) -> QueryValue {
    let cs = comparisons(r, f, 2);
    let best = cs
        .iter()
        .filter(|c| !against_mig || f.stand_in || c.mig_stand_in == Some(Mode::Mig))
        .filter_map(|c| if against_mig { c.mps_over_mig } else { c.mps_over_naive }.map(|v| (v, *c)))
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.config.cmp(&a.1.config)));
    match best {
        Some((v, c)) => {
            let stood = match (against_mig, c.mig_stand_in) {
                (true, Some(Mode::MpsLimited)) => " (against mps-limited standing in for MIG)",
                _ => "",
            };
            let basis = if c.normalised { "" } else { " (in images per second: a model alone was not measured)" };
            let ws: Vec<&WorkloadResult> = r.workloads.iter().filter(|w| w.config == c.config).collect();
            let note = format!("{stood}{basis}{}", cross_host_note(&ws));
            let other = if against_mig { c.mig_stand_in.unwrap_or(Mode::Mig) } else { Mode::Naive };
            let (a, b) = (best_of_mode(&ws, Mode::Mps, c.normalised), best_of_mode(&ws, other, c.normalised));
            QueryValue {
                value: Some(v),
                detail: format!("{} (experiment {}){note}", c.label, c.experiment),
                interval: a.zip(b).and_then(|(a, b)| ratio_interval(a.1, b.1)),
                stand_in: against_mig && c.mig_stand_in == Some(Mode::MpsLimited),
                picked: a.into_iter().chain(b).map(|(w, _)| w.id.clone()).collect(),
                read: cs
                    .iter()
                    .flat_map(|c| r.workloads.iter().filter(|w| w.config == c.config))
                    .map(|w| w.id.clone())
                    .collect(),
            }
        }
        None => {
            let other = if against_mig { Mode::Mig } else { Mode::Naive };
            let ws: Vec<&WorkloadResult> = r
                .workloads
                .iter()
                .filter(|w| {
                    (w.mode == other || w.mode == Mode::Mps || (against_mig && w.mode == Mode::MpsLimited))
                        && f.experiments.as_ref().is_none_or(|e| e.contains(&w.experiment))
                        && w.data == f.data
                })
                .collect();
            QueryValue::none(why_none(r, &ws, &format!("pair of MPS and {other} runs")), ids(&ws))
        }
    }
}

/// The workload of `mode` whose median the comparison took (the best layout where the
/// mode has several; see `aggregate::comparisons`), with its value's 95 % interval: STP
/// when the comparison is `normalised`, else the aggregate throughput.
fn best_of_mode<'a>(
    ws: &[&'a WorkloadResult],
    mode: Mode,
    normalised: bool,
) -> Option<(&'a WorkloadResult, Option<[f64; 2]>)> {
    ws.iter()
        .filter(|w| w.mode == mode)
        .filter_map(|w| {
            let s = if normalised { w.stats.aggregate_ratio } else { w.stats.aggregate_throughput }?;
            Some((s.median, *w))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.id.cmp(&a.1.id)))
        .map(|(_, w)| {
            let i = w.intervals.map(|i| if normalised { i.stp } else { i.aggregate_throughput });
            (w, i)
        })
}

/// The interval of a ratio `A / B` of two values with independent intervals, taken
/// conservatively: `[low A / high B, high A / low B]`, the ratio's range when each value
/// ranges over its own interval. It is wider than a 95 % interval of the ratio (were the
/// two drawn together, their errors would partly cancel), so a ratio graded on it is
/// inconclusive more often than it should be, never less. `None` when either has no
/// interval or B's may be 0.
fn ratio_interval(a: Option<[f64; 2]>, b: Option<[f64; 2]>) -> Option<[f64; 2]> {
    let ([alo, ahi], [blo, bhi]) = (a?, b?);
    (blo > 0.0 && alo.is_finite() && ahi.is_finite() && bhi.is_finite()).then(|| [alo / bhi, ahi / blo])
}

fn mps_best_share(r: &Results, f: &Filter) -> QueryValue {
    let cs: Vec<_> = comparisons(r, f, 2)
        .into_iter()
        .filter(|c| c.per_mode.keys().filter(|m| m.as_str() != "exclusive").count() >= 2 && c.best_mode.is_some())
        .collect();
    let read: Vec<String> =
        cs.iter().flat_map(|c| r.workloads.iter().filter(|w| w.config == c.config)).map(|w| w.id.clone()).collect();
    if cs.is_empty() {
        return QueryValue::none(
            format!("no collocated configuration with two modes measured in campaign {}", r.campaign),
            read,
        );
    }
    let mps = cs.iter().filter(|c| c.best_mode == Some(Mode::Mps)).count();
    // MIG's column is mps-limited's where MIG was not measured beside it.
    let stood = cs
        .iter()
        .filter(|c| c.per_mode.contains_key(Mode::MpsLimited.as_str()) && !c.per_mode.contains_key(Mode::Mig.as_str()))
        .count();
    QueryValue {
        value: Some(mps as f64 / cs.len() as f64),
        detail: format!(
            "MPS best in {mps} of {} collocated configurations{}",
            cs.len(),
            if stood > 0 { format!(" (in {stood} of them mps-limited standing in for MIG)") } else { String::new() }
        ),
        stand_in: stood > 0,
        read,
        ..Default::default()
    }
}

fn infeasible_mig_mixes(r: &Results, f: &Filter) -> QueryValue {
    let wanted = |mode: Mode, experiment: u32, data: &str| {
        mode == Mode::Mig && f.experiments.as_ref().is_none_or(|e| e.contains(&experiment)) && data == f.data
    };
    let ws: Vec<&WorkloadResult> = r.workloads.iter().filter(|w| wanted(w.mode, w.experiment, &w.data)).collect();
    // Whether a layout can be made is the plan's answer: workloads not run yet count too.
    let pending: Vec<&PendingWorkload> = r.pending.iter().filter(|w| wanted(w.mode, w.experiment, &w.data)).collect();
    let total = ws.len() + pending.len();
    if total == 0 {
        return QueryValue::none(format!("no MIG workload planned in campaign {}", r.campaign), vec![]);
    }
    let mut bad: Vec<&str> =
        ws.iter().filter(|w| !w.feasible || w.status == RunStatus::Infeasible).map(|w| w.label.as_str()).collect();
    let from_plan: Vec<&str> = pending.iter().filter(|w| !w.feasible).map(|w| w.label.as_str()).collect();
    bad.extend(&from_plan);
    let not_yet =
        if from_plan.is_empty() { String::new() } else { format!(" ({} from the plan, not run yet)", from_plan.len()) };
    QueryValue {
        value: Some(bad.len() as f64),
        detail: if bad.is_empty() {
            format!("all {total} MIG layouts fit")
        } else {
            format!("{} of {total} MIG layouts cannot be made{not_yet}: {}", bad.len(), bad.join(", "))
        },
        read: ids(&ws),
        ..Default::default()
    }
}

fn mig_isolation_spread(r: &Results, f: &Filter) -> QueryValue {
    let f = Filter { modes: Some(vec![Mode::Mig]), ..f.clone() };
    let (ws, stood) = f.workloads(r, 1);
    // (model, dataset, batch, slice) → per-workload median throughput
    let mut groups: BTreeMap<String, Vec<(f64, String)>> = BTreeMap::new();
    for w in ws.iter().filter(|w| w.status == RunStatus::Ok && w.n_jobs() >= 2) {
        for (j, s) in w.jobs.iter().zip(&w.job_stats) {
            if let Some(t) = s.throughput {
                let key = format!("{} b{} on {}", j.model, j.batch_size, j.mig_class.clone().unwrap_or_default());
                groups.entry(key).or_default().push((t.median, w.label.clone()));
            }
        }
    }
    let mut worst: Option<(f64, String)> = None;
    let mut compared = 0;
    for (key, v) in &groups {
        let labels: std::collections::BTreeSet<&str> = v.iter().map(|(_, l)| l.as_str()).collect();
        if labels.len() < 2 {
            continue;
        }
        compared += 1;
        let lo = v.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
        let hi = v.iter().map(|x| x.0).fold(f64::NEG_INFINITY, f64::max);
        if lo > 0.0 {
            let spread = hi / lo - 1.0;
            if worst.as_ref().is_none_or(|(w, _)| spread > *w) {
                worst = Some((spread, key.clone()));
            }
        }
    }
    match worst {
        Some((v, key)) => QueryValue {
            value: Some(v),
            detail: format!(
                "largest spread {:.1} % ({key}) over {compared} job kinds placed beside different neighbours{}",
                v * 100.0,
                stood_in_note(stood)
            ),
            stand_in: stood,
            read: ids(&ws),
            ..Default::default()
        },
        None => {
            QueryValue::none(why_none(r, &ws, "MIG workload with the same job beside different neighbours"), ids(&ws))
        }
    }
}

fn memory_fit_mismatches(r: &Results, f: &Filter) -> QueryValue {
    let Some(capacity) = r.gpu_memory_bytes() else {
        return QueryValue::none("the GPU's memory size is not in the traces".to_string(), vec![]);
    };
    let alone: BTreeMap<(String, String, u32), f64> = r
        .baselines
        .iter()
        .filter(|b| b.data == f.data)
        .filter_map(|b| b.stats.memory_bytes.map(|m| ((b.model.clone(), b.dataset.clone(), b.batch_size), m.median)))
        .collect();
    let mut checked = 0;
    let mut over = 0;
    let mut mismatches = Vec::new();
    let mut read = Vec::new();
    for w in r.workloads.iter().filter(|w| {
        matches!(w.mode, Mode::Naive | Mode::Mps)
            && w.n_jobs() >= 2
            && w.data == f.data
            && f.experiments.as_ref().is_none_or(|e| e.contains(&w.experiment))
    }) {
        let need: Option<f64> =
            w.jobs.iter().map(|j| alone.get(&(j.model.clone(), j.dataset.clone(), j.batch_size)).copied()).sum();
        read.push(w.id.clone());
        let Some(need) = need else { continue };
        let oom = w.out_of_memory();
        let ran = w.status == RunStatus::Ok;
        if !oom && !ran {
            continue;
        }
        checked += 1;
        let fits = need <= capacity;
        if !fits {
            over += 1;
        }
        if fits == oom {
            mismatches.push(format!("{} {} ({:.1} of {:.1} GiB)", w.label, w.mode, need / GIB, capacity / GIB));
        }
    }
    if checked == 0 {
        return QueryValue::none("no collocated naive or MPS workload with its jobs' memory known".to_string(), read);
    }
    if over == 0 && mismatches.is_empty() {
        return QueryValue::none(
            format!(
                "all {checked} collocated workloads fit in {:.0} GiB: the rule's failure side is not exercised",
                capacity / GIB
            ),
            read,
        );
    }
    QueryValue {
        value: Some(mismatches.len() as f64),
        detail: if mismatches.is_empty() {
            format!("{checked} workloads, {over} exceeding the memory, each ran or failed as the rule says")
        } else {
            format!("{} of {checked} workloads contradict the rule: {}", mismatches.len(), mismatches.join(", "))
        },
        read,
        ..Default::default()
    }
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The planned workloads a claim's checks read, in plan order: for each check, the
/// workloads its query's filter selects (on every data source the plan has, unless the
/// check names one) and, for the queries that divide by a model alone, those models'
/// baselines (the same model, dataset, batch and data alone: `exclusive`, else one job in
/// `naive`). Derived from the checks' queries and arguments, as [`evaluate`] reads them.
pub fn claim_workloads(claim: &ClaimSpec, plan: &colloc_plan::Plan) -> Result<Vec<String>> {
    use colloc_plan::PlannedWorkload;
    let mut wanted: BTreeSet<&str> = BTreeSet::new();
    let mut need_baselines: BTreeSet<(String, String, u32, String)> = BTreeSet::new();
    for k in &claim.checks {
        let f = Filter::parse(&k.args, "")?;
        let data_ok = |w: &PlannedWorkload| !k.args.contains_key("data") || f.data.split(',').any(|d| d == w.data);
        let exp_ok = |w: &PlannedWorkload| f.experiments.as_ref().is_none_or(|e| e.contains(&w.experiment));
        let with_stand_in = |modes: Vec<Mode>| -> Vec<Mode> {
            let mut m = modes;
            if f.stand_in && m.contains(&Mode::Mig) && !m.contains(&Mode::MpsLimited) {
                m.push(Mode::MpsLimited);
            }
            m
        };
        let all_modes = || None::<Vec<Mode>>;
        let (modes, min_jobs, config_filter, baselines): (Option<Vec<Mode>>, usize, bool, bool) = match k.query.as_str()
        {
            "max_aggregate_ratio" => {
                (f.modes.clone().map(with_stand_in), f.min_jobs(if f.jobs.is_some() { 1 } else { 2 }), true, true)
            }
            "per_job_epoch_time_grows" => (f.modes.clone().map(with_stand_in), f.min_jobs(2), true, true),
            "mps_over_naive_max" => (Some(vec![Mode::Mps, Mode::Naive]), f.min_jobs(2), false, true),
            "mps_over_mig_max" => (Some(with_stand_in(vec![Mode::Mps, Mode::Mig])), f.min_jobs(2), false, true),
            "mps_best_share" => (all_modes(), f.min_jobs(2), false, true),
            "infeasible_mig_mixes" => (Some(vec![Mode::Mig]), 1, false, false),
            "mig_isolation_spread" => (Some(with_stand_in(vec![Mode::Mig])), 2, false, false),
            "memory_fit_mismatches" => (Some(vec![Mode::Naive, Mode::Mps]), 2, false, true),
            other => bail!("claim {}: unknown query `{other}`", claim.id),
        };
        for w in &plan.workloads {
            let config = !config_filter
                || (f.models.as_ref().is_none_or(|m| w.jobs.iter().all(|j| m.contains(&j.model)))
                    && f.classes.as_ref().is_none_or(|c| w.jobs.iter().all(|j| c.contains(&j.model_class)))
                    && f.jobs.is_none_or(|n| w.jobs.len() == n));
            if data_ok(w)
                && exp_ok(w)
                && config
                && w.jobs.len() >= min_jobs
                && modes.as_ref().is_none_or(|m| m.contains(&w.mode))
            {
                wanted.insert(&w.id);
                if baselines {
                    for j in &w.jobs {
                        need_baselines.insert((j.model.clone(), j.dataset.clone(), j.batch_size, w.data.clone()));
                    }
                }
            }
        }
    }
    for key in &need_baselines {
        let alone = |mode: Mode| -> Vec<&str> {
            plan.workloads
                .iter()
                .filter(|w| {
                    w.mode == mode
                        && w.jobs.len() == 1
                        && (w.jobs[0].model.as_str(), w.jobs[0].dataset.as_str(), w.jobs[0].batch_size, w.data.as_str())
                            == (key.0.as_str(), key.1.as_str(), key.2, key.3.as_str())
                })
                .map(|w| w.id.as_str())
                .collect()
        };
        let ex = alone(Mode::Exclusive);
        wanted.extend(if ex.is_empty() { alone(Mode::Naive) } else { ex });
    }
    Ok(plan.workloads.iter().filter(|w| wanted.contains(w.id.as_str())).map(|w| w.id.clone()).collect())
}
