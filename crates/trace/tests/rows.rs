//! The row-at-a-time reader of telemetry files (`colloc_trace::rows`, behind
//! `telemetry::read_gz_csv`) against the reader it replaced, which inflated and checked the
//! whole text first: on random files, damaged at random, both give the same table or the
//! same error, word for word (a damaged gzip stream first, then text that is not UTF-8,
//! then the first bad row), and the committed fuzz corpus reads alike through both.

use colloc_trace::rows;
use colloc_trace::telemetry::{self, Table, Values, GPU_NUMERIC, PROCESS_NUMERIC};
use std::io::Write;

fn old_read_gz_csv(gz: &[u8], numeric: &[&str], jobs: Option<usize>) -> Result<Table, String> {
    use std::io::Read;
    // The gzip trailer's ISIZE (the text's length mod 2^32) sizes the buffer once; an
    // untrusted file may lie, so it is capped by deflate's greatest ratio (1032:1) and 1 GiB.
    let isize =
        gz.len().checked_sub(4).map_or(0, |at| u32::from_le_bytes([gz[at], gz[at + 1], gz[at + 2], gz[at + 3]]));
    let mut bytes = Vec::with_capacity((isize as usize).min(gz.len().saturating_mul(1032)).min(1 << 30));
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("not a readable gzip file (truncated or damaged): {e}"))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        format!("line {line}: not UTF-8 text")
    })?;
    old_read_csv(text, numeric, jobs)
}

/// Powers of ten exactly representable as `f64`, up to the 15 digits [`plain_decimal`] takes.
const POW10: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/// A number as the runner writes them (`-12.345`: an optional sign, at most 15 digits, an
/// optional point), parsed quickly; `None` for anything else, which `str::parse` then reads.
/// The digits as an integer (below 2^53) and the power of ten are both exact, so their
/// quotient is the correctly rounded value, the same as `str::parse` gives.
fn plain_decimal(field: &str) -> Option<f64> {
    let (negative, digits) = match field.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    let (mut m, mut n, mut frac, mut point) = (0u64, 0usize, 0usize, false);
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                n += 1;
                if n > 15 {
                    return None;
                }
                m = m * 10 + u64::from(c - b'0');
                frac += usize::from(point);
            }
            b'.' if !point => point = true,
            _ => return None,
        }
    }
    if n == 0 {
        return None;
    }
    let v = m as f64 / POW10[frac];
    Some(if negative { -v } else { v })
}

/// The old reader of the text once decompressed.
fn old_read_csv(text: &str, numeric: &[&str], jobs: Option<usize>) -> Result<Table, String> {
    // Split on the byte: a `char` pattern compares each match through `memcmp`. The text is
    // UTF-8 and `\n` and `,` are ASCII, so every piece is UTF-8 too.
    let mut lines = text
        .as_bytes()
        .split(|b| *b == b'\n')
        .map(|l| std::str::from_utf8(l).unwrap_or_default())
        .map(|l| l.strip_suffix('\r').unwrap_or(l));
    let header = lines.next().unwrap_or("");
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if !names.contains(&"mono") {
        return Err(format!("line 1: no `mono` column in the header {header:?}"));
    }
    if let Some(dup) = names.iter().enumerate().find_map(|(i, n)| names[..i].contains(n).then_some(n)) {
        return Err(format!("line 1: the column {dup:?} appears twice in the header"));
    }
    let is_num: Vec<bool> = names.iter().map(|n| numeric.contains(n)).collect();
    // Per column, once: the least value and whether it must be whole and below `jobs`.
    let least: Vec<f64> = names.iter().map(|n| if *n == "instance" { -1.0 } else { 0.0 }).collect();
    let whole: Vec<bool> = names.iter().map(|n| *n == "instance" || *n == "job").collect();
    let job_limit: Vec<Option<usize>> = names.iter().map(|n| if *n == "job" { jobs } else { None }).collect();
    let rows = text.bytes().filter(|b| *b == b'\n').count() + 1;
    let mut nums: Vec<Vec<Option<f64>>> =
        is_num.iter().map(|n| if *n { Vec::with_capacity(rows) } else { Vec::new() }).collect();
    let mut texts: Vec<Vec<Option<String>>> = vec![Vec::new(); names.len()];
    let mono_at = names.iter().position(|n| *n == "mono").unwrap_or(0);
    let mut fields: Vec<&str> = Vec::with_capacity(names.len());
    let mut last_mono = f64::NEG_INFINITY;
    let mut row = 0usize;
    let mut pending_blank = None;
    for (k, line) in lines.enumerate() {
        let line_no = k + 2;
        if line.is_empty() {
            pending_blank.get_or_insert(line_no);
            continue;
        }
        if let Some(blank) = pending_blank {
            return Err(format!("line {blank}: an empty line between rows"));
        }
        row += 1;
        let at = |what: String| format!("line {line_no} (row {row}): {what}");
        fields.clear();
        let mut start = 0;
        for (i, b) in line.bytes().enumerate() {
            if b == b',' {
                fields.push(&line[start..i]);
                start = i + 1;
            }
        }
        fields.push(&line[start..]);
        if fields.len() != names.len() {
            return Err(at(format!("{} fields, the header has {}", fields.len(), names.len())));
        }
        for (c, field) in fields.iter().enumerate() {
            let field = field.trim();
            if !is_num[c] {
                texts[c].push((!field.is_empty()).then(|| field.to_string()));
                continue;
            }
            if field.is_empty() {
                if c == mono_at {
                    return Err(at("`mono` is empty".to_string()));
                }
                nums[c].push(None);
                continue;
            }
            let name = names[c];
            let v: f64 = match plain_decimal(field) {
                Some(v) => v,
                None => field.parse().map_err(|_| at(format!("`{name}` is {field:?}, not a number")))?,
            };
            if !v.is_finite() {
                return Err(at(format!("`{name}` is {field:?}, not a finite number")));
            }
            if v < least[c] {
                return Err(at(format!("`{name}` is {v}, below {}", least[c])));
            }
            // Every f64 from 2^52 up is whole; below, the cast truncates exactly.
            if whole[c] && v.abs() < 4.5e15 && (v as i64) as f64 != v {
                return Err(at(format!("`{name}` is {v}, not a whole number")));
            }
            if let Some(n) = job_limit[c] {
                if v >= n as f64 {
                    return Err(at(format!("`job` is {v}, but the workload has {n} jobs")));
                }
            }
            if c == mono_at {
                if v < last_mono {
                    return Err(at(format!("`mono` goes backwards ({v} after {last_mono})")));
                }
                last_mono = v;
            }
            nums[c].push(Some(v));
        }
    }
    let mut columns: Vec<(String, Values)> = names
        .iter()
        .enumerate()
        .map(|(c, n)| {
            let v = if is_num[c] {
                Values::Numbers(std::mem::take(&mut nums[c]))
            } else {
                Values::Text(std::mem::take(&mut texts[c]))
            };
            (n.to_string(), v)
        })
        .collect();
    for n in numeric {
        if !names.contains(n) {
            columns.push((n.to_string(), Values::Numbers(vec![None; row])));
        }
    }
    Ok(Table { columns, rows: row })
}

/// xorshift64: the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A process file as the runner writes it, of `rows` rows and `jobs` jobs.
fn processes(r: &mut Rng, rows: usize, jobs: usize) -> String {
    let mut t = "mono,wall,job,pids,cpu_pct,rss_bytes,gpu_mem_bytes\n".to_string();
    for k in 0..rows {
        let mono = 100.0 + (k / jobs) as f64 * 0.1;
        t += &format!(
            "{mono:.3},{:.3},{},{},{}.{},{},\n",
            mono + 1e9,
            k % jobs,
            1 + r.below(5),
            r.below(400),
            r.below(10),
            r.below(1 << 30)
        );
    }
    t
}

/// A telemetry file as the runner writes it, whole-GPU and instance rows.
fn gpu(r: &mut Rng, rows: usize) -> String {
    let mut t = telemetry::GPU_COLUMNS.join(",") + "\n";
    for k in 0..rows {
        let instance = if r.below(4) == 0 { r.below(3) as i64 } else { -1 };
        t += &format!(
            "{:.3},{:.3},{instance},{}.{:03},{},{},,{},150754820096,1980,2619,45,0x{:x},{}.{},,{},0.5\n",
            100.0 + k as f64 * 0.1,
            1.7e9 + k as f64 * 0.1,
            r.below(700),
            r.below(1000),
            r.below(1 << 40),
            r.below(101),
            r.below(1 << 33),
            r.below(16),
            r.below(100),
            r.below(10),
            r.below(100),
        );
    }
    t
}

/// Bytes that damage a file here and there.
const DAMAGE: &[&[u8]] = &[
    b",",
    b"\n",
    b"\n\n",
    b"\r",
    b"-",
    b"-1",
    b".",
    b"x",
    b"1e5",
    b"inf",
    b"NaN",
    b" ",
    b"",
    b"\xff",
    b"\xc3",
    b"\xc3\xa9",
    b"99999999999999999999",
    b"0.5",
    b"mono",
    b"job",
    b"instance",
    b"\t",
    b"\xc2\xa0",
    b"7",
];

fn damaged(r: &mut Rng, text: &str) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..1 + r.below(3) {
        let at = r.below(b.len() + 1);
        let cut = r.below(4).min(b.len() - at);
        let with = DAMAGE[r.below(DAMAGE.len())];
        b.splice(at..at + cut, with.iter().copied());
    }
    b
}

fn same(what: &str, new: Result<Table, String>, old: Result<Table, String>) {
    assert_eq!(format!("{new:?}"), format!("{old:?}"), "{what}");
}

#[test]
fn random_and_damaged_files_read_as_the_whole_text_reader_read_them() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut refused, mut read) = (0, 0);
    for case in 0..3000 {
        let (text, numeric, jobs) = if case % 2 == 0 {
            let (jobs, rows) = (1 + r.below(7), r.below(30));
            (processes(&mut r, rows, jobs), PROCESS_NUMERIC, Some(jobs))
        } else {
            let rows = r.below(30);
            (gpu(&mut r, rows), GPU_NUMERIC, None)
        };
        let bytes = if case % 10 == 0 { text.into_bytes() } else { damaged(&mut r, &text) };
        let mut gz = gzip(&bytes);
        match case % 7 {
            // Truncated, or a byte of the stream changed.
            0 => gz.truncate(r.below(gz.len())),
            1 => {
                let at = r.below(gz.len());
                gz[at] ^= 1 << r.below(8);
            }
            // A second member, or bytes after the stream.
            2 => gz.extend(gzip(b"\n1,2,3\n")),
            3 => gz.extend_from_slice(b"trailing"),
            _ => {}
        }
        let new = telemetry::read_gz_csv(&gz, numeric, jobs);
        if new.is_ok() {
            read += 1;
        } else {
            refused += 1;
        }
        // A reader that needs no value checks the same.
        let checked = rows::read_gz_rows(&gz[..], numeric, jobs, &mut rows::CheckOnly);
        assert_eq!(checked.as_ref().err(), new.as_ref().err(), "case {case}: checked only");
        assert_eq!(checked.ok(), new.as_ref().ok().map(|t| t.rows), "case {case}: checked only");
        same(&format!("case {case}: {:?}", String::from_utf8_lossy(&bytes)), new, old_read_gz_csv(&gz, numeric, jobs));
        if let Ok(text) = std::str::from_utf8(&bytes) {
            same(
                &format!("case {case}, text"),
                telemetry::read_csv(text, numeric, jobs),
                old_read_csv(text, numeric, jobs),
            );
        }
    }
    assert!(read > 300 && refused > 300, "{read} read, {refused} refused: the cases do not cover both");
}

#[test]
fn large_files_read_as_the_whole_text_reader_read_them() {
    // Longer than the reader's chunks, with a line across each chunk's end.
    let mut r = Rng(7);
    let text = processes(&mut r, 40_000, 7);
    assert!(text.len() > 1 << 20);
    let gz = gzip(text.as_bytes());
    let new = telemetry::read_gz_csv(&gz, PROCESS_NUMERIC, Some(7)).unwrap();
    assert_eq!(new.rows, 40_000);
    same("large", Ok(new), old_read_gz_csv(&gz, PROCESS_NUMERIC, Some(7)));
    let mut bad = text.clone().into_bytes();
    let at = bad.len() - 100;
    bad[at] = b'x';
    let gz = gzip(&bad);
    same(
        "large, damaged near its end",
        telemetry::read_gz_csv(&gz, PROCESS_NUMERIC, Some(7)),
        old_read_gz_csv(&gz, PROCESS_NUMERIC, Some(7)),
    );
}

#[test]
fn characters_across_the_reader_s_chunks_and_bad_bytes_far_in_read_alike() {
    // A two-byte character in every row's text column: some straddle a chunk's end.
    let mut r = Rng(11);
    let text = gpu(&mut r, 30_000).replace(",0x", ",\u{e9}0x");
    assert!(text.len() > 1 << 21);
    let gz = gzip(text.as_bytes());
    let new = telemetry::read_gz_csv(&gz, GPU_NUMERIC, None).unwrap();
    same("characters", Ok(new), old_read_gz_csv(&gz, GPU_NUMERIC, None));
    for at in [text.len() / 2, text.len() - 3, (1 << 18) - 1, 1 << 18] {
        let mut bad = text.clone().into_bytes();
        bad[at] = 0xff;
        let gz = gzip(&bad);
        same(
            &format!("a bad byte at {at}"),
            telemetry::read_gz_csv(&gz, GPU_NUMERIC, None),
            old_read_gz_csv(&gz, GPU_NUMERIC, None),
        );
        bad.truncate(at + 1);
        let gz = gzip(&bad);
        same(
            &format!("a bad last byte at {at}"),
            telemetry::read_gz_csv(&gz, GPU_NUMERIC, None),
            old_read_gz_csv(&gz, GPU_NUMERIC, None),
        );
    }
}

#[test]
fn the_fuzz_corpus_reads_as_the_whole_text_reader_read_it() {
    for (target, numeric, jobs) in [
        ("telemetry_csv_gz", GPU_NUMERIC, None),
        ("processes_csv_gz", PROCESS_NUMERIC, Some(colloc_trace::readers::PROCESS_JOBS)),
    ] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            let gz = std::fs::read(&path).unwrap();
            same(
                &path.display().to_string(),
                telemetry::read_gz_csv(&gz, numeric, jobs),
                old_read_gz_csv(&gz, numeric, jobs),
            );
        }
    }
}
