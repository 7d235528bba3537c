//! Analysis of fixture campaigns: verification first, then the numbers.

use colloc_analysis::testkit::{write_campaign, FixtureOptions};
use colloc_analysis::{analyse, Results};
use colloc_plan::Plan;
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use std::path::Path;

fn fixture(root: &Path, opts: FixtureOptions) -> std::path::PathBuf {
    write_campaign(root, &opts).expect("fixture campaign")
}

/// The fixture's plan, as `cargo xtask reproduce` passes the campaign's plan to the analysis.
fn plan(opts: &FixtureOptions) -> Plan {
    colloc_analysis::testkit::plan(opts).expect("fixture plan")
}

fn workload<'a>(r: &'a Results, id: &str) -> &'a colloc_analysis::WorkloadResult {
    r.workload(id).unwrap_or_else(|| panic!("no workload {id}"))
}

#[test]
fn analyses_a_fixture_campaign() {
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions::default();
    let dir = fixture(d.path(), opts.clone());
    let r = analyse(&dir, Some(&plan(&opts))).unwrap();
    assert!(r.simulated);
    assert_eq!(r.primary_data, "synthetic");
    assert_eq!(r.provenance.gpu_names, vec!["NVIDIA H200".to_string()]);
    assert_eq!(r.provenance.manifest_sha256.len(), 64);

    // Alone: ratio 1 up to noise; the baseline is the exclusive run.
    let alone = workload(&r, "e33-resnet26-cifar10-x1-exclusive@syn");
    assert_eq!(alone.status, RunStatus::Ok);
    let ratio = alone.stats.aggregate_ratio.unwrap();
    assert!((ratio.median - 1.0).abs() < 0.05, "{ratio:?}");
    assert_eq!(ratio.n, 2);
    let b = r.baselines.iter().find(|b| b.model == "resnet26" && b.data == "synthetic").unwrap();
    assert_eq!(b.mode, Mode::Exclusive);
    assert!((b.stats.throughput.unwrap().median - 3200.0).abs() < 100.0, "{b:?}");
    let epoch = b.stats.epoch_seconds.unwrap().median;
    assert!((epoch - 50_000.0 / b.stats.throughput.unwrap().median).abs() < 1.0);

    // Seven small jobs under MPS: more in total (a little, on the H200 as the speed model
    // fits it), each much slower.
    let mps7 = workload(&r, "e33-resnet26-cifar10-x7-mps@syn");
    assert!(mps7.stats.aggregate_ratio.unwrap().median > 1.05, "{:?}", mps7.stats.aggregate_ratio);
    assert!(mps7.stats.per_job_slowdown.unwrap().median > 1.5);
    assert!(mps7.stats.per_job_epoch_seconds.unwrap().median > epoch);
    assert_eq!(mps7.job_stats.len(), 7);
    let u = mps7.stats.sm_activity_pct.unwrap();
    assert!(u.median > 50.0 && u.median <= 100.0, "{u:?}");
    assert!(mps7.stats.energy_per_image_j.unwrap().median > 0.0);
    assert!(mps7.stats.cpu_cores_total.unwrap().median > 5.0);

    // MIG could not be enabled: skipped with the reason, mps-limited measured instead.
    let mig7 = workload(&r, "e33-resnet26-cifar10-x7-mig1g@syn");
    assert_eq!(mig7.status, RunStatus::Skipped);
    assert!(mig7.reasons[0].contains("MIG mode could not be enabled"));
    assert!(mig7.stats.aggregate_ratio.is_none());
    assert_eq!(mig7.layout, "1g×7");
    let lim7 = workload(&r, "e33-resnet26-cifar10-x7-mpslim1g@syn");
    assert_eq!(lim7.status, RunStatus::Ok);

    // Seven large jobs do not fit the GPU's memory.
    let big = workload(&r, "e33-resnet152-imagenet-x7-naive@syn");
    assert_eq!(big.status, RunStatus::Failed);
    assert!(big.reasons.iter().any(|s| s.contains("out of memory")));

    // Mixes that need more than seven slices are infeasible under MIG.
    let inf = workload(&r, "e37-L+M+2S-mig@syn");
    assert_eq!(inf.status, RunStatus::Infeasible);
    assert!(!inf.feasible);

    // Modes compared for the same jobs.
    let c = r.comparisons.iter().find(|c| c.config == mps7.config).unwrap();
    assert!(c.mps_over_naive.unwrap() > 1.0);
    assert_eq!(c.mig_stand_in, Some(Mode::MpsLimited));
    assert_eq!(c.best_mode, Some(Mode::Mps));

    // A mix of models is compared on each job over its model alone, not on raw images per
    // second (which a mode starving the slower model would win).
    let (mix_naive, mix_mps) = (workload(&r, "e37-M+S-naive@syn"), workload(&r, "e37-M+S-mps@syn"));
    let c = r.comparisons.iter().find(|c| c.config == mix_mps.config).unwrap();
    assert!(c.normalised);
    let on_ratio = mix_mps.stats.aggregate_ratio.unwrap().median / mix_naive.stats.aggregate_ratio.unwrap().median;
    let on_raw =
        mix_mps.stats.aggregate_throughput.unwrap().median / mix_naive.stats.aggregate_throughput.unwrap().median;
    assert!((c.mps_over_naive.unwrap() - on_ratio).abs() < 1e-9, "{c:?}");
    assert!((on_ratio - on_raw).abs() > 1e-6, "the fixture should tell the two bases apart");

    // Timelines of the headline workloads.
    assert!(r.timelines.iter().any(|t| t.mode == Mode::Mps && t.label == "7 × resnet26" && t.data == "synthetic"));
    assert!(r.timelines.iter().all(|t| !t.points.is_empty()));

    // Every run appears, failed ones too.
    assert!(r.runs.iter().any(|x| x.status == RunStatus::Failed));
    assert!(r.runs.iter().any(|x| x.status == RunStatus::Infeasible));
    assert!(r.runs.windows(2).all(|w| w[0].run_id < w[1].run_id));
}

#[test]
fn mig_instances_are_measured_when_mig_is_available() {
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { mig_available: true, repetitions: 1, ..Default::default() };
    let dir = fixture(d.path(), opts.clone());
    let r = analyse(&dir, Some(&plan(&opts))).unwrap();
    let mig7 = workload(&r, "e33-resnet26-cifar10-x7-mig1g@syn");
    assert_eq!(mig7.status, RunStatus::Ok);
    // Whole-GPU GPM metrics are empty under MIG: the instances' mean is used.
    let run = r.runs.iter().find(|x| x.workload_id == mig7.id).unwrap();
    let u = run.utilisation.as_ref().unwrap();
    assert_eq!(u.scope, "gpu");
    assert!(u.sm_activity_pct.unwrap() > 10.0);
    assert!(u.power_w.is_some());
    let c = r.comparisons.iter().find(|c| c.config == mig7.config).unwrap();
    assert_eq!(c.mig_stand_in, Some(Mode::Mig));
    let t = r.timelines.iter().find(|t| t.mode == Mode::Mig && t.label == "7 × resnet26").unwrap();
    assert!(t.points.iter().any(|p| p.sm_activity_pct.is_some()));
}

#[test]
fn a_tampered_trace_is_refused_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    let dir = fixture(d.path(), FixtureOptions { repetitions: 1, ..Default::default() });
    let victim = dir.join("runs/e33-resnet26-cifar10-x7-mps@syn.r1/job-3.events.jsonl");
    let mut bytes = std::fs::read(&victim).unwrap();
    let i = bytes.len() / 2;
    bytes[i] ^= 0x01;
    std::fs::write(&victim, &bytes).unwrap();
    let err = format!("{:#}", analyse(&dir, None).unwrap_err());
    assert!(err.contains("runs/e33-resnet26-cifar10-x7-mps@syn.r1/job-3.events.jsonl"), "{err}");
    assert!(err.contains("checksum differs"), "{err}");
}

#[test]
fn missing_extra_and_truncated_files_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = fixture(d.path(), FixtureOptions { repetitions: 1, ..Default::default() });
    let run = dir.join("runs/e33-resnet26-cifar10-x2-naive@syn.r1");
    std::fs::remove_file(run.join("telemetry.csv.gz")).unwrap();
    std::fs::write(run.join("notes.txt"), "extra").unwrap();
    let meta = run.join("meta.json");
    let text = std::fs::read(&meta).unwrap();
    std::fs::write(&meta, &text[..text.len() - 10]).unwrap();
    let err = format!("{:#}", analyse(&dir, None).unwrap_err());
    assert!(
        err.contains("e33-resnet26-cifar10-x2-naive@syn.r1/telemetry.csv.gz: listed in SHA256SUMS but missing"),
        "{err}"
    );
    assert!(err.contains("e33-resnet26-cifar10-x2-naive@syn.r1/notes.txt: present but not listed"), "{err}");
    assert!(err.contains("e33-resnet26-cifar10-x2-naive@syn.r1/meta.json: checksum differs"), "{err}");

    std::fs::remove_file(dir.join("SHA256SUMS")).unwrap();
    let err = format!("{:#}", analyse(&dir, None).unwrap_err());
    assert!(err.contains("no SHA256SUMS"), "{err}");
}

/// `path`'s gzip text, with `f` applied, written back (its manifest entry left as it was).
fn edit_gz(path: &Path, f: impl FnOnce(String) -> String) {
    use std::io::{Read, Write};
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(f(text).as_bytes()).unwrap();
    std::fs::write(path, e.finish().unwrap()).unwrap();
}

#[test]
fn a_trace_altered_to_other_plausible_values_gives_no_result() {
    // The analysis verifies each file as it reads it: a file whose bytes differ from the
    // manifest's sum is refused, naming it, even when the analysis of its bytes succeeds.
    let d = tempfile::tempdir().unwrap();
    let dir = fixture(d.path(), FixtureOptions { repetitions: 1, ..Default::default() });
    let before = analyse(&dir, None).unwrap();
    let run = "e33-resnet26-cifar10-x2-naive@syn.r1";
    let file = dir.join("runs").join(run).join("telemetry.csv.gz");
    edit_gz(&file, |text| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let power = lines[0].split(',').position(|c| c == "power_w").unwrap();
        for line in &mut lines[1..] {
            let mut fields: Vec<&str> = line.split(',').collect();
            fields[power] = "650.0";
            *line = fields.join(",");
        }
        lines.join("\n") + "\n"
    });
    let err = format!("{:#}", analyse(&dir, None).unwrap_err());
    assert!(err.contains(&format!("runs/{run}/telemetry.csv.gz: checksum differs")), "{err}");
    assert_eq!(err.matches("checksum differs").count(), 1, "{err}");

    // With its sum in the manifest, the same bytes are analysed, and change the result.
    let mut m = colloc_trace::manifest::read(&dir).unwrap();
    m.insert(format!("runs/{run}/telemetry.csv.gz"), colloc_trace::manifest::sha256_file(&file).unwrap());
    std::fs::write(dir.join("SHA256SUMS"), colloc_trace::manifest::render(&m)).unwrap();
    let after = analyse(&dir, None).unwrap();
    let power = |r: &Results| r.runs.iter().find(|x| x.run_id == run).unwrap().utilisation.as_ref().unwrap().power_w;
    assert_ne!(power(&before), power(&after));
}

#[test]
fn files_the_analysis_does_not_read_are_verified_too() {
    let d = tempfile::tempdir().unwrap();
    let dir = fixture(d.path(), FixtureOptions { repetitions: 1, ..Default::default() });
    let run = dir.join("runs/e33-resnet26-cifar10-x2-naive@syn.r1");
    std::fs::write(run.join("notes.txt"), "listed, never read by the analysis").unwrap();
    colloc_trace::manifest::add_dir(&dir, "runs").unwrap();
    analyse(&dir, None).unwrap();
    std::fs::write(run.join("notes.txt"), "listed, never read by the analysis!").unwrap();
    let err = format!("{:#}", analyse(&dir, None).unwrap_err());
    assert!(err.contains("e33-resnet26-cifar10-x2-naive@syn.r1/notes.txt: checksum differs"), "{err}");
}

#[test]
fn a_file_the_analysis_stops_reading_early_is_still_verified_whole() {
    // Bytes after a telemetry file's gzip member are never inflated, yet are part of the file.
    let d = tempfile::tempdir().unwrap();
    let dir = fixture(d.path(), FixtureOptions { repetitions: 1, ..Default::default() });
    let file = dir.join("runs/e33-resnet26-cifar10-x2-naive@syn.r1/telemetry.csv.gz");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(b"bytes after the member");
    std::fs::write(&file, &bytes).unwrap();
    let err = format!("{:#}", analyse(&dir, None).unwrap_err());
    assert!(err.contains("e33-resnet26-cifar10-x2-naive@syn.r1/telemetry.csv.gz: checksum differs"), "{err}");
}

#[test]
fn analysis_is_deterministic() {
    let d = tempfile::tempdir().unwrap();
    let a = fixture(d.path(), FixtureOptions { name: "a".into(), ..Default::default() });
    let one = serde_json::to_string(&analyse(&a, None).unwrap()).unwrap();
    let two = serde_json::to_string(&analyse(&a, None).unwrap()).unwrap();
    if let Some(i) = one.bytes().zip(two.bytes()).position(|(a, b)| a != b) {
        let from = i.saturating_sub(300);
        panic!(
            "analyses differ at byte {i}:\n{}\n---\n{}",
            &one[from..(i + 100).min(one.len())],
            &two[from..(i + 100).min(two.len())]
        );
    }
    assert_eq!(one.len(), two.len());
}

#[test]
fn a_campaign_of_150_runs_is_analysed_in_seconds() {
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { full: true, window_seconds: 30, ..Default::default() };
    let dir = fixture(d.path(), opts.clone());
    let plan = plan(&opts);
    let start = std::time::Instant::now();
    let r = analyse(&dir, Some(&plan)).unwrap();
    let took = start.elapsed();
    eprintln!("analysed {} runs in {:.2} s", r.runs.len(), took.as_secs_f64());
    assert!(r.runs.len() >= 140, "{}", r.runs.len());
    assert!(took.as_secs_f64() < 30.0, "{took:?}");
}

#[test]
fn a_campaign_missing_planned_runs_says_which() {
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { repetitions: 1, ..Default::default() };
    let dir = fixture(d.path(), opts.clone());
    let r = analyse(&dir, None).unwrap();
    assert_eq!(r.incomplete(), None, "without a plan nothing is said");
    let mut plan = plan(&opts);
    let made = r.runs.len();
    let r = analyse(&dir, Some(&plan)).unwrap();
    assert_eq!((r.incomplete(), r.provenance.planned_runs, r.pending.len()), (None, Some(made), 0));
    // A second repetition of the first workload, and a MIG workload that cannot be laid out.
    let plan_workloads = &mut plan.workloads;
    plan_workloads[0].repetitions = 2;
    let mut later = plan_workloads[0].clone();
    later.id = "e99-later-mig@syn".to_string();
    later.mode = Mode::Mig;
    later.feasible = false;
    later.reason = Some("needs 8 of 7 compute slices".to_string());
    later.repetitions = 1;
    plan_workloads.push(later);
    let r = analyse(&dir, Some(&plan)).unwrap();
    let first = &plan.workloads[0].id;
    assert_eq!(r.provenance.missing_runs, vec![format!("{first}.r2"), "e99-later-mig@syn.r1".to_string()]);
    assert_eq!(r.incomplete().unwrap(), format!("{made} of {} planned runs made, 2 not yet", made + 2));
    assert_eq!(r.pending.len(), 1, "only the workload without any run is pending");
    assert!(!r.pending[0].feasible && r.pending[0].mode == Mode::Mig);
}

/// Protocol 2: every job is measured over exactly the runner's common window, from its
/// per-iteration times; protocol-1 runs say so and carry no per-job interval.
#[test]
fn protocol_2_runs_are_measured_over_the_common_window() {
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { repetitions: 1, protocol_version: 2, ..Default::default() };
    let dir = fixture(d.path(), opts.clone());
    let r = analyse(&dir, Some(&plan(&opts))).unwrap();
    let mut measured = 0;
    for run in r.runs.iter().filter(|x| x.status == RunStatus::Ok) {
        assert_eq!(run.protocol_version, 2, "{}", run.run_id);
        let w = run.window.as_ref().unwrap();
        assert!((w.seconds - opts.window_seconds as f64).abs() < 1e-9, "{}: {w:?}", run.run_id);
        for j in &run.jobs {
            let [from, to] = j.measured_over.unwrap_or_else(|| panic!("{}: job {} unmeasured", run.run_id, j.index));
            assert!(
                (from - w.start_mono).abs() < 1e-9 && (to - w.end_mono).abs() < 1e-9,
                "{}: {from} {to}",
                run.run_id
            );
            assert!(j.throughput.unwrap() > 0.0);
            measured += 1;
        }
        assert!(run.notes.iter().all(|n| !n.contains("before the common window")), "{:?}", run.notes);
    }
    assert!(measured > 20, "{measured} jobs measured");
    // The model's speed comes back: alone, the ratio is 1 up to the jitter.
    let alone = workload(&r, "e33-resnet26-cifar10-x1-exclusive@syn");
    let ratio = alone.stats.aggregate_ratio.unwrap();
    assert!((ratio.median - 1.0).abs() < 0.05, "{ratio:?}");

    let d1 = tempfile::tempdir().unwrap();
    let opts1 = FixtureOptions { repetitions: 1, ..Default::default() };
    let r1 = analyse(&fixture(d1.path(), opts1.clone()), Some(&plan(&opts1))).unwrap();
    let ok1: Vec<_> = r1.runs.iter().filter(|x| x.status == RunStatus::Ok).collect();
    assert!(ok1.iter().all(|x| x.protocol_version == 1 && x.jobs.iter().all(|j| j.measured_over.is_none())));
    // The same speeds under both protocols (the fixtures' model, jitter aside).
    let tp = |r: &Results| {
        let run = r.runs.iter().find(|x| x.workload_id == "e33-resnet26-cifar10-x7-mps@syn").unwrap();
        run.aggregate_throughput.unwrap()
    };
    let (t1, t2) = (tp(&r1), tp(&r));
    assert!((t2 / t1 - 1.0).abs() < 0.03, "protocol 1 {t1}, protocol 2 {t2}");
}

/// Runs spread over two hosts, every baseline measured on both: each run is divided by its
/// own host's runs alone, and the baselines carry the hosts and the spread between them.
#[test]
fn each_run_is_divided_by_the_baseline_of_its_own_host() {
    use colloc_analysis::{testkit::host_uuid, BaselineHost};
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { hosts: 2, ..Default::default() };
    let r = analyse(&fixture(d.path(), opts.clone()), Some(&plan(&opts))).unwrap();
    let b = r.baselines.iter().find(|b| b.model == "resnet26" && b.data == "synthetic").unwrap();
    assert_eq!(b.host_count, 2);
    assert_eq!(b.hosts.iter().map(|h| h.host_id.clone().unwrap()).collect::<Vec<_>>(), [host_uuid(0), host_uuid(1)]);
    // Host 1 trains at 0.9 of host 0's speed.
    let spread = b.host_spread.unwrap();
    assert!((spread - 1.0 / 0.9).abs() < 0.03, "{spread}");
    assert_eq!(b.hosts[0].cpu_single_thread_mib_s, Some(1000.0));
    assert_eq!(b.hosts[1].cpu_single_thread_mib_s, Some(900.0));
    assert_eq!(b.stats.throughput.unwrap().n, 2);

    // Alone, each run is its host's only baseline run: a ratio of exactly 1.
    let alone = workload(&r, "e33-resnet26-cifar10-x1-exclusive@syn");
    let ratio = alone.stats.aggregate_ratio.unwrap();
    assert!((ratio.min - 1.0).abs() < 1e-12 && (ratio.max - 1.0).abs() < 1e-12, "{ratio:?}");
    for run in r.runs.iter().filter(|x| x.workload_id == "e33-resnet26-cifar10-x7-mps@syn") {
        let host = b.hosts.iter().find(|h| h.host_id == run.host_id).unwrap();
        for j in &run.jobs {
            assert_eq!(j.baseline_host, Some(BaselineHost::SameHost));
            let expected = host.throughput.median / j.throughput.unwrap();
            assert!((j.slowdown.unwrap() - expected).abs() < 1e-12);
        }
        assert!(!run.cross_host_baseline);
    }
    assert!(r.workloads.iter().all(|w| w.cross_host_runs == 0));
    assert!(r.runs.iter().all(|x| x.notes.iter().all(|n| !n.contains("another host"))));
}

/// One repetition over two hosts: a run whose host has no run of a job's model alone is
/// divided by the baseline pooled over the others, marked, and named in a note.
#[test]
fn a_host_without_the_baseline_borrows_the_pooled_one_and_says_so() {
    use colloc_analysis::BaselineHost;
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { hosts: 2, repetitions: 1, ..Default::default() };
    let r = analyse(&fixture(d.path(), opts.clone()), Some(&plan(&opts))).unwrap();
    let mut crossed = 0;
    for run in r.runs.iter().filter(|x| x.status == RunStatus::Ok && x.aggregate_ratio.is_some()) {
        let w = workload(&r, &run.workload_id);
        for (j, info) in run.jobs.iter().zip(&w.jobs) {
            let b = r
                .baselines
                .iter()
                .find(|b| b.model == info.model && b.batch_size == info.batch_size && b.data == w.data)
                .unwrap();
            assert_eq!(b.host_count, 1);
            assert_eq!(b.host_spread, None);
            let here = b.hosts[0].host_id == run.host_id;
            let want = if here { BaselineHost::SameHost } else { BaselineHost::OtherHosts };
            assert_eq!(j.baseline_host, Some(want), "{} job {}", run.run_id, j.index);
            let expected = b.stats.throughput.unwrap().median / j.throughput.unwrap();
            assert!((j.slowdown.unwrap() - expected).abs() < 1e-12);
        }
        let any = run.jobs.iter().any(|j| j.baseline_host == Some(BaselineHost::OtherHosts));
        assert_eq!(run.cross_host_baseline, any);
        if any {
            crossed += 1;
            assert!(run.notes.iter().any(|n| n.contains("another host's baseline")), "{:?}", run.notes);
            assert_eq!(w.cross_host_runs, 1, "{}", w.id);
        } else {
            assert_eq!(w.cross_host_runs, 0, "{}", w.id);
        }
    }
    assert!(crossed >= 5, "{crossed} runs against another host's baseline");
    // The interference cells of mixes divided by another host's baseline say so.
    assert!(r.interference.iter().any(|c| c.cross_host_baseline));
    assert!(r.interference.iter().any(|c| !c.cross_host_baseline && c.normalised_throughput.is_some()));
}

/// The 95% interval of each job's throughput by batch means, on protocol-2 fixtures whose
/// iterations are regular, alternate, or are too few.
#[test]
fn each_job_carries_the_95_percent_interval_of_its_throughput() {
    use colloc_analysis::testkit::IterationPattern;
    let run = |iterations, window_seconds| {
        let d = tempfile::tempdir().unwrap();
        let opts =
            FixtureOptions { repetitions: 1, protocol_version: 2, iterations, window_seconds, ..Default::default() };
        analyse(&fixture(d.path(), opts.clone()), Some(&plan(&opts))).unwrap()
    };
    let jobs = |r: &Results| -> Vec<colloc_analysis::JobRun> {
        r.runs.iter().filter(|x| x.status == RunStatus::Ok).flat_map(|x| x.jobs.clone()).collect()
    };

    // Regular iterations (at each model's step time): every batch alike, no width; a
    // slow job has fewer batches, or none below 20 iterations.
    let r = run(IterationPattern::Regular, 10);
    let mut with = 0;
    for j in jobs(&r) {
        let Some(ci) = j.throughput_ci else {
            assert!(j.throughput.unwrap() * 10.0 / 128.0 < 21.0, "{j:?}");
            continue;
        };
        with += 1;
        assert!((4..=10).contains(&ci.batches) && ci.records >= 5 * ci.batches, "{ci:?}");
        assert!(ci.relative_half_width < 1e-4, "{ci:?}");
        assert!((ci.mean / j.throughput.unwrap() - 1.0).abs() < 1e-9);
    }
    assert!(with > 20, "{with} jobs with an interval");

    // 0.1 s and 0.2 s in turn from the release, 128 images each, a 10 s window: 66 or 67
    // iterations, k = 10 batches of 1 s. [0, 1] holds 7 whole iterations (ends 0.1, 0.3, ...,
    // 1.0): 896 img/s; [1, 2] six (1.2 ... 1.9) and half of (1.9, 2.1]: 832; [2, 3] the other
    // half and six: 832; then the pattern repeats every 3 s. Batches: 896, 832, 832, 896,
    // 832, 832, 896, 832, 832, 896; mean 857.6; s² = (4 · 38.4² + 6 · 25.6²) / 9;
    // half-width 2.262 · s / √10 = 23.64 img/s.
    let batches = [896.0, 832.0, 832.0, 896.0, 832.0, 832.0, 896.0, 832.0, 832.0, 896.0];
    let mean = batches.iter().sum::<f64>() / 10.0;
    let s = (batches.iter().map(|b| (b - mean) * (b - mean)).sum::<f64>() / 9.0).sqrt();
    let half = 2.262 * s / 10f64.sqrt();
    assert!((mean - 857.6).abs() < 1e-9 && (half - 23.64).abs() < 0.01, "{mean} {half}");
    let r = run(IterationPattern::Alternating { short_seconds: 0.1, long_seconds: 0.2 }, 10);
    for j in jobs(&r) {
        let ci = j.throughput_ci.unwrap();
        assert_eq!(ci.batches, 10);
        assert!((ci.mean - mean).abs() < 0.05, "{ci:?}");
        assert!((ci.half_width - half).abs() < 0.05, "{ci:?} against {half}");
        assert!((ci.relative_half_width - half / mean).abs() < 1e-4);
    }
    let w = workload(&r, "e33-resnet26-cifar10-x7-mps@syn");
    let rel = w.stats.throughput_ci_rel.unwrap();
    assert_eq!(rel.n, 7);
    assert!((rel.median - half / mean).abs() < 1e-4 && (rel.max - half / mean).abs() < 1e-4, "{rel:?}");
    let b = r.baselines.iter().find(|b| b.model == "resnet26" && b.data == "synthetic").unwrap();
    assert!(b.stats.throughput_ci_rel.is_some());

    // 0.3 s iterations in a 5 s window: 16 records, k = 3 < 4: no interval, and why.
    let r = run(IterationPattern::Alternating { short_seconds: 0.3, long_seconds: 0.3 }, 5);
    for j in jobs(&r) {
        assert_eq!(j.throughput_ci, None);
        assert_eq!(j.throughput_ci_missing.as_deref(), Some("too few iterations in the window for a 95% interval"));
    }
    assert!(r.workloads.iter().all(|w| w.stats.throughput_ci_rel.is_none()));
}

/// Protocol 1: the samples are the records. Twelve 1 s samples give k = 2 (no interval);
/// 25 give k = 5, and the batch means' mean is the job's throughput over its own interval.
#[test]
fn protocol_1_intervals_are_made_of_samples() {
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { repetitions: 1, ..Default::default() };
    let r = analyse(&fixture(d.path(), opts.clone()), Some(&plan(&opts))).unwrap();
    let ok: Vec<_> = r.runs.iter().filter(|x| x.status == RunStatus::Ok).collect();
    assert!(ok.iter().flat_map(|x| &x.jobs).all(|j| j.throughput_ci.is_none() && j.throughput_ci_missing.is_some()));

    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions { repetitions: 1, window_seconds: 25, ..Default::default() };
    let r = analyse(&fixture(d.path(), opts.clone()), Some(&plan(&opts))).unwrap();
    let alone = r.runs.iter().find(|x| x.workload_id == "e33-resnet26-cifar10-x1-exclusive@syn").unwrap();
    let j = &alone.jobs[0];
    let ci = j.throughput_ci.unwrap();
    assert_eq!((ci.records, ci.batches), (25, 5));
    assert!((ci.mean / j.throughput.unwrap() - 1.0).abs() < 1e-6, "{ci:?} {:?}", j.throughput);
    // 2% noise per sample: an interval of a few per mille to a few per cent.
    assert!(ci.relative_half_width > 1e-4 && ci.relative_half_width < 0.05, "{ci:?}");
}

#[test]
fn samples_at_ten_hertz_give_the_same_throughputs_and_ten_times_the_rows() {
    let d = tempfile::tempdir().unwrap();
    let base = FixtureOptions { repetitions: 1, protocol_version: 2, window_seconds: 20, ..Default::default() };
    let fast = FixtureOptions { name: "fast".into(), sample_hz: 10, ..base.clone() };
    let (a, b) = (fixture(d.path(), base.clone()), fixture(d.path(), fast.clone()));
    let (ra, rb) = (analyse(&a, Some(&plan(&base))).unwrap(), analyse(&b, Some(&plan(&fast))).unwrap());
    let id = "e33-resnet26-cifar10-x7-mps@syn.r1";
    let (x, y) = (ra.runs.iter().find(|r| r.run_id == id).unwrap(), rb.runs.iter().find(|r| r.run_id == id).unwrap());
    // The per-iteration records do not depend on the sampling rate.
    assert_eq!(x.aggregate_throughput, y.aggregate_throughput);
    // 21 rows at 1 Hz inside [release, release + 20 s], 201 at 10 Hz.
    let (ux, uy) = (x.utilisation.as_ref().unwrap(), y.utilisation.as_ref().unwrap());
    assert_eq!((ux.samples, uy.samples), (21, 201));
    // The energy counter advances by power / rate: the same energy over the window.
    let (ex, ey) = (ux.energy_j.unwrap(), uy.energy_j.unwrap());
    assert!((ex / ey - 1.0).abs() < 0.05, "{ex} J at 1 Hz, {ey} J at 10 Hz");
    let rows = |dir: &Path| {
        let f = std::fs::File::open(dir.join("runs").join(id).join("telemetry.csv.gz")).unwrap();
        std::io::read_to_string(flate2::read::GzDecoder::new(f)).unwrap().lines().count() - 1
    };
    assert_eq!(rows(&b) as u64, colloc_analysis::testkit::telemetry_samples(&fast));
    assert_eq!(rows(&b), 10 * rows(&a));
}
