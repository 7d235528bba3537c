//! Two campaigns side by side: a reviewer's re-run of (a subset of) a campaign against the
//! one shipped, with a verdict per workload and the claims' grades of both.
//!
//! For every workload measured in both (the same workload id, ok runs with an aggregate
//! throughput ratio), [`compare`] sets the aggregate ratio (STP) of the base beside the new
//! one, their difference `new / base − 1`, each campaign's 95 % interval of it, and — when
//! both campaigns ran on the same GPU model — the aggregate throughput in images per second
//! and the workload's baseline likewise (see [`WorkloadBaseline`]).
//!
//! STP is the aggregate throughput over the baselines it divides by, so the difference of
//! STP splits into two factors (see [`Factors`]): `STP_new / STP_base ≈ (agg_new / agg_base)
//! / (baseline_new / baseline_base)`. A host that runs one loader-bound model alone faster
//! or slower moves the baseline factor and not the aggregate one.
//!
//! Each compared value has a tolerance (see [`TOLERANCE_RULE`]) from the campaigns' 95 %
//! intervals, with declared floors. A workload `agrees` when its STP difference lies within
//! its tolerance (and, on one GPU model, its aggregate throughput's too); `agrees, the host
//! differs` when its STP lies outside, its aggregate throughput inside and its baseline
//! outside theirs; else it `differs`. Workloads measured in only one campaign are listed as
//! `only in base` or `only in new`.
//!
//! Across different GPU models absolute throughputs are not compared: only the ratios (each
//! job over its model alone on the same GPU) and the claims; the two factors are still shown.

use colloc_analysis::{ClaimOutcome, Results, RunResult, Stats, WorkloadResult};
use colloc_trace::meta::RunStatus;

use crate::escape::{csv as csv_field, md};
use crate::json::{Grade, FORMAT_VERSION};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The declared floor of the tolerance on synthetic data (no loader, no files): 2 %.
pub const SYNTHETIC_FLOOR: f64 = 0.02;
/// The declared floor on file data (`generated`, `imagefolder`, any other source): 5 %,
/// since the loader and the host's CPU and storage enter the throughput.
pub const FILE_DATA_FLOOR: f64 = 0.05;

/// How the tolerances are made, in words (the Markdown report says it).
pub const TOLERANCE_RULE: &str = "Tolerance: the larger of a declared floor (2 % on synthetic data, 5 % on file \
data: generated or imagefolder) and the two campaigns' relative 95 % uncertainties combined, sqrt(u_base² + u_new²). \
For STP a campaign's u is the relative half-width of its 95 % interval of STP ((high − low) / 2 / median; the \
analysis' percentile bootstrap over the repetitions, the runs alone each ratio divides by and the jobs' window \
intervals); for the aggregate throughput likewise from its 95 % interval of the aggregate throughput. For the \
baseline (the job-weighted mean over the counted runs' jobs of the median throughput of the runs alone each job \
divided by), u is, per model, the relative half-width of the distribution-free 95 % interval of the median of the \
distinct runs alone its jobs divided by (the order statistics x(k) and x(n+1−k) with the largest k whose binomial \
coverage is at least 95 %; with 5 runs or fewer no such k exists and the range is taken, covering 1 − 2^(1−n): 75 % \
for 3 runs), in quadrature with the median of those runs' own window intervals, weighted over the jobs by their \
baselines. A campaign without a 95 % interval for a workload (old traces) falls back to the old rule for it: \
sqrt((2a)² + b²), a the relative half-range of its repetitions ((max − min) / 2 / median), b the median relative \
half-width of its jobs' window intervals; the row says so.";

/// How the verdicts follow, in words.
pub const VERDICT_RULE: &str = "Verdicts: agrees — the STP difference within its tolerance and, on one GPU model, \
the aggregate throughput's too; agrees, the host differs — the STP difference outside its tolerance, but the \
aggregate throughput within its tolerance and the baseline outside its own: the collocated jobs ran as fast, and \
what differs is how fast the host runs a model alone (typically a loader-bound one); differs — anything else. Only \
differs makes `cargo xtask compare` exit 1.";

/// The floor of the tolerance for a workload's data source.
pub fn floor(data: &str) -> f64 {
    if data == "synthetic" {
        SYNTHETIC_FLOOR
    } else {
        FILE_DATA_FLOOR
    }
}

/// The old rule, for a campaign without 95 % intervals: its relative uncertainty of a value
/// as a rough 95% half-width: its repetitions' relative half-range
/// `a = (max − min) / 2 / median`, doubled, combined with the median relative 95% CI
/// half-width `b` of its jobs: `sqrt((2a)² + b²)`.
pub fn spread(stats: &Stats, ci_rel: Option<&Stats>) -> f64 {
    let half_range = if stats.median > 0.0 { (stats.max - stats.min) / 2.0 / stats.median } else { 0.0 };
    let ci = ci_rel.map(|s| s.median).filter(|v| v.is_finite()).unwrap_or(0.0);
    (2.0 * half_range).hypot(ci)
}

/// A campaign's relative uncertainty of a value from its 95 % interval: `(high − low) / 2 /
/// value`; `None` for an interval that is not finite or a value that is not positive.
pub fn interval_spread(interval: [f64; 2], value: f64) -> Option<f64> {
    let [lo, hi] = interval;
    (value > 0.0 && value.is_finite() && lo.is_finite() && hi.is_finite() && hi >= lo).then(|| (hi - lo) / 2.0 / value)
}

/// The tolerance of a difference: the larger of `floor` and the two uncertainties
/// combined, `sqrt(u_base² + u_new²)`.
pub fn tolerance(floor: f64, spread_base: f64, spread_new: f64) -> f64 {
    floor.max(spread_base.hypot(spread_new))
}

/// `P(k ≤ X ≤ n − k)` for `X ~ Binomial(n, 1/2)`: the coverage of the interval between the
/// `k`-th smallest and the `k`-th largest of `n` values as an interval of their median.
fn median_coverage(n: usize, k: usize) -> f64 {
    if k == 0 || 2 * k > n + 1 {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    // Binomial probabilities, iteratively: C(n, i) / 2^n.
    let mut p = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    for i in 0..k {
        below += p;
        p *= (n - i) as f64 / (i + 1) as f64;
    }
    1.0 - 2.0 * below
}

/// The distribution-free 95 % interval of the median of `values` (order statistics): the
/// `k`-th smallest and `k`-th largest with the largest `k` whose coverage is at least 95 %,
/// or the range when none is (5 values or fewer); with that coverage. `None` without values.
pub fn median_interval(values: &[f64]) -> Option<([f64; 2], f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let mut k = 1;
    while 2 * (k + 1) <= n + 1 && median_coverage(n, k + 1) >= 0.95 {
        k += 1;
    }
    Some(([v[k - 1], v[n - k]], median_coverage(n, k)))
}

/// The median of finite values (`None` without any).
fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// `GPU-aea83523`: a host id (a GPU UUID) cut to its first group.
pub fn short_host(host: Option<&str>) -> String {
    match host {
        Some(h) => h.splitn(3, '-').take(2).collect::<Vec<_>>().join("-"),
        None => "unnamed host".to_string(),
    }
}

/// One value of a workload in both campaigns.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Compared {
    /// The medians over repetitions (the baseline: see [`WorkloadBaseline::mean`]).
    pub base: f64,
    pub new: f64,
    /// `new / base − 1`.
    pub difference: f64,
    pub tolerance: f64,
}

impl Compared {
    pub fn agrees(&self) -> bool {
        self.difference.abs() <= self.tolerance
    }
}

/// The difference of STP split in two: `stp ≈ aggregate / baseline`, each `new / base`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct Factors {
    /// `STP_new / STP_base` (medians over repetitions).
    pub stp: f64,
    /// `agg_new / agg_base`: the collocated aggregate throughputs (medians over repetitions).
    pub aggregate: f64,
    /// `baseline_new / baseline_base`: what the ratios divide by ([`WorkloadBaseline::mean`]).
    pub baseline: f64,
}

impl Factors {
    /// What the two factors leave of the STP ratio: `stp / (aggregate / baseline) − 1`; 0
    /// when every job of each campaign divides by one baseline (a homogeneous workload of
    /// one repetition, or whose repetitions share their runs alone); otherwise the
    /// difference between a median of ratios and a ratio of medians and means.
    pub fn residual(&self) -> f64 {
        self.stp / (self.aggregate / self.baseline) - 1.0
    }
}

/// What a workload's ratios divide by in one campaign.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorkloadBaseline {
    /// The job-weighted mean, over the counted runs' jobs (ok, not superseded, with a ratio),
    /// of the median throughput of the runs alone each job divided by (= its throughput ×
    /// slowdown), images per second.
    pub mean: f64,
    /// Its relative 95 % uncertainty (see [`TOLERANCE_RULE`]); `None` when some job's runs
    /// alone are not known.
    pub uncertainty: Option<f64>,
    /// The distinct runs alone divided by, sorted.
    pub runs: Vec<String>,
    /// The hosts (short ids) of the counted runs, sorted.
    pub hosts: Vec<String>,
}

/// The counted runs of a workload: ok, not superseded, with an aggregate ratio.
fn counted_runs<'a>(r: &'a Results, id: &str) -> Vec<&'a RunResult> {
    r.runs
        .iter()
        .filter(|x| x.workload_id == id && x.status == RunStatus::Ok && !x.superseded && x.aggregate_ratio.is_some())
        .collect()
}

/// A workload's baseline in campaign `r` (see [`WorkloadBaseline`]); `None` without a job
/// with a baseline.
pub fn workload_baseline(r: &Results, w: &WorkloadResult) -> Option<WorkloadBaseline> {
    let runs = counted_runs(r, &w.id);
    // Per job: its baseline and its model's key; per key, the distinct runs alone (throughput,
    // window interval).
    let mut jobs: Vec<(f64, String)> = Vec::new();
    let mut pools: BTreeMap<String, BTreeMap<String, (f64, Option<f64>)>> = BTreeMap::new();
    let mut unknown = false;
    for run in &runs {
        for j in &run.jobs {
            let key = w
                .jobs
                .get(j.index as usize)
                .map(|p| format!("{} {} b{}", p.model, p.dataset, p.batch_size))
                .unwrap_or_else(|| format!("job {}", j.index));
            let b = if j.baseline_runs.is_empty() {
                unknown = true;
                j.throughput.zip(j.slowdown).map(|(t, s)| t * s)
            } else {
                let pool = pools.entry(key.clone()).or_default();
                for b in &j.baseline_runs {
                    pool.insert(b.run_id.clone(), (b.throughput, b.ci_rel));
                }
                median(j.baseline_runs.iter().map(|b| b.throughput))
            };
            if let Some(b) = b.filter(|b| b.is_finite() && *b > 0.0) {
                jobs.push((b, key));
            }
        }
    }
    if jobs.is_empty() {
        return None;
    }
    let sum: f64 = jobs.iter().map(|(b, _)| b).sum();
    let mean = sum / jobs.len() as f64;
    let per_key: BTreeMap<&String, Option<f64>> = pools
        .iter()
        .map(|(k, pool)| {
            let tps: Vec<f64> = pool.values().map(|(t, _)| *t).collect();
            let u = median_interval(&tps).and_then(|([lo, hi], _)| {
                let m = median(tps.iter().copied())?;
                let ci = median(pool.values().filter_map(|(_, c)| *c)).unwrap_or(0.0);
                (m > 0.0).then(|| ((hi - lo) / 2.0 / m).hypot(ci))
            });
            (k, u)
        })
        .collect();
    let uncertainty = if unknown {
        None
    } else {
        jobs.iter().map(|(b, k)| per_key.get(k).copied().flatten().map(|u| b * u)).sum::<Option<f64>>().map(|s| s / sum)
    };
    let distinct: BTreeSet<String> = pools.values().flat_map(|p| p.keys().cloned()).collect();
    let hosts: BTreeSet<String> = runs.iter().map(|x| short_host(x.host_id.as_deref())).collect();
    Some(WorkloadBaseline {
        mean,
        uncertainty,
        runs: distinct.into_iter().collect(),
        hosts: hosts.into_iter().collect(),
    })
}

/// A workload's verdict; in JSON its words, as [`WorkloadVerdict::as_str`] gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum WorkloadVerdict {
    #[serde(rename = "agrees")]
    Agrees,
    /// STP outside its tolerance, the aggregate throughput within its, the baseline outside
    /// its own: the host runs a model alone faster or slower. Not a failure.
    #[serde(rename = "agrees, the host differs")]
    HostDiffers,
    #[serde(rename = "differs")]
    Differs,
    #[serde(rename = "only in base")]
    OnlyInBase,
    #[serde(rename = "only in new")]
    OnlyInNew,
}

impl WorkloadVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadVerdict::Agrees => "agrees",
            WorkloadVerdict::HostDiffers => "agrees, the host differs",
            WorkloadVerdict::Differs => "differs",
            WorkloadVerdict::OnlyInBase => "only in base",
            WorkloadVerdict::OnlyInNew => "only in new",
        }
    }
}

/// A workload of either campaign.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorkloadRow {
    pub id: String,
    pub data: String,
    pub verdict: WorkloadVerdict,
    /// The aggregate throughput ratio (STP); `None` unless measured in both.
    pub ratio: Option<Compared>,
    /// The aggregate throughput, images per second: same GPU model only.
    pub throughput: Option<Compared>,
    /// The baseline ([`WorkloadBaseline::mean`]), images per second: same GPU model only,
    /// and only when both campaigns' baselines have an uncertainty.
    pub baseline: Option<Compared>,
    /// STP's difference split into the aggregate and the baseline factor; `None` unless
    /// both campaigns have both.
    pub factors: Option<Factors>,
    /// Each campaign's 95 % interval of STP (`[low, high]`), when it has one.
    pub base_interval: Option<[f64; 2]>,
    pub new_interval: Option<[f64; 2]>,
    /// Each campaign's baseline of the workload.
    pub base_baseline: Option<WorkloadBaseline>,
    pub new_baseline: Option<WorkloadBaseline>,
    /// Some campaign had no 95 % interval: the old rule made its uncertainty (`notes` says
    /// which).
    pub old_rule: bool,
    /// What a reader should know of the row: the old rule's use, the analysis' reasons to
    /// doubt a campaign's ratios (`base: …`, `new: …`). Text from the traces, unescaped.
    pub notes: Vec<String>,
    /// The ratio of the one campaign that has it (`only in …`).
    pub only_ratio: Option<f64>,
}

impl WorkloadRow {
    /// The base's STP median lies inside the new campaign's 95 % interval.
    pub fn base_in_new(&self) -> Option<bool> {
        Some(inside(self.ratio.as_ref()?.base, self.new_interval?))
    }

    /// The new STP median lies inside the base's 95 % interval.
    pub fn new_in_base(&self) -> Option<bool> {
        Some(inside(self.ratio.as_ref()?.new, self.base_interval?))
    }
}

fn inside(v: f64, [lo, hi]: [f64; 2]) -> bool {
    lo <= v && v <= hi
}

/// A campaign's baseline of one model on one host, as the analysis gives it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HostBaselineRow {
    /// `base` or `new`.
    pub side: &'static str,
    pub model: String,
    pub dataset: String,
    pub batch_size: u32,
    pub data: String,
    /// The GPU's UUID as the trace names it (unescaped); `None` when unnamed.
    pub host: Option<String>,
    /// Median throughput over the host's runs alone, images per second, and their number.
    pub median: f64,
    pub runs: u32,
}

/// A claim's headline grades side by side.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ClaimRow {
    pub id: String,
    /// The base's headline grade; `null` when the campaign has no such claim.
    pub base_verdict: Option<Grade>,
    /// The data source of the base's headline grade; `null` when measured on none.
    pub base_data: Option<String>,
    /// The new campaign's headline grade; `null` when it has no such claim.
    pub new_verdict: Option<Grade>,
    /// The data source of the new campaign's headline grade; `null` when measured on none.
    pub new_data: Option<String>,
    /// `holds (generated)`, `not run`; `—` when the campaign has no such claim.
    pub base_grade: String,
    /// The headline source's values, ours / paper's: `1.20 / 4, 1`.
    pub base_value: String,
    pub new_grade: String,
    pub new_value: String,
}

impl ClaimRow {
    pub fn same_grade(&self) -> bool {
        self.base_grade == self.new_grade
    }
}

/// One campaign of a comparison.
pub struct Side<'a> {
    /// How the user named it (the directory as given).
    pub label: &'a str,
    pub results: &'a Results,
    pub claims: &'a [ClaimOutcome],
}

/// What a side says of itself in the outputs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SideInfo {
    pub label: String,
    pub campaign: String,
    pub gpu: String,
    pub simulated: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub base: SideInfo,
    pub new: SideInfo,
    /// Both campaigns ran on one GPU model (the same, non-empty GPU names): absolute
    /// throughputs are compared too.
    pub same_gpu: bool,
    /// Sorted by workload id.
    pub workloads: Vec<WorkloadRow>,
    /// Both campaigns' baselines per host of the models the workloads measured in both
    /// run: the base's, then the new's, each by model, data and host.
    pub baselines: Vec<HostBaselineRow>,
    /// In the base's order, then the new's own.
    pub claims: Vec<ClaimRow>,
}

/// A workload is measured when its runs are ok and give an aggregate ratio.
fn measured(r: &Results) -> impl Iterator<Item = &WorkloadResult> {
    r.workloads.iter().filter(|w| w.status == RunStatus::Ok && w.stats.aggregate_ratio.is_some())
}

fn compared(floor: f64, b: f64, n: f64, u_base: f64, u_new: f64) -> Option<Compared> {
    (b > 0.0 && b.is_finite() && n.is_finite()).then(|| Compared {
        base: b,
        new: n,
        difference: n / b - 1.0,
        tolerance: tolerance(floor, u_base, u_new),
    })
}

/// One campaign's relative uncertainty of STP (`stp: true`) or of the aggregate throughput:
/// from its 95 % interval, else by the old rule (`true` in the second place).
fn uncertainty(w: &WorkloadResult, value: &Stats, stp: bool) -> (f64, bool) {
    let interval = w.intervals.map(|i| if stp { i.stp } else { i.aggregate_throughput });
    match interval.and_then(|i| interval_spread(i, value.median)) {
        Some(u) => (u, false),
        None => (spread(value, w.stats.throughput_ci_rel.as_ref()), true),
    }
}

fn side_info(s: &Side<'_>) -> SideInfo {
    SideInfo {
        label: s.label.to_string(),
        campaign: s.results.campaign.clone(),
        gpu: s.results.gpu_name(),
        simulated: s.results.simulated,
    }
}

/// One workload measured in both.
fn both(same_gpu: bool, b: &Results, wb: &WorkloadResult, n: &Results, wn: &WorkloadResult) -> WorkloadRow {
    let floor = floor(&wb.data);
    let (bs, ns) = (&wb.stats, &wn.stats);
    let mut notes = Vec::new();
    let mut old_rule = false;
    let mut note_old = |side: &str, what: &str| {
        old_rule = true;
        notes.push(format!("{side}: no 95 % interval of {what}, its uncertainty by the old rule"));
    };
    let ratio = match (bs.aggregate_ratio, ns.aggregate_ratio) {
        (Some(x), Some(y)) => {
            let (ub, ob) = uncertainty(wb, &x, true);
            let (un, on) = uncertainty(wn, &y, true);
            if ob {
                note_old("base", "STP");
            }
            if on {
                note_old("new", "STP");
            }
            compared(floor, x.median, y.median, ub, un)
        }
        _ => None,
    };
    let throughput = match (same_gpu, bs.aggregate_throughput, ns.aggregate_throughput) {
        (true, Some(x), Some(y)) => {
            let (ub, ob) = uncertainty(wb, &x, false);
            let (un, on) = uncertainty(wn, &y, false);
            if ob {
                note_old("base", "the aggregate throughput");
            }
            if on {
                note_old("new", "the aggregate throughput");
            }
            compared(floor, x.median, y.median, ub, un)
        }
        _ => None,
    };
    let (base_baseline, new_baseline) = (workload_baseline(b, wb), workload_baseline(n, wn));
    let baseline = match (same_gpu, &base_baseline, &new_baseline) {
        (true, Some(x), Some(y)) => match (x.uncertainty, y.uncertainty) {
            (Some(ub), Some(un)) => compared(floor, x.mean, y.mean, ub, un),
            _ => {
                notes.push("the runs alone of some job are not known: baselines not compared".to_string());
                None
            }
        },
        _ => None,
    };
    let factors = match (bs.aggregate_ratio, ns.aggregate_ratio, bs.aggregate_throughput, ns.aggregate_throughput) {
        (Some(rb), Some(rn), Some(ab), Some(an)) => match (&base_baseline, &new_baseline) {
            (Some(x), Some(y)) if rb.median > 0.0 && ab.median > 0.0 => Some(Factors {
                stp: rn.median / rb.median,
                aggregate: an.median / ab.median,
                baseline: y.mean / x.mean,
            }),
            _ => None,
        },
        _ => None,
    };
    for (side, w) in [("base", wb), ("new", wn)] {
        notes.extend(w.implausible.iter().map(|r| format!("{side}: {r}")));
    }
    let stp_ok = ratio.as_ref().is_some_and(Compared::agrees);
    let verdict = if stp_ok && throughput.as_ref().is_none_or(Compared::agrees) {
        WorkloadVerdict::Agrees
    } else if ratio.is_some()
        && !stp_ok
        && throughput.as_ref().is_some_and(Compared::agrees)
        && baseline.as_ref().is_some_and(|c| !c.agrees())
    {
        WorkloadVerdict::HostDiffers
    } else {
        WorkloadVerdict::Differs
    };
    WorkloadRow {
        id: wb.id.clone(),
        data: wb.data.clone(),
        verdict,
        ratio,
        throughput,
        baseline,
        factors,
        base_interval: wb.intervals.map(|i| i.stp),
        new_interval: wn.intervals.map(|i| i.stp),
        base_baseline,
        new_baseline,
        old_rule,
        notes,
        only_ratio: None,
    }
}

/// The baselines per host of the models that the workloads in `ids` run.
fn host_baselines(side: &'static str, r: &Results, ids: &BTreeSet<&str>) -> Vec<HostBaselineRow> {
    let used: BTreeSet<(String, String, u32, String)> = r
        .workloads
        .iter()
        .filter(|w| ids.contains(w.id.as_str()))
        .flat_map(|w| w.jobs.iter().map(|j| (j.model.clone(), j.dataset.clone(), j.batch_size, w.data.clone())))
        .collect();
    let mut rows: Vec<HostBaselineRow> = r
        .baselines
        .iter()
        .filter(|b| used.contains(&(b.model.clone(), b.dataset.clone(), b.batch_size, b.data.clone())))
        .flat_map(|b| {
            b.hosts.iter().map(move |h| HostBaselineRow {
                side,
                model: b.model.clone(),
                dataset: b.dataset.clone(),
                batch_size: b.batch_size,
                data: b.data.clone(),
                host: h.host_id.clone(),
                median: h.throughput.median,
                runs: h.throughput.n,
            })
        })
        .collect();
    rows.sort_by(|a, b| (&a.model, a.batch_size, &a.data, &a.host).cmp(&(&b.model, b.batch_size, &b.data, &b.host)));
    rows
}

/// Compares the workloads and claims of `new` against those of `base`.
pub fn compare(base: &Side<'_>, new: &Side<'_>) -> Comparison {
    let (b, n) = (base.results, new.results);
    let same_gpu = !b.provenance.gpu_names.is_empty() && b.provenance.gpu_names == n.provenance.gpu_names;
    let ids: BTreeSet<&str> = measured(b).chain(measured(n)).map(|w| w.id.as_str()).collect();
    let find = |r: &'_ Results, id: &str| measured(r).find(|w| w.id == id).cloned();
    let workloads: Vec<WorkloadRow> = ids
        .iter()
        .map(|&id| match (find(b, id), find(n, id)) {
            (Some(wb), Some(wn)) => both(same_gpu, b, &wb, n, &wn),
            (Some(w), None) | (None, Some(w)) => WorkloadRow {
                id: id.to_string(),
                data: w.data.clone(),
                verdict: if find(b, id).is_some() { WorkloadVerdict::OnlyInBase } else { WorkloadVerdict::OnlyInNew },
                ratio: None,
                throughput: None,
                baseline: None,
                factors: None,
                base_interval: None,
                new_interval: None,
                base_baseline: None,
                new_baseline: None,
                old_rule: false,
                notes: Vec::new(),
                only_ratio: w.stats.aggregate_ratio.map(|s| s.median),
            },
            (None, None) => unreachable!("every id comes from one of the campaigns"),
        })
        .collect();
    let in_both: BTreeSet<&str> = workloads.iter().filter(|w| w.ratio.is_some()).map(|w| w.id.as_str()).collect();
    let mut baselines = host_baselines("base", b, &in_both);
    baselines.extend(host_baselines("new", n, &in_both));

    let mut claim_ids: Vec<&str> = Vec::new();
    for c in base.claims.iter().chain(new.claims) {
        if !claim_ids.contains(&c.id.as_str()) {
            claim_ids.push(&c.id);
        }
    }
    let grade = |cs: &[ClaimOutcome], id: &str| -> (String, String) {
        match cs.iter().find(|c| c.id == id) {
            Some(c) => (
                crate::claims::headline_text(c),
                c.headline()
                    .map(|s| s.checks.iter().map(crate::claims::ours_over_paper).collect::<Vec<_>>().join(", "))
                    .unwrap_or_else(|| "—".to_string()),
            ),
            None => ("—".to_string(), "—".to_string()),
        }
    };
    let headline = |cs: &[ClaimOutcome], id: &str| {
        cs.iter().find(|c| c.id == id).map(|c| (Grade::from(c.verdict), c.headline_data.clone()))
    };
    let claims = claim_ids
        .into_iter()
        .map(|id| {
            let (base_grade, base_value) = grade(base.claims, id);
            let (new_grade, new_value) = grade(new.claims, id);
            let (base_verdict, base_data) = headline(base.claims, id).unzip();
            let (new_verdict, new_data) = headline(new.claims, id).unzip();
            ClaimRow {
                id: id.to_string(),
                base_verdict,
                base_data: base_data.flatten(),
                new_verdict,
                new_data: new_data.flatten(),
                base_grade,
                base_value,
                new_grade,
                new_value,
            }
        })
        .collect();
    Comparison { base: side_info(base), new: side_info(new), same_gpu, workloads, baselines, claims }
}

/// `+10.0 %`.
fn pct(v: f64) -> String {
    format!("{:+.1} %", v * 100.0)
}

/// `±2.0 %`.
fn tol(v: f64) -> String {
    format!("±{:.1} %", v * 100.0)
}

/// `1.881 [1.80–1.95]`, or the value alone without an interval.
fn with_interval(v: f64, i: Option<[f64; 2]>) -> String {
    match i {
        Some([lo, hi]) => format!("{v:.3} [{lo:.3}–{hi:.3}]"),
        None => format!("{v:.3}"),
    }
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "—",
    }
}

/// Minimum, median and maximum of the tolerances: `±5.0–8.2 % (median ±6.1 %)`.
fn widths(v: impl IntoIterator<Item = f64>) -> Option<String> {
    let mut v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
    let m = median(v.iter().copied())?;
    v.sort_by(f64::total_cmp);
    Some(format!("±{:.1}–{:.1} % (median ±{:.1} %)", v[0] * 100.0, v[v.len() - 1] * 100.0, m * 100.0))
}

impl Comparison {
    pub fn count(&self, v: WorkloadVerdict) -> usize {
        self.workloads.iter().filter(|w| w.verdict == v).count()
    }

    /// Some workload measured in both differs (`agrees, the host differs` does not count).
    pub fn differs(&self) -> bool {
        self.count(WorkloadVerdict::Differs) > 0
    }

    fn gpu_note(&self) -> String {
        if self.same_gpu {
            format!("Both on {}: STP, absolute aggregate throughputs and baselines compared.", self.base.gpu)
        } else {
            format!(
                "Different GPU models ({} vs {}): only STP and the claims are compared, not absolute \
                 throughputs (the factors are shown, not judged).",
                self.base.gpu, self.new.gpu
            )
        }
    }

    fn counts_line(&self) -> String {
        format!(
            "{} agree, {} agree but the host differs, {} differ, {} only in base, {} only in new",
            self.count(WorkloadVerdict::Agrees),
            self.count(WorkloadVerdict::HostDiffers),
            self.count(WorkloadVerdict::Differs),
            self.count(WorkloadVerdict::OnlyInBase),
            self.count(WorkloadVerdict::OnlyInNew)
        )
    }

    /// The tolerances' widths over the workloads compared: one line per value.
    pub fn tolerance_widths(&self) -> Vec<String> {
        let mut out = Vec::new();
        let of =
            |f: fn(&WorkloadRow) -> Option<&Compared>| widths(self.workloads.iter().filter_map(f).map(|c| c.tolerance));
        for (what, w) in [
            ("STP", of(|w| w.ratio.as_ref())),
            ("aggregate throughput", of(|w| w.throughput.as_ref())),
            ("baseline", of(|w| w.baseline.as_ref())),
        ] {
            if let Some(w) = w {
                out.push(format!("{what} {w}"));
            }
        }
        let old = self.workloads.iter().filter(|w| w.old_rule).count();
        if old > 0 {
            out.push(format!("{old} workload(s) by the old rule (no 95 % interval)"));
        }
        out
    }

    fn side_text(s: &SideInfo) -> String {
        let sim = if s.simulated { ", SIMULATED" } else { "" };
        format!("{} (campaign {}, {}{sim})", s.label, s.campaign, s.gpu)
    }

    /// One line per workload that does not simply agree: its values in both.
    fn differing_line(w: &WorkloadRow) -> String {
        let mut s = format!("  {} [{}]:", w.id, w.verdict.as_str());
        if let Some(r) = &w.ratio {
            s.push_str(&format!(
                " STP base {}, new {} ({}, tolerance {})",
                with_interval(r.base, w.base_interval),
                with_interval(r.new, w.new_interval),
                pct(r.difference),
                tol(r.tolerance)
            ));
        }
        if let Some(t) = &w.throughput {
            s.push_str(&format!(
                "; img/s base {:.0}, new {:.0} ({}, tolerance {})",
                t.base,
                t.new,
                pct(t.difference),
                tol(t.tolerance)
            ));
        }
        if let Some(t) = &w.baseline {
            s.push_str(&format!(
                "; baseline img/s base {:.0}, new {:.0} ({}, tolerance {})",
                t.base,
                t.new,
                pct(t.difference),
                tol(t.tolerance)
            ));
        }
        if let Some(f) = &w.factors {
            s.push_str(&format!("; factors: aggregate ×{:.3}, baseline ×{:.3}", f.aggregate, f.baseline));
        }
        s
    }

    fn host_baseline_text(h: &HostBaselineRow) -> String {
        format!(
            "{} {} b{} ({}) on {}: {:.0} img/s, median of {} run{}",
            h.side,
            h.model,
            h.batch_size,
            h.data,
            short_host(h.host.as_deref()),
            h.median,
            h.runs,
            if h.runs == 1 { "" } else { "s" }
        )
    }

    /// The short console summary.
    pub fn console(&self) -> String {
        let mut out = format!(
            "compare: base {}\n     vs new  {}\n{}\n{}\n",
            Self::side_text(&self.base),
            Self::side_text(&self.new),
            self.gpu_note(),
            self.counts_line()
        );
        let widths = self.tolerance_widths();
        if !widths.is_empty() {
            out.push_str(&format!("tolerances (95 %): {}\n", widths.join("; ")));
        }
        for w in self
            .workloads
            .iter()
            .filter(|w| matches!(w.verdict, WorkloadVerdict::Differs | WorkloadVerdict::HostDiffers))
        {
            out.push_str(&Self::differing_line(w));
            out.push('\n');
        }
        if !self.baselines.is_empty() {
            out.push_str("baselines per host:\n");
            for h in &self.baselines {
                out.push_str(&format!("  {}\n", Self::host_baseline_text(h)));
            }
        }
        let changed: Vec<&ClaimRow> = self.claims.iter().filter(|c| !c.same_grade()).collect();
        out.push_str(&format!(
            "claims: {} of {} with the same grade\n",
            self.claims.len() - changed.len(),
            self.claims.len()
        ));
        for c in changed {
            out.push_str(&format!("  {}: base {}, new {}\n", c.id, c.base_grade, c.new_grade));
        }
        out
    }

    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut out = String::from("# Comparison of two campaigns\n\n");
        let side = |s: &SideInfo| md(&Self::side_text(s));
        out.push_str(&format!("- base: {}\n- new: {}\n\n", side(&self.base), side(&self.new)));
        out.push_str(&format!("{}\n\n", md(&self.gpu_note())));
        out.push_str(&format!("Workloads: {}.\n\n", self.counts_line()));
        out.push_str(&format!(
            "Compared: for each workload measured in both (same id, ok runs), the median over repetitions of the \
             aggregate throughput ratio (STP: each job's throughput over its model alone on the whole GPU, summed), \
             with each campaign's 95 % interval [low–high]{}; difference = new / base − 1. STP's ratio new / base \
             splits into the aggregate factor (the collocated aggregate throughput, new / base) over the baseline \
             factor (the workload's baseline — the job-weighted mean of what its jobs' ratios divide by — new / \
             base).\n\n{TOLERANCE_RULE}\n\n{VERDICT_RULE}\n\n",
            if self.same_gpu { ", of the aggregate throughput (img/s) and of the baseline (img/s)" } else { "" }
        ));
        let widths = self.tolerance_widths();
        if !widths.is_empty() {
            out.push_str(&format!("Tolerances here: {}.\n\n", md(&widths.join("; "))));
        }
        self.md_workloads(&mut out);
        self.md_factors(&mut out);
        self.md_baselines(&mut out);
        self.md_claims(&mut out);
        out
    }

    /// The workloads table, with the notes of those that have any.
    fn md_workloads(&self, out: &mut String) {
        let dash = || "—".to_string();
        out.push_str("## Workloads\n\n");
        let header = [
            "Workload",
            "Data",
            "STP base [95 %]",
            "STP new [95 %]",
            "Difference",
            "Tolerance",
            "Base in new's 95 %",
            "New in base's 95 %",
            "Aggregate factor",
            "Baseline factor",
            "Verdict",
        ];
        out.push_str(&format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len())));
        for w in &self.workloads {
            let mut cells = vec![md(&w.id), md(&w.data)];
            match &w.ratio {
                Some(r) => cells.extend([
                    with_interval(r.base, w.base_interval),
                    with_interval(r.new, w.new_interval),
                    pct(r.difference),
                    tol(r.tolerance),
                ]),
                None => {
                    let v = w.only_ratio.map_or_else(dash, |v| format!("{v:.3}"));
                    let (b, n) = match w.verdict {
                        WorkloadVerdict::OnlyInBase => (v, dash()),
                        WorkloadVerdict::OnlyInNew => (dash(), v),
                        _ => (dash(), dash()),
                    };
                    cells.extend([b, n, dash(), dash()]);
                }
            }
            cells.push(yes_no(w.base_in_new()).to_string());
            cells.push(yes_no(w.new_in_base()).to_string());
            let factor = |f: Option<f64>, c: Option<&Compared>| match (f, c) {
                (Some(f), Some(c)) => format!("×{f:.3} ({})", tol(c.tolerance)),
                (Some(f), None) => format!("×{f:.3}"),
                _ => dash(),
            };
            cells.push(factor(w.factors.map(|f| f.aggregate), w.throughput.as_ref()));
            cells.push(factor(w.factors.map(|f| f.baseline), w.baseline.as_ref()));
            cells.push(match w.verdict {
                WorkloadVerdict::Differs => "**differs**".to_string(),
                v => v.as_str().to_string(),
            });
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        let noted: Vec<&WorkloadRow> = self.workloads.iter().filter(|w| !w.notes.is_empty()).collect();
        if !noted.is_empty() {
            out.push('\n');
            for w in noted {
                out.push_str(&format!("- {}: {}\n", md(&w.id), md(&w.notes.join("; "))));
            }
        }
    }

    /// Per workload measured in both: the aggregate and baseline factors, and the runs alone of those that do not simply agree.
    fn md_factors(&self, out: &mut String) {
        let dash = || "—".to_string();
        let compared: Vec<&WorkloadRow> = self.workloads.iter().filter(|w| w.ratio.is_some()).collect();
        if !compared.is_empty() {
            out.push_str(
                "\n## Aggregate throughput and baseline\n\nPer workload measured in both: the aggregate throughput \
                 (img/s, median over repetitions) and the baseline (img/s) of each campaign, with the hosts its runs \
                 ran on; factor = new / base, tolerance as above (on one GPU model). STP's ratio = aggregate factor / \
                 baseline factor × (1 + residual); the residual is 0 when every job divides by one baseline.\n\n\
                 | Workload | img/s base | img/s new | Aggregate factor | Tolerance | Baseline base | Baseline new | \
                 Baseline factor | Tolerance | Residual | Hosts base | Hosts new |\n\
                 |---|---|---|---|---|---|---|---|---|---|---|---|\n",
            );
            for w in compared {
                let num = |v: Option<f64>, d: usize| v.map_or_else(dash, |v| format!("{v:.d$}"));
                let agg = |b: bool| w.throughput.as_ref().map(|c| if b { c.base } else { c.new });
                let hosts = |b: &Option<WorkloadBaseline>| b.as_ref().map_or_else(dash, |b| md(&b.hosts.join(", ")));
                let cells = [
                    md(&w.id),
                    num(agg(true), 0),
                    num(agg(false), 0),
                    w.factors.map_or_else(dash, |f| format!("×{:.3}", f.aggregate)),
                    w.throughput.as_ref().map_or_else(dash, |c| tol(c.tolerance)),
                    num(w.base_baseline.as_ref().map(|b| b.mean), 0),
                    num(w.new_baseline.as_ref().map(|b| b.mean), 0),
                    w.factors.map_or_else(dash, |f| format!("×{:.3}", f.baseline)),
                    w.baseline.as_ref().map_or_else(dash, |c| tol(c.tolerance)),
                    w.factors.map_or_else(dash, |f| pct(f.residual())),
                    hosts(&w.base_baseline),
                    hosts(&w.new_baseline),
                ];
                out.push_str(&format!("| {} |\n", cells.join(" | ")));
            }
            let unsettled: Vec<&WorkloadRow> = self
                .workloads
                .iter()
                .filter(|w| matches!(w.verdict, WorkloadVerdict::Differs | WorkloadVerdict::HostDiffers))
                .collect();
            if !unsettled.is_empty() {
                out.push_str("\nThe runs alone each workload that does not simply agree divided by:\n\n");
                for w in unsettled {
                    let runs = |b: &Option<WorkloadBaseline>| {
                        b.as_ref().map_or_else(dash, |b| {
                            let u = b.uncertainty.map_or_else(String::new, |u| format!(", {}", tol(u)));
                            format!("{:.0} img/s{u} from {}", b.mean, md(&b.runs.join(", ")))
                        })
                    };
                    out.push_str(&format!(
                        "- {}: base {}; new {}\n",
                        md(&w.id),
                        runs(&w.base_baseline),
                        runs(&w.new_baseline)
                    ));
                }
            }
        }
    }

    /// Each campaign's runs alone per host.
    fn md_baselines(&self, out: &mut String) {
        if !self.baselines.is_empty() {
            out.push_str(
                "\n## Baselines per host\n\nEach campaign's runs alone of the models these workloads run, per host \
                 (the GPU's UUID, cut to its first group): the median throughput over the host's runs and their \
                 number.\n\n| Campaign | Model | Batch | Data | Host | Median img/s | Runs |\n\
                 |---|---|---|---|---|---|---|\n",
            );
            for h in &self.baselines {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {:.0} | {} |\n",
                    h.side,
                    md(&h.model),
                    h.batch_size,
                    md(&h.data),
                    md(&short_host(h.host.as_deref())),
                    h.median,
                    h.runs
                ));
            }
        }
    }

    /// The claims' grades side by side.
    fn md_claims(&self, out: &mut String) {
        out.push_str(
            "\n## Claims\n\nThe headline grade of each claim in both campaigns, with the headline source's values \
             (ours / paper's).\n\n| Claim | Base grade | Base value | New grade | New value | Same grade |\n\
             |---|---|---|---|---|---|\n",
        );
        for c in &self.claims {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                md(&c.id),
                md(&c.base_grade),
                md(&c.base_value),
                md(&c.new_grade),
                md(&c.new_value),
                if c.same_grade() { "yes" } else { "**no**" }
            ));
        }
    }

    /// The workloads as CSV, one row each; empty cells where a value is not compared.
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "workload,data,verdict,base_ratio,new_ratio,ratio_difference,ratio_tolerance,\
             base_throughput,new_throughput,throughput_difference,throughput_tolerance,\
             base_ratio_low,base_ratio_high,new_ratio_low,new_ratio_high,base_in_new_interval,new_in_base_interval,\
             base_baseline,new_baseline,baseline_difference,baseline_tolerance,\
             aggregate_factor,baseline_factor,factor_residual,tolerance_basis\n",
        );
        let cells = |c: &Option<Compared>| match c {
            Some(c) => format!("{},{},{},{}", c.base, c.new, c.difference, c.tolerance),
            None => ",,,".to_string(),
        };
        let opt = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
        let interval = |i: Option<[f64; 2]>| i.map_or_else(|| ",".to_string(), |[lo, hi]| format!("{lo},{hi}"));
        let flag = |v: Option<bool>| v.map_or_else(String::new, |v| v.to_string());
        for w in &self.workloads {
            let ratio = match (&w.ratio, w.verdict, w.only_ratio) {
                (None, WorkloadVerdict::OnlyInBase, Some(v)) => format!("{v},,,"),
                (None, WorkloadVerdict::OnlyInNew, Some(v)) => format!(",{v},,"),
                _ => cells(&w.ratio),
            };
            let basis = match (&w.ratio, w.old_rule) {
                (None, _) => "",
                (Some(_), false) => "intervals",
                (Some(_), true) => "old rule",
            };
            // The baselines' means even where they are not compared (another GPU model).
            let baseline = match &w.baseline {
                Some(_) => cells(&w.baseline),
                None => format!(
                    "{},{},,",
                    opt(w.base_baseline.as_ref().map(|b| b.mean)),
                    opt(w.new_baseline.as_ref().map(|b| b.mean))
                ),
            };
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&w.id),
                csv_field(&w.data),
                csv_field(w.verdict.as_str()),
                ratio,
                cells(&w.throughput),
                interval(w.base_interval),
                interval(w.new_interval),
                flag(w.base_in_new()),
                flag(w.new_in_base()),
                baseline,
                opt(w.factors.map(|f| f.aggregate)),
                opt(w.factors.map(|f| f.baseline)),
                opt(w.factors.map(|f| f.residual())),
                basis
            ));
        }
        out
    }
}

/// What `cargo xtask compare --json` prints (`schemas/compare.schema.json` is generated
/// from it): the comparison, with its totals.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Document {
    /// The format of this document: 1.
    pub format_version: u32,
    pub base: SideInfo,
    pub new: SideInfo,
    /// Both campaigns ran on one GPU model (the same, non-empty GPU names): absolute
    /// throughputs and baselines are judged too; otherwise only STP and the claims.
    pub same_gpu: bool,
    pub totals: Totals,
    /// Some workload measured in both differs (`agrees, the host differs` does not count):
    /// the exit status is 1, else 0.
    pub differs: bool,
    /// The tolerances' widths over the workloads compared, in words, one line per value.
    pub tolerance_widths: Vec<String>,
    /// Every workload of either campaign, sorted by id.
    pub workloads: Vec<WorkloadEntry>,
    /// Both campaigns' baselines per host of the models the workloads measured in both run.
    pub baselines: Vec<HostBaselineRow>,
    /// Every claim of either campaign: the base's order, then the new's own.
    pub claims: Vec<ClaimRow>,
    /// The files written (`compare.md`, `.csv`, `.svg`, `.png`).
    pub files: Vec<String>,
}

/// How many workloads have each verdict, and how many claims the same grade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Totals {
    pub workloads: usize,
    pub agrees: usize,
    pub host_differs: usize,
    pub differs: usize,
    pub only_in_base: usize,
    pub only_in_new: usize,
    pub claims: usize,
    /// Claims whose headline grade (with its data source) is the same in both.
    pub claims_same_grade: usize,
}

/// A workload of either campaign, with what follows from its row.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorkloadEntry {
    #[serde(flatten)]
    pub row: WorkloadRow,
    /// The base's STP lies inside the new campaign's 95 % interval (`null`: not known).
    pub base_in_new: Option<bool>,
    /// The new STP lies inside the base's 95 % interval (`null`: not known).
    pub new_in_base: Option<bool>,
    /// What the two factors leave of STP's ratio (see [`Factors::residual`]).
    pub factor_residual: Option<f64>,
}

impl Comparison {
    /// The machine-readable document, naming the `files` written.
    pub fn document(&self, files: Vec<String>) -> Document {
        let totals = Totals {
            workloads: self.workloads.len(),
            agrees: self.count(WorkloadVerdict::Agrees),
            host_differs: self.count(WorkloadVerdict::HostDiffers),
            differs: self.count(WorkloadVerdict::Differs),
            only_in_base: self.count(WorkloadVerdict::OnlyInBase),
            only_in_new: self.count(WorkloadVerdict::OnlyInNew),
            claims: self.claims.len(),
            claims_same_grade: self.claims.iter().filter(|c| c.same_grade()).count(),
        };
        Document {
            format_version: FORMAT_VERSION,
            base: self.base.clone(),
            new: self.new.clone(),
            same_gpu: self.same_gpu,
            totals,
            differs: self.differs(),
            tolerance_widths: self.tolerance_widths(),
            workloads: self
                .workloads
                .iter()
                .map(|w| WorkloadEntry {
                    row: w.clone(),
                    base_in_new: w.base_in_new(),
                    new_in_base: w.new_in_base(),
                    factor_residual: w.factors.map(|f| f.residual()),
                })
                .collect(),
            baselines: self.baselines.clone(),
            claims: self.claims.clone(),
            files,
        }
    }
}

/// The JSON Schema of [`Document`], as published in `schemas/compare.schema.json`.
pub fn document_schema() -> String {
    crate::json::schema_text(schemars::schema_for!(Document))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median: f64, min: f64, max: f64) -> Stats {
        Stats { median, min, max, n: 3 }
    }

    #[test]
    fn the_old_rule_is_the_floor_or_the_combined_uncertainty() {
        assert_eq!(floor("synthetic"), 0.02);
        assert_eq!(floor("generated"), 0.05);
        assert_eq!(floor("imagefolder"), 0.05);
        // Half-range 1.5 % (doubled: 3 %), CI 4 %: uncertainty 5 %.
        let s = spread(&stats(1.0, 0.985, 1.015), Some(&stats(0.04, 0.0, 1.0)));
        assert!((s - 0.05).abs() < 1e-12, "{s}");
        // Both sides 5 %: sqrt(2) · 5 % ≈ 7.1 %, above either floor.
        assert!((tolerance(0.02, s, s) - 0.05 * 2f64.sqrt()).abs() < 1e-12);
        // A tight campaign falls back to the floor.
        let tight = spread(&stats(2.0, 2.0, 2.0), Some(&stats(0.001, 0.0, 1.0)));
        assert_eq!(tolerance(0.02, tight, tight), 0.02);
        assert_eq!(spread(&stats(2.0, 2.0, 2.0), None), 0.0);
    }

    #[test]
    fn an_interval_gives_its_relative_half_width() {
        assert!((interval_spread([1.9, 2.1], 2.0).unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(interval_spread([2.1, 1.9], 2.0), None);
        assert_eq!(interval_spread([1.9, f64::NAN], 2.0), None);
        assert_eq!(interval_spread([1.9, 2.1], 0.0), None);
        // 3 % and 4 %: 5 % combined, above the synthetic floor.
        let (a, b) = (interval_spread([0.97, 1.03], 1.0).unwrap(), interval_spread([0.96, 1.04], 1.0).unwrap());
        assert!((tolerance(SYNTHETIC_FLOOR, a, b) - 0.05).abs() < 1e-12);
    }

    #[test]
    fn the_interval_of_a_median_is_distribution_free() {
        // Coverage of [x(k), x(n+1−k)]: 1 − 2 P(Binomial(n, ½) ≤ k − 1).
        assert!((median_coverage(3, 1) - 0.75).abs() < 1e-12);
        assert!((median_coverage(5, 1) - 0.9375).abs() < 1e-12);
        assert!((median_coverage(6, 1) - 0.96875).abs() < 1e-12);
        // n = 3: the range, covering 75 %.
        let (i, c) = median_interval(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(i, [1.0, 3.0]);
        assert!((c - 0.75).abs() < 1e-12);
        // n = 9: k = 2 covers 96.1 %, k = 3 only 82 %: [x(2), x(8)].
        let v: Vec<f64> = (1..=9).map(f64::from).collect();
        let (i, c) = median_interval(&v).unwrap();
        assert_eq!(i, [2.0, 8.0]);
        assert!(c >= 0.95 && c < 0.97, "{c}");
        // n = 1: a point.
        assert_eq!(median_interval(&[5.0]).unwrap().0, [5.0, 5.0]);
        assert_eq!(median_interval(&[]), None);
    }

    #[test]
    fn a_value_agrees_within_its_tolerance_only() {
        let c = |b: f64, n: f64| Compared { base: b, new: n, difference: n / b - 1.0, tolerance: 0.05 };
        assert!(c(1.0, 1.04).agrees());
        assert!(c(1.0, 0.96).agrees());
        assert!(!c(1.0, 1.06).agrees());
        assert!(!c(1.0, 0.9).agrees());
    }

    #[test]
    fn the_factors_leave_a_residual_only_where_they_do_not_multiply() {
        let f = Factors { stp: 0.9 / 1.1, aggregate: 0.9, baseline: 1.1 };
        assert!(f.residual().abs() < 1e-12);
        let f = Factors { stp: 1.0, aggregate: 0.9, baseline: 1.0 };
        assert!((f.residual() - (1.0 / 0.9 - 1.0)).abs() < 1e-12);
    }
}
