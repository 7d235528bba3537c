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
        /// End of each iteration in whole microseconds after `base_mono` (non-decreasing).
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
