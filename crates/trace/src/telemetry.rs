//! Columns of the run's telemetry files (gzip-compressed CSV, header line first).
//! An empty field means "not available" (see `meta.json` → `telemetry.unavailable`),
//! never zero.

/// `telemetry.csv.gz`: one row per sample of the GPU (or of a MIG instance, `instance` ≥ 0).
pub const GPU_COLUMNS: &[&str] = &[
    "mono",                // s, CLOCK_MONOTONIC
    "wall",                // s, Unix time
    "instance",            // -1 for the whole GPU, else the MIG GPU-instance id
    "power_w",             // W
    "energy_j",            // J, total energy counter since driver load
    "gpu_util_pct",        // %
    "mem_util_pct",        // %
    "mem_used_bytes",      // B
    "mem_total_bytes",     // B
    "sm_clock_mhz",        // MHz
    "mem_clock_mhz",       // MHz
    "temperature_c",       // °C
    "throttle_reasons",    // NVML clocks-event-reasons bitmask
    "sm_activity_pct",     // % (GPM)
    "sm_occupancy_pct",    // % (GPM)
    "tensor_activity_pct", // % (GPM)
    "dram_bw_util_pct",    // % (GPM)
];

/// `processes.csv.gz`: one row per job and sample.
pub const PROCESS_COLUMNS: &[&str] = &[
    "mono",          // s
    "wall",          // s
    "job",           // index in the workload
    "pids",          // processes in the job's tree (loader workers included)
    "cpu_pct",       // % of one core, summed over the tree, since the previous sample
    "rss_bytes",     // B, summed over the tree
    "gpu_mem_bytes", // B, NVML per-process used memory, summed over the tree
];

/// Columns of `telemetry.csv.gz` read as numbers (the others stay text).
pub const GPU_NUMERIC: &[&str] = &[
    "mono",
    "wall",
    "instance",
    "power_w",
    "energy_j",
    "gpu_util_pct",
    "mem_util_pct",
    "mem_used_bytes",
    "mem_total_bytes",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "temperature_c",
    "sm_activity_pct",
    "sm_occupancy_pct",
    "tensor_activity_pct",
    "dram_bw_util_pct",
];

/// Columns of `processes.csv.gz` read as numbers.
pub const PROCESS_NUMERIC: &[&str] = &["mono", "wall", "job", "pids", "cpu_pct", "rss_bytes", "gpu_mem_bytes"];

/// One column of a telemetry file as read: numbers (an empty field is `None`) or text.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Numbers(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

/// A telemetry file as read: its columns in the header's order, then the listed numeric
/// columns the file lacks (all `None`), each with `rows` values.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Values)>,
    pub rows: usize,
}

/// Reads a gzip CSV as the runner writes it: a header line, then rows of as many fields
/// (no quoting), the `numeric` columns as numbers (empty field: `None`), any other column
/// as text. A listed column absent from the file is added as `None`s; `mono` must be
/// present.
///
/// A damaged file is an error naming the line (and data row): a truncated gzip stream, a
/// row with another number of fields than the header, a number that does not parse or is
/// not finite, a negative one (`instance` may be -1, the whole GPU), an empty or decreasing
/// `mono`, an `instance` or `job` that is not a whole number, a `job` not below `jobs`.
pub fn read_gz_csv(gz: &[u8], numeric: &[&str], jobs: Option<usize>) -> Result<Table, String> {
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
    read_csv(text, numeric, jobs)
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

/// [`read_gz_csv`] of the text once decompressed.
pub fn read_csv(text: &str, numeric: &[&str], jobs: Option<usize>) -> Result<Table, String> {
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

#[cfg(test)]
mod tests {
    use super::plain_decimal;

    #[test]
    fn plain_decimals_parse_as_str_parse_does() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut fields: Vec<String> =
            ["0", "-0", "1.", ".5", "-.5", "007", "1167.358922", "150754820096", "999999999999999", "0.00000000000001"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 15 + 1) as usize;
            let point = (x >> 8) as usize % (digits + 1);
            let mut s = format!("{:0width$}", (x >> 16) % 10u64.pow(digits as u32), width = digits);
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
        for other in
            ["", "-", ".", "1.2.3", "1e5", "inf", "NaN", "+1", "1 ", "1234567890123456", "0.000000000000001", "--1"]
        {
            assert!(plain_decimal(other).is_none(), "{other:?} taken");
        }
    }
}
