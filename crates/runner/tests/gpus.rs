//! A campaign over several GPUs of one host (`--gpus`), on the simulated backend: every run
//! made once, a workload's repetitions on one GPU, runs on different GPUs at the same time,
//! each GPU's own baselines, one manifest, and a resume that makes nothing more. (Each GPU's
//! own MPS daemon: `mode_commands.rs`.)

mod common;

use colloc_runner::{run_campaign, RunOptions};
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn options(out: &Path, gpus: &str) -> RunOptions {
    let mut o = sim_options(out);
    o.gpus = Some(gpus.parse().unwrap());
    o
}

fn runs_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_campaign_over_four_gpus_makes_every_run_once_with_each_gpus_own_baselines() {
    let d = tempfile::tempdir().unwrap();
    let mut alone = workload("e33-alone", Mode::Exclusive, vec![job("resnet26")]);
    alone.repetitions = 1;
    let mut w = vec![alone];
    for (id, mode, n) in [
        ("e33-x2-naive", Mode::Naive, 2),
        ("e33-x2-mps", Mode::Mps, 2),
        ("e33-x3-mps", Mode::Mps, 3),
        ("e33-x3-naive", Mode::Naive, 3),
    ] {
        let mut x = workload(id, mode, (0..n).map(|_| job("resnet26")).collect());
        x.repetitions = 2;
        w.push(x);
    }
    let p = plan(w);
    let s = run_campaign(&p, &options(d.path(), "0,1,2,3")).unwrap();
    assert!(s.stopped.is_none(), "{}", s.render());

    // Every selected run once, and each GPU's baseline where it ran a collocated workload.
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    let unique: BTreeSet<&str> = made.iter().copied().collect();
    assert_eq!(unique.len(), made.len(), "a run id made twice: {made:?}");
    assert!(s.runs.iter().all(|r| r.status == RunStatus::Ok), "{}", s.render());
    let metas: BTreeMap<String, _> = runs_in(d.path()).into_iter().map(|r| (r.clone(), meta(d.path(), &r))).collect();
    let uuid = |r: &str| metas[r].gpu.as_ref().unwrap().uuid.clone();
    for id in ["e33-x2-naive", "e33-x2-mps", "e33-x3-mps", "e33-x3-naive"] {
        let (a, b) = (uuid(&format!("{id}.r1")), uuid(&format!("{id}.r2")));
        assert_eq!(a, b, "{id}: its repetitions stay on one GPU");
        let here = metas.iter().any(|(r, m)| {
            r.starts_with("e33-alone.") && m.status == RunStatus::Ok && m.gpu.as_ref().unwrap().uuid == a
        });
        assert!(here, "{id} ran on {a}, where no baseline was measured: {:?}", metas.keys().collect::<Vec<_>>());
    }
    // Spread over the GPUs: each GPU's worker takes the next workload from one queue when it
    // is free, so how many get one depends on when their threads first run (all four, unless
    // a thread waits for a CPU while the others finish workloads, as on a loaded machine).
    // Every run on one GPU would fail this; the overlap below shows the GPUs worked at once.
    let gpus_used: BTreeSet<String> = metas.keys().map(|r| uuid(r)).collect();
    assert!(gpus_used.len() >= 2, "the work is spread over the GPUs: {gpus_used:?}");
    for (r, m) in &metas {
        if r.starts_with("e33-alone.") && r != "e33-alone.r1" {
            let why = m.added.as_deref().expect("an added baseline says why");
            assert!(why.contains(&uuid(r)), "{why}");
        }
    }

    // At the same time on different GPUs: the jobs of some two runs on two GPUs ran at once
    // (from the first job's start to the last one's end, as the runner recorded them). Not
    // the measurement windows: a window is 0.2 s of a run's second or so, and on a loaded
    // machine the runs on different GPUs drift apart by more than that.
    let spans: Vec<(String, f64, f64)> = metas
        .iter()
        .map(|(r, m)| {
            let start = m.jobs.iter().map(|j| j.started_wall.unwrap()).fold(f64::MAX, f64::min);
            let end = m.jobs.iter().map(|j| j.ended_wall.unwrap()).fold(f64::MIN, f64::max);
            (uuid(r), start, end)
        })
        .collect();
    let overlap =
        spans.iter().enumerate().any(|(i, a)| spans[i + 1..].iter().any(|b| a.0 != b.0 && a.1 < b.2 && b.1 < a.2));
    assert!(overlap, "no two runs on different GPUs ran at once: {spans:?}");

    // One manifest, complete; a resume makes nothing.
    let (ok, out) = sha256sum_check(d.path());
    assert!(ok, "{out}");
    let again = run_campaign(&p, &options(d.path(), "0,1,2,3")).unwrap();
    assert!(again.runs.is_empty(), "{}", again.render());
    assert_eq!(again.already_done.len(), 9);
}

#[test]
fn a_time_budget_on_several_gpus_stops_cleanly_and_a_resume_makes_exactly_the_rest() {
    let d = tempfile::tempdir().unwrap();
    let mut w = Vec::new();
    for i in 0..16 {
        let mut x = workload(&format!("e33-w{i:02}-exclusive"), Mode::Exclusive, vec![job("resnet26")]);
        x.estimated_seconds = 8.0;
        x.repetitions = 1;
        w.push(x);
    }
    let p = plan(w);
    let mut o = options(d.path(), "0,1");
    o.host_baselines = false;
    // A run takes more than 2.4 s here (its simulated set-up, warm-up and 20 s window at the
    // time scale of 0.1 are sleeps), and one may start while under 12 s are used (8 s × 1.25
    // of the 22 s): at most 5 runs per GPU, 10 of the 16, and at least one even on a loaded
    // machine whose start (CPU calibration included) takes several seconds.
    o.simulate.as_mut().unwrap().time_scale = 0.1;
    o.time_budget = Some(std::time::Duration::from_secs_f64(22.0));
    let s = run_campaign(&p, &o).unwrap();
    let first = runs_in(d.path());
    assert!(!first.is_empty() && first.len() < 16, "{}", s.render());
    let why = s.stopped.as_deref().expect("stopped by the budget");
    assert!(why.starts_with("time budget:") && why.contains(&format!("{} run(s) left", 16 - first.len())), "{why}");
    let (ok, out) = sha256sum_check(d.path());
    assert!(ok, "{out}");

    o.time_budget = None;
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.runs.len(), 16 - first.len(), "{}", s.render());
    assert_eq!(runs_in(d.path()).len(), 16);
}

#[test]
fn gpu_lists_are_checked() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![workload("e33-a", Mode::Exclusive, vec![job("resnet26")])]);
    let e = run_campaign(&p, &options(d.path(), "all")).unwrap_err().to_string();
    assert!(e.contains("--gpus all") && e.contains("--gpus 0,1,2,3"), "{e}");
}
