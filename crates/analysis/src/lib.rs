//! Analyses a campaign's verified traces into per-job, per-workload and per-claim results.
//!
//! [`analyse`] first checks the campaign's files against its `SHA256SUMS` (none missing or
//! extra), then reads every run directory, hashing each file as it reads it, and measures
//! (no result is returned, only an error naming the files, if any file's sum differs):
//!
//! * per job, in the window in which every job of the workload trained: throughput
//!   (images/s) and the 95% confidence interval of it by batch means ([`ThroughputCi`]),
//!   epoch time (the dataset's training images over the throughput, and the measured epochs
//!   when the job finished any), data-wait share, host CPU and memory;
//! * per run: aggregate throughput, its ratio to each job's model alone on the whole GPU
//!   (on the run's own host, told by its GPU's UUID, when that host has such runs; else the
//!   baseline pooled over the hosts, and the run is marked `cross_host_baseline`), GPU activity (SM activity and occupancy, tensor activity, DRAM bandwidth, memory,
//!   power) and energy per image;
//! * per workload: median, min and max over repetitions; per configuration: MPS against
//!   naive and against MIG (or `mps-limited` standing in for it).
//!
//! Failed, skipped and infeasible runs stay in [`Results`] with their status and reason.
//! The results are plain serde structs ([`Results`] and what it holds); polars stays inside this crate.
//! Given the campaign's plan, each run is read as its planned workload (form and roles
//! included) and the results say which planned runs are not made yet.
//!
//! Modules: `analyse` (read, analyse and verify in one pass: the entry point), `load` (run directories into
//! typed records), `per_run` (one run's window, throughputs, utilisation, timeline),
//! `gpu_use` and `host_use` (telemetry and process samples summed over the window as they are
//! read), `exact` (order-independent sums), `reference` (tests only: the polars queries the
//! sums replaced, which they must match bit for bit), `aggregate` (polars queries
//! from the runs on: baselines and their hosts, the runs alone each job is divided by,
//! statistics per workload and per job, the interference pivot, modes compared), `stats`
//! (median, min, max per group, with polars), `provenance`, `model` (the results, and each summarised metric declared once),
//! `claims` (the named queries and the claims' verdicts), `testkit` (fixture campaigns from
//! the real plan and speed model; feature `testkit`).

#![warn(unreachable_pub)]

mod aggregate;
mod analyse;
mod claims;
mod exact;
mod gpu_use;
mod host_use;
mod intervals;
mod load;
mod model;
mod parallel;
mod per_run;
mod protocols;
mod provenance;
#[cfg(test)]
mod reference;
mod stats;
#[cfg(feature = "testkit")]
pub mod testkit;
mod timeline;

pub use crate::{
    analyse::analyse,
    claims::{
        claim_workloads, evaluate, validate_claims, CheckOutcome, ClaimOutcome, SourceOutcome, Verdict, DATA_CLOSENESS,
    },
    model::{
        brief_reason, Baseline, BaselineHost, BaselineRun, BaselineStats, GpuTarget, HostBaseline, InterferenceCell,
        JobRun, JobStats, MixClass, ModeComparison, PendingWorkload, PlannedJobInfo, ProtocolValidation, Provenance,
        RatioIntervals, Results, RunResult, Stats, ThroughputCi, Timeline, TimelinePoint, Utilisation, Window,
        WorkloadForm, WorkloadResult, WorkloadStats, PROTOCOL_GOAL,
    },
};
