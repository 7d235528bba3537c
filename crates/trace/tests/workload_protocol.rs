//! The training program's own tests (plain Python, no PyTorch needed) run with the Rust
//! suite, so one test command covers both sides of the job protocol.

use std::path::Path;
use std::process::Command;

#[test]
fn workload_python_tests_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .args(["-m", "unittest", "discover", "-s", "workloads/tests", "-t", "."])
        .current_dir(&root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 is needed for the workload's tests");
    assert!(
        out.status.success(),
        "python3 -m unittest failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
