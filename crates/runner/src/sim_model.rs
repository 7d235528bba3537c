//! The throughput and memory model behind `--simulate`: plausible, not measured.
//!
//! A job alone on the full GPU trains at its model's base rate (images/s at batch 128 on an
//! H200: resnet26 3200, resnet50 2100, resnet152 1000), scaled for other GPUs and batch
//! sizes. Each step is split into host time (kernel launches, not slowed by fewer SMs) and
//! GPU time, which needs a share `occupancy` of the SMs to run at full speed. Then:
//!
//! * `exclusive`: the job alone.
//! * `naive` (time slicing): the jobs' GPU-busy fractions must fit into one GPU; beyond
//!   that all slow down alike, with a context-switch penalty per extra job.
//! * `mps`: kernels of different jobs run concurrently, so busy × occupancy must fit: the
//!   MPS gain over naive.
//! * `mps-limited`: as `mps`, with each job capped at its active-thread percentage.
//! * `mig`: each job alone on its slice's share of the SMs, no interference.
//! * Data loading from files (`generated`, `imagefolder`) caps a job at about 250 images/s
//!   per loader worker (4 workers ≈ 1000 img/s), less when the workload's workers exceed
//!   the host's 16 cores.
//!
//! Memory per job is a fixed part plus a per-image part; a job that does not fit (the GPU,
//! its MIG slice, or its pinned MPS limit) runs out of memory during warm-up.

use colloc_plan::{GpuTarget, Mode, PlannedJob, PlannedWorkload};
use colloc_trace::jobfile::DataSource;

use crate::gpu::GIB;

/// CPU cores of the simulated host.
pub const SIM_HOST_CORES: f64 = 16.0;

/// One job's simulated behaviour in its workload.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSim {
    /// Steady images per (simulated) second.
    pub images_per_second: f64,
    /// Fraction of training time spent waiting for data.
    pub data_wait_fraction: f64,
    /// Device memory the job allocates.
    pub memory_bytes: u64,
    /// `Some(message)`: the job runs out of memory during warm-up.
    pub oom: Option<String>,
    /// Share of the GPU's SMs the job keeps busy while training (for telemetry).
    pub sm_activity: f64,
    /// Host CPU use of the job's process tree, in % of one core.
    pub cpu_pct: f64,
    pub rss_bytes: u64,
    /// Loader workers + the main process.
    pub processes: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSim {
    pub jobs: Vec<JobSim>,
    pub memory_total_bytes: u64,
}

struct ModelProfile {
    base: f64,
    busy: f64,
    occupancy: f64,
    mem_fixed_gib: f64,
    mem_per_image_gib: f64,
}

fn profile(model: &str) -> ModelProfile {
    let p = |base, busy, occupancy, mem_fixed_gib, mem_per_image_gib| ModelProfile {
        base,
        busy,
        occupancy,
        mem_fixed_gib,
        mem_per_image_gib,
    };
    match model {
        "resnet26" => p(3200.0, 0.45, 0.65, 0.9, 0.026),
        "resnet50" => p(2100.0, 0.75, 0.80, 1.0, 0.085),
        "resnet152" => p(1000.0, 0.90, 0.90, 1.5, 0.17),
        m if m.starts_with("cait") => p(1100.0, 0.70, 0.75, 0.6, 0.11),
        m if m.starts_with("efficientnetv2") => p(1200.0, 0.60, 0.70, 0.8, 0.19),
        _ => p(1000.0, 0.70, 0.80, 1.0, 0.10),
    }
}

/// Speed of the target GPU relative to an H200.
fn gpu_speed(gpu: &GpuTarget) -> f64 {
    let k = gpu.key.to_ascii_lowercase();
    if k.contains("h200") {
        1.0
    } else if k.contains("h100") {
        0.9
    } else if k.contains("a100") {
        0.4
    } else {
        (gpu.sms as f64 / 132.0).clamp(0.1, 2.0)
    }
}

/// Board power limit assumed for the simulated GPU.
pub fn tdp_watts(gpu: &GpuTarget) -> f64 {
    let k = gpu.key.to_ascii_lowercase();
    if k.contains("h200") || k.contains("h100") {
        700.0
    } else if k.contains("a100") {
        400.0
    } else {
        300.0
    }
}

/// Compute slices and memory (bytes) of a MIG profile name such as `3g.71gb` or `1g.18gb+me`.
pub fn mig_profile_size(name: &str) -> Option<(u32, f64)> {
    let (g, rest) = name.split_once('g')?;
    let slices = g.parse::<u32>().ok()?;
    let rest = rest.strip_prefix('.')?;
    let gb_end = rest.find("gb")?;
    let gb = rest[..gb_end].parse::<f64>().ok()?;
    Some((slices, gb * 1e9))
}

fn per_worker_rate(job: &PlannedJob) -> f64 {
    match job.data.name.as_str() {
        "cifar10" => 250.0,
        "imagenet64" => 230.0,
        "imagenet" => 150.0,
        _ => 200.0,
    }
}

/// The simulated behaviour of every job of a workload on the plan's target GPU.
pub fn simulate_workload(gpu: &GpuTarget, w: &PlannedWorkload) -> WorkloadSim {
    let n = w.jobs.len().max(1) as f64;
    let memory_total = gpu.memory_gib * GIB;
    let total_workers: f64 =
        w.jobs.iter().filter(|j| j.data.source != DataSource::Synthetic).map(|j| j.training.workers as f64).sum();
    let cpu_share = if total_workers > SIM_HOST_CORES { SIM_HOST_CORES / total_workers } else { 1.0 };

    struct Pre {
        gpu_rate: f64,
        data_cap: f64,
        busy: f64,
        occ: f64,
        memory: f64,
        limit: f64,
    }
    let pre: Vec<Pre> = w
        .jobs
        .iter()
        .map(|j| {
            let p = profile(&j.model);
            let b = j.batch_size.max(1) as f64 / 128.0;
            let alone = p.base * gpu_speed(gpu) * b.powf(0.15);
            let busy = (p.busy * b.powf(0.35)).clamp(0.05, 0.98);
            let occ = (p.occupancy * b.powf(0.35)).clamp(0.05, 1.0);
            // Share of the SMs the job may use: its MIG slice or its MPS thread percentage.
            let share = match w.mode {
                Mode::Mig => j
                    .mig_profile
                    .as_deref()
                    .and_then(mig_profile_size)
                    .map(|(s, _)| s as f64 / gpu.compute_slices.max(1) as f64)
                    .unwrap_or(1.0),
                Mode::MpsLimited => {
                    j.mps_limits.as_ref().map(|l| l.active_thread_percentage as f64 / 100.0).unwrap_or(1.0)
                }
                _ => 1.0,
            };
            let step = (1.0 - busy) + busy * (occ / share).max(1.0);
            let gpu_rate = alone / step;
            let data_cap = if j.data.source == DataSource::Synthetic {
                f64::INFINITY
            } else {
                per_worker_rate(j) * j.training.workers.max(1) as f64 * cpu_share
            };
            let ctx = if matches!(w.mode, Mode::Mps | Mode::MpsLimited) { 0.3 } else { 0.5 };
            let memory = (ctx + p.mem_fixed_gib + p.mem_per_image_gib * j.batch_size as f64) * GIB;
            let limit = match w.mode {
                Mode::Mig => j.mig_profile.as_deref().and_then(mig_profile_size).map(|(_, b)| b * 0.93),
                Mode::MpsLimited => j.mps_limits.as_ref().map(|l| l.pinned_mem_limit_mib as f64 * 1024.0 * 1024.0),
                _ => None,
            }
            .unwrap_or(f64::INFINITY);
            // Fraction of the step the GPU (or the job's share of it) is busy.
            let busy = busy * (occ / share).max(1.0) / step;
            Pre { gpu_rate, data_cap, busy, occ: occ.min(share), memory, limit }
        })
        .collect();

    // Sharing factor of the GPU side, from what each job asks of it.
    let demand: Vec<f64> = pre.iter().map(|p| p.busy * (p.data_cap / p.gpu_rate).min(1.0)).collect();
    let share = match w.mode {
        Mode::Exclusive | Mode::Mig => 1.0,
        Mode::Naive => {
            let sum: f64 = demand.iter().sum();
            (1.0 / sum.max(1e-9)).min(1.0) * (1.0 - 0.04 * (n - 1.0)).max(0.5)
        }
        Mode::Mps | Mode::MpsLimited => {
            let sum: f64 = demand.iter().zip(&pre).map(|(d, p)| d * p.occ).sum();
            (1.0 / sum.max(1e-9)).min(1.0) * (1.0 - 0.015 * (n - 1.0)).max(0.7)
        }
    };
    let mig_overhead = if w.mode == Mode::Mig { 0.99 } else { 1.0 };

    // Out of memory: per job against its limit; on a shared GPU the job whose allocation
    // comes last runs out first.
    let mut oom: Vec<Option<String>> = pre
        .iter()
        .map(|p| {
            (p.memory > p.limit).then(|| {
                format!(
                    "CUDA out of memory. Tried to allocate {:.2} GiB (limit {:.2} GiB) [simulated]",
                    p.memory / GIB,
                    p.limit / GIB
                )
            })
        })
        .collect();
    if w.mode != Mode::Mig {
        let mut used = 0.0;
        for (i, p) in pre.iter().enumerate() {
            if oom[i].is_none() && used + p.memory > memory_total * 0.97 {
                oom[i] = Some(format!(
                    "CUDA out of memory. Tried to allocate {:.2} GiB; {:.2} GiB of {:.2} GiB in use [simulated]",
                    p.memory / GIB,
                    used / GIB,
                    memory_total / GIB
                ));
            } else if oom[i].is_none() {
                used += p.memory;
            }
        }
    }

    let jobs = w
        .jobs
        .iter()
        .zip(&pre)
        .zip(oom)
        .map(|((j, p), oom)| {
            let gpu_side = p.gpu_rate * share * mig_overhead;
            let rate = gpu_side.min(p.data_cap);
            let wait = if rate < gpu_side { 1.0 - rate / gpu_side } else { 0.0 };
            let workers = j.training.workers;
            let loading = if j.data.source == DataSource::Synthetic { 0.0 } else { 95.0 * rate / p.data_cap };
            JobSim {
                images_per_second: rate,
                data_wait_fraction: wait,
                memory_bytes: p.memory as u64,
                oom,
                sm_activity: (p.busy * p.occ * rate / p.gpu_rate).min(1.0),
                cpu_pct: 100.0 * (1.0 - wait).max(0.2) + loading * workers as f64,
                rss_bytes: ((2.5 + 0.8 * workers as f64) * GIB) as u64,
                processes: 1 + workers,
            }
        })
        .collect();
    WorkloadSim { jobs, memory_total_bytes: memory_total as u64 }
}

/// A small deterministic random number generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// A seed from a base seed and a name (a run id, a job index).
    pub fn derive(seed: u64, name: &str) -> Rng {
        let mut h = seed ^ 0xCBF2_9CE4_8422_2325;
        for b in name.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x1000_0000_01B3);
        }
        Rng::new(h)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// `1 ± spread` (uniform).
    pub fn jitter(&mut self, spread: f64) -> f64 {
        1.0 + spread * (2.0 * self.unit() - 1.0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use colloc_plan::{JobData, MpsLimits, Training};

    pub fn h200() -> GpuTarget {
        GpuTarget {
            key: "h200-141gb".into(),
            name: "NVIDIA H200".into(),
            sms: 132,
            memory_gib: 140.0,
            compute_slices: 7,
            memory_slices: 8,
            power_limit_watts: 700.0,
            images_per_second: Default::default(),
        }
    }

    pub fn job(model: &str, source: DataSource) -> PlannedJob {
        PlannedJob {
            model: model.into(),
            model_class: "small".into(),
            dataset: "cifar10".into(),
            batch_size: 128,
            mig_profile: None,
            mig_class: None,
            mps_limits: None,
            mig_slice: None,
            data: JobData {
                source,
                name: "cifar10".into(),
                path: None,
                image_size: 32,
                train_count: 50_000,
                val_count: 10_000,
                fraction: 1.0,
                format: "png".into(),
            },
            training: Training::paper(128),
        }
    }

    pub fn workload(mode: Mode, jobs: Vec<PlannedJob>) -> PlannedWorkload {
        PlannedWorkload {
            id: format!("w-{mode}"),
            experiment: 33,
            label: "test".into(),
            mode,
            feasible: true,
            reason: None,
            repetitions: 1,
            data: "synthetic".into(),
            headline: false,
            timeline: false,
            form: Default::default(),
            radt: None,
            estimated_seconds: 10.0,
            jobs,
        }
    }

    fn total(w: &WorkloadSim) -> f64 {
        w.jobs.iter().map(|j| j.images_per_second).sum()
    }

    #[test]
    fn alone_rates_match_the_measured_h200_speeds() {
        for (m, r) in [("resnet26", 3200.0), ("resnet50", 2100.0), ("resnet152", 1000.0)] {
            let s = simulate_workload(&h200(), &workload(Mode::Exclusive, vec![job(m, DataSource::Synthetic)]));
            assert!((s.jobs[0].images_per_second - r).abs() < 1.0, "{m}: {s:?}");
            assert!(s.jobs[0].oom.is_none());
        }
    }

    #[test]
    fn collocation_orderings_are_plausible() {
        let seven = |_mode| (0..7).map(|_| job("resnet26", DataSource::Synthetic)).collect::<Vec<_>>();
        let naive = simulate_workload(&h200(), &workload(Mode::Naive, seven(Mode::Naive)));
        let mps = simulate_workload(&h200(), &workload(Mode::Mps, seven(Mode::Mps)));
        let mut mig_jobs = seven(Mode::Mig);
        for j in &mut mig_jobs {
            j.mig_profile = Some("1g.18gb".into());
        }
        let mig = simulate_workload(&h200(), &workload(Mode::Mig, mig_jobs));
        let alone = 3200.0;
        assert!(total(&naive) > alone, "naive {}", total(&naive));
        assert!(total(&mps) > total(&naive) * 1.2, "mps {} naive {}", total(&mps), total(&naive));
        assert!(total(&mig) > alone && total(&mig) < total(&mps), "mig {}", total(&mig));
        // Every job slower than alone.
        assert!(mps.jobs.iter().all(|j| j.images_per_second < alone));
    }

    #[test]
    fn data_loading_caps_generated_data() {
        let s = simulate_workload(&h200(), &workload(Mode::Exclusive, vec![job("resnet26", DataSource::Generated)]));
        assert!((s.jobs[0].images_per_second - 1000.0).abs() < 1.0);
        assert!(s.jobs[0].data_wait_fraction > 0.5);
    }

    #[test]
    fn memory_limits_cause_oom() {
        let mut big = job("resnet152", DataSource::Synthetic);
        big.mps_limits = Some(MpsLimits {
            active_thread_percentage: 12,
            pinned_mem_limit_mib: 16_384,
            stands_in_for: "1g.18gb".into(),
        });
        let s = simulate_workload(&h200(), &workload(Mode::MpsLimited, vec![big]));
        assert!(s.jobs[0].oom.is_some());
        let many = (0..7).map(|_| job("resnet152", DataSource::Synthetic)).collect();
        let s = simulate_workload(&h200(), &workload(Mode::Naive, many));
        assert!(s.jobs[0].oom.is_none() && s.jobs[6].oom.is_some(), "{s:?}");
        assert_eq!(mig_profile_size("1g.18gb+me"), Some((1, 18e9)));
    }
}
