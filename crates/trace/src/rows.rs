//! The rows of a telemetry file (`telemetry.csv.gz`, `processes.csv.gz`), inflated, split
//! and checked one at a time and handed to a [`RowSink`]: the file is never held whole.
//! [`crate::telemetry::read_gz_csv`] collects the rows into a table; the analysis sums them
//! as they come.
//!
//! The format, as the runner writes it: a header line, then rows of as many fields (no
//! quoting); an empty field means "not available". What a damaged file is, and the order in
//! which its damage is reported, is that of a reader of the whole text: a gzip stream that
//! does not inflate to its end first, then bytes that are not UTF-8 (the first such line),
//! then the first bad row. A file is untrusted ([`crate::limits`]): a stream that inflates
//! beyond [`limits::inflated_cap`] of what it is made of is refused as a damaged stream, at
//! once, and a line longer than [`limits::MAX_CSV_LINE_BYTES`] as a line that is not text,
//! without holding it.

use crate::limits;
use std::io::Read;

/// What receives a telemetry file's rows.
pub trait RowSink {
    /// The header's column names, once, before any row.
    fn columns(&mut self, names: &[&str]);
    /// Whether the sink needs the values of this numeric column: the values of the others
    /// are checked but not computed, and are `None` in [`Row::numbers`].
    fn needs(&self, _column: &str) -> bool {
        true
    }
    /// One checked row.
    fn row(&mut self, row: &Row<'_>);
}

/// One checked row of a telemetry file.
pub struct Row<'a> {
    /// `numbers[c]`: the value of column `c` when it is one of the numeric columns asked
    /// for, the sink needs it and it is not empty, else `None`.
    pub numbers: &'a [Option<f64>],
    line: &'a str,
    spans: &'a [(usize, usize)],
}

impl Row<'_> {
    /// Column `c`'s field as written.
    pub fn field(&self, c: usize) -> &str {
        self.spans.get(c).map_or("", |&(a, b)| &self.line[a..b])
    }
}

/// A sink that keeps nothing: the file is only checked.
pub struct CheckOnly;

impl RowSink for CheckOnly {
    fn columns(&mut self, _: &[&str]) {}
    fn needs(&self, _: &str) -> bool {
        false
    }
    fn row(&mut self, _: &Row<'_>) {}
}

/// Reads a gzip CSV as the runner writes it into `sink`, the `numeric` columns as numbers
/// (empty field: `None`), and returns the rows read; `mono` must be a column.
///
/// A damaged file is an error naming the line (and data row): a truncated gzip stream, a
/// row with another number of fields than the header, a number that does not parse or is
/// not finite, a negative one (`instance` may be -1, the whole GPU), an empty or decreasing
/// `mono`, an `instance` or `job` that is not a whole number, a `job` not below `jobs`. The
/// sink may have seen rows before the error; what it holds then means nothing.
pub fn read_gz_rows(
    gz: impl Read,
    numeric: &[&str],
    jobs: Option<usize>,
    sink: &mut impl RowSink,
) -> Result<usize, String> {
    let inflated =
        Inflated { gz: flate2::read::GzDecoder::new(Counted { inner: gz, read: 0 }), inflated: 0, over: None };
    read_rows(inflated, numeric, jobs, sink)
        .map_err(|e| e.unwrap_or_else(|io| format!("not a readable gzip file (truncated or damaged): {io}")))
}

/// A reader that counts the bytes read from it.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// A gzip stream inflated, refused with [`TooInflated`] once what it inflated to passes
/// [`limits::inflated_cap`] of the compressed bytes read: its bytes up to the cap are read,
/// and no more is inflated.
struct Inflated<R> {
    gz: flate2::read::GzDecoder<Counted<R>>,
    inflated: u64,
    over: Option<TooInflated>,
}

impl<R: Read> Read for Inflated<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(too) = &self.over {
            return Err(std::io::Error::other(too.clone()));
        }
        // At most one byte past the cap is ever inflated, and it is not handed on.
        let cap = limits::inflated_cap(self.gz.get_ref().read);
        let room = cap.saturating_sub(self.inflated).saturating_add(1).min(buf.len() as u64) as usize;
        let n = self.gz.read(&mut buf[..room])?;
        let compressed = self.gz.get_ref().read;
        let cap = limits::inflated_cap(compressed);
        if self.inflated + n as u64 > cap {
            let too = TooInflated { cap, compressed };
            let within = (cap - self.inflated) as usize;
            self.inflated = cap;
            self.over = Some(too.clone());
            return if within > 0 { Ok(within) } else { Err(std::io::Error::other(too)) };
        }
        self.inflated += n as u64;
        Ok(n)
    }
}

/// The error of a stream inflated past its cap: read as the stream's damage.
#[derive(Debug, Clone)]
struct TooInflated {
    cap: u64,
    compressed: u64,
}

impl std::fmt::Display for TooInflated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the gzip stream inflates to more than {} bytes, from {} compressed bytes read (a trace may inflate to \
             {} and beyond it to {} times its compressed bytes): not a trace the runner writes",
            self.cap,
            self.compressed,
            limits::size_words(limits::INFLATED_FLOOR_BYTES),
            limits::MAX_INFLATION_RATIO
        )
    }
}

impl std::error::Error for TooInflated {}

/// [`read_gz_rows`] of the text once decompressed.
pub fn read_text_rows(
    text: &str,
    numeric: &[&str],
    jobs: Option<usize>,
    sink: &mut impl RowSink,
) -> Result<usize, String> {
    read_rows(text.as_bytes(), numeric, jobs, sink).map_err(|e| e.unwrap_or_else(|io| io.to_string()))
}

/// The reader of both: `Err(Err(io))` when the text stream itself fails.
fn read_rows(
    text: impl Read,
    numeric: &[&str],
    jobs: Option<usize>,
    sink: &mut impl RowSink,
) -> Result<usize, Result<String, std::io::Error>> {
    let mut lines = Lines::new(text, limits::MAX_CSV_LINE_BYTES);
    let mut line_no = 0usize;
    // The first damage found in the text; the rest of the stream is still inflated (a
    // damaged stream comes first) and checked for UTF-8 and length (which come next).
    let mut not_utf8: Option<String> = None;
    let mut damage: Option<String> = None;
    let mut rows: Option<Rows> = None;
    loop {
        let next = match lines.next_line() {
            Ok(Some(next)) => next,
            Ok(None) => break,
            Err(io) => return Err(stream_error(io, lines.line_no())),
        };
        line_no += 1;
        if not_utf8.is_some() {
            continue;
        }
        let (line, utf8) = match next {
            Line::Text(line, utf8) => (line, utf8),
            Line::TooLong => {
                not_utf8 = Some(format!("line {line_no}: {}", too_long(limits::MAX_CSV_LINE_BYTES)));
                continue;
            }
        };
        // SAFETY: `next_line` checked the line is UTF-8 when it says so.
        let Some(line) = utf8.then(|| unsafe { std::str::from_utf8_unchecked(line) }) else {
            not_utf8 = Some(format!("line {line_no}: not UTF-8 text"));
            continue;
        };
        if damage.is_some() {
            continue;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let checked = match &mut rows {
            None => Rows::new(line, numeric, jobs).map(|mut r| {
                sink.columns(&r.names.iter().map(String::as_str).collect::<Vec<_>>());
                r.value_only_needed(|name| sink.needs(name));
                rows = Some(r);
            }),
            Some(r) => r.feed(line, line_no, sink),
        };
        damage = checked.err();
    }
    if rows.is_none() && damage.is_none() {
        // No line at all: an empty header.
        damage = Rows::new("", numeric, jobs).err();
    }
    match (not_utf8.or(damage), rows) {
        (Some(d), _) => Err(Ok(d)),
        (None, Some(r)) => Ok(r.row),
        (None, None) => Ok(0),
    }
}

/// The error of the text stream when line `line_no` was being read: the stream inflated too
/// far is its damage, named at that line; any other is the stream's own.
fn stream_error(io: std::io::Error, line_no: usize) -> Result<String, std::io::Error> {
    match io.get_ref().and_then(|e| e.downcast_ref::<TooInflated>()) {
        Some(too) => Ok(format!("line {line_no}: {too}")),
        None => Err(io),
    }
}

/// What a line longer than `max` bytes is.
pub(crate) fn too_long(max: usize) -> String {
    format!("a line longer than {}, more than the runner writes", limits::size_words(max as u64))
}

/// A line of [`Lines`].
pub(crate) enum Line<'a> {
    /// The line, and whether it is UTF-8.
    Text(&'a [u8], bool),
    /// A line longer than the reader's most: told as soon as it is, its bytes dropped (the
    /// rest of it is passed over, unread, by the next call).
    TooLong,
}

/// The lines of a stream, split on `\n` (the last one need not end with it), read in
/// large chunks and checked for UTF-8 a chunk at a time; a line longer than `max_line` bytes
/// (its `\n` aside) is never held whole: the buffer stays within about
/// `2 × (max_line + CHUNK)` bytes.
pub(crate) struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// `buf[..utf8_to]` is known to be UTF-8.
    utf8_to: usize,
    eof: bool,
    max_line: usize,
    /// Inside a line told [`Line::TooLong`]: its bytes up to its `\n` are dropped.
    skipping: bool,
    /// Lines told so far.
    told: usize,
}

const CHUNK: usize = 1 << 18;

impl<R: Read> Lines<R> {
    pub(crate) fn new(inner: R, max_line: usize) -> Self {
        Lines {
            inner,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            utf8_to: 0,
            eof: false,
            max_line,
            skipping: false,
            told: 0,
        }
    }

    /// The 1-based line the stream is being read in (for an error of the stream).
    pub(crate) fn line_no(&self) -> usize {
        self.told + usize::from(!self.skipping)
    }

    /// The next line.
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<Line<'_>>> {
        while self.skipping {
            match memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                Some(n) => {
                    self.start += n + 1;
                    self.skipping = false;
                }
                None if self.eof => {
                    self.start = self.end;
                    self.skipping = false;
                }
                None => {
                    self.start = self.end;
                    self.refill()?;
                }
            }
        }
        loop {
            let rest = &self.buf[self.start..self.end];
            let line_end = match memchr::memchr(b'\n', rest) {
                Some(n) => Some((self.start + n, self.start + n + 1)),
                None if self.eof && !rest.is_empty() => Some((self.end, self.end)),
                None if self.eof => return Ok(None),
                None if rest.len() > self.max_line => {
                    // Too long already: told now, the rest passed over by the next call.
                    self.start = self.end;
                    self.skipping = true;
                    self.told += 1;
                    return Ok(Some(Line::TooLong));
                }
                None => None,
            };
            if let Some((end, next)) = line_end {
                self.told += 1;
                if end - self.start > self.max_line {
                    self.start = next;
                    return Ok(Some(Line::TooLong));
                }
                let line = self.start..end;
                if end > self.utf8_to {
                    self.check_utf8();
                }
                self.start = next;
                return Ok(Some(Line::Text(&self.buf[line.clone()], line.end <= self.utf8_to)));
            }
            self.refill()?;
        }
    }

    /// Checks the whole lines from `start` on at once (a `\n` is never inside a character):
    /// `utf8_to` moves to their end, or to the first byte that is not UTF-8.
    fn check_utf8(&mut self) {
        let from = self.start.max(self.utf8_to);
        let to = if self.eof {
            self.end
        } else {
            memchr::memrchr(b'\n', &self.buf[from..self.end]).map_or(self.end, |n| from + n + 1)
        };
        self.utf8_to = match std::str::from_utf8(&self.buf[from..to]) {
            Ok(_) => to,
            Err(e) => from + e.valid_up_to(),
        };
    }

    /// Keeps the partial line, at the front, and reads more after it.
    fn refill(&mut self) -> std::io::Result<()> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.utf8_to = self.utf8_to.saturating_sub(self.start);
        self.start = 0;
        if self.buf.len() - self.end < CHUNK / 2 {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let n = loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r?,
            }
        };
        self.end += n;
        self.eof = n == 0;
        Ok(())
    }
}

/// The header's columns and the rules of each, and where the rows have got to.
struct Rows {
    names: Vec<String>,
    is_num: Vec<bool>,
    /// Per numeric column: whether its value is computed (else only its form is checked,
    /// when it is a plain decimal).
    valued: Vec<bool>,
    /// Per column: the least value, whether it must be whole, what it must stay below.
    least: Vec<f64>,
    whole: Vec<bool>,
    job_limit: Vec<Option<usize>>,
    mono_at: usize,
    last_mono: f64,
    /// Data rows so far.
    row: usize,
    /// The first empty line since the last row.
    pending_blank: Option<usize>,
    /// The row being read: its numbers and where each field is in its line.
    numbers: Vec<Option<f64>>,
    spans: Vec<(usize, usize)>,
    /// Per column: how its fields are read, from the rules above.
    kinds: Vec<Kind>,
}

/// How a column's fields are read.
#[derive(Clone, Copy)]
enum Kind {
    /// Not a numeric column: the field is text.
    Text,
    /// Numeric, its value computed, and its one rule "not below zero".
    Plain,
    /// Numeric, not valued, its one rule "not below zero": only the form is checked.
    Form,
    /// Numeric with more rules (`mono`, `instance`, `job`).
    Ruled,
}

impl Rows {
    fn new(header: &str, numeric: &[&str], jobs: Option<usize>) -> Result<Rows, String> {
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        if !names.contains(&"mono") {
            return Err(format!("line 1: no `mono` column in the header {header:?}"));
        }
        if let Some(dup) = names.iter().enumerate().find_map(|(i, n)| names[..i].contains(n).then_some(n)) {
            return Err(format!("line 1: the column {dup:?} appears twice in the header"));
        }
        let mut rows = Rows {
            is_num: names.iter().map(|n| numeric.contains(n)).collect(),
            valued: vec![true; names.len()],
            least: names.iter().map(|n| if *n == "instance" { -1.0 } else { 0.0 }).collect(),
            whole: names.iter().map(|n| *n == "instance" || *n == "job").collect(),
            job_limit: names.iter().map(|n| if *n == "job" { jobs } else { None }).collect(),
            mono_at: names.iter().position(|n| *n == "mono").unwrap_or(0),
            last_mono: f64::NEG_INFINITY,
            row: 0,
            pending_blank: None,
            numbers: vec![None; names.len()],
            spans: vec![(0, 0); names.len()],
            kinds: Vec::new(),
            names: names.iter().map(|n| n.to_string()).collect(),
        };
        rows.kinds = rows.kinds();
        Ok(rows)
    }

    /// Computes the values of only the columns `needs` names, and of those whose rules need
    /// the value (`mono`, `instance`, `job`).
    fn value_only_needed(&mut self, needs: impl Fn(&str) -> bool) {
        for (c, name) in self.names.iter().enumerate() {
            self.valued[c] = needs(name) || self.ruled(c);
        }
        self.kinds = self.kinds();
    }

    /// Whether column `c` has rules beyond "not below zero" (`mono`, `instance`, `job`).
    fn ruled(&self, c: usize) -> bool {
        c == self.mono_at || self.whole[c] || self.job_limit[c].is_some() || self.least[c] != 0.0
    }

    /// How each column's fields are read, from its rules and whether it is valued.
    fn kinds(&self) -> Vec<Kind> {
        (0..self.names.len())
            .map(|c| match (self.is_num[c], self.ruled(c), self.valued[c]) {
                (false, _, _) => Kind::Text,
                (true, true, _) => Kind::Ruled,
                (true, false, true) => Kind::Plain,
                (true, false, false) => Kind::Form,
            })
            .collect()
    }

    /// Checks line `line_no` (not the header) and hands it to the sink.
    fn feed(&mut self, line: &str, line_no: usize, sink: &mut impl RowSink) -> Result<(), String> {
        if line.is_empty() {
            self.pending_blank.get_or_insert(line_no);
            return Ok(());
        }
        if let Some(blank) = self.pending_blank {
            return Err(format!("line {blank}: an empty line between rows"));
        }
        self.row += 1;
        let row = self.row;
        let at = |what: String| format!("line {line_no} (row {row}): {what}");
        if let Err(what) = self.read_fields(line) {
            // A row with another number of fields is refused as that, whatever else is wrong in it.
            let (fields, columns) = (memchr::memchr_iter(b',', line.as_bytes()).count() + 1, self.names.len());
            return Err(at(match what {
                _ if fields != columns => format!("{fields} fields, the header has {columns}"),
                Some(what) => what,
                None => "the fields do not split".to_string(),
            }));
        }
        sink.row(&Row { numbers: &self.numbers, line, spans: &self.spans });
        Ok(())
    }

    /// Splits the line into its fields and checks each, in one pass: `Err(None)` when it
    /// does not have the header's number of fields, `Err(Some(what))` for the first bad one.
    fn read_fields(&mut self, line: &str) -> Result<(), Option<String>> {
        let bytes = line.as_bytes();
        let columns = self.kinds.len();
        let mut from = 0;
        for c in 0..columns {
            // The runner's plain decimals are parsed (or their form checked) as the field is
            // found; a column whose only rule is "not below zero" needs no look at the value.
            // Any other number takes the slow way, which finds the comma and holds the field to
            // every rule.
            let quick = match self.kinds[c] {
                Kind::Plain => plain_decimal_at::<true>(bytes, from).map(|(v, to)| (v, to, true)),
                Kind::Form => plain_form_at(bytes, from).map(|to| (None, to, true)),
                Kind::Ruled => plain_decimal_at::<false>(bytes, from).map(|(v, to)| (v, to, false)),
                // Text fields are short: a plain loop finds their end sooner than `memchr`.
                Kind::Text => {
                    Some((None, bytes[from..].iter().position(|b| *b == b',').map_or(bytes.len(), |n| from + n), true))
                }
            };
            let to = match quick {
                Some((v, to, done)) => {
                    if (c + 1 == columns) != (to == bytes.len()) {
                        return Err(None);
                    }
                    self.numbers[c] = if done { v } else { self.checked(c, Some(v), &line[from..to])? };
                    to
                }
                None => self.slow_field(c, line, from)?,
            };
            self.spans[c] = (from, to);
            from = to + 1;
        }
        Ok(())
    }

    /// Numeric field `c` of `line` from `from` when the quick scan did not take it: where it
    /// ends, its value held to its column's rules.
    #[cold]
    #[inline(never)]
    fn slow_field(&mut self, c: usize, line: &str, from: usize) -> Result<usize, Option<String>> {
        let bytes = line.as_bytes();
        let to = memchr::memchr(b',', &bytes[from..]).map_or(bytes.len(), |n| from + n);
        if (c + 1 == self.kinds.len()) != (to == bytes.len()) {
            return Err(None);
        }
        self.numbers[c] = self.checked(c, None, &line[from..to])?;
        Ok(to)
    }

    /// Numeric field `field` of column `c` held to all its column's rules, its value (`quick`
    /// when the quick scan read it, else parsed) kept when the column is valued.
    // Inlined: the ruled columns (`mono` among them) take it on every row.
    #[inline(always)]
    fn checked(&mut self, c: usize, quick: Option<Option<f64>>, field: &str) -> Result<Option<f64>, Option<String>> {
        let v = match quick {
            Some(v) => v,
            None => self.parse(c, field)?,
        };
        match v {
            Some(v) => {
                self.check(c, v)?;
                Ok(self.valued[c].then_some(v))
            }
            None if c == self.mono_at => Err(Some("`mono` is empty".to_string())),
            None => Ok(None),
        }
    }

    /// A numeric field that is not a plain decimal: trimmed, empty (`None`) or read by
    /// `str::parse`.
    fn parse(&self, c: usize, field: &str) -> Result<Option<f64>, Option<String>> {
        let field = trim(field);
        if field.is_empty() {
            return Ok(None);
        }
        let v: f64 = match plain_decimal(field) {
            Some(v) => v,
            None => field.parse().map_err(|_| Some(format!("`{}` is {field:?}, not a number", self.names[c])))?,
        };
        if !v.is_finite() {
            return Err(Some(format!("`{}` is {field:?}, not a finite number", self.names[c])));
        }
        Ok(Some(v))
    }

    /// The rules of column `c` for its (finite) value `v`.
    #[inline(always)]
    fn check(&mut self, c: usize, v: f64) -> Result<(), Option<String>> {
        let name = &self.names[c];
        if v < self.least[c] {
            return Err(Some(format!("`{name}` is {v}, below {}", self.least[c])));
        }
        // Every f64 from 2^52 up is whole; below, the cast truncates exactly.
        if self.whole[c] && v.abs() < 4.5e15 && (v as i64) as f64 != v {
            return Err(Some(format!("`{name}` is {v}, not a whole number")));
        }
        if let Some(n) = self.job_limit[c] {
            if v >= n as f64 {
                return Err(Some(format!("`job` is {v}, but the workload has {n} jobs")));
            }
        }
        if c == self.mono_at {
            if v < self.last_mono {
                return Err(Some(format!("`mono` goes backwards ({v} after {})", self.last_mono)));
            }
            self.last_mono = v;
        }
        Ok(())
    }
}

/// `str::trim`, quick when the field starts and ends with a printable ASCII byte (as the
/// runner writes every field).
pub(crate) fn trim(field: &str) -> &str {
    let plain = |b: u8| b > b' ' && b < 0x7f;
    match field.as_bytes() {
        [] => field,
        [first, .., last] if plain(*first) && plain(*last) => field,
        [only] if plain(*only) => field,
        _ => field.trim(),
    }
}

/// The field of `bytes` from `from` when it is a plain decimal ([`plain_decimal`]) or empty,
/// read up to the comma or the end of the line that ends it: its value (`None` when empty)
/// and where it ends. `None` when it is anything else.
#[inline(always)]
fn plain_decimal_at<const NOT_BELOW_ZERO: bool>(bytes: &[u8], from: usize) -> Option<(Option<f64>, usize)> {
    let rest = &bytes[from..];
    let negative = rest.first() == Some(&b'-');
    let mut m = 0u64;
    // At most 19 digits are kept (below), so the integer of any field that is kept does not wrap.
    let (i, whole, frac) =
        plain_digits(rest, usize::from(negative), |d| m = m.wrapping_mul(10).wrapping_add(u64::from(d)))?;
    let n = whole + frac;
    if n == 0 {
        // Empty, or a sign or point alone.
        return (i == 0).then_some((None, from));
    }
    if n > 19 || m > EXACT || NOT_BELOW_ZERO && negative && m != 0 {
        return None;
    }
    // A whole number needs no division (by 1, which is exact).
    // `m` is at most 2^53, so it converts as a signed integer (one instruction) exactly.
    let m = m as i64 as f64;
    let v = if frac == 0 { m } else { m / POW10[frac] };
    Some((Some(if negative { -v } else { v }), from + i))
}

/// The field of `bytes` from `from` when it is empty or a plain decimal ([`plain_decimal`])
/// not below zero, up to the comma or the end of the line that ends it: where it ends. Its
/// value is not computed. `None` when it is anything else.
fn plain_form_at(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = &bytes[from..];
    let negative = rest.first() == Some(&b'-');
    // The digits OR-ed together: not zero when any digit is.
    let mut any = 0u8;
    let (i, whole, frac) = plain_digits(rest, usize::from(negative), |d| any |= d)?;
    let digits = whole + frac;
    // At most 19 digits, so the value is finite; any such form is one `str::parse` takes.
    let plain = digits > 0 && digits <= 19 && !(negative && any != 0);
    (plain || i == 0).then_some(from + i)
}

/// The digits of `rest` from `start`, then a point and the fraction's digits, each digit's
/// value handed to `each`: where they end and the counts of whole and fraction digits; `None`
/// unless a comma or the end of `rest` follows them. One tight loop per run of digits.
#[inline(always)]
fn plain_digits(rest: &[u8], start: usize, mut each: impl FnMut(u8)) -> Option<(usize, usize, usize)> {
    let mut run = |mut i: usize| {
        while let Some(d) = rest.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d < 10) {
            each(d);
            i += 1;
        }
        i
    };
    let mut i = run(start);
    let whole = i - start;
    let mut frac = 0;
    if rest.get(i) == Some(&b'.') {
        let point = i + 1;
        i = run(point);
        frac = i - point;
    }
    (i == rest.len() || rest[i] == b',').then_some((i, whole, frac))
}

/// Powers of ten exactly representable as `f64` (every one up to 1e22 is), up to the 19
/// digits [`plain_decimal`] reads.
const POW10: [f64; 20] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19];

/// The greatest digits-as-an-integer [`plain_decimal`] takes: 2^53, below which every integer
/// is exact as `f64`.
const EXACT: u64 = 1 << 53;

/// A number as the runner writes them (`-12.345`, `1796166853.238752`: an optional sign, at
/// most 19 digits that as an integer are at most 2^53, an optional point), parsed quickly;
/// `None` for anything else, which `str::parse` then reads. The digits as an integer and the
/// power of ten are both exact, so their quotient is the correctly rounded value, the same as
/// `str::parse` gives.
fn plain_decimal(field: &str) -> Option<f64> {
    // A field holds no comma, so the scan of a line's field reads it whole.
    plain_decimal_at::<false>(field.as_bytes(), 0).and_then(|(v, _)| v)
}

#[cfg(test)]
mod tests {
    use super::{plain_decimal, plain_decimal_at, plain_form_at, read_text_rows, trim, Row, RowSink};

    /// Keeps the values of the columns it needs, row by row.
    struct Needs(&'static [&'static str], Vec<Vec<Option<f64>>>);

    impl RowSink for Needs {
        fn columns(&mut self, _: &[&str]) {}
        fn needs(&self, column: &str) -> bool {
            self.0.contains(&column)
        }
        fn row(&mut self, row: &Row<'_>) {
            self.1.push(row.numbers.to_vec());
        }
    }

    /// Each kind of column (valued, only checked, with more rules, text) refuses a value
    /// below its least in the same words, whether the sink needs it or not, and keeps -0.
    #[test]
    fn a_value_below_its_least_is_refused_in_every_kind_of_column() {
        let numeric = ["mono", "instance", "power_w", "pids"];
        let header = "mono,instance,power_w,pids,note";
        for needs in [&["power_w", "pids"][..], &["power_w"], &[]] {
            let read = |row: &str| {
                let mut sink = Needs(needs, Vec::new());
                read_text_rows(&format!("{header}\n{row}\n"), &numeric, None, &mut sink).map(|_| sink.1)
            };
            let power = needs.contains(&"power_w");
            let pids = needs.contains(&"pids");
            let kept = read("1.5,-1,-0.000,-0,-7").unwrap();
            assert_eq!(kept, vec![vec![Some(1.5), Some(-1.0), power.then_some(-0.0), pids.then_some(-0.0), None]]);
            assert!(kept[0][2].is_none_or(|v| v.is_sign_negative()), "{needs:?}");
            assert_eq!(read("1,0,-2.5,3,x").unwrap_err(), "line 2 (row 1): `power_w` is -2.5, below 0", "{needs:?}");
            assert_eq!(read("1,0,2.5,-3,x").unwrap_err(), "line 2 (row 1): `pids` is -3, below 0", "{needs:?}");
            assert_eq!(read("1,-2,2.5,3,x").unwrap_err(), "line 2 (row 1): `instance` is -2, below -1", "{needs:?}");
            assert_eq!(read("-1,0,2.5,3,x").unwrap_err(), "line 2 (row 1): `mono` is -1, below 0", "{needs:?}");
            assert_eq!(read("1,0,-1e3,3,x").unwrap_err(), "line 2 (row 1): `power_w` is -1000, below 0", "{needs:?}");
        }
    }

    #[test]
    fn plain_decimals_parse_as_str_parse_does() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut fields: Vec<String> = [
            "0",
            "-0",
            "1.",
            ".5",
            "-.5",
            "007",
            "1167.358922",
            "150754820096",
            "999999999999999",
            "0.00000000000001",
            "1796166853.238752",
            "9007199254740992",
            "0.000000000000000009",
            "0000000000000000001",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 19 + 1) as usize;
            let point = (x >> 8) as usize % (digits + 1);
            // Below 2^53 whatever the count of digits (leading zeros fill the rest).
            let m = x.rotate_left(29) % 10u64.pow(digits as u32) % (1 << 53);
            let mut s = format!("{m:0digits$}");
            if point < digits {
                s.insert(point, '.');
            }
            if x & 1 == 1 {
                s.insert(0, '-');
            }
            fields.push(s);
        }
        for f in &fields {
            let want: f64 = f.parse().unwrap();
            let got = plain_decimal(f).unwrap_or_else(|| panic!("{f:?} not taken"));
            assert_eq!(got.to_bits(), want.to_bits(), "{f:?}");
        }
        for other in [
            "",
            "-",
            ".",
            "1.2.3",
            "1e5",
            "inf",
            "NaN",
            "+1",
            "1 ",
            "--1",
            "9007199254740993",
            "-900719925474099.3",
            "12345678901234567890",
            "0.0000000000000000001",
        ] {
            assert!(plain_decimal(other).is_none(), "{other:?} taken");
        }
    }

    #[test]
    fn the_quick_trim_trims_as_str_trim_does() {
        for f in ["", " ", "1", " 1", "1 ", "\t1.5\r", "a b", "\u{a0}7", "7\u{85}", "\u{1}", "x\u{7f}", "é", " é "] {
            assert_eq!(trim(f), f.trim(), "{f:?}");
        }
    }

    #[test]
    fn no_byte_but_a_digit_a_point_or_a_leading_sign_is_taken_in_a_plain_decimal() {
        // The bytes either side of the digits (`/`, `:`) among them: the quick scans take a
        // digit as a byte less `0` below ten, and a slip in that bound would read them.
        for b in (0..=255u8).filter(|b| !b.is_ascii_digit() && *b != b'.' && *b != b',') {
            let mut fields = vec![vec![b'1', b, b'2'], vec![b], vec![b'1', b'.', b], vec![b'1', b], vec![b'-', b]];
            if b != b'-' {
                fields.push(vec![b, b'1']);
            }
            for field in fields {
                assert_eq!(plain_decimal_at::<false>(&field, 0), None, "{field:?}");
                assert_eq!(plain_decimal_at::<true>(&field, 0), None, "{field:?}");
                assert_eq!(plain_form_at(&field, 0), None, "{field:?}");
            }
        }
        for (field, value) in [("12.5,", Some(12.5)), ("-0.25,x", Some(-0.25)), ("7", Some(7.0)), (",1", None)] {
            let to = field.find(',').unwrap_or(field.len());
            assert_eq!(plain_decimal_at::<false>(field.as_bytes(), 0), Some((value, to)), "{field:?}");
            assert_eq!(plain_form_at(field.as_bytes(), 0), (!field.starts_with('-')).then_some(to), "{field:?}");
        }
    }
}
