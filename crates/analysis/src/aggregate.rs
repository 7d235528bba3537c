//! Over runs: baselines (each model alone), ratios and slowdowns, statistics per workload
//! over repetitions, and the modes of each configuration compared.
//!
//! The statistics structs of the results (`WorkloadStats`, `BaselineStats`, `JobStats`)
//! declare each metric once, with the rows it comes from; [`measure`] computes any of them
//! per group of runs.

use anyhow::Result;
use colloc_plan::PlannedWorkload;
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use std::collections::{BTreeMap, BTreeSet};

use crate::model::{
    Baseline, BaselineHost, BaselineRun, BaselineStats, HostBaseline, InterferenceCell, JobRun, JobStats, Measures,
    Metric, MixClass, ModeComparison, PlannedJobInfo, RunResult, Source, Stats, WorkloadForm, WorkloadResult,
    WorkloadStats,
};
use crate::stats::{get, stats_by, FrameBuilder};

/// A group's rows: a run and those of its jobs that count for the group.
type Row<'a> = (&'a RunResult, &'a [JobRun]);

/// Groups of rows by their key (the same number of key values in every group).
type Groups<'a> = BTreeMap<Vec<String>, Vec<Row<'a>>>;

/// Per group, the statistics of every metric of `S` over the group's rows.
fn measure<S: Measures>(groups: &Groups) -> Result<BTreeMap<Vec<String>, S>> {
    let mut out: BTreeMap<Vec<String>, S> = groups.keys().map(|k| (k.clone(), S::default())).collect();
    let Some(first) = groups.keys().next() else { return Ok(out) };
    let keys: Vec<String> = (0..first.len()).map(|i| format!("key{i}")).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    for per_job in [false, true] {
        let metrics: Vec<&Metric<S>> =
            S::METRICS.iter().filter(|m| matches!(m.source, Source::Job(_)) == per_job).collect();
        if metrics.is_empty() {
            continue;
        }
        let names: Vec<&str> = metrics.iter().map(|m| m.name).collect();
        let mut frame = FrameBuilder::new(&keys, &names);
        for (key, rows) in groups {
            for (run, jobs) in rows {
                if per_job {
                    for j in jobs.iter() {
                        frame.push(key, &metrics.iter().map(|m| m.source.of_job(j)).collect::<Vec<_>>());
                    }
                } else {
                    frame.push(key, &metrics.iter().map(|m| m.source.of_run(run)).collect::<Vec<_>>());
                }
            }
        }
        let g = stats_by(&frame.finish()?, &keys, &names)?;
        for (key, s) in out.iter_mut() {
            for m in &metrics {
                (m.set)(s, get(&g, key, m.name));
            }
        }
    }
    Ok(out)
}

/// Identifies "the same model alone": model, dataset, batch size, data source, and the
/// workload's own protocol (empty under its plan's).
pub(crate) type BaselineKey = (String, String, u32, String, String);

pub(crate) fn baseline_key(w: &PlannedWorkload, job: usize) -> BaselineKey {
    let j = &w.jobs[job];
    (j.model.clone(), j.dataset.clone(), j.batch_size, w.data.clone(), w.own_protocol().to_string())
}

fn key_vec(k: &BaselineKey, mode: Mode) -> Vec<String> {
    vec![k.0.clone(), k.1.clone(), k.2.to_string(), k.3.clone(), k.4.clone(), mode.to_string()]
}

/// Runs that count in statistics: ok and not replaced by a later attempt.
fn counted(r: &RunResult) -> bool {
    r.status == RunStatus::Ok && !r.superseded
}

/// Each model alone on the whole GPU: `exclusive` runs, else one job in `naive` mode; over
/// every host, and per host (the same mode) with the spread between the hosts' medians.
pub(crate) fn baselines(runs: &[RunResult], workloads: &BTreeMap<String, PlannedWorkload>) -> Result<Vec<Baseline>> {
    let mut groups = Groups::new();
    let mut ids: BTreeMap<(BaselineKey, Mode), BTreeSet<String>> = BTreeMap::new();
    for r in runs.iter().filter(|r| counted(r)) {
        let Some(w) = workloads.get(&r.workload_id) else { continue };
        if w.jobs.len() != 1 || !matches!(w.mode, Mode::Exclusive | Mode::Naive) {
            continue;
        }
        let key = baseline_key(w, 0);
        groups.entry(key_vec(&key, w.mode)).or_default().push((r, &r.jobs[..1]));
        ids.entry((key, w.mode)).or_default().insert(w.id.clone());
    }
    let g: BTreeMap<Vec<String>, BaselineStats> = measure(&groups)?;
    let mut hosts_of = per_host(&groups)?;
    let mut out: Vec<Baseline> = Vec::new();
    let keys: BTreeSet<BaselineKey> = ids.keys().map(|(k, _)| k.clone()).collect();
    for key in keys {
        for mode in [Mode::Exclusive, Mode::Naive] {
            let Some(stats) = g.get(&key_vec(&key, mode)).filter(|s| s.throughput.is_some()) else { continue };
            let hosts = hosts_of.remove(&key_vec(&key, mode)).unwrap_or_default();
            let medians: Vec<f64> = hosts.iter().map(|h| h.throughput.median).collect();
            let (lo, hi) = medians.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), m| (lo.min(*m), hi.max(*m)));
            out.push(Baseline {
                model: key.0.clone(),
                dataset: key.1.clone(),
                batch_size: key.2,
                data: key.3.clone(),
                protocol: key.4.clone(),
                mode,
                workload_ids: ids.get(&(key.clone(), mode)).map(|s| s.iter().cloned().collect()).unwrap_or_default(),
                stats: *stats,
                host_count: hosts.len() as u32,
                host_spread: (hosts.len() >= 2 && lo > 0.0).then(|| hi / lo),
                hosts,
            });
            break;
        }
    }
    Ok(out)
}

/// An optional text as a frame key: none is `""`, a text `"+text"`, so that the keys sort and
/// compare as `Option<&str>` does (none first, none equal to none).
fn optional_key(s: Option<&str>) -> String {
    s.map_or(String::new(), |s| format!("+{s}"))
}

/// The text of an [`optional_key`].
fn from_optional_key(key: &str) -> Option<String> {
    key.strip_prefix('+').map(str::to_string)
}

/// Per group of runs alone, its rows per host, sorted by host id: the median throughput
/// and CPU score of each host, a polars query grouped by the group's key and the host.
fn per_host(groups: &Groups) -> Result<BTreeMap<Vec<String>, Vec<HostBaseline>>> {
    let mut out: BTreeMap<Vec<String>, Vec<HostBaseline>> = BTreeMap::new();
    let Some(width) = groups.keys().next().map(Vec::len) else { return Ok(out) };
    let keys: Vec<String> = (0..width).map(|i| format!("key{i}")).chain(["host".to_string()]).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let mut frame = FrameBuilder::new(&keys, &["throughput", "cpu"]);
    for (key, rows) in groups {
        for (run, jobs) in rows {
            let mut k = key.clone();
            k.push(optional_key(run.host_id.as_deref()));
            for j in jobs.iter() {
                frame.push(&k, &[j.throughput, None]);
            }
            frame.push(&k, &[None, run.host_cpu_single_thread_mib_s]);
        }
    }
    let g = stats_by(&frame.finish()?, &keys, &["throughput", "cpu"])?;
    for (k, by_metric) in &g {
        let Some(throughput) = by_metric.get("throughput").copied().flatten() else { continue };
        let (group, host) = k.split_at(width);
        out.entry(group.to_vec()).or_default().push(HostBaseline {
            host_id: from_optional_key(&host[0]),
            throughput,
            cpu_single_thread_mib_s: by_metric.get("cpu").copied().flatten().map(|s| s.median),
        });
    }
    Ok(out)
}

/// `GPU-aea83523`: a host id cut to its first group, for notes.
pub(crate) fn short_host(host: Option<&str>) -> String {
    match host {
        Some(h) => h.splitn(3, '-').take(2).collect::<Vec<_>>().join("-"),
        None => "an unnamed host".to_string(),
    }
}

/// A counted run alone that ratios may divide by.
struct Candidate {
    run_id: String,
    host: Option<String>,
    invocation: Option<String>,
    /// The middle of its window, host monotonic seconds (comparable within an invocation).
    at: f64,
    throughput: f64,
    ci_rel: Option<f64>,
    first_on_host: bool,
}

/// The middle of a run's window (NaN without one).
fn midpoint(r: &RunResult) -> f64 {
    r.window.map_or(f64::NAN, |w| (w.start_mono + w.end_mono) / 2.0)
}

/// The runs that were their host's first (in their invocation where the trace names it,
/// else in the campaign) with no settling run before them: by start time, among the runs
/// that started jobs.
fn first_runs(runs: &[RunResult]) -> BTreeSet<String> {
    let mut first: BTreeMap<(Option<&str>, Option<&str>), &RunResult> = BTreeMap::new();
    for r in runs.iter().filter(|r| !r.jobs.is_empty() && matches!(r.status, RunStatus::Ok | RunStatus::Failed)) {
        let key = (r.host_id.as_deref(), r.invocation.as_deref());
        match first.get(&key) {
            Some(f) if (f.started_at.as_str(), f.run_id.as_str()) <= (r.started_at.as_str(), r.run_id.as_str()) => {}
            _ => {
                first.insert(key, r);
            }
        }
    }
    first.values().filter(|r| !r.settled).map(|r| r.run_id.clone()).collect()
}

/// The pooled standard deviation of the log throughput of runs alone within each group of
/// one host's invocation (one host, where the traces name no invocation) with two runs or
/// more, and its degrees of freedom; `None` when no group has two.
fn pooled_spread<'a>(cs: impl IntoIterator<Item = &'a Candidate>) -> Option<(f64, usize)> {
    let mut groups: BTreeMap<(Option<&str>, Option<&str>), Vec<f64>> = BTreeMap::new();
    for c in cs {
        groups.entry((c.host.as_deref(), c.invocation.as_deref())).or_default().push(c.throughput.ln());
    }
    let (mut sum, mut dof) = (0.0, 0usize);
    for v in groups.values().filter(|v| v.len() >= 2) {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        sum += v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
        dof += v.len() - 1;
    }
    (dof > 0).then(|| ((sum / dof as f64).sqrt(), dof))
}

/// The fewest degrees of freedom a host's own spread of runs alone is used with (five runs
/// alone in one invocation, or three and three in two): a threshold of ours. With fewer,
/// a standard deviation is too unsure of itself (from three runs it is below half the true
/// one about one time in five), and the spread pooled over every host is used instead.
const HOST_SPREAD_DOF: usize = 4;

/// How far a run alone strays from another beside it ([`pooled_spread`]), per baseline key:
/// on each host from that host's own runs alone, so that runs on one host never move another
/// host's intervals (a host whose loaders keep up is steadier than one whose CPU holds its
/// jobs back); over every host for a ratio that borrows other hosts' baseline, or where the
/// run's host has too few runs alone to tell its own spread ([`HOST_SPREAD_DOF`]).
struct Spreads<'a> {
    everywhere: BTreeMap<&'a BaselineKey, f64>,
    per_host: BTreeMap<(&'a BaselineKey, Option<&'a str>), f64>,
}

impl<'a> Spreads<'a> {
    fn of(candidates: &'a BTreeMap<BaselineKey, Vec<Candidate>>) -> Spreads<'a> {
        let everywhere = candidates.iter().filter_map(|(k, cs)| pooled_spread(cs).map(|(s, _)| (k, s))).collect();
        let mut per_host = BTreeMap::new();
        for (k, cs) in candidates {
            let hosts: BTreeSet<Option<&str>> = cs.iter().map(|c| c.host.as_deref()).collect();
            for h in hosts {
                let own = pooled_spread(cs.iter().filter(|c| c.host.as_deref() == h));
                if let Some((s, _)) = own.filter(|(_, dof)| *dof >= HOST_SPREAD_DOF) {
                    per_host.insert((k, h), s);
                }
            }
        }
        Spreads { everywhere, per_host }
    }

    /// The spread a job on `host` whose baseline of `key` came `from` there draws within.
    fn of_job(&self, key: &BaselineKey, host: Option<&str>, from: BaselineHost) -> Option<f64> {
        let own = (from != BaselineHost::OtherHosts).then(|| self.per_host.get(&(key, host))).flatten();
        own.or_else(|| self.everywhere.get(key)).copied()
    }
}

/// How many runs alone, nearest in time, an interleaved ratio divides by.
const NEAREST: usize = 3;

/// Fills per-job slowdowns and the runs' aggregate ratios from the runs alone: each job
/// divided by the median of the (up to three) runs of its model alone nearest in time on
/// the run's own host in the run's own invocation (interleaved baselines), else of every
/// such run on its host, else of those pooled over the hosts that have them (the run is
/// then marked, with a note). Each job records the runs it was divided by.
pub(crate) fn apply_baselines(
    runs: &mut [RunResult],
    workloads: &BTreeMap<String, PlannedWorkload>,
    baselines: &[Baseline],
) -> Result<()> {
    let of = |b: &Baseline| (b.model.clone(), b.dataset.clone(), b.batch_size, b.data.clone(), b.protocol.clone());
    let alone: BTreeMap<BaselineKey, &Baseline> =
        baselines.iter().filter(|b| b.stats.throughput.is_some()).map(|b| (of(b), b)).collect();
    let firsts = first_runs(runs);
    // Per baseline key, its counted runs (of the mode the baseline was taken from).
    let mut candidates: BTreeMap<BaselineKey, Vec<Candidate>> = BTreeMap::new();
    for r in runs.iter().filter(|r| counted(r)) {
        let Some(w) = workloads.get(&r.workload_id) else { continue };
        if !w.is_baseline() {
            continue;
        }
        let key = baseline_key(w, 0);
        if alone.get(&key).is_none_or(|b| b.mode != w.mode) {
            continue;
        }
        let Some(t) = r.jobs.first().and_then(|j| j.throughput).filter(|t| *t > 0.0) else { continue };
        candidates.entry(key).or_default().push(Candidate {
            run_id: r.run_id.clone(),
            host: r.host_id.clone(),
            invocation: r.invocation.clone(),
            at: midpoint(r),
            throughput: t,
            ci_rel: r.jobs[0].throughput_ci.map(|c| c.relative_half_width),
            first_on_host: firsts.contains(&r.run_id),
        });
    }
    let spreads = Spreads::of(&candidates);
    let mut chosen = choose_baselines(runs, workloads, &candidates)?;
    for (ri, r) in runs.iter_mut().enumerate().filter(|(_, r)| r.status == RunStatus::Ok) {
        let Some(w) = workloads.get(&r.workload_id) else { continue };
        let host = r.host_id.as_deref();
        let mut ratio = Some(0.0);
        // Per baseline used from other hosts: the jobs that used it.
        let mut cross: BTreeMap<BaselineKey, Vec<u32>> = BTreeMap::new();
        for (i, job) in r.jobs.iter_mut().enumerate() {
            let key = baseline_key(w, i);
            let choice = chosen.remove(&(ri, i));
            match (choice.as_ref().filter(|c| c.median > 0.0), job.throughput) {
                (Some(c), Some(t)) if t > 0.0 => {
                    job.slowdown = Some(c.median / t);
                    job.baseline_host = Some(c.from);
                    job.baseline_runs = c
                        .runs
                        .iter()
                        .map(|c| BaselineRun {
                            run_id: c.run_id.clone(),
                            throughput: c.throughput,
                            ci_rel: c.ci_rel,
                            first_on_host: c.first_on_host,
                        })
                        .collect();
                    job.baseline_spread = spreads.of_job(&key, host, c.from);
                    ratio = ratio.map(|s| s + t / c.median);
                    if c.from == BaselineHost::OtherHosts {
                        cross.entry(key).or_default().push(job.index);
                    }
                }
                (Some(_), Some(_)) => {}
                _ => ratio = None,
            }
        }
        r.aggregate_ratio = ratio.filter(|_| r.aggregate_throughput.is_some());
        if r.aggregate_ratio.is_none() && r.aggregate_throughput.is_some() {
            r.notes.push("no run of a job's model alone on the whole GPU with the same data: no ratio".to_string());
        }
        r.cross_host_baseline = !cross.is_empty();
        for (key, jobs) in cross {
            let b = alone[&key];
            let hosts: Vec<String> = b.hosts.iter().map(|h| short_host(h.host_id.as_deref())).collect();
            let who = match jobs.as_slice() {
                [one] => format!("job {one}"),
                _ => format!("jobs {}", jobs.iter().map(|j| j.to_string()).collect::<Vec<_>>().join(", ")),
            };
            r.notes.push(format!(
                "{who} ({} b{}, {}): no run of the model alone on this run's host ({}), so divided by the baseline of {} (the median of {}, {:.0} img/s): a ratio against another host's baseline",
                key.0,
                key.2,
                key.3,
                short_host(r.host_id.as_deref()),
                hosts.join(", "),
                match b.stats.throughput.map_or(0, |t| t.n) {
                    1 => format!("1 {} run", b.mode),
                    n => format!("{n} {} runs", b.mode),
                },
                b.stats.throughput.map_or(0.0, |t| t.median),
            ));
        }
    }
    Ok(())
}

/// The runs alone a job is divided by, their median, and where they come from.
struct Choice<'a> {
    runs: Vec<&'a Candidate>,
    median: f64,
    from: BaselineHost,
}

/// Per job of each `ok` run (run index, job index): the runs alone it is divided by, as a
/// polars query: the jobs joined to the runs alone of their baseline key on the same host
/// and invocation (the three nearest in time, ties by run id: interleaved), on the same host
/// (every one), and on any host; each job keeps the nearest tier it has, and the median of
/// its runs alone. A job with none is absent.
fn choose_baselines<'a>(
    runs: &[RunResult],
    workloads: &BTreeMap<String, PlannedWorkload>,
    candidates: &'a BTreeMap<BaselineKey, Vec<Candidate>>,
) -> Result<BTreeMap<(usize, usize), Choice<'a>>> {
    use polars::prelude::{
        col, concat, lit, when, DataType, IntoLazy, JoinArgs, JoinType, SortMultipleOptions, UnionArgs,
    };
    let mut out = BTreeMap::new();
    let key_text = |k: &BaselineKey| format!("{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}", k.0, k.1, k.2, k.3, k.4);
    // Every run alone, numbered (`cand`) in this order. Hosts and invocations as
    // `optional_key`s: two runs without a host id are on the same host, as `Option`'s
    // equality has it; a run without an invocation is interleaved with none (the empty key is
    // filtered out below).
    let flat: Vec<(&BaselineKey, &Candidate)> =
        candidates.iter().flat_map(|(k, cs)| cs.iter().map(move |c| (k, c))).collect();
    let mut alone = FrameBuilder::new(&["key", "host", "inv", "run_id"], &["c_at", "cand", "throughput"]);
    for (index, (k, c)) in flat.iter().enumerate() {
        alone.push(
            &[key_text(k), optional_key(c.host.as_deref()), optional_key(c.invocation.as_deref()), c.run_id.clone()],
            &[Some(c.at), Some(index as f64), Some(c.throughput)],
        );
    }
    let mut jobs = FrameBuilder::new(&["key", "host", "inv"], &["run", "job", "at"]);
    for (ri, r) in runs.iter().enumerate().filter(|(_, r)| r.status == RunStatus::Ok) {
        let Some(w) = workloads.get(&r.workload_id) else { continue };
        for i in 0..r.jobs.len() {
            jobs.push(
                &[
                    key_text(&baseline_key(w, i)),
                    optional_key(r.host_id.as_deref()),
                    optional_key(r.invocation.as_deref()),
                ],
                &[Some(ri as f64), Some(i as f64), Some(midpoint(r))],
            );
        }
    }
    let (alone, jobs) = (alone.finish()?, jobs.finish()?);
    if alone.height() == 0 || jobs.height() == 0 {
        return Ok(out);
    }
    let (alone, jobs) = (alone.lazy(), jobs.lazy());
    let on = |keys: &[&str]| keys.iter().map(|k| col(*k)).collect::<Vec<_>>();
    let joined = |keys: &[&str]| jobs.clone().join(alone.clone(), on(keys), on(keys), JoinArgs::new(JoinType::Inner));
    // Interleaved: both timed within one invocation; the nearest first, then by run id.
    let distance = col("c_at") - col("at");
    let interleaved = jobs
        .clone()
        .filter(col("inv").neq(lit("")).and(col("at").is_not_null()))
        .join(
            alone.clone().filter(col("inv").neq(lit("")).and(col("c_at").is_not_null())),
            on(&["key", "host", "inv"]),
            on(&["key", "host", "inv"]),
            JoinArgs::new(JoinType::Inner),
        )
        .with_column(
            when(distance.clone().lt(lit(0.0))).then(lit(0.0) - distance.clone()).otherwise(distance).alias("distance"),
        )
        .sort(["run", "job", "distance", "run_id"], SortMultipleOptions::default())
        .group_by_stable([col("run"), col("job")])
        .head(Some(NEAREST));
    let tier = |lf: polars::prelude::LazyFrame, n: u32| {
        lf.select([col("run"), col("job"), col("cand"), col("throughput"), lit(n).alias("tier")])
    };
    let chosen = concat(
        [tier(interleaved, 0), tier(joined(&["key", "host"]), 1), tier(joined(&["key"]), 2)],
        UnionArgs::default(),
    )?
    .filter(col("tier").eq(col("tier").min().over([col("run"), col("job")])?))
    .collect()?;
    let medians = chosen
        .clone()
        .lazy()
        .group_by([col("run"), col("job")])
        .agg([crate::stats::median(col("throughput")).alias("median"), col("tier").first()])
        .collect()?;
    let as_u32 = |df: &polars::prelude::DataFrame, c: &str| -> Result<Vec<Option<u32>>> {
        Ok(df.column(c)?.cast(&DataType::UInt32)?.u32()?.iter().collect())
    };
    let (run, job, cand) = (as_u32(&chosen, "run")?, as_u32(&chosen, "job")?, as_u32(&chosen, "cand")?);
    let mut picked: BTreeMap<(usize, usize), Vec<&Candidate>> = BTreeMap::new();
    for ((r, j), c) in run.iter().zip(&job).zip(&cand) {
        if let (Some(r), Some(j), Some(c)) = (r, j, c) {
            picked.entry((*r as usize, *j as usize)).or_default().push(flat[*c as usize].1);
        }
    }
    let (run, job, tier) = (as_u32(&medians, "run")?, as_u32(&medians, "job")?, as_u32(&medians, "tier")?);
    let median = medians.column("median")?.f64()?;
    for i in 0..medians.height() {
        let (Some(r), Some(j), Some(t), Some(m)) = (run[i], job[i], tier[i], median.get(i)) else { continue };
        let key = (r as usize, j as usize);
        let mut runs = picked.remove(&key).unwrap_or_default();
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        let from = match t {
            0 => BaselineHost::Interleaved,
            1 => BaselineHost::SameHost,
            _ => BaselineHost::OtherHosts,
        };
        out.insert(key, Choice { runs, median: m, from });
    }
    Ok(out)
}

/// Statistics per workload over its counted repetitions; every workload with runs appears.
pub(crate) fn workload_results(
    runs: &[RunResult],
    workloads: &BTreeMap<String, PlannedWorkload>,
) -> Result<Vec<WorkloadResult>> {
    let mut per_workload = Groups::new();
    let mut per_job = Groups::new();
    for r in runs.iter().filter(|r| counted(r)) {
        per_workload.entry(vec![r.workload_id.clone()]).or_default().push((r, &r.jobs));
        for (i, j) in r.jobs.iter().enumerate() {
            per_job.entry(job_key(&r.workload_id, i)).or_default().push((r, std::slice::from_ref(j)));
        }
    }
    let mut stats: BTreeMap<Vec<String>, WorkloadStats> = measure(&per_workload)?;
    let mut job_stats: BTreeMap<Vec<String>, JobStats> = measure(&per_job)?;

    let mut out = Vec::new();
    // Per workload, in `out`'s order: its id and counted runs, which its intervals rest on.
    let mut counted_of: Vec<(&str, Vec<&RunResult>)> = Vec::new();
    for (id, w) in workloads {
        let mine: Vec<&RunResult> = runs.iter().filter(|r| &r.workload_id == id && !r.superseded).collect();
        let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
        for r in &mine {
            *by_status.entry(r.status.as_str().to_string()).or_default() += 1;
        }
        let status = [RunStatus::Ok, RunStatus::Infeasible, RunStatus::Failed, RunStatus::Skipped]
            .into_iter()
            .find(|s| mine.iter().any(|r| r.status == *s))
            .unwrap_or(if w.feasible { RunStatus::Skipped } else { RunStatus::Infeasible });
        let reasons: BTreeSet<String> =
            mine.iter().filter(|r| r.status != RunStatus::Ok).filter_map(|r| r.reason.clone()).collect();
        out.push(WorkloadResult {
            id: id.clone(),
            experiment: w.experiment,
            label: w.label.clone(),
            mode: w.mode,
            layout: layout(w),
            data: w.data.clone(),
            headline: w.headline,
            timeline: w.timeline,
            form: w.form.clone(),
            feasible: w.feasible,
            plan_reason: w.reason.clone(),
            config: config_key(w),
            own_protocol: w.own_protocol().to_string(),
            jobs: w
                .jobs
                .iter()
                .enumerate()
                .map(|(i, j)| PlannedJobInfo {
                    index: i as u32,
                    model: j.model.clone(),
                    model_class: j.model_class.clone(),
                    dataset: j.dataset.clone(),
                    batch_size: j.batch_size,
                    train_count: j.data.train_count,
                    mig_profile: j.mig_profile.clone(),
                    mig_class: j.mig_class.clone(),
                    stands_in_for: j.mps_limits.as_ref().map(|l| l.stands_in_for.clone()),
                    mps_thread_pct: j.mps_limits.as_ref().map(|l| l.active_thread_percentage),
                    mps_mem_limit_mib: j.mps_limits.as_ref().map(|l| l.pinned_mem_limit_mib),
                })
                .collect(),
            repetitions_planned: w.repetitions,
            runs_by_status: by_status,
            status,
            reasons: reasons.into_iter().collect(),
            stats: stats.remove(&vec![id.clone()]).unwrap_or_default(),
            job_stats: (0..w.jobs.len()).map(|i| job_stats.remove(&job_key(id, i)).unwrap_or_default()).collect(),
            cross_host_runs: mine.iter().filter(|r| counted(r) && r.cross_host_baseline).count() as u32,
            disturbed_runs: mine.iter().filter(|r| counted(r) && r.disturbed).count() as u32,
            job_cross_host_runs: (0..w.jobs.len())
                .map(|i| {
                    mine.iter()
                        .filter(|r| counted(r))
                        .filter(|r| r.jobs.get(i).and_then(|j| j.baseline_host) == Some(BaselineHost::OtherHosts))
                        .count() as u32
                })
                .collect(),
            intervals: None,
            implausible: Vec::new(),
        });
        counted_of.push((id, mine.iter().copied().filter(|r| counted(r)).collect()));
    }
    // The bootstraps, each seeded by its workload's id, spread over the cores.
    let intervals = crate::parallel::par_map(&counted_of, |(id, runs)| crate::intervals::of_workload(id, runs));
    for (((last, w), (_, runs)), intervals) in out.iter_mut().zip(workloads.values()).zip(&counted_of).zip(intervals) {
        last.intervals = intervals;
        last.implausible = implausible(w, last, runs);
    }
    out.sort_by(|a, b| {
        (a.experiment, &a.label, &a.data, a.mode, &a.layout, &a.id).cmp(&(
            b.experiment,
            &b.label,
            &b.data,
            b.mode,
            &b.layout,
            &b.id,
        ))
    });
    Ok(out)
}

/// Why a workload's ratios are not to be trusted as they stand (see
/// [`WorkloadResult::implausible`]). A run alone is measured against its neighbours, so only
/// workloads that are not baselines are judged by their ANTT and STP, and those beyond
/// their own 95% interval (ANTT's upper bound below 1, STP's lower bound above the jobs).
fn implausible(w: &PlannedWorkload, r: &WorkloadResult, runs: &[&RunResult]) -> Vec<String> {
    let mut out = Vec::new();
    // Judged beyond the value's own uncertainty: by its 95% interval where it has one.
    let (antt_hi, stp_lo) = match r.intervals {
        Some(i) => (Some(i.antt[1]), Some(i.stp[0])),
        None => (r.stats.antt.map(|a| a.median), r.stats.aggregate_ratio.map(|s| s.median)),
    };
    if !w.is_baseline() {
        if let (Some(a), Some(hi)) = (r.stats.antt, antt_hi.filter(|hi| *hi < 1.0)) {
            out.push(format!(
                "ANTT {:.2} is below 1 (its 95% interval too, up to {hi:.3}): every job ran faster beside the others than its model alone",
                a.median
            ));
        }
        let n = w.jobs.len() as f64;
        if let (Some(s), Some(_)) = (r.stats.aggregate_ratio, stp_lo.filter(|lo| *lo > n)) {
            out.push(format!(
                "STP {:.2} is above its {} job(s), its 95% interval too: more than each job alone, summed",
                s.median,
                w.jobs.len()
            ));
        }
    }
    let jobs = || runs.iter().flat_map(|r| r.jobs.iter()).filter(|j| j.slowdown.is_some());
    if jobs().any(|j| j.baseline_runs.len() == 1) {
        out.push("a ratio rests on one run of its model alone".to_string());
    }
    let mut first: Vec<&str> =
        jobs().flat_map(|j| j.baseline_runs.iter()).filter(|b| b.first_on_host).map(|b| b.run_id.as_str()).collect();
    first.sort();
    first.dedup();
    if !first.is_empty() {
        out.push(format!(
            "a ratio rests on its host's first run with nothing before it to settle the host ({})",
            first.join(", ")
        ));
    }
    out
}

fn job_key(workload: &str, job: usize) -> Vec<String> {
    vec![workload.to_string(), format!("{job:04}")]
}

/// `1g×7`, `4g+2g+1g`: the MIG slices of the jobs (largest first); empty outside MIG modes.
pub(crate) fn layout(w: &PlannedWorkload) -> String {
    if !w.mode.uses_mig_profiles() {
        return String::new();
    }
    let mut classes: Vec<String> = w
        .jobs
        .iter()
        .map(|j| {
            j.mig_class
                .clone()
                .or_else(|| j.mig_profile.as_ref().and_then(|p| p.split('.').next().map(str::to_string)))
                .unwrap_or_else(|| "?".into())
        })
        .collect();
    classes.sort_by(|a, b| slices(b).cmp(&slices(a)).then(a.cmp(b)));
    let mut parts: Vec<(String, usize)> = Vec::new();
    for c in classes {
        match parts.last_mut() {
            Some((last, n)) if *last == c => *n += 1,
            _ => parts.push((c, 1)),
        }
    }
    parts.iter().map(|(c, n)| if *n > 1 { format!("{c}×{n}") } else { c.clone() }).collect::<Vec<_>>().join("+")
}

/// Compute slices of a class name such as `3g` (0 when unknown).
pub(crate) fn slices(class: &str) -> u32 {
    class.trim_end_matches('g').parse().unwrap_or(0)
}

/// Same experiment, data, jobs (model, dataset, batch) and protocol, whatever the mode; a
/// workload under its part's own protocol has `~<protocol>` after the data.
pub(crate) fn config_key(w: &PlannedWorkload) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for j in &w.jobs {
        *counts.entry(format!("{}/{}/b{}", j.model, j.dataset, j.batch_size)).or_default() += 1;
    }
    let sig: Vec<String> = counts.iter().map(|(k, n)| format!("{k}×{n}")).collect();
    let own = match w.own_protocol() {
        "" => String::new(),
        p => colloc_trace::ids::protocol_suffix(p),
    };
    format!("e{}|{}{own}|{}", w.experiment, w.data, sig.join("+"))
}

/// The interference matrices of the mixes (the plan's `Mix` forms): per mix, mode and data
/// source, each class's normalised throughput beside the mix's other jobs. A job belongs to
/// the class whose model, dataset and batch it runs.
pub(crate) fn interference(workloads: &[WorkloadResult]) -> Result<Vec<InterferenceCell>> {
    let mut per_class = class_throughputs(workloads)?;
    let mut out = Vec::new();
    for (i, w) in workloads.iter().enumerate() {
        let WorkloadForm::Mix { position, classes } = &w.form else { continue };
        for c in classes {
            let cross_host_baseline = w.jobs.iter().zip(&w.job_cross_host_runs).any(|(j, n)| of_class(j, c) && *n > 0);
            let normalised_throughput = per_class.remove(&cell_key(i, &c.letter));
            let co_runners: Vec<String> = classes
                .iter()
                .filter_map(|o| {
                    let n = if o.letter == c.letter { o.count.saturating_sub(1) } else { o.count };
                    match n {
                        0 => None,
                        1 => Some(o.letter.clone()),
                        n => Some(format!("{n}{}", o.letter)),
                    }
                })
                .collect();
            out.push(InterferenceCell {
                experiment: w.experiment,
                mode: w.mode,
                data: w.data.clone(),
                mix: w.label.clone(),
                position: *position,
                class: c.letter.clone(),
                model: c.model.clone(),
                batch_size: c.batch_size,
                count: c.count,
                co_runners: co_runners.join("+"),
                normalised_throughput,
                cross_host_baseline,
                disturbed: w.disturbed_runs > 0,
            });
        }
    }
    out.sort_by(|a, b| {
        (a.experiment, &a.data, a.mode.to_string(), a.position, &a.class).cmp(&(
            b.experiment,
            &b.data,
            b.mode.to_string(),
            b.position,
            &b.class,
        ))
    });
    Ok(out)
}

/// Whether a job of a mix runs the class's model, dataset and batch.
fn of_class(j: &PlannedJobInfo, c: &MixClass) -> bool {
    j.model == c.model && j.dataset == c.dataset && j.batch_size == c.batch_size
}

/// The key of a mix's class among the workloads: the workload's index and the class letter.
fn cell_key(workload: usize, class: &str) -> Vec<String> {
    vec![format!("{workload:08}"), class.to_string()]
}

/// Per mix and class, the class's normalised throughput: a polars query over the jobs'
/// statistics (one row per job of the class with a normalised throughput over its
/// repetitions), grouped by workload and class: the median of the jobs' medians, the least
/// minimum, the greatest maximum, and the repetitions of every job counted together.
fn class_throughputs(workloads: &[WorkloadResult]) -> Result<BTreeMap<Vec<String>, Stats>> {
    use polars::prelude::{col, DataType, IntoLazy};
    let keys = ["workload", "class"];
    let mut frame = FrameBuilder::new(&keys, &["median", "min", "max", "n"]);
    for (i, w) in workloads.iter().enumerate() {
        let WorkloadForm::Mix { classes, .. } = &w.form else { continue };
        for c in classes {
            let of_c = w.jobs.iter().zip(&w.job_stats).filter(|(j, _)| of_class(j, c));
            for s in of_c.filter_map(|(_, s)| s.normalised_throughput) {
                frame.push(&cell_key(i, &c.letter), &[Some(s.median), Some(s.min), Some(s.max), Some(f64::from(s.n))]);
            }
        }
    }
    let frame = frame.finish()?;
    if frame.height() == 0 {
        return Ok(BTreeMap::new());
    }
    let cells = frame
        .lazy()
        .group_by([col("workload"), col("class")])
        .agg([
            crate::stats::median(col("median")),
            col("min").min(),
            col("max").max(),
            col("n").sum().cast(DataType::UInt32),
        ])
        .collect()?;
    let (workload, class) = (cells.column("workload")?.str()?, cells.column("class")?.str()?);
    let (median, min, max) = (cells.column("median")?.f64()?, cells.column("min")?.f64()?, cells.column("max")?.f64()?);
    let n = cells.column("n")?.u32()?;
    let mut out = BTreeMap::new();
    for i in 0..cells.height() {
        if let (Some(w), Some(c), Some(median), Some(min), Some(max), Some(n)) =
            (workload.get(i), class.get(i), median.get(i), min.get(i), max.get(i), n.get(i))
        {
            out.insert(vec![w.to_string(), c.to_string()], Stats { median, min, max, n });
        }
    }
    Ok(out)
}

/// Per configuration: compared by STP (`true`) or raw throughput, and each mode's best value.
type BestPerMode = BTreeMap<String, (bool, BTreeMap<String, f64>)>;

/// Per configuration, whether its modes are compared by STP (`true`) or by raw throughput,
/// and each mode's best value: a polars query over the workloads (configuration, mode,
/// median STP, median aggregate throughput).
///
/// Jobs of different models weigh alike when each is counted against its model alone (raw
/// images per second would favour a mode that starves the slower model); raw throughput
/// only where some measured workload of the configuration lacks that reference.
fn best_per_mode(workloads: &[WorkloadResult]) -> Result<BestPerMode> {
    use polars::prelude::{col, when, IntoLazy, SortMultipleOptions};
    let mut frame = FrameBuilder::new(&["config", "mode"], &["stp", "throughput"]);
    for w in workloads {
        let median = |s: Option<Stats>| s.map(|s| s.median);
        frame.push(
            &[w.config.clone(), w.mode.to_string()],
            &[median(w.stats.aggregate_ratio), median(w.stats.aggregate_throughput)],
        );
    }
    let by_stp = col("throughput").is_null().or(col("stp").is_not_null()).all(true).over([col("config")])?;
    let best = frame
        .finish()?
        .lazy()
        .with_column(by_stp.alias("by_stp"))
        .with_column(when(col("by_stp")).then(col("stp")).otherwise(col("throughput")).alias("value"))
        .group_by([col("config"), col("mode")])
        .agg([col("by_stp").first(), col("value").max()])
        .sort(["config", "mode"], SortMultipleOptions::default())
        .collect()?;
    let (config, mode) = (best.column("config")?.str()?, best.column("mode")?.str()?);
    let (by_stp, value) = (best.column("by_stp")?.bool()?, best.column("value")?.f64()?);
    let mut out = BestPerMode::new();
    for i in 0..best.height() {
        let (Some(c), Some(m)) = (config.get(i), mode.get(i)) else { continue };
        let e = out.entry(c.to_string()).or_insert((by_stp.get(i).unwrap_or(true), BTreeMap::new()));
        if let Some(v) = value.get(i) {
            e.1.insert(m.to_string(), v);
        }
    }
    Ok(out)
}

/// The collocation modes of each configuration with more than one job, side by side.
pub(crate) fn comparisons(workloads: &[WorkloadResult]) -> Result<Vec<ModeComparison>> {
    let mut by_config: BTreeMap<&str, Vec<&WorkloadResult>> = BTreeMap::new();
    for w in workloads {
        by_config.entry(w.config.as_str()).or_default().push(w);
    }
    let mut best_of = best_per_mode(workloads)?;
    let mut out = Vec::new();
    for (config, ws) in by_config {
        let first = ws[0];
        let (normalised, best) = best_of.remove(config).unwrap_or((true, BTreeMap::new()));
        let get = |m: Mode| best.get(m.as_str()).copied();
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let (stand_in, mig) = match get(Mode::Mig) {
            Some(v) => (Some(Mode::Mig), Some(v)),
            None => match get(Mode::MpsLimited) {
                Some(v) => (Some(Mode::MpsLimited), Some(v)),
                None => (None, None),
            },
        };
        let best_mode = [Mode::Naive, Mode::Mps, Mode::MpsLimited, Mode::Mig]
            .into_iter()
            .filter_map(|m| get(m).map(|v| (m, v)))
            .fold(None::<(Mode, f64)>, |acc, (m, v)| match acc {
                Some((_, bv)) if bv >= v => acc,
                _ => Some((m, v)),
            })
            .map(|(m, _)| m);
        out.push(ModeComparison {
            config: config.to_string(),
            experiment: first.experiment,
            label: first.label.clone(),
            data: first.data.clone(),
            n_jobs: first.n_jobs(),
            mps_over_naive: ratio(get(Mode::Mps), get(Mode::Naive)),
            mps_over_mig: ratio(get(Mode::Mps), mig),
            mig_stand_in: stand_in.filter(|_| get(Mode::Mps).is_some()),
            best_mode,
            normalised,
            per_mode: best,
            mig_infeasible: ws
                .iter()
                .any(|w| w.mode == Mode::Mig && (!w.feasible || w.status == RunStatus::Infeasible)),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{BaselineKey, Candidate, Spreads};
    use crate::model::BaselineHost;
    use std::collections::BTreeMap;

    fn key() -> BaselineKey {
        ("resnet26".into(), "cifar10".into(), 128, "generated".into(), "quick".into())
    }

    /// Runs alone of `host` in invocation `inv`, one per throughput.
    fn runs(host: &str, inv: &str, throughputs: &[f64]) -> Vec<Candidate> {
        throughputs
            .iter()
            .enumerate()
            .map(|(i, &t)| Candidate {
                run_id: format!("{host}-{inv}-{i}"),
                host: Some(host.into()),
                invocation: Some(inv.into()),
                at: i as f64,
                throughput: t,
                ci_rel: None,
                first_on_host: i == 0,
            })
            .collect()
    }

    /// The standard deviation of the logs of `v` (n - 1).
    fn log_sd(v: &[f64]) -> f64 {
        let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let m = l.iter().sum::<f64>() / l.len() as f64;
        (l.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (l.len() - 1) as f64).sqrt()
    }

    /// A host's runs alone set its own jobs' spread; runs on another host, however steady,
    /// do not move it; a host with too few runs alone, and a ratio that borrows other
    /// hosts' baseline, take the spread pooled over every host.
    #[test]
    fn each_host_draws_within_its_own_spread_and_a_host_with_too_few_within_the_pooled_one() {
        let noisy = [1500.0, 1700.0, 1400.0, 1650.0, 1550.0, 1800.0];
        let steady = [3220.0, 3225.0, 3223.0, 3219.0, 3226.0, 3222.0];
        let few = [900.0, 1000.0, 950.0];
        let alone = |with_steady: bool| {
            let mut cs = runs("A", "1", &noisy);
            if with_steady {
                cs.extend(runs("B", "2", &steady));
            }
            cs.extend(runs("C", "3", &few));
            BTreeMap::from([(key(), cs)])
        };
        let (both, without) = (alone(true), alone(false));
        let (sb, sw) = (Spreads::of(&both), Spreads::of(&without));
        let a = sb.of_job(&key(), Some("A"), BaselineHost::Interleaved).unwrap();
        assert!((a - log_sd(&noisy)).abs() < 1e-12, "{a}");
        assert_eq!(sw.of_job(&key(), Some("A"), BaselineHost::SameHost), Some(a));
        let b = sb.of_job(&key(), Some("B"), BaselineHost::Interleaved).unwrap();
        assert!((b - log_sd(&steady)).abs() < 1e-12 && b < a / 10.0, "{b}");
        // Host C has 2 degrees of freedom: the pool of A, B and C (5 + 5 + 2).
        let pooled = ((5.0 * a * a + 5.0 * b * b + 2.0 * log_sd(&few).powi(2)) / 12.0).sqrt();
        let c = sb.of_job(&key(), Some("C"), BaselineHost::Interleaved).unwrap();
        assert!((c - pooled).abs() < 1e-12, "{c} against {pooled}");
        assert_eq!(sb.of_job(&key(), Some("A"), BaselineHost::OtherHosts), Some(c));
        assert_eq!(sb.of_job(&key(), Some("D"), BaselineHost::OtherHosts), Some(c));
        let other = ("resnet50".into(), "imagenet64".into(), 128, "generated".into(), "quick".into());
        assert_eq!(sb.of_job(&other, Some("A"), BaselineHost::SameHost), None);
    }
}
