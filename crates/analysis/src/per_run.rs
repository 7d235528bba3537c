//! One run: the common training window, per-job throughput and data wait, host CPU, memory
//! and the GPU's activity in that window.
//!
//! Protocol version 1 (the first quick protocol): the window is the intersection of the
//! jobs' own windows, each job measured on its samples that end inside it. Version 2: the
//! window is the runner's `[release_mono, window_end_mono]`, and each job is measured over
//! exactly that interval from its per-iteration end times, the iterations that straddle an
//! edge credited pro rata (the first iteration after release spans release → its end).

use colloc_trace::events::{log_protocol_version, EndReason, Event, EventBody};
use colloc_trace::meta::RunStatus;

use crate::exact::{ExactSum, FINE};
use crate::gpu_use::GpuUse;
use crate::host_use::HostUse;
use crate::load::{self, Iterations, RunData};
use crate::model::{JobRun, RunResult, ThroughputCi, TimelinePoint, Window};

/// What one run yields: its result (ratios filled in later), and whether its telemetry gives
/// a timeline over its window ([`timeline`] reads it).
pub(crate) struct RunAnalysis {
    pub result: RunResult,
    pub has_timeline: bool,
}

/// What a run's samples are summed for, decided from its `meta.json` and events before the
/// samples are read: the common window (none for a run that is not ok, measured over whole
/// epochs or without a window), the notes on finding it, and the sums the telemetry and
/// process files' readers feed. (The samples of a timeline are read apart, by [`timeline`],
/// for the one run of a workload whose timeline is shown.)
pub(crate) struct Measurement {
    window: Option<Window>,
    notes: Vec<String>,
    pub gpu: GpuUse,
    pub host: HostUse,
    /// Whether the run has each file (set by its reader).
    pub has_telemetry: bool,
    pub has_processes: bool,
}

/// The run's window and the sums over it to be fed.
pub(crate) fn measurement(run: &RunData) -> Measurement {
    let m = &run.meta;
    let mut notes = Vec::new();
    let window = if m.status != RunStatus::Ok || m.whole_epochs() {
        None
    } else if protocol_version(run) >= 2 {
        runner_window(m, &mut notes)
    } else {
        common_window(&run.events, &mut notes)
    }
    .map(|w| Window { clock_scale: clock_scale(&run.events), ..w });
    Measurement {
        window,
        notes,
        gpu: GpuUse::new(window, false),
        host: HostUse::new(window, run.workload.jobs.len()),
        has_telemetry: false,
        has_processes: false,
    }
}

fn protocol_version(run: &RunData) -> u32 {
    run.events.first().map_or(1, |e| log_protocol_version(e))
}

/// The run measured: its throughputs from its events, its samples' sums over its window.
pub(crate) fn analyse_run(run: &RunData, measured: Measurement) -> RunAnalysis {
    let m = &run.meta;
    let Measurement { window, mut notes, mut gpu, host, has_telemetry, has_processes } = measured;
    let mut jobs: Vec<JobRun> = (0..run.workload.jobs.len()).map(|i| empty_job(run, i)).collect();
    let mut result = RunResult {
        run_id: m.run_id.clone(),
        workload_id: m.workload_id.clone(),
        repetition: m.repetition,
        attempt: m.attempt,
        superseded: false,
        status: m.status,
        reason: m.reason.clone(),
        mode_applied: m.mode.as_str().to_string(),
        simulated: m.simulated,
        started_at: m.started_at.clone(),
        ended_at: m.ended_at.clone(),
        host_id: m.gpu.as_ref().map(|g| g.uuid.clone()),
        host_cpu_single_thread_mib_s: m.host.calibration.as_ref().map(|c| c.single_thread_mib_s),
        git_commit: m.software.git_commit.as_ref().map(|c| c.chars().take(12).collect()),
        protocol_version: protocol_version(run),
        window: None,
        jobs: Vec::new(),
        aggregate_throughput: None,
        aggregate_ratio: None,
        cross_host_baseline: false,
        invocation: m.invocation.clone(),
        settled: m.settled.is_some(),
        disturbed: false,
        utilisation: None,
        energy_per_image_j: None,
        notes: Vec::new(),
    };
    if m.status != RunStatus::Ok {
        result.jobs = jobs;
        return RunAnalysis { result, has_timeline: false };
    }
    if m.whole_epochs() {
        epoch_throughputs(run, &mut jobs, &mut notes);
        if jobs.iter().all(|j| j.throughput.is_some()) {
            result.aggregate_throughput = Some(jobs.iter().filter_map(|j| j.throughput).sum());
        }
        // Whole epochs: measured from the release to the end.
        result.disturbed = foreign_processes(m, m.release_mono.unwrap_or(f64::NEG_INFINITY), f64::INFINITY, &mut notes);
        result.jobs = jobs;
        result.notes = notes;
        return RunAnalysis { result, has_timeline: false };
    }

    let v2 = result.protocol_version >= 2;
    let mut has_timeline = false;
    if let Some(w) = window {
        if w.clock_scale != 1.0 {
            notes.push(format!("the jobs' clock runs {:.3}× the host's (simulated time)", w.clock_scale));
        }
        let per_job = if v2 {
            iteration_throughputs(&run.iterations, w, &mut notes)
        } else {
            let mut sums = job_throughputs(&run.events, w);
            for s in &mut sums {
                s.ci = run.events.get(s.job).map_or(Err(CI_TOO_FEW.to_string()), |evs| sample_ci(evs, w));
            }
            sums
        };
        let mut images_total = 0.0;
        let mut have_all = true;
        for (i, job) in jobs.iter_mut().enumerate() {
            match per_job.iter().find(|r| r.job == i) {
                Some(r) if r.seconds > 0.0 => {
                    let tp = r.images / r.seconds;
                    job.throughput = Some(tp);
                    job.data_wait_share = Some(r.data_wait / r.seconds);
                    job.slow_data_steps = Some(r.slow_steps);
                    job.measured_over = r.interval;
                    if let (Some([from, to]), Some(it), Some(pj)) =
                        (r.interval, run.iterations.get(i), run.workload.jobs.get(i))
                    {
                        let per_epoch =
                            (pj.data.train_count as f64 * pj.data.fraction) as u64 / pj.batch_size.max(1) as u64;
                        job.epoch_start_wait_share = epoch_start_wait_share(it, from, to, per_epoch as usize);
                    }
                    match &r.ci {
                        Ok(ci) => job.throughput_ci = Some(*ci),
                        Err(why) => job.throughput_ci_missing = Some(why.clone()),
                    }
                    let train = run.workload.jobs[i].data.train_count as f64;
                    job.epoch_seconds = (tp > 0.0 && train > 0.0).then(|| train / tp);
                    images_total += tp * w.job_seconds();
                }
                _ => {
                    have_all = false;
                    let what = if v2 { "iterations" } else { "training samples" };
                    notes.push(format!("job {i}: no {what} inside the common window"));
                }
            }
        }
        if have_all {
            result.aggregate_throughput = Some(jobs.iter().filter_map(|j| j.throughput).sum());
        }
        if has_processes {
            host.fill(&mut jobs);
        }
        if has_telemetry {
            let u = gpu.utilisation();
            if let (Some(e), true) = (u.as_ref().and_then(|u| u.energy_j), have_all && images_total > 0.0) {
                result.energy_per_image_j = Some(e / images_total);
            }
            result.utilisation = u;
            has_timeline = true;
        } else {
            notes.push("no telemetry".to_string());
        }
        result.disturbed = foreign_processes(m, w.start_mono, w.end_mono, &mut notes);
        result.window = Some(w);
    }
    result.jobs = jobs;
    result.notes = notes;
    RunAnalysis { result, has_timeline }
}

/// The utilisation timeline of the run in `dir` over its window `w`, read again from the
/// run's `telemetry.csv.gz`: every telemetry sample in it, or each span's extremes when there
/// are many (with the number of spans).
pub(crate) fn timeline(
    dir: &std::path::Path,
    pass: &colloc_trace::manifest::OnePass,
    w: Window,
) -> anyhow::Result<(Vec<TimelinePoint>, Option<u32>)> {
    let mut gpu = GpuUse::new(Some(w), true);
    load::read_telemetry(dir, pass, &mut gpu)?;
    Ok(gpu.timeline())
}

/// Whole epochs (no common window): each job's throughput from its `epoch_end` events, the
/// images over the training seconds (validation left out) of its epochs after the first
/// (which carries the start-up: cuDNN autotuning, the loader's first fill), or of its only
/// one; collocated jobs are measured each over its own epochs, which need not coincide.
fn epoch_throughputs(run: &RunData, jobs: &mut [JobRun], notes: &mut Vec<String>) {
    for (i, job) in jobs.iter_mut().enumerate() {
        let events = run.events.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let epochs: Vec<(f64, f64)> = events
            .iter()
            .filter_map(|e| match e.body {
                EventBody::EpochEnd { images, train_seconds, .. } if images > 0 && train_seconds > 0.0 => {
                    Some((images as f64, train_seconds))
                }
                _ => None,
            })
            .collect();
        job.epoch_start_seconds = epoch_start_seconds(events);
        let steady = if epochs.len() >= 2 { &epochs[1..] } else { &epochs[..] };
        let (images, seconds) = steady.iter().fold((0.0, 0.0), |(a, b), (i, s)| (a + i, b + s));
        if images > 0.0 && seconds > 0.0 {
            let tp = images / seconds;
            job.throughput = Some(tp);
            let train = run.workload.jobs[i].data.train_count as f64;
            job.epoch_seconds = (train > 0.0).then(|| train / tp);
        } else {
            notes.push(format!("job {i}: no whole epoch in its events"));
        }
    }
}

/// What an epoch after the first loses at its start: the seconds of its first `sample`
/// interval beyond what that interval's images take at the rate of the epoch's other
/// intervals; the median over the epochs after the first that have at least three intervals
/// (`None` without one). The first epoch carries the start-up and is left out. It may come out
/// slightly negative when the epoch's rate varies more than its start costs.
pub(crate) fn epoch_start_seconds(events: &[Event]) -> Option<f64> {
    let mut starts = Vec::new();
    let mut interval: Vec<(f64, f64)> = Vec::new();
    let mut epochs_ended = 0u32;
    for e in events {
        match e.body {
            EventBody::Sample { images, seconds, .. } if images > 0 && seconds > 0.0 => {
                interval.push((images as f64, seconds))
            }
            EventBody::EpochEnd { .. } => {
                if epochs_ended > 0 && interval.len() >= 3 {
                    let (first, rest) = (interval[0], &interval[1..]);
                    let (images, seconds) = rest.iter().fold((0.0, 0.0), |(a, b), (i, s)| (a + i, b + s));
                    if images > 0.0 && seconds > 0.0 {
                        starts.push(first.1 - first.0 * seconds / images);
                    }
                }
                epochs_ended += 1;
                interval.clear();
            }
            _ => {}
        }
    }
    crate::model::Stats::of(starts).map(|s| s.median)
}

/// The job's record without window measurements: failure, epochs, PyTorch memory.
fn empty_job(run: &RunData, i: usize) -> JobRun {
    let events = run.events.get(i).map(Vec::as_slice).unwrap_or(&[]);
    let train_count = run.workload.jobs.get(i).map_or(0.0, |j| j.data.train_count as f64);
    let mut epochs: Vec<f64> = Vec::new();
    let mut peak_reserved: Option<f64> = None;
    let mut error = None;
    let mut end_reason = None;
    for e in events {
        match &e.body {
            // Scaled to the whole training set: a generated set may be cut to a fraction.
            EventBody::EpochEnd { train_seconds, images, .. } if *images > 0 && train_count > 0.0 => {
                epochs.push(*train_seconds * train_count / *images as f64)
            }
            EventBody::Memory { peak_reserved_bytes, reserved_bytes, .. } => {
                let v = (*peak_reserved_bytes).max(*reserved_bytes) as f64;
                peak_reserved = Some(peak_reserved.map_or(v, |p: f64| p.max(v)));
            }
            EventBody::Error { kind, message } => error = Some(format!("{kind:?}: {message}").to_lowercase()),
            EventBody::End { reason, .. } => end_reason = Some(*reason),
            _ => {}
        }
    }
    let record_failure = run.meta.jobs.iter().find(|j| j.index as usize == i).and_then(|j| j.failure.clone());
    let failure = record_failure.or(error).or_else(|| match end_reason {
        Some(EndReason::Oom) => Some("out of memory".to_string()),
        Some(EndReason::Error) => Some("error".to_string()),
        _ => None,
    });
    JobRun {
        measured_epoch_seconds: crate::model::Stats::of(epochs.iter().copied()).map(|s| s.median),
        epochs_measured: epochs.len() as u32,
        torch_peak_reserved_bytes: peak_reserved,
        failure,
        ..JobRun::new(i as u32)
    }
}

/// Whether a process of no job was on the GPU during `[start, end]` (host monotonic
/// seconds), as the runner's sampler saw it (`telemetry.foreign_processes`); a note names
/// each such process.
fn foreign_processes(m: &colloc_trace::meta::RunMeta, start: f64, end: f64, notes: &mut Vec<String>) -> bool {
    let mut disturbed = false;
    for f in &m.telemetry.foreign_processes {
        // The run's own MPS server, which a runner matching its whole name only recorded
        // under its 15-byte command name.
        if f.is_mps_server() || f.first_seen_mono > end || f.last_seen_mono < start {
            continue;
        }
        disturbed = true;
        let mem = f
            .gpu_memory_bytes
            .map(|b| format!(", {:.2} GiB of GPU memory", b as f64 / (1u64 << 30) as f64))
            .unwrap_or_default();
        let when = if start.is_finite() {
            format!(
                "from {:.2} s to {:.2} s after the window's start",
                f.first_seen_mono - start,
                f.last_seen_mono - start
            )
        } else {
            format!("from {:.2} to {:.2} (host monotonic seconds)", f.first_seen_mono, f.last_seen_mono)
        };
        notes.push(format!(
            "a foreign process was on the GPU during the measurement: pid {} ({}{mem}), {when}; \
             this run's numbers are disturbed",
            f.pid,
            f.name.as_deref().unwrap_or("name unknown"),
        ));
    }
    disturbed
}

/// Protocol 2: the runner's common window `[release_mono, window_end_mono]`.
fn runner_window(m: &colloc_trace::meta::RunMeta, notes: &mut Vec<String>) -> Option<Window> {
    match (m.release_mono, m.window_end_mono) {
        (Some(start), Some(end)) if end > start => {
            Some(Window { start_mono: start, end_mono: end, seconds: end - start, clock_scale: 1.0 })
        }
        _ => {
            notes.push("no common window in meta.json (release_mono, window_end_mono)".to_string());
            None
        }
    }
}

/// What a job trained inside `[from, to]`, the iterations that straddle an edge credited by
/// the share of their duration inside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Credited {
    pub images: f64,
    /// Data wait inside the interval, in the waits' unit.
    pub data_wait: f64,
    /// Iterations inside the interval whose wait exceeded `slow` (pro rata too).
    pub slow_steps: f64,
    /// The interval the job is measured over: `[from, min(to, last end)]`.
    pub measured_from: f64,
    pub measured_to: f64,
}

/// Credits each iteration `i`, spanning `(ends[i-1], ends[i]]` (the first recorded one from
/// `from`, the release), with the share of its duration inside `[from, to]`: its images, its data wait
/// and whether its wait exceeded `slow`. `None` when no iteration ends after `from`.
pub(crate) fn credit(ends: &[f64], images: &[f64], waits: &[f64], from: f64, to: f64, slow: f64) -> Option<Credited> {
    let last = *ends.last()?;
    if last <= from || to <= from {
        return None;
    }
    let mut c =
        Credited { images: 0.0, data_wait: 0.0, slow_steps: 0.0, measured_from: from, measured_to: to.min(last) };
    // The iterations that end by `from` are credited nothing (their share is 0 whatever
    // their start): skipped without the division, the first one after them starting where
    // the last of them ended.
    let skip = ends.iter().take_while(|&&end| end <= from).count();
    let mut start = if skip == 0 { from } else { ends[skip - 1] };
    for ((&end, &img), &wait) in
        ends[skip..].iter().zip(&images[skip.min(images.len())..]).zip(&waits[skip.min(waits.len())..])
    {
        let (a, b) = (start.max(from), end.min(to));
        let share = if end > start {
            // Wholly inside, its share `(end - start) / (end - start)` is 1 exactly.
            if start >= from && end <= to {
                1.0
            } else {
                ((b - a) / (end - start)).clamp(0.0, 1.0)
            }
        } else if end > from && end <= to {
            1.0 // an iteration of no measurable length, inside the interval
        } else {
            0.0
        };
        if b > a || share > 0.0 {
            c.images += img * share;
            c.data_wait += wait * share;
            if wait > slow {
                c.slow_steps += share;
            }
        }
        start = end;
        if end >= to {
            break;
        }
    }
    Some(c)
}

/// Protocol 2: per job, the images and data wait credited over the common window from its
/// per-iteration times; the seconds are the window's on the jobs' clock.
fn iteration_throughputs(iterations: &[Iterations], w: Window, notes: &mut Vec<String>) -> Vec<JobWindowSums> {
    let mut out = Vec::new();
    for (i, it) in iterations.iter().enumerate() {
        // A wait over 0.1 s on the jobs' clock.
        let Some(c) = credit(&it.ends, &it.images, &it.waits, w.start_mono, w.end_mono, 0.1 / w.clock_scale) else {
            continue;
        };
        if c.measured_to < w.end_mono - 1e-3 {
            notes.push(format!(
                "job {i}: its iterations end {:.3} s before the common window does",
                w.end_mono - c.measured_to
            ));
        }
        let host = c.measured_to - c.measured_from;
        out.push(JobWindowSums {
            job: i,
            images: c.images,
            seconds: host * w.clock_scale,
            data_wait: c.data_wait * w.clock_scale,
            slow_steps: c.slow_steps,
            interval: Some([c.measured_from, c.measured_to]),
            ci: throughput_ci(&it.ends, &it.images, c.measured_from, c.measured_to, w.clock_scale),
        });
    }
    out
}

/// The share of `[from, to]` a job's loader spent starting epochs of `per_epoch`
/// iterations: the waits of the iterations at the position in an epoch whose waits sum
/// highest, beyond the mean wait of the other iterations, over the interval. `None` when
/// the interval holds fewer than two epochs (the position cannot be told) or no epoch.
pub(crate) fn epoch_start_wait_share(it: &Iterations, from: f64, to: f64, per_epoch: usize) -> Option<f64> {
    let inside: Vec<(usize, f64)> = (0..it.ends.len())
        .filter(|&k| it.ends[k] > from && it.ends[k] <= to)
        .map(|k| (k, it.waits.get(k).copied().unwrap_or(0.0)))
        .collect();
    if per_epoch < 2 || inside.len() < 2 * per_epoch || to <= from {
        return None;
    }
    let mut by_position = vec![0.0; per_epoch];
    for (k, w) in &inside {
        by_position[k % per_epoch] += w;
    }
    let start = (0..per_epoch).max_by(|a, b| by_position[*a].total_cmp(&by_position[*b]))?;
    let starts: Vec<f64> = inside.iter().filter(|(k, _)| k % per_epoch == start).map(|(_, w)| *w).collect();
    let others: Vec<f64> = inside.iter().filter(|(k, _)| k % per_epoch != start).map(|(_, w)| *w).collect();
    let mean = others.iter().sum::<f64>() / others.len().max(1) as f64;
    Some((starts.iter().map(|w| w - mean).sum::<f64>() / (to - from)).max(0.0))
}

/// The intersection of the jobs' `[window_start, window_end]`.
fn common_window(events: &[Vec<Event>], notes: &mut Vec<String>) -> Option<Window> {
    let mut start = f64::NEG_INFINITY;
    let mut end = f64::INFINITY;
    for (i, evs) in events.iter().enumerate() {
        let s = evs
            .iter()
            .find(|e| matches!(e.body, EventBody::WindowStart { .. }))
            .or_else(|| evs.iter().find(|e| matches!(e.body, EventBody::Release)))
            .map(|e| e.mono);
        let t = evs
            .iter()
            .rev()
            .find(|e| matches!(e.body, EventBody::WindowEnd { .. }))
            .or_else(|| evs.iter().rev().find(|e| matches!(e.body, EventBody::Sample { .. })))
            .map(|e| e.mono);
        match (s, t) {
            (Some(s), Some(t)) => {
                start = start.max(s);
                end = end.min(t);
            }
            _ => {
                notes.push(format!("job {i}: no measurement window in its events"));
                return None;
            }
        }
    }
    if events.is_empty() || end.partial_cmp(&start) != Some(std::cmp::Ordering::Greater) {
        notes.push("the jobs' measurement windows do not overlap".to_string());
        return None;
    }
    Some(Window { start_mono: start, end_mono: end, seconds: end - start, clock_scale: 1.0 })
}

struct JobWindowSums {
    job: usize,
    images: f64,
    seconds: f64,
    data_wait: f64,
    slow_steps: f64,
    /// Protocol 2: the host monotonic interval the job was measured over.
    interval: Option<[f64; 2]>,
    /// The 95% interval of the throughput, or why there is none.
    ci: Result<ThroughputCi, String>,
}

/// Per job, the images, seconds and data wait of the samples that end inside the window
/// (those of some seconds), in the jobs' order, for the jobs that have any. Samples are
/// summed in their own seconds (the job's clock), never in host time.
fn job_throughputs(events: &[Vec<Event>], w: Window) -> Vec<JobWindowSums> {
    let mut out = Vec::new();
    for (job, evs) in events.iter().enumerate() {
        let [mut images, mut seconds, mut data_wait, mut slow_steps] = [ExactSum::new(FINE); 4];
        for e in evs {
            if let EventBody::Sample { images: n, seconds: s, data_wait_seconds, slow_data_steps, .. } = &e.body {
                if w.contains(e.mono) && *s > 0.0 {
                    images.add(Some(*n as f64));
                    seconds.add(Some(*s));
                    data_wait.add(Some(*data_wait_seconds));
                    slow_steps.add(Some(*slow_data_steps as f64));
                }
            }
        }
        if seconds.count() > 0 {
            out.push((job, [images, seconds, data_wait, slow_steps]));
        }
    }
    let groups = out.len();
    out.into_iter()
        .map(|(job, [images, seconds, data_wait, slow_steps])| JobWindowSums {
            job,
            images: images.sum(groups),
            seconds: seconds.sum(groups),
            data_wait: data_wait.sum(groups),
            slow_steps: slow_steps.sum(groups),
            interval: None,
            ci: Err(CI_TOO_FEW.to_string()),
        })
        .collect()
}

/// Why a job has no confidence interval when its window holds fewer than 20 records.
pub(crate) const CI_TOO_FEW: &str = "too few iterations in the window for a 95% interval";

/// `t(0.975, df)` for `df` = 3, ..., 9 degrees of freedom.
const T_975: [f64; 7] = [3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262];

/// The 95% confidence interval of a job's throughput over `[a, b]` by batch means, as
/// [`ThroughputCi`] defines it (one definition, shared with the job-side stopping rule):
/// `ends` and `images` are the job's iteration records in order, each spanning from the
/// previous record's end to its own (the first from `a` when it ends after `a`); `N`
/// records end in `[a, b]`; `[a, b]` is cut into `k = min(10, floor(N / 5))` equal
/// sub-intervals, each credited by [`credit`] (records straddling an edge pro rata in time);
/// the half-width is `t(0.975, k − 1) · s / √k` over the `k` batch throughputs (images per
/// second of the jobs' clock: host seconds times `clock_scale`). `Err` with the reason when
/// `k < 4`.
pub(crate) fn throughput_ci(
    ends: &[f64],
    images: &[f64],
    a: f64,
    b: f64,
    clock_scale: f64,
) -> Result<ThroughputCi, String> {
    let n = ends.iter().filter(|e| (a..=b).contains(*e)).count();
    let k = (n / 5).min(10);
    if k < 4 || b <= a || clock_scale <= 0.0 || clock_scale.is_nan() {
        return Err(CI_TOO_FEW.to_string());
    }
    // The first record spans from `a` when it ends after it: a record of no images ending at
    // `a` makes `credit` start every sub-interval's records there, not at the sub-interval.
    let (mut e, mut im) = (Vec::with_capacity(ends.len() + 1), Vec::with_capacity(ends.len() + 1));
    if ends.first().is_some_and(|first| *first > a) {
        e.push(a);
        im.push(0.0);
    }
    e.extend_from_slice(ends);
    im.extend_from_slice(&images[..ends.len().min(images.len())]);
    e.truncate(im.len());
    let waits = vec![0.0; e.len()];
    let edge = |i: usize| if i == k { b } else { a + (b - a) * i as f64 / k as f64 };
    let batches: Vec<f64> = (0..k)
        .map(|i| {
            let (from, to) = (edge(i), edge(i + 1));
            let credited = credit(&e, &im, &waits, from, to, f64::INFINITY).map_or(0.0, |c| c.images);
            credited / ((to - from) * clock_scale)
        })
        .collect();
    let mean = batches.iter().sum::<f64>() / k as f64;
    let var = batches.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    let half_width = T_975[k - 4] * var.sqrt() / (k as f64).sqrt();
    if mean <= 0.0 || mean.is_nan() {
        return Err("no images in the window".to_string());
    }
    Ok(ThroughputCi {
        window: [a, b],
        records: n as u32,
        batches: k as u32,
        mean,
        half_width,
        relative_half_width: half_width / mean,
    })
}

/// Protocol 1: the interval of one job's samples that end inside the common window (those
/// [`job_throughputs`] counts), from the previous sample's end (else the job's
/// `window_start`) to the last one's end, each sample one record.
fn sample_ci(events: &[Event], w: Window) -> Result<ThroughputCi, String> {
    let samples: Vec<(f64, f64, f64)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Sample { images, seconds, .. } => Some((e.mono, *images as f64, *seconds)),
            _ => None,
        })
        .collect();
    let counted = |s: &(f64, f64, f64)| w.contains(s.0) && s.2 > 0.0;
    let (Some(first), Some(last)) = (samples.iter().position(counted), samples.iter().rposition(counted)) else {
        return Err(CI_TOO_FEW.to_string());
    };
    let a = match first {
        0 => events
            .iter()
            .find(|e| matches!(e.body, EventBody::WindowStart { .. }))
            .map(|e| e.mono)
            .filter(|m| *m < samples[0].0)
            .unwrap_or(samples[0].0 - samples[0].2 / w.clock_scale),
        i => samples[i - 1].0,
    };
    let records = &samples[first..=last];
    let ends: Vec<f64> = records.iter().map(|s| s.0).collect();
    let images: Vec<f64> = records.iter().map(|s| s.1).collect();
    throughput_ci(&ends, &images, a, samples[last].0, w.clock_scale)
}

/// Job seconds per host second: the jobs' own window lengths (`window_end.seconds`) over the
/// window in host monotonic time. 1 for real traces; the time scale for simulated ones,
/// whose jobs count simulated seconds while their events carry host time.
fn clock_scale(events: &[Vec<Event>]) -> f64 {
    let ratios = events.iter().filter_map(|evs| {
        let start = evs.iter().find(|e| matches!(e.body, EventBody::WindowStart { .. }))?.mono;
        let end = evs.iter().rev().find(|e| matches!(e.body, EventBody::WindowEnd { .. }))?;
        let EventBody::WindowEnd { seconds, .. } = end.body else { return None };
        let host = end.mono - start;
        (host > 0.0 && seconds > 0.0).then(|| seconds / host)
    });
    match crate::model::Stats::of(ratios) {
        // Within 5 %: the same clock (the job's window is measured a little apart from its events).
        Some(s) if (s.median - 1.0).abs() > 0.05 => s.median,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::{credit, epoch_start_seconds, job_throughputs, throughput_ci, CI_TOO_FEW};
    use crate::model::Window;
    use colloc_trace::events::{Event, EventBody};

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }

    fn at(mono: f64, body: EventBody) -> Event {
        Event { mono, wall: mono, job: 0, body }
    }
    fn sample(images: u64, seconds: f64) -> EventBody {
        EventBody::Sample { step: 0, images, seconds, data_wait_seconds: 0.0, slow_data_steps: 0, loss: 1.0 }
    }
    fn epoch_end(epoch: u32) -> EventBody {
        EventBody::EpochEnd { epoch, images: 0, train_seconds: 1.0, val_seconds: None, val_top1: None, val_loss: None }
    }

    /// Epoch 0 (left out: the start-up) is slow throughout. Epoch 1: a first interval of 100
    /// images in 1.5 s, then 400 images in 1 s and 200 in 0.5 s (400 img/s):
    /// the first's 100 images take 0.25 s at that rate, so the start costs 1.25 s. Epoch 2:
    /// 100 in 0.5 s, then 800 in 2 s: 0.25 s. The median of 1.25 and 0.25 is 0.75 s. An
    /// epoch of two intervals has too few to tell its rate from its start.
    #[test]
    fn an_epochs_start_is_its_first_interval_beyond_the_epochs_own_rate() {
        let mut evs = vec![
            at(0.0, sample(100, 9.0)),
            at(1.0, sample(100, 9.0)),
            at(1.0, sample(100, 9.0)),
            at(2.0, epoch_end(0)),
        ];
        evs.extend([
            at(3.0, sample(100, 1.5)),
            at(4.0, sample(400, 1.0)),
            at(5.0, sample(200, 0.5)),
            at(6.0, epoch_end(1)),
        ]);
        evs.extend([
            at(7.0, sample(100, 0.5)),
            at(8.0, sample(400, 1.0)),
            at(9.0, sample(400, 1.0)),
            at(9.5, epoch_end(2)),
        ]);
        close(epoch_start_seconds(&evs).unwrap(), 0.75);
        // Without epoch 2, epoch 1 alone; with only epoch 0, none.
        close(epoch_start_seconds(&evs[..8]).unwrap(), 1.25);
        assert_eq!(epoch_start_seconds(&evs[..4]), None);
        // Two intervals in epoch 1: none.
        let short =
            [&evs[..4], &[at(3.0, sample(100, 1.5)), at(4.0, sample(400, 1.0)), at(6.0, epoch_end(1))][..]].concat();
        assert_eq!(epoch_start_seconds(&short), None);
    }

    /// Release at 10.0, stop at 11.0. Iterations end at 10.3, 10.7, 11.1, 11.5 with 100 images
    /// each: the first spans 10.0 → 10.3 (all inside), the second all inside, the third
    /// 10.7 → 11.1 is 3/4 inside (0.3 of its 0.4 s), the fourth is outside.
    /// Images: 100 + 100 + 75 = 275 in 1 s.
    #[test]
    fn iterations_straddling_the_stop_are_credited_pro_rata() {
        let ends = [10.3, 10.7, 11.1, 11.5];
        let c = credit(&ends, &[100.0; 4], &[0.0, 0.2, 0.04, 0.5], 10.0, 11.0, 0.1).unwrap();
        close(c.images, 275.0);
        // Waits: 0 + 0.2 + 0.75 × 0.04 = 0.23; slow (> 0.1 s): the second, wholly inside.
        close(c.data_wait, 0.23);
        close(c.slow_steps, 1.0);
        close(c.measured_from, 10.0);
        close(c.measured_to, 11.0);
    }

    /// The window starts inside an iteration of the records: iterations ending at 9.8 (before
    /// release), 10.2 and 10.6 with 64 images; release 10.0, stop 10.5. The first is outside,
    /// the second (9.8 → 10.2) is half inside: 32; the third (10.2 → 10.6) 3/4: 48. 80 images.
    #[test]
    fn an_iteration_straddling_the_release_is_credited_pro_rata() {
        let c = credit(&[9.8, 10.2, 10.6], &[64.0; 3], &[0.0; 3], 10.0, 10.5, 0.1).unwrap();
        close(c.images, 80.0);
    }

    /// The first iteration after release spans release → its end even when the job's own
    /// reference came later: release 5.0, ends 5.5 and 6.0, stop 5.75: 10 + 5 = 15 images.
    #[test]
    fn the_first_iteration_spans_the_release_to_its_end() {
        let c = credit(&[5.5, 6.0], &[10.0, 10.0], &[0.1, 0.1], 5.0, 5.75, 1.0).unwrap();
        close(c.images, 15.0);
        close(c.data_wait, 0.15);
        close(c.slow_steps, 0.0);
    }

    /// Records that stop short of the window: measured up to the last end only.
    #[test]
    fn records_short_of_the_stop_are_measured_to_their_last_end() {
        let c = credit(&[1.5, 2.0], &[8.0, 8.0], &[0.0, 0.0], 1.0, 3.0, 0.1).unwrap();
        close(c.images, 16.0);
        close(c.measured_to, 2.0);
        assert!(credit(&[0.5], &[8.0], &[0.0], 1.0, 3.0, 0.1).is_none());
        assert!(credit(&[], &[], &[], 1.0, 3.0, 0.1).is_none());
    }

    /// Iterations of 0.1 s and 0.3 s in turn, 128 images each, from 0 to 10 s: 50 records,
    /// k = 10 batches of 1 s. A batch starting on a pair's start holds 5 whole iterations
    /// and a third of the next (0.9 → 1.2 s): 682.667 img/s; the next starts two thirds into
    /// that one: 85.333 + 4 × 128 = 597.333. Mean 640, s = 42.667 · √(10/9), half-width
    /// 2.262 · s / √10 = 2.262 · 42.667 / 3 = 32.171 img/s.
    #[test]
    fn alternating_iterations_give_the_hand_computed_half_width() {
        let mut ends = Vec::new();
        let mut t = 0.0;
        for i in 0..50 {
            t += if i % 2 == 0 { 0.1 } else { 0.3 };
            ends.push(t);
        }
        let ci = throughput_ci(&ends, &[128.0; 50], 0.0, ends[49], 1.0).unwrap();
        close(ends[49], 10.0);
        assert_eq!((ci.records, ci.batches), (50, 10));
        close(ci.mean, 640.0);
        assert!((ci.half_width - 2.262 * 128.0 / 3.0 / 3.0).abs() < 1e-6, "{ci:?}");
        assert!((ci.relative_half_width - 32.1707 / 640.0).abs() < 1e-5, "{ci:?}");
    }

    /// Regular iterations: every batch has the same throughput, whatever the edges cut.
    #[test]
    fn regular_iterations_have_no_width_and_few_have_no_interval() {
        let ends: Vec<f64> = (1..=37).map(|i| 5.0 + 0.27 * i as f64).collect();
        let ci = throughput_ci(&ends, &[64.0; 37], 5.0, 14.99, 1.0).unwrap();
        assert_eq!(ci.batches, 7);
        assert!(ci.half_width < 1e-9 && (ci.mean - 64.0 / 0.27).abs() < 1e-9, "{ci:?}");
        // 19 records: k = 3, no interval.
        let e = throughput_ci(&ends[..19], &[64.0; 19], 5.0, ends[18], 1.0).unwrap_err();
        assert_eq!(e, CI_TOO_FEW);
        // 20 records: k = 4.
        assert_eq!(throughput_ci(&ends[..20], &[64.0; 20], 5.0, ends[19], 1.0).unwrap().batches, 4);
    }

    /// A first iteration longer than a batch is credited once, pro rata, not to every batch
    /// it starts: one 2 s iteration then 0.1 s ones, [0, 4]: the mean is the window's.
    #[test]
    fn a_long_first_iteration_is_credited_once() {
        let mut ends = vec![2.0];
        ends.extend((1..=20).map(|i| 2.0 + 0.1 * i as f64));
        let ci = throughput_ci(&ends, &[10.0; 21], 0.0, 4.0, 1.0).unwrap();
        let whole = credit(&ends, &[10.0; 21], &[0.0; 21], 0.0, 4.0, 1.0).unwrap().images / 4.0;
        close(ci.mean, whole);
        close(whole, 210.0 / 4.0);
    }

    /// Random draws below `n` (xorshift from `seed`), the same on every run.
    fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    /// Skipping the iterations that end by `from` credits every value as crediting each
    /// iteration in turn does, bit for bit: random ends (in order or not, repeated, of no
    /// length), images, waits and intervals, against that loop written out here.
    #[test]
    fn skipping_the_iterations_before_the_interval_changes_no_credit() {
        fn every_iteration(ends: &[f64], images: &[f64], waits: &[f64], from: f64, to: f64, slow: f64) -> [f64; 3] {
            let (mut sums, mut start) = ([0.0; 3], from);
            for ((&end, &img), &wait) in ends.iter().zip(images).zip(waits) {
                let (a, b) = (start.max(from), end.min(to));
                let share = if end > start {
                    ((b - a) / (end - start)).clamp(0.0, 1.0)
                } else if end > from && end <= to {
                    1.0
                } else {
                    0.0
                };
                if b > a || share > 0.0 {
                    sums[0] += img * share;
                    sums[1] += wait * share;
                    if wait > slow {
                        sums[2] += share;
                    }
                }
                start = end;
                if end >= to {
                    break;
                }
            }
            sums
        }
        let mut next = draws(0x9e37_79b9_7f4a_7c15);
        for _ in 0..5_000 {
            let n = next(40) as usize;
            let mut t = next(100) as f64 / 10.0;
            let ordered = next(4) != 0;
            let ends: Vec<f64> = (0..n)
                .map(|_| {
                    t = if ordered { t + next(5) as f64 / 10.0 } else { next(200) as f64 / 10.0 };
                    t
                })
                .collect();
            let images: Vec<f64> = (0..n - next(2) as usize * n.min(1)).map(|_| next(256) as f64).collect();
            let waits: Vec<f64> = (0..n).map(|_| next(30) as f64 / 100.0).collect();
            let from = next(150) as f64 / 10.0;
            let to = from + next(100) as f64 / 10.0;
            let got = credit(&ends, &images, &waits, from, to, 0.1).map(|c| [c.images, c.data_wait, c.slow_steps]);
            let want = got.map(|_| every_iteration(&ends, &images, &waits, from, to, 0.1));
            assert_eq!(got.map(|g| g.map(f64::to_bits)), want.map(|w| w.map(f64::to_bits)), "{ends:?} {from} {to}");
        }
    }

    /// Protocol 1: the sums of each job's samples in the window are those the polars query
    /// gave, bit for bit, on random samples (none, some or all in the window; of no seconds).
    #[test]
    fn sample_sums_are_those_of_the_polars_query() {
        let mut next = draws(0x2545_f491_4f6c_dd1d);
        for case in 0..300 {
            let jobs = 1 + next(4) as usize;
            let events: Vec<Vec<Event>> = (0..jobs)
                .map(|j| {
                    (0..next(12))
                        .map(|k| Event {
                            mono: 100.0 + k as f64 * 0.5 + next(100) as f64 * 1e-3,
                            wall: 0.0,
                            job: j as u32,
                            body: EventBody::Sample {
                                step: k,
                                images: next(5000),
                                seconds: if next(10) == 0 { 0.0 } else { next(1_000_000) as f64 * 1e-6 * 3.0 },
                                data_wait_seconds: next(1_000_000) as f64 * 1.7e-7,
                                slow_data_steps: next(3),
                                loss: 1.0,
                            },
                        })
                        .collect()
                })
                .collect();
            let (a, b) = (100.0 + next(14) as f64 * 0.4, 100.0 + next(14) as f64 * 0.4);
            let w = Window { start_mono: a.min(b), end_mono: a.max(b), seconds: (a - b).abs(), clock_scale: 1.0 };
            let want =
                crate::reference::job_throughputs(&crate::reference::samples_frame(&events).unwrap(), w).unwrap();
            let got: Vec<[f64; 5]> = job_throughputs(&events, w)
                .iter()
                .map(|s| [s.job as f64, s.images, s.seconds, s.data_wait, s.slow_steps])
                .collect();
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "case {case}");
        }
    }
}
