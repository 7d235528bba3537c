//! The runner with the simulated backend, in-process: barrier, failures, timeout, traces.

mod common;

use colloc_plan::ProtocolKind;
use colloc_runner::run_campaign;
use colloc_trace::events::EventBody;
use colloc_trace::manifest::Problem;
use colloc_trace::meta::{DriverListing, RunStatus};
use colloc_trace::Mode;
use common::*;
use std::time::{Duration, Instant};

#[test]
fn barrier_releases_all_jobs_together_and_nothing_is_measured_before() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![workload("e33-r50-x4-naive", Mode::Naive, (0..4).map(|_| job("resnet50")).collect())]);
    let mut o = sim_options(d.path());
    // Job 2 takes four times longer to get ready: the others must wait for it.
    o.job_env = vec![("COLLOC_FAKE_SLOW".into(), "2".into()), ("COLLOC_FAKE_SLOW_FACTOR".into(), "4".into())];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    let m = meta(d.path(), "e33-r50-x4-naive.r1");
    let release = m.release_mono.expect("released");
    let run = d.path().join("runs/e33-r50-x4-naive.r1");
    let mut releases = Vec::new();
    for j in 0..4 {
        let ev = events(&run, j);
        let ready = first(&ev, "ready").unwrap();
        assert!(ready <= release, "job {j} ready at {ready} after release {release}");
        let rel = first(&ev, "release").unwrap();
        assert!(rel >= release, "job {j} saw release at {rel} before {release}");
        releases.push(rel);
        for e in &ev {
            if matches!(e.body, EventBody::Sample { .. } | EventBody::WindowStart { .. } | EventBody::EpochEnd { .. }) {
                assert!(e.mono > release, "job {j}: {} before release", e.body.kind());
            }
        }
        assert!(ev.iter().any(|e| e.body.kind() == "iterations"));
    }
    // The runner writes the release line to every job in one go; each job's `release` event
    // is stamped when that process gets to read it. Usually within a few ms of each other; the
    // bound is generous because a job process on a loaded machine may wait for a CPU for
    // hundreds of ms before it reads the line.
    let spread = releases.iter().cloned().fold(f64::MIN, f64::max) - releases.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread < 2.0, "releases spread over {spread} s");
    // The slow job took four times longer to get ready, by its own record (simulated set-up
    // and warm-up seconds in its `ready` event), and the release waited for it: at least that
    // long (at the time scale of 0.01) after it started. (Not compared by the time stamps of
    // the `ready` events: which job writes its event first depends on which process the
    // scheduler runs first.)
    let ready_info = |j: usize| {
        let ev = events(&run, j);
        let (setup, warmup) = ev
            .iter()
            .find_map(|e| match e.body {
                EventBody::Ready { setup_seconds, warmup_seconds, .. } => Some((setup_seconds, warmup_seconds)),
                _ => None,
            })
            .unwrap();
        (first(&ev, "hello").unwrap(), setup + warmup)
    };
    let (hello_slow, took_slow) = ready_info(2);
    for j in [0, 1, 3] {
        let (_, took) = ready_info(j);
        assert!(took_slow > 2.0 * took, "job 2 got ready in {took_slow} simulated s, job {j} in {took}");
    }
    assert!(release >= hello_slow + took_slow * 0.01, "released before the slow job can have been ready");
    assert!(m.telemetry.samples > 0 && m.telemetry.source == "simulated");
    assert!(m.telemetry.sampler_cpu_seconds.is_some_and(|s| s >= 0.0), "{:?}", m.telemetry);
    assert!(m.simulated && m.gpu.as_ref().unwrap().name.starts_with("Simulated "));
    assert_eq!(m.jobs.len(), 4);
    assert!(m.jobs.iter().all(|j| j.exit_code == Some(0) && j.failure.is_none() && j.versions.is_some()));
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");
}

/// Protocol 2: the runner stops every job at once when all have met the window, and each
/// job's iteration records cover `[release_mono, window_end_mono]` without a gap.
#[test]
fn the_common_window_ends_for_every_job_at_once_after_all_met_it() {
    let d = tempfile::tempdir().unwrap();
    let mut p =
        plan(vec![workload("e33-mix-x3-mps", Mode::Mps, vec![job("resnet26"), job("resnet152"), job("resnet50")])]);
    // Job 1 is three times slower: the others must train on until it has met the window too.
    // With at least 60 iterations in the window, job 1 needs about 57 simulated seconds for
    // them (about 1 s each), the others meet the window's 20 s with hundreds.
    const MIN_ITERATIONS: u32 = 60;
    if let ProtocolKind::Window { min_iterations, .. } = &mut p.protocol.kind {
        *min_iterations = Some(MIN_ITERATIONS);
    }
    let mut o = sim_options(d.path());
    o.job_env = vec![("COLLOC_FAKE_SLOW".into(), "1".into())];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    let m = meta(d.path(), "e33-mix-x3-mps.r1");
    let (release, stop) = (m.release_mono.unwrap(), m.window_end_mono.expect("window end recorded"));
    assert!(stop > release);
    let run = d.path().join("runs/e33-mix-x3-mps.r1");
    let mut met_seconds = Vec::new();
    for j in 0..3 {
        let ev = events(&run, j);
        let met = ev.iter().find(|e| e.body.kind() == "window_met").expect("window_met");
        assert!(met.mono <= stop, "job {j} met the window at {} after the stop {stop}", met.mono);
        let EventBody::WindowMet { step, seconds, ci_rel, precision_met } = met.body else { unreachable!() };
        assert!(step >= MIN_ITERATIONS as u64 && seconds >= 20.0, "job {j}: {step} iterations, {seconds} s");
        // No precision target: the interval is reported, nothing is judged by it.
        assert!(ci_rel.is_some_and(|c| c >= 0.0) && precision_met.is_none(), "job {j}: {ci_rel:?} {precision_met:?}");
        met_seconds.push(seconds);
        let mut next_step = 0;
        let mut ends = Vec::new();
        for e in &ev {
            if let EventBody::Iterations { first_step, base_mono, end_us, images, data_wait_us } = &e.body {
                assert_eq!(*first_step, next_step);
                assert_eq!((images.len(), data_wait_us.len()), (end_us.len(), end_us.len()));
                next_step += end_us.len() as u64;
                ends.extend(end_us.iter().map(|u| base_mono + *u as f64 * 1e-6));
            }
        }
        assert!(ends.windows(2).all(|w| w[1] >= w[0] - 1e-6), "job {j}: ends go backwards");
        assert!(ends[0] > release, "job {j}: first iteration ends before release");
        assert!(*ends.last().unwrap() >= stop, "job {j} stopped training before the common window ended");
        let EventBody::WindowEnd { step, .. } = ev.iter().rev().find(|e| e.body.kind() == "window_end").unwrap().body
        else {
            unreachable!()
        };
        assert_eq!(step, next_step, "job {j}: every iteration is recorded");
    }
    // The slow job met the window last: by its own record it needed more than twice the
    // simulated seconds of either other job (its `window_met` says how many; compared so
    // rather than by the events' time stamps, which are when each process got a CPU to write
    // them). The stop came after it met the window: no sooner than that many seconds (at the
    // time scale of 0.01) after the release, since the job's window started after the release.
    assert!(
        met_seconds[1] > 2.0 * met_seconds[0] && met_seconds[1] > 2.0 * met_seconds[2],
        "simulated seconds to meet: {met_seconds:?}"
    );
    assert!(
        stop >= release + met_seconds[1] * 0.01 - 1e-6,
        "stop {stop} before job 1 met its window ({met_seconds:?})"
    );
    if let Some((ok, text)) = validate_events(&logs_in(&run), false) {
        assert!(ok, "{text}");
    }
}

/// A job's `window_met`: (event time, steps, seconds, ci_rel, precision_met), and the interval
/// recomputed from the job's `iterations` up to those steps.
type Met = (f64, u64, f64, Option<f64>, Option<bool>, Option<f64>);

/// The [`Met`] of each job of a run.
fn precision_of(run: &std::path::Path, jobs: usize) -> Vec<Met> {
    (0..jobs)
        .map(|j| {
            let ev = events(run, j);
            let met = ev.iter().find(|e| e.body.kind() == "window_met").expect("window_met");
            let EventBody::WindowMet { step, seconds, ci_rel, precision_met } = met.body else { unreachable!() };
            let (mut start, mut ends, mut images) = (None, Vec::new(), Vec::new());
            for e in &ev {
                if let EventBody::Iterations { base_mono, end_us, images: n, .. } = &e.body {
                    start.get_or_insert(*base_mono);
                    ends.extend(end_us.iter().map(|u| base_mono + *u as f64 * 1e-6));
                    images.extend(n);
                }
            }
            let n = step as usize;
            let again = colloc_trace::precision::throughput_ci(start.unwrap(), &ends[..n], &images[..n]);
            (met.mono, step, seconds, ci_rel, precision_met, again.map(|c| c.ci_rel))
        })
        .collect()
}

/// Noise-adaptive stopping: with a target every job reaches in the window, each job meets it
/// with its interval within the target, and the run is fine.
#[test]
fn a_precision_target_that_every_job_meets_ends_the_window() {
    let d = tempfile::tempdir().unwrap();
    let p =
        precise_plan(vec![workload("e33-r26-x2-mps", Mode::Mps, vec![job("resnet26"), job("resnet50")])], 0.02, 60.0);
    let s = run_campaign(&p, &sim_options(d.path())).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    let m = meta(d.path(), "e33-r26-x2-mps.r1");
    let stop = m.window_end_mono.expect("window end recorded");
    let run = d.path().join("runs/e33-r26-x2-mps.r1");
    let job_file: colloc_trace::jobfile::JobFile =
        serde_json::from_str(&std::fs::read_to_string(run.join("job-0.json")).unwrap()).unwrap();
    assert!(matches!(
        job_file.protocol,
        ProtocolKind::Window { precision_target: Some(t), max_window_seconds: Some(m), .. }
            if t == 0.02 && m == 60.0
    ));
    for (j, (mono, step, seconds, ci_rel, precision_met, again)) in precision_of(&run, 2).into_iter().enumerate() {
        assert_eq!(precision_met, Some(true), "job {j}");
        let c = ci_rel.expect("an interval");
        assert!(c <= 0.02, "job {j}: ±{c}");
        // The interval is the one of the job's own iteration records (to their whole µs: at
        // the time scale of 0.01 an iteration lasts a few hundred µs).
        assert!((c - again.unwrap()).abs() < 0.02 * c, "job {j}: {c} vs {again:?}");
        assert!(step >= 20 && (20.0..60.0).contains(&seconds), "job {j}: {step} it, {seconds} s");
        assert!(mono <= stop);
    }
    if let Some((ok, text)) = validate_events(&logs_in(&run), false) {
        assert!(ok, "{text}");
    }
}

/// A target out of reach: every job meets the window at the maximum, saying it missed the
/// target; the runner stops them then, and the run is still fine.
#[test]
fn an_unreachable_precision_target_ends_the_window_at_its_maximum() {
    let d = tempfile::tempdir().unwrap();
    let p = precise_plan(
        vec![workload("e33-r26-x2-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")])],
        1e-5,
        30.0,
    );
    let s = run_campaign(&p, &sim_options(d.path())).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    let run = d.path().join("runs/e33-r26-x2-naive.r1");
    let m = meta(d.path(), "e33-r26-x2-naive.r1");
    let (release, stop) = (m.release_mono.unwrap(), m.window_end_mono.expect("window end recorded"));
    for (j, (_, _, seconds, ci_rel, precision_met, again)) in precision_of(&run, 2).into_iter().enumerate() {
        assert_eq!(precision_met, Some(false), "job {j}");
        assert!(ci_rel.is_some_and(|c| c > 1e-5), "job {j}: {ci_rel:?}");
        assert!(again.is_some(), "job {j}");
        // Met at the first iteration past the maximum (30 simulated s; iterations last ~40 ms).
        assert!((30.0..31.0).contains(&seconds), "job {j}: {seconds} s");
    }
    // The common window lasted the maximum: 30 simulated seconds at the time scale of 0.01.
    assert!(stop - release >= 0.3, "{}", stop - release);
    if let Some((ok, text)) = validate_events(&logs_in(&run), false) {
        assert!(ok, "{text}");
    }
}

#[test]
fn failing_jobs_fail_their_run_and_the_campaign_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![
        workload("wl-fail-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]),
        workload("wl-setup-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]),
        workload("wl-oom-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")]),
        workload("wl-crash-naive", Mode::Naive, vec![job("resnet26")]),
        workload("wl-toobig-naive", Mode::Naive, (0..7).map(|_| job("resnet152")).collect()),
        workload("wl-fine-exclusive", Mode::Exclusive, vec![job("resnet26")]),
    ]);
    let mut o = sim_options(d.path());
    o.job_env = vec![
        ("COLLOC_FAKE_FAIL".into(), "wl-fail:1".into()),
        ("COLLOC_FAKE_FAIL_SETUP".into(), "wl-setup:0".into()),
        ("COLLOC_FAKE_OOM".into(), "wl-oom:1".into()),
        ("COLLOC_FAKE_CRASH".into(), "wl-crash:0".into()),
    ];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!((s.count(RunStatus::Failed), s.count(RunStatus::Ok)), (5, 1), "{}", s.render());
    assert!(s.stopped.is_none());

    let m = meta(d.path(), "wl-fail-naive.r1");
    let r = m.reason.clone().unwrap();
    assert!(r.contains("job 1") && r.contains("injected failure") && r.contains("stderr:"), "{r}");
    assert_eq!(m.jobs[1].exit_code, Some(1));
    assert_eq!(m.jobs[0].exit_code, Some(0), "the other job trains to its end");
    let stderr = std::fs::read_to_string(d.path().join("runs/wl-fail-naive.r1/job-1.stderr.txt")).unwrap();
    assert!(stderr.contains("RuntimeError"), "{stderr}");

    let m = meta(d.path(), "wl-setup-naive.r1");
    assert!(m.release_mono.is_none());
    assert!(m.reason.as_deref().unwrap().contains("job 0 (resnet26) ended before it was ready"), "{:?}", m.reason);
    assert_eq!(m.jobs[1].exit_code, Some(3), "the other job is aborted: {:?}", m.jobs[1]);

    let m = meta(d.path(), "wl-oom-mps.r1");
    assert!(m.reason.as_deref().unwrap().contains("job 1 (resnet26): out of memory"), "{:?}", m.reason);
    assert_eq!(m.jobs[1].exit_code, Some(4));

    let m = meta(d.path(), "wl-crash-naive.r1");
    assert_eq!(m.jobs[0].signal, Some(9));
    assert!(m.reason.as_deref().unwrap().contains("killed by signal 9"), "{:?}", m.reason);

    // Seven resnet152 at batch 128 do not fit into 140 GiB: the simulated model says so.
    let m = meta(d.path(), "wl-toobig-naive.r1");
    assert!(m.reason.as_deref().unwrap().contains("out of memory"), "{:?}", m.reason);

    assert_eq!(meta(d.path(), "wl-fine-exclusive.r1").status, RunStatus::Ok);
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");

    // Every log, failed ones included, follows the protocol (a crashed job's log stops early).
    let runs = d.path().join("runs");
    let mut complete = Vec::new();
    for r in ["wl-fail-naive.r1", "wl-setup-naive.r1", "wl-oom-mps.r1", "wl-toobig-naive.r1", "wl-fine-exclusive.r1"] {
        complete.extend(logs_in(&runs.join(r)));
    }
    if let Some((ok, text)) = validate_events(&complete, false) {
        assert!(ok, "{text}");
    }
    if let Some((ok, text)) = validate_events(&logs_in(&runs.join("wl-crash-naive.r1")), true) {
        assert!(ok, "{text}");
    }
}

#[test]
fn hanging_jobs_are_stopped_by_the_timeout() {
    let d = tempfile::tempdir().unwrap();
    let mut p = plan(vec![
        workload("wl-hang-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]),
        workload("wl-hangsetup-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]),
    ]);
    p.protocol.timeout_seconds = 100.0;
    let mut o = sim_options(d.path());
    // (100 s × 0.01 + 10 s) × 0.3 = 3.3 s per run.
    o.timeout_scale = 0.3;
    o.kill_grace = Duration::from_secs(1);
    o.job_env = vec![
        ("COLLOC_FAKE_HANG".into(), "wl-hang-naive:0".into()),
        ("COLLOC_FAKE_HANG_SETUP".into(), "wl-hangsetup:1".into()),
    ];
    let t0 = Instant::now();
    let s = run_campaign(&p, &o).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(60));
    assert_eq!(s.count(RunStatus::Failed), 2, "{}", s.render());
    for (run, hung) in [("wl-hang-naive.r1", 0), ("wl-hangsetup-naive.r1", 1)] {
        let m = meta(d.path(), run);
        let r = m.reason.clone().unwrap();
        assert!(r.starts_with("timeout after 3.3 s"), "{r}");
        assert!(m.jobs[hung].failure.as_deref().unwrap().contains("timeout"), "{:?}", m.jobs[hung]);
        assert_eq!(m.jobs[hung].signal, Some(15), "SIGTERM stops it: {:?}", m.jobs[hung]);
        for pid in job_pids(&d.path().join("runs").join(run)) {
            assert!(!alive(pid), "job process {pid} survived");
        }
    }
    assert!(meta(d.path(), "wl-hangsetup-naive.r1").release_mono.is_none());
}

#[test]
fn event_logs_follow_the_protocol_in_both_protocols() {
    let d = tempfile::tempdir().unwrap();
    let mut small = job("resnet26");
    small.data.train_count = 1280; // 10 steps per epoch
    small.data.val_count = 256;
    let mut p = plan(vec![
        workload("wl-quick-mps", Mode::Mps, vec![job("resnet26"), job("resnet50")]),
        workload("wl-paper-naive", Mode::Naive, vec![small.clone(), small]),
        workload("wl-mig", Mode::Mig, vec![mig_job("resnet26", "1g.18gb"), mig_job("resnet50", "3g.71gb")]),
    ]);
    let s = run_campaign(&p, &sim_options(d.path())).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 3, "{}", s.render());
    let mut logs = Vec::new();
    for r in ["wl-quick-mps.r1", "wl-paper-naive.r1", "wl-mig.r1"] {
        logs.extend(logs_in(&d.path().join("runs").join(r)));
    }
    // The paper protocol: two whole epochs with validation.
    let d2 = tempfile::tempdir().unwrap();
    p.protocol.kind = ProtocolKind::Epochs { epochs: 2, sample_every: 3 };
    p.workloads.retain(|w| w.id == "wl-paper-naive");
    let s = run_campaign(&p, &sim_options(d2.path())).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    let run = d2.path().join("runs/wl-paper-naive.r1");
    let ev = events(&run, 0);
    let epochs: Vec<_> = ev.iter().filter(|e| e.body.kind() == "epoch_end").collect();
    assert_eq!(epochs.len(), 2);
    assert!(matches!(epochs[1].body, EventBody::EpochEnd { images: 1280, val_top1: Some(_), .. }));
    assert!(matches!(
        ev.last().unwrap().body,
        EventBody::End { reason: colloc_trace::events::EndReason::Completed, .. }
    ));
    logs.extend(logs_in(&run));
    if let Some((ok, text)) = validate_events(&logs, false) {
        assert!(ok, "{text}");
    }
    // MIG: per-instance telemetry rows and the instances in meta.json.
    let m = meta(d.path(), "wl-mig.r1");
    let mig = m.mig.unwrap();
    assert!(mig.torn_down && mig.instances.len() == 2);
    assert_eq!(m.jobs[0].device.as_deref(), Some(mig.instances[0].device_uuid.as_str()));
    let tel = gunzip(&d.path().join("runs/wl-mig.r1/telemetry.csv.gz"));
    assert!(tel.lines().skip(1).any(|l| l.split(',').nth(2) == Some("1")), "no instance rows:\n{tel}");
}

fn gunzip(p: &std::path::Path) -> String {
    use std::io::Read;
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap()).read_to_string(&mut s).unwrap();
    s
}

#[test]
fn telemetry_files_have_the_documented_columns_and_no_fake_zeros() {
    let d = tempfile::tempdir().unwrap();
    // Some sample must be taken while the jobs train: a window of 100 simulated seconds (1 s)
    // rather than 20 (0.2 s), which a sampler thread waiting for a CPU on a loaded machine
    // may miss.
    let p =
        with_window(plan(vec![workload("wl-tel-naive", Mode::Naive, vec![job("resnet50"), job("resnet26")])]), 100.0);
    run_campaign(&p, &sim_options(d.path())).unwrap();
    let run = d.path().join("runs/wl-tel-naive.r1");
    let tel = gunzip(&run.join("telemetry.csv.gz"));
    let mut lines = tel.lines();
    assert_eq!(lines.next().unwrap(), colloc_trace::telemetry::GPU_COLUMNS.join(","));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.len() == colloc_trace::telemetry::GPU_COLUMNS.len()));
    assert!(rows.iter().any(|r| r[3].parse::<f64>().unwrap() > 200.0), "some row shows training power");
    let procs = gunzip(&run.join("processes.csv.gz"));
    let mut lines = procs.lines();
    assert_eq!(lines.next().unwrap(), colloc_trace::telemetry::PROCESS_COLUMNS.join(","));
    let jobs: std::collections::BTreeSet<&str> = lines.map(|l| l.split(',').nth(2).unwrap()).collect();
    assert_eq!(jobs.into_iter().collect::<Vec<_>>(), vec!["0", "1"]);
}

#[test]
fn a_corrupted_trace_is_detected_and_nothing_is_run() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![
        workload("wl-a-exclusive", Mode::Exclusive, vec![job("resnet26")]),
        workload("wl-b-exclusive", Mode::Exclusive, vec![job("resnet26")]),
    ]);
    let mut o = sim_options(d.path());
    o.only = vec!["wl-a-exclusive".into()];
    run_campaign(&p, &o).unwrap();
    assert!(colloc_runner::verify_campaign(d.path()).unwrap().is_empty());
    let f = d.path().join("runs/wl-a-exclusive.r1/job-0.events.jsonl");
    let mut bytes = std::fs::read(&f).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x20;
    std::fs::write(&f, bytes).unwrap();
    let problems = colloc_runner::verify_campaign(d.path()).unwrap();
    assert!(
        matches!(problems.as_slice(), [Problem::Altered { path, .. }] if path == "runs/wl-a-exclusive.r1/job-0.events.jsonl"),
        "{problems:?}"
    );
    let (ok, _) = sha256sum_check(d.path());
    assert!(!ok, "sha256sum -c must fail too");
    o.only.clear();
    let err = run_campaign(&p, &o).unwrap_err().to_string();
    assert!(err.contains("runs/wl-a-exclusive.r1/job-0.events.jsonl") && err.contains("checksum differs"), "{err}");
    assert!(!d.path().join("runs/wl-b-exclusive.r1").exists());
}

#[test]
fn resume_skips_done_runs_and_force_adds_attempts() {
    let d = tempfile::tempdir().unwrap();
    let mut w = workload("wl-rep-exclusive", Mode::Exclusive, vec![job("resnet26")]);
    w.repetitions = 2;
    let mut infeasible = workload("wl-inf-mig", Mode::Mig, vec![mig_job("resnet152", "7g.141gb")]);
    infeasible.feasible = false;
    infeasible.reason = Some("needs 9 of 7 compute slices".into());
    let p = plan(vec![w, infeasible]);
    let mut o = sim_options(d.path());
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!((s.count(RunStatus::Ok), s.count(RunStatus::Infeasible)), (2, 1), "{}", s.render());
    let m = meta(d.path(), "wl-inf-mig.r1");
    assert_eq!(m.reason.as_deref(), Some("needs 9 of 7 compute slices"));
    let before = std::fs::read(d.path().join("SHA256SUMS")).unwrap();

    let s = run_campaign(&p, &o).unwrap();
    assert!(s.runs.is_empty() && s.already_done.len() == 3, "{}", s.render());
    assert_eq!(std::fs::read(d.path().join("SHA256SUMS")).unwrap(), before);

    o.force = true;
    o.only = vec!["wl-rep-exclusive.r2".into()];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.runs.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(), vec!["wl-rep-exclusive.r2.a2"]);
    assert_eq!(meta(d.path(), "wl-rep-exclusive.r2.a2").attempt, 2);
    let after = String::from_utf8(std::fs::read(d.path().join("SHA256SUMS")).unwrap()).unwrap();
    for line in String::from_utf8(before).unwrap().lines() {
        assert!(after.contains(line), "an entry changed: {line}");
    }
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");

    o.only = vec!["nonexistent".into()];
    assert!(run_campaign(&p, &o).unwrap_err().to_string().contains("--only nonexistent"));
}

#[test]
fn mig_mode_off_skips_mig_runs() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![
        workload("wl-mig", Mode::Mig, vec![mig_job("resnet26", "1g.18gb")]),
        workload("wl-naive", Mode::Naive, vec![job("resnet26")]),
    ]);
    let mut o = sim_options(d.path());
    o.simulate.as_mut().unwrap().mig_mode = Some(false);
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!((s.count(RunStatus::Skipped), s.count(RunStatus::Ok)), (1, 1), "{}", s.render());
    let m = meta(d.path(), "wl-mig.r1");
    assert!(m.reason.as_deref().unwrap().contains("MIG mode is off on GPU 0"), "{:?}", m.reason);
    let files: Vec<_> =
        std::fs::read_dir(d.path().join("runs/wl-mig.r1")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(files, vec![std::ffi::OsString::from("meta.json")]);
}

#[test]
fn a_job_that_cannot_start_fails_its_run() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![workload("wl-nostart-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")])]);
    let mut o = sim_options(d.path());
    o.job_command = vec!["/nonexistent/train".into()];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Failed), 1, "{}", s.render());
    let m = meta(d.path(), "wl-nostart-naive.r1");
    let r = m.reason.unwrap();
    assert!(r.contains("ended before it was ready") && r.contains("cannot start `/nonexistent/train"), "{r}");
    assert!(m.jobs.iter().all(|j| j.pid.is_none() && j.failure.is_some()));
}

/// A collocated run whose baseline the campaign has only from another GPU gets a new
/// repetition of that baseline on this GPU first; once it is there, no more.
#[test]
fn missing_same_host_baselines_are_measured_first() {
    let d = tempfile::tempdir().unwrap();
    let mut alone = workload("e33-alone", Mode::Exclusive, vec![job("resnet26")]);
    alone.repetitions = 1;
    let p = plan(vec![alone, workload("e33-x2-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")])]);
    let mut o = sim_options(d.path());
    o.gpu_index = 1;
    o.only = vec!["e33-alone".into()];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.runs.len(), 1, "{}", s.render());

    // On another GPU: the collocated run, and before it the baseline again.
    o.gpu_index = 0;
    o.only = vec!["e33-x2-mps".into()];
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["e33-alone.r2", "e33-x2-mps.r1"], "{}", s.render());
    let m = meta(d.path(), "e33-alone.r2");
    assert_eq!(m.repetition, 2);
    let why = m.added.expect("the added run says why");
    assert!(why.contains("e33-x2-mps") && why.contains(&m.gpu.unwrap().uuid), "{why}");
    assert!(meta(d.path(), "e33-x2-mps.r1").added.is_none());
    assert!(meta(d.path(), "e33-alone.r1").gpu.unwrap().uuid != meta(d.path(), "e33-alone.r2").gpu.unwrap().uuid);

    // Same GPU again, forced new attempt of the mix: its baseline is here now.
    o.force = true;
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["e33-x2-mps.r1.a2"], "{}", s.render());

    // And without host baselines, none is added even on a third GPU.
    o.gpu_index = 2;
    o.host_baselines = false;
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.runs.len(), 1, "{}", s.render());
}

/// Each missing baseline is measured just before the first run divided by it, not all of
/// them before the first run: an invocation that stops early measures none it does not use.
#[test]
fn each_missing_baseline_comes_just_before_the_first_run_that_needs_it() {
    let d = tempfile::tempdir().unwrap();
    let mut small = workload("e33-small", Mode::Exclusive, vec![job("resnet26")]);
    let mut medium = workload("e33-medium", Mode::Exclusive, vec![job("resnet50")]);
    small.repetitions = 1;
    medium.repetitions = 1;
    let p = plan(vec![
        small,
        medium,
        workload("e33-x2-small-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")]),
        workload("e33-x2-medium-naive", Mode::Naive, vec![job("resnet50"), job("resnet50")]),
    ]);
    let mut o = sim_options(d.path());
    o.gpu_index = 1;
    o.only = vec!["e33-small".into(), "e33-medium".into()];
    assert_eq!(run_campaign(&p, &o).unwrap().count(RunStatus::Ok), 2);

    o.gpu_index = 0;
    o.only = vec!["e33-x2-*".into()];
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(
        made,
        ["e33-small.r2", "e33-x2-small-mps.r1", "e33-medium.r2", "e33-x2-medium-naive.r1"],
        "{}",
        s.render()
    );
    assert!(meta(d.path(), "e33-medium.r2").added.unwrap().contains("e33-x2-medium-naive"));
}

/// A selected baseline that the plan puts after a run divided by it is made first, in its
/// own run id: otherwise an invocation stopped by its time budget before reaching it (or
/// resumed on another host) leaves that run without a baseline from its host.
#[test]
fn a_selected_baseline_planned_later_is_made_before_the_run_that_needs_it() {
    let d = tempfile::tempdir().unwrap();
    let mut large = workload("e34-large", Mode::Exclusive, vec![job("resnet152")]);
    large.repetitions = 1;
    let mut mix = workload("e37-mix-naive", Mode::Naive, vec![job("resnet152"), job("resnet26")]);
    mix.repetitions = 1;
    let mut small = workload("e33-small", Mode::Exclusive, vec![job("resnet26")]);
    small.repetitions = 1;
    let p = plan(vec![small, mix, large]);
    let o = sim_options(d.path());
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["e33-small.r1", "e34-large.r1", "e37-mix-naive.r1"], "{}", s.render());
    assert!(meta(d.path(), "e34-large.r1").added.is_none(), "a selected run, not an added one");
    assert_eq!(s.count(RunStatus::Ok), 3, "{}", s.render());
}

/// A MIG run that a GPU with MIG mode off will skip gets no baseline measured for it; with
/// MIG mode on it does.
#[test]
fn skipped_mig_runs_add_no_host_baseline() {
    let d = tempfile::tempdir().unwrap();
    let mut alone = workload("e33-alone", Mode::Exclusive, vec![job("resnet26")]);
    alone.repetitions = 1;
    let p = plan(vec![alone, workload("e33-x1-mig", Mode::Mig, vec![mig_job("resnet26", "1g.18gb")])]);
    let mut o = sim_options(d.path());
    o.only = vec!["e33-alone".into()];
    assert_eq!(run_campaign(&p, &o).unwrap().count(RunStatus::Ok), 1);

    // Another GPU, MIG mode off: the MIG run is skipped, nothing added before it.
    o.gpu_index = 1;
    o.only = vec!["e33-x1-mig".into()];
    o.simulate.as_mut().unwrap().mig_mode = Some(false);
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["e33-x1-mig.r1"], "{}", s.render());
    assert_eq!(s.count(RunStatus::Skipped), 1, "{}", s.render());

    // A third GPU with MIG mode on: the baseline first.
    o.gpu_index = 2;
    o.force = true;
    o.simulate.as_mut().unwrap().mig_mode = Some(true);
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made[0], "e33-alone.r2", "{}", s.render());
}

/// Every run records where its time went, and the host's CPU calibration.
#[test]
fn runs_record_their_phases_and_the_hosts_calibration() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![workload("e33-x2-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")])]);
    let s = run_campaign(&p, &sim_options(d.path())).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    let m = meta(d.path(), "e33-x2-mps.r1");
    let ph = m.phases.expect("phases");
    let window = m.window_end_mono.unwrap() - m.release_mono.unwrap();
    assert!((ph.window_seconds.unwrap() - window).abs() < 1e-9, "{ph:?}");
    let parts = ph.mode_setup_seconds
        + ph.to_ready_seconds.unwrap()
        + ph.barrier_seconds.unwrap()
        + window
        + ph.exit_seconds.unwrap()
        + ph.teardown_seconds;
    assert!((parts - ph.total_seconds).abs() < 0.05, "phases {parts} vs total {}", ph.total_seconds);
    assert!((ph.outside_window_seconds.unwrap() - (ph.total_seconds - window)).abs() < 1e-9);
    assert!(!ph.preloaded);
    assert_eq!(ph.jobs.len(), 2);
    assert!(ph.jobs.iter().all(|j| j.as_ref().is_some_and(|j| j.warmup_steps == 10)), "{:?}", ph.jobs);
    let c = m.host.calibration.expect("calibration");
    assert!(c.single_thread_mib_s > 0.0 && c.all_threads_mib_s > 0.0 && c.threads >= 1, "{c:?}");
}

/// A campaign is made by one version: another source commit is refused, saying what differs,
/// unless mixed versions are allowed.
#[test]
fn runs_are_not_added_to_a_campaign_made_by_another_version() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![
        workload("e33-a", Mode::Exclusive, vec![job("resnet26")]),
        workload("e33-b", Mode::Exclusive, vec![job("resnet50")]),
    ]);
    let mut o = sim_options(d.path());
    o.source_commit = Some(("a".repeat(40), Some(false)));
    o.only = vec!["e33-a".into()];
    assert_eq!(run_campaign(&p, &o).unwrap().count(RunStatus::Ok), 1);

    o.source_commit = Some(("b".repeat(40), Some(false)));
    o.only = vec!["e33-b".into()];
    let e = format!("{:#}", run_campaign(&p, &o).expect_err("refused"));
    assert!(e.contains("1 of 1 run(s) made by another version"), "{e}");
    assert!(e.contains(&format!("source commit {} vs {} now", "a".repeat(12), "b".repeat(12))), "{e}");
    assert!(e.contains("--allow-mixed-versions"), "{e}");
    assert!(!d.path().join("runs/e33-b.r1").exists());

    o.allow_mixed_versions = true;
    assert_eq!(run_campaign(&p, &o).unwrap().count(RunStatus::Ok), 1);
    // Nothing left to make: no check, no refusal.
    o.allow_mixed_versions = false;
    o.source_commit = Some(("c".repeat(40), Some(false)));
    assert!(run_campaign(&p, &o).unwrap().runs.is_empty());
}

/// `--strict-env` stops the invocation before any GPU time when the training program cannot
/// be checked against a lock (the simulated job has none); without it the runs go ahead.
#[test]
fn strict_env_refuses_before_any_run() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![workload("wl-env-naive", Mode::Naive, vec![job("resnet26")])]);
    let mut o = sim_options(d.path());
    o.strict_env = true;
    let e = run_campaign(&p, &o).unwrap_err().to_string();
    assert!(e.contains("no environment check") && e.contains("--strict-env refuses"), "{e}");
    assert!(!d.path().join("runs/wl-env-naive.r1").exists());
    o.strict_env = false;
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    assert_eq!(meta(d.path(), "wl-env-naive.r1").software.environment, None);
}

/// The pid a job reported in its `hello` event.
fn hello_pid(run: &std::path::Path, job: usize) -> u32 {
    events(run, job)
        .iter()
        .find_map(|e| match e.body {
            EventBody::Hello { pid, .. } => Some(pid),
            _ => None,
        })
        .expect("a hello event")
}

#[test]
fn a_job_the_mps_daemon_does_not_serve_fails_its_run_and_the_next_run_is_ok() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![
        workload("wl-wrong-mps", Mode::Mps, vec![job("resnet26"), job("resnet50")]),
        workload("wl-next-mps", Mode::Mps, vec![job("resnet26"), job("resnet50")]),
        workload("wl-wrong-limited", Mode::MpsLimited, vec![limited_job("resnet26", 45, 71424)]),
    ]);
    let mut o = sim_options(d.path());
    o.simulate.as_mut().unwrap().fault_wrong_mps_pipe = Some("wl-wrong:1,wl-wrong-limited:0".into());
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!((s.count(RunStatus::Failed), s.count(RunStatus::Ok)), (2, 1), "{}", s.render());
    assert!(s.stopped.is_none());

    let run = d.path().join("runs/wl-wrong-mps.r1");
    let m = meta(d.path(), "wl-wrong-mps.r1");
    let pid = hello_pid(&run, 1);
    assert_eq!(
        m.reason.as_deref(),
        Some(
            format!(
                "job 1 (resnet50, pid {pid}) is not a client of the run's MPS daemon: the driver lists it as a \
                 plain compute process, not an MPS client"
            )
            .as_str()
        )
    );
    assert!(m.release_mono.is_none(), "nothing is measured");
    assert_eq!((m.jobs[0].exit_code, m.jobs[1].exit_code), (Some(3), Some(3)), "both aborted before release");
    let wrong = &m.jobs[1].env["CUDA_MPS_PIPE_DIRECTORY"];
    assert!(wrong.contains("colloc-mps-") && !wrong.ends_with("/pipe"), "{wrong}");
    let check = m.mps.as_ref().unwrap().clients.as_ref().expect("the clients were checked");
    assert!(check.checked && check.reason.is_none());
    let listed: Vec<_> = check.jobs.iter().map(|j| (j.pid, j.listed_as)).collect();
    assert_eq!(
        listed,
        [(Some(hello_pid(&run, 0)), DriverListing::MpsClient), (Some(pid), DriverListing::ComputeProcess)]
    );

    let m = meta(d.path(), "wl-next-mps.r1");
    assert_eq!(m.status, RunStatus::Ok, "{:?}", m.reason);
    let check = m.mps.as_ref().unwrap().clients.clone().unwrap();
    assert!(check.checked && check.jobs.iter().all(|j| j.listed_as == DriverListing::MpsClient), "{check:?}");
    assert!(!m.jobs[1].env.contains_key("CUDA_MPS_PIPE_DIRECTORY"), "the fault selects its runs only");

    let m = meta(d.path(), "wl-wrong-limited.r1");
    assert!(m.reason.as_deref().unwrap().starts_with("job 0 (resnet26, pid "), "{:?}", m.reason);
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");
    if let Some((ok, text)) = validate_events(&logs_in(&run), false) {
        assert!(ok, "{text}");
    }
}

#[test]
fn a_driver_that_cannot_list_mps_clients_leaves_the_check_undone_and_the_run_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![workload("wl-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")])]);
    let mut o = sim_options(d.path());
    if let Some(s) = o.simulate.as_mut() {
        s.lists_mps_clients = false;
    }
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    let check = meta(d.path(), "wl-mps.r1").mps.unwrap().clients.unwrap();
    assert!(!check.checked && check.jobs.is_empty(), "{check:?}");
    assert!(check.reason.as_deref().unwrap().contains("cannot list MPS clients: Not Supported"), "{check:?}");
}

#[test]
fn a_job_that_dies_under_mps_stops_the_others_at_once() {
    let d = tempfile::tempdir().unwrap();
    let mut p = plan(vec![workload("wl-crash-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")])]);
    // The paper protocol knows no stop line: about 30 s for the other job's 200 epochs.
    p.protocol.kind = ProtocolKind::Epochs { epochs: 200, sample_every: 3 };
    p.protocol.timeout_seconds = 10_000.0;
    let mut o = sim_options(d.path());
    o.job_env = vec![("COLLOC_FAKE_CRASH".into(), "wl-crash:1".into())];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Failed), 1, "{}", s.render());
    let m = meta(d.path(), "wl-crash-mps.r1");
    // At once: the other job ended within moments of the crash (as the runner saw both end),
    // not after its epochs. Usually tens of ms; the bound, half of the 30 s its epochs would
    // take, leaves room for a runner waiting for a CPU on a loaded machine.
    let ended = |j: usize| m.jobs[j].ended_wall.unwrap_or_else(|| panic!("job {j} has no end: {:?}", m.jobs[j]));
    assert!(ended(0) - ended(1) < 15.0, "job 0 ended {} s after job 1 crashed", ended(0) - ended(1));
    let r = m.reason.clone().unwrap();
    assert!(
        r.starts_with(
            "job 1 (resnet26): killed by signal 9, while the run's MPS daemon served it; the other jobs were stopped"
        ),
        "{r}"
    );
    assert_eq!(m.jobs[1].signal, Some(9));
    assert_eq!(m.jobs[0].signal, Some(15), "stopped at once: {:?}", m.jobs[0]);
    assert_eq!(m.jobs[0].failure.as_deref(), Some("stopped: job 1 failed while the MPS daemon served it"));
}

/// `--time-budget`: a run whose estimate (with the margin) would end past the budget is not
/// started; the invocation stops there, saying so, and the next one goes on from it.
#[test]
fn a_time_budget_stops_before_a_run_that_would_pass_it() {
    let d = tempfile::tempdir().unwrap();
    let short = once(workload("wl-short-naive", Mode::Naive, vec![job("resnet26")]), 10.0);
    let long = once(workload("wl-long-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]), 200.0);
    let p = plan(vec![short, long]);
    let mut o = sim_options(d.path());
    o.time_budget = Some(Duration::from_secs(100));
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["wl-short-naive.r1"], "{}", s.render());
    let why = s.stopped.as_deref().unwrap();
    assert!(
        why.starts_with("time budget: wl-long-naive.r1 (estimated 200 s") && why.contains("1 run(s) left"),
        "{why}"
    );
    assert_eq!(s.exit_code(), std::process::ExitCode::FAILURE);
    // A budget that fits: the rest is made.
    o.time_budget = Some(Duration::from_secs(300));
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["wl-long-naive.r1"], "{}", s.render());
    assert!(s.stopped.is_none());
}

/// `--settle` makes the first run on each data the invocation reads once more before it,
/// unrecorded: the campaign holds the planned runs only, each says what settled it, and the
/// scratch directory is gone; with a time budget that fits the first run but not twice it,
/// the runs are made unsettled.
#[test]
fn settle_makes_the_first_run_on_new_data_once_unrecorded_before_it() {
    let d = tempfile::tempdir().unwrap();
    let alone = once(workload("wl-settle-exclusive", Mode::Exclusive, vec![job("resnet26")]), 10.0);
    let pair = once(workload("wl-settle-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]), 10.0);
    let mut on_files = job("resnet26");
    on_files.data.source = colloc_trace::jobfile::DataSource::Generated;
    let files = once(workload("wl-settle-files-naive", Mode::Naive, vec![on_files.clone(), on_files]), 10.0);
    let p = plan(vec![alone, pair, files]);
    let mut o = sim_options(d.path());
    o.settle = true;
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["wl-settle-exclusive.r1", "wl-settle-naive.r1", "wl-settle-files-naive.r1"], "{}", s.render());
    assert_eq!(s.count(RunStatus::Ok), 3, "{}", s.render());
    let mut dirs: Vec<String> = std::fs::read_dir(d.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut planned = made.clone();
    planned.sort();
    assert_eq!(dirs, planned, "the settling runs left nothing in the campaign");
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");
    let first = "wl-settle-exclusive.r1 made once unrecorded first (ok, ";
    for id in &made[..2] {
        let settled = meta(d.path(), id).settled.unwrap_or_else(|| panic!("{id}: no `settled`"));
        assert!(settled.starts_with(first) && !settled.contains(';'), "{id}: {settled}");
    }
    // The first run on files is settled again: synthetic data warmed none of its caches.
    let settled = meta(d.path(), made[2]).settled.unwrap();
    let (a, b) = settled.split_once("; ").expect("two settling runs");
    assert!(
        a.starts_with(first) && b.starts_with("wl-settle-files-naive.r1 made once unrecorded first (ok, "),
        "{settled}"
    );
    let scratch = std::env::temp_dir().join(format!("colloc-settle-{}-gpu0", std::process::id()));
    assert!(!scratch.exists(), "{} is left", scratch.display());

    // A budget the first run fits (10 s × 1.25) but not twice (25 s): made without settling.
    // (24 s: the run is begun while under 11.5 s of the budget are used, which leaves a
    // loaded machine seconds to spare for the invocation's start and its CPU calibration.)
    let d = tempfile::tempdir().unwrap();
    let mut o = sim_options(d.path());
    o.settle = true;
    o.only = vec!["wl-settle-exclusive".into()];
    o.time_budget = Some(Duration::from_secs(24));
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 1, "{}", s.render());
    assert_eq!(meta(d.path(), "wl-settle-exclusive.r1").settled, None);

    // Without --settle nothing says so.
    let d = tempfile::tempdir().unwrap();
    let s = run_campaign(&p, &sim_options(d.path())).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 3, "{}", s.render());
    assert!(made.iter().all(|id| meta(d.path(), id).settled.is_none()));
}

/// `--time-budget` keeps a workload's repetitions, and its twin under a part's own
/// protocol, on one host: such a unit starts only when all of it fits; a unit that comes
/// first in an invocation is still made run by run.
#[test]
fn a_time_budget_starts_a_workloads_runs_only_when_all_of_them_fit() {
    let d = tempfile::tempdir().unwrap();
    let short = once(workload("wl-short-naive", Mode::Naive, vec![job("resnet26")]), 10.0);
    let pair = once(workload("wl-pair-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]), 30.0);
    let mut twin = pair.clone();
    twin.id = "wl-pair-naive~epochs".into();
    let p = plan(vec![short, pair, twin]);
    let mut o = sim_options(d.path());
    // Each of the pair's runs fits on its own (37.5 s with the margin), both do not (75 s).
    // (74 s: the second run of the next invocation is begun while under 36.5 s are used, which
    // leaves a loaded machine ample time for its start and the first run.)
    o.time_budget = Some(Duration::from_secs(74));
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["wl-short-naive.r1"], "{}", s.render());
    let why = s.stopped.as_deref().unwrap();
    assert!(
        why.starts_with("time budget: wl-pair-naive.r1 and the 1 run(s) made with it on one host (estimated 60 s")
            && why.contains("2 run(s) left"),
        "{why}"
    );
    // First in the next invocation, the same unit is made run by run within the budget.
    let s = run_campaign(&p, &o).unwrap();
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["wl-pair-naive.r1", "wl-pair-naive~epochs.r1"], "{}", s.render());
    assert!(s.stopped.is_none(), "{}", s.render());
}

/// One campaign, two protocols: `h200-epochs` as planned, its 2 × resnet26 MPS workload
/// under the campaign's quick protocol and again under the part's `epochs`. Each run gets
/// its workload's protocol: the quick one a common window, the epochs one 2 whole epochs
/// over the whole set with validation, no window, and that protocol in its meta.json.
#[test]
fn each_workload_runs_under_its_own_protocol() {
    let d = tempfile::tempdir().unwrap();
    let mut p = colloc_plan::plan_campaign(&project_root(), "h200-epochs", None).expect("h200-epochs plans");
    let (quick, epochs) = ("e33-resnet26-cifar10-x2-mps@gen", "e33-resnet26-cifar10-x2-mps@gen~epochs");
    p.workloads.retain(|w| w.id == quick || w.id == epochs);
    for w in &mut p.workloads {
        w.repetitions = 1;
    }
    assert_eq!(p.workloads.len(), 2);
    let s = run_campaign(&p, &sim_options(d.path())).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 2, "{}", s.render());

    let q = meta(d.path(), &format!("{quick}.r1"));
    assert!(q.window_end_mono.is_some(), "the quick run has its common window");
    assert_eq!(q.protocol.name, "quick");
    let qrun = d.path().join(format!("runs/{quick}.r1"));
    assert!(
        events(&qrun, 0).iter().all(|e| e.body.kind() != "epoch_end"),
        "an epoch of 50,000 images in a 20 s window"
    );

    let e = meta(d.path(), &format!("{epochs}.r1"));
    assert_eq!(e.protocol.name, "epochs");
    assert!(matches!(e.protocol.kind, ProtocolKind::Epochs { epochs: 2, .. }), "{:?}", e.protocol);
    assert!(e.window_end_mono.is_none(), "no common window under epochs");
    let erun = d.path().join(format!("runs/{epochs}.r1"));
    let mut logs = logs_in(&qrun);
    for j in 0..2 {
        let ev = events(&erun, j);
        let ends: Vec<_> = ev
            .iter()
            .filter_map(|e| match e.body {
                EventBody::EpochEnd { images, val_top1, .. } => Some((images, val_top1)),
                _ => None,
            })
            .collect();
        // The loader drops the last partial batch: 390 batches of 128 of the 50,000 images.
        assert_eq!(ends.len(), 2, "job {j}: {ends:?}");
        assert!(ends.iter().all(|(images, top1)| *images == 390 * 128 && top1.is_some()), "job {j}: {ends:?}");
        assert!(matches!(
            ev.last().unwrap().body,
            EventBody::End { reason: colloc_trace::events::EndReason::Completed, .. }
        ));
    }
    logs.extend(logs_in(&erun));
    if let Some((ok, text)) = validate_events(&logs, false) {
        assert!(ok, "{text}");
    }
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");
}

/// A process of someone else appears on the GPU during a run: the run goes on and is `ok`,
/// its `meta.json` lists the process; the run beside it, without one, lists nothing.
#[test]
fn a_foreign_process_that_appears_mid_run_is_recorded_and_the_run_goes_on() {
    let d = tempfile::tempdir().unwrap();
    // The process appears 50 simulated seconds (0.5 s) after the first sample in which a job
    // trained, in a window of 150 (1.5 s): the sampler, asleep or waiting for a CPU for up to
    // about a second on a loaded machine, still sees it before the window ends.
    let p = with_window(
        plan(vec![
            workload("wl-disturbed-naive", Mode::Naive, vec![job("resnet26"), job("resnet50")]),
            workload("wl-quiet-naive", Mode::Naive, vec![job("resnet26"), job("resnet50")]),
        ]),
        150.0,
    );
    let mut o = sim_options(d.path());
    o.telemetry_hz = 50.0;
    if let Some(s) = o.simulate.as_mut() {
        s.foreign_process =
            Some(colloc_runner::SimForeign { runs: "wl-disturbed".into(), after_seconds: 50.0, memory_bytes: 3 << 30 });
    }
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.count(RunStatus::Ok), 2, "{}", s.render());

    let m = meta(d.path(), "wl-disturbed-naive.r1");
    let (release, stop) = (m.release_mono.unwrap(), m.window_end_mono.unwrap());
    let f = &m.telemetry.foreign_processes;
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].name.as_deref(), f[0].gpu_memory_bytes), (Some("simulated-foreign"), Some(3 << 30)));
    assert!(!m.jobs.iter().any(|j| j.pid == Some(f[0].pid)));
    // Not seen before it appeared, 0.5 s after the release or later. (A sample's time is read
    // before the processes are listed; the bound leaves 0.25 s for a sampler thread that loses
    // its CPU in between.)
    assert!(f[0].first_seen_mono >= release + 0.25 && f[0].first_seen_mono < stop, "{f:?} in [{release}, {stop}]");
    // It stays until the run ends: seen in the last sample the run took (the sampler may have
    // been asleep when the window closed, so that sample can lie a period before `stop`).
    let tel = gunzip(&d.path().join("runs/wl-disturbed-naive.r1/telemetry.csv.gz"));
    let last = tel.lines().skip(1).filter_map(|l| l.split(',').next()?.parse::<f64>().ok()).fold(f64::MIN, f64::max);
    assert!((f[0].last_seen_mono - last).abs() < 1e-3, "it stays until the run ends: {f:?}, last sample {last}");
    assert!(last >= f[0].first_seen_mono);
    let text = std::fs::read_to_string(d.path().join("runs/wl-disturbed-naive.r1/meta.json")).unwrap();
    assert!(text.contains("\"foreign_processes\""), "{text}");

    let m = meta(d.path(), "wl-quiet-naive.r1");
    assert!(m.telemetry.foreign_processes.is_empty(), "{:?}", m.telemetry.foreign_processes);
    let text = std::fs::read_to_string(d.path().join("runs/wl-quiet-naive.r1/meta.json")).unwrap();
    assert!(!text.contains("foreign_processes"), "absent when none was seen");
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");
}

/// A disk that fills while a run's trace is written stops the campaign with the reason;
/// nothing of that run enters the manifest, and the next invocation quarantines what it left
/// and makes it again.
#[test]
fn a_full_disk_while_a_trace_is_written_stops_cleanly_and_the_run_is_made_again() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![
        workload("e33-a", Mode::Exclusive, vec![job("resnet26")]),
        workload("e33-b", Mode::Naive, vec![job("resnet26"), job("resnet26")]),
        workload("e33-c", Mode::Exclusive, vec![job("resnet50")]),
    ]);
    let mut o = sim_options(d.path());
    o.simulate.as_mut().unwrap().fault_disk_full = Some("e33-b".into());
    let e = format!("{:#}", run_campaign(&p, &o).unwrap_err());
    assert!(e.contains("e33-b.r1: the campaign stops") && e.contains("No space left on device"), "{e}");
    let listed = std::fs::read_to_string(d.path().join("SHA256SUMS")).unwrap();
    assert!(listed.contains("runs/e33-a.r1/") && !listed.contains("e33-b") && !listed.contains("e33-c"), "{listed}");
    let (ok, out) = sha256sum_check(d.path());
    assert!(ok, "{out}");

    o.simulate.as_mut().unwrap().fault_disk_full = None;
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(s.quarantined.len(), 1, "{}", s.render());
    assert!(s.quarantined[0].1.to_string_lossy().contains("e33-b.r1"), "{:?}", s.quarantined);
    let made: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(made, ["e33-b.r1", "e33-c.r1"], "{}", s.render());
    assert!(s.runs.iter().all(|r| r.status == RunStatus::Ok), "{}", s.render());
}

/// NVML failing mid-run: the metrics it cannot read stay empty fields from then on (never
/// zeros), `meta.json` says in how many rows and why, and the run and the campaign go on.
#[test]
fn nvml_errors_mid_sampling_leave_empty_fields_with_the_reason_and_the_run_goes_on() {
    let d = tempfile::tempdir().unwrap();
    // NVML fails 5 simulated seconds (0.05 s) after the first sample in which a job trained;
    // some sample must come after that. A window of 100 (1 s) leaves the sampler, asleep or
    // waiting for a CPU on a loaded machine, most of a second to take one.
    let p = with_window(
        plan(vec![
            workload("e33-a-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]),
            workload("e33-b", Mode::Exclusive, vec![job("resnet26")]),
        ]),
        100.0,
    );
    let mut o = sim_options(d.path());
    o.simulate.as_mut().unwrap().nvml_errors = Some(("e33-a".into(), 5.0));
    let s = run_campaign(&p, &o).unwrap();
    assert!(s.runs.iter().all(|r| r.status == RunStatus::Ok) && s.runs.len() == 2, "{}", s.render());

    let columns = colloc_trace::telemetry::GPU_COLUMNS;
    let col = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    let rows = |run: &str| -> Vec<Vec<String>> {
        gunzip(&d.path().join("runs").join(run).join("telemetry.csv.gz"))
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    };
    let a = rows("e33-a-naive.r1");
    let (power, temp) = (col("power_w"), col("temperature_c"));
    let empty = a.iter().filter(|r| r[power].is_empty()).count();
    assert!(empty > 0 && empty < a.len(), "power read at first, then not: {empty} of {} rows empty", a.len());
    let first_empty = a.iter().position(|r| r[power].is_empty()).unwrap();
    assert!(a[first_empty..].iter().all(|r| r[power].is_empty()), "once failing, failing");
    assert!(a.iter().all(|r| !r[temp].is_empty()), "what still reads is still written");
    let m = meta(d.path(), "e33-a-naive.r1");
    let why = m.telemetry.unavailable.get("power_w").expect("the reason is recorded");
    assert!(why.contains(&format!("missing in {empty} of {} rows", a.len())) && why.contains("Unknown Error"), "{why}");
    // The other run is untouched.
    assert!(rows("e33-b.r1").iter().all(|r| !r[power].is_empty()));
    assert!(!meta(d.path(), "e33-b.r1").telemetry.unavailable.contains_key("power_w"));
}

/// A campaign is made on one GPU model: a run on another model is refused before anything
/// runs, naming both.
#[test]
fn runs_on_another_gpu_model_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(vec![
        workload("e33-a", Mode::Exclusive, vec![job("resnet26")]),
        workload("e33-b", Mode::Exclusive, vec![job("resnet50")]),
    ]);
    let mut o = sim_options(d.path());
    o.only = vec!["e33-a".into()];
    run_campaign(&p, &o).unwrap();
    let mut other = p.clone();
    other.gpu.name = "NVIDIA A100-SXM4-40GB".into();
    o.only = vec!["e33-b".into()];
    let e = format!("{:#}", run_campaign(&other, &o).unwrap_err());
    assert!(e.contains("a campaign is made on one GPU model") && e.contains("A100") && e.contains("H200"), "{e}");
    assert!(!d.path().join("runs/e33-b.r1").exists());
    // The campaign's own model goes on.
    assert_eq!(run_campaign(&p, &o).unwrap().runs.len(), 1);
}

/// The runs an invocation made, in the order it made them.
fn made(s: &colloc_runner::CampaignSummary) -> Vec<&str> {
    s.runs.iter().map(|r| r.run_id.as_str()).collect()
}

/// A plan whose baseline of resnet26 is interleaved with the collocated workload divided by
/// it (3 repetitions), as the campaign's `interleaved_baselines` declares.
fn interleaved_plan(between: u32, runs_per_invocation: u32) -> colloc_plan::Plan {
    let mut b = workload("wl-b-exclusive", Mode::Exclusive, vec![job("resnet26")]);
    b.interleaved = true;
    let mut r = workload("wl-r-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]);
    r.repetitions = 3;
    let mut p = plan(vec![b, r]);
    p.interleave = Some(colloc_plan::Interleave { between, runs_per_invocation });
    p
}

#[test]
fn interleaved_baselines_alternate_with_the_runs_they_divide() {
    let d = tempfile::tempdir().unwrap();
    let p = interleaved_plan(1, 3);
    let s = run_campaign(&p, &sim_options(d.path())).unwrap();
    assert_eq!(
        made(&s),
        [
            "wl-b-exclusive.r1",
            "wl-r-naive.r1",
            "wl-b-exclusive.r2",
            "wl-r-naive.r2",
            "wl-b-exclusive.r3",
            "wl-r-naive.r3",
            "wl-b-exclusive.r4"
        ],
        "{}",
        s.render()
    );
    let m = meta(d.path(), "wl-b-exclusive.r4");
    assert!(m.added.as_deref().unwrap().contains("interleaved baseline"), "{:?}", m.added);
    // One invocation: every run names it.
    let r1 = meta(d.path(), "wl-r-naive.r1").invocation.expect("the invocation is recorded");
    assert_eq!(m.invocation.as_deref(), Some(r1.as_str()));
    let (ok, text) = sha256sum_check(d.path());
    assert!(ok, "{text}");
}

#[test]
fn interleaved_baselines_are_measured_again_in_every_invocation_at_least_as_declared() {
    let d = tempfile::tempdir().unwrap();
    let p = interleaved_plan(2, 3);
    let mut o = sim_options(d.path());
    o.only = vec!["wl-r-naive.r1".into(), "wl-r-naive.r2".into()];
    let s = run_campaign(&p, &o).unwrap();
    // Two before the first run (with the one after, the three an invocation needs), none
    // between two runs when `between` is 2, one after the last.
    assert_eq!(
        made(&s),
        ["wl-b-exclusive.r1", "wl-b-exclusive.r2", "wl-r-naive.r1", "wl-r-naive.r2", "wl-b-exclusive.r3"],
        "{}",
        s.render()
    );
    // A later invocation measures its own, with repetition numbers after the campaign's.
    o.only = vec!["wl-r-naive.r3".into()];
    let s = run_campaign(&p, &o).unwrap();
    assert_eq!(
        made(&s),
        ["wl-b-exclusive.r4", "wl-b-exclusive.r5", "wl-r-naive.r3", "wl-b-exclusive.r6"],
        "{}",
        s.render()
    );
    let a = meta(d.path(), "wl-b-exclusive.r3").invocation.unwrap();
    let b = meta(d.path(), "wl-b-exclusive.r4").invocation.unwrap();
    assert_ne!(a, b, "two invocations, two names");
}
