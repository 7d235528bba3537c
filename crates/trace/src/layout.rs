//! File names inside a campaign directory and a run directory.
//!
//! ```text
//! data/<campaign>/
//!   SHA256SUMS                 sha256sum format, relative paths, sorted
//!   runs/<run-id>/             one per workload × repetition (× attempt)
//!     meta.json                status, mode applied, provenance (see meta.rs)
//!     job-<i>.json             the job file handed to job i
//!     job-<i>.events.jsonl     the events job i wrote (workloads/PROTOCOL.md)
//!     job-<i>.stderr.txt       the last 64 KiB of job i's stderr
//!     telemetry.csv.gz         GPU samples (telemetry.rs)
//!     processes.csv.gz         host CPU and GPU memory per job (telemetry.rs)
//!   quarantine/<run-id>.<n>/   incomplete directories found on resume, kept
//! ```
//! Run ids follow [`crate::ids`].

pub const MANIFEST: &str = "SHA256SUMS";
pub const RUNS_DIR: &str = "runs";
pub const QUARANTINE_DIR: &str = "quarantine";
pub const META: &str = "meta.json";
pub const TELEMETRY: &str = "telemetry.csv.gz";
pub const PROCESSES: &str = "processes.csv.gz";
/// Most bytes of a job's stderr kept in its trace.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;

pub fn job_file(index: usize) -> String {
    format!("job-{index}.json")
}
pub fn job_events(index: usize) -> String {
    format!("job-{index}.events.jsonl")
}
pub fn job_stderr(index: usize) -> String {
    format!("job-{index}.stderr.txt")
}
