//! The events a training job writes, one JSON object per line (`job-N.events.jsonl`).
//!
//! Every line has `event` (its kind), `mono` (seconds on CLOCK_MONOTONIC), `wall` (Unix
//! seconds) and `job` (the job's index in its workload). The authoritative description is
//! `workloads/PROTOCOL.md`; `workloads/protocol.schema.json` is its JSON Schema, and both
//! the training program and the runner's simulated job are tested against it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub mono: f64,
    pub wall: f64,
    pub job: u32,
    #[serde(flatten)]
    pub body: EventBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventBody {
    /// First line: who is speaking.
    Hello {
        pid: u32,
        protocol_version: u32,
        /// `true` for the runner's simulated job.
        simulated: bool,
    },
    /// Framework versions as the job sees them.
    Versions {
        python: String,
        torch: Option<String>,
        timm: Option<String>,
        cuda: Option<String>,
        cudnn: Option<String>,
        device: Option<String>,
    },
    /// Model built, data ready, warm-up done: the job now waits for the release line on stdin.
    Ready { setup_seconds: f64, warmup_seconds: f64, warmup_steps: u64 },
    /// The job read the release line and starts measured training.
    Release,
    /// The steady-state measurement window opens (first step after release).
    WindowStart { step: u64 },
    /// Every `sample_every` iterations: what happened since the previous sample.
    Sample {
        /// Iterations done since release, at the end of this interval.
        step: u64,
        /// Images trained in this interval.
        images: u64,
        /// Length of this interval in seconds.
        seconds: f64,
        /// Seconds of this interval spent waiting for the next batch.
        data_wait_seconds: f64,
        /// Iterations in this interval whose data wait exceeded 0.1 s.
        slow_data_steps: u64,
        /// Training loss of the interval's last iteration.
        loss: f64,
    },
    /// Version 2, `quick`: the end of every training iteration since release, in chunks
    /// (about one a second, and the rest before `window_end`).
    Iterations {
        /// Iterations since release before this chunk (the first chunk: 0).
        first_step: u64,
        /// Monotonic seconds the chunk counts from: the end of the iteration before it
        /// (for the first chunk, the job's time reference taken right after release).
        base_mono: f64,
        /// End of each iteration in whole microseconds after `base_mono` (`PROTOCOL.md`:
        /// non-decreasing; [`read_log`] refuses a tie too, an iteration that does not end
        /// after the one before).
        end_us: Vec<u64>,
        /// Images trained in each iteration.
        images: Vec<u64>,
        /// Microseconds each iteration waited for its batch (the loader; 0 for synthetic data).
        data_wait_us: Vec<u64>,
    },
    /// Version 2, `quick`: the job has trained `window_seconds` and `min_iterations` since
    /// release and, with a precision target, the 95% interval of its throughput is within it
    /// or `max_window_seconds` have passed (once); it trains on until the runner's `stop` line.
    WindowMet {
        /// Iterations finished since release.
        step: u64,
        /// Seconds from release to the end of the last finished iteration.
        seconds: f64,
        /// Relative half-width of the 95% interval of the throughput since release when the
        /// window was met ([`crate::precision::throughput_ci`]); `None` with fewer than 20
        /// iterations.
        ci_rel: Option<f64>,
        /// Whether `ci_rel` was within the protocol's `precision_target` (`false`: the
        /// maximum window passed first); `None` when no target was declared.
        precision_met: Option<bool>,
    },
    /// End of an epoch (the `paper` protocol, or a version-1 `quick` window that spans one).
    EpochEnd {
        epoch: u32,
        images: u64,
        train_seconds: f64,
        val_seconds: Option<f64>,
        val_top1: Option<f64>,
        val_loss: Option<f64>,
    },
    /// The measurement window closes.
    WindowEnd { step: u64, images: u64, seconds: f64 },
    /// Device memory as PyTorch's caching allocator reports it.
    Memory { allocated_bytes: u64, reserved_bytes: u64, peak_allocated_bytes: u64, peak_reserved_bytes: u64 },
    /// Something went wrong; `kind` is `oom` for CUDA out of memory.
    Error { kind: ErrorKind, message: String },
    /// Last line.
    End { reason: EndReason, exit_code: i32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Oom,
    Exception,
    Data,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// `quick`: the measurement window is over.
    WindowDone,
    /// `paper`: every epoch is done.
    Completed,
    /// stdin closed or said `abort` before release.
    Aborted,
    Oom,
    Error,
}

impl EventBody {
    /// The value of the `event` field.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::Hello { .. } => "hello",
            EventBody::Versions { .. } => "versions",
            EventBody::Ready { .. } => "ready",
            EventBody::Release => "release",
            EventBody::WindowStart { .. } => "window_start",
            EventBody::Sample { .. } => "sample",
            EventBody::Iterations { .. } => "iterations",
            EventBody::WindowMet { .. } => "window_met",
            EventBody::EpochEnd { .. } => "epoch_end",
            EventBody::WindowEnd { .. } => "window_end",
            EventBody::Memory { .. } => "memory",
            EventBody::Error { .. } => "error",
            EventBody::End { .. } => "end",
        }
    }
}

/// Parses a job's event log; a line that is not an event is an error naming its line.
pub fn parse_log(text: &str) -> Result<Vec<Event>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// The most images one event may count (an iteration, a sample, an epoch, a window): more
/// is not a trace of a training job.
pub const MAX_IMAGES: u64 = 1_000_000_000;

/// Protocol versions whose logs can be read.
pub const READABLE_VERSIONS: [u32; 2] = [1, 2];

/// Reads job `job`'s event log as the analysis does: every non-blank line an event (a line
/// that is not is an error naming it), and the events in the protocol's order
/// (`workloads/PROTOCOL.md`, the same rules as `workloads/validate_events.py --partial`: a
/// log may stop before its `end`, when the job was killed), but that iterations must end
/// one after another (`end_us` increasing, and past the previous chunk's last). A line
/// longer than [`crate::limits::MAX_EVENT_LINE_BYTES`] is refused. Errors read `line N: what`.
pub fn read_log(text: &str, job: u32) -> Result<Vec<Event>, String> {
    read_log_taking(text, job, Some)
}

/// [`read_log`], each event once checked offered to `take`: the events it takes (returning
/// `None`) are left out of the log returned, those it hands back are kept. A reader that
/// needs only the sums of a kind of event (the `iterations` of a long log) takes them.
pub fn read_log_taking(text: &str, job: u32, take: impl FnMut(Event) -> Option<Event>) -> Result<Vec<Event>, String> {
    read_log_from(text.as_bytes(), job, None, take)
}

/// [`read_log_taking`] of a stream (the log file), read a line at a time, a line never held
/// beyond [`crate::limits::MAX_EVENT_LINE_BYTES`]; with the job's `batch_size` (its job file's),
/// an iteration of more images than it is refused too. A line that is not UTF-8 is an error
/// naming it.
pub fn read_log_from(
    log: impl std::io::Read,
    job: u32,
    batch_size: Option<u64>,
    mut take: impl FnMut(Event) -> Option<Event>,
) -> Result<Vec<Event>, String> {
    let mut order = LogOrder { batch_size, ..LogOrder::default() };
    let mut events = Vec::new();
    let mut lines = crate::rows::Lines::new(log, crate::limits::MAX_EVENT_LINE_BYTES);
    let mut line_no = 0usize;
    loop {
        let next = match lines.next_line() {
            Ok(Some(next)) => next,
            Ok(None) => break,
            Err(e) => return Err(format!("line {}: cannot read: {e}", lines.line_no())),
        };
        line_no += 1;
        let at = |e: String| format!("line {line_no}: {e}");
        let l = match next {
            crate::rows::Line::Text(l, true) => {
                // SAFETY: `next_line` checked the line is UTF-8.
                let l = unsafe { std::str::from_utf8_unchecked(l) };
                l.strip_suffix('\r').unwrap_or(l)
            }
            crate::rows::Line::Text(_, false) => return Err(at("not UTF-8 text".to_string())),
            crate::rows::Line::TooLong => return Err(at(crate::rows::too_long(crate::limits::MAX_EVENT_LINE_BYTES))),
        };
        if l.trim().is_empty() {
            continue;
        }
        let e: Event = match iterations_scan(l).or_else(|| iterations_line(l)) {
            Some(e) => e,
            None => serde_json::from_str(l).map_err(|e| at(format!("not an event: {e}")))?,
        };
        order.feed(&e, job).map_err(at)?;
        events.extend(take(e));
    }
    Ok(events)
}

/// An `iterations` line as the job writes it (its keys once each, in any order, no others,
/// no escapes in strings, the integers plain), read by a scan of its bytes, its floats by
/// `serde_json` as the other parses read them; `None` for anything else, which those read.
fn iterations_scan(line: &str) -> Option<Event> {
    let mut s = Scan { bytes: line.as_bytes(), at: 0 };
    let (mut mono, mut wall, mut job, mut event, mut first_step, mut base_mono) = (None, None, None, None, None, None);
    let (mut end_us, mut images, mut data_wait_us) = (None, None, None);
    s.expect(b'{')?;
    loop {
        let key = s.string()?;
        s.expect(b':')?;
        let fresh = match key {
            b"mono" => mono.replace(s.float()?).is_none(),
            b"wall" => wall.replace(s.float()?).is_none(),
            b"job" => job.replace(u32::try_from(s.integer()?).ok()?).is_none(),
            b"event" => event.replace(s.string()?).is_none(),
            b"first_step" => first_step.replace(s.integer()?).is_none(),
            b"base_mono" => base_mono.replace(s.float()?).is_none(),
            b"end_us" => end_us.replace(s.integers()?).is_none(),
            b"images" => images.replace(s.integers()?).is_none(),
            b"data_wait_us" => data_wait_us.replace(s.integers()?).is_none(),
            _ => false,
        };
        if !fresh {
            return None;
        }
        match s.next()? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    s.space();
    if s.at != s.bytes.len() || event? != b"iterations" {
        return None;
    }
    Some(Event {
        mono: mono?,
        wall: wall?,
        job: job?,
        body: EventBody::Iterations {
            first_step: first_step?,
            base_mono: base_mono?,
            end_us: end_us?,
            images: images?,
            data_wait_us: data_wait_us?,
        },
    })
}

/// A scan of a JSON line's bytes: each step skips the white space before what it reads.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn next(&mut self) -> Option<u8> {
        self.space();
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    /// A string without escapes or control characters.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let from = self.at;
        let n = self.bytes[from..].iter().position(|b| *b == b'"' || *b == b'\\' || *b < 0x20)?;
        (self.bytes[from + n] == b'"').then(|| {
            self.at = from + n + 1;
            &self.bytes[from..from + n]
        })
    }

    /// A non-negative integer as JSON writes it (no sign, no leading zero) that fits a `u64`.
    fn integer(&mut self) -> Option<u64> {
        self.space();
        let from = self.at;
        let mut v: u64 = 0;
        while let Some(d) = self.bytes.get(self.at).filter(|b| b.is_ascii_digit()) {
            v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            self.at += 1;
        }
        let digits = self.at - from;
        (digits == 1 || (digits > 1 && self.bytes[from] != b'0')).then_some(v)
    }

    /// `[integer, ...]`.
    fn integers(&mut self) -> Option<Vec<u64>> {
        self.expect(b'[')?;
        let mut v = Vec::new();
        self.space();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Some(v);
        }
        loop {
            v.push(self.integer()?);
            match self.next()? {
                b',' => continue,
                b']' => return Some(v),
                _ => return None,
            }
        }
    }

    /// A number, read by `serde_json` (whose reading of a float the other parses share).
    fn float(&mut self) -> Option<f64> {
        self.space();
        let from = self.at;
        while matches!(self.bytes.get(self.at), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.at += 1;
        }
        let token = std::str::from_utf8(&self.bytes[from..self.at]).ok()?;
        serde_json::from_str(token).ok()
    }
}

/// An `iterations` line, the bulk of a protocol-2 log, parsed straight into its fields; `None`
/// when the line is anything else or does not parse so (the general parse, whose errors
/// name what is wrong, reads it then). The general parse of an internally tagged, flattened
/// event buffers every value first, several times slower on these long arrays.
fn iterations_line(line: &str) -> Option<Event> {
    #[derive(Deserialize)]
    struct Line {
        mono: f64,
        wall: f64,
        job: u32,
        event: String,
        first_step: u64,
        base_mono: f64,
        end_us: Vec<u64>,
        images: Vec<u64>,
        data_wait_us: Vec<u64>,
    }
    if !line.contains("\"iterations\"") {
        return None;
    }
    let l: Line = serde_json::from_str(line).ok()?;
    (l.event == "iterations").then_some(Event {
        mono: l.mono,
        wall: l.wall,
        job: l.job,
        body: EventBody::Iterations {
            first_step: l.first_step,
            base_mono: l.base_mono,
            end_us: l.end_us,
            images: l.images,
            data_wait_us: l.data_wait_us,
        },
    })
}

/// The protocol's order rules, fed one event at a time.
#[derive(Default)]
struct LogOrder {
    /// The kinds seen so far, each once (a log has hundreds of thousands of `iterations`).
    seen: Vec<&'static str>,
    /// The kind of the last event.
    last: Option<&'static str>,
    mono: Option<f64>,
    version: Option<u32>,
    error_kinds: Vec<ErrorKind>,
    /// Protocol 2: the `first_step` and `base_mono` the next `iterations` chunk must have.
    next_step: u64,
    next_base: Option<f64>,
    /// The job's batch size, when known: the most images an iteration trains.
    batch_size: Option<u64>,
}

fn non_negative(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{what} is {v}, not a finite number ≥ 0"))
    }
}

fn images_ok(what: &str, n: u64) -> Result<(), String> {
    if n > MAX_IMAGES {
        return Err(format!("{what} {n} is more than {MAX_IMAGES}"));
    }
    Ok(())
}

/// Checks the fields every event has: `mono` finite and ≥ 0, `wall` finite, and `job` the
/// log's job.
#[inline]
fn check_stamps(e: &Event, job: u32) -> Result<(), String> {
    non_negative("mono", e.mono)?;
    if !e.wall.is_finite() {
        return Err(format!("wall is {}, not a finite number", e.wall));
    }
    if e.job != job {
        return Err(format!("job is {}, but this is the log of job {job}", e.job));
    }
    Ok(())
}

/// Checks that the iterations of a chunk starting at `first_step` end one after another
/// (`end_us` increasing).
#[inline]
fn check_iteration_ends(first_step: u64, end_us: &[u64]) -> Result<(), String> {
    if let Some(k) = end_us.windows(2).position(|w| w[1] <= w[0]) {
        let (a, b) = (end_us[k], end_us[k + 1]);
        let how = if b < a { "decreases" } else { "does not increase" };
        return Err(format!(
            "iterations: end_us {how} at index {} ({b} after {a}): iteration {} does not end after iteration {}",
            k + 1,
            first_step.saturating_add(k as u64 + 1),
            first_step.saturating_add(k as u64)
        ));
    }
    Ok(())
}

/// Checks a `window_met`: `seconds` and `ci_rel` ≥ 0, and no `precision_met` without a `ci_rel`.
#[inline]
fn check_window_met(seconds: f64, ci_rel: Option<f64>, precision_met: Option<bool>) -> Result<(), String> {
    non_negative("window_met: seconds", seconds)?;
    if let Some(c) = ci_rel {
        non_negative("window_met: ci_rel", c)?;
    }
    if precision_met == Some(true) && ci_rel.is_none() {
        return Err("window_met: precision_met true without a ci_rel".to_string());
    }
    Ok(())
}

impl LogOrder {
    /// Checks event `e` of job `job`'s log against the protocol's rules and the events before it.
    fn feed(&mut self, e: &Event, job: u32) -> Result<(), String> {
        let name = e.body.kind();
        check_stamps(e, job)?;
        self.check_order(name, e.mono)?;
        self.check_body(&e.body)?;
        self.record(name, e.mono);
        Ok(())
    }

    /// Checks that an event of kind `name` at `mono` may come where it does: `hello` first,
    /// nothing after `end`, the once-only kinds once, `mono` non-decreasing, and the kinds of
    /// the window in their order.
    #[inline]
    fn check_order(&self, name: &'static str, mono: f64) -> Result<(), String> {
        let seen = |n: &str| self.seen.contains(&n);
        if self.seen.is_empty() && name != "hello" {
            return Err(format!("the first event must be hello, got {name}"));
        }
        if self.last == Some("end") {
            return Err(format!("{name} after end: end must be the last event"));
        }
        let once = ["hello", "versions", "ready", "release", "window_start", "window_met", "window_end", "end"];
        if once.contains(&name) && seen(name) {
            return Err(format!("a second {name} event"));
        }
        if let Some(prev) = self.mono {
            if mono < prev {
                return Err(format!("mono goes backwards ({mono} after {prev})"));
            }
        }
        let ordered = |cond: bool, what: &str| if cond { Err(what.to_string()) } else { Ok(()) };
        ordered(name == "versions" && seen("ready"), "versions after ready")?;
        ordered(name == "release" && !seen("ready"), "release before ready")?;
        ordered(name == "window_start" && !seen("release"), "window_start before release")?;
        let windowed = ["sample", "epoch_end", "window_end", "iterations", "window_met"];
        if windowed.contains(&name) && !seen("window_start") {
            return Err(format!("{name} before window_start"));
        }
        if ["sample", "epoch_end", "iterations", "window_met"].contains(&name) && seen("window_end") {
            return Err(format!("{name} after window_end"));
        }
        if ["iterations", "window_met"].contains(&name) && self.version == Some(1) {
            return Err(format!("{name} in a protocol version 1 log"));
        }
        Ok(())
    }

    /// Checks the fields of an event's body, each kind by its rules, and records what later
    /// events are checked against (the protocol version, error kinds, the next chunk).
    #[inline]
    fn check_body(&mut self, body: &EventBody) -> Result<(), String> {
        match body {
            EventBody::Hello { protocol_version, .. } => {
                if !READABLE_VERSIONS.contains(protocol_version) {
                    return Err(format!("protocol_version {protocol_version} is not one of 1, 2"));
                }
                self.version = Some(*protocol_version);
            }
            EventBody::Ready { setup_seconds, warmup_seconds, .. } => {
                non_negative("ready: setup_seconds", *setup_seconds)?;
                non_negative("ready: warmup_seconds", *warmup_seconds)?;
            }
            EventBody::Sample { images, seconds, data_wait_seconds, .. } => {
                images_ok("sample: images", *images)?;
                non_negative("sample: seconds", *seconds)?;
                non_negative("sample: data_wait_seconds", *data_wait_seconds)?;
            }
            EventBody::Iterations { first_step, base_mono, end_us, images, data_wait_us } => {
                self.check_iterations(*first_step, *base_mono, end_us, images, data_wait_us)?;
            }
            EventBody::WindowMet { seconds, ci_rel, precision_met, .. } => {
                check_window_met(*seconds, *ci_rel, *precision_met)?;
            }
            EventBody::EpochEnd { images, train_seconds, val_seconds, .. } => {
                images_ok("epoch_end: images", *images)?;
                non_negative("epoch_end: train_seconds", *train_seconds)?;
                if let Some(v) = val_seconds {
                    non_negative("epoch_end: val_seconds", *v)?;
                }
            }
            EventBody::WindowEnd { images, seconds, .. } => {
                images_ok("window_end: images", *images)?;
                non_negative("window_end: seconds", *seconds)?;
            }
            EventBody::Error { kind, .. } => self.error_kinds.push(*kind),
            EventBody::End { reason, exit_code } => self.check_end(*reason, *exit_code)?,
            _ => {}
        }
        Ok(())
    }

    /// Checks an `iterations` chunk: its arrays of one non-zero length, iterations that end
    /// one after another, images within bounds and the batch size, and the chunk following
    /// the previous one; then records where the next chunk must start.
    #[inline]
    fn check_iterations(
        &mut self,
        first_step: u64,
        base_mono: f64,
        end_us: &[u64],
        images: &[u64],
        data_wait_us: &[u64],
    ) -> Result<(), String> {
        non_negative("iterations: base_mono", base_mono)?;
        let n = end_us.len();
        if n == 0 {
            return Err("iterations with no iteration".to_string());
        }
        if images.len() != n || data_wait_us.len() != n {
            return Err(format!(
                "iterations: end_us, images and data_wait_us differ in length ({n}, {}, {})",
                images.len(),
                data_wait_us.len()
            ));
        }
        check_iteration_ends(first_step, end_us)?;
        if end_us[0] == 0 && self.next_base.is_some() {
            return Err(format!(
                "iterations: end_us[0] is 0: iteration {first_step} does not end after iteration {}, the previous chunk's last",
                first_step.saturating_sub(1)
            ));
        }
        self.check_iteration_images(first_step, images)?;
        if first_step != self.next_step {
            return Err(format!("iterations: first_step {first_step}, expected {}", self.next_step));
        }
        if let Some(b) = self.next_base {
            if (base_mono - b).abs() > 2e-6 {
                return Err(format!("iterations: base_mono {base_mono} is not the previous chunk's last end {b}"));
            }
        }
        self.next_step = first_step.saturating_add(n as u64);
        self.next_base = Some(base_mono + end_us[n - 1] as f64 * 1e-6);
        Ok(())
    }

    /// Checks that no iteration of a chunk trains more than [`MAX_IMAGES`] or, when known,
    /// the job's batch size.
    #[inline]
    fn check_iteration_images(&self, first_step: u64, images: &[u64]) -> Result<(), String> {
        if let Some((k, n)) = images.iter().enumerate().find(|(_, n)| **n > MAX_IMAGES) {
            return Err(format!("iterations: images[{k}] {n} is more than {MAX_IMAGES}"));
        }
        if let Some(b) = self.batch_size {
            if let Some((k, n)) = images.iter().enumerate().find(|(_, n)| **n > b) {
                return Err(format!(
                    "iterations: an iteration of {n} images (iteration {}, images[{k}]) exceeds the job's batch size {b}",
                    first_step.saturating_add(k as u64)
                ));
            }
        }
        Ok(())
    }

    /// Records an event of kind `name` at `mono` as seen, the last so far.
    #[inline]
    fn record(&mut self, name: &'static str, mono: f64) {
        self.mono = Some(mono);
        if !self.seen.contains(&name) {
            self.seen.push(name);
        }
        self.last = Some(name);
    }

    fn check_end(&self, reason: EndReason, code: i32) -> Result<(), String> {
        let seen = |n: &str| self.seen.contains(&n);
        let name = match reason {
            EndReason::WindowDone => "window_done",
            EndReason::Completed => "completed",
            EndReason::Aborted => "aborted",
            EndReason::Oom => "oom",
            EndReason::Error => "error",
        };
        if matches!(reason, EndReason::WindowDone | EndReason::Completed) && !seen("window_end") {
            return Err(format!("end reason {name} without a window_end"));
        }
        if reason == EndReason::Aborted && seen("release") {
            return Err("end reason aborted after release".to_string());
        }
        if reason == EndReason::Oom && !self.error_kinds.contains(&ErrorKind::Oom) {
            return Err("end reason oom without an error of kind oom".to_string());
        }
        if reason == EndReason::Error && self.error_kinds.is_empty() {
            return Err("end reason error without an error event".to_string());
        }
        let expected = match reason {
            EndReason::WindowDone | EndReason::Completed => Some(0),
            EndReason::Aborted => Some(3),
            EndReason::Oom => Some(4),
            EndReason::Error => None,
        };
        if let Some(x) = expected.filter(|x| *x != code) {
            return Err(format!("end reason {name} must have exit_code {x}, got {code}"));
        }
        if reason == EndReason::Error && code == 0 {
            return Err("end reason error must have a non-zero exit_code".to_string());
        }
        Ok(())
    }
}

/// Version of the job protocol (`hello.protocol_version`, `JobFile::protocol_version`).
/// Version 2 added the common window (`window_met`, the `stop` line) and per-iteration
/// times (`iterations`); traces of version 1 stay readable.
pub const PROTOCOL_VERSION: u32 = 2;

/// The protocol version a job's log declares in its `hello` (1 when there is none).
pub fn log_protocol_version(events: &[Event]) -> u32 {
    events
        .iter()
        .find_map(|e| match e.body {
            EventBody::Hello { protocol_version, .. } => Some(protocol_version),
            _ => None,
        })
        .unwrap_or(1)
}

/// The protocol's release line, written by the runner to each job's stdin.
pub const RELEASE_LINE: &str = "release\n";
/// What the runner writes instead when a workload is abandoned before release.
pub const ABORT_LINE: &str = "abort\n";
/// Version 2: the end of the common window, written by the runner to every job's stdin at
/// once when every job has sent `window_met` (or when the run has failed).
pub const STOP_LINE: &str = "stop\n";

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"mono": 837.7, "wall": 1796141989.8, "job": 0, "event": "iterations", "first_step": 0, "base_mono": 836.49, "end_us": [262187, 509972], "images": [128, 128], "data_wait_us": [46, 26], "extra": {"a": [1]}}"#;

    #[test]
    fn an_iterations_line_parses_alike_on_both_paths() {
        let fast = iterations_line(LINE).expect("the direct parse of an iterations line");
        let general: Event = serde_json::from_str(LINE).unwrap();
        assert_eq!(fast, general);
        // The scan takes no key it does not know; without the extra key it reads it alike.
        assert!(iterations_scan(LINE).is_none());
        let plain = LINE.replace(r#", "extra": {"a": [1]}"#, "");
        assert_eq!(iterations_scan(&plain), Some(general.clone()));
        let compact: String = plain.chars().filter(|c| *c != ' ').collect();
        assert_eq!(iterations_scan(&compact), Some(general));
    }

    /// Lines the scan reads give what the serde parses give; lines it does not read are left
    /// to them (and their errors). Random damage to an iterations line, many times over.
    #[test]
    fn the_scan_of_iterations_lines_reads_what_serde_reads() {
        let plain = LINE.replace(r#", "extra": {"a": [1]}"#, "");
        let damage = [
            "",
            " ",
            ",",
            "]",
            "[",
            "}",
            "{",
            "\"",
            "\\",
            "0",
            "00",
            "-",
            "-1",
            ".",
            "1.5",
            "e5",
            "1e400",
            "18446744073709551616",
            "4294967296",
            "\"x\"",
            "\"mono\": 1,",
            "null",
            "\t",
            "é",
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let (mut scanned, mut left) = (0, 0);
        for _ in 0..20_000 {
            let mut line = plain.clone();
            for _ in 0..1 + x % 2 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mut at = (x >> 8) as usize % (line.len() + 1);
                while !line.is_char_boundary(at) {
                    at -= 1;
                }
                let cut = ((x >> 40) as usize % 3).min(line.len() - at);
                let cut = (0..=cut).rev().find(|c| line.is_char_boundary(at + c)).unwrap_or(0);
                line.replace_range(at..at + cut, damage[(x >> 20) as usize % damage.len()]);
            }
            match iterations_scan(&line) {
                Some(e) => {
                    scanned += 1;
                    let general: Event = serde_json::from_str(&line).unwrap_or_else(|err| panic!("{line}: {err}"));
                    assert_eq!(Some(&e), iterations_line(&line).as_ref(), "{line}");
                    assert_eq!(e, general, "{line}");
                }
                None => left += 1,
            }
        }
        assert!(scanned > 500 && left > 2_000, "{scanned} scanned, {left} left");
    }

    #[test]
    fn other_lines_take_the_general_parse_and_its_errors() {
        let hello = r#"{"mono": 1.0, "wall": 2.0, "job": 0, "event": "hello", "pid": 1, "protocol_version": 2, "simulated": false, "note": "iterations"}"#;
        assert!(iterations_line(hello).is_none());
        let bad = LINE.replace(r#""images": [128, 128]"#, r#""images": [128, -1]"#);
        assert!(iterations_line(&bad).is_none());
        let err = read_log(&bad, 0).unwrap_err();
        assert!(err.starts_with("line 1: not an event"), "{err}");
    }
}
