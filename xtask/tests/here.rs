//! `cargo xtask run --here`: the campaign re-targeted to the GPU that `nvidia-smi` names (a
//! stand-in here), written to a new directory of a temporary copy of the project.

mod common;

use common::copy_of_project;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn project(tmp: &Path) -> PathBuf {
    copy_of_project(tmp, &["experiments", "workloads"])
}

/// An `nvidia-smi` that names `gpu` for `--query-gpu=name`.
fn smi(tmp: &Path, gpu: &str) -> PathBuf {
    let path = tmp.join("nvidia-smi");
    std::fs::write(&path, format!("#!/bin/sh\necho '{gpu}'\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn here(project: &Path, smi: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["run", "--root", project.to_str().unwrap(), "--campaign", "h200-quick", "--here"])
        .args(["--nvidia-smi", smi.to_str().unwrap(), "--progress", "plain"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn here_retargets_the_campaign_to_the_gpu_and_writes_a_new_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let p = project(tmp.path());
    let o = here(&p, &smi(tmp.path(), "NVIDIA H100 80GB HBM3"), &["--smoke", "--simulate", "--time-scale", "0.002"]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("here: GPU 0 is NVIDIA H100 80GB HBM3: table h100-80gb"), "{out}");
    let dirs: Vec<String> = std::fs::read_dir(p.join("data"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let name = &dirs[0];
    assert!(name.starts_with("h200-quick-h100-80gb-20") && name.len() == "h200-quick-h100-80gb-2026-12-01".len());
    let campaign = p.join("data").join(name);
    assert!(campaign.join("SHA256SUMS").is_file());
    // The smoke subset only, planned for the H100: its MIG layout uses the H100's profiles.
    let runs: Vec<String> = std::fs::read_dir(campaign.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(runs.len() >= 4 && runs.len() <= 8, "{runs:?}");
    let mig = runs.iter().find(|r| r.contains("-mig")).expect("a MIG workload in the smoke subset");
    let meta = std::fs::read_to_string(campaign.join("runs").join(mig).join("meta.json")).unwrap();
    assert!(["g.10gb", "g.20gb", "g.40gb", "g.80gb"].iter().any(|p| meta.contains(p)), "{meta}");
    for h200 in ["g.18gb", "g.35gb", "g.71gb", "g.141gb"] {
        assert!(!meta.contains(h200), "an H200 profile in an H100 plan: {meta}");
    }
}

#[test]
fn here_refuses_a_gpu_without_a_table_and_lists_the_supported_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let p = project(tmp.path());
    let o = here(&p, &smi(tmp.path(), "Tesla V100-SXM2-16GB"), &["--simulate"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("no GPU table matches `Tesla V100-SXM2-16GB`"), "{err}");
    for key in ["a100-40gb: NVIDIA A100 40GB", "h200-141gb: NVIDIA H200 141GB"] {
        assert!(err.contains(key), "{key} not listed: {err}");
    }
    assert!(err.contains("experiments/gpus/<key>.yaml"), "{err}");
    assert!(!p.join("data").exists(), "nothing written");
}
