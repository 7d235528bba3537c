//! Columns of the run's telemetry files (gzip-compressed CSV, header line first).
//! An empty field means "not available" (see `meta.json` → `telemetry.unavailable`),
//! never zero. [`crate::rows`] reads them a row at a time.

use crate::rows::{self, Row, RowSink};

/// `telemetry.csv.gz`: one row per sample of the GPU (or of a MIG instance, `instance` ≥ 0).
pub const GPU_COLUMNS: &[&str] = &[
    "mono",                // s, CLOCK_MONOTONIC
    "wall",                // s, Unix time
    "instance",            // -1 for the whole GPU, else the MIG GPU-instance id
    "power_w",             // W
    "energy_j",            // J, total energy counter since driver load (read every 0.5 s)
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

/// Reads a gzip CSV as the runner writes it ([`rows::read_gz_rows`]: its format and what
/// it refuses) into a table: the `numeric` columns as numbers (empty field: `None`), any
/// other column as text (trimmed). A listed column absent from the file is added as `None`s.
pub fn read_gz_csv(gz: &[u8], numeric: &[&str], jobs: Option<usize>) -> Result<Table, String> {
    let mut t = Collect::new(numeric);
    rows::read_gz_rows(gz, numeric, jobs, &mut t)?;
    Ok(t.finish(numeric))
}

/// [`read_gz_csv`] of the text once decompressed.
pub fn read_csv(text: &str, numeric: &[&str], jobs: Option<usize>) -> Result<Table, String> {
    let mut t = Collect::new(numeric);
    rows::read_text_rows(text, numeric, jobs, &mut t)?;
    Ok(t.finish(numeric))
}

/// The rows collected into columns.
struct Collect {
    names: Vec<String>,
    is_num: Vec<bool>,
    numeric: Vec<String>,
    nums: Vec<Vec<Option<f64>>>,
    texts: Vec<Vec<Option<String>>>,
    rows: usize,
}

impl Collect {
    fn new(numeric: &[&str]) -> Self {
        let numeric = numeric.iter().map(|n| n.to_string()).collect();
        Collect { names: Vec::new(), is_num: Vec::new(), numeric, nums: Vec::new(), texts: Vec::new(), rows: 0 }
    }

    fn finish(mut self, numeric: &[&str]) -> Table {
        let mut columns: Vec<(String, Values)> = Vec::with_capacity(self.names.len());
        for (c, n) in self.names.iter().enumerate() {
            let v = if self.is_num[c] {
                Values::Numbers(std::mem::take(&mut self.nums[c]))
            } else {
                Values::Text(std::mem::take(&mut self.texts[c]))
            };
            columns.push((n.clone(), v));
        }
        for n in numeric {
            if !self.names.iter().any(|m| m == n) {
                columns.push((n.to_string(), Values::Numbers(vec![None; self.rows])));
            }
        }
        Table { columns, rows: self.rows }
    }
}

impl RowSink for Collect {
    fn columns(&mut self, names: &[&str]) {
        self.names = names.iter().map(|n| n.to_string()).collect();
        self.is_num = names.iter().map(|n| self.numeric.iter().any(|m| m == n)).collect();
        self.nums = vec![Vec::new(); names.len()];
        self.texts = vec![Vec::new(); names.len()];
    }

    fn row(&mut self, row: &Row<'_>) {
        self.rows += 1;
        for (c, is_num) in self.is_num.iter().enumerate() {
            if *is_num {
                self.nums[c].push(row.numbers[c]);
            } else {
                let field = row.field(c).trim();
                self.texts[c].push((!field.is_empty()).then(|| field.to_string()));
            }
        }
    }
}
