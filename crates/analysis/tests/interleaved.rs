//! Ratios against interleaved baselines, their intervals and the marks of implausible
//! values, on the shipped traces of `h200-hosts` (interleaved) and `h200` (one set of
//! baselines per host).

use colloc_analysis::{analyse, BaselineHost, Results};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn results(campaign: &str) -> Results {
    let root = root();
    let plan = colloc_plan::plan_campaign(&root, campaign, None).expect("the campaign plans");
    analyse(&root.join("data").join(campaign), Some(&plan)).expect("the campaign analyses")
}

#[test]
fn each_collocated_run_is_divided_by_the_three_runs_alone_nearest_it_on_its_host_and_invocation() {
    let r = results("h200-hosts");
    let run = r.runs.iter().find(|x| x.run_id == "e33-resnet26-cifar10-x2-naive@gen.r1").unwrap();
    // Made between repetitions 2 and 3 of resnet26 alone; of the next nearest, the middle
    // of repetition 4's window is 53.0 s after the middle of its window, repetition 1's
    // 53.4 s before.
    for j in &run.jobs {
        assert_eq!(j.baseline_host, Some(BaselineHost::Interleaved));
        let ids: Vec<&str> = j.baseline_runs.iter().map(|b| b.run_id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "e33-resnet26-cifar10-x1-exclusive@gen.r2",
                "e33-resnet26-cifar10-x1-exclusive@gen.r3",
                "e33-resnet26-cifar10-x1-exclusive@gen.r4"
            ]
        );
        let mut t: Vec<f64> = j.baseline_runs.iter().map(|b| b.throughput).collect();
        t.sort_by(f64::total_cmp);
        let slowdown = j.slowdown.unwrap();
        assert!((slowdown - t[1] / j.throughput.unwrap()).abs() < 1e-9);
    }
    // The last collocated run's nearest: the two before it and the one after.
    let last = r.runs.iter().find(|x| x.run_id == "e33-resnet26-cifar10-x7-mps@gen.r1").unwrap();
    let ids: Vec<&str> = last.jobs[0].baseline_runs.iter().map(|b| b.run_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "e33-resnet26-cifar10-x1-exclusive@gen.r6",
            "e33-resnet26-cifar10-x1-exclusive@gen.r7",
            "e33-resnet26-cifar10-x1-exclusive@gen.r8"
        ]
    );
}

#[test]
fn every_ratio_has_an_interval_around_its_value() {
    for campaign in ["h200-hosts", "h200"] {
        let r = results(campaign);
        let mut with = 0;
        for w in r.workloads.iter().filter(|w| w.stats.aggregate_ratio.is_some()) {
            let i = w.intervals.unwrap_or_else(|| panic!("{campaign}: {} has a ratio but no interval", w.id));
            let stp = w.stats.aggregate_ratio.unwrap().median;
            // One repetition: the interval is that of its baselines and windows around it.
            assert!(i.stp[0] <= i.stp[1], "{}: {:?}", w.id, i.stp);
            assert!(i.stp[0] <= stp * 1.02 && stp * 0.98 <= i.stp[1], "{campaign} {}: {stp} outside {:?}", w.id, i.stp);
            for (what, value, iv) in [("ANTT", w.stats.antt, i.antt), ("fairness", w.stats.fairness, i.fairness)] {
                let v = value.unwrap().median;
                assert!(iv[0] <= v * 1.02 && v * 0.98 <= iv[1], "{campaign} {}: {what} {v} outside {iv:?}", w.id);
            }
            assert!(i.fairness[1] <= 1.0, "fairness is at most 1");
            with += 1;
        }
        assert!(with > 5, "{campaign}: {with}");
    }
}

#[test]
fn implausible_ratios_are_marked_with_their_reason() {
    let r = results("h200");
    // Host GPU-f8cca8b6's only run of resnet26 alone on files was its first: its two-job
    // workloads on files read each job faster beside the other than alone.
    let w = r.workload("e33-resnet26-cifar10-x2-mps@gen").unwrap();
    let text = w.implausible.join("; ");
    assert!(text.contains("ANTT") && text.contains("below 1"), "{text}");
    assert!(text.contains("rests on one run"), "{text}");
    assert!(text.contains("first run"), "{text}");
    // Interleaved, settled baselines: no ratio rests on one run or on a first run.
    let r = results("h200-hosts");
    for w in &r.workloads {
        for why in &w.implausible {
            assert!(!why.contains("one run") && !why.contains("first run"), "{}: {why}", w.id);
        }
    }
}

/// The provenance's run counts add up: every run directory is one of the plan's runs, a
/// later attempt of one, or a run the runner added beyond the plan.
#[test]
fn the_run_counts_add_up_to_the_run_directories() {
    for campaign in ["h200", "h200-hosts", "h200-paper"] {
        let r = results(campaign);
        let p = &r.provenance;
        let dirs = std::fs::read_dir(root().join("data").join(campaign).join("runs")).unwrap().count();
        let total: usize = p.runs_by_status.values().sum();
        let planned_made = p.planned_runs.unwrap() - p.missing_runs.len();
        assert_eq!(total, dirs, "{campaign}");
        assert_eq!(planned_made + p.attempts_again + p.beyond_plan, total, "{campaign}: {p:?}");
    }
    let p = results("h200").provenance;
    assert_eq!((p.planned_runs, p.missing_runs.len(), p.attempts_again, p.beyond_plan), (Some(288), 0, 19, 29));
}
