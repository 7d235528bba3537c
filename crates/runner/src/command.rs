//! Runs an external program (nvidia-smi, nvidia-cuda-mps-control, git) with a time limit and
//! captures what it says.

use anyhow::{anyhow, Context, Result};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished command said.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    pub success: bool,
    /// Exit code, `None` when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// stdout and stderr together, trimmed, for messages.
    pub(crate) fn text(&self) -> String {
        let mut t = self.stdout.trim().to_string();
        let e = self.stderr.trim();
        if !e.is_empty() {
            if !t.is_empty() {
                t.push('\n');
            }
            t.push_str(e);
        }
        t
    }
}

/// A command line to run.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: Option<String>,
    pub timeout: Duration,
}

impl Cmd {
    pub(crate) fn new(program: &str, args: &[&str], timeout: Duration) -> Self {
        Cmd {
            program: program.to_string(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
            stdin: None,
            timeout,
        }
    }

    pub(crate) fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    pub(crate) fn stdin(mut self, text: &str) -> Self {
        self.stdin = Some(text.to_string());
        self
    }

    /// The command as one would type it (for logs and errors).
    pub(crate) fn display(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.env {
            if k.starts_with("CUDA_") {
                s.push_str(&format!("{k}={v} "));
            }
        }
        if let Some(input) = &self.stdin {
            s = format!("echo {} | {s}", input.trim());
        }
        s.push_str(&self.program);
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }

    /// Runs the command; an error only when it cannot be started or exceeds its time limit
    /// (a non-zero exit is an `Output` with `success == false`).
    pub(crate) fn run(&self) -> Result<Output> {
        let mut cmd = Command::new(&self.program);
        // Its own process group: a Ctrl-C meant for the runner must not cut a MIG or MPS
        // command short (the runner tears down in order instead).
        cmd.process_group(0);
        let mut child = cmd
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run `{}`", self.display()))?;
        if let Some(input) = &self.stdin {
            if let Some(mut s) = child.stdin.take() {
                let _ = s.write_all(input.as_bytes());
            }
        }
        // A daemon forked by the command may keep the pipes open: read them on threads and
        // stop waiting for them shortly after the command itself exits.
        let reader = |mut r: Box<dyn Read + Send>| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    match r.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            buf.extend_from_slice(&chunk[..n]);
                            let _ = tx.send(Some(String::from_utf8_lossy(&buf).into_owned()));
                        }
                    }
                }
                let _ = tx.send(None);
            });
            rx
        };
        let out = reader(Box::new(child.stdout.take().expect("piped stdout")));
        let err = reader(Box::new(child.stderr.take().expect("piped stderr")));
        let start = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().context("waiting for a command")? {
                break st;
            }
            if start.elapsed() > self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                return Err(anyhow!("`{}` did not finish within {:?}", self.display(), self.timeout));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Ok(Output { success: status.success(), code: status.code(), stdout: drain(&out), stderr: drain(&err) })
    }
}

/// The text read so far, waiting up to a second for the end of the stream.
fn drain(rx: &std::sync::mpsc::Receiver<Option<String>>) -> String {
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Some(t)) => text = t,
            Ok(None) | Err(_) => return text,
        }
    }
}
