//! How much of a campaign's files its readers take. A campaign directory is untrusted: every
//! reader refuses a file beyond these caps with an error naming the line, having held at
//! most about a cap's worth of it (a line, a small file) in memory, and having read no more
//! of it than a cap allows.
//!
//! Each cap is a large multiple of the largest value in the shipped campaigns (measured over
//! the 742 run directories of `data/*/runs/*/`, 2026-12-03):
//!
//! | what                                 | shipped maximum                          | cap                      |
//! |--------------------------------------|------------------------------------------|--------------------------|
//! | `meta.json`                          | 43,571 B (`h200`, a 7-job run)           | [`MAX_META_BYTES`] 16 MiB |
//! | `job-N.json`                         | 1,087 B                                  | [`MAX_JOB_FILE_BYTES`] 1 MiB |
//! | a line of `job-N.events.jsonl`       | 1,265 B (a second of `iterations`)       | [`MAX_EVENT_LINE_BYTES`] 1 MiB |
//! | a line of `telemetry.csv.gz`, `processes.csv.gz` | 220 B (telemetry), 65 B (processes) | [`MAX_CSV_LINE_BYTES`] 64 KiB |
//! | a gzip trace inflated                | 1,144,787 B (`processes.csv.gz` of a 272 s 7-job run) | [`INFLATED_FLOOR_BYTES`] 64 MiB, beyond it |
//! | … its inflated / compressed bytes    | 9.94 (processes), 5.18 (telemetry)       | [`MAX_INFLATION_RATIO`] 100 |
//! | `SHA256SUMS`                         | 363,644 B (`h200`, 336 runs)             | [`MAX_MANIFEST_BYTES`] 64 MiB |
//!
//! The gzip cap is not a fixed size, which a long run at a high telemetry rate would reach
//! (the runner bounds neither), nor derived from the run's duration in `meta.json`, which is
//! as untrusted as the trace (and a simulated run's telemetry spans its simulated window,
//! seconds longer than the run's wall time): it bounds what the stream inflates to by what it
//! is made of, 100 times the compressed bytes read (beyond 64 MiB), so that reading a trace
//! costs at most a fixed multiple of its size on disk, where a gzip bomb inflates about 1,000
//! times. Rows the runner writes compress at most about 21 times even when degenerate (every
//! value empty or constant but `mono` and `wall`, at 10 ms apart, at gzip's best level).

use std::io::Read;

/// The most bytes of a run's `meta.json` (the embedded workload and foreign processes grow
/// it): 385 times the shipped maximum (43,571 B).
pub const MAX_META_BYTES: u64 = 16 << 20;

/// The most bytes of a job file `job-N.json`: 960 times the shipped maximum (1,087 B).
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;

/// The most bytes of one line of an event log, its `\n` aside: 820 times the shipped maximum
/// (1,265 B, a second of `iterations`; an `iterations` line holds about 22 bytes per
/// iteration, so 1 MiB is some 47,000 iterations in the second a chunk covers, where the
/// fastest shipped job ran one per 11.7 ms).
pub const MAX_EVENT_LINE_BYTES: usize = 1 << 20;

/// The most bytes of one line (the header or a row) of a telemetry file, its `\n` aside: 297
/// times the shipped maximum (220 B, a `telemetry.csv.gz` row).
pub const MAX_CSV_LINE_BYTES: usize = 64 << 10;

/// A gzip trace may always inflate to this many bytes: 58 times the shipped maximum
/// (1,144,787 B). Beyond it, see [`MAX_INFLATION_RATIO`].
pub const INFLATED_FLOOR_BYTES: u64 = 64 << 20;

/// Beyond [`INFLATED_FLOOR_BYTES`], a gzip trace may inflate to at most this many times the
/// compressed bytes read so far: 10 times the shipped maximum (9.94), 5 times the ratio of
/// degenerate rows at gzip's best level (about 21); a gzip bomb inflates about 1,000 times.
pub const MAX_INFLATION_RATIO: u64 = 100;

/// The most bytes of a campaign's `SHA256SUMS`: 185 times the shipped maximum (363,644 B,
/// 336 runs), some 60,000 runs of that size.
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// The most bytes a gzip stream may have inflated to once `compressed` bytes of it are read.
pub fn inflated_cap(compressed: u64) -> u64 {
    INFLATED_FLOOR_BYTES.max(compressed.saturating_mul(MAX_INFLATION_RATIO))
}

/// `n` bytes in words: `16 MiB`, `64 KiB`, or `1087 bytes`.
pub fn size_words(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// Refuses `bytes` (a whole file) longer than `cap`: the error names the 1-based line in
/// which the file passes the cap.
pub fn check_size(bytes: &[u8], cap: u64) -> Result<(), String> {
    if bytes.len() as u64 <= cap {
        return Ok(());
    }
    let line = memchr::memchr_iter(b'\n', &bytes[..cap as usize]).count() + 1;
    Err(format!("line {line}: the file goes on past {}, more than the runner writes", size_words(cap)))
}

/// Reads at most `cap` bytes of `r` as text, through [`Read::take`]: a reader that has more
/// is refused once `cap + 1` bytes are read ([`check_size`]'s error), never read further.
/// Errors: `cannot read: …`, the size, `not UTF-8 text: …`.
pub fn read_text(r: impl Read, cap: u64) -> Result<String, String> {
    read_text_into(r, cap, Vec::new())
}

/// [`read_text`] into `bytes` (empty; its capacity taken as the expected size).
fn read_text_into(r: impl Read, cap: u64, mut bytes: Vec<u8>) -> Result<String, String> {
    r.take(cap.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    check_size(&bytes, cap)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = memchr::memchr_iter(b'\n', &e.as_bytes()[..at]).count() + 1;
        format!("line {line}: not UTF-8 text")
    })
}

/// [`read_text`] of the file at `path`, its buffer made once to the file's size (at most the
/// cap and a byte): at most that is held.
pub fn read_file_text(path: &std::path::Path, cap: u64) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let size = f.metadata().map_or(0, |m| m.len());
    read_sized_text(f, size, cap)
}

/// [`read_text`] of a file of `size` bytes (its buffer made once to that size, at most the
/// cap and a byte: at most that is held).
pub fn read_sized_text(r: impl Read, size: u64, cap: u64) -> Result<String, String> {
    read_text_into(r, cap, Vec::with_capacity(size.min(cap.saturating_add(1)) as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_is_read_up_to_its_cap_and_one_byte_more() {
        assert_eq!(read_text(&b"ab\ncd"[..], 5).unwrap(), "ab\ncd");
        let e = read_text(&b"ab\ncd\nef"[..], 5).unwrap_err();
        assert_eq!(e, "line 2: the file goes on past 5 bytes, more than the runner writes");
        // An endless reader: the take stops it.
        let e = read_text(std::io::repeat(b'x'), 1 << 20).unwrap_err();
        assert!(e.starts_with("line 1: the file goes on past 1 MiB"), "{e}");
        assert_eq!(read_text(&b"a\n\xff"[..], 10).unwrap_err(), "line 2: not UTF-8 text");
    }

    #[test]
    fn the_inflation_cap_has_its_floor() {
        assert_eq!(inflated_cap(0), INFLATED_FLOOR_BYTES);
        assert_eq!(inflated_cap(1 << 30), 100 << 30);
        assert_eq!(inflated_cap(u64::MAX), u64::MAX);
    }
}
