//! MPS and MIG set-up and teardown against stand-in `nvidia-smi` and
//! `nvidia-cuda-mps-control` scripts placed first on the PATH, which log their invocations.
//! The runner binary runs with the simulated GPU and jobs but real mode commands.

mod common;

use colloc_trace::meta::{DriverListing, RunStatus};
use colloc_trace::Mode;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const MPS_CONTROL: &str = r#"#!/bin/bash
# Stand-in for nvidia-cuda-mps-control: state lives in the pipe directory.
input=""
if [ "$#" -eq 0 ]; then input=$(cat); fi
echo "mps-control args=[$*] stdin=[$input] visible=[${CUDA_VISIBLE_DEVICES:-}] pipe=[${CUDA_MPS_PIPE_DIRECTORY:-}] log=[${CUDA_MPS_LOG_DIRECTORY:-}]" >> "$STANDIN_LOG"
pipe="${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}"
if [ "$1" = "-d" ]; then
  if [ -e "$pipe/standin-running" ]; then echo "An instance of this daemon is already running" >&2; exit 1; fi
  touch "$pipe/standin-running"; exit 0
fi
case "$input" in
  get_server_list)
    if [ -e "$pipe/standin-running" ]; then
      # STANDIN_DIE_ONCE: the first daemon dies right after it answered.
      if [ -n "${STANDIN_DIE_ONCE:-}" ] && [ ! -e "$STANDIN_STATE/died" ]; then touch "$STANDIN_STATE/died"; rm -f "$pipe/standin-running"; fi
      exit 0
    else echo "Cannot find MPS control daemon process" >&2; exit 1; fi ;;
  quit) rm -f "$pipe/standin-running"; exit 0 ;;
esac
exit 1
"#;

const NVIDIA_SMI: &str = r#"#!/bin/bash
# Stand-in for nvidia-smi: MIG instances are files in $STANDIN_STATE/gi/<id> holding the profile.
echo "nvidia-smi $*" >> "$STANDIN_LOG"
st="$STANDIN_STATE"; mkdir -p "$st/gi"
if [ "$1" = "-L" ]; then
  echo "GPU 0: NVIDIA H200 (UUID: GPU-5e5e5e5e-0000-4000-8000-000000000000)"
  for f in $(ls "$st/gi" | sort -n); do echo "  MIG $(cat "$st/gi/$f")      Device  $f: (UUID: MIG-standin-$f)"; done
  exit 0
fi
[ "$1" = "mig" ] || exit 0
gpu="$3"; op="$4"
case "$op" in
  -cgi)
    prof="$5"
    if [ -n "$STANDIN_FAIL_PROFILE" ] && [ "$prof" = "$STANDIN_FAIL_PROFILE" ]; then
      echo "Unable to create a GPU instance on GPU  $gpu using profile $prof: Insufficient Resources"
      echo "Failed to create GPU instances: Insufficient Resources"; exit 2
    fi
    n=$(cat "$st/next" 2>/dev/null || echo 1); echo $((n + 2)) > "$st/next"
    echo "$prof" > "$st/gi/$n"
    echo "Successfully created GPU instance ID  $n on GPU  $gpu using profile MIG $prof (ID  9)"
    echo "Successfully created compute instance ID  0 on GPU  $gpu GPU instance ID  $n using profile MIG $prof (ID  2)"
    exit 0 ;;
  -dci)
    gi="$6"
    if [ ! -e "$st/gi/$gi" ]; then echo "Unable to destroy compute instance: Not Found"; exit 6; fi
    echo "Successfully destroyed compute instance ID  0 from GPU  $gpu GPU instance ID  $gi"; exit 0 ;;
  -dgi)
    gi="$6"
    if [ -n "$STANDIN_BUSY_ONCE" ] && [ ! -e "$st/busy-$gi" ]; then
      touch "$st/busy-$gi"
      echo "Unable to destroy GPU instance ID  $gi from GPU  $gpu: In use by another client"
      echo "Failed to destroy GPU instances: In use by another client"; exit 19
    fi
    rm -f "$st/gi/$gi"; echo "Successfully destroyed GPU instance ID  $gi from GPU  $gpu"; exit 0 ;;
  -lgi)
    if [ -z "$(ls "$st/gi")" ]; then echo "No GPU instances found: Not Found"; exit 6; fi
    echo "+-------------------------------------------------------+"
    echo "| GPU instances:                                        |"
    echo "| GPU   Name             Profile  Instance   Placement  |"
    echo "|                          ID       ID       Start:Size |"
    echo "|=======================================================|"
    for f in $(ls "$st/gi" | sort -n); do echo "|   $gpu  MIG $(cat "$st/gi/$f")          9        $f          0:1     |"; done
    echo "+-------------------------------------------------------+"
    exit 0 ;;
esac
exit 0
"#;

/// One bench at a time: the runner looks for MPS daemons in the whole of `/proc`, where a
/// stand-in `nvidia-cuda-mps-control` of a test running beside it would count as foreign.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Bench {
    _dir: tempfile::TempDir,
    root: PathBuf,
    camp: PathBuf,
    log: PathBuf,
    state: PathBuf,
    plan: PathBuf,
    /// Held for the bench's life (dropped last).
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl Bench {
    fn new(p: &colloc_plan::Plan) -> Bench {
        let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (name, text) in [("nvidia-cuda-mps-control", MPS_CONTROL), ("nvidia-smi", NVIDIA_SMI)] {
            let f = bin.join(name);
            std::fs::write(&f, text).unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let state = root.join("state");
        std::fs::create_dir_all(&state).unwrap();
        let plan = write_plan(&root, p);
        Bench {
            camp: root.join("campaign"),
            log: root.join("standin.log"),
            state,
            plan,
            root,
            _dir: dir,
            _serial: serial,
        }
    }

    fn command(&self, env: &[(&str, &str)], extra: &[&str]) -> Command {
        let path = format!("{}:{}", self.root.join("bin").display(), std::env::var("PATH").unwrap_or_default());
        let mut c = Command::new(runner_bin());
        c.args(["run", "--plan"])
            .arg(&self.plan)
            .arg("--out")
            .arg(&self.camp)
            .args(["--simulate", "--sim-exec-mode-commands", "--time-scale", "0.01", "--progress", "plain"])
            .args(["--busy-retry-delay", "0.1", "--kill-grace", "2"])
            .args(extra)
            .env("PATH", path)
            .env("STANDIN_LOG", &self.log)
            .env("STANDIN_STATE", &self.state)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }

    fn run(&self, env: &[(&str, &str)], extra: &[&str]) -> Output {
        self.command(env, extra).output().unwrap()
    }

    fn spawn(&self, env: &[(&str, &str)], extra: &[&str]) -> Child {
        self.command(env, extra).spawn().unwrap()
    }

    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_string).collect()
    }

    fn smi_calls(&self) -> Vec<String> {
        self.log().into_iter().filter(|l| l.starts_with("nvidia-smi ")).collect()
    }

    fn mig_instances_left(&self) -> usize {
        std::fs::read_dir(self.state.join("gi")).map(|r| r.count()).unwrap_or(0)
    }

    /// The runner's state file; absent means nothing is set up.
    fn state_file(&self) -> serde_json::Value {
        match std::fs::read_to_string(self.camp.join(".runner-state.json")) {
            Ok(t) => serde_json::from_str(&t).unwrap(),
            Err(_) => serde_json::json!({"mps_pipe_dirs": [], "mig": []}),
        }
    }
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let start = line.find(&format!("{key}=[")).map(|i| i + key.len() + 2).unwrap_or(line.len());
    let end = line[start..].find(']').map(|i| start + i).unwrap_or(line.len());
    &line[start..end]
}

fn mps_plan() -> colloc_plan::Plan {
    plan(vec![
        workload("wl-mps", Mode::Mps, vec![job("resnet26"), job("resnet50")]),
        workload(
            "wl-limited",
            Mode::MpsLimited,
            vec![limited_job("resnet26", 45, 71424), limited_job("resnet26", 12, 16384)],
        ),
    ])
}

/// Asserts that only read-only or MIG instance commands were given to nvidia-smi.
fn assert_only_instance_commands(calls: &[String]) {
    for c in calls {
        let ok = c == "nvidia-smi -L"
            || c.starts_with("nvidia-smi mig -i 0 -cgi ")
            || c.starts_with("nvidia-smi mig -i 0 -dci -gi ")
            || c.starts_with("nvidia-smi mig -i 0 -dgi -gi ")
            || c == "nvidia-smi mig -i 0 -lgi";
        assert!(ok, "unexpected nvidia-smi call: {c}");
    }
}

#[test]
fn mps_daemon_is_started_checked_and_quit_per_run() {
    let b = Bench::new(&mps_plan());
    let out = b.run(&[], &["--allow-busy-gpu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let log: Vec<String> = b.log().into_iter().filter(|l| l.starts_with("mps-control")).collect();
    let starts: Vec<usize> = (0..log.len()).filter(|&i| field(&log[i], "args") == "-d").collect();
    assert_eq!(starts.len(), 2, "one daemon per run:\n{}", log.join("\n"));
    let pipe = field(&log[starts[0]], "pipe").to_string();
    assert!(!pipe.is_empty() && pipe != "/tmp/nvidia-mps", "a private pipe directory: {pipe}");
    for (k, &s) in starts.iter().enumerate() {
        assert_eq!(
            field(&log[s], "visible"),
            "GPU-5e5e5e5e-0000-4000-8000-000000000000",
            "the daemon sees our GPU only"
        );
        assert!(!field(&log[s], "log").is_empty());
        let end = starts.get(k + 1).copied().unwrap_or(log.len());
        let run = &log[s..end];
        let check = run.iter().position(|l| field(l, "stdin") == "get_server_list").expect("checked to serve");
        let quit = run.iter().position(|l| field(l, "stdin") == "quit").expect("quit");
        assert!(check < quit);
        assert!(run.iter().all(|l| field(l, "pipe") == pipe), "every call through our pipe directory");
    }
    assert!(!Path::new(&pipe).join("standin-running").exists(), "the daemon is gone");
    let m = meta(&b.camp, "wl-mps.r1");
    assert_eq!(m.status, RunStatus::Ok, "{:?}", m.reason);
    assert_eq!(m.mps.as_ref().unwrap().pipe_directory, pipe);
    assert_eq!(m.jobs[0].env.get("CUDA_MPS_PIPE_DIRECTORY"), Some(&pipe));
    assert!(!m.jobs[0].env.contains_key("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
    let m = meta(&b.camp, "wl-limited.r1");
    assert_eq!(m.status, RunStatus::Ok, "{:?}", m.reason);
    assert_eq!(m.jobs[0].env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "45");
    assert_eq!(m.jobs[1].env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "12");
    assert_eq!(m.jobs[1].env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=16384M");
    assert_eq!(m.mps.as_ref().unwrap().pinned_mem_limit_mib, vec![Some(71424), Some(16384)]);
    assert!(!b.camp.join(".runner-state.json").exists(), "nothing left set up");
    assert!(b.smi_calls().is_empty(), "no nvidia-smi call for MPS: {:?}", b.smi_calls());
}

/// An MPS daemon that dies during a run fails that run with the reason (nothing to quit),
/// and the next run gets a fresh daemon and is ok.
#[test]
fn an_mps_daemon_that_dies_mid_run_fails_its_run_and_the_next_gets_a_fresh_one() {
    let b = Bench::new(&mps_plan());
    let out = b.run(&[("STANDIN_DIE_ONCE", "1")], &["--allow-busy-gpu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "a failed run is a result: {stderr}");
    let m = meta(&b.camp, "wl-mps.r1");
    assert_eq!(m.status, RunStatus::Failed);
    let why = m.reason.unwrap_or_default();
    assert!(why.contains("MPS daemon died during the run") && why.contains("fresh daemon"), "{why}");
    let m = meta(&b.camp, "wl-limited.r1");
    assert_eq!(m.status, RunStatus::Ok, "{:?}", m.reason);
    let log: Vec<String> = b.log().into_iter().filter(|l| l.starts_with("mps-control")).collect();
    let starts = log.iter().filter(|l| field(l, "args") == "-d").count();
    let quits = log.iter().filter(|l| field(l, "stdin") == "quit").count();
    assert_eq!(
        (starts, quits),
        (2, 1),
        "a fresh daemon for the second run; the dead one is not quit:\n{}",
        log.join("\n")
    );
    assert!(!b.camp.join(".runner-state.json").exists(), "nothing left set up");
}

/// On two GPUs at once, each GPU's MPS runs get a daemon of their own: started for that GPU
/// alone, on a pipe directory of that GPU, quit after each run.
#[test]
fn each_gpu_has_its_own_mps_daemon() {
    let mut w = Vec::new();
    for i in 0..4 {
        w.push(workload(&format!("wl{i}-mps"), Mode::Mps, vec![job("resnet26"), job("resnet26")]));
    }
    let b = Bench::new(&plan(w));
    let out = b.run(&[], &["--gpus", "0,1", "--no-host-baselines"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let log: Vec<String> = b.log().into_iter().filter(|l| l.starts_with("mps-control")).collect();
    let starts: Vec<&String> = log.iter().filter(|l| field(l, "args") == "-d").collect();
    assert_eq!(starts.len(), 4, "one daemon per run:\n{}", log.join("\n"));
    let mut gpus_seen = std::collections::BTreeSet::new();
    for s in &starts {
        let uuid = field(s, "visible");
        let gpu: u32 = uuid.rsplit('-').next().unwrap().parse().unwrap();
        let pipe = field(s, "pipe");
        assert!(
            pipe.ends_with(&format!("-gpu{gpu}/pipe")),
            "the daemon for GPU {gpu} ({uuid}) on its own pipe: {pipe}"
        );
        assert!(!Path::new(pipe).join("standin-running").exists(), "the daemon is gone");
        gpus_seen.insert(gpu);
    }
    for i in 0..4 {
        let m = meta(&b.camp, &format!("wl{i}-mps.r1"));
        assert_eq!(m.status, RunStatus::Ok, "{:?}", m.reason);
        let gpu = m.gpu.as_ref().unwrap();
        let pipe = &m.mps.as_ref().unwrap().pipe_directory;
        assert!(pipe.ends_with(&format!("-gpu{}/pipe", gpu.index)), "{pipe} on GPU {}", gpu.index);
        assert_eq!(m.jobs[0].env.get("CUDA_MPS_PIPE_DIRECTORY"), Some(pipe));
        assert_eq!(m.jobs[1].env.get("CUDA_VISIBLE_DEVICES"), Some(&gpu.uuid));
    }
    assert!(!gpus_seen.is_empty());
    assert!(!b.camp.join(".runner-state.json").exists(), "nothing left set up");
}

#[test]
fn mig_instances_are_created_mapped_and_destroyed() {
    let p =
        plan(vec![workload("wl-mig", Mode::Mig, vec![mig_job("resnet26", "1g.18gb"), mig_job("resnet50", "3g.71gb")])]);
    let b = Bench::new(&p);
    let out = b.run(&[("STANDIN_BUSY_ONCE", "1")], &["--allow-busy-gpu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let calls = b.smi_calls();
    assert_eq!(
        calls,
        vec![
            "nvidia-smi -L",
            "nvidia-smi mig -i 0 -cgi 3g.71gb -C",
            "nvidia-smi -L",
            "nvidia-smi -L",
            "nvidia-smi mig -i 0 -cgi 1g.18gb -C",
            "nvidia-smi -L",
            "nvidia-smi mig -i 0 -dci -gi 3 -ci 0",
            "nvidia-smi mig -i 0 -dgi -gi 3",
            "nvidia-smi mig -i 0 -dgi -gi 3",
            "nvidia-smi mig -i 0 -dci -gi 1 -ci 0",
            "nvidia-smi mig -i 0 -dgi -gi 1",
            "nvidia-smi mig -i 0 -dgi -gi 1",
            "nvidia-smi mig -i 0 -lgi",
        ],
        "largest first; teardown in reverse, retried while in use; checked gone"
    );
    assert_eq!(b.mig_instances_left(), 0);
    let m = meta(&b.camp, "wl-mig.r1");
    assert_eq!(m.status, RunStatus::Ok, "{:?}", m.reason);
    let mig = m.mig.unwrap();
    assert!(mig.torn_down);
    assert_eq!((mig.instances[0].job, mig.instances[0].gpu_instance_id), (0, 3));
    assert_eq!(mig.instances[0].device_uuid, "MIG-standin-3");
    assert_eq!((mig.instances[1].profile.as_str(), mig.instances[1].gpu_instance_id), ("3g.71gb", 1));
    assert_eq!(m.jobs[0].env["CUDA_VISIBLE_DEVICES"], "MIG-standin-3");
    assert_eq!(m.jobs[1].env["CUDA_VISIBLE_DEVICES"], "MIG-standin-1");
    assert_eq!(b.state_file()["mig"], serde_json::json!([]));
    assert!(b.log().iter().all(|l| !l.starts_with("mps-control")));
}

#[test]
fn a_mig_layout_that_cannot_be_created_fails_the_run_and_leaves_nothing() {
    let p = plan(vec![
        workload("wl-mig", Mode::Mig, vec![mig_job("resnet26", "1g.18gb"), mig_job("resnet50", "3g.71gb")]),
        workload("wl-after-mig", Mode::Mig, vec![mig_job("resnet26", "3g.71gb")]),
    ]);
    let b = Bench::new(&p);
    let out = b.run(&[("STANDIN_FAIL_PROFILE", "1g.18gb")], &["--allow-busy-gpu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let m = meta(&b.camp, "wl-mig.r1");
    assert_eq!(m.status, RunStatus::Failed);
    let r = m.reason.unwrap();
    assert!(r.contains("setting up mig failed") && r.contains("Insufficient Resources"), "{r}");
    let calls = b.smi_calls();
    assert_only_instance_commands(&calls);
    assert!(calls.contains(&"nvidia-smi mig -i 0 -dgi -gi 1".to_string()), "the 3g instance is destroyed: {calls:?}");
    assert_eq!(b.mig_instances_left(), 0);
    assert_eq!(meta(&b.camp, "wl-after-mig.r1").status, RunStatus::Ok, "the campaign goes on");
}

/// Waits until every job of the run in progress has been released.
fn wait_training(camp: &Path, jobs: usize) -> PathBuf {
    let mut found = PathBuf::new();
    wait_for("the jobs to train", Duration::from_secs(60), || {
        let Ok(rd) = std::fs::read_dir(camp.join("runs")) else { return false };
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(".tmp-") {
                let n = (0..jobs)
                    .filter(|j| {
                        std::fs::read_to_string(e.path().join(format!("job-{j}.events.jsonl")))
                            .map(|t| t.contains("\"event\":\"release\""))
                            .unwrap_or(false)
                    })
                    .count();
                if n == jobs {
                    found = e.path();
                    return true;
                }
            }
        }
        false
    });
    found
}

fn sigint(child: &Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

#[test]
fn sigint_tears_down_mps_and_stops_the_jobs() {
    let b = Bench::new(&mps_plan());
    let child = b.spawn(&[("COLLOC_FAKE_HANG", "*")], &["--allow-busy-gpu"]);
    let tmp = wait_training(&b.camp, 2);
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by signal 2"), "{stderr}");
    let log: Vec<String> = b.log().into_iter().filter(|l| l.starts_with("mps-control")).collect();
    let quit = log.iter().rposition(|l| field(l, "stdin") == "quit").expect("quit after SIGINT");
    let start = log.iter().rposition(|l| field(l, "args") == "-d").unwrap();
    assert!(start < quit);
    let pipe = field(&log[start], "pipe");
    assert!(!Path::new(pipe).join("standin-running").exists());
    for pid in job_pids(&tmp) {
        assert!(!alive(pid), "job {pid} survived the interruption");
    }
    assert!(tmp.exists(), "the partial trace is kept");
    let sums = std::fs::read_to_string(b.camp.join("SHA256SUMS")).unwrap_or_default();
    assert!(!sums.contains("wl-mps.r1/"), "an interrupted run is not in the manifest");
    assert_eq!(b.state_file()["mps_pipe_dirs"], serde_json::json!([]));

    // Resuming quarantines the partial run and makes both runs.
    let out = b.run(&[], &["--allow-busy-gpu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(b.camp.join("quarantine/wl-mps.r1.1").is_dir(), "{stderr}");
    assert_eq!(meta(&b.camp, "wl-mps.r1").status, RunStatus::Ok);
    let (ok, text) = sha256sum_check(&b.camp);
    assert!(ok, "{text}");
}

#[test]
fn sigint_tears_down_mig_instances() {
    let p =
        plan(vec![workload("wl-mig", Mode::Mig, vec![mig_job("resnet26", "1g.18gb"), mig_job("resnet26", "2g.35gb")])]);
    let b = Bench::new(&p);
    let child = b.spawn(&[("COLLOC_FAKE_HANG", "*")], &["--allow-busy-gpu"]);
    wait_training(&b.camp, 2);
    assert_eq!(b.mig_instances_left(), 2);
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(b.mig_instances_left(), 0);
    let calls = b.smi_calls();
    assert_only_instance_commands(&calls);
    assert_eq!(calls.last().map(String::as_str), Some("nvidia-smi mig -i 0 -lgi"));
    assert_eq!(b.state_file()["mig"], serde_json::json!([]));
}

#[test]
fn instances_left_by_a_killed_runner_are_removed_on_resume() {
    let p =
        plan(vec![workload("wl-mig", Mode::Mig, vec![mig_job("resnet26", "1g.18gb"), mig_job("resnet26", "2g.35gb")])]);
    let b = Bench::new(&p);
    let mut child = b.spawn(&[("COLLOC_FAKE_HANG", "*")], &["--allow-busy-gpu"]);
    wait_training(&b.camp, 2);
    child.kill().unwrap(); // SIGKILL: no teardown possible
    child.wait().unwrap();
    assert_eq!(b.mig_instances_left(), 2);
    assert_eq!(b.state_file()["mig"].as_array().unwrap().len(), 2);
    // Someone else's instance appears meanwhile: it must survive.
    std::fs::write(b.state.join("gi/11"), "1g.18gb").unwrap();

    let out = b.run(&[], &["--allow-busy-gpu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("left by an earlier run"), "{stderr}");
    let left: Vec<String> = std::fs::read_dir(b.state.join("gi"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["11".to_string()], "only the foreign instance remains");
    assert_eq!(meta(&b.camp, "wl-mig.r1").status, RunStatus::Ok);
    assert!(b.smi_calls().iter().all(|c| !c.contains("-gi 11")));
}

#[test]
fn a_foreign_mps_daemon_makes_the_runner_refuse() {
    let b = Bench::new(&mps_plan());
    // A process that looks like someone else's MPS server.
    let fake = b.root.join("nvidia-cuda-mps-server");
    std::fs::copy("/bin/sleep", &fake).unwrap();
    // A test thread forking at the moment of the copy holds the new file open for writing
    // until its child execs: executing it then fails with ETXTBSY for a moment.
    let mut tries = 0;
    let mut foreign = loop {
        match Command::new(&fake).arg("60").env("CUDA_MPS_PIPE_DIRECTORY", "/tmp/someone-else").spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            r => break r.unwrap(),
        }
    };
    // (It execs at once; the limit is for a loaded machine, where the child may wait long for a CPU.)
    wait_for("the foreign process", Duration::from_secs(30), || {
        std::fs::read_to_string(format!("/proc/{}/cmdline", foreign.id()))
            .map(|c| c.contains("mps-server"))
            .unwrap_or(false)
    });
    let out = b.run(&[], &[]);
    let _ = foreign.kill();
    let _ = foreign.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("in use by others") && stderr.contains(&format!("MPS process {}", foreign.id())),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-busy-gpu"), "{stderr}");
    assert!(b.log().is_empty(), "nothing was set up: {:?}", b.log());
    assert!(!b.camp.join("runs/wl-mps.r1").exists());
}

#[test]
fn mps_runs_that_lose_a_client_fail_and_the_next_workload_gets_a_fresh_daemon() {
    let b = Bench::new(&plan(vec![
        workload("wl-wrong-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")]),
        workload("wl-crash-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")]),
        workload("wl-after-mps", Mode::Mps, vec![job("resnet26"), job("resnet26")]),
    ]));
    let out = b.run(
        &[("COLLOC_FAKE_CRASH", "wl-crash:1")],
        &["--allow-busy-gpu", "--no-host-baselines", "--fault-wrong-mps-pipe", "wl-wrong:0"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    // Each run had its own daemon: started, checked, quit, before the next one started.
    let log: Vec<String> = b.log().into_iter().filter(|l| l.starts_with("mps-control")).collect();
    let calls: Vec<&str> = log
        .iter()
        .filter_map(|l| match (field(l, "args"), field(l, "stdin")) {
            ("-d", _) => Some("start"),
            (_, "quit") => Some("quit"),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["start", "quit", "start", "quit", "start", "quit"], "{}", log.join("\n"));
    let pipe = field(&log[0], "pipe").to_string();
    assert!(!Path::new(&pipe).join("standin-running").exists(), "the last daemon is gone");

    let m = meta(&b.camp, "wl-wrong-mps.r1");
    let r = m.reason.clone().unwrap();
    assert!(
        r.starts_with("job 0 (resnet26, pid ")
            && r.ends_with("the driver lists it as a plain compute process, not an MPS client"),
        "{r}"
    );
    assert!(stderr.contains("is not a client of the run's MPS daemon"), "{stderr}");
    let m = meta(&b.camp, "wl-crash-mps.r1");
    let r = m.reason.clone().unwrap();
    assert!(r.starts_with("job 1 (resnet26): killed by signal 9, while the run's MPS daemon served it"), "{r}");
    assert!(m.mps.unwrap().clients.unwrap().checked, "served until the crash");
    assert!(m.release_mono.is_some() && m.window_end_mono.is_none());
    let m = meta(&b.camp, "wl-after-mps.r1");
    assert_eq!(m.status, RunStatus::Ok, "{:?}", m.reason);
    assert!(m.mps.unwrap().clients.unwrap().jobs.iter().all(|j| j.listed_as == DriverListing::MpsClient));

    // A pipe directory given with --job-env reaches the job over the daemon's own.
    let out = b.run(
        &[],
        &[
            "--allow-busy-gpu",
            "--no-host-baselines",
            "--force",
            "--only",
            "wl-after-mps",
            "--job-env",
            "CUDA_MPS_PIPE_DIRECTORY=/tmp/colloc-no-daemon-here",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m = meta(&b.camp, "wl-after-mps.r1.a2");
    assert_eq!(m.jobs[1].env["CUDA_MPS_PIPE_DIRECTORY"], "/tmp/colloc-no-daemon-here");
    let r = m.reason.unwrap();
    assert!(r.contains("job 0 (resnet26, pid ") && r.contains("job 1 (resnet26, pid "), "{r}");
    assert!(!b.camp.join(".runner-state.json").exists(), "nothing left set up");
    let (ok, text) = sha256sum_check(&b.camp);
    assert!(ok, "{text}");
}
