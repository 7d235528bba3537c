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
