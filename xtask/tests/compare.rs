//! `cargo xtask compare BASE NEW` on the shipped campaign, against itself and against
//! altered copies of it.

mod common;

use common::{copy_dir, root, scale_samples};
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
    csv.lines()
        .skip(1)
        .filter(|l| l.split(',').nth(2) == Some(v))
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect()
}

#[test]
fn the_shipped_campaign_agrees_with_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let o = compare(&shipped(), &shipped(), tmp.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains(" agree, 0 differ, 0 only in base, 0 only in new"), "{stdout}");
    assert!(with_verdict(tmp.path(), "differs").is_empty());
    assert!(with_verdict(tmp.path(), "agrees").len() > 50);
    let md = std::fs::read_to_string(tmp.path().join("compare.md")).unwrap();
    assert!(md.contains("Tolerance: the larger of a declared floor"), "{md}");
    assert!(md.contains("## Claims") && md.contains("| C1 |"), "{md}");
    let svg = std::fs::read_to_string(tmp.path().join("compare.svg")).unwrap();
    assert!(svg.contains("aggregate ratio, STP") && svg.contains("y = x") && svg.contains("differs (0)"), "{svg}");
    assert!(std::fs::read(tmp.path().join("compare.png")).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn one_job_ten_percent_faster_differs_for_exactly_its_workload() {
    let tmp = tempfile::tempdir().unwrap();
    let altered = copy_of_shipped(tmp.path());
    scale_one_job(&altered, 1.1, true);
    let out = tmp.path().join("out");
    let o = compare(&shipped(), &altered, &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(with_verdict(&out, "differs"), vec![ALTERED_WORKLOAD.to_string()], "{stdout}");
    assert!(stdout.contains(" 1 differ, 0 only in base, 0 only in new"), "{stdout}");
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
    scale_one_job(&tampered, 1.1, false);
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
