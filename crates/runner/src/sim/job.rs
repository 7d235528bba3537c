//! The simulated training job (`colloc-runner fake-job --job-file F`): speaks exactly the
//! protocol of `workloads/PROTOCOL.md` (the same events, the same release line on stdin, the
//! same exit codes: 0 done, 1 error, 2 bad job file, 3 aborted before release, 4 out of
//! memory), but trains nothing. Its speed and memory come from [`colloc_plan::perf`], passed
//! by the runner in `COLLOC_FAKE_SIM` (JSON of [`FakeParams`]). Durations in its events are
//! simulated seconds; it sleeps `time_scale` real seconds per simulated second, so event
//! time stamps (`mono`, `wall`) stay on the real clock shared with the telemetry. Under the
//! `quick` protocol (version 2) it trains iteration by iteration with jittered durations and
//! reports each iteration's end in `iterations` chunks on the real clock (where the schedule
//! puts it: the window start plus the simulated time × `time_scale`), sends `window_met` (with
//! a precision target, once the 95% interval of its throughput over those ends is within it
//! or the maximum window has passed, evaluated as `train.py` does), and trains on until the
//! runner's `stop` line, then one more iteration.
//!
//! Faults, chosen with environment variables whose value selects jobs: a comma-separated
//! list of `INDEX`, `*` (every job) or `PATTERN:INDEX` / `PATTERN:*` (jobs of runs whose id
//! contains PATTERN):
//!
//! | variable | the selected job |
//! |---|---|
//! | `COLLOC_FAKE_FAIL` | raises an error after its first sample (quick: its first `sample_every` iterations; exit 1) |
//! | `COLLOC_FAKE_FAIL_SETUP` | fails during set-up, before `ready` (exit 1) |
//! | `COLLOC_FAKE_OOM` | runs out of memory in its first step after release (exit 4) |
//! | `COLLOC_FAKE_CRASH` | dies by SIGKILL after its first sample, without an `end` event |
//! | `COLLOC_FAKE_HANG` | stops making progress after its first sample and never ends |
//! | `COLLOC_FAKE_HANG_SETUP` | never becomes ready |
//! | `COLLOC_FAKE_SLOW` | sets up and trains `COLLOC_FAKE_SLOW_FACTOR` (default 3) times slower |
//!
//! Without `COLLOC_FAKE_SIM` the job simulates itself alone on a GPU of an H200's size (at
//! the model's speed for a GPU without a speed table), at the time scale in
//! `COLLOC_FAKE_TIME_SCALE` (default 1).

use colloc_plan::{GpuTarget, PlannedJob, PlannedWorkload};
use colloc_trace::events::{EndReason, ErrorKind, Event, EventBody, PROTOCOL_VERSION};
use colloc_trace::jobfile::JobFile;
use colloc_trace::protocol::ProtocolKind;
use colloc_trace::Mode;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::faults;
use super::model::Rng;

pub(super) const PARAMS_ENV: &str = "COLLOC_FAKE_SIM";

/// What the runner tells a simulated job about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct FakeParams {
    pub time_scale: f64,
    pub seed: u64,
    pub images_per_second: f64,
    pub data_wait_fraction: f64,
    pub memory_bytes: u64,
    /// The out-of-memory message when the job does not fit.
    pub oom: Option<String>,
    /// Simulated seconds to build the model and load the data.
    pub setup_seconds: f64,
}

const EXIT_OK: i32 = 0;
const EXIT_ERROR: i32 = 1;
const EXIT_USAGE: i32 = 2;
const EXIT_ABORTED: i32 = 3;
const EXIT_OOM: i32 = 4;

/// Whether the fault variable's value selects job `job` of run `run_id`.
fn selected(value: Option<&str>, run_id: &str, job: u32) -> bool {
    value.is_some_and(|v| faults::selects(v, run_id, job))
}

struct Faults {
    fail: bool,
    fail_setup: bool,
    oom: bool,
    crash: bool,
    hang: bool,
    hang_setup: bool,
    slow: f64,
}

impl Faults {
    fn from_env(run_id: &str, job: u32) -> Faults {
        let is = |v: &str| selected(std::env::var(v).ok().as_deref(), run_id, job);
        let slow = if is("COLLOC_FAKE_SLOW") {
            std::env::var("COLLOC_FAKE_SLOW_FACTOR")
                .ok()
                .and_then(|f| f.parse::<f64>().ok())
                .filter(|f| *f > 0.0)
                .unwrap_or(3.0)
        } else {
            1.0
        };
        Faults {
            fail: is("COLLOC_FAKE_FAIL"),
            fail_setup: is("COLLOC_FAKE_FAIL_SETUP"),
            oom: is("COLLOC_FAKE_OOM"),
            crash: is("COLLOC_FAKE_CRASH"),
            hang: is("COLLOC_FAKE_HANG"),
            hang_setup: is("COLLOC_FAKE_HANG_SETUP"),
            slow,
        }
    }
}

struct Writer {
    file: std::fs::File,
    job: u32,
}

impl Writer {
    fn emit(&mut self, body: EventBody) {
        let e =
            Event { mono: colloc_trace::monotonic_seconds(), wall: colloc_trace::wall_seconds(), job: self.job, body };
        let mut line = serde_json::to_string(&e).expect("events serialise");
        line.push('\n');
        if let Err(err) = self.file.write_all(line.as_bytes()) {
            eprintln!("fake-job: cannot write the event log: {err}");
        }
    }
}

/// Defaults when the runner passed no parameters: the job alone on a GPU of an H200's size.
fn default_params(job: &JobFile) -> FakeParams {
    let gpu = GpuTarget {
        key: "h200-141gb".into(),
        name: "NVIDIA H200".into(),
        sms: 132,
        memory_gib: 140.0,
        compute_slices: 7,
        memory_slices: 8,
        power_limit_watts: 700.0,
        images_per_second: Default::default(),
        profiles: Default::default(),
    };
    let w = PlannedWorkload {
        id: job.workload_id.clone(),
        experiment: 0,
        label: String::new(),
        mode: Mode::Exclusive,
        feasible: true,
        reason: None,
        repetitions: 1,
        data: String::new(),
        headline: false,
        timeline: false,
        form: Default::default(),
        radt: None,
        estimated_seconds: 0.0,
        jobs: vec![PlannedJob {
            model: job.model.clone(),
            model_class: String::new(),
            dataset: job.data.name.clone(),
            batch_size: job.batch_size,
            mig_profile: None,
            mig_class: None,
            mps_limits: None,
            mig_slice: None,
            data: job.data.clone(),
            training: job.training.clone(),
        }],
        protocol: None,
        interleaved: false,
    };
    let s = colloc_plan::perf::model_workload(&gpu, &w);
    let j = &s.jobs[0];
    FakeParams {
        time_scale: std::env::var("COLLOC_FAKE_TIME_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1.0),
        seed: 42,
        images_per_second: j.images_per_second,
        data_wait_fraction: j.data_wait_fraction,
        memory_bytes: j.memory_bytes,
        oom: j.oom.clone(),
        setup_seconds: 8.0,
    }
}

/// Runs the simulated job; returns its exit code.
pub fn main(job_file: &Path) -> i32 {
    let job: JobFile = match std::fs::read_to_string(job_file)
        .map_err(|e| e.to_string())
        .and_then(|t| colloc_trace::jobfile::read(&t))
    {
        Ok(j) => j,
        Err(e) => {
            eprintln!("fake-job: {}: {e}", job_file.display());
            return EXIT_USAGE;
        }
    };
    let params = match std::env::var(PARAMS_ENV) {
        Ok(t) => match serde_json::from_str::<FakeParams>(&t) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("fake-job: {PARAMS_ENV}: {e}");
                return EXIT_USAGE;
            }
        },
        Err(_) => default_params(&job),
    };
    let file = match std::fs::OpenOptions::new().create(true).append(true).open(&job.events_path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fake-job: cannot open the event log {}: {e}", job.events_path);
            return EXIT_USAGE;
        }
    };
    let mut w = Writer { file, job: job.job };
    let code = run(&job, &params, &mut w);
    let _ = w.file.sync_all();
    code
}

fn run(job: &JobFile, p: &FakeParams, w: &mut Writer) -> i32 {
    let mut sim = Sim {
        job,
        p,
        faults: Faults::from_env(&job.run_id, job.job),
        rng: Rng::derive(p.seed, &format!("{}/{}", job.run_id, job.job)),
        scale: if p.time_scale > 0.0 { p.time_scale } else { 1.0 },
    };
    match sim.run(w) {
        Ok(code) | Err(code) => code,
    }
}

/// One simulated job as it runs; `Err(code)` ends it early with that exit code.
struct Sim<'a> {
    job: &'a JobFile,
    p: &'a FakeParams,
    faults: Faults,
    rng: Rng,
    /// Real seconds per simulated second.
    scale: f64,
}

/// Where the training stands.
#[derive(Default)]
struct Counts {
    step: u64,
    images: u64,
    total_seconds: f64,
    epoch: u32,
    in_epoch: u64,
    epoch_images: u64,
    epoch_seconds: f64,
    /// Since the last sample: images, seconds, data wait, slow-data steps.
    iv_images: u64,
    iv_seconds: f64,
    iv_wait: f64,
    iv_slow: u64,
    samples: u64,
}

impl Counts {
    fn sample(&mut self, loss: f64) -> EventBody {
        let e = EventBody::Sample {
            step: self.step,
            images: self.iv_images,
            seconds: self.iv_seconds,
            data_wait_seconds: self.iv_wait,
            slow_data_steps: self.iv_slow,
            loss,
        };
        (self.iv_images, self.iv_seconds, self.iv_wait, self.iv_slow) = (0, 0.0, 0.0, 0);
        e
    }
}

impl Sim<'_> {
    fn sleep(&self, sim_seconds: f64) {
        let real = sim_seconds * self.scale;
        if real > 0.0 && real.is_finite() {
            std::thread::sleep(Duration::from_secs_f64(real));
        }
    }

    fn run(&mut self, w: &mut Writer) -> Result<i32, i32> {
        let (job, p) = (self.job, self.p);
        w.emit(EventBody::Hello { pid: std::process::id(), protocol_version: PROTOCOL_VERSION, simulated: true });
        w.emit(EventBody::Versions {
            python: "simulated".into(),
            torch: None,
            timm: None,
            cuda: None,
            cudnn: None,
            device: Some(format!("simulated ({})", std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default())),
        });
        eprintln!(
            "fake-job {}: {} batch {} at {:.0} img/s (simulated)",
            job.job, job.model, job.batch_size, p.images_per_second
        );
        let setup = self.set_up(w)?;
        let rate = (p.images_per_second / self.faults.slow).max(1e-3);
        self.warm_up(w, setup, rate);
        self.wait_for_release(w)?;
        let (step, images, total_seconds) = match job.protocol {
            ProtocolKind::Window {
                window_seconds,
                min_iterations,
                sample_every,
                precision_target,
                max_window_seconds,
                ..
            } => self.train_window(
                w,
                rate,
                window_seconds,
                min_iterations.unwrap_or(0).max(1) as u64,
                sample_every.max(1) as u64,
                precision_target.zip(max_window_seconds),
            )?,
            ProtocolKind::Epochs { .. } => self.train(w, rate)?,
        };
        w.emit(EventBody::WindowEnd { step, images, seconds: total_seconds });
        memory_event(w, p.memory_bytes);
        let reason = if job.protocol.whole_epochs() { EndReason::Completed } else { EndReason::WindowDone };
        eprintln!("fake-job {}: {images} images in {total_seconds:.1} simulated s", job.job);
        w.emit(EventBody::End { reason, exit_code: EXIT_OK });
        Ok(EXIT_OK)
    }

    /// Builds the model and loads the data: the set-up faults and a job that does not fit.
    /// Returns the set-up's simulated seconds.
    fn set_up(&mut self, w: &mut Writer) -> Result<f64, i32> {
        let (job, p) = (self.job, self.p);
        let setup = p.setup_seconds * self.faults.slow * self.rng.jitter(0.2);
        self.sleep(setup);
        if self.faults.hang_setup {
            eprintln!("fake-job {}: hanging during set-up (COLLOC_FAKE_HANG_SETUP)", job.job);
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        if self.faults.fail_setup {
            eprintln!("fake-job {}: RuntimeError: injected failure during set-up (COLLOC_FAKE_FAIL_SETUP)", job.job);
            w.emit(EventBody::Error {
                kind: ErrorKind::Exception,
                message: "RuntimeError: injected failure during set-up".into(),
            });
            w.emit(EventBody::End { reason: EndReason::Error, exit_code: EXIT_ERROR });
            return Err(EXIT_ERROR);
        }
        if let Some(msg) = &p.oom {
            eprintln!("fake-job {}: torch.OutOfMemoryError: {msg}", job.job);
            w.emit(EventBody::Error { kind: ErrorKind::Oom, message: msg.clone() });
            memory_event(w, p.memory_bytes / 2);
            w.emit(EventBody::End { reason: EndReason::Oom, exit_code: EXIT_OOM });
            return Err(EXIT_OOM);
        }
        Ok(setup)
    }

    /// The warm-up steps, then `ready`.
    fn warm_up(&self, w: &mut Writer, setup: f64, rate: f64) {
        let step_time = self.job.batch_size.max(1) as f64 / rate;
        let warmup_steps = match self.job.protocol {
            ProtocolKind::Window { warmup_steps, .. } => warmup_steps as u64,
            ProtocolKind::Epochs { .. } => 0,
        };
        let warmup = 1.5 + warmup_steps as f64 * step_time * 1.3;
        self.sleep(warmup);
        w.emit(EventBody::Ready { setup_seconds: setup, warmup_seconds: warmup, warmup_steps });
    }

    /// Waits for the release line on stdin (anything else aborts), then starts the window;
    /// the injected out-of-memory error comes in its first step.
    fn wait_for_release(&self, w: &mut Writer) -> Result<(), i32> {
        let job = self.job;
        let mut line = String::new();
        let released = std::io::stdin().lock().read_line(&mut line).map(|_| line.trim() == "release").unwrap_or(false);
        if !released {
            eprintln!("fake-job {}: aborted before release", job.job);
            w.emit(EventBody::End { reason: EndReason::Aborted, exit_code: EXIT_ABORTED });
            return Err(EXIT_ABORTED);
        }
        w.emit(EventBody::Release);
        w.emit(EventBody::WindowStart { step: 0 });
        if self.faults.oom {
            let msg = "CUDA out of memory. Tried to allocate 2.00 GiB (injected by COLLOC_FAKE_OOM)".to_string();
            eprintln!("fake-job {}: torch.OutOfMemoryError: {msg}", job.job);
            w.emit(EventBody::Error { kind: ErrorKind::Oom, message: msg });
            memory_event(w, self.p.memory_bytes);
            w.emit(EventBody::End { reason: EndReason::Oom, exit_code: EXIT_OOM });
            return Err(EXIT_OOM);
        }
        Ok(())
    }

    /// Protocol 2, quick: trains iteration by iteration until the stop line (read by a thread)
    /// and then one more iteration whose end lies after the line was read. `precision`: the
    /// protocol's (precision_target, max_window_seconds). Returns (steps, images, simulated
    /// seconds).
    fn train_window(
        &mut self,
        w: &mut Writer,
        rate: f64,
        window: f64,
        min_iterations: u64,
        fault_after: u64,
        precision: Option<(f64, f64)>,
    ) -> Result<(u64, u64, f64), i32> {
        let (job, p) = (self.job, self.p);
        let batch = job.batch_size.max(1) as u64;
        let step_time = batch as f64 / rate;
        let stop = Arc::new(AtomicBool::new(false));
        {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut line = String::new();
                let _ = std::io::stdin().lock().read_line(&mut line);
                stop.store(true, Ordering::SeqCst);
            });
        }
        let start = colloc_trace::monotonic_seconds();
        let mut chunk = Chunk { batch, first_step: 0, base: start, ends: Vec::new(), waits: Vec::new() };
        let (mut step, mut sim, mut last_chunk_sim, mut end) = (0u64, 0.0f64, 0.0f64, start);
        let (mut met, mut stopping, mut trained) = (false, false, false);
        // Every finished iteration's end and images, for the throughput's interval.
        let (mut ends, mut images) = (Vec::new(), Vec::new());
        loop {
            let secs = step_time * self.rng.jitter(0.05);
            let wait = (secs * p.data_wait_fraction * self.rng.jitter(0.1)).min(secs);
            sim += secs;
            end += secs * self.scale;
            if stopping {
                // The iteration after the stop line: it ends after the line was read.
                end = end.max(colloc_trace::monotonic_seconds() + secs * self.scale);
            }
            let now = colloc_trace::monotonic_seconds();
            if end > now {
                std::thread::sleep(Duration::from_secs_f64(end - now));
            }
            step += 1;
            chunk.ends.push(end);
            chunk.waits.push(wait * self.scale);
            ends.push(end);
            images.push(batch);
            if stopping {
                break;
            }
            if step == fault_after {
                if let Some(c) = chunk.take() {
                    w.emit(c);
                }
                if let Some(code) = first_sample_faults(&self.faults, job, w, p) {
                    return Err(code);
                }
            }
            let mut emitted = false;
            if sim - last_chunk_sim >= 1.0 {
                if let Some(c) = chunk.take() {
                    w.emit(c);
                    emitted = true;
                }
                last_chunk_sim = sim;
            }
            if !met {
                // As train.py: evaluated when window_seconds and min_iterations are first
                // reached, then at each chunk, and at every iteration past the maximum window.
                let first = !trained && step >= min_iterations && sim >= window;
                trained |= first;
                let past_max = precision.is_some_and(|(_, most)| sim >= most);
                if trained && (first || emitted || past_max) {
                    if let Some(body) = window_met(step, sim, start, &ends, &images, precision) {
                        met = true;
                        w.emit(body);
                    }
                }
            }
            stopping = stop.load(Ordering::SeqCst);
        }
        if let Some(c) = chunk.take() {
            w.emit(c);
        }
        Ok((step, step * batch, sim))
    }

    /// Trains until the window or the epochs are done, with a sample every `sample_every`
    /// steps (and at each epoch's end in the paper protocol). Returns (steps, images,
    /// simulated seconds).
    fn train(&mut self, w: &mut Writer, rate: f64) -> Result<(u64, u64, f64), i32> {
        let (job, p) = (self.job, self.p);
        let batch = job.batch_size.max(1) as u64;
        let step_time = batch as f64 / rate;
        let sample_every = job.protocol.sample_every().max(1) as u64;
        let per_epoch = ((job.data.train_count as f64 * job.data.fraction) / batch as f64).floor().max(1.0) as u64;
        let (paper_epochs, window) = match job.protocol {
            ProtocolKind::Epochs { epochs, .. } => (Some(epochs.max(1)), f64::INFINITY),
            ProtocolKind::Window { window_seconds, .. } => (None, window_seconds),
        };
        let mut t = Counts::default();
        let mut loss;
        loop {
            let to_sample = sample_every - t.step % sample_every;
            let n = to_sample.min(per_epoch - t.in_epoch).max(1);
            let secs = n as f64 * step_time * self.rng.jitter(0.02);
            self.sleep(secs);
            t.step += n;
            t.in_epoch += n;
            t.images += n * batch;
            t.epoch_images += n * batch;
            t.total_seconds += secs;
            t.epoch_seconds += secs;
            t.iv_images += n * batch;
            t.iv_seconds += secs;
            let wait = secs * p.data_wait_fraction * self.rng.jitter(0.1);
            t.iv_wait += wait.min(secs);
            let per_step = wait / n as f64;
            t.iv_slow += if per_step > 0.1 {
                n
            } else if per_step > 0.03 {
                (n as f64 * 0.2).round() as u64
            } else {
                0
            };
            loss = 6.9 * (-(t.step as f64) / 4000.0).exp() + 0.9 + 0.05 * (self.rng.unit() - 0.5);
            let mut stop = false;
            if t.step % sample_every == 0 {
                w.emit(t.sample(loss));
                t.samples += 1;
                if t.samples == 1 {
                    if let Some(code) = first_sample_faults(&self.faults, job, w, p) {
                        return Err(code);
                    }
                }
                stop = paper_epochs.is_none() && t.total_seconds >= window;
            }
            if t.in_epoch == per_epoch {
                if paper_epochs.is_some() && t.iv_images > 0 {
                    w.emit(t.sample(loss));
                }
                let (val_seconds, val_top1, val_loss) = if paper_epochs.is_some() && job.training.validate_every_epoch {
                    let vs = (job.data.val_count as f64 * job.data.fraction) / (3.0 * rate);
                    self.sleep(vs);
                    t.total_seconds += vs;
                    let top1 = 60.0 * (1.0 - (-(t.epoch as f64 + 1.0) / 4.0).exp()) * self.rng.jitter(0.02);
                    (Some(vs), Some(top1.clamp(0.0, 100.0)), Some(loss + 0.1))
                } else {
                    (None, None, None)
                };
                w.emit(EventBody::EpochEnd {
                    epoch: t.epoch,
                    images: t.epoch_images,
                    train_seconds: t.epoch_seconds,
                    val_seconds,
                    val_top1,
                    val_loss,
                });
                t.epoch += 1;
                (t.in_epoch, t.epoch_images, t.epoch_seconds) = (0, 0, 0.0);
                if paper_epochs == Some(t.epoch) {
                    break;
                }
            }
            if stop {
                break;
            }
        }
        Ok((t.step, t.images, t.total_seconds))
    }
}

/// Iterations not yet reported, with the end of the one before them.
struct Chunk {
    batch: u64,
    first_step: u64,
    base: f64,
    ends: Vec<f64>,
    waits: Vec<f64>,
}

impl Chunk {
    /// The `iterations` event of the iterations collected so far; the next chunk counts from
    /// the last of them.
    fn take(&mut self) -> Option<EventBody> {
        if self.ends.is_empty() {
            return None;
        }
        let us = |s: f64| (s * 1e6).round().max(0.0) as u64;
        let n = self.ends.len() as u64;
        let base = self.base;
        let body = EventBody::Iterations {
            first_step: self.first_step,
            base_mono: base,
            end_us: self.ends.iter().map(|e| us(e - base)).collect(),
            images: vec![self.batch; self.ends.len()],
            data_wait_us: self.waits.iter().map(|w| us(*w)).collect(),
        };
        self.first_step += n;
        self.base = self.ends.last().copied().unwrap_or(base);
        self.ends.clear();
        self.waits.clear();
        Some(body)
    }
}

/// The `window_met` event if the window is met now, `window_seconds` and `min_iterations`
/// trained: without a target at once; with one (`precision`: target, maximum window), once the
/// interval of the throughput over the iterations' (real-clock) ends since `start` is within
/// the target, or once `seconds` (simulated) reach the maximum.
fn window_met(
    step: u64,
    seconds: f64,
    start: f64,
    ends: &[f64],
    images: &[u64],
    precision: Option<(f64, f64)>,
) -> Option<EventBody> {
    let ci_rel = colloc_trace::precision::throughput_ci(start, ends, images).map(|c| c.ci_rel);
    let precision_met = match precision {
        None => None,
        Some((target, _)) if ci_rel.is_some_and(|c| c <= target) => Some(true),
        Some((_, most)) if seconds >= most => Some(false),
        Some(_) => return None,
    };
    Some(EventBody::WindowMet { step, seconds, ci_rel, precision_met })
}

fn first_sample_faults(f: &Faults, job: &JobFile, w: &mut Writer, p: &FakeParams) -> Option<i32> {
    if f.crash {
        eprintln!("fake-job {}: crashing (COLLOC_FAKE_CRASH)", job.job);
        // SAFETY: the job kills itself, as a crash would.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
    if f.hang {
        eprintln!("fake-job {}: hanging (COLLOC_FAKE_HANG)", job.job);
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    if f.fail {
        eprintln!(
            "fake-job {}: Traceback (most recent call last):\nRuntimeError: injected failure (COLLOC_FAKE_FAIL)",
            job.job
        );
        w.emit(EventBody::Error { kind: ErrorKind::Exception, message: "RuntimeError: injected failure".into() });
        memory_event(w, p.memory_bytes);
        w.emit(EventBody::End { reason: EndReason::Error, exit_code: EXIT_ERROR });
        return Some(EXIT_ERROR);
    }
    None
}

fn memory_event(w: &mut Writer, bytes: u64) {
    w.emit(EventBody::Memory {
        allocated_bytes: bytes * 4 / 5,
        reserved_bytes: bytes,
        peak_allocated_bytes: bytes * 9 / 10,
        peak_reserved_bytes: bytes,
    });
}
