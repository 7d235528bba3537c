//! The GPU's activity over a run's window, summed from `telemetry.csv.gz` as its rows are
//! read (the file is never held): over the rows of the whole GPU, and over the MIG
//! instances' rows combined per sample time (percentages and power averaged, memory
//! summed, the energy counter's greatest), each metric's mean, the memory's peak, the energy
//! counter's first and last readings; and, for a timeline, the window's samples (binned when
//! there are many: `timeline.rs`).

use colloc_trace::rows::{Row, RowSink};

use crate::exact::{greatest, ExactSum, COARSE, FINE};
use crate::model::{TimelinePoint, Utilisation, Window};
use crate::timeline::TimelineBuf;

/// GPU metrics averaged over the window (percentages and power).
const MEAN_METRICS: [&str; 7] = [
    "sm_activity_pct",
    "sm_occupancy_pct",
    "tensor_activity_pct",
    "dram_bw_util_pct",
    "gpu_util_pct",
    "mem_util_pct",
    "power_w",
];

/// The GPM metrics among [`MEAN_METRICS`] (the first four): read from one pair of GPM
/// samples together.
pub(crate) const GPM_METRICS: usize = 4;

/// A row whose GPM metrics are partly missing keeps none of them: GPM then reads 0 for the
/// others of the same pair of samples (on an H200 the DRAM bandwidth came back NaN while the
/// SM activity, occupancy and tensor activity read 0, with the GPU 100% busy).
fn drop_partial_gpm(means: &mut [Option<f64>; 7]) {
    let gpm = &means[..GPM_METRICS];
    if gpm.iter().any(Option::is_none) && gpm.iter().any(Option::is_some) {
        means[..GPM_METRICS].fill(None);
    }
}

/// Where each column the sums need is in the file's header (`None`: not in the file, every
/// value missing).
#[derive(Default)]
struct Columns {
    mono: Option<usize>,
    instance: Option<usize>,
    means: [Option<usize>; 7],
    mem_used: Option<usize>,
    mem_total: Option<usize>,
    energy: Option<usize>,
}

/// One sample's values, of the whole GPU or of the instances combined.
struct Sample {
    mono: f64,
    means: [Option<f64>; 7],
    mem_used: Option<f64>,
    mem_total: Option<f64>,
    energy: Option<f64>,
}

/// The sums over one set of samples: the whole GPU's, or the instances' combined.
struct Summary {
    means: [ExactSum; 7],
    mem_used_max: Option<f64>,
    mem_total_max: Option<f64>,
    samples: u64,
    /// The first and the last sample with an energy reading: (mono, joules).
    energy_first: Option<(f64, f64)>,
    energy_last: Option<(f64, f64)>,
    /// The samples as points of the timeline (seconds since `origin`, the window's start,
    /// on the jobs' clock), kept for a timeline only.
    timeline: Option<TimelineBuf>,
    origin: Option<Window>,
}

impl Summary {
    fn new(timeline: bool, origin: Option<Window>) -> Self {
        Summary {
            means: [ExactSum::new(FINE); 7],
            mem_used_max: None,
            mem_total_max: None,
            samples: 0,
            energy_first: None,
            energy_last: None,
            timeline: origin.filter(|_| timeline).map(TimelineBuf::new),
            origin,
        }
    }

    fn add(&mut self, s: Sample) {
        for (sum, v) in self.means.iter_mut().zip(s.means) {
            sum.add(v);
        }
        self.mem_used_max = greatest(self.mem_used_max, s.mem_used);
        self.mem_total_max = greatest(self.mem_total_max, s.mem_total);
        self.samples += 1;
        if let Some(e) = s.energy {
            self.energy_first.get_or_insert((s.mono, e));
            self.energy_last = Some((s.mono, e));
        }
        if let (Some(t), Some(w)) = (&mut self.timeline, self.origin) {
            let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
            t.push(TimelinePoint {
                t: (s.mono - w.start_mono) * w.clock_scale,
                sm_activity_pct: finite(s.means[0]),
                sm_occupancy_pct: finite(s.means[1]),
                tensor_activity_pct: finite(s.means[2]),
                dram_bw_util_pct: finite(s.means[3]),
                gpu_util_pct: finite(s.means[4]),
                mem_used_bytes: finite(s.mem_used),
                power_w: finite(s.means[6]),
            });
        }
    }

    /// Metric `i`'s mean, when there is one.
    fn mean(&self, i: usize) -> Option<f64> {
        Some(self.means[i].mean(1)).filter(|v| v.is_finite())
    }

    /// The counter's energy over the window, scaled from the span of its readings.
    fn energy(&self, w: Window) -> Option<f64> {
        match (self.energy_first, self.energy_last) {
            // The counter's power on the jobs' clock, over the whole window.
            (Some((t0, e0)), Some((t1, e1))) if t1 > t0 && e1 >= e0 => {
                Some((e1 - e0) / ((t1 - t0) * w.clock_scale) * w.job_seconds())
            }
            _ => None,
        }
    }

    fn has_activity(&self) -> bool {
        self.timeline.as_ref().is_some_and(TimelineBuf::has_activity)
    }
}

/// The MIG instances' rows of one sample time, combined as they come.
#[derive(Clone)]
struct Instances {
    mono: f64,
    means: [ExactSum; 7],
    mem_used: ExactSum,
    mem_total: ExactSum,
    energy_max: Option<f64>,
}

impl Instances {
    fn new(mono: f64) -> Self {
        Instances {
            mono,
            means: [ExactSum::new(FINE); 7],
            mem_used: ExactSum::new(COARSE),
            mem_total: ExactSum::new(COARSE),
            energy_max: None,
        }
    }

    /// The combined sample, one of `times` sample times: a metric no instance had is NaN (a
    /// mean of nothing), memory no instance had is 0 (a sum of nothing).
    fn sample(&self, times: usize) -> Sample {
        Sample {
            mono: self.mono,
            means: self.means.map(|m| Some(m.mean(times))),
            mem_used: Some(self.mem_used.sum(times)),
            mem_total: Some(self.mem_total.sum(times)),
            energy: self.energy_max,
        }
    }
}

/// The sums of a run's telemetry over its window, fed by the file's reader.
pub(crate) struct GpuUse {
    window: Option<Window>,
    columns: Columns,
    gpu: Summary,
    instances: Summary,
    /// The instances' rows of the sample time being read.
    current: Option<Instances>,
    /// The first sample time's, for a window that has only that one.
    first: Option<Instances>,
    finished: bool,
}

impl GpuUse {
    /// Sums over `window` (`None`: the rows are only checked), keeping every sample when
    /// `timeline`.
    pub(crate) fn new(window: Option<Window>, timeline: bool) -> Self {
        GpuUse {
            window,
            columns: Columns::default(),
            gpu: Summary::new(timeline, window),
            instances: Summary::new(timeline, window),
            current: None,
            first: None,
            finished: false,
        }
    }

    fn flush_instances(&mut self) {
        if let Some(i) = self.current.take() {
            self.instances.add(i.sample(2));
            self.first.get_or_insert(i);
        }
    }

    /// The last sample time's instances combined; one sample time alone is combined again as
    /// the only one.
    fn finish(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.flush_instances();
        if let (1, Some(first)) = (self.instances.samples, &self.first) {
            let mut alone = Summary::new(self.instances.timeline.is_some(), self.window);
            alone.add(first.sample(1));
            self.instances = alone;
        }
    }

    /// The window's averages: per metric the whole GPU's, else the instances' mean; `None`
    /// when the window holds no sample.
    pub(crate) fn utilisation(&mut self) -> Option<Utilisation> {
        self.finish();
        let w = self.window?;
        let (gpu, inst) = (&self.gpu, &self.instances);
        let (n_gpu, n_inst) = (gpu.samples, inst.samples);
        if n_gpu == 0 && n_inst == 0 {
            return None;
        }
        let pick = |g: Option<f64>, i: Option<f64>| match (n_gpu > 0).then_some(g).flatten() {
            Some(v) => Some(v),
            None if n_inst > 0 => i,
            None => None,
        };
        let mean = |m: usize| pick(gpu.mean(m), inst.mean(m));
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
        let power = mean(6);
        let energy = match gpu.energy(w) {
            Some(e) => Some(e),
            None => inst.energy(w).or(power.map(|p| p * w.job_seconds())),
        };
        let mem_used = pick(finite(gpu.mem_used_max), finite(inst.mem_used_max));
        let mem_total = pick(finite(gpu.mem_total_max), finite(inst.mem_total_max));
        Some(Utilisation {
            sm_activity_pct: mean(0),
            sm_occupancy_pct: mean(1),
            tensor_activity_pct: mean(2),
            dram_bw_util_pct: mean(3),
            gpu_util_pct: mean(4),
            mem_util_pct: mean(5),
            power_w: power,
            mem_used_bytes_max: mem_used,
            mem_total_bytes: mem_total,
            mem_used_share: match (mem_used, mem_total) {
                (Some(u), Some(t)) if t > 0.0 => Some(u / t),
                _ => None,
            },
            energy_j: energy,
            samples: n_gpu.max(n_inst) as u32,
            scope: if n_gpu > 0 { "gpu" } else { "instances" }.to_string(),
        })
    }

    /// The samples of the window, in time order: the whole GPU's when they have SM activity,
    /// else the instances' combined when they have it or there is no whole-GPU sample.
    /// Empty unless made for a timeline; with the number of spans when binned.
    pub(crate) fn timeline(&mut self) -> (Vec<TimelinePoint>, Option<u32>) {
        self.finish();
        let (gpu, inst) = (&mut self.gpu, &mut self.instances);
        let n_gpu = gpu.samples;
        let chosen = if n_gpu > 0 && gpu.has_activity() {
            gpu
        } else if inst.samples > 0 && (inst.has_activity() || n_gpu == 0) {
            inst
        } else {
            gpu
        };
        chosen.timeline.take().map(TimelineBuf::finish).unwrap_or_default()
    }
}

impl RowSink for GpuUse {
    fn needs(&self, column: &str) -> bool {
        self.window.is_some()
            && (MEAN_METRICS.contains(&column)
                || ["mono", "instance", "mem_used_bytes", "mem_total_bytes", "energy_j"].contains(&column))
    }

    fn columns(&mut self, names: &[&str]) {
        let at = |name: &str| names.iter().position(|n| *n == name);
        self.columns = Columns {
            mono: at("mono"),
            instance: at("instance"),
            means: MEAN_METRICS.map(at),
            mem_used: at("mem_used_bytes"),
            mem_total: at("mem_total_bytes"),
            energy: at("energy_j"),
        };
    }

    fn row(&mut self, row: &Row<'_>) {
        let numbers = row.numbers;
        let Some(w) = self.window else { return };
        let c = &self.columns;
        let value = |at: Option<usize>| at.and_then(|i| numbers[i]);
        let Some(mono) = value(c.mono) else { return };
        if !w.contains(mono) {
            return;
        }
        let mut means = c.means.map(value);
        drop_partial_gpm(&mut means);
        let (mem_used, mem_total, energy) = (value(c.mem_used), value(c.mem_total), value(c.energy));
        match value(c.instance) {
            // A MIG instance: combined with the other instances' rows of its sample time.
            Some(i) if i >= 0.0 => {
                if self.current.as_ref().is_some_and(|s| s.mono != mono) {
                    self.flush_instances();
                }
                let s = self.current.get_or_insert_with(|| Instances::new(mono));
                for (sum, v) in s.means.iter_mut().zip(means) {
                    sum.add(v);
                }
                s.mem_used.add(mem_used);
                s.mem_total.add(mem_total);
                s.energy_max = greatest(s.energy_max, energy);
            }
            // The whole GPU (instance -1 or not given).
            _ => self.gpu.add(Sample { mono, means, mem_used, mem_total, energy }),
        }
    }
}
