//! `--executor slurm` against a real single-node Slurm (slurmctld, slurmd and munged on
//! loopback, brought up by `tests/slurm/up.sh` and stopped after): a simulated campaign
//! through a job array; a task cancelled with `scancel`, then resumed; a task stopped by its
//! time limit, then resumed. Each resume makes exactly the missing runs.
//!
//! Needs Slurm and munge installed (`tests/slurm/install.sh`, which `.ci/run` calls) and
//! root: `cargo test -p colloc-runner --test slurm -- --ignored`. Where Slurm cannot start,
//! the tests fail with its logs; they never pass without it. The dry run and the check of
//! the Slurm options need no cluster and run with the other tests.

mod common;

use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// One cluster at a time: the tests of this file would otherwise start theirs at once.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A private Slurm cluster for one test; stopped on drop.
struct Cluster {
    state: tempfile::TempDir,
    harness: PathBuf,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Cluster {
    fn up() -> Cluster {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm");
        let state = tempfile::Builder::new().prefix("colloc-slurm-").tempdir().unwrap();
        let out = Command::new("bash").arg(harness.join("up.sh")).arg(state.path()).output().expect("bash runs");
        assert!(
            out.status.success(),
            "Slurm did not come up (install it with {}):\n{}{}",
            harness.join("install.sh").display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Cluster { state, harness, _turn: turn }
    }

    fn conf(&self) -> PathBuf {
        self.state.path().join("slurm.conf")
    }

    fn scancel(&self, task: &str) {
        let out = Command::new("scancel").arg(task).env("SLURM_CONF", self.conf()).output().unwrap();
        assert!(out.status.success(), "scancel {task}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(self.harness.join("down.sh")).arg(self.state.path()).output();
    }
}

struct Campaign {
    dir: tempfile::TempDir,
    plan: PathBuf,
}

impl Campaign {
    fn new(p: &colloc_plan::Plan) -> Campaign {
        let dir = tempfile::tempdir().unwrap();
        let plan = write_plan(dir.path(), p);
        Campaign { dir, plan }
    }

    fn camp(&self) -> PathBuf {
        self.dir.path().join("campaign")
    }

    /// `colloc-runner run` of this campaign's plan into its directory, simulated.
    fn base_command(&self, extra: &[&str]) -> Command {
        let mut c = Command::new(runner_bin());
        c.args(["run", "--plan"])
            .arg(&self.plan)
            .arg("--out")
            .arg(self.camp())
            .args(["--simulate", "--progress", "plain"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn command(&self, cluster: &Cluster, time_scale: &str, extra: &[&str]) -> Command {
        let mut c = self.base_command(&["--time-scale", time_scale, "--executor", "slurm", "--slurm-lost-after", "3"]);
        c.args(extra).env("SLURM_CONF", cluster.conf());
        c
    }

    fn run(&self, cluster: &Cluster, time_scale: &str, extra: &[&str]) -> Output {
        self.command(cluster, time_scale, extra).output().unwrap()
    }

    fn spawn(&self, cluster: &Cluster, time_scale: &str, extra: &[&str]) -> Child {
        self.command(cluster, time_scale, extra).spawn().unwrap()
    }

    fn listed(&self) -> String {
        std::fs::read_to_string(self.camp().join("SHA256SUMS")).unwrap_or_default()
    }

    /// The array job id of the first submission.
    fn job_id(&self) -> String {
        let text = std::fs::read_to_string(self.camp().join(".slurm/submissions.jsonl")).unwrap();
        let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        v["job_id"].as_str().unwrap().to_string()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn exclusive_plan(n: usize) -> colloc_plan::Plan {
    plan((0..n).map(|i| workload(&format!("e33-w{i}-exclusive"), Mode::Exclusive, vec![job("resnet26")])).collect())
}

#[test]
#[ignore = "needs a Slurm cluster: .ci/run installs Slurm and runs these with --ignored"]
fn a_campaign_through_slurm_makes_every_run_and_one_manifest() {
    let cluster = Cluster::up();
    let mut p = exclusive_plan(6);
    p.workloads.push(workload("e33-x2-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")]));
    p.workloads.push(workload("e33-x2-naive", Mode::Naive, vec![job("resnet26"), job("resnet26")]));
    p.workloads.push(workload(
        "e33-x2-mig",
        Mode::Mig,
        vec![mig_job("resnet26", "3g.71gb"), mig_job("resnet26", "3g.71gb")],
    ));
    let c = Campaign::new(&p);
    let t0 = Instant::now();
    let out = c.run(&cluster, "0.01", &["--max-parallel", "4"]);
    let wall = t0.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", stderr(&out));
    eprintln!("9 runs through Slurm (4 at once): {wall:.1} s");
    for w in &p.workloads {
        let m = meta(&c.camp(), &format!("{}.r1", w.id));
        let want = if w.mode == Mode::Mig { RunStatus::Skipped } else { RunStatus::Ok };
        assert_eq!(m.status, want, "{}: {:?}", w.id, m.reason);
        if w.mode == Mode::Mig {
            assert!(m.reason.as_deref().unwrap_or("").contains("typed GRES"), "{:?}", m.reason);
        }
    }
    let (ok, text) = sha256sum_check(&c.camp());
    assert!(ok, "{text}");
    assert!(
        !c.camp().join(".slurm/stage").read_dir().map(|mut d| d.next().is_some()).unwrap_or(false),
        "stages merged"
    );
    // A resume submits nothing.
    let again = c.run(&cluster, "0.01", &[]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains("0 run(s) to submit"), "{}", stderr(&again));
}

#[test]
#[ignore = "needs a Slurm cluster: .ci/run installs Slurm and runs these with --ignored"]
fn a_cancelled_task_is_made_again_on_resume_and_only_it() {
    let cluster = Cluster::up();
    let p = exclusive_plan(3);
    let c = Campaign::new(&p);
    // Runs of about 10 s each, one at a time: cancel the second while it runs.
    let child = c.spawn(&cluster, "0.3", &["--max-parallel", "1"]);
    let started = c.camp().join(".slurm/stage/e33-w1-exclusive.r1/.task-started.json");
    wait_for("the second task to start", Duration::from_secs(120), || started.exists());
    std::thread::sleep(Duration::from_secs(2));
    cluster.scancel(&format!("{}_1", c.job_id()));
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "a run is missing, so the submitter says so: {err}");
    assert!(err.contains("e33-w1-exclusive.r1: no complete run"), "{err}");
    let listed = c.listed();
    assert!(listed.contains("runs/e33-w0-exclusive.r1/") && listed.contains("runs/e33-w2-exclusive.r1/"), "{listed}");
    assert!(!listed.contains("e33-w1"), "nothing of the cancelled run is listed: {listed}");
    let (ok, text) = sha256sum_check(&c.camp());
    assert!(ok, "{text}");
    assert!(c.camp().join("quarantine/slurm-e33-w1-exclusive.r1.1").is_dir(), "its stage kept for inspection");

    let again = c.run(&cluster, "0.01", &[]);
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(err.contains("1 run(s) to submit"), "exactly the missing run: {err}");
    assert_eq!(meta(&c.camp(), "e33-w1-exclusive.r1").status, RunStatus::Ok);
    let (ok, text) = sha256sum_check(&c.camp());
    assert!(ok, "{text}");
}

#[test]
#[ignore = "needs a Slurm cluster: .ci/run installs Slurm and runs these with --ignored"]
fn a_task_stopped_by_its_time_limit_is_made_again_on_resume() {
    let cluster = Cluster::up();
    let p = exclusive_plan(2);
    let c = Campaign::new(&p);
    // The second run takes about 80 s at this time scale, beyond its 1-minute limit: Slurm
    // signals the batch shell before the limit, the runner stops the run and tears down.
    let out = c.run(&cluster, "4", &["--time-per-run", "1", "--only", "e33-w1-exclusive"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("e33-w1-exclusive.r1: no complete run"), "{err}");
    assert!(!c.listed().contains("e33-w1"), "{}", c.listed());
    let log = std::fs::read_dir(c.camp().join(".slurm/logs")).unwrap().flatten().next().unwrap().path();
    let task_out = std::fs::read_to_string(log).unwrap();
    assert!(task_out.contains("interrupted"), "the runner was told to stop:\n{task_out}");

    let again = c.run(&cluster, "0.01", &[]);
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(err.contains("2 run(s) to submit"), "{err}");
    for r in ["e33-w0-exclusive.r1", "e33-w1-exclusive.r1"] {
        assert_eq!(meta(&c.camp(), r).status, RunStatus::Ok);
    }
}

/// `--dry-run` needs no cluster: it prints the batch script and the `sbatch` line, submits
/// nothing and writes nothing.
#[test]
fn a_dry_run_prints_the_batch_script_and_submits_nothing() {
    let p = exclusive_plan(3);
    let c = Campaign::new(&p);
    let out = c
        .base_command(&["--executor", "slurm", "--dry-run", "--max-parallel", "2"])
        .args(["--partition", "gpu-a100", "--account", "proj42", "--time-per-run", "7"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}{text}", stderr(&out));
    for want in [
        "#SBATCH --gres=gpu:1",
        "#SBATCH --time=7",
        "#SBATCH --partition=gpu-a100",
        "#SBATCH --account=proj42",
        "#SBATCH --signal=B:USR2@",
        "slurm-task --dir",
        "sbatch --parsable --array=0-2%2",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
    assert!(!c.camp().join(".slurm").exists(), "a dry run writes nothing");
    assert!(!c.camp().join("SHA256SUMS").exists() || c.listed().is_empty());
}

#[test]
fn slurm_options_need_the_slurm_executor() {
    let c = Campaign::new(&exclusive_plan(1));
    let out = c.base_command(&["--partition", "x"]).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("need --executor slurm"), "{}", stderr(&out));
}
