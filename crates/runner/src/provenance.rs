//! Provenance that does not come from the GPU: the host, the project's git commit, times.

use colloc_trace::meta::{CpuCalibration, EnvironmentCheck, HostInfo};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::command::Cmd;

/// The host as `/proc` and `/etc/os-release` describe it; unreadable fields are `None`.
pub(crate) fn host_info() -> HostInfo {
    let read = |p: &str| fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let cpu_cores = std::thread::available_parallelism().ok().map(|n| n.get() as u32);
    let memory_total_bytes = fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let os = fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).map(|v| v.trim_matches('"').to_string()));
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        cpu_model,
        cpu_cores,
        memory_total_bytes,
        kernel: read("/proc/sys/kernel/osrelease"),
        os,
        calibration: None,
    }
}

/// sha256 of every `*.py` file beside the job command's script (its first argument ending
/// in `.py`), keyed by the path as the command names the script's directory
/// (`workloads/train.py`, …); empty when the command runs no Python script.
pub(crate) fn workload_files(job_command: &[String]) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let Some(at) = script_position(job_command) else { return out };
    let script = Path::new(&job_command[at]);
    let dir = script.parent().unwrap_or(Path::new(""));
    let shown =
        |name: &str| if dir.as_os_str().is_empty() { name.to_string() } else { format!("{}/{name}", dir.display()) };
    let Ok(entries) = fs::read_dir(if dir.as_os_str().is_empty() { Path::new(".") } else { dir }) else { return out };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".py") || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(bytes) = fs::read(e.path()) {
            out.insert(shown(&name), colloc_trace::manifest::sha256_bytes(&bytes));
        }
    }
    out
}

/// Where the job command names its Python script: its first argument ending in `.py`.
fn script_position(job_command: &[String]) -> Option<usize> {
    job_command.iter().position(|a| a.ends_with(".py"))
}

/// The training program's environment check: `envcheck.py` beside the job command's script,
/// run by the command's interpreter (what precedes the script, e.g. `python3`) against the
/// `environment.lock` beside it. `None` when the command runs no Python script or its
/// directory holds no check (the simulated job); `error` set when the check could not be
/// made or said nothing readable.
pub(crate) fn environment_check(job_command: &[String]) -> Option<EnvironmentCheck> {
    let at = script_position(job_command)?;
    let dir = Path::new(&job_command[at]).parent().unwrap_or(Path::new("")).to_path_buf();
    let script = dir.join("envcheck.py");
    let lock = dir.join("environment.lock");
    if !script.is_file() {
        return None;
    }
    let lock_s = lock.to_string_lossy().into_owned();
    let failed = |why: String| Some(EnvironmentCheck { lock: lock_s.clone(), error: Some(why), ..Default::default() });
    let interpreter: Vec<&str> = job_command[..at].iter().map(String::as_str).collect();
    let Some((program, pre)) = interpreter.split_first() else {
        return failed(format!("the job command runs {} without an interpreter", job_command[at]));
    };
    let script_s = script.to_string_lossy().into_owned();
    let mut args: Vec<&str> = pre.to_vec();
    args.extend([script_s.as_str(), "--lock", lock_s.as_str()]);
    let out = match Cmd::new(program, &args, Duration::from_secs(60)).run() {
        Ok(o) => o,
        Err(e) => return failed(format!("{e:#}")),
    };
    // Exit 0: matches; 1: differs; 2: the lock cannot be read (its message in `error`).
    match serde_json::from_str::<EnvironmentCheck>(out.stdout.trim()) {
        Ok(mut c) if matches!(out.code, Some(0..=2)) => {
            c.lock = lock_s;
            if out.code == Some(2) && c.error.is_none() {
                c.error = Some(out.text());
            }
            Some(c)
        }
        _ => failed(format!("`{program} {}` said nothing readable: {}", args.join(" "), out.text())),
    }
}

/// Bytes each calibration thread hashes per pass.
const CALIBRATION_BYTES: usize = 32 << 20;

/// A short CPU benchmark (about a second): SHA-256 of 32 MiB on one thread (best of 3), then
/// on every core at once. It tells hosts apart; it models nothing the jobs do.
pub(crate) fn calibrate() -> CpuCalibration {
    use std::time::Instant;
    let t0 = Instant::now();
    let buf: Vec<u8> = (0..CALIBRATION_BYTES).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    let mib = CALIBRATION_BYTES as f64 / (1u64 << 20) as f64;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        std::hint::black_box(colloc_trace::manifest::sha256_bytes(std::hint::black_box(&buf)));
        best = best.min(t.elapsed().as_secs_f64());
    }
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let shared = std::sync::Arc::new(buf);
    let t = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let b = shared.clone();
            std::thread::spawn(move || std::hint::black_box(colloc_trace::manifest::sha256_bytes(&b)))
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
    let all = t.elapsed().as_secs_f64();
    CpuCalibration {
        method: format!("sha256 of {mib:.0} MiB in memory: one thread (best of 3), then one pass on each of {threads} threads at once"),
        single_thread_mib_s: round1(mib / best.max(1e-9)),
        all_threads_mib_s: round1(threads as f64 * mib / all.max(1e-9)),
        threads: threads as u32,
        seconds: (t0.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        measured_at: rfc3339(colloc_trace::wall_seconds()),
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The git checkout above `start` (the directory holding `.git`), if any.
pub(crate) fn find_checkout(start: &Path) -> Option<PathBuf> {
    let start = start.canonicalize().ok()?;
    start.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// (commit, dirty) of the checkout at `root`: `git` when it is installed, else the commit
/// read from `.git` with dirtiness unknown.
pub(crate) fn git_state(root: &Path) -> (Option<String>, Option<bool>) {
    let t = Duration::from_secs(30);
    let root_s = root.to_string_lossy().to_string();
    let commit = Cmd::new("git", &["-C", &root_s, "rev-parse", "HEAD"], t)
        .run()
        .ok()
        .filter(|o| o.success)
        .map(|o| o.stdout.trim().to_string())
        .filter(|c| c.len() == 40);
    match commit {
        Some(c) => {
            let dirty = Cmd::new("git", &["-C", &root_s, "status", "--porcelain", "--untracked-files=no"], t)
                .run()
                .ok()
                .filter(|o| o.success)
                .map(|o| !o.stdout.trim().is_empty());
            (Some(c), dirty)
        }
        None => (read_head(&root.join(".git")), None),
    }
}

fn read_head(git: &Path) -> Option<String> {
    let head = fs::read_to_string(git.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(r) = head.strip_prefix("ref: ") else {
        return Some(head.to_string()).filter(|c| c.len() == 40);
    };
    if let Ok(c) = fs::read_to_string(git.join(r)) {
        return Some(c.trim().to_string()).filter(|c| c.len() == 40);
    }
    let packed = fs::read_to_string(git.join("packed-refs")).ok()?;
    packed.lines().find_map(|l| {
        let (c, name) = l.split_once(' ')?;
        (name == r && c.len() == 40).then(|| c.to_string())
    })
}

/// Environment variables that matter for a job's behaviour, as recorded in `meta.json`.
pub(crate) fn matters(key: &str) -> bool {
    const PREFIXES: &[&str] =
        &["CUDA_", "OMP_", "PYTHON", "MKL_", "TORCH", "PYTORCH_", "NVIDIA_", "NCCL_", "COLLOC_", "CUBLAS_", "CUDNN_"];
    PREFIXES.iter().any(|p| key.starts_with(p)) || key == "LD_LIBRARY_PATH"
}

/// The host's own directories as they are written in a trace: the runner's working directory
/// as `.` and the home directory as `~`, so that recorded commands and environment values
/// name no machine's absolute paths (system paths such as `/usr/local/cuda` stay).
#[derive(Debug, Clone, Default)]
pub(crate) struct HostDirs {
    cwd: Option<PathBuf>,
    home: Option<PathBuf>,
}

impl HostDirs {
    pub(crate) fn of_this_host() -> HostDirs {
        let cwd = std::env::current_dir().ok().map(|d| d.canonicalize().unwrap_or(d));
        HostDirs::new(cwd.as_deref(), std::env::var_os("HOME").map(std::path::PathBuf::from).as_deref())
    }

    pub(crate) fn new(cwd: Option<&Path>, home: Option<&Path>) -> HostDirs {
        // The root directory would match every path.
        let keep = |p: &Path| Some(p.to_path_buf()).filter(|p| p.parent().is_some());
        HostDirs { cwd: cwd.and_then(keep), home: home.and_then(keep) }
    }

    /// `path` as a job reaches it: jobs start in the runner's working directory, so a path
    /// inside it is given relative to it; a path elsewhere stays as it is.
    pub(crate) fn relative(&self, path: &Path) -> PathBuf {
        self.cwd
            .as_deref()
            .and_then(|d| path.strip_prefix(d).ok())
            .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
    }

    /// `text` with each whole-directory occurrence of the working directory, then of the
    /// home directory, replaced.
    pub(crate) fn portable(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (dir, name) in [(&self.cwd, "."), (&self.home, "~")] {
            if let Some(d) = dir {
                out = replace_dir(&out, d.to_string_lossy().trim_end_matches('/'), name);
            }
        }
        out
    }
}

/// Replaces `dir` where it stands as a whole path: at the start of the text or after `:`, `=`
/// or a space, and followed by `/`, `:` or the end.
fn replace_dir(text: &str, dir: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(at) = rest.find(dir) {
        let before = rest[..at].chars().last().or(prev);
        let after = rest[at + dir.len()..].chars().next();
        let starts = before.is_none_or(|c| matches!(c, ':' | '=' | ' '));
        let ends = after.is_none_or(|c| matches!(c, '/' | ':'));
        out.push_str(&rest[..at]);
        out.push_str(if starts && ends { name } else { dir });
        prev = dir.chars().last();
        rest = &rest[at + dir.len()..];
    }
    out.push_str(rest);
    out
}

/// RFC 3339 UTC with milliseconds for Unix seconds.
pub(crate) fn rfc3339(unix_seconds: f64) -> String {
    let ms_total = (unix_seconds * 1000.0).round() as i64;
    let (secs, ms) = (ms_total.div_euclid(1000), ms_total.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = colloc_trace::civil::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z", rem / 3600, (rem % 3600) / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A training program's directory with the project's real `envcheck.py` and `lock`.
    fn program(lock: &str) -> (tempfile::TempDir, Vec<String>) {
        let d = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/envcheck.py");
        fs::copy(src, d.path().join("envcheck.py")).unwrap();
        fs::write(d.path().join("environment.lock"), lock).unwrap();
        let train = d.path().join("train.py").to_string_lossy().into_owned();
        (d, vec!["python3".into(), train])
    }

    #[test]
    fn the_environment_check_names_each_difference_and_a_bad_lock() {
        let (d, cmd) = program("python==0.0.1\nno-such-distribution-xyz==1.0\n");
        let c = environment_check(&cmd).expect("a check beside the script");
        assert_eq!(c.lock, d.path().join("environment.lock").to_string_lossy());
        assert_eq!(c.error, None);
        assert_eq!(c.differs.len(), 2, "{c:?}");
        assert!(c.differs[0].starts_with("python: ") && c.differs[0].ends_with(", 0.0.1 locked"), "{c:?}");
        assert_eq!(c.differs[1], "no-such-distribution-xyz: not installed here, 1.0 locked");
        assert_eq!(c.here.get("no-such-distribution-xyz"), Some(&None));
        assert!(c.here["python"].as_deref().is_some_and(|v| v.starts_with('3')));

        let (_d, cmd) = program("torch 2.11\n");
        let c = environment_check(&cmd).unwrap();
        assert!(c.error.as_deref().is_some_and(|e| e.contains(":1: expected `name==version`")), "{c:?}");

        // No check beside the script, or no script at all: nothing to check.
        let (d, cmd) = program("python==3\n");
        fs::remove_file(d.path().join("envcheck.py")).unwrap();
        assert_eq!(environment_check(&cmd), None);
        assert_eq!(environment_check(&["/bin/fake-job".into()]), None);
        // An interpreter that is not there.
        let (_d, mut cmd) = program("python==3\n");
        cmd[0] = "/nonexistent/python3".into();
        assert!(environment_check(&cmd).unwrap().error.unwrap().contains("cannot run"));
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400.5), "2000-02-29T00:00:00.500Z");
        assert_eq!(rfc3339(1_764_524_096.0), "2025-11-30T17:34:56.000Z");
    }

    #[test]
    fn the_hosts_own_directories_are_written_as_dot_and_tilde() {
        let h = HostDirs::new(Some(Path::new("/home/ann/repo")), Some(Path::new("/home/ann")));
        assert_eq!(h.portable("/home/ann/repo/target/debug/xtask"), "./target/debug/xtask");
        assert_eq!(h.portable("/home/ann/repo"), ".");
        assert_eq!(
            h.portable("/home/ann/repo/t/out:/home/ann/.rustup/lib:/usr/local/cuda/lib64"),
            "./t/out:~/.rustup/lib:/usr/local/cuda/lib64"
        );
        assert_eq!(h.portable("--job-file=/home/ann/repo/j.json"), "--job-file=./j.json");
        // Only whole directories: a sibling or a longer name stays.
        assert_eq!(h.portable("/home/ann/repo-2/x"), "~/repo-2/x");
        assert_eq!(h.portable("/home/annex/x"), "/home/annex/x");
        assert_eq!(h.portable("/srv/home/ann/x"), "/srv/home/ann/x");
        // The root directory is never replaced.
        assert_eq!(HostDirs::new(Some(Path::new("/")), None).portable("/usr/bin"), "/usr/bin");
    }

    #[test]
    fn paths_inside_the_working_directory_are_recorded_relative_to_it() {
        let h = HostDirs::new(Some(Path::new("/srv/checkout")), None);
        let inside = Path::new("/srv/checkout/data/c/runs/.tmp-r1/job-0.json");
        assert_eq!(h.relative(inside), Path::new("data/c/runs/.tmp-r1/job-0.json"));
        let outside = Path::new("/tmp/c/runs/.tmp-r1/job-0.json");
        assert_eq!(h.relative(outside), outside);
        assert_eq!(HostDirs::new(None, None).relative(inside), inside);
        // A sibling whose name merely starts like the directory is not inside it.
        let sibling = Path::new("/srv/checkout-2/job-0.json");
        assert_eq!(h.relative(sibling), sibling);
    }

    #[test]
    fn env_filter() {
        assert!(matters("CUDA_VISIBLE_DEVICES"));
        assert!(matters("PYTHONPATH"));
        assert!(!matters("HOME"));
    }
}

#[cfg(test)]
mod version_tests {
    use super::*;

    #[test]
    fn workload_files_are_the_python_files_beside_the_script() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path().join("workloads");
        fs::create_dir(&w).unwrap();
        fs::write(w.join("train.py"), "a").unwrap();
        fs::write(w.join("events.py"), "b").unwrap();
        fs::write(w.join("notes.md"), "c").unwrap();
        fs::create_dir(w.join("tests.py")).unwrap();
        let script = w.join("train.py").to_string_lossy().into_owned();
        let files = workload_files(&["python3".into(), script]);
        let names: Vec<String> =
            files.keys().map(|k| Path::new(k).file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["events.py", "train.py"]);
        assert_eq!(files.values().next().unwrap(), &colloc_trace::manifest::sha256_bytes(b"b"));
        assert!(workload_files(&["/bin/fake-job".into()]).is_empty());
    }
}
