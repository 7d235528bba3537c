//! The numbers the project's README and every campaign README (`data/<campaign>/README.md`)
//! quote from their traces and plans, recomputed from the analysis the tables come from and compared
//! at the README's printed precision.

mod common;

use colloc_analysis::{Baseline, ProtocolValidation, Results, RunResult, Stats, WorkloadResult};
use colloc_trace::Mode;
use std::collections::BTreeMap;

fn plan(campaign: &str) -> colloc_plan::Plan {
    let project = colloc_spec::load_project(&common::root()).expect("the project loads");
    colloc_plan::plan_project_campaign(&project, campaign, None).expect("the campaign's plan")
}

/// The traces in `data/<dir>` analysed with `plan`.
fn results_of(plan: &colloc_plan::Plan, dir: &str) -> Results {
    colloc_analysis::analyse(&common::root().join("data").join(dir), Some(plan)).expect("the traces")
}

fn results(campaign: &str) -> Results {
    results_of(&plan(campaign), campaign)
}

/// The project's file `rel` with one line per paragraph (the documents wrap their lines).
fn text_of(rel: &str) -> String {
    let text = std::fs::read_to_string(common::root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    text.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
}

fn workload<'a>(r: &'a Results, id: &str) -> &'a WorkloadResult {
    r.workload(id).unwrap_or_else(|| panic!("no workload {id} in {}", r.provenance.campaign))
}

/// `lo–hi` at `decimals`, or the one number when both read alike.
fn range(lo: f64, hi: f64, decimals: usize) -> String {
    let (a, b) = (format!("{lo:.decimals$}"), format!("{hi:.decimals$}"));
    if a == b {
        a
    } else {
        format!("{a}–{b}")
    }
}

/// Min–max over repetitions of a statistic, as the tables print it.
fn spread(s: Option<Stats>, decimals: usize) -> String {
    let s = s.expect("measured");
    range(s.min, s.max, decimals)
}

/// Min–max over workloads of their medians.
fn over(values: impl IntoIterator<Item = f64>, decimals: usize) -> String {
    let (lo, hi) = extremes(values);
    range(lo, hi, decimals)
}

/// The least and the greatest of `values`, which are not empty.
fn extremes(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = values.into_iter().collect();
    assert!(!v.is_empty(), "no workload to take a range over");
    (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}

/// How many of `pv` are within the protocol's goal.
fn within_goal(pv: &[ProtocolValidation]) -> usize {
    pv.iter().filter(|p| p.within_goal == Some(true)).count()
}

/// The range of the median aggregate ratios of the workloads `keep` selects, to 2 decimals.
fn ratio_range(r: &Results, keep: impl Fn(&WorkloadResult) -> bool) -> String {
    over(r.workloads.iter().filter(|w| keep(w)).filter_map(|w| w.stats.aggregate_ratio.map(|s| s.median)), 2)
}

fn median(s: Option<Stats>) -> f64 {
    s.expect("measured").median
}

fn ok(w: &&WorkloadResult) -> bool {
    w.status.as_str() == "ok"
}

/// The phrases of `h200-quick`'s README's "What the runs show", as the traces give them.
fn phrases_h200_quick(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let syn = |w: &&WorkloadResult| w.data == "synthetic";
    let generated = |w: &&WorkloadResult| w.data == "generated";

    // Repetitions of the synthetic-data headline workloads: each within 1% of its median.
    let headline: Vec<&WorkloadResult> = r.workloads.iter().filter(|w| w.headline).filter(syn).filter(ok).collect();
    let widest = widest(&headline, |w| w.stats.aggregate_throughput);
    let off = off(widest.stats.aggregate_throughput);
    assert!(off < 0.01, "{} is {:.2}% from its median", widest.id, 100.0 * off);
    assert!(headline.iter().all(|w| w.stats.aggregate_throughput.unwrap().n == 3));
    assert_eq!(widest.id, "e33-resnet26-cifar10-x7-mpslim1g@syn");
    let tp = |id: &str| spread(workload(r, id).stats.aggregate_throughput, 0);
    out.push(format!("1 × resnet26 alone {} img/s", tp("e33-resnet26-cifar10-x1-exclusive@syn")));
    out.push(format!("2 × resnet26 under MPS {}", tp("e33-resnet26-cifar10-x2-mps@syn")));
    out.push(format!("the widest, 7 × resnet26 under the 1g stand-in, {}", tp(&widest.id)));

    // Generated data: the two repetitions' distance from their mean, the widest named.
    let gen: Vec<&WorkloadResult> = r.workloads.iter().filter(generated).filter(ok).collect();
    let half = |w: &WorkloadResult| {
        let s = w.stats.aggregate_throughput.expect("measured");
        assert_eq!(s.n, 2, "{}", w.id);
        (s.max - s.min) / (s.max + s.min)
    };
    let widest = gen.iter().copied().max_by(|a, b| half(a).total_cmp(&half(b))).expect("generated workloads");
    assert_eq!(widest.id, "e33-resnet26-cifar10-x3-naive@gen");
    out.push(format!("up to {:.1}% from their mean", 100.0 * half(widest)));
    out.push(format!("3 × resnet26 naive {} img/s", tp(&widest.id)));
    out.push(format!("1 × resnet26 under MPS {}", tp("e33-resnet26-cifar10-x1-mps@gen")));

    // The exp-33 models alone (batch 128, synthetic data): their SM activity.
    let alone: Vec<_> = r.baselines.iter().filter(|b| b.data == "synthetic" && b.batch_size == 128).collect();
    assert_eq!(alone.len(), 3);
    out.push(format!(
        "SM activity {}% with each exp-33 model alone",
        over(alone.iter().map(|b| median(b.stats.sm_activity_pct)), 0)
    ));

    // Exp 33 on synthetic data, 2, 3 or 7 jobs: the STP medians per mode (homogeneous table).
    let stp = |mode: Mode| {
        ratio_range(r, |w| w.experiment == 33 && w.data == "synthetic" && w.n_jobs() >= 2 && w.mode == mode)
    };
    out.push(format!(
        "{}× the throughput of the model alone under MPS, {}× naive and {}× under the `mps-limited` stand-ins",
        stp(Mode::Mps),
        stp(Mode::Naive),
        stp(Mode::MpsLimited)
    ));
    // The mixes of exp 37 (mixes table).
    let mix = |mode: Mode| ratio_range(r, |w| w.experiment == 37 && w.mode == mode);
    out.push(format!(
        "the mixes of exp 37 give {}× under MPS, {}× naive and {}× under the stand-ins",
        mix(Mode::Mps),
        mix(Mode::Naive),
        mix(Mode::MpsLimited)
    ));
    let lim7 = workload(r, "e33-resnet26-cifar10-x7-mpslim1g@syn");
    out.push(format!("Seven resnet26 on the 1g stand-in give {:.2}×", median(lim7.stats.aggregate_ratio)));

    // Generated data: one job alone, then seven under MPS.
    let b = |data: &str| r.baselines.iter().find(|b| b.model == "resnet26" && b.data == data).expect("resnet26 alone");
    let g = b("generated");
    out.push(format!(
        "one resnet26 waits for data {:.0}% of its time (4 loader workers, {:.1} host cores) and trains at {:.0} img/s instead of {:.0}",
        100.0 * median(g.stats.data_wait_share),
        median(g.stats.cpu_cores),
        median(g.stats.throughput),
        median(b("synthetic").stats.throughput)
    ));
    let mps7 = workload(r, "e33-resnet26-cifar10-x7-mps@gen");
    out.push(format!(
        "up to {:.0} img/s under MPS with 7 jobs ({:.2}× the job alone on the same data)",
        median(mps7.stats.aggregate_throughput),
        median(mps7.stats.aggregate_ratio)
    ));
    let best = gen.iter().filter_map(|w| w.stats.aggregate_throughput.map(|s| s.median)).fold(0.0, f64::max);
    assert_eq!(format!("{best:.0}"), format!("{:.0}", median(mps7.stats.aggregate_throughput)), "not the highest");
    let seven: Vec<&WorkloadResult> = gen.iter().copied().filter(|w| w.n_jobs() == 7).collect();
    out.push(format!(
        "the wait falls to {}% while the jobs use {} of the host's 16 cores",
        over(seven.iter().map(|w| 100.0 * median(w.stats.data_wait_share)), 0),
        over(seven.iter().map(|w| median(w.stats.cpu_cores_total)), 0)
    ));
    let big = r.baselines.iter().find(|b| b.model == "resnet152" && b.batch_size == 128).expect("resnet152 alone");
    out.push(format!("one job alone peaks at {:.1} GiB", median(big.stats.memory_bytes) / (1u64 << 30) as f64));
    out
}

/// The largest relative distance of a statistic's min or max from its median.
fn off(s: Option<Stats>) -> f64 {
    let s = s.expect("measured");
    ((s.max - s.median) / s.median).max((s.median - s.min) / s.median)
}

/// The workload of `ws` whose statistic `f` lies farthest from its median.
fn widest<'a>(ws: &[&'a WorkloadResult], f: impl Fn(&WorkloadResult) -> Option<Stats>) -> &'a WorkloadResult {
    ws.iter().copied().max_by(|a, b| off(f(a)).total_cmp(&off(f(b)))).expect("workloads")
}

/// The phrases of `h200`'s README's "What the runs show", as the traces give them.
fn phrases_h200(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    // What is in it: the runs by status, beside the plan's; those that are not MIG runs.
    let counted: Vec<_> = r.runs.iter().filter(|x| !x.superseded).collect();
    let planned: u32 = r.workloads.iter().map(|w| w.repetitions_planned).sum();
    out.push(format!(
        "{} runs: the plan's {planned} and {} baselines measured again",
        counted.len(),
        counted.len() - planned as usize
    ));
    let status = |s: &str| counted.iter().filter(|x| x.status.as_str() == s).count();
    out.push(format!(
        "{} are `ok`, {} `failed`, {} `skipped` and {} `infeasible`",
        status("ok"),
        status("failed"),
        status("skipped"),
        status("infeasible")
    ));
    let not_mig: Vec<_> = counted.iter().filter(|x| workload(r, &x.workload_id).mode != Mode::Mig).collect();
    let not_mig_ok = not_mig.iter().filter(|x| x.status.as_str() == "ok").count();
    out.push(format!(
        "Of the {} runs that are not MIG runs, {not_mig_ok} are `ok` ({:.0}%)",
        not_mig.len(),
        100.0 * not_mig_ok as f64 / not_mig.len() as f64
    ));
    // GPU time: every run directory, and the second attempts of the runs made again.
    let minutes =
        |runs: &[&RunResult]| runs.iter().map(|x| colloc_reproduce::appendix::run_seconds(x)).sum::<f64>() / 60.0;
    let all: Vec<&RunResult> = r.runs.iter().collect();
    out.push(format!("The runs took {:.1} minutes of GPU time", minutes(&all)));
    let again: Vec<&RunResult> = r.runs.iter().filter(|x| x.attempt > 1).collect();
    out.push(format!("{:.1} minutes for the {} second attempts", minutes(&again), again.len()));
    // Each second attempt beside its first: the aggregate ratios' relative shift, smallest first.
    let ratio_of = |x: &RunResult| x.aggregate_ratio.expect("measured");
    let mut moved: Vec<(f64, &RunResult, &RunResult)> = again
        .iter()
        .map(|&x| {
            let first = r
                .runs
                .iter()
                .find(|f| {
                    f.superseded && f.attempt == 1 && f.workload_id == x.workload_id && f.repetition == x.repetition
                })
                .unwrap_or_else(|| panic!("the first attempt of {}", x.run_id));
            (ratio_of(x) / ratio_of(first) - 1.0, first, x)
        })
        .collect();
    moved.sort_by(|a, b| a.0.abs().total_cmp(&b.0.abs()));
    // All but the two farthest, which are one mix's naive and MPS runs.
    let (near, far) = moved.split_at(moved.len() - 2);
    let (lo, hi) = extremes(near.iter().map(|m| m.0));
    let signed = |x: f64| format!("{:+.1}%", 100.0 * x).replace('-', "−");
    out.push(format!(
        "In {} of the {} runs the second attempt's STP lies within {} to {} of the first's",
        near.len(),
        moved.len(),
        signed(lo),
        signed(hi)
    ));
    let in_mode = |mode: Mode| {
        far.iter()
            .find(|m| workload(r, &m.2.workload_id).mode == mode)
            .unwrap_or_else(|| panic!("{mode:?} among {far:?}"))
    };
    let (naive, mps) = (in_mode(Mode::Naive), in_mode(Mode::Mps));
    let label = workload(r, &naive.2.workload_id).label.clone();
    assert_eq!(label, workload(r, &mps.2.workload_id).label, "the two farthest are one mix's");
    out.push(format!(
        "{label} differs most, {:.2}× → {:.2}× naive and {:.2}× → {:.2}× under MPS",
        ratio_of(naive.1),
        ratio_of(naive.2),
        ratio_of(mps.1),
        ratio_of(mps.2)
    ));
    out.extend(phrases_h200_repetitions(r));
    out.extend(phrases_h200_synthetic(r));
    out.extend(phrases_h200_files(r));
    out
}

/// `h200`'s README on repetitions: the headline workloads' spread, two hosts' ratios, resnet26 alone.
fn phrases_h200_repetitions(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let tp = |w: &WorkloadResult| w.stats.aggregate_throughput;
    let stp = |w: &WorkloadResult| w.stats.aggregate_ratio;
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);

    // Repetitions of the headline workloads, synthetic data.
    let syn: Vec<&WorkloadResult> = r.workloads.iter().filter(|w| w.headline).filter(of_data("synthetic")).collect();
    assert!(syn.iter().all(|w| w.stats.aggregate_throughput.unwrap().n >= 3), "three repetitions or more");
    let w = widest(&syn, tp);
    out.push(format!(
        "agree within {} of their median in aggregate throughput (the widest, {} under MPS, {} img/s) and within {} in the ratio to the model alone",
        pct(off(tp(w))),
        w.label,
        spread(tp(w), 0),
        pct(off(stp(widest(&syn, stp))))
    ));
    // Files: the collocated headline workloads' throughput; the ratios made on two hosts.
    let gen: Vec<&WorkloadResult> =
        r.workloads.iter().filter(|w| w.headline && w.n_jobs() >= 2).filter(of_data("generated")).collect();
    let w = widest(&gen, tp);
    out.push(format!(
        "agree within {} in aggregate throughput ({} naive, {} img/s)",
        pct(off(tp(w))),
        w.label,
        spread(tp(w), 0)
    ));
    let ratio = |id: &str| spread(workload(r, id).stats.aggregate_ratio, 2);
    out.push(format!("3 × resnet26 on the 2g stand-in {}×", ratio("e33-resnet26-cifar10-x3-mpslim2g@gen")));
    out.push(format!("7 × resnet26 under MPS {}×", ratio("e33-resnet26-cifar10-x7-mps@gen")));
    let s26 = alone(r, "resnet26", 128, "generated");
    out.push(format!(
        "{} img/s over its {} runs on {} hosts ({:.2}× between hosts)",
        spread(s26.stats.throughput, 0),
        s26.stats.throughput.expect("measured").n,
        s26.host_count,
        s26.host_spread.expect("several hosts")
    ));
    out
}

/// `h200`'s README on synthetic data: SM activity and the ratios by mode.
fn phrases_h200_synthetic(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    // Synthetic data.
    let b128: Vec<_> = r.baselines.iter().filter(|b| b.data == "synthetic" && b.batch_size == 128).collect();
    assert_eq!(b128.len(), 3);
    out.push(format!(
        "SM activity {}% for each exp-33 model at batch 128",
        over(b128.iter().map(|b| median(b.stats.sm_activity_pct)), 0)
    ));
    let homog = |data: &'static str, mode: Mode| {
        ratio_range(r, move |w| w.experiment == 33 && w.data == data && w.n_jobs() >= 2 && w.mode == mode)
    };
    out.push(format!(
        "give {}× the model alone under MPS, {}× naive and {}× under the `mps-limited` stand-ins",
        homog("synthetic", Mode::Mps),
        homog("synthetic", Mode::Naive),
        homog("synthetic", Mode::MpsLimited)
    ));
    out.push(format!(
        "(SM activity {:.0}% alone)",
        median(alone(r, "resnet152", 32, "synthetic").stats.sm_activity_pct)
    ));
    let mix = |mode: Mode| ratio_range(r, move |w| w.experiment == 37 && w.data == "synthetic" && w.mode == mode);
    out.push(format!(
        "{}× under MPS, {}× naive and {}× under the stand-ins (the mixes table)",
        mix(Mode::Mps),
        mix(Mode::Naive),
        mix(Mode::MpsLimited)
    ));
    out.push(format!(
        "Seven resnet26 on the 1g stand-in give {}",
        med_ratio(r, "e33-resnet26-cifar10-x7-mpslim1g@syn")
    ));
    out
}

/// `h200`'s README on file data: waiting for data, the host's cores, the ratios by mode.
fn phrases_h200_files(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let s26 = alone(r, "resnet26", 128, "generated");
    // Files.
    let waits = |b: &colloc_analysis::Baseline| format!("{:.0}%", 100.0 * median(b.stats.data_wait_share));
    let thr = |b: &colloc_analysis::Baseline| format!("{:.0}", median(b.stats.throughput));
    let s26s = alone(r, "resnet26", 128, "synthetic");
    out.push(format!(
        "One resnet26 waits for data {} of its time (4 workers, {:.1} host cores) and trains at {} img/s instead of {}",
        waits(s26),
        median(s26.stats.cpu_cores),
        thr(s26),
        thr(s26s)
    ));
    let (m50, m50s) = (alone(r, "resnet50", 128, "generated"), alone(r, "resnet50", 128, "synthetic"));
    out.push(format!(
        "resnet50 on ImageNet-64-like PNGs waits {} ({} instead of {} img/s)",
        waits(m50),
        thr(m50),
        thr(m50s)
    ));
    let seven: Vec<&WorkloadResult> = r
        .workloads
        .iter()
        .filter(|w| w.experiment == 33 && w.n_jobs() == 7 && w.jobs.iter().all(|j| j.model == "resnet26"))
        .filter(of_data("generated"))
        .collect();
    assert_eq!(seven.len(), 3, "naive, MPS and the 1g stand-in");
    out.push(format!(
        "7 × resnet26 give {} the job alone under MPS, {} on the 1g stand-in and {} naive, while the jobs use {} of the host's 16 cores and still wait for data {}% of their time",
        med_ratio(r, "e33-resnet26-cifar10-x7-mps@gen"),
        med_ratio(r, "e33-resnet26-cifar10-x7-mpslim1g@gen"),
        med_ratio(r, "e33-resnet26-cifar10-x7-naive@gen"),
        over(seven.iter().map(|w| median(w.stats.cpu_cores_total)), 1),
        over(seven.iter().map(|w| 100.0 * median(w.stats.data_wait_share)), 0)
    ));
    out.push(format!(
        "With three jobs naive and MPS already reach {} and {}",
        med_ratio(r, "e33-resnet26-cifar10-x3-naive@gen"),
        med_ratio(r, "e33-resnet26-cifar10-x3-mps@gen")
    ));
    out.push(format!(
        "(with seven jobs, {} busy cores and SM activity {}%)",
        over(seven.iter().map(|w| median(w.stats.cpu_cores_total)), 0),
        over(seven.iter().map(|w| median(w.stats.sm_activity_pct)), 0)
    ));
    let files = |mode: Mode| ratio_range(r, move |w| w.data == "generated" && w.n_jobs() >= 2 && w.mode == mode);
    out.push(format!(
        "MPS {}×, naive {}×, the stand-ins {}×",
        files(Mode::Mps),
        files(Mode::Naive),
        files(Mode::MpsLimited)
    ));
    let big = alone(r, "resnet152", 128, "synthetic");
    out.push(format!("one alone peaks at {:.1} GiB", median(big.stats.memory_bytes) / (1u64 << 30) as f64));
    out
}

/// Baseline `model` at `batch` on `data` (a model alone on the whole GPU).
fn alone<'a>(r: &'a Results, model: &str, batch: u32, data: &str) -> &'a Baseline {
    r.baselines
        .iter()
        .find(|b| b.model == model && b.batch_size == batch && b.data == data)
        .unwrap_or_else(|| panic!("{model} b{batch} alone on {data}"))
}

/// A workload's median STP, as the README prints it.
fn med_ratio(r: &Results, id: &str) -> String {
    format!("{:.2}×", median(workload(r, id).stats.aggregate_ratio))
}

/// The `ok` workloads of data source `data`.
fn of_data(data: &'static str) -> impl Fn(&&WorkloadResult) -> bool {
    move |w| w.data == data && ok(w)
}

/// The phrases of `h200-epochs`' README, as the traces give them.
fn phrases_h200_epochs(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let counted: Vec<_> = r.runs.iter().filter(|x| !x.superseded).collect();
    let planned = r.provenance.planned_runs.expect("the plan's runs");
    let made = planned - r.provenance.missing_runs.len();
    out.push(format!("{} runs: {made} of the plan's {planned} and {} baselines", counted.len(), counted.len() - made));
    let ok_runs = counted.iter().filter(|x| x.status.as_str() == "ok").count();
    out.push(format!("All {ok_runs} are `ok`"));
    let minutes = |epochs: Option<bool>| {
        let of = |x: &&&RunResult| epochs.is_none_or(|e| x.workload_id.ends_with("~epochs") == e);
        counted.iter().filter(of).map(|x| colloc_reproduce::appendix::run_seconds(x)).sum::<f64>() / 60.0
    };
    out.push(format!(
        "The runs took {:.1} minutes of GPU time (start to end of each run): {:.1} under `quick` and {:.1} under `epochs`",
        minutes(None),
        minutes(Some(false)),
        minutes(Some(true))
    ));
    let seconds = |epochs: bool| {
        over(
            counted
                .iter()
                .filter(|x| x.workload_id.ends_with("~epochs") == epochs)
                .map(|x| colloc_reproduce::appendix::run_seconds(x)),
            0,
        )
    };
    out.push(format!("Under `quick` a run took {} s, under `epochs` {} s", seconds(false), seconds(true)));

    let pv = &r.protocol_validation;
    let within = within_goal(pv);
    out.push(format!("Of the {} workloads measured under both protocols, {within} are within the 3% goal", pv.len()));
    let pct = |x: f64| format!("{:+.1}%", 100.0 * x);
    let widest = pv
        .iter()
        .max_by(|a, b| a.ratio_difference.unwrap_or(0.0).abs().total_cmp(&b.ratio_difference.unwrap_or(0.0).abs()))
        .expect("pairs");
    out.push(format!(
        "{} on the {} stand-in, STP {:.2} under `quick` against {:.2} under `epochs`, {}",
        widest.label,
        widest.layout,
        widest.window_ratio.expect("measured"),
        widest.epoch_ratio.expect("measured"),
        pct(widest.ratio_difference.expect("measured"))
    ));
    let wait = |p: &ProtocolValidation| 100.0 * median(workload(r, &p.window_id).stats.data_wait_share);
    let naive = |n: usize| pv.iter().find(|p| p.n_jobs == n && p.mode == Mode::Naive).expect("naive");
    out.push(format!(
        "waits for its 4 loader workers {}% of the time, two under `naive` {:.0}%, three {:.0}%",
        over(pv.iter().filter(|p| p.n_jobs == 1).map(wait), 0),
        wait(naive(2)),
        wait(naive(3))
    ));
    out.push(format!(
        "is ±{}% for the 1- and 2-job workloads",
        over(pv.iter().filter(|p| p.n_jobs <= 2).map(|p| 100.0 * median(p.window_ci_rel)), 1)
    ));
    // The first host's two baseline repetitions under quick.
    let alone = |rep: u32| {
        let run = counted
            .iter()
            .find(|x| x.workload_id == "e33-resnet26-cifar10-x1-exclusive@gen" && x.repetition == rep)
            .expect("the baseline repetition");
        run.jobs[0].throughput.expect("measured")
    };
    out.push(format!("trained at {:.0} img/s, its second repetition at {:.0}", alone(1), alone(2)));
    let stand_ins: Vec<_> = pv.iter().filter(|p| p.n_jobs == 1 && p.mode == Mode::MpsLimited).collect();
    out.push(format!(
        "the 1-job stand-ins there ({}) read {}",
        stand_ins.iter().map(|p| p.layout.as_str()).collect::<Vec<_>>().join(", "),
        stand_ins.iter().map(|p| format!("{:.2}", p.window_ratio.expect("measured"))).collect::<Vec<_>>().join(" and ")
    ));
    let tp = |p: &&ProtocolValidation| median(workload(r, &p.window_id).stats.aggregate_throughput);
    out.push(format!(
        "while their own throughputs ({} img/s)",
        stand_ins.iter().map(|p| format!("{:.0}", tp(p))).collect::<Vec<_>>().join(" and ")
    ));
    out.push(format!(
        "the same workloads read {}",
        stand_ins.iter().map(|p| format!("{:.2}", p.epoch_ratio.expect("measured"))).collect::<Vec<_>>().join(" and ")
    ));
    let (lo, hi) = extremes(pv.iter().filter_map(|p| p.epoch_start_seconds));
    out.push(format!("An epoch after the first loses at most {hi:.1} s at its start"));
    out.push(format!("from {lo:.1} to {hi:.1} s, the median per workload"));

    out.extend(phrases_h200_epochs_crowded(r));
    out
}

/// `h200-epochs`' README on the 3- and 7-job workloads, where the GPU or the host's cores are the limit.
fn phrases_h200_epochs_crowded(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let counted: Vec<_> = r.runs.iter().filter(|x| !x.superseded).collect();
    let pv = &r.protocol_validation;
    let pct = |x: f64| format!("{:+.1}%", 100.0 * x);
    let wait = |p: &ProtocolValidation| 100.0 * median(workload(r, &p.window_id).stats.data_wait_share);
    let naive = |n: usize| pv.iter().find(|p| p.n_jobs == n && p.mode == Mode::Naive).expect("naive");
    let crowded: Vec<&ProtocolValidation> = pv.iter().filter(|p| p.n_jobs >= 3).collect();
    let signed = |v: Vec<f64>| {
        let (lo, hi) = extremes(v);
        format!("{} to {}", pct(lo), pct(hi))
    };
    out.push(format!(
        "The 3- and 7-job workloads wait for data {}% of the time",
        over(crowded.iter().map(|p| wait(p)), 0)
    ));
    out.push(format!(
        "Their windows' 95% intervals are ±{}%, their epoch times differ by {} and their STPs by {}: all {} within the goal",
        over(crowded.iter().map(|p| 100.0 * median(p.window_ci_rel)), 1),
        signed(crowded.iter().map(|p| p.epoch_seconds_difference.expect("measured")).collect()),
        signed(crowded.iter().map(|p| p.ratio_difference.expect("measured")).collect()),
        crowded.iter().filter(|p| p.within_goal == Some(true)).count()
    ));
    let seven = naive(7);
    out.push(format!(
        "({} for `naive` against {})",
        pct(seven.ratio_difference.expect("measured")),
        pct(seven.epoch_seconds_difference.expect("measured"))
    ));
    let alone_of = |id: &str, rep: u32| {
        let run = counted.iter().find(|x| x.workload_id == id && x.repetition == rep).expect("the baseline repetition");
        run.jobs[0].throughput.expect("measured")
    };
    out.push(format!(
        "on the third host it trained at {:.0} img/s under `quick` and at {:.0} under `epochs`",
        alone_of("e33-resnet26-cifar10-x1-exclusive@gen", 4),
        alone_of("e33-resnet26-cifar10-x1-exclusive@gen~epochs", 3)
    ));
    let (first, last) = extremes(
        counted
            .iter()
            .filter(|x| x.workload_id == seven.epochs_id)
            .flat_map(|x| x.jobs.iter().filter_map(|j| j.epoch_seconds)),
    );
    out.push(format!("second epochs took {first:.1}–{last:.1} s"));
    let cores = |n: usize| {
        over(pv.iter().filter(|p| p.n_jobs == n).map(|p| median(workload(r, &p.window_id).stats.cpu_cores_total)), 1)
    };
    out.push(format!("One job keeps {} cores busy", cores(1)));
    out.push(format!("three {}, seven {} (28 loader workers)", cores(3), cores(7)));
    let stp = |n: usize| over(pv.iter().filter(|p| p.n_jobs == n).map(|p| p.window_ratio.expect("measured")), 1);
    out.push(format!("an STP of {} for 7 jobs against {} for 3", stp(7), stp(3)));
    out
}

/// Each phrase of `phrases` is in `data/<campaign>/README.md` (whose lines wrap).
fn check_readme(campaign: &str, phrases: fn(&Results) -> Vec<String>) {
    check_text(&format!("data/{campaign}/README.md"), campaign, phrases)
}

/// Each phrase of `phrases`, from `campaign`'s traces, is in the project's file `rel`.
fn check_text(rel: &str, campaign: &str, phrases: fn(&Results) -> Vec<String>) {
    let text = text_of(rel);
    let missing: Vec<String> = phrases(&results(campaign)).into_iter().filter(|p| !text.contains(p.as_str())).collect();
    assert!(
        missing.is_empty(),
        "{rel} does not say what the traces of {campaign} give; it should read:\n  {}",
        missing.join("\n  ")
    );
}

/// Each range `h200-quick`'s README quotes is the traces' at its printed precision.
#[test]
fn the_h200_quick_readme_quotes_the_traces() {
    check_readme("h200-quick", phrases_h200_quick);
}

/// Each number `h200`'s README quotes from its tables is the traces' at its printed precision.
#[test]
fn the_h200_readme_quotes_the_traces() {
    check_readme("h200", phrases_h200);
}

/// Each number `h200-epochs`' README quotes is the traces' at its printed precision.
#[test]
fn the_h200_epochs_readme_quotes_the_traces() {
    check_readme("h200-epochs", phrases_h200_epochs);
}

/// What the project's README says of the validation campaign.
fn phrases_readme_validation(r: &Results) -> Vec<String> {
    let pv = &r.protocol_validation;
    let within = within_goal(pv);
    vec![
        format!("under 2 whole epochs, {} runs)", r.runs.iter().filter(|x| !x.superseded).count()),
        format!("{within} of {} workloads agree within 3%", pv.len()),
    ]
}

/// The project's README quotes the validation campaign's traces.
#[test]
fn the_readme_quotes_the_validation_campaign() {
    check_text("README.md", "h200-epochs", phrases_readme_validation);
}

/// What the shipped campaign's README says of the validation campaign.
fn phrases_h200_validation(r: &Results) -> Vec<String> {
    let pv = &r.protocol_validation;
    let within = within_goal(pv);
    let outside = pv.len() - within;
    vec![format!("{within} of {} agree within 3% in STP and epoch time; the {outside} outside", pv.len())]
}

/// The shipped campaign's README quotes the validation campaign's traces.
#[test]
fn the_h200_readme_quotes_the_validation_campaign() {
    check_text("data/h200/README.md", "h200-epochs", phrases_h200_validation);
}

/// The run counts the README and the shipped campaign's README give, from the provenance
/// (the plan's runs, later attempts, runs the runner added) and the runs' statuses.
fn phrases_run_counts(r: &Results) -> Vec<String> {
    let p = &r.provenance;
    let dirs = r.runs.len();
    let planned = p.planned_runs.expect("the plan's runs");
    let counted: Vec<&RunResult> = r.runs.iter().filter(|x| !x.superseded).collect();
    let status = |s: &str| counted.iter().filter(|x| x.status.as_str() == s).count();
    vec![
        format!(
            "All {planned} planned runs are in it, with {} baselines measured again on the hosts it ran on and {} runs made again beside their baselines",
            p.beyond_plan, p.attempts_again
        ),
        format!(
            "{dirs} run directories. {} runs: the plan's {planned} and {} baselines measured again",
            dirs - p.attempts_again,
            p.beyond_plan
        ),
        format!(
            "{} are `ok`, {} `failed`, {} `skipped` and {} `infeasible`",
            status("ok"),
            status("failed"),
            status("skipped"),
            status("infeasible")
        ),
        format!("{} second attempts", p.attempts_again),
    ]
}

/// The README and `data/h200/README.md` count the shipped campaign's runs as its traces do.
#[test]
fn the_readmes_count_the_shipped_runs_as_the_traces() {
    check_text("README.md", "h200", |r| phrases_run_counts(r)[..1].to_vec());
    check_readme("h200", |r| phrases_run_counts(r)[1..].to_vec());
}

/// A workload's STP (median over its repetitions) and its 95% interval, as the tables print them.
fn stp_with_interval(r: &Results, id: &str) -> String {
    let w = workload(r, id);
    let m = w.stats.aggregate_ratio.expect("measured").median;
    let [lo, hi] = w.intervals.as_ref().expect("an interval").stp;
    format!("{m:.2} [{lo:.2}–{hi:.2}]")
}

/// A workload's STP, the median over its repetitions, to two decimals.
fn stp_median(r: &Results, id: &str) -> String {
    format!("{:.2}", workload(r, id).stats.aggregate_ratio.expect("measured").median)
}

/// What `data/h200-paper/README.md` quotes of its runs so far: runs alone and STP with
/// their intervals, as the tables print them.
fn phrases_h200_paper(r: &Results) -> Vec<String> {
    let stp = |id: &str| stp_with_interval(r, id);
    let alone = workload(r, "e34-resnet26-cifar10-x1-exclusive@gen").stats.aggregate_throughput.expect("measured");
    let cait = workload(r, "e35-cait_xxs24_224-cifar10-x1-exclusive@gen").stats.aggregate_throughput.expect("measured");
    let ratio = |id: &str| stp_median(r, id);
    let mut phrases = vec![
        format!(
            "alone {:.0} img/s (median of {} runs alone, {:.0}–{:.0})",
            alone.median, alone.n, alone.min, alone.max
        ),
        format!(
            "2 × `naive` {}, 2 × MPS {}",
            stp("e34-resnet26-cifar10-x2-naive@gen"),
            stp("e34-resnet26-cifar10-x2-mps@gen")
        ),
        format!(
            "3 × MPS {}, 7 × MPS {}",
            stp("e34-resnet26-cifar10-x3-mps@gen"),
            stp("e34-resnet26-cifar10-x7-mps@gen")
        ),
        format!("7 × `naive` {}", stp("e34-resnet26-cifar10-x7-naive@gen")),
        format!("alone {:.0} img/s, its runs alone within {:.0}–{:.0}", cait.median, cait.min, cait.max),
        format!(
            "give {}, less than one job alone, MPS {} and {}; its 4g stand-in alone gives {}",
            ratio("e35-cait_xxs24_224-cifar10-x2-naive@gen"),
            ratio("e35-cait_xxs24_224-cifar10-x2-mps@gen"),
            ratio("e35-cait_xxs24_224-cifar10-x3-mps@gen"),
            ratio("e35-cait_xxs24_224-cifar10-x1-mpslim4g@gen")
        ),
        format!(
            "`naive` gives {} and MPS {}",
            ratio("e35-cait_xxs24_224-cifar10-x7-naive@gen"),
            ratio("e35-cait_xxs24_224-cifar10-x7-mps@gen")
        ),
    ];
    phrases.extend(phrases_h200_paper_memory_bound(r));
    phrases.extend(phrases_h200_paper_e33(r));
    phrases.extend(phrases_h200_paper_imagenet64(r));
    phrases.extend(phrases_h200_paper_imagenet(r));
    phrases.extend(phrases_h200_paper_e35_imagenet(r));
    phrases.extend(phrases_h200_paper_e36_imagenets(r));
    phrases.extend(phrases_h200_paper_fast_host(r));
    phrases.push(phrase_h200_paper_so_far(r));
    phrases
}

/// How far `data/h200-paper/README.md` says the collection has come: its runs by status (the
/// failed ones out of memory or otherwise), their GPU time and hosts.
fn phrase_h200_paper_so_far(r: &Results) -> String {
    let count = |s: &str| r.runs.iter().filter(|x| x.status.as_str() == s).count();
    let failed: Vec<&str> =
        r.runs.iter().filter(|x| x.status.as_str() == "failed").map(|x| x.reason.as_deref().unwrap_or("")).collect();
    let oom = failed.iter().filter(|t| t.contains("out of memory")).count();
    let diverged = failed.iter().filter(|t| t.contains("training loss is nan")).count();
    assert_eq!(oom + diverged, failed.len(), "a run failed otherwise: the README should say why: {failed:?}");
    let minutes = r.runs.iter().map(colloc_reproduce::appendix::run_seconds).sum::<f64>() / 60.0;
    let hosts: std::collections::BTreeSet<_> = r.runs.iter().filter_map(|x| x.host_id.as_deref()).collect();
    format!(
        "So far {} runs ({} `ok`, {} `failed`: {oom} out of memory, {diverged} diverged), {minutes:.0} minutes of GPU \
         time from their starts to their ends, on {} hosts",
        r.runs.len(),
        count("ok"),
        failed.len(),
        hosts.len()
    )
}

/// What `data/h200-paper/README.md` quotes of exps 33–35 on the ImageNet-64-like files:
/// resnet50 alone at both batch sizes, the 7-job STP and aggregates at batch 128 beside the
/// shipped `h200`'s aggregates of the same workloads, the 7-job STP at batch 32, and
/// CaiT-XXS24 so far.
fn phrases_h200_paper_imagenet64(r: &Results) -> Vec<String> {
    let e33 = |rest: &str| format!("e33-resnet50-imagenet64-{rest}@gen");
    let e34 = |rest: &str| format!("e34-resnet50-imagenet64-{rest}@gen");
    let e35 = |rest: &str| format!("e35-cait_xxs24_224-imagenet64-{rest}@gen");
    let stp = |id: &str| stp_with_interval(r, id);
    let ratio = |id: &str| stp_median(r, id);
    let throughput = |r: &Results, id: &str| workload(r, id).stats.aggregate_throughput.expect("measured");
    let aggregates = |r: &Results| {
        let [a, b, c] = ["x7-mps", "x7-naive", "x7-mpslim1g"].map(|w| throughput(r, &e33(w)).median);
        format!("{a:.0}, {b:.0} and {c:.0} img/s")
    };
    let (a32, cait) = (throughput(r, &e34("x1-exclusive")), throughput(r, &e35("x1-exclusive")));
    vec![
        format!("resnet50 alone at batch 128: {}", alone_per_host(r, "resnet50", 128)),
        format!("at batch 32 {:.0} img/s ({:.0}–{:.0})", a32.median, a32.min, a32.max),
        format!(
            "7 × MPS {}, 7 × `naive` {}, 7 × the 1g stand-in {}, from aggregates of {}",
            stp(&e33("x7-mps")),
            stp(&e33("x7-naive")),
            stp(&e33("x7-mpslim1g")),
            aggregates(r)
        ),
        format!("earlier, measured {} for the same workloads", aggregates(&results("h200"))),
        format!(
            "7 × MPS {}, 7 × `naive` {}, 7 × the 1g stand-in {}",
            stp(&e34("x7-mps")),
            stp(&e34("x7-naive")),
            stp(&e34("x7-mpslim1g")),
        ),
        format!("CaiT-XXS24 alone {:.0} img/s ({:.0}–{:.0})", cait.median, cait.min, cait.max),
        format!(
            "2 × `naive` {}, the 3g stand-in × 2 {}, its 4g stand-in alone {}",
            ratio(&e35("x2-naive")),
            ratio(&e35("x2-mpslim3g")),
            ratio(&e35("x1-mpslim4g"))
        ),
        format!(
            "3 × `naive` {}, 3 × MPS {}, 7 × `naive` {}, 7 × MPS {}",
            ratio(&e35("x3-naive")),
            ratio(&e35("x3-mps")),
            ratio(&e35("x7-naive")),
            ratio(&e35("x7-mps"))
        ),
    ]
}

/// What `data/h200-paper/README.md` quotes of exps 33 and 34 on the ImageNet-like files:
/// resnet152 alone at both batch sizes beside the shipped `h200`'s run alone on synthetic
/// data, and the STP of the collocated workloads, as the tables print them.
fn phrases_h200_paper_imagenet(r: &Results) -> Vec<String> {
    let e33 = |rest: &str| format!("e33-resnet152-imagenet-{rest}@gen");
    let e34 = |rest: &str| format!("e34-resnet152-imagenet-{rest}@gen");
    let stp = |id: &str| stp_with_interval(r, id);
    let ratio = |id: &str| stp_median(r, id);
    let throughput = |r: &Results, id: &str| workload(r, id).stats.aggregate_throughput.expect("measured");
    let (a128, a32) = (throughput(r, &e33("x1-exclusive")), throughput(r, &e34("x1-exclusive")));
    let synthetic = throughput(&results("h200"), "e33-resnet152-imagenet-x1-exclusive@syn");
    assert_every_run_failed(r, |id| id.starts_with("e33-resnet152-imagenet-x7-"), "7 × resnet152 at batch 128");
    vec![
        format!(
            "interleaved: {:.0} img/s (median of {} runs alone, {:.0}–{:.0}) at batch 128, near the {:.0} img/s `h200` measured on synthetic data",
            a128.median, a128.n, a128.min, a128.max, synthetic.median
        ),
        format!("{:.0} img/s ({:.0}–{:.0}) at batch 32", a32.median, a32.min, a32.max),
        format!(
            "2 × `naive` {}, 2 × MPS {}, 3 × MPS {}, the stand-ins {} (3g × 2) and {} (2g × 3)",
            ratio(&e33("x2-naive")),
            stp(&e33("x2-mps")),
            stp(&e33("x3-mps")),
            ratio(&e33("x2-mpslim3g")),
            ratio(&e33("x3-mpslim2g"))
        ),
        format!(
            "3 × MPS {}, 7 × `naive` {}, 7 × the 1g stand-in {}",
            stp(&e34("x3-mps")),
            stp(&e34("x7-naive")),
            stp(&e34("x7-mpslim1g"))
        ),
    ]
}

/// A workload's peak device memory, the median over its runs, in GiB.
fn mem_gib(r: &Results, id: &str) -> f64 {
    workload(r, id).stats.mem_used_bytes_max.expect("measured").median / f64::from(1u32 << 30)
}

/// Holds that the campaign has runs of the workloads `id` selects and that every one failed.
fn assert_every_run_failed(r: &Results, id: impl Fn(&str) -> bool, what: &str) {
    let runs: Vec<_> = r.runs.iter().filter(|x| id(&x.workload_id)).collect();
    assert!(!runs.is_empty() && runs.iter().all(|x| x.status.as_str() == "failed"), "{what}");
}

/// `<model> alone <median> img/s (median of <n> runs alone, <min>–<max>), <memory> GiB`.
fn alone_with_memory(r: &Results, model: &str, id: &str) -> String {
    let t = workload(r, id).stats.aggregate_throughput.expect("measured");
    format!(
        "{model} alone {:.0} img/s (median of {} runs alone, {:.0}–{:.0}), {:.1} GiB",
        t.median,
        t.n,
        t.min,
        t.max,
        mem_gib(r, id)
    )
}

/// What `data/h200-paper/README.md` quotes of exp 35 on the ImageNet-like files (with exp
/// 34's 7 × MPS on the ImageNet-like files, made in the same invocation): CaiT-XXS24 alone
/// (median, spread, memory), the STP of its collocated workloads as the tables print them,
/// and the 1g stand-in's out-of-memory run.
fn phrases_h200_paper_e35_imagenet(r: &Results) -> Vec<String> {
    let e35 = |rest: &str| format!("e35-cait_xxs24_224-imagenet-{rest}@gen");
    let stp = |id: &str| stp_with_interval(r, id);
    let ratio = |id: &str| stp_median(r, id);
    assert_every_run_failed(r, |id| id == e35("x7-mpslim1g"), "7 × CaiT-XXS24 under the 1g stand-in");
    vec![
        format!("7 × MPS of resnet152 at batch 32 {}", stp("e34-resnet152-imagenet-x7-mps@gen")),
        alone_with_memory(r, "CaiT-XXS24", &e35("x1-exclusive")),
        format!(
            "2 × `naive` {}, 2 × MPS {}, 3 × MPS {}, 7 × `naive` {}, 7 × MPS {}",
            ratio(&e35("x2-naive")),
            stp(&e35("x2-mps")),
            stp(&e35("x3-mps")),
            ratio(&e35("x7-naive")),
            stp(&e35("x7-mps"))
        ),
    ]
}

/// What `data/h200-paper/README.md` quotes of exp 36 on the ImageNet-64-like and the
/// ImageNet-like files: EfficientNetV2-S alone (median, spread, memory), the STP of its
/// collocated workloads as the tables print them, and its 7-job workloads out of memory.
fn phrases_h200_paper_e36_imagenets(r: &Results) -> Vec<String> {
    let mut phrases = Vec::new();
    for dataset in ["imagenet64", "imagenet"] {
        let e36 = |rest: &str| format!("e36-efficientnetv2_s-{dataset}-{rest}@gen");
        let stp = |id: &str| stp_with_interval(r, id);
        let ratio = |id: &str| stp_median(r, id);
        let x7 = format!("e36-efficientnetv2_s-{dataset}-x7-");
        assert_every_run_failed(r, |id| id.starts_with(&x7), &x7);
        phrases.push(alone_with_memory(r, "EfficientNetV2-S", &e36("x1-exclusive")));
        phrases.push(format!(
            "2 × `naive` {}, 2 × MPS {}, 3 × `naive` {}, 3 × MPS {}; the stand-ins {} (3g × 2) and {} (2g × 3); its 4g stand-in alone {}",
            ratio(&e36("x2-naive")),
            stp(&e36("x2-mps")),
            ratio(&e36("x3-naive")),
            stp(&e36("x3-mps")),
            ratio(&e36("x2-mpslim3g")),
            ratio(&e36("x3-mpslim2g")),
            ratio(&e36("x1-mpslim4g"))
        ));
    }
    phrases
}

/// `0.90` or `0.90–0.92`: the lowest and highest of `values`, to two decimals.
fn span(values: impl IntoIterator<Item = f64>) -> String {
    let v: Vec<f64> = values.into_iter().collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = (format!("{lo:.2}"), format!("{hi:.2}"));
    if lo == hi {
        lo
    } else {
        format!("{lo}–{hi}")
    }
}

/// What `data/h200-paper/README.md` quotes of the host whose CPU kept up with the files
/// (`GPU-eb717fdc`): its CPU score beside the other hosts', resnet26 and resnet50 alone on
/// files there beside `h200` on synthetic data, and exp 37's mixes made there on files beside
/// `h200`'s of the same mixes on synthetic data and on files.
fn phrases_h200_paper_fast_host(r: &Results) -> Vec<String> {
    let fast = "GPU-eb717fdc";
    let mut cpu: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for run in &r.runs {
        if let (Some(h), Some(c)) = (run.host_id.as_deref(), run.host_cpu_single_thread_mib_s) {
            cpu.entry(short_host(h)).or_default().push(c);
        }
    }
    // The hosts table's "CPU, one thread": the middle of the host's runs' scores.
    for v in cpu.values_mut() {
        v.sort_by(f64::total_cmp);
    }
    let middle = |v: &[f64]| v[v.len() / 2];
    let others: Vec<f64> = cpu.iter().filter(|(h, _)| **h != fast).map(|(_, v)| middle(v)).collect();
    let lo = others.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = others.iter().copied().fold(0.0, f64::max);
    let on_fast = |model: &str| {
        let h = baseline_on_files(r, model, 128)
            .hosts
            .iter()
            .find(|h| h.host_id.as_deref().is_some_and(|n| n.starts_with(fast)))
            .unwrap_or_else(|| panic!("{model} alone on {fast}"));
        (h.throughput.median, h.throughput.n)
    };
    let ((s, sn), (m, mn)) = (on_fast("resnet26"), on_fast("resnet50"));
    let shipped = results("h200");
    let syn = |id: &str| workload(&shipped, id).stats.aggregate_throughput.expect("measured").median;
    let made: Vec<&str> = r
        .workloads
        .iter()
        .filter(|w| w.id.starts_with("e37-") && w.id.ends_with("@gen") && w.stats.aggregate_ratio.is_some())
        .map(|w| w.id.as_str())
        .collect();
    assert!(!made.is_empty(), "no mix of exp 37 made on files");
    let of = |r: &Results, mode: &str, data: &str| {
        span(
            made.iter()
                .filter(|id| id.ends_with(&format!("-{mode}@gen")))
                .filter_map(|id| r.workload(&id.replace("@gen", data)))
                .filter_map(|w| w.stats.aggregate_ratio.map(|s| s.median)),
        )
    };
    vec![
        format!("exp 37 on files begun ({} of its 39 workloads", made.len()),
        format!("The {} exp-37 workloads made there on files", made.len()),
        format!(
            "one thread {:.0} MiB/s against {lo:.0}–{hi:.0} on the {} others",
            middle(&cpu[fast]),
            others.len()
        ),
        format!(
            "resnet26 alone on the CIFAR-10 files at {s:.0} img/s ({sn} runs) and resnet50 alone on the ImageNet-64-like files at {m:.0} img/s ({mn} runs)"
        ),
        format!(
            "`h200` measured on synthetic data ({:.0} and {:.0} img/s)",
            syn("e33-resnet26-cifar10-x1-exclusive@syn"),
            syn("e33-resnet50-imagenet64-x1-exclusive@syn")
        ),
        format!(
            "`naive` {}, MPS {} and the stand-ins {}, against {}, {} and {} there",
            of(r, "naive", "@gen"),
            of(r, "mps", "@gen"),
            of(r, "mpslim", "@gen"),
            of(&shipped, "naive", "@syn"),
            of(&shipped, "mps", "@syn"),
            of(&shipped, "mpslim", "@syn")
        ),
        format!(
            "on files, on other hosts, `naive` {} and MPS {}",
            of(&shipped, "naive", "@gen"),
            of(&shipped, "mps", "@gen")
        ),
    ]
}

/// What `data/h200-paper/README.md` quotes of the models the GPU holds back (exps 35 and
/// 36 on files): the 1g stand-in's out-of-memory run against one CaiT-XXS24's memory, and
/// EfficientNetV2-S alone and collocated.
fn phrases_h200_paper_memory_bound(r: &Results) -> Vec<String> {
    let gib = |id: &str| mem_gib(r, id);
    let oom = "e35-cait_xxs24_224-cifar10-x7-mpslim1g@gen";
    assert_every_run_failed(r, |id| id == oom, oom);
    let ratio = |id: &str| stp_median(r, id);
    let e36 = |rest: &str| format!("e36-efficientnetv2_s-cifar10-{rest}@gen");
    let alone = workload(r, &e36("x1-exclusive")).stats.aggregate_throughput.expect("measured");
    vec![
        format!("one job alone uses {:.1} GiB", gib("e35-cait_xxs24_224-cifar10-x1-exclusive@gen")),
        format!(
            "alone {:.0} img/s ({:.0}–{:.0}), {:.1} GiB of",
            alone.median,
            alone.min,
            alone.max,
            gib(&e36("x1-exclusive"))
        ),
        format!(
            "2 × `naive` {}, 2 × MPS {}, 3 × `naive` {}",
            ratio(&e36("x2-naive")),
            ratio(&e36("x2-mps")),
            ratio(&e36("x3-naive"))
        ),
        format!(
            "stand-ins {} (3g × 2) and {} (2g × 3); its 4g stand-in alone {}",
            ratio(&e36("x2-mpslim3g")),
            ratio(&e36("x3-mpslim2g")),
            ratio(&e36("x1-mpslim4g"))
        ),
    ]
}

/// The baseline of `model` at `batch` on files.
fn baseline_on_files<'a>(r: &'a Results, model: &str, batch: u32) -> &'a Baseline {
    r.baselines
        .iter()
        .find(|b| b.model == model && b.batch_size == batch && b.data == "generated")
        .unwrap_or_else(|| panic!("{model} at batch {batch} alone on files"))
}

/// The first 12 characters of a GPU's UUID, as the READMEs name hosts.
fn short_host(name: &str) -> &str {
    name.get(..12).unwrap_or(name)
}

/// `` `GPU-4bce2eeb` 1936 img/s (11 runs), … ``: `model` at `batch` alone on files, each host's
/// median and runs, in the order the hosts were first used.
fn alone_per_host(r: &Results, model: &str, batch: u32) -> String {
    let hosts: Vec<String> = baseline_on_files(r, model, batch)
        .hosts
        .iter()
        .map(|h| {
            let name = h.host_id.as_deref().unwrap_or("?");
            format!("`{}` {:.0} img/s ({} runs)", short_host(name), h.throughput.median, h.throughput.n)
        })
        .collect();
    hosts.join(", ")
}

/// What `data/h200-paper/README.md` quotes of exp 33 on files: resnet26 alone per host, the
/// 7-job aggregates and STP, and the same aggregates in the shipped `h200`.
fn phrases_h200_paper_e33(r: &Results) -> Vec<String> {
    let id = |mode: &str| format!("e33-resnet26-cifar10-x7-{mode}@gen");
    let stp = |id: &str| stp_with_interval(r, id);
    let aggregate = |r: &Results, id: &str| {
        let t = workload(r, id).stats.aggregate_throughput.expect("measured");
        format!("{:.0} ({:.0}–{:.0})", t.median, t.min, t.max)
    };
    let shipped = results("h200");
    let alone = |r: &Results| {
        workload(r, "e33-resnet26-cifar10-x1-exclusive@gen").stats.aggregate_throughput.expect("measured").median
    };
    vec![
        format!("resnet26 alone: {}", alone_per_host(r, "resnet26", 128)),
        format!(
            "7 × MPS {}, 7 × `naive` {}, 7 × the 1g stand-in {}",
            stp(&id("mps")),
            stp(&id("naive")),
            stp(&id("mpslim1g"))
        ),
        format!(
            "aggregates of {}, {} and {} img/s",
            aggregate(r, &id("mps")),
            aggregate(r, &id("naive")),
            aggregate(r, &id("mpslim1g"))
        ),
        format!(
            "`h200` measured {}, {} and {} img/s",
            aggregate(&shipped, &id("mps")),
            aggregate(&shipped, &id("naive")),
            aggregate(&shipped, &id("mpslim1g"))
        ),
        format!("resnet26 alone there gave {:.0} img/s", alone(&shipped)),
        format!(
            "STP of {}, {} and {} there",
            stp_median(&shipped, &id("mps")),
            stp_median(&shipped, &id("naive")),
            stp_median(&shipped, &id("mpslim1g"))
        ),
    ]
}

/// `data/h200-paper/README.md` quotes its traces (the campaign as far as it is collected).
#[test]
fn the_h200_paper_readme_quotes_the_traces() {
    check_readme("h200-paper", phrases_h200_paper);
}

/// `1,234` for 1234.4: thousands apart, as the READMEs print throughputs of four digits and more.
fn thousands(v: f64) -> String {
    let digits = format!("{v:.0}");
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What `data/h200-epochs-5/README.md` quotes of its traces: the aggregates under both
/// protocols, the protocol validation's count outside the goal, and resnet26 alone.
fn phrases_h200_epochs_5(r: &Results) -> Vec<String> {
    let agg = |id: &str| workload(r, id).stats.aggregate_throughput.expect("measured").median;
    let pair = |jobs: u32| {
        let quick = agg(&format!("e33-resnet26-cifar10-x{jobs}-naive@gen"));
        let epochs = agg(&format!("e33-resnet26-cifar10-x{jobs}-naive@gen~epochs"));
        (quick, epochs)
    };
    let (q3, e3) = pair(3);
    let (q7, e7) = pair(7);
    let pv = &r.protocol_validation;
    let outside = pv.len() - within_goal(pv);
    // STP alone is 1 under both protocols by its definition: the collocated and MPS rows.
    let diffs: Vec<f64> = pv
        .iter()
        .filter(|p| p.mode != Mode::Exclusive)
        .filter_map(|p| p.ratio_difference)
        .map(|d| 100.0 * d.abs())
        .collect();
    let lo = diffs.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = diffs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    vec![
        format!(
            "{} img/s for 3 × `naive` under `epochs` against {} under `quick` ({:+.0}%), {} against {} for 7 × `naive`",
            thousands(e3),
            thousands(q3),
            100.0 * (e3 / q3 - 1.0),
            thousands(e7),
            thousands(q7)
        ),
        format!("Every STP difference is {lo:.0}–{hi:.0}%"),
        format!("{outside} of {} outside the ±3% goal", pv.len()),
        format!(
            "{:.0} img/s under `quick` and {:.0} under `epochs`",
            agg("e33-resnet26-cifar10-x1-exclusive@gen"),
            agg("e33-resnet26-cifar10-x1-exclusive@gen~epochs")
        ),
    ]
}

/// `data/h200-epochs-5/README.md` quotes its traces.
#[test]
fn the_h200_epochs_5_readme_quotes_the_traces() {
    check_readme("h200-epochs-5", phrases_h200_epochs_5);
}

/// `h200-hosts`'s plan analysed over the traces in `data/<dir>` (the campaign or its rerun).
fn results_in(campaign: &str, dir: &str) -> Results {
    results_of(&plan(campaign), dir)
}

/// What `data/h200-hosts/README.md` quotes of both hosts: STP with its interval per workload,
/// the 7- and 3-job aggregates, and resnet26 alone on each host.
fn phrases_h200_hosts(first: &Results) -> Vec<String> {
    let second = results_in("h200-hosts", "h200-hosts-rerun");
    let stp = stp_with_interval;
    let id = |jobs: u32, mode: &str| format!("e33-resnet26-cifar10-x{jobs}-{mode}@gen");
    let mut phrases: Vec<String> = [(1, "mps", "1 × MPS"), (2, "naive", "2 × naive"), (2, "mps", "2 × MPS")]
        .into_iter()
        .chain([(3, "naive", "3 × naive"), (3, "mps", "3 × MPS"), (7, "naive", "7 × naive"), (7, "mps", "7 × MPS")])
        .map(|(jobs, mode, label)| {
            format!("| {label} | {} | {} |", stp(first, &id(jobs, mode)), stp(&second, &id(jobs, mode)))
        })
        .collect();
    let agg = |r: &Results, jobs: u32, mode: &str| {
        format!("{:.0}", workload(r, &id(jobs, mode)).stats.aggregate_throughput.expect("measured").median)
    };
    phrases.push(format!(
        "7 × MPS {} and {} img/s; 7 × naive {} and {}; 3 × MPS {} and {}",
        agg(first, 7, "mps"),
        agg(&second, 7, "mps"),
        agg(first, 7, "naive"),
        agg(&second, 7, "naive"),
        agg(first, 3, "mps"),
        agg(&second, 3, "mps")
    ));
    let alone = |r: &Results| workload(r, &id(1, "exclusive")).stats.aggregate_throughput.expect("measured");
    let (a, b) = (alone(first), alone(&second));
    phrases.push(format!(
        "{:.0}–{:.0} img/s over the {} runs on the first host (median {:.0}), {:.0}–{:.0} on the second (median {:.0})",
        a.min, a.max, a.n, a.median, b.min, b.max, b.median
    ));
    phrases
}

/// `data/h200-hosts/README.md` quotes the traces of both hosts.
#[test]
fn the_h200_hosts_readme_quotes_the_traces() {
    check_readme("h200-hosts", phrases_h200_hosts);
}

/// How far `h200-paper` has come on files, as the README's campaign table says it: the
/// experiments with a run of every such workload of the plan (whatever its status), then
/// those with runs of some.
fn files_so_far(p: &colloc_plan::Plan, r: &Results) -> String {
    let mut complete = Vec::new();
    let mut part = Vec::new();
    for e in 33..=37u32 {
        let ws: Vec<&str> = p
            .workloads
            .iter()
            .filter(|w| w.experiment == e && w.mode != Mode::Mig && w.id.ends_with("@gen"))
            .map(|w| w.id.as_str())
            .collect();
        let done = ws.iter().filter(|id| r.runs.iter().any(|x| x.workload_id == **id)).count();
        if !ws.is_empty() && done == ws.len() {
            complete.push(e);
        } else if done > 0 {
            part.push(e);
        }
    }
    let list = |v: &[u32]| match v {
        [] => String::new(),
        [one] => format!("exp {one}"),
        [init @ .., last] => {
            format!("exps {} and {last}", init.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))
        }
    };
    let mut s = format!("{} on every set of files so far", list(&complete));
    if !part.is_empty() {
        s += &format!(", {} on files begun", list(&part));
    }
    s
}

/// What the project's README says of each campaign in its table and its text: GPU time,
/// run counts, the estimate of the campaign being collected and how far it has come.
fn phrases_readme_campaigns() -> Vec<String> {
    let shipped = results("h200");
    let minutes = |r: &Results| r.runs.iter().map(colloc_reproduce::appendix::run_seconds).sum::<f64>() / 60.0;
    let epochs = results("h200-epochs");
    let pv = &epochs.protocol_validation;
    let paper = plan("h200-paper");
    let mig: f64 = paper
        .workloads
        .iter()
        .filter(|w| w.mode == Mode::Mig)
        .map(|w| w.estimated_seconds * w.repetitions as f64)
        .sum();
    vec![
        format!("baselines ({:.0} minutes of GPU time)", minutes(&shipped)),
        format!("`h200-quick` ({} runs,", plan("h200-quick").totals.runs),
        format!(
            "under `quick` and again under 2 whole epochs, {:.0} minutes ({} runs): validates the quick protocol, {} of {} workloads within 3%",
            minutes(&epochs),
            epochs.runs.len(),
            within_goal(pv),
            pv.len()
        ),
        format!(
            "about {} of GPU time estimated without the MIG runs",
            colloc_reproduce::duration(paper.totals.estimated_gpu_seconds - mig)
        ),
        files_so_far(&paper, &results_of(&paper, "h200-paper")),
    ]
}

/// The project's README quotes its campaigns' traces and plans.
#[test]
fn the_readme_quotes_the_campaigns() {
    let text = text_of("README.md");
    let missing: Vec<String> = phrases_readme_campaigns().into_iter().filter(|p| !text.contains(p.as_str())).collect();
    assert!(
        missing.is_empty(),
        "README.md does not say what the traces give; it should read:\n  {}",
        missing.join("\n  ")
    );
}

/// `data/h200-hosts-rerun/README.md` counts its runs and GPU time as its traces do.
#[test]
fn the_h200_hosts_rerun_readme_counts_its_runs() {
    let r = results_in("h200-hosts", "h200-hosts-rerun");
    let ok = r.runs.iter().filter(|x| x.status.as_str() == "ok").count();
    let all = if ok == r.runs.len() { "all `ok`".to_string() } else { format!("{ok} `ok`") };
    let minutes = r.runs.iter().map(colloc_reproduce::appendix::run_seconds).sum::<f64>() / 60.0;
    let phrase = format!("{} runs, {all}, {minutes:.1} minutes of GPU time", r.runs.len());
    let text = text_of("data/h200-hosts-rerun/README.md");
    assert!(text.contains(&phrase), "data/h200-hosts-rerun/README.md should read: {phrase}");
}
