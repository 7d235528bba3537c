//! Telemetry: one sampler thread per run (the run's one GPU) writes `telemetry.csv.gz` and
//! `processes.csv.gz` (columns of `colloc_trace::telemetry`) while the jobs run.
//!
//! A metric that cannot be read stays an empty field, never a zero, and the reason goes to
//! `meta.json` → `telemetry.unavailable` under the column's name (`<column> (MIG instance
//! rows)` for per-instance rows, `processes.<column>` for `processes.csv.gz`). GPM metrics
//! compare two samples, so the first row has none. The GPU's energy counter is read in every
//! [`energy_every`]th sample only (every [`ENERGY_INTERVAL_S`] s): one read costs 4–5 ms of
//! CPU on an H200, about as much as all the other queries of a sample together (see
//! `examples/nvml_cost.rs`), while the analysis needs only the counter's first and last
//! reading inside a window. A process row's `cpu_pct` covers the
//! time since the previous sample (since its start for a new process).
//!
//! Each sample also looks for processes on the GPU that are no job's: a pid the driver lists
//! (compute processes and MPS clients) that is in no job's process tree (now or earlier in
//! the run) and is not an MPS server (`nvidia-cuda-mps-server`, whose command name the
//! kernel cuts to `nvidia-cuda-mps`: the run's own; a foreign daemon stops the run before
//! it starts). Each is reported once in [`Report::foreign`]
//! with when it was first and last seen and the most GPU memory it held; the run's
//! `meta.json` lists them under `telemetry.foreign_processes`.

pub(crate) mod nvml;
pub(crate) mod procfs;

use anyhow::{Context, Result};
use colloc_trace::meta::ForeignProcess;
use colloc_trace::telemetry::{GPU_COLUMNS, PROCESS_COLUMNS};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::jobs::Phase;

/// What the sampler knows of a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct JobState {
    pub pid: Option<u32>,
    pub phase: Phase,
}

pub(crate) type SharedJobs = Arc<Mutex<Vec<JobState>>>;

/// A number in a CSV field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    F(f64),
    U(u64),
}

impl Num {
    fn render(self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = match self {
            Num::F(v) if v.is_finite() => {
                let s = format!("{v:.3}");
                let s = s.trim_end_matches('0').trim_end_matches('.');
                write!(out, "{}", if s.is_empty() || s == "-" { "0" } else { s })
            }
            Num::F(_) => Ok(()),
            Num::U(v) => write!(out, "{v}"),
        };
    }
}

/// One row of `telemetry.csv.gz` without its time stamps.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuRow {
    pub instance: i64,
    values: Vec<Option<Num>>,
}

impl GpuRow {
    pub(crate) fn new(instance: i64) -> Self {
        GpuRow { instance, values: vec![None; GPU_COLUMNS.len()] }
    }

    /// Sets a column by name (names of `GPU_COLUMNS`).
    pub(crate) fn set(&mut self, column: &str, v: Num) {
        self.values[Self::index(column)] = Some(v);
    }

    /// Empties a column by name: a value that could not be read.
    pub(crate) fn clear(&mut self, column: &str) {
        self.values[Self::index(column)] = None;
    }

    fn index(column: &str) -> usize {
        GPU_COLUMNS.iter().position(|c| *c == column).unwrap_or_else(|| panic!("unknown column {column}"))
    }
}

/// One row of `processes.csv.gz` without its time stamps.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProcRow {
    pub job: u32,
    pub pids: u32,
    pub cpu_pct: Option<f64>,
    pub rss_bytes: Option<u64>,
    pub gpu_mem_bytes: Option<u64>,
}

/// Which metrics were missing, how often, and why.
#[derive(Debug, Default)]
pub(crate) struct Gaps {
    /// Column → why → how many rows.
    missing: BTreeMap<String, BTreeMap<String, u64>>,
    rows: BTreeMap<&'static str, u64>,
}

impl Gaps {
    /// A missing value in a whole-GPU row (`instance == false`) or a MIG-instance row.
    pub(crate) fn miss(&mut self, column: &str, instance: bool, reason: impl FnOnce() -> String) {
        let key = if instance { format!("{column} (MIG instance rows)") } else { column.to_string() };
        *self.missing.entry(key).or_default().entry(reason()).or_insert(0) += 1;
    }

    /// A missing value in `processes.csv.gz`.
    pub(crate) fn miss_process(&mut self, column: &str, reason: impl FnOnce() -> String) {
        *self.missing.entry(format!("processes.{column}")).or_default().entry(reason()).or_insert(0) += 1;
    }

    fn count_row(&mut self, kind: &'static str) {
        *self.rows.entry(kind).or_insert(0) += 1;
    }

    /// `meta.json` → `telemetry.unavailable`: per column, how many rows lack it and every
    /// reason with its count (`missing in 3 of 120 rows: the first sample (GPM compares two
    /// samples) (1 row); GPM: … (2 rows)`), or the one reason when no row has it.
    pub(crate) fn report(&self) -> BTreeMap<String, String> {
        self.missing
            .iter()
            .map(|(k, whys)| {
                let n: u64 = whys.values().sum();
                let why = if whys.len() == 1 {
                    whys.keys().next().cloned().unwrap_or_default()
                } else {
                    whys.iter()
                        .map(|(w, c)| format!("{w} ({c} row{})", if *c == 1 { "" } else { "s" }))
                        .collect::<Vec<_>>()
                        .join("; ")
                };
                let kind = if k.starts_with("processes.") {
                    "process"
                } else if k.ends_with("(MIG instance rows)") {
                    "instance"
                } else {
                    "gpu"
                };
                let total = self.rows.get(kind).copied().unwrap_or(0);
                let text = if n >= total { why } else { format!("missing in {n} of {total} rows: {why}") };
                (k.clone(), text)
            })
            .collect()
    }
}

/// Seconds between two reads of the GPU's energy counter, at most.
pub const ENERGY_INTERVAL_S: f64 = 0.5;

/// The energy counter is read in sample 0 and every this many samples after it at
/// `rate_hz`: [`ENERGY_INTERVAL_S`] apart, rounded to whole samples, every sample at rates of
/// 2 Hz and below.
pub fn energy_every(rate_hz: f64) -> u64 {
    let n = (rate_hz * ENERGY_INTERVAL_S).floor();
    if n.is_finite() && n >= 1.0 {
        n as u64
    } else {
        1
    }
}

/// A source of GPU samples.
pub(crate) trait GpuSource: Send {
    /// `nvml` or `simulated`.
    fn name(&self) -> &'static str;
    /// The whole GPU's row (instance -1) and one per MIG instance. The energy counter is
    /// read only when `energy` (see [`energy_every`]); otherwise `energy_j` stays empty.
    fn sample(&mut self, jobs: &[JobState], gaps: &mut Gaps, energy: bool) -> Vec<GpuRow>;
    /// pid → GPU memory used; `None` when unknown.
    fn process_memory(&mut self, gaps: &mut Gaps) -> Option<HashMap<u32, Option<u64>>>;
    /// Each job's process row as the source itself gives it, instead of from `/proc`
    /// (`None`: read `/proc`).
    fn own_process_rows(&mut self, _jobs: &[JobState]) -> Option<Vec<Option<ProcRow>>> {
        None
    }
    /// Whether sampling reads the host (its GPU through the driver, `/proc`), so that the
    /// sampler's CPU time is what telemetry costs a host, worth a line after each run.
    fn reads_the_host(&self) -> bool {
        true
    }
    /// The command name of a process on the GPU (`/proc/<pid>/comm`).
    fn process_name(&self, pid: u32) -> Option<String> {
        procfs::comm(pid)
    }
}

/// The processes on the GPU that are no job's, across the samples of a run.
#[derive(Debug, Default)]
pub(crate) struct ForeignTracker {
    /// Every pid seen in a job's process tree during the run (a job's process that has
    /// exited may stay listed by the driver for a moment).
    ours: HashSet<u32>,
    seen: BTreeMap<u32, ForeignProcess>,
}

impl ForeignTracker {
    /// Notes the GPU's processes (`on_gpu`: pid → memory) at `mono`, the jobs' pids being
    /// `ours`; returns those seen for the first time.
    pub(crate) fn observe(
        &mut self,
        mono: f64,
        on_gpu: &HashMap<u32, Option<u64>>,
        ours: impl IntoIterator<Item = u32>,
        name_of: &dyn Fn(u32) -> Option<String>,
    ) -> Vec<ForeignProcess> {
        self.ours.extend(ours);
        let mut new = Vec::new();
        let mut pids: Vec<(&u32, &Option<u64>)> = on_gpu.iter().filter(|(p, _)| !self.ours.contains(p)).collect();
        pids.sort_by_key(|(p, _)| **p);
        for (&pid, &mem) in pids {
            if let Some(f) = self.seen.get_mut(&pid) {
                f.last_seen_mono = mono;
                f.gpu_memory_bytes = match (f.gpu_memory_bytes, mem) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                continue;
            }
            let name = name_of(pid);
            if name.as_deref().is_some_and(colloc_trace::meta::is_mps_server_name) {
                continue;
            }
            let f = ForeignProcess { pid, name, first_seen_mono: mono, last_seen_mono: mono, gpu_memory_bytes: mem };
            new.push(f.clone());
            self.seen.insert(pid, f);
        }
        new
    }

    /// Every foreign process seen, by pid.
    pub(crate) fn report(&self) -> Vec<ForeignProcess> {
        self.seen.values().cloned().collect()
    }
}

/// What the progress output says when a foreign process first appears on the GPU.
pub(crate) fn foreign_warning(f: &ForeignProcess) -> String {
    let mem = f.gpu_memory_bytes.map(|b| format!(", {:.2} GiB", b as f64 / (1u64 << 30) as f64)).unwrap_or_default();
    format!(
        "warning: foreign process {} ({}{mem}) appeared on the GPU; this run's numbers are disturbed",
        f.pid,
        f.name.as_deref().unwrap_or("?")
    )
}

/// What a finished sampler reports.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub rate_hz: f64,
    pub samples: u64,
    pub source: String,
    pub unavailable: BTreeMap<String, String>,
    /// CPU seconds the sampler thread used, and the seconds it ran.
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    /// Processes on the GPU that were no job's, by pid.
    pub foreign: Vec<ForeignProcess>,
    /// The samples were read from the host ([`GpuSource::reads_the_host`]).
    pub read_the_host: bool,
}

type Gz = GzEncoder<BufWriter<File>>;

fn open_gz(path: &Path, header: &[&str]) -> Result<Gz> {
    let f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut gz = GzEncoder::new(BufWriter::new(f), Compression::default());
    writeln!(gz, "{}", header.join(",")).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(gz)
}

fn close_gz(gz: Gz, path: &Path) -> Result<()> {
    let buf = gz.finish().with_context(|| format!("cannot finish {}", path.display()))?;
    let f = buf.into_inner().map_err(|e| e.into_error()).with_context(|| format!("cannot flush {}", path.display()))?;
    f.sync_all().with_context(|| format!("cannot sync {}", path.display()))
}

/// The two telemetry files being written.
struct Files {
    tel: Gz,
    procs: Gz,
    /// One row's text, reused.
    line: String,
}

impl Files {
    /// Rows of `telemetry.csv.gz` sampled at `mono`, `wall`.
    fn gpu_rows(&mut self, mono: f64, wall: f64, rows: Vec<GpuRow>, gaps: &mut Gaps) -> Result<()> {
        let line = &mut self.line;
        for row in rows {
            gaps.count_row(if row.instance < 0 { "gpu" } else { "instance" });
            line.clear();
            line.push_str(&format!("{mono:.6},{wall:.6},{}", row.instance));
            for v in &row.values[3..] {
                line.push(',');
                if let Some(v) = v {
                    v.render(line);
                }
            }
            line.push('\n');
            self.tel.write_all(line.as_bytes()).context("cannot write telemetry.csv.gz")?;
        }
        Ok(())
    }

    /// Rows of `processes.csv.gz` sampled at `mono`, `wall`.
    fn process_rows(&mut self, mono: f64, wall: f64, rows: Vec<Option<ProcRow>>, gaps: &mut Gaps) -> Result<()> {
        let line = &mut self.line;
        for r in rows.into_iter().flatten() {
            gaps.count_row("process");
            if r.gpu_mem_bytes.is_none() {
                gaps.miss_process("gpu_mem_bytes", || "the driver did not report per-process memory".into());
            }
            line.clear();
            line.push_str(&format!("{mono:.6},{wall:.6},{},{},", r.job, r.pids));
            if let Some(c) = r.cpu_pct {
                Num::F(c).render(line);
            }
            line.push(',');
            if let Some(b) = r.rss_bytes {
                Num::U(b).render(line);
            }
            line.push(',');
            if let Some(b) = r.gpu_mem_bytes {
                Num::U(b).render(line);
            }
            line.push('\n');
            self.procs.write_all(line.as_bytes()).context("cannot write processes.csv.gz")?;
        }
        Ok(())
    }
}

/// Each job's process row: the source's own, or from `/proc` with the GPU memory
/// of the tree's processes (`None` in a row when the driver does not say for one of them).
/// Beside them, the foreign processes first seen in this sample (`tracker`).
fn process_rows(
    source: &mut dyn GpuSource,
    snapshot: &[JobState],
    gaps: &mut Gaps,
    meter: &mut procfs::CpuMeter,
    tracker: &mut ForeignTracker,
    mono: f64,
) -> (Vec<Option<ProcRow>>, Vec<ForeignProcess>) {
    let roots: Vec<Option<u32>> = snapshot.iter().map(|j| j.pid).collect();
    if let Some(rows) = source.own_process_rows(snapshot) {
        // A source with rows of its own lists on the GPU only what is not a job's row.
        let new = match source.process_memory(gaps) {
            Some(on_gpu) => {
                tracker.observe(mono, &on_gpu, roots.iter().flatten().copied(), &|p| source.process_name(p))
            }
            None => Vec::new(),
        };
        return (rows, new);
    }
    let mem = source.process_memory(gaps);
    let usage = meter.sample(&roots);
    let new = match &mem {
        Some(on_gpu) => {
            let ours =
                roots.iter().flatten().copied().chain(usage.iter().flatten().flat_map(|u| u.pids.iter().copied()));
            tracker.observe(mono, on_gpu, ours, &|p| source.process_name(p))
        }
        None => Vec::new(),
    };
    let rows = usage
        .into_iter()
        .enumerate()
        .map(|(i, u)| {
            u.map(|u| ProcRow {
                job: i as u32,
                pids: u.pids.len() as u32,
                cpu_pct: u.cpu_pct,
                rss_bytes: Some(u.rss_bytes),
                gpu_mem_bytes: mem.as_ref().and_then(|m| {
                    let mut sum = 0u64;
                    for pid in &u.pids {
                        match m.get(pid) {
                            Some(Some(b)) => sum += b,
                            Some(None) => return None,
                            None => {}
                        }
                    }
                    Some(sum)
                }),
            })
        })
        .collect();
    (rows, new)
}

/// A sample without an energy reading: the whole-GPU rows' `energy_j` is empty, and the gap
/// says why (MIG-instance rows never have it).
fn paced_energy(rows: &mut [GpuRow], gaps: &mut Gaps, every: u64, rate_hz: f64) {
    for row in rows.iter_mut().filter(|r| r.instance < 0) {
        row.clear("energy_j");
        gaps.miss("energy_j", false, || {
            format!(
                "the energy counter is read in every {every}th sample only ({} s apart at {rate_hz} Hz): a read costs milliseconds of CPU",
                every as f64 / rate_hz
            )
        });
    }
}

/// The running sampler thread. Dropping it stops the thread.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<Report>>>,
}

/// CPU seconds used by the calling thread.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

impl Sampler {
    /// Starts sampling into `dir/telemetry.csv.gz` and `dir/processes.csv.gz`; with
    /// `rate_hz == 0` writes both files with their header only. `on_foreign` is told of each
    /// foreign process when it first appears.
    pub(crate) fn start(
        dir: &Path,
        rate_hz: f64,
        source: Box<dyn GpuSource>,
        jobs: SharedJobs,
        on_foreign: Box<dyn FnMut(&ForeignProcess) + Send>,
    ) -> Result<Sampler> {
        let tpath = dir.join(colloc_trace::layout::TELEMETRY);
        let ppath = dir.join(colloc_trace::layout::PROCESSES);
        let mut files = Files {
            tel: open_gz(&tpath, GPU_COLUMNS)?,
            procs: open_gz(&ppath, PROCESS_COLUMNS)?,
            line: String::with_capacity(256),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("telemetry".into())
            .spawn(move || -> Result<Report> {
                let mut source = source;
                let mut on_foreign = on_foreign;
                let mut tracker = ForeignTracker::default();
                let cpu0 = thread_cpu_seconds();
                let t0 = Instant::now();
                let mut gaps = Gaps::default();
                let mut meter = procfs::CpuMeter::new();
                let mut samples = 0u64;
                let enabled = rate_hz > 0.0 && rate_hz.is_finite();
                let period = Duration::from_secs_f64(if enabled { 1.0 / rate_hz } else { 1.0 });
                let mut next = Instant::now();
                let every = energy_every(rate_hz);
                while enabled && !flag.load(Ordering::SeqCst) {
                    let snapshot = jobs.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    let mono = colloc_trace::monotonic_seconds();
                    let wall = colloc_trace::wall_seconds();
                    let energy = samples.is_multiple_of(every);
                    let mut rows = source.sample(&snapshot, &mut gaps, energy);
                    if !energy {
                        paced_energy(&mut rows, &mut gaps, every, rate_hz);
                    }
                    files.gpu_rows(mono, wall, rows, &mut gaps)?;
                    let (rows, new) =
                        process_rows(source.as_mut(), &snapshot, &mut gaps, &mut meter, &mut tracker, mono);
                    files.process_rows(mono, wall, rows, &mut gaps)?;
                    for f in &new {
                        on_foreign(f);
                    }
                    samples += 1;
                    next += period;
                    let now = Instant::now();
                    if next < now {
                        next = now;
                    }
                    while !flag.load(Ordering::SeqCst) {
                        let left = next.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            break;
                        }
                        std::thread::sleep(left.min(Duration::from_millis(50)));
                    }
                }
                close_gz(files.tel, &tpath)?;
                close_gz(files.procs, &ppath)?;
                Ok(Report {
                    rate_hz: if enabled { rate_hz } else { 0.0 },
                    samples,
                    source: if enabled { source.name().to_string() } else { "off".into() },
                    unavailable: gaps.report(),
                    cpu_seconds: thread_cpu_seconds() - cpu0,
                    wall_seconds: t0.elapsed().as_secs_f64(),
                    foreign: tracker.report(),
                    read_the_host: source.reads_the_host(),
                })
            })
            .context("cannot start the telemetry thread")?;
        Ok(Sampler { stop, handle: Some(handle) })
    }

    /// Stops the thread and returns its report (the files are complete and synced).
    pub(crate) fn stop(mut self) -> Result<Report> {
        self.stop.store(true, Ordering::SeqCst);
        match self.handle.take().expect("joined once").join() {
            Ok(r) => r,
            Err(_) => anyhow::bail!("the telemetry thread panicked"),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_render_without_noise() {
        let r = |n: Num| {
            let mut s = String::new();
            n.render(&mut s);
            s
        };
        assert_eq!(r(Num::F(312.5)), "312.5");
        assert_eq!(r(Num::F(40.0)), "40");
        assert_eq!(r(Num::F(0.0004)), "0");
        assert_eq!(r(Num::F(f64::NAN)), "");
        assert_eq!(r(Num::U(7)), "7");
    }

    #[test]
    fn foreign_processes_are_those_of_no_job_and_no_mps_server() {
        let mut t = ForeignTracker::default();
        let names = |p: u32| match p {
            // As /proc/<pid>/comm gives it: the kernel keeps 15 bytes of the name.
            7 => Some("nvidia-cuda-mps".to_string()),
            8 => Some(colloc_trace::meta::MPS_SERVER.to_string()),
            9 => Some("python3".to_string()),
            _ => None,
        };
        let gpu = |list: &[(u32, Option<u64>)]| list.iter().copied().collect::<HashMap<_, _>>();
        // Jobs 100 and 101 (a child); the MPS server 7 (8: named by its command line).
        let first = gpu(&[(100, Some(5)), (101, None), (7, Some(1)), (8, Some(1))]);
        assert!(t.observe(1.0, &first, [100, 101], &names).is_empty());
        let new = t.observe(2.0, &gpu(&[(100, Some(5)), (9, Some(10)), (7, Some(1))]), [100], &names);
        assert_eq!(new.len(), 1);
        assert_eq!((new[0].pid, new[0].name.as_deref(), new[0].first_seen_mono), (9, Some("python3"), 2.0));
        // Seen again with more memory, then a job's exited child still listed: not foreign.
        assert!(t.observe(3.0, &gpu(&[(9, Some(30)), (101, Some(2)), (12, None)]), [], &names).len() == 1);
        assert!(t.observe(4.0, &gpu(&[(9, Some(20))]), [], &names).is_empty());
        let r = t.report();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].pid, r[0].name.as_deref(), r[0].gpu_memory_bytes), (9, Some("python3"), Some(30)));
        assert_eq!((r[0].first_seen_mono, r[0].last_seen_mono), (2.0, 4.0));
        assert_eq!((r[1].pid, r[1].name.as_deref(), r[1].gpu_memory_bytes, r[1].last_seen_mono), (12, None, None, 3.0));
        assert!(foreign_warning(&r[0]).contains("foreign process 9 (python3"));
    }

    #[test]
    fn gaps_say_how_often() {
        let mut g = Gaps::default();
        for _ in 0..4 {
            g.count_row("gpu");
        }
        g.miss("power_w", false, || "not supported".into());
        for _ in 0..4 {
            g.miss("sm_activity_pct", false, || "first sample".into());
        }
        g.miss("dram_bw_util_pct", false, || "the first sample".into());
        g.miss("dram_bw_util_pct", false, || "GPM returned NaN".into());
        g.miss("dram_bw_util_pct", false, || "GPM returned NaN".into());
        let r = g.report();
        assert_eq!(r["power_w"], "missing in 1 of 4 rows: not supported");
        assert_eq!(r["sm_activity_pct"], "first sample");
        assert_eq!(
            r["dram_bw_util_pct"],
            "missing in 3 of 4 rows: GPM returned NaN (2 rows); the first sample (1 row)"
        );
    }

    #[test]
    fn energy_is_read_every_half_second_of_samples() {
        assert_eq!(energy_every(10.0), 5);
        assert_eq!(energy_every(100.0), 50);
        assert_eq!(energy_every(3.0), 1);
        assert_eq!(energy_every(2.0), 1);
        assert_eq!(energy_every(1.0), 1);
        assert_eq!(energy_every(0.2), 1);
        assert_eq!(energy_every(f64::INFINITY), 1);
    }

    /// Reads energy when asked (counting the requests), and tells of an instance row too.
    struct Counting(Arc<Mutex<Vec<bool>>>);

    impl GpuSource for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn sample(&mut self, _jobs: &[JobState], _gaps: &mut Gaps, energy: bool) -> Vec<GpuRow> {
            self.0.lock().unwrap().push(energy);
            let mut gpu = GpuRow::new(-1);
            gpu.set("power_w", Num::F(100.0));
            // A source that reads the counter anyway: the sampler still leaves it out.
            gpu.set("energy_j", Num::F(5.0));
            let mut mig = GpuRow::new(1);
            mig.set("mem_used_bytes", Num::U(1));
            vec![gpu, mig]
        }
        fn process_memory(&mut self, _gaps: &mut Gaps) -> Option<HashMap<u32, Option<u64>>> {
            Some(HashMap::new())
        }
        fn own_process_rows(&mut self, jobs: &[JobState]) -> Option<Vec<Option<ProcRow>>> {
            Some(vec![None; jobs.len()])
        }
    }

    #[test]
    fn the_sampler_reads_energy_in_every_fifth_sample_at_10_hz_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let jobs: SharedJobs = Arc::new(Mutex::new(Vec::new()));
        let s = Sampler::start(dir.path(), 10.0, Box::new(Counting(asked.clone())), jobs, Box::new(|_| {})).unwrap();
        while asked.lock().unwrap().len() < 12 {
            std::thread::sleep(Duration::from_millis(20));
        }
        let r = s.stop().unwrap();
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len() as u64, r.samples);
        for (i, e) in asked.iter().enumerate() {
            assert_eq!(*e, i % 5 == 0, "sample {i}");
        }
        let text = {
            use std::io::Read as _;
            let mut t = String::new();
            flate2::read::GzDecoder::new(File::open(dir.path().join(colloc_trace::layout::TELEMETRY)).unwrap())
                .read_to_string(&mut t)
                .unwrap();
            t
        };
        let col = GPU_COLUMNS.iter().position(|c| *c == "energy_j").unwrap();
        let energy: Vec<(String, String)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[2].to_string(), f[col].to_string())
            })
            .collect();
        assert_eq!(energy.len() as u64, 2 * r.samples);
        let gpu: Vec<&str> = energy.iter().filter(|(i, _)| i == "-1").map(|(_, e)| e.as_str()).collect();
        for (i, e) in gpu.iter().enumerate() {
            assert_eq!(*e, if i % 5 == 0 { "5" } else { "" }, "whole-GPU row {i}");
        }
        let read = gpu.iter().filter(|e| !e.is_empty()).count();
        assert_eq!(
            r.unavailable["energy_j"],
            format!(
                "missing in {} of {} rows: the energy counter is read in every 5th sample only (0.5 s apart at 10 Hz): a read costs milliseconds of CPU",
                gpu.len() - read,
                gpu.len()
            )
        );
    }
}
