//! The preloaded job server (`--preload`): the job command run once per invocation with
//! `--serve SOCKET`, which imports PyTorch and timm and forks each job that a client
//! (`--via SOCKET`) hands it (see `workloads/preload.py`). The runner starts it before the
//! first run, starts it again if it died, and ends it by closing its stdin.

use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the server may take to import what jobs need.
const START_LIMIT: Duration = Duration::from_secs(300);

/// A running job server.
pub(crate) struct Preload {
    child: Child,
    stdin: Option<ChildStdin>,
    dir: PathBuf,
    socket: PathBuf,
    command: Vec<String>,
    env: Vec<(String, String)>,
    /// Seconds the server took to import what jobs need (its own report).
    pub import_seconds: f64,
    /// Wall seconds from spawning the server to its `serving` line.
    pub start_seconds: f64,
}

impl Preload {
    /// Starts the server for `job_command` (with `env`, as the jobs get it) in a private
    /// directory under `base` (`colloc-preload-<pid><tag>`), and waits until it serves.
    pub(crate) fn start(job_command: &[String], env: &[(String, String)], base: &Path, tag: &str) -> Result<Preload> {
        let dir = base.join(format!("colloc-preload-{}{tag}", std::process::id()));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let socket = dir.join("jobs.sock");
        let (child, stdin, import_seconds, start_seconds) = spawn(job_command, env, &dir, &socket)?;
        Ok(Preload {
            child,
            stdin: Some(stdin),
            dir,
            socket,
            command: job_command.to_vec(),
            env: env.to_vec(),
            import_seconds,
            start_seconds,
        })
    }

    /// The job command a job is started with: the server's, handing the job to it.
    pub(crate) fn job_command(&self) -> Vec<String> {
        let mut argv = self.command.clone();
        argv.push("--via".into());
        argv.push(self.socket.to_string_lossy().into_owned());
        argv
    }

    /// Starts the server again if it is gone; `Some(why)` when it was restarted.
    pub(crate) fn ensure_running(&mut self) -> Result<Option<String>> {
        let why = match self.child.try_wait() {
            Ok(None) => return Ok(None),
            Ok(Some(s)) => format!("the job server had exited ({s})"),
            Err(e) => format!("the job server could not be checked ({e})"),
        };
        let (child, stdin, import_seconds, start_seconds) = spawn(&self.command, &self.env, &self.dir, &self.socket)?;
        self.child = child;
        self.stdin = Some(stdin);
        self.import_seconds = import_seconds;
        self.start_seconds = start_seconds;
        Ok(Some(format!("{why}; started again ({start_seconds:.1} s)")))
    }
}

impl Drop for Preload {
    fn drop(&mut self) {
        // Closing stdin ends the server, which kills any job still running.
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        // Our own directory (named by the runner's pid, mode 0700): the socket and the log.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn spawn(
    job_command: &[String],
    env: &[(String, String)],
    dir: &Path,
    socket: &Path,
) -> Result<(Child, ChildStdin, f64, f64)> {
    let (program, args) = job_command.split_first().context("empty job command")?;
    let log_path = dir.join("server.log");
    let log = std::fs::File::create(&log_path).with_context(|| format!("cannot create {}", log_path.display()))?;
    let t0 = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .arg("--serve")
        .arg(socket)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log));
    // Its own group in the runner's session: jobs it forks join their clients' groups.
    crate::jobs::own_group_dying_with_runner(&mut cmd);
    let mut child = cmd.spawn().with_context(|| format!("cannot start the job server `{}`", job_command.join(" ")))?;
    let stdin = child.stdin.take().context("piped stdin")?;
    let stdout = child.stdout.take().context("piped stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
        // Its stdout is not read further; the server writes nothing more there.
    });
    let line = rx.recv_timeout(START_LIMIT).unwrap_or_default();
    let fields: Vec<&str> = line.split_whitespace().collect();
    let import_seconds = match fields.as_slice() {
        ["serving", _pid, secs] => secs.parse::<f64>().ok(),
        _ => None,
    };
    let Some(import_seconds) = import_seconds else {
        let _ = child.kill();
        let _ = child.wait();
        let tail = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        bail!(
            "the job server `{} --serve` did not start{}: {}",
            job_command.join(" "),
            if line.is_empty() { String::new() } else { format!(" (it said {:?})", line.trim()) },
            if tail.is_empty() { "no output".to_string() } else { tail.join(" | ") }
        );
    };
    Ok((child, stdin, import_seconds, t0.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into(), "sh".into()]
    }

    #[test]
    fn a_command_that_does_not_serve_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let e = Preload::start(&sh("echo importing failed >&2; exit 3"), &[], d.path(), "").err().expect("an error");
        let text = format!("{e:#}");
        assert!(text.contains("did not start") && text.contains("importing failed"), "{text}");
    }

    #[test]
    fn a_server_is_started_again_when_it_died_and_ended_by_closing_stdin() {
        let d = tempfile::tempdir().unwrap();
        // Serves until its stdin closes; `$2` is the socket path after `--serve`.
        let serve = sh("echo \"serving $$ 1.25\"; cat > /dev/null");
        let mut p = Preload::start(&serve, &[], d.path(), "").unwrap();
        assert_eq!(p.import_seconds, 1.25);
        let argv = p.job_command();
        assert_eq!(&argv[..4], &serve[..]);
        assert_eq!(argv[4], "--via");
        assert!(argv[5].ends_with("jobs.sock"));
        assert_eq!(p.ensure_running().unwrap(), None);
        let _ = p.child.kill();
        let _ = p.child.wait();
        let why = p.ensure_running().unwrap().expect("restarted");
        assert!(why.contains("had exited") && why.contains("started again"), "{why}");
        let dir = p.dir.clone();
        drop(p);
        assert!(!dir.exists(), "the server's directory is removed");
    }
}
