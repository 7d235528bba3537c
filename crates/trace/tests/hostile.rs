//! Hostile inputs to the readers of a campaign's files (`colloc_trace::limits`): each is
//! refused with an error naming the line, having read no more than its cap allows and held
//! little of it. Peak memory is measured by a counting allocator; the tests of this file
//! take one lock, so that each measures only its own reading.

use colloc_trace::events::{read_log_from, Event, EventBody};
use colloc_trace::limits::{self, INFLATED_FLOOR_BYTES, MAX_CSV_LINE_BYTES, MAX_EVENT_LINE_BYTES};
use colloc_trace::rows::{self, CheckOnly};
use colloc_trace::telemetry::{GPU_NUMERIC, PROCESS_NUMERIC};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

#[path = "common/counting.rs"]
mod counting;
use counting::{measured, ONE_AT_A_TIME};

/// The most a reader of a hostile file may hold: a few of its 256 KiB chunks and, for an
/// event log, a line's 1 MiB.
const HELD: usize = 8 << 20;

/// An endless stream: `head`, then `row` again and again; `made` counts the bytes it gave.
struct Endless {
    head: Vec<u8>,
    row: Vec<u8>,
    at: usize,
    made: Arc<AtomicU64>,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let (src, at) = if self.at < self.head.len() {
                (&self.head, self.at)
            } else {
                (&self.row, (self.at - self.head.len()) % self.row.len())
            };
            let k = (src.len() - at).min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&src[at..at + k]);
            n += k;
            self.at += k;
        }
        self.made.fetch_add(n as u64, Relaxed);
        Ok(n)
    }
}

/// A reader counting the bytes read from it.
struct CountRead<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for CountRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Relaxed);
        Ok(n)
    }
}

/// An endless gzip stream of `head` then `row` repeated, compressed as it is read; and the
/// count of the bytes it inflates to that were made.
fn endless_gz(head: &str, row: &str) -> (impl Read, Arc<AtomicU64>) {
    let made = Arc::new(AtomicU64::new(0));
    let src = Endless { head: head.as_bytes().to_vec(), row: row.as_bytes().to_vec(), at: 0, made: made.clone() };
    (flate2::read::GzEncoder::new(src, flate2::Compression::default()), made)
}

fn gz(text: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

/// A gzip bomb of telemetry rows: a valid header, then the same valid row (whose `mono` does
/// not go backwards) without end. It is refused once it inflates past the cap (64 MiB: the
/// bomb inflates about 1,000 times, so 100 times its compressed bytes is less), and no
/// further: what was made of it is the cap and the compressor's and reader's read-ahead.
#[test]
fn an_endless_gzip_bomb_of_rows_is_refused_at_its_cap() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let header = colloc_trace::telemetry::GPU_COLUMNS.join(",") + "\n";
    let row = "100.5,1700000000.5,-1,300.0,1000.0,99,50,1000,2000,1980,2619,40,0,,,,\n";
    let (bomb, made) = endless_gz(&header, row);
    let compressed = Arc::new(AtomicU64::new(0));
    let bomb = CountRead { inner: bomb, read: compressed.clone() };
    let (r, held, took) = measured(|| rows::read_gz_rows(bomb, GPU_NUMERIC, None, &mut CheckOnly));
    let e = r.expect_err("an endless stream is accepted");
    let rows_in_cap = (INFLATED_FLOOR_BYTES as usize - header.len()) / row.len();
    let at = format!("line {}: ", rows_in_cap + 2);
    assert!(e.starts_with(&at), "{e}");
    assert!(e.contains("the gzip stream inflates to more than 67108864 bytes"), "{e}");
    assert!(e.contains("not a trace the runner writes"), "{e}");
    // The error's line is where reading stopped; what the compressor made beyond the cap is
    // what the decoder read ahead (32 KiB of compressed bytes).
    let (made, compressed) = (made.load(Relaxed), compressed.load(Relaxed));
    assert!(compressed < 1 << 20, "{compressed} compressed bytes read");
    assert!(made > INFLATED_FLOOR_BYTES && made < 2 * INFLATED_FLOOR_BYTES, "{made} bytes made");
    assert!(held < HELD, "{held} bytes held");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// A compressed stream that inflates to one byte more than the floor of the cap, of rows
/// that are valid one by one, beside one of exactly the floor: the first is refused, the
/// second read.
#[test]
fn a_stream_one_byte_over_the_cap_is_refused_and_one_at_the_cap_is_read() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let header = "mono,note\n";
    // Rows of 64 KiB less a byte, with their `\n`: a line of 65,535 bytes is within the cap.
    let line = |n: usize| format!("1,{}\n", "x".repeat(n - 3));
    let full = line(MAX_CSV_LINE_BYTES);
    let mut text = header.to_string();
    while text.len() + full.len() < INFLATED_FLOOR_BYTES as usize {
        text.push_str(&full);
    }
    text.push_str(&line(INFLATED_FLOOR_BYTES as usize - text.len()));
    assert_eq!(text.len() as u64, INFLATED_FLOOR_BYTES);
    let at_cap = gz(text.as_bytes());
    assert!((at_cap.len() as u64) * limits::MAX_INFLATION_RATIO < INFLATED_FLOOR_BYTES, "not a bomb");
    let (r, held, _) = measured(|| rows::read_gz_rows(&at_cap[..], &["mono"], None, &mut CheckOnly));
    let lines = text.lines().count();
    assert_eq!(r, Ok(lines - 1));
    assert!(held < HELD, "{held} bytes held");
    text.push('\n');
    let over = gz(text.as_bytes());
    let (r, held, _) = measured(|| rows::read_gz_rows(&over[..], &["mono"], None, &mut CheckOnly));
    let e = r.unwrap_err();
    assert!(e.starts_with(&format!("line {}: the gzip stream inflates to more than 67108864 bytes", lines + 1)), "{e}");
    assert!(held < HELD, "{held} bytes held");
}

/// 10 MB of zeros, compressed: one line with no end, refused as too long, at line 1 (the rest
/// of it passed over without being held).
#[test]
fn ten_megabytes_of_zeros_are_a_line_too_long() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let zeros = gz(&vec![0u8; 10_000_000]);
    let (r, held, _) = measured(|| rows::read_gz_rows(&zeros[..], PROCESS_NUMERIC, Some(7), &mut CheckOnly));
    assert_eq!(r.unwrap_err(), "line 1: a line longer than 64 KiB, more than the runner writes");
    assert!(held < HELD, "{held} bytes held");
    // Endless: the line is passed over until the stream has inflated past its cap.
    let (bomb, made) = endless_gz("", "\0");
    let (r, held, _) = measured(|| rows::read_gz_rows(bomb, PROCESS_NUMERIC, Some(7), &mut CheckOnly));
    let e = r.unwrap_err();
    assert!(e.starts_with("line 1: the gzip stream inflates to more than 67108864 bytes"), "{e}");
    assert!(made.load(Relaxed) < 2 * INFLATED_FLOOR_BYTES);
    assert!(held < HELD, "{held} bytes held");
}

/// A row one byte longer than the cap is refused, naming its line; one at the cap is read.
#[test]
fn a_csv_line_longer_than_its_cap_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let row = |len: usize| format!("1,{}", "x".repeat(len - 2));
    let ok = format!("mono,note\n1,a\n{}\n2,b\n", row(MAX_CSV_LINE_BYTES));
    assert_eq!(rows::read_gz_rows(&gz(ok.as_bytes())[..], &["mono"], None, &mut CheckOnly), Ok(3));
    let bad = format!("mono,note\n1,a\n{}\n2,b\n", row(MAX_CSV_LINE_BYTES + 1));
    assert_eq!(
        rows::read_gz_rows(&gz(bad.as_bytes())[..], &["mono"], None, &mut CheckOnly).unwrap_err(),
        "line 3: a line longer than 64 KiB, more than the runner writes"
    );
    // A header without end is refused as well, not held.
    let endless_header = gz(&vec![b'a'; 5 << 20]);
    let (r, held, _) = measured(|| rows::read_gz_rows(&endless_header[..], &["mono"], None, &mut CheckOnly));
    assert_eq!(r.unwrap_err(), "line 1: a line longer than 64 KiB, more than the runner writes");
    assert!(held < HELD, "{held} bytes held");
}

/// The first lines of a protocol-2 log of job 0, to `window_start`.
fn log_head() -> String {
    [
        r#"{"mono":1.0,"wall":1.0,"job":0,"event":"hello","pid":1,"protocol_version":2,"simulated":true}"#,
        r#"{"mono":2.0,"wall":2.0,"job":0,"event":"ready","setup_seconds":1.0,"warmup_seconds":1.0,"warmup_steps":1}"#,
        r#"{"mono":3.0,"wall":3.0,"job":0,"event":"release"}"#,
        r#"{"mono":3.0,"wall":3.0,"job":0,"event":"window_start","step":0}"#,
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

fn iterations(first_step: u64, base_mono: f64, end_us: &[u64], images: &[u64]) -> String {
    let e = Event {
        mono: base_mono + end_us.last().copied().unwrap_or(0) as f64 * 1e-6,
        wall: 4.0,
        job: 0,
        body: EventBody::Iterations {
            first_step,
            base_mono,
            end_us: end_us.to_vec(),
            images: images.to_vec(),
            data_wait_us: vec![0; end_us.len()],
        },
    };
    serde_json::to_string(&e).unwrap() + "\n"
}

fn read(log: &str, batch: Option<u64>) -> Result<Vec<Event>, String> {
    read_log_from(log.as_bytes(), 0, batch, Some)
}

#[test]
fn an_iteration_of_more_images_than_the_batch_size_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let log = log_head()
        + &iterations(0, 3.0, &[1000, 2000], &[128, 128])
        + &iterations(2, 3.002, &[1000, 2000, 3000], &[128, 140, 128]);
    assert_eq!(
        read(&log, Some(128)).unwrap_err(),
        "line 6: iterations: an iteration of 140 images (iteration 3, images[1]) exceeds the job's batch size 128"
    );
    // Without the job's batch size (no job file), the log is read.
    assert_eq!(read(&log, None).unwrap().len(), 6);
    assert_eq!(read(&log, Some(140)).unwrap().len(), 6);
}

#[test]
fn iteration_times_that_do_not_increase_are_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let first = iterations(0, 3.0, &[1000, 2000], &[128, 128]);
    let equal = log_head() + &first + &iterations(2, 3.002, &[1000, 2000, 2000], &[128; 3]);
    assert_eq!(
        read(&equal, Some(128)).unwrap_err(),
        "line 6: iterations: end_us does not increase at index 2 (2000 after 2000): iteration 4 does not end after iteration 3"
    );
    let back = log_head() + &iterations(0, 3.0, &[1000, 900], &[128; 2]);
    assert_eq!(
        read(&back, None).unwrap_err(),
        "line 5: iterations: end_us decreases at index 1 (900 after 1000): iteration 1 does not end after iteration 0"
    );
    // The next chunk's first iteration ends when the previous chunk's last did.
    let tie = log_head() + &first + &iterations(2, 3.002, &[0, 1000], &[128; 2]);
    assert_eq!(
        read(&tie, None).unwrap_err(),
        "line 6: iterations: end_us[0] is 0: iteration 2 does not end after iteration 1, the previous chunk's last"
    );
    let fine = log_head() + &first + &iterations(2, 3.002, &[1, 1000], &[128; 2]);
    assert_eq!(read(&fine, Some(128)).unwrap().len(), 6);
}

/// An event line longer than 1 MiB is refused as soon as it is that long: an endless one
/// too, with little held.
#[test]
fn an_event_line_longer_than_its_cap_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let long = format!("{}{}\n", log_head(), " ".repeat(MAX_EVENT_LINE_BYTES + 1));
    assert_eq!(read(&long, None).unwrap_err(), "line 5: a line longer than 1 MiB, more than the runner writes");
    // A line of 1 MiB exactly (blank, passed over) is read.
    let at_cap = format!("{}{}\n", log_head(), " ".repeat(MAX_EVENT_LINE_BYTES));
    assert_eq!(read(&at_cap, None).unwrap().len(), 4);
    let made = Arc::new(AtomicU64::new(0));
    let endless = Endless { head: log_head().into_bytes(), row: b"[1, ".to_vec(), at: 0, made: made.clone() };
    let (r, held, took) = measured(|| read_log_from(endless, 0, None, Some));
    assert_eq!(r.unwrap_err(), "line 5: a line longer than 1 MiB, more than the runner writes");
    assert!(made.load(Relaxed) < 4 << 20, "{} bytes read", made.load(Relaxed));
    assert!(held < HELD, "{held} bytes held");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let bad = [log_head().as_bytes(), b"\xff\n"].concat();
    assert_eq!(read_log_from(&bad[..], 0, None, Some).unwrap_err(), "line 5: not UTF-8 text");
}

/// `meta.json`, job files and `SHA256SUMS` are read through a `take` of their cap: an endless
/// one stops there, refused at the line that passes it.
#[test]
fn small_files_are_read_within_their_caps() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let made = Arc::new(AtomicU64::new(0));
    let endless = Endless { head: b"{\n".to_vec(), row: b" \n".to_vec(), at: 0, made: made.clone() };
    let (r, held, _) = measured(|| limits::read_text(endless, limits::MAX_META_BYTES));
    let e = r.unwrap_err();
    assert!(e.starts_with("line 8388609: the file goes on past 16 MiB"), "{e}");
    assert!(made.load(Relaxed) <= limits::MAX_META_BYTES + (64 << 10));
    assert!(held < 2 * limits::MAX_META_BYTES as usize + (1 << 20), "{held} bytes held");
    let job = vec![b' '; limits::MAX_JOB_FILE_BYTES as usize + 1];
    let e = colloc_trace::readers::job_json(&job).unwrap_err();
    assert_eq!(e, "line 1: the file goes on past 1 MiB, more than the runner writes");
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("SHA256SUMS"), vec![b'\n'; limits::MAX_MANIFEST_BYTES as usize + 1]).unwrap();
    let e = colloc_trace::manifest::read(d.path()).unwrap_err().to_string();
    assert!(e.ends_with("SHA256SUMS: line 67108865: the file goes on past 64 MiB, more than the runner writes"), "{e}");
}
