//! Times each NVML query the runner's telemetry sampler makes (`src/telemetry/nvml.rs`:
//! `NvmlSource::sample` and `process_memory`), in the sampler's order, to find which of them
//! make a sample cost milliseconds of CPU. For each query: `--reps` calls back to back, with
//! the mean wall time, the mean CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`,
//! what the sampler's own report measures) and of the whole process
//! (`CLOCK_PROCESS_CPUTIME_ID`: catches work NVML hands to threads of its own), the fastest
//! and slowest call, and what the call returned. Then the sampler's whole sequence, once per
//! `--seq-interval-ms` (100: the sampler at 10 Hz), timed step by step and as a whole.
//!
//! The sequence is the whole-GPU part only (no MIG instances); like the sampler it asks
//! `gpm_support` once beforehand (in `NvmlSource::new`), not per sample, reads the energy
//! counter only every `colloc_runner::energy_every`th sample (every 5th at 10 Hz), takes the GPM
//! samples only when GPM is supported, compares each with the previous one, and lists the MPS
//! clients only when the compute processes could be listed. The process lists cost more with
//! processes on the GPU (the compute list is a count call and a fill call then); run it while
//! the jobs run to see that.
//!
//! `cargo run --release -p colloc-runner --example nvml_cost -- [--gpu N] [--reps N] [--csv PATH]`
//!
//! Exit status: 0 done, 1 the CSV could not be written, 2 NVML or the GPU is not available
//! (or the arguments are wrong).

use clap::Parser;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::gpm::{gpm_metrics_get, GpmSample};
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::struct_wrappers::gpm::GpmMetricResult;
use nvml_wrapper::{Device, Nvml};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `println!` that ignores a closed stdout (`| head`) instead of panicking.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// The GPM metrics the sampler asks for, in its order.
const GPM: [GpmMetricId; 4] =
    [GpmMetricId::SmUtil, GpmMetricId::SmOccupancy, GpmMetricId::AnyTensorUtil, GpmMetricId::DramBwUtil];

#[derive(Parser)]
#[command(name = "nvml_cost", about = "Times the NVML queries of the runner's telemetry sampler")]
struct Args {
    /// NVML index of the GPU.
    #[arg(long, default_value_t = 0)]
    gpu: u32,
    /// Calls of each query, and samples of the sampler sequence.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Also write the table as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Pause between two calls of one query, in milliseconds.
    #[arg(long, default_value_t = 0)]
    interval_ms: u64,
    /// Pause between two samples of the sampler sequence, in milliseconds (100: 10 Hz).
    #[arg(long, default_value_t = 100)]
    seq_interval_ms: u64,
}

fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall, thread-CPU and process-CPU nanoseconds of one call.
#[derive(Clone, Copy)]
struct Meas {
    wall: u64,
    cpu: u64,
    pcpu: u64,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Meas) {
    let w0 = Instant::now();
    let c0 = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    let p0 = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
    let r = f();
    let p1 = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
    let c1 = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    let wall = w0.elapsed().as_nanos() as u64;
    (r, Meas { wall, cpu: c1.saturating_sub(c0), pcpu: p1.saturating_sub(p0) })
}

/// The calls of one query.
#[derive(Default)]
struct Stats {
    n: u64,
    wall: u64,
    cpu: u64,
    pcpu: u64,
    min: u64,
    max: u64,
    ok: u64,
    /// Error text → how many calls.
    errors: BTreeMap<String, u64>,
    /// What the last successful call returned.
    detail: String,
    /// Why the query was not called.
    skipped: Option<String>,
}

impl Stats {
    fn skipped(why: impl Into<String>) -> Stats {
        Stats { skipped: Some(why.into()), ..Stats::default() }
    }

    fn record<T, E: Display>(&mut self, m: Meas, r: &Result<T, E>, describe: impl FnOnce(&T) -> String) {
        self.min = if self.n == 0 { m.wall } else { self.min.min(m.wall) };
        self.max = self.max.max(m.wall);
        self.n += 1;
        self.wall += m.wall;
        self.cpu += m.cpu;
        self.pcpu += m.pcpu;
        match r {
            Ok(v) => {
                self.ok += 1;
                self.detail = describe(v);
            }
            Err(e) => *self.errors.entry(e.to_string()).or_insert(0) += 1,
        }
    }

    fn mean_us(&self, total: u64) -> Option<f64> {
        (self.n > 0).then(|| total as f64 / self.n as f64 / 1000.0)
    }

    fn result(&self) -> String {
        if let Some(why) = &self.skipped {
            return format!("skipped: {why}");
        }
        let errs = self.errors.iter().map(|(e, c)| format!("{e} ({c}x)")).collect::<Vec<_>>().join("; ");
        match (self.ok, self.errors.is_empty()) {
            (_, true) if self.detail.is_empty() => "ok".into(),
            (_, true) => format!("ok: {}", self.detail),
            (0, false) if self.errors.len() == 1 => {
                format!("error: {}", self.errors.keys().next().cloned().unwrap_or_default())
            }
            (0, false) => format!("error: {errs}"),
            (ok, false) => format!("{ok} ok, errors: {errs}"),
        }
    }
}

struct Row {
    section: &'static str,
    query: String,
    /// A query the sampler makes every sample.
    per_sample: bool,
    stats: Stats,
}

/// Runs `f`; a panic becomes `None` (and its message on stderr) instead of ending the program.
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(_) => {
            eprintln!("nvml_cost: {what} panicked");
            None
        }
    }
}

fn pause(ms: u64) {
    if ms > 0 {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// `reps` calls of `f`, `pause_ms` apart; each result is dropped outside the timing.
fn measure<T, E: Display>(
    reps: u32,
    pause_ms: u64,
    mut f: impl FnMut() -> Result<T, E>,
    describe: impl Fn(&T) -> String,
) -> Stats {
    let mut s = Stats::default();
    for i in 0..reps {
        if i > 0 {
            pause(pause_ms);
        }
        let (r, m) = timed(&mut f);
        s.record(m, &r, &describe);
        drop(r);
    }
    s
}

fn describe_procs(list: &[ProcessInfo]) -> String {
    let known = list.iter().filter(|p| matches!(p.used_gpu_memory, UsedGpuMemory::Used(_))).count();
    format!("{} process(es), {known} with their memory", list.len())
}

fn describe_gpm(results: &Vec<Result<GpmMetricResult, NvmlError>>) -> String {
    GPM.iter()
        .zip(results)
        .map(|(id, r)| match r {
            Ok(m) => format!("{id:?}={:.2}", m.value),
            Err(e) => format!("{id:?}: {e}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The steps of one sample, as `NvmlSource::sample` and `process_memory` make them.
const STEPS: [&str; 13] = [
    "power_usage",
    "total_energy_consumption",
    "utilization_rates",
    "memory_info",
    "clock_info(SM)",
    "clock_info(Memory)",
    "temperature(Gpu)",
    "current_throttle_reasons",
    "gpm_sample",
    "gpm_metrics_get (previous, new)",
    "GpmSample drop (the previous one)",
    "running_compute_processes",
    "mps_running_compute_processes",
];

/// One step of the sequence, timed into `s`.
fn step<T, E: Display>(
    s: &mut Stats,
    f: impl FnOnce() -> Result<T, E>,
    describe: impl FnOnce(&T) -> String,
) -> Result<T, E> {
    let (r, m) = timed(f);
    s.record(m, &r, describe);
    r
}

/// One sample as the sampler takes it (the energy counter only when `energy`: the sampler
/// reads it every [`colloc_runner::energy_every`]th sample); returns how many steps failed.
fn sample_once<'n>(
    nvml: &'n Nvml,
    d: &Device<'n>,
    gpm: bool,
    energy: bool,
    prev: &mut Option<GpmSample<'n>>,
    st: &mut [Stats; 13],
) -> usize {
    let mut failed = 0;
    let mut count = |ok: bool| failed += usize::from(!ok);
    count(step(&mut st[0], || d.power_usage(), |v| format!("{v} mW")).is_ok());
    if energy {
        count(step(&mut st[1], || d.total_energy_consumption(), |v| format!("{v} mJ")).is_ok());
    }
    count(step(&mut st[2], || d.utilization_rates(), |u| format!("gpu {}% mem {}%", u.gpu, u.memory)).is_ok());
    count(step(&mut st[3], || d.memory_info(), |m| format!("used {} of {} B", m.used, m.total)).is_ok());
    count(step(&mut st[4], || d.clock_info(Clock::SM), |v| format!("{v} MHz")).is_ok());
    count(step(&mut st[5], || d.clock_info(Clock::Memory), |v| format!("{v} MHz")).is_ok());
    count(step(&mut st[6], || d.temperature(TemperatureSensor::Gpu), |v| format!("{v} C")).is_ok());
    count(step(&mut st[7], || d.current_throttle_reasons(), |r| format!("{:#x}", r.bits())).is_ok());
    if gpm {
        match step(&mut st[8], || d.gpm_sample(), |_| String::new()) {
            Ok(new) => {
                if let Some(p) = prev.as_ref() {
                    count(step(&mut st[9], || gpm_metrics_get(nvml, p, &new, &GPM), describe_gpm).is_ok());
                }
                let (_, m) = timed(|| *prev = Some(new));
                st[10].record(m, &Ok::<(), String>(()), |_| String::new());
            }
            Err(_) => count(false),
        }
    }
    match step(&mut st[11], || d.running_compute_processes(), |l| describe_procs(l)) {
        Ok(_) => count(step(&mut st[12], || d.mps_running_compute_processes(), |l| describe_procs(l)).is_ok()),
        Err(_) => count(false),
    }
    failed
}

/// The sampler's sequence `reps` times, `pause_ms` apart: each step's calls, then the whole.
fn sequence(nvml: &Nvml, d: &Device<'_>, gpm: bool, reps: u32, pause_ms: u64) -> Vec<(String, bool, Stats)> {
    let mut st: [Stats; 13] = Default::default();
    let mut whole = Stats::default();
    let mut prev = None;
    let every = colloc_runner::energy_every(1000.0 / pause_ms.max(1) as f64);
    for i in 0..reps {
        if i > 0 {
            pause(pause_ms);
        }
        let (failed, m) = timed(|| sample_once(nvml, d, gpm, u64::from(i) % every == 0, &mut prev, &mut st));
        let r = if failed == 0 { Ok(()) } else { Err(format!("{failed} step(s) failed")) };
        whole.record(m, &r, |_| String::new());
    }
    if !gpm {
        for s in &mut st[8..11] {
            *s = Stats::skipped("GPM is not supported (the sampler skips it)");
        }
    }
    if st[12].n == 0 && st[12].skipped.is_none() {
        st[12] = Stats::skipped("the compute processes could not be listed (the sampler skips it)");
    }
    let mut rows: Vec<(String, bool, Stats)> =
        STEPS.iter().zip(st).map(|(name, s)| (name.to_string(), true, s)).collect();
    rows.push(("whole sequence".into(), false, whole));
    rows
}

fn isolated_queries(nvml: &Nvml, d: &Device<'_>, reps: u32, p: u64) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut add = |query: &str, per_sample: bool, stats: Option<Stats>| {
        let stats = stats.unwrap_or_else(|| Stats::skipped("panicked"));
        rows.push(Row { section: "query", query: query.into(), per_sample, stats });
    };
    let g = |q: &str, f: &mut dyn FnMut() -> Stats| guarded(q, f);
    add("power_usage", true, g("power_usage", &mut || measure(reps, p, || d.power_usage(), |v| format!("{v} mW"))));
    add(
        "total_energy_consumption",
        true,
        g("total_energy_consumption", &mut || measure(reps, p, || d.total_energy_consumption(), |v| format!("{v} mJ"))),
    );
    add(
        "utilization_rates",
        true,
        g("utilization_rates", &mut || {
            measure(reps, p, || d.utilization_rates(), |u| format!("gpu {}% mem {}%", u.gpu, u.memory))
        }),
    );
    add(
        "memory_info",
        true,
        g("memory_info", &mut || measure(reps, p, || d.memory_info(), |m| format!("used {} of {} B", m.used, m.total))),
    );
    add(
        "clock_info(SM)",
        true,
        g("clock_info(SM)", &mut || measure(reps, p, || d.clock_info(Clock::SM), |v| format!("{v} MHz"))),
    );
    add(
        "clock_info(Memory)",
        true,
        g("clock_info(Memory)", &mut || measure(reps, p, || d.clock_info(Clock::Memory), |v| format!("{v} MHz"))),
    );
    add(
        "temperature(Gpu)",
        true,
        g("temperature(Gpu)", &mut || measure(reps, p, || d.temperature(TemperatureSensor::Gpu), |v| format!("{v} C"))),
    );
    add(
        "current_throttle_reasons",
        true,
        g("current_throttle_reasons", &mut || {
            measure(reps, p, || d.current_throttle_reasons(), |r| format!("{:#x}", r.bits()))
        }),
    );
    add(
        "gpm_support (once per run)",
        false,
        g("gpm_support", &mut || measure(reps, p, || d.gpm_support(), |v| format!("{v}"))),
    );
    add("gpm_sample", true, g("gpm_sample", &mut || measure(reps, p, || d.gpm_sample(), |_| String::new())));
    add(
        "gpm_metrics_get (2 samples, 4 metrics)",
        true,
        g("gpm_metrics_get", &mut || {
            let s1 = match d.gpm_sample() {
                Ok(s) => s,
                Err(e) => return Stats::skipped(format!("no first GPM sample: {e}")),
            };
            std::thread::sleep(Duration::from_millis(100));
            let s2 = match d.gpm_sample() {
                Ok(s) => s,
                Err(e) => return Stats::skipped(format!("no second GPM sample: {e}")),
            };
            measure(reps, p, || gpm_metrics_get(nvml, &s1, &s2, &GPM), describe_gpm)
        }),
    );
    add(
        "GpmSample drop (nvmlGpmSampleFree)",
        true,
        g("GpmSample drop", &mut || {
            let mut s = Stats::default();
            for i in 0..reps {
                if i > 0 {
                    pause(p);
                }
                match d.gpm_sample() {
                    Ok(sample) => {
                        let (_, m) = timed(|| drop(sample));
                        s.record(m, &Ok::<(), String>(()), |_| String::new());
                    }
                    Err(e) => return Stats::skipped(format!("no GPM sample to drop: {e}")),
                }
            }
            s
        }),
    );
    add(
        "running_compute_processes",
        true,
        g("running_compute_processes", &mut || {
            measure(reps, p, || d.running_compute_processes(), |l| describe_procs(l))
        }),
    );
    add(
        "mps_running_compute_processes",
        true,
        g("mps_running_compute_processes", &mut || {
            measure(reps, p, || d.mps_running_compute_processes(), |l| describe_procs(l))
        }),
    );
    rows
}

fn us(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_default()
}

const HEADER: [&str; 12] = [
    "section",
    "query",
    "per_sample",
    "calls",
    "wall_mean_us",
    "thread_cpu_mean_us",
    "process_cpu_mean_us",
    "wall_min_us",
    "wall_max_us",
    "ok",
    "errors",
    "result",
];

fn fields(r: &Row) -> [String; 12] {
    let s = &r.stats;
    let (min, max) = if s.n > 0 { (Some(s.min as f64 / 1000.0), Some(s.max as f64 / 1000.0)) } else { (None, None) };
    [
        r.section.to_string(),
        r.query.clone(),
        if r.per_sample { "yes" } else { "no" }.to_string(),
        s.n.to_string(),
        us(s.mean_us(s.wall)),
        us(s.mean_us(s.cpu)),
        us(s.mean_us(s.pcpu)),
        us(min),
        us(max),
        s.ok.to_string(),
        s.errors.values().sum::<u64>().to_string(),
        s.result(),
    ]
}

fn csv_field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

fn print_table(rows: &[Row]) {
    // The columns printed: all but ok and errors (the result says them).
    let cols = [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 11];
    let heads = [
        "section",
        "query",
        "per-sample",
        "calls",
        "wall us",
        "thr cpu us",
        "proc cpu us",
        "min us",
        "max us",
        "result",
    ];
    let table: Vec<[String; 12]> = rows.iter().map(fields).collect();
    let width: Vec<usize> = cols
        .iter()
        .zip(heads)
        .map(|(&c, h)| table.iter().map(|f| f[c].chars().count()).chain([h.len()]).max().unwrap_or(0))
        .collect();
    let numeric = |c: usize| (3..=8).contains(&c);
    let line = |cells: Vec<String>| {
        let mut out = String::new();
        for (i, (cell, &c)) in cells.iter().zip(&cols).enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let w = width[i];
            if i + 1 == cols.len() {
                out.push_str(cell);
            } else if numeric(c) {
                out.push_str(&format!("{cell:>w$}"));
            } else {
                out.push_str(&format!("{cell:<w$}"));
            }
        }
        out!("{}", out.trim_end());
    };
    line(heads.iter().map(|h| h.to_string()).collect());
    let mut last = "";
    for (r, f) in rows.iter().zip(&table) {
        if !last.is_empty() && r.section != last {
            out!();
        }
        last = r.section;
        line(cols.iter().map(|&c| f[c].clone()).collect());
    }
}

/// Prints the table of `rows`, then the totals per sample (the sequence's steps summed, the
/// isolated per-sample queries summed) and the whole sequence as measured; the totals join `rows`.
fn report_totals(rows: &mut Vec<Row>) {
    // Sums of the per-sample means: of the sequence's steps, and of the isolated queries.
    let sum = |section: &str, pick: fn(&Stats) -> u64| -> f64 {
        rows.iter()
            .filter(|r| r.section == section && r.per_sample)
            .filter_map(|r| r.stats.mean_us(pick(&r.stats)))
            .sum()
    };
    let totals = [
        ("sequence", "total per sample", "sum of the sequence's step means"),
        ("query", "sum of isolated per-sample queries", "sum of the isolated per-sample query means"),
    ];
    let mut total_rows = Vec::new();
    for (section, query, _) in totals {
        let (wall, cpu, pcpu) = (sum(section, |s| s.wall), sum(section, |s| s.cpu), sum(section, |s| s.pcpu));
        let to_ns = |v: f64| (v * 1000.0).round() as u64;
        let stats = Stats {
            n: 1,
            wall: to_ns(wall),
            cpu: to_ns(cpu),
            pcpu: to_ns(pcpu),
            min: to_ns(wall),
            max: to_ns(wall),
            ok: 1,
            detail: format!("{:.2}% of one core at 10 Hz (thread CPU)", cpu * 10.0 / 1e6 * 100.0),
            ..Stats::default()
        };
        total_rows.push(Row { section: "total", query: query.into(), per_sample: false, stats });
    }
    print_table(rows);
    out!();
    let whole = rows.iter().find(|r| r.section == "sequence" && r.query == "whole sequence");
    for (r, (_, _, what)) in total_rows.iter().zip(totals) {
        out!(
            "{}: wall {} us, thread CPU {} us, process CPU {} us ({what}; {})",
            r.query,
            us(r.stats.mean_us(r.stats.wall)),
            us(r.stats.mean_us(r.stats.cpu)),
            us(r.stats.mean_us(r.stats.pcpu)),
            r.stats.detail
        );
    }
    if let Some(w) = whole {
        let cpu = w.stats.mean_us(w.stats.cpu).unwrap_or(0.0);
        out!(
            "whole sequence measured: wall {} us, thread CPU {} us, process CPU {} us ({:.2}% of one core at 10 Hz)",
            us(w.stats.mean_us(w.stats.wall)),
            us(w.stats.mean_us(w.stats.cpu)),
            us(w.stats.mean_us(w.stats.pcpu)),
            cpu * 10.0 / 1e6 * 100.0
        );
    }
    rows.extend(total_rows);
}

fn run(args: &Args) -> ExitCode {
    let (init, m_init) = timed(Nvml::init);
    let nvml = match init {
        Ok(n) => n,
        Err(e) => {
            eprintln!(
                "nvml_cost: NVML is not available (Nvml::init: {e}): libnvidia-ml.so.1 could not be loaded or \
                 initialised. Is the NVIDIA driver installed on this machine?"
            );
            return ExitCode::from(2);
        }
    };
    let mut rows = Vec::new();
    let mut s = Stats::default();
    s.record(m_init, &Ok::<(), String>(()), |_| String::new());
    rows.push(Row { section: "once", query: "Nvml::init".into(), per_sample: false, stats: s });

    let (dev, m_dev) = timed(|| nvml.device_by_index(args.gpu));
    let d = match dev {
        Ok(d) => d,
        Err(e) => {
            let count = nvml.device_count().map(|n| format!("NVML sees {n} GPU(s)")).unwrap_or_else(|e| e.to_string());
            eprintln!("nvml_cost: NVML cannot open GPU {} ({e}); {count}", args.gpu);
            return ExitCode::from(2);
        }
    };
    let mut s = Stats::default();
    s.record(m_dev, &Ok::<(), String>(()), |_| String::new());
    rows.push(Row { section: "once", query: format!("device_by_index({})", args.gpu), per_sample: false, stats: s });

    let name = d.name().unwrap_or_else(|e| format!("name unknown: {e}"));
    let uuid = d.uuid().unwrap_or_else(|e| format!("UUID unknown: {e}"));
    let driver = nvml.sys_driver_version().unwrap_or_else(|e| format!("unknown ({e})"));
    let nvml_version = nvml.sys_nvml_version().unwrap_or_else(|e| format!("unknown ({e})"));
    let gpm = matches!(d.gpm_support(), Ok(true));
    out!(
        "nvml_cost: GPU {} {name} ({uuid}), driver {driver}, NVML {nvml_version}, GPM {}",
        args.gpu,
        if gpm { "supported" } else { "not supported" }
    );
    out!(
        "{} calls per query, {}; the sampler sequence {} times, {} ms apart",
        args.reps,
        if args.interval_ms == 0 { "back to back".to_string() } else { format!("{} ms apart", args.interval_ms) },
        args.reps,
        args.seq_interval_ms
    );
    out!();

    let overhead = measure(args.reps, 0, || Ok::<(), String>(()), |_| String::new());
    rows.push(Row { section: "overhead", query: "timing an empty call".into(), per_sample: false, stats: overhead });

    rows.extend(isolated_queries(&nvml, &d, args.reps, args.interval_ms));
    let seq = guarded("the sampler sequence", || sequence(&nvml, &d, gpm, args.reps, args.seq_interval_ms))
        .unwrap_or_else(|| vec![("whole sequence".into(), false, Stats::skipped("panicked"))]);
    rows.extend(seq.into_iter().map(|(query, per_sample, stats)| Row {
        section: "sequence",
        query,
        per_sample,
        stats,
    }));

    report_totals(&mut rows);

    if let Some(path) = &args.csv {
        let mut text = HEADER.join(",");
        text.push('\n');
        for r in &rows {
            text.push_str(&fields(r).iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(","));
            text.push('\n');
        }
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("nvml_cost: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
        out!("CSV: {}", path.display());
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let args = Args::parse();
    guarded("nvml_cost", || run(&args)).unwrap_or(ExitCode::from(1))
}
