//! Every reader of a campaign's files, as bytes in and a verdict out: the fuzz targets under
//! `fuzz/` run these functions and `tests/fuzz_corpus.rs` replays the committed corpus
//! through the same ones. Each calls the reader the analysis (or, for job files, the job)
//! uses, under the same caps ([`crate::limits`]); bytes that are not text are an error as
//! they are to `read_to_string` (in an event log, the first line that is not).

use crate::limits;
use crate::telemetry::{self, Table};
use crate::{events, jobfile, manifest, meta};

/// Jobs of the workload [`processes_csv_gz`] reads against (a `job` column of 8 or more is
/// refused).
pub const PROCESS_JOBS: usize = 8;

fn text(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))
}

/// `SHA256SUMS` ([`manifest::parse`]): the number of entries.
pub fn sha256sums(bytes: &[u8]) -> Result<usize, String> {
    limits::check_size(bytes, limits::MAX_MANIFEST_BYTES)?;
    manifest::parse(text(bytes)?).map(|m| m.len()).map_err(|(line, text, why)| format!("line {line}: {why}: {text:?}"))
}

/// A run's `meta.json` ([`meta::read`]).
pub fn meta_json(bytes: &[u8]) -> Result<meta::RunMeta, String> {
    limits::check_size(bytes, limits::MAX_META_BYTES)?;
    meta::read(text(bytes)?)
}

/// A job file `job-N.json` ([`jobfile::read`]).
pub fn job_json(bytes: &[u8]) -> Result<jobfile::JobFile, String> {
    limits::check_size(bytes, limits::MAX_JOB_FILE_BYTES)?;
    jobfile::read(text(bytes)?)
}

/// Job 0's `job-0.events.jsonl` ([`events::read_log_from`], no batch size known), and the
/// protocol version it speaks.
pub fn events_jsonl(bytes: &[u8]) -> Result<(Vec<events::Event>, u32), String> {
    let evs = events::read_log_from(bytes, 0, None, Some)?;
    let version = events::log_protocol_version(&evs);
    Ok((evs, version))
}

/// `telemetry.csv.gz` ([`telemetry::read_gz_csv`] with [`telemetry::GPU_NUMERIC`]).
pub fn telemetry_csv_gz(bytes: &[u8]) -> Result<Table, String> {
    telemetry::read_gz_csv(bytes, telemetry::GPU_NUMERIC, None)
}

/// `processes.csv.gz` ([`telemetry::read_gz_csv`] with [`telemetry::PROCESS_NUMERIC`], of a
/// workload of [`PROCESS_JOBS`] jobs).
pub fn processes_csv_gz(bytes: &[u8]) -> Result<Table, String> {
    telemetry::read_gz_csv(bytes, telemetry::PROCESS_NUMERIC, Some(PROCESS_JOBS))
}
