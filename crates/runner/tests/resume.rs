//! The runner binary killed with SIGKILL in the middle of a campaign, then resumed.

mod common;

use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn sigkill_then_resume_loses_and_duplicates_no_run() {
    let d = tempfile::tempdir().unwrap();
    let camp = d.path().join("campaign");
    let ids: Vec<String> = (0..6).map(|i| format!("wl-{i}-naive")).collect();
    let p = plan(ids.iter().map(|id| workload(id, Mode::Naive, vec![job("resnet26"), job("resnet50")])).collect());
    let plan_path = write_plan(d.path(), &p);
    let args = |extra: &[&str]| {
        let mut c = Command::new(runner_bin());
        c.args(["run", "--plan"])
            .arg(&plan_path)
            .arg("--out")
            .arg(&camp)
            .args(["--simulate", "--time-scale", "0.02", "--progress", "plain"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    // The fourth run's first job stops making progress after its first iterations, so the
    // runner is killed in the middle of that run for sure, its jobs released and training. (A
    // kill at a moment chosen by the clock may fall between two runs, which leaves nothing to
    // quarantine, the more likely the more the machine is loaded.) The run would time out
    // only after 22 s (600 s × 0.02 + 10 s).
    let mut child = args(&[]).env("COLLOC_FAKE_HANG", "wl-3-naive:0").spawn().unwrap();
    let in_progress = camp.join("runs/.tmp-wl-3-naive.r1");
    let released = |j: usize| {
        std::fs::read_to_string(in_progress.join(format!("job-{j}.events.jsonl")))
            .map(|t| t.contains("\"event\":\"release\""))
            .unwrap_or(false)
    };
    wait_for("the fourth run's jobs to train", Duration::from_secs(90), || released(0) && released(1));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // The jobs die with the runner, the hanging one included. (Those of the runs before
    // ended with their runs.)
    let pids = job_pids(&in_progress);
    assert_eq!(pids.len(), 2, "{pids:?}");
    wait_for("the orphaned jobs to die", Duration::from_secs(30), || pids.iter().all(|p| !alive(*p)));

    let done_before = ids.iter().filter(|id| camp.join("runs").join(format!("{id}.r1")).exists()).count();
    assert_eq!(done_before, 3, "the three runs before the kill are complete");
    let listed = std::fs::read_to_string(camp.join("SHA256SUMS")).unwrap_or_default();
    assert_eq!(ids.iter().filter(|id| listed.contains(&format!("runs/{id}.r1/meta.json"))).count(), 3, "{listed}");

    let out = args(&[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("quarantined"), "the interrupted run is quarantined:\n{stderr}");

    let mut names: Vec<String> = std::fs::read_dir(camp.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let expected: Vec<String> = ids.iter().map(|id| format!("{id}.r1")).collect();
    assert_eq!(names, expected, "every run exactly once, no attempt twice, no temporary directory");
    for id in &expected {
        assert_eq!(meta(&camp, id).status, RunStatus::Ok, "{id}");
    }
    let quarantined: Vec<_> = std::fs::read_dir(camp.join("quarantine")).unwrap().flatten().collect();
    assert!(!quarantined.is_empty());
    let (ok, text) = sha256sum_check(&camp);
    assert!(ok, "{text}");
    assert!(colloc_runner::verify_campaign(&camp).unwrap().is_empty());

    // A third invocation has nothing to do.
    let out = args(&[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains("6 already done, 0 made now"), "{stderr}");
}
