//! The job processes of one run. Each job runs in its own process group (so its data-loader
//! workers can be stopped with it), dies with the runner (`PR_SET_PDEATHSIG`), gets the
//! release line (protocol 2: and later the stop line) on a piped stdin, and appends its
//! events to its log, which the runner follows. stdout and stderr share one pipe whose last 64 KiB are kept.

use anyhow::{Context, Result};
use colloc_trace::events::{EndReason, ErrorKind, Event, EventBody, ABORT_LINE, RELEASE_LINE, STOP_LINE};
use colloc_trace::layout::STDERR_TAIL_BYTES;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What to start.
#[derive(Debug, Clone)]
pub(crate) struct JobSpec {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub events_path: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    Setup,
    Ready,
    Training,
    Done,
}

impl Phase {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Ready => "ready",
            Phase::Training => "training",
            Phase::Done => "done",
        }
    }
}

/// Follows a job's event log as it grows.
pub(crate) struct EventTail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    /// Lines that are not events: (line number, error).
    pub bad_lines: Vec<(usize, String)>,
    lines: usize,
}

impl EventTail {
    pub(crate) fn new(path: &Path) -> Self {
        EventTail { path: path.to_path_buf(), offset: 0, partial: Vec::new(), bad_lines: Vec::new(), lines: 0 }
    }

    /// New complete events since the last call, each with its raw JSON.
    pub(crate) fn poll(&mut self) -> Vec<(Event, serde_json::Value)> {
        let Ok(mut f) = std::fs::File::open(&self.path) else { return Vec::new() };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        let mut buf = Vec::new();
        let Ok(n) = f.read_to_end(&mut buf) else { return Vec::new() };
        self.offset += n as u64;
        self.partial.extend_from_slice(&buf);
        let mut out = Vec::new();
        while let Some(pos) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=pos).collect();
            self.lines += 1;
            let text = String::from_utf8_lossy(&line);
            if text.trim().is_empty() {
                continue;
            }
            match (serde_json::from_str::<Event>(&text), serde_json::from_str::<serde_json::Value>(&text)) {
                (Ok(e), Ok(v)) => out.push((e, v)),
                (Err(e), _) | (_, Err(e)) => self.bad_lines.push((self.lines, e.to_string())),
            }
        }
        out
    }
}

/// The last bytes a process wrote to its stdout and stderr.
#[derive(Clone, Default)]
pub(crate) struct OutputTail(Arc<Mutex<Vec<u8>>>);

impl OutputTail {
    fn push(&self, bytes: &[u8]) {
        let mut b = self.0.lock().unwrap_or_else(|p| p.into_inner());
        b.extend_from_slice(bytes);
        if b.len() > 2 * STDERR_TAIL_BYTES {
            let cut = b.len() - STDERR_TAIL_BYTES;
            b.drain(..cut);
        }
    }

    /// At most `STDERR_TAIL_BYTES`, starting at a line when one starts near the cut.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let b = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if b.len() <= STDERR_TAIL_BYTES {
            return b.clone();
        }
        let tail = &b[b.len() - STDERR_TAIL_BYTES..];
        match tail.iter().take(4096).position(|c| *c == b'\n') {
            Some(p) => tail[p + 1..].to_vec(),
            None => tail.to_vec(),
        }
    }

    /// The last non-empty lines, joined, at most `max` characters.
    pub(crate) fn last_lines(&self, lines: usize, max: usize) -> String {
        let text = String::from_utf8_lossy(&self.bytes()).into_owned();
        let picked: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
        let start = picked.len().saturating_sub(lines);
        let joined = picked[start..].join(" | ");
        if joined.chars().count() > max {
            let skip = joined.chars().count() - max;
            format!("…{}", joined.chars().skip(skip).collect::<String>())
        } else {
            joined
        }
    }
}

/// One job process and what it said.
pub(crate) struct Job {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    child: Option<Child>,
    pub pid: Option<u32>,
    stdin: Option<ChildStdin>,
    pub tail: EventTail,
    pub output: OutputTail,
    pub spawn_error: Option<String>,
    pub status: Option<ExitStatus>,
    pub started_wall: Option<f64>,
    pub ended_wall: Option<f64>,
    pub phase: Phase,
    pub versions: Option<serde_json::Value>,
    pub errors: Vec<(ErrorKind, String)>,
    pub end: Option<(EndReason, i32)>,
    pub released: bool,
    /// Protocol 2: the job sent `window_met`.
    pub window_met: bool,
    /// Protocol 2: the stop line was written to it.
    pub stop_sent: bool,
    pub last_rate: Option<f64>,
    /// The `ready` event's phases: (setup seconds, warm-up seconds, warm-up steps).
    pub ready_info: Option<(f64, f64, u64)>,
    /// When the runner saw the job ready (CLOCK_MONOTONIC).
    pub ready_mono: Option<f64>,
    /// The pid the job reported in `hello`: its own process, which is not the spawned one
    /// when a preloaded server forked it (telemetry follows this one's process tree).
    pub job_pid: Option<u32>,
    /// Stopped by the runner (timeout, abort, interruption).
    pub stopped: bool,
}

impl Job {
    /// The root of the job's process tree: its own process (from `hello`), else the one
    /// spawned.
    pub(crate) fn tree_root(&self) -> Option<u32> {
        self.job_pid.filter(|_| self.status.is_none()).or(self.pid)
    }

    pub(crate) fn exited(&self) -> bool {
        self.status.is_some() || self.spawn_error.is_some()
    }

    fn reap(&mut self) {
        if self.status.is_some() {
            return;
        }
        if let Some(c) = self.child.as_mut() {
            if let Ok(Some(st)) = c.try_wait() {
                self.status = Some(st);
                self.ended_wall = Some(colloc_trace::wall_seconds());
                self.stdin = None;
            }
        }
    }

    /// Signals the job's process group (its loader workers too, even after the job's own
    /// process is gone).
    fn signal_group(&self, sig: i32) {
        if let Some(pid) = self.pid {
            // SAFETY: kill(2) on the job's own process group.
            unsafe { libc::kill(-(pid as i32), sig) };
        }
    }

    fn group_alive(&self) -> bool {
        match self.pid {
            // SAFETY: signal 0 only checks for existence.
            Some(pid) => unsafe { libc::kill(-(pid as i32), 0) == 0 },
            None => false,
        }
    }

    /// Why this job failed, if it did.
    pub(crate) fn failure(&self) -> Option<String> {
        if let Some(e) = &self.spawn_error {
            return Some(e.clone());
        }
        if let Some((kind, msg)) = self.errors.iter().find(|(k, _)| *k == ErrorKind::Oom).or(self.errors.first()) {
            let what = match kind {
                ErrorKind::Oom => "out of memory",
                ErrorKind::Data => "data error",
                ErrorKind::Exception => "error",
            };
            return Some(format!("{what}: {}", short(msg, 300)));
        }
        match self.status {
            Some(st) if st.signal().is_some() => {
                return Some(format!("killed by signal {}", st.signal().unwrap_or(0)));
            }
            Some(st) if st.code() != Some(0) => return Some(format!("exit code {}", st.code().unwrap_or(-1))),
            None => return Some("still running".into()),
            _ => {}
        }
        match self.end {
            None => Some("exited without an end event".into()),
            Some((EndReason::Aborted, _)) => Some("aborted before release".into()),
            Some((EndReason::WindowDone | EndReason::Completed, _)) if self.released => None,
            Some((r, _)) => Some(format!("ended with reason {r:?}")),
        }
    }
}

fn short(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

/// An event worth showing: (job, phase, detail, log it in plain mode).
pub(crate) type Change = (usize, Phase, String, bool);

/// The jobs of a run. Dropping it kills whatever is still running.
pub(crate) struct JobSet {
    pub jobs: Vec<Job>,
}

impl JobSet {
    /// Starts every job; a job that cannot start is recorded with its `spawn_error`.
    pub(crate) fn spawn(specs: Vec<JobSpec>) -> JobSet {
        let jobs = specs.into_iter().map(spawn_one).collect();
        JobSet { jobs }
    }

    /// Reads new events and reaps exited jobs; returns what changed.
    pub(crate) fn poll(&mut self) -> Vec<Change> {
        let mut changes = Vec::new();
        for (i, j) in self.jobs.iter_mut().enumerate() {
            for (ev, raw) in j.tail.poll() {
                match ev.body {
                    EventBody::Versions { .. } => j.versions = Some(raw),
                    EventBody::Hello { pid, .. } => j.job_pid = Some(pid),
                    EventBody::Ready { setup_seconds, warmup_seconds, warmup_steps } => {
                        j.phase = Phase::Ready;
                        j.ready_info = Some((setup_seconds, warmup_seconds, warmup_steps));
                        j.ready_mono = Some(colloc_trace::monotonic_seconds());
                        changes.push((
                            i,
                            Phase::Ready,
                            format!("setup {setup_seconds:.1} s, warm-up {warmup_seconds:.1} s"),
                            true,
                        ));
                    }
                    EventBody::Release => {
                        j.phase = Phase::Training;
                        changes.push((i, Phase::Training, String::new(), false));
                    }
                    EventBody::Sample { images, seconds, .. } if seconds > 0.0 => {
                        let rate = images as f64 / seconds;
                        j.last_rate = Some(rate);
                        changes.push((i, Phase::Training, format!("{rate:.0} img/s"), false));
                    }
                    EventBody::Iterations { ref end_us, ref images, .. } => {
                        // Images over the chunk's span (its first iteration from the chunk's base).
                        let span = end_us.last().copied().unwrap_or(0) as f64 * 1e-6;
                        if span > 0.0 {
                            let rate = images.iter().sum::<u64>() as f64 / span;
                            j.last_rate = Some(rate);
                            changes.push((i, Phase::Training, format!("{rate:.0} img/s"), false));
                        }
                    }
                    EventBody::WindowMet { step, seconds, ci_rel, precision_met } => {
                        j.window_met = true;
                        let ci = ci_rel.map_or(String::new(), |c| format!(", ±{:.2}%", c * 100.0));
                        let target = match precision_met {
                            Some(true) => ", target met",
                            Some(false) => ", target not met",
                            None => "",
                        };
                        changes.push((
                            i,
                            Phase::Training,
                            format!("window met ({step} it, {seconds:.1} s{ci}{target})"),
                            false,
                        ));
                    }
                    EventBody::Error { kind, message } => {
                        changes.push((i, j.phase, format!("{kind:?} error: {}", short(&message, 200)), true));
                        j.errors.push((kind, message));
                    }
                    EventBody::End { reason, exit_code } => j.end = Some((reason, exit_code)),
                    _ => {}
                }
            }
            let before = j.status.is_some();
            j.reap();
            if !before && j.status.is_some() {
                // Read what the job wrote last.
                for (ev, raw) in j.tail.poll() {
                    match ev.body {
                        EventBody::Versions { .. } => j.versions = Some(raw),
                        EventBody::WindowMet { .. } => j.window_met = true,
                        EventBody::Error { kind, message } => j.errors.push((kind, message)),
                        EventBody::End { reason, exit_code } => j.end = Some((reason, exit_code)),
                        EventBody::Ready { setup_seconds, warmup_seconds, warmup_steps } => {
                            j.ready_info = Some((setup_seconds, warmup_seconds, warmup_steps))
                        }
                        _ => {}
                    }
                }
                j.phase = Phase::Done;
                let how = match j.status {
                    Some(st) if st.code() == Some(0) => "exit 0".to_string(),
                    Some(st) => match st.code() {
                        Some(c) => format!("exit code {c}"),
                        None => format!("signal {}", st.signal().unwrap_or(0)),
                    },
                    None => String::new(),
                };
                changes.push((i, Phase::Done, how, true));
            }
        }
        changes
    }

    pub(crate) fn all_ready(&self) -> bool {
        self.jobs.iter().all(|j| j.phase == Phase::Ready && !j.exited())
    }

    /// The first job that ended before it was ready.
    pub(crate) fn dead_before_ready(&self) -> Option<usize> {
        self.jobs.iter().position(|j| j.exited() && !j.released)
    }

    pub(crate) fn all_exited(&self) -> bool {
        self.jobs.iter().all(Job::exited)
    }

    /// Writes the release line to every job; returns the release instant (CLOCK_MONOTONIC).
    pub(crate) fn release(&mut self) -> f64 {
        let mono = colloc_trace::monotonic_seconds();
        for j in &mut self.jobs {
            if let Some(s) = j.stdin.as_mut() {
                // A job that died meanwhile shows up as exited.
                let _ = s.write_all(RELEASE_LINE.as_bytes()).and_then(|_| s.flush());
            }
            j.released = true;
        }
        mono
    }

    /// The first job that was released and has ended with a failure.
    pub(crate) fn failed_after_release(&self) -> Option<usize> {
        self.jobs.iter().position(|j| j.released && j.exited() && j.failure().is_some())
    }

    /// Protocol 2: every job has sent `window_met` and none has exited.
    pub(crate) fn all_window_met(&self) -> bool {
        self.jobs.iter().all(|j| j.window_met && !j.exited())
    }

    /// A released job that exited before the stop line (a failure, or a job that ended its
    /// window itself).
    pub(crate) fn exited_before_stop(&self) -> Option<usize> {
        self.jobs.iter().position(|j| j.released && j.exited() && !j.stop_sent)
    }

    /// Protocol 2: writes the stop line to every job still running, all at once; returns the
    /// instant (CLOCK_MONOTONIC) it was written.
    pub(crate) fn stop_window(&mut self) -> f64 {
        let mono = colloc_trace::monotonic_seconds();
        for j in &mut self.jobs {
            if let Some(s) = j.stdin.as_mut() {
                // A job that died meanwhile shows up as exited.
                let _ = s.write_all(STOP_LINE.as_bytes()).and_then(|_| s.flush());
            }
            j.stop_sent = true;
        }
        mono
    }

    /// Writes the abort line to every job still running.
    pub(crate) fn abort(&mut self) {
        for j in &mut self.jobs {
            if let Some(mut s) = j.stdin.take() {
                let _ = s.write_all(ABORT_LINE.as_bytes()).and_then(|_| s.flush());
            }
        }
    }

    /// Waits up to `limit` for every job to exit.
    pub(crate) fn wait_all(&mut self, limit: Duration) -> Vec<Change> {
        let deadline = Instant::now() + limit;
        let mut changes = Vec::new();
        loop {
            changes.extend(self.poll());
            if self.all_exited() || Instant::now() >= deadline {
                return changes;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops every job's process group: SIGTERM, then SIGKILL after `grace`. Returns the
    /// indices of the jobs that were still running.
    pub(crate) fn stop(&mut self, grace: Duration) -> Vec<usize> {
        self.poll();
        let running: Vec<usize> = (0..self.jobs.len()).filter(|&i| !self.jobs[i].exited()).collect();
        for &i in &running {
            self.jobs[i].stopped = true;
        }
        for j in &self.jobs {
            if j.group_alive() {
                j.signal_group(libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + grace;
        loop {
            self.poll();
            if self.jobs.iter().all(|j| j.exited() && !j.group_alive()) || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for j in &self.jobs {
            if j.group_alive() {
                j.signal_group(libc::SIGKILL);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.all_exited() && Instant::now() < deadline {
            self.poll();
            std::thread::sleep(Duration::from_millis(10));
        }
        running
    }
}

impl Drop for JobSet {
    fn drop(&mut self) {
        for j in &mut self.jobs {
            if j.group_alive() {
                j.signal_group(libc::SIGKILL);
            }
            if let Some(c) = j.child.as_mut() {
                if j.status.is_none() {
                    let _ = c.kill();
                    let _ = c.wait();
                }
            }
        }
    }
}

/// A pipe whose read end stays with the runner and write end goes to the child.
fn output_pipe() -> Result<(std::fs::File, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two fresh descriptors, owned below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("pipe2");
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { Ok((std::fs::File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))) }
}

/// Makes the process `cmd` starts the leader of a process group of its own (in the runner's
/// session) that is killed when the runner dies (`PR_SET_PDEATHSIG`), and that never starts
/// when the runner died before it could ask for that.
pub(crate) fn own_group_dying_with_runner(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

fn spawn_one(spec: JobSpec) -> Job {
    let mut job = Job {
        argv: spec.argv.clone(),
        env: spec.env.clone(),
        child: None,
        pid: None,
        stdin: None,
        tail: EventTail::new(&spec.events_path),
        output: OutputTail::default(),
        spawn_error: None,
        status: None,
        started_wall: None,
        ended_wall: None,
        phase: Phase::Setup,
        versions: None,
        errors: Vec::new(),
        end: None,
        released: false,
        window_met: false,
        stop_sent: false,
        last_rate: None,
        ready_info: None,
        ready_mono: None,
        job_pid: None,
        stopped: false,
    };
    match start(&spec, &job.output) {
        Ok((child, stdin)) => {
            job.pid = Some(child.id());
            job.child = Some(child);
            job.stdin = Some(stdin);
            job.started_wall = Some(colloc_trace::wall_seconds());
        }
        Err(e) => {
            job.spawn_error = Some(format!("cannot start `{}`: {e:#}", spec.argv.join(" ")));
            job.phase = Phase::Done;
        }
    }
    job
}

fn start(spec: &JobSpec, output: &OutputTail) -> Result<(Child, ChildStdin)> {
    let (program, args) = spec.argv.split_first().context("empty job command")?;
    let (mut reader, writer) = output_pipe()?;
    let writer2 = writer.try_clone().context("dup")?;
    let child = {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(writer2));
        own_group_dying_with_runner(&mut cmd);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                Ok(())
            });
        }
        cmd.spawn()?
        // `cmd` (and with it our copies of the pipe's write end) is dropped here.
    };
    let mut child = child;
    let stdin = child.stdin.take().context("piped stdin")?;
    let tail = output.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => tail.push(&buf[..n]),
            }
        }
    });
    Ok((child, stdin))
}
