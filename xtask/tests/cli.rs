//! The command line as a user runs it.

use std::process::Command;

fn xtask(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask")).args(args).output().unwrap()
}

#[test]
fn validate_passes_on_the_shipped_specs() {
    let o = xtask(&["validate"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("198 workloads"));
}

#[test]
fn validate_fails_with_line_and_column() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let f = root.join("crates/spec/tests/broken/unknown_model.yaml");
    let o = xtask(&["validate", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown_model.yaml:7:25: error: unknown model `resnet27`"), "{err}");
}

#[test]
fn plan_json_of_the_paper_campaign() {
    let o = xtask(&["plan", "--campaign", "paper", "--gpu", "a100-40gb", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ws = v["workloads"].as_array().unwrap();
    assert_eq!(ws.len(), 198);
    assert_eq!(ws.iter().map(|w| w["jobs"].as_array().unwrap().len()).sum::<usize>(), 618);
    assert_eq!(ws.iter().filter(|w| w["feasible"] == false).count(), 3);
}

#[test]
fn no_task_lists_the_tasks() {
    let o = xtask(&[]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for t in ["validate", "plan", "import-radt", "run", "reproduce"] {
        assert!(out.contains(t), "{out}");
    }
}
