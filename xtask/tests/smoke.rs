//! `cargo xtask smoke` in temporary copies of the project: as shipped, and with one shipped
//! trace altered; `--gpu --dry-run` on the project itself.

mod common;

use common::{root, scale_samples};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SHIPPED: &str = "h200";
/// artifact.yaml's `validation_campaign`, whose protocol validation the shipped outputs carry.
const VALIDATION: &str = "h200-epochs";

fn smoke(project: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["smoke", "--root", project.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

/// What smoke reads of the project: the specs, the shipped traces, the committed outputs.
fn copy_of_project(tmp: &Path) -> PathBuf {
    let (shipped, validation) = (format!("data/{SHIPPED}"), format!("data/{VALIDATION}"));
    common::copy_of_project(tmp, &["experiments", "figures", "paper", "workloads", &shipped, &validation])
}

/// A shipped run whose throughput feeds the tables: job 0's images halved; with
/// `manifest`, its new checksum entered in `SHA256SUMS`.
const ALTERED_RUN: &str = "e33-resnet152-imagenet-x2-naive@syn.r1";

fn alter_one_trace(project: &Path, manifest: bool) {
    let dir = project.join("data").join(SHIPPED);
    scale_samples(&dir, &format!("runs/{ALTERED_RUN}/job-0.events.jsonl"), 0.5, manifest);
}

/// The result column of the summary's row of `phase`.
fn result_of(stdout: &str, phase: &str) -> String {
    let table = stdout.split("smoke summary").nth(1).unwrap_or_else(|| panic!("no summary:\n{stdout}"));
    let row = table.lines().find(|l| l.starts_with(phase)).unwrap_or_else(|| panic!("no row {phase}:\n{stdout}"));
    row.split_whitespace().last().unwrap().to_string()
}

const PHASES: [&str; 6] = ["validate", "plan", "verify", "reproduce --check", "run (subset)", "compare"];

#[test]
fn smoke_passes_in_a_copy_of_the_project() {
    let tmp = tempfile::tempdir().unwrap();
    let project = copy_of_project(tmp.path());
    let o = smoke(&project, &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    for p in PHASES {
        assert_eq!(result_of(&stdout, p), "ok", "{p}:\n{stdout}");
    }
    assert!(stdout.contains("all 6 phases ok"), "{stdout}");
    assert!(stdout.contains("5/5 runs ok, 0 problems"), "{stdout}");
    assert!(stdout.contains("5 agree, 0 differ"), "{stdout}");
    // The simulated campaign and its outputs under target/smoke/, never under data/.
    let made = project.join("target/smoke");
    assert!(made.join(format!("sim-{SHIPPED}/SHA256SUMS")).is_file());
    assert!(made.join("outputs/paper/report.html").is_file());
    assert!(made.join("compare/compare.md").is_file());
    let mut data: Vec<_> = std::fs::read_dir(project.join("data")).unwrap().map(|e| e.unwrap().file_name()).collect();
    data.sort();
    assert_eq!(data, [SHIPPED, VALIDATION].map(std::ffi::OsString::from));
    // The committed outputs untouched: a second smoke finds them up to date again.
    let again = smoke(&project, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stdout));
}

#[test]
fn an_altered_trace_fails_the_verify_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let project = copy_of_project(tmp.path());
    alter_one_trace(&project, false);
    let o = smoke(&project, &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(result_of(&stdout, "verify"), "FAILED", "{stdout}");
    assert!(stdout.contains(&format!("runs/{ALTERED_RUN}/job-0.events.jsonl: checksum differs")), "{stdout}");
    // The analysis refuses the traces too; the phases that do not read them still pass.
    assert_eq!(result_of(&stdout, "reproduce --check"), "FAILED", "{stdout}");
    for p in ["validate", "plan", "run (subset)", "compare"] {
        assert_eq!(result_of(&stdout, p), "ok", "{p}:\n{stdout}");
    }
    assert!(stdout.contains("FAILED phases: verify, reproduce --check"), "{stdout}");
}

#[test]
fn an_altered_and_rechecksummed_trace_fails_the_reproduce_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let project = copy_of_project(tmp.path());
    alter_one_trace(&project, true);
    let o = smoke(&project, &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(result_of(&stdout, "verify"), "ok", "{stdout}");
    assert_eq!(result_of(&stdout, "reproduce --check"), "FAILED", "{stdout}");
    assert!(stdout.contains("outputs stale: "), "{stdout}");
    assert!(stdout.contains("FAILED phases: reproduce --check (of 6"), "{stdout}");
}

#[test]
fn gpu_dry_run_selects_one_workload_per_mode_and_prints_its_commands() {
    let root = root();
    let o = smoke(&root, &["--gpu", "--dry-run"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    let selected = [
        "e33-resnet26-cifar10-x1-exclusive@syn.r1",
        "e33-resnet26-cifar10-x7-naive@syn.r1",
        "e33-resnet26-cifar10-x7-mps@syn.r1",
        "e33-resnet26-cifar10-x1-mpslim7g@syn.r1",
        "e33-resnet26-cifar10-x1-mig7g@syn.r1",
    ];
    let listed: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("[5/6]"))
        .skip(1)
        .take_while(|l| !l.contains('$'))
        .map(str::trim)
        .collect();
    assert_eq!(listed, selected, "{stdout}");
    let only = selected.map(|s| format!("'{s}'")).join(" ");
    let run = stdout.lines().find(|l| l.contains("$ cargo xtask run ")).unwrap_or_else(|| panic!("{stdout}"));
    let dir = run.split_whitespace().skip_while(|w| *w != "--out").nth(1).unwrap().to_string();
    assert!(dir.starts_with(&format!("target/smoke/gpu-{SHIPPED}-")), "{run}");
    assert!(run.ends_with(&format!("--campaign {SHIPPED} --out {dir} --gpu 0 --preload --only {only}")), "{run}");
    assert!(!run.contains("--simulate"), "{run}");
    assert!(
        stdout.contains(&format!(
            "$ cargo xtask reproduce --campaign {SHIPPED} --traces {dir} --out target/smoke/outputs"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("[6/6] $ cargo xtask compare data/{SHIPPED} {dir} --out target/smoke/compare")),
        "{stdout}"
    );
    assert!(stdout.contains("[4/6] reproduce: cargo xtask reproduce --check"), "{stdout}");
    // A dry run runs nothing.
    assert!(!root.join(&dir).exists(), "{dir} was made by a dry run");
    assert!(!stdout.contains("smoke summary"), "{stdout}");
}
