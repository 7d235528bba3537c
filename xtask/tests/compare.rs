//! `cargo xtask compare BASE NEW` on the shipped campaign, against itself and against
//! altered copies of it.

mod common;

use common::{copy_dir, fields, root, scale_samples};
use std::path::{Path, PathBuf};
use std::process::Command;

fn shipped() -> PathBuf {
    root().join("data/h200-quick")
}

fn compare(base: &Path, new: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["compare", base.to_str().unwrap(), new.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap()
}

/// The shipped campaign copied under `tmp`.
fn copy_of_shipped(tmp: &Path) -> PathBuf {
    let dir = tmp.join("h200-quick");
    copy_dir(&shipped(), &dir);
    dir
}

/// The workload altered by [`scale_one_job`]: two jobs, one repetition.
const ALTERED_RUN: &str = "e33-resnet152-imagenet-x2-naive@syn.r1";
const ALTERED_WORKLOAD: &str = "e33-resnet152-imagenet-x2-naive@syn";

/// Scales the images of job 0's `sample` events of [`ALTERED_RUN`] by `factor`; with
/// `manifest`, enters the file's new checksum in `SHA256SUMS`.
fn scale_one_job(dir: &Path, factor: f64, manifest: bool) {
    scale_samples(dir, &format!("runs/{ALTERED_RUN}/job-0.events.jsonl"), factor, manifest);
}

/// The CSV rows whose verdict is `v`: their workload ids.
fn with_verdict(out: &Path, v: &str) -> Vec<String> {
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    let header = fields(csv.lines().next().unwrap());
    csv.lines()
        .skip(1)
        .map(fields)
        .inspect(|f| assert_eq!(f.len(), header.len(), "{f:?}"))
        .filter(|f| f[2] == v)
        .map(|f| f[0].clone())
        .collect()
}

#[test]
fn the_shipped_campaign_agrees_with_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let o = compare(&shipped(), &shipped(), tmp.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.contains(" agree, 0 agree but the host differs, 0 differ, 0 only in base, 0 only in new"),
        "{stdout}"
    );
    assert!(with_verdict(tmp.path(), "differs").is_empty());
    assert!(with_verdict(tmp.path(), "agrees").len() > 50);
    let md = std::fs::read_to_string(tmp.path().join("compare.md")).unwrap();
    assert!(md.contains("Tolerance: the larger of a declared floor"), "{md}");
    assert!(md.contains("## Baselines per host") && md.contains("STP base [95 %]"), "{md}");
    assert!(md.contains("## Claims") && md.contains("| C1 |"), "{md}");
    let svg = std::fs::read_to_string(tmp.path().join("compare.svg")).unwrap();
    assert!(svg.contains(": STP (×)") && svg.contains("y = x") && svg.contains("differs (0)"), "{svg}");
    assert!(std::fs::read(tmp.path().join("compare.png")).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn one_job_ten_percent_faster_differs_for_exactly_its_workload() {
    let tmp = tempfile::tempdir().unwrap();
    // The base a copy with one job 10 % slower (an iteration may not claim more images than
    // its batch, so the copy is slowed, not sped up): the shipped job is 10 % faster.
    let altered = copy_of_shipped(tmp.path());
    scale_one_job(&altered, 1.0 / 1.1, true);
    let out = tmp.path().join("out");
    let o = compare(&altered, &shipped(), &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(with_verdict(&out, "differs"), vec![ALTERED_WORKLOAD.to_string()], "{stdout}");
    assert!(stdout.contains(" 0 agree but the host differs, 1 differ, 0 only in base, 0 only in new"), "{stdout}");
    assert!(stdout.lines().any(|l| l.trim_start().starts_with(ALTERED_WORKLOAD) && l.contains("STP base")), "{stdout}");
    // One of two jobs 10 % faster: the ratio about 5 % higher.
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    let row = csv.lines().find(|l| l.starts_with(&format!("{ALTERED_WORKLOAD},"))).unwrap();
    let difference: f64 = row.split(',').nth(5).unwrap().parse().unwrap();
    assert!((0.03..0.07).contains(&difference), "{row}");
    // The figure labels that workload, and only it, with its difference.
    let svg = std::fs::read_to_string(out.join("compare.svg")).unwrap();
    assert!(svg.contains("differs (1)"), "{svg}");
    assert_eq!(svg.matches(" %)\n</text>").count(), 1, "one labelled point");
    assert!(svg.contains(&format!("{ALTERED_WORKLOAD} (+{:.1} %)", difference * 100.0)), "{svg}");
}

#[test]
fn a_directory_failing_verification_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let tampered = copy_of_shipped(tmp.path());
    scale_one_job(&tampered, 1.0 / 1.1, false);
    let o = compare(&shipped(), &tampered, &tmp.path().join("out"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("new campaign directory {}", tampered.display())), "{stderr}");
    assert!(stderr.contains("SHA256SUMS") && stderr.contains(ALTERED_RUN), "{stderr}");

    let missing = tmp.path().join("no-such-campaign");
    let o = compare(&missing, &shipped(), &tmp.path().join("out"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("base campaign directory {}", missing.display())), "{stderr}");
}

/// The pair made on two hosts, each with interleaved baselines.
fn hosts_pair() -> (PathBuf, PathBuf) {
    (root().join("data/h200-hosts"), root().join("data/h200-hosts-rerun"))
}

#[test]
fn the_same_workloads_on_two_hosts_give_no_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new) = hosts_pair();
    let o = compare(&base, &new, tmp.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(with_verdict(tmp.path(), "differs").is_empty(), "{stdout}");
    assert_eq!(
        with_verdict(tmp.path(), "agrees").len() + with_verdict(tmp.path(), "agrees, the host differs").len(),
        8,
        "{stdout}"
    );
    // Both campaigns' baselines per host, and the tolerances' widths.
    assert!(stdout.contains("baselines per host:") && stdout.contains("base resnet26 b128 (generated) on GPU-"));
    assert!(stdout.contains("new resnet26 b128 (generated) on GPU-") && stdout.contains("tolerances (95 %): STP"));
}

#[test]
fn runs_alone_faster_on_the_new_host_is_the_host_not_the_result() {
    // The shipped campaign against a copy whose runs alone are 1.4 times slower (fewer
    // images in each iteration: an iteration may not claim more images than its batch), so
    // the shipped one's runs alone are 1.4 times faster than the base's.
    let tmp = tempfile::tempdir().unwrap();
    let (faster, _) = hosts_pair();
    let base = tmp.path().join("h200-hosts");
    copy_dir(&faster, &base);
    for r in 1..=8 {
        scale_samples(
            &base,
            &format!("runs/e33-resnet26-cifar10-x1-exclusive@gen.r{r}/job-0.events.jsonl"),
            1.0 / 1.4,
            true,
        );
    }
    let out = tmp.path().join("out");
    let o = compare(&base, &faster, &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    // The runs alone are a workload too: its aggregate throughput differs (exit 1).
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(with_verdict(&out, "differs"), vec!["e33-resnet26-cifar10-x1-exclusive@gen".to_string()], "{stdout}");
    let host = with_verdict(&out, "agrees, the host differs");
    assert_eq!(host.len(), 7, "{stdout}");
    assert!(host.iter().all(|w| !w.contains("exclusive")), "{host:?}");
    // The factors: the aggregate as it was, the baseline 1.4 times; STP 1 / 1.4.
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    let header = fields(csv.lines().next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in csv.lines().skip(1).map(fields).filter(|f| host.contains(&f[0])) {
        let v = |name: &str| -> f64 { row[col(name)].parse().unwrap() };
        assert!((v("aggregate_factor") - 1.0).abs() < 1e-12, "{row:?}");
        assert!((v("baseline_factor") - 1.4).abs() < 0.01, "{row:?}");
        assert!((v("ratio_difference") - (1.0 / 1.4 - 1.0)).abs() < 0.01, "{row:?}");
        assert!(v("factor_residual").abs() < 1e-9, "{row:?}");
        assert_eq!(row[col("tolerance_basis")], "intervals");
    }
    let svg = std::fs::read_to_string(out.join("compare.svg")).unwrap();
    assert!(svg.contains("host differs (7)") && svg.contains("95 % intervals"), "{svg}");
}

/// The shipped campaign's smoke subset re-run on an H100 (`run --campaign h200 --here
/// --smoke`): only STP is judged across GPU models, and only 7 × resnet26 under MPS
/// differs; the directory's README gives what `compare` computes.
#[test]
fn the_smoke_subset_on_an_h100_differs_only_for_seven_jobs_under_mps() {
    let tmp = tempfile::tempdir().unwrap();
    let h100 = root().join("data/h200-h100-80gb-2026-12-07");
    let o = compare(&root().join("data/h200"), &h100, tmp.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("Different GPU models (NVIDIA H200 vs NVIDIA H100 80GB HBM3)"), "{stdout}");
    assert!(
        stdout.contains("3 agree, 0 agree but the host differs, 1 differ, 148 only in base, 0 only in new"),
        "{stdout}"
    );
    assert_eq!(with_verdict(tmp.path(), "differs"), ["e33-resnet26-cifar10-x7-mps@syn"]);
    let readme = std::fs::read_to_string(h100.join("README.md")).unwrap();
    let csv = std::fs::read_to_string(tmp.path().join("compare.csv")).unwrap();
    let header = fields(csv.lines().next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut compared = 0;
    for f in csv.lines().skip(1).map(fields).filter(|f| f[col("verdict")] != "only in base") {
        let num = |name: &str| f[col(name)].parse::<f64>().unwrap();
        let interval = |at: &str| {
            format!(
                "{:.3} [{:.3}–{:.3}]",
                num(&format!("{at}_ratio")),
                num(&format!("{at}_ratio_low")),
                num(&format!("{at}_ratio_high"))
            )
        };
        let verdict = match f[col("verdict")].as_str() {
            "differs" => "**differs**".to_string(),
            v => v.to_string(),
        };
        let row = format!(
            "| {} | {} | {:+.1}% (±{:.1}%) | ×{:.3} | ×{:.3} | {verdict} |",
            interval("base"),
            interval("new"),
            100.0 * num("ratio_difference"),
            100.0 * num("ratio_tolerance"),
            num("aggregate_factor"),
            num("baseline_factor"),
        );
        assert!(readme.contains(&row), "README.md of {} should hold the row ending {row}", f[0]);
        compared += 1;
    }
    assert_eq!(compared, 4);
}
