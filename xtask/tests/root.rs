//! The project root is found at run time, never compiled in: `--root`, else `$COLLOC_ROOT`,
//! else the working directory or the nearest one above it with `artifact.yaml` and
//! `Cargo.toml`. One cargo target directory may serve several checkouts, and a binary built in
//! one must read and write the checkout it runs in. Each test runs the built xtask in a copy
//! of the project whose GPU table says `COPY`, so reading the checkout shows.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const COPY: &str = "NVIDIA H200 COPY";

/// A copy of the project (`artifact.yaml`, `Cargo.toml`, `experiments/` and `campaign`'s
/// traces) whose H200 table is named [`COPY`].
fn copy(tmp: &Path, campaign: Option<&str>) -> PathBuf {
    let traces = campaign.map(|c| format!("data/{c}"));
    let mut dirs = vec!["experiments"];
    dirs.extend(traces.as_deref());
    let p = common::copy_of_project(tmp, &dirs);
    std::fs::copy(common::root().join("Cargo.toml"), p.join("Cargo.toml")).unwrap();
    let gpu = p.join("experiments/gpus/h200-141gb.yaml");
    let text = std::fs::read_to_string(&gpu).unwrap();
    assert!(text.contains("\nname: NVIDIA H200 141GB\n"), "the H200 table's name moved");
    std::fs::write(&gpu, text.replace("\nname: NVIDIA H200 141GB\n", &format!("\nname: {COPY}\n"))).unwrap();
    p
}

/// `cargo xtask ARGS` in `dir`, without `$COLLOC_ROOT` unless `root_env` gives it.
fn xtask_in(dir: &Path, root_env: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.current_dir(dir).args(args).env_remove("COLLOC_ROOT");
    if let Some(r) = root_env {
        cmd.env("COLLOC_ROOT", r);
    }
    cmd.output().unwrap()
}

fn stdout(o: &Output) -> String {
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    out.into_owned()
}

const PLAN: &[&str] = &["plan", "--campaign", "h200-quick"];

#[test]
fn the_project_is_the_working_directory_or_the_nearest_one_above_it_not_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    let p = copy(tmp.path(), None);
    let header = format!("plan: h200-quick on {COPY} (h200-141gb)");
    let here = stdout(&xtask_in(&p, None, PLAN));
    assert!(here.starts_with(&header), "{here}");
    let below = stdout(&xtask_in(&p.join("experiments/gpus"), None, PLAN));
    assert_eq!(below, here, "from a directory inside the copy");
    // The checkout's own table, from the checkout.
    let checkout = stdout(&xtask_in(&common::root(), None, PLAN));
    assert!(checkout.starts_with("plan: h200-quick on NVIDIA H200 141GB (h200-141gb)"), "{checkout}");
}

#[test]
fn colloc_root_and_root_name_the_project_from_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let p = copy(tmp.path(), None);
    let header = format!("plan: h200-quick on {COPY} (h200-141gb)");
    let by_env = stdout(&xtask_in(tmp.path(), Some(&p), PLAN));
    assert!(by_env.starts_with(&header), "{by_env}");
    let root = p.to_str().unwrap();
    let by_option = stdout(&xtask_in(tmp.path(), None, &["plan", "--root", root, "--campaign", "h200-quick"]));
    assert_eq!(by_option, by_env);
    let before_the_task =
        stdout(&xtask_in(&common::root(), None, &["--root", root, "plan", "--campaign", "h200-quick"]));
    assert_eq!(before_the_task, by_env, "--root before the task, run from the checkout");
    // Outside any project, and none named: refused, saying how to name one.
    let o = xtask_in(tmp.path(), None, PLAN);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no artifact.yaml beside a Cargo.toml in") && err.contains("COLLOC_ROOT"), "{err}");
}

#[test]
fn compare_writes_under_the_target_directory_of_the_project_it_runs_in() {
    let tmp = tempfile::tempdir().unwrap();
    let p = copy(tmp.path(), Some("h200-hosts"));
    let o = xtask_in(&p, None, &["compare", "data/h200-hosts", "data/h200-hosts"]);
    let out = stdout(&o);
    let written = p.join("target/compare");
    assert!(out.contains(&format!("under {}", written.display())), "{out}");
    for f in ["compare.md", "compare.csv", "compare.svg", "compare.png"] {
        assert!(written.join(f).is_file(), "{f} not under the copy's target/compare");
    }
}
