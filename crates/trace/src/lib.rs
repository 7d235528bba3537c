//! The trace format shared by the runner (which writes it) and the analysis (which reads it).
//!
//! * [`jobfile`]: what the runner hands a training job (`job-N.json`).
//! * [`events`]: the JSON lines a job writes (`job-N.events.jsonl`), the protocol of
//!   `workloads/PROTOCOL.md`, whose schema is `workloads/protocol.schema.json`.
//! * [`precision`]: the 95% interval of a job's throughput (batch means) that ends a
//!   window with a precision target.
//! * [`protocol`]: the measurement protocol, as the plan, the job files and `meta.json`
//!   carry it.
//! * [`meta`]: a run's `meta.json`: status, mode applied and provenance.
//! * [`telemetry`]: the columns of `telemetry.csv.gz` and `processes.csv.gz`; [`rows`]: their
//!   reader, a row at a time.
//! * [`layout`]: file names inside a campaign and a run directory.
//! * [`ids`]: the grammar of workload and run ids.
//! * [`Mode`]: the collocation modes.
//! * [`manifest`]: the campaign's `SHA256SUMS`, written atomically and verified.
//! * [`readers`]: every reader of a campaign's files, bytes in: what the fuzz targets run.
//! * [`limits`]: how much of a campaign's (untrusted) files the readers take.
//! * [`civil`]: dates to days since 1970-01-01 and back.

#![warn(unreachable_pub)]

pub mod civil;
pub mod events;
pub mod ids;
pub mod jobfile;
pub mod layout;
pub mod limits;
pub mod manifest;
pub mod meta;
mod mode;
pub mod precision;
pub mod protocol;
pub mod readers;
pub mod rows;
pub mod telemetry;

pub use mode::{Mode, UnknownMode};

/// Version of the trace format written into `meta.json` and job files.
pub const FORMAT_VERSION: u32 = 1;

/// Seconds on the host's `CLOCK_MONOTONIC`, the clock that Python's `time.monotonic()`
/// reads too, so job events and telemetry samples share one time axis.
pub fn monotonic_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Seconds since the Unix epoch.
pub fn wall_seconds() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}
