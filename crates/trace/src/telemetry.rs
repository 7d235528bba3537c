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
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("not a readable gzip file (truncated or damaged): {e}"))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        format!("line {line}: not UTF-8 text")
    })?;
    read_csv(text, numeric, jobs)
}

/// [`read_gz_csv`] of the text once decompressed.
pub fn read_csv(text: &str, numeric: &[&str], jobs: Option<usize>) -> Result<Table, String> {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let header = lines.next().unwrap_or("");
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if !names.contains(&"mono") {
        return Err(format!("line 1: no `mono` column in the header {header:?}"));
    }
    if let Some(dup) = names.iter().enumerate().find_map(|(i, n)| names[..i].contains(n).then_some(n)) {
        return Err(format!("line 1: the column {dup:?} appears twice in the header"));
    }
    let is_num: Vec<bool> = names.iter().map(|n| numeric.contains(n)).collect();
    let mut nums: Vec<Vec<Option<f64>>> = vec![Vec::new(); names.len()];
    let mut texts: Vec<Vec<Option<String>>> = vec![Vec::new(); names.len()];
    let mono_at = names.iter().position(|n| *n == "mono").unwrap_or(0);
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
        let fields: Vec<&str> = line.split(',').collect();
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
            let v: f64 = field.parse().map_err(|_| at(format!("`{name}` is {field:?}, not a number")))?;
            if !v.is_finite() {
                return Err(at(format!("`{name}` is {field:?}, not a finite number")));
            }
            let least = if name == "instance" { -1.0 } else { 0.0 };
            if v < least {
                return Err(at(format!("`{name}` is {v}, below {least}")));
            }
            if (name == "instance" || name == "job") && v.fract() != 0.0 {
                return Err(at(format!("`{name}` is {v}, not a whole number")));
            }
            if let (Some(n), "job") = (jobs, name) {
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
