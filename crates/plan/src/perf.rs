//! The one model of speed and memory: how fast a job trains and how much device memory it
//! takes, alone and beside others. Plausible, and in part fitted to measurements: the
//! loaders' rates, the time slices of `naive`, and, where a GPU table has them
//! (`estimate_profiles`), each model's use of that GPU (on the H200, from the `h200`
//! campaign: one job nearly fills it; `xtask/tests/speed_model.rs` keeps the fit within 15%
//! of the shipped ratios on synthetic data). Elsewhere the model's own profiles leave room
//! beside a job, as on the A100 of the paper. It drives GPU-time estimates, the runner's
//! simulated backend and the analysis test fixtures, never a result.
//!
//! A job alone on the whole GPU trains at its model's speed from the target GPU's table
//! (`estimate_images_per_second`, carried in [`GpuTarget::images_per_second`]), scaled for
//! batch size. Each step is split into host time (kernel launches, not slowed by fewer SMs)
//! and GPU time, which needs a share `occupancy` of the SMs to run at full speed. Then:
//!
//! * `exclusive`: the job alone.
//! * `naive` (time slicing): one context at a time on the whole GPU, so the jobs' shares of
//!   its time (each job's rate over its rate alone) sum to at most [`NAIVE_CAPACITY`] once two
//!   or more share it (the context switches), handed out alike; a job its loaders hold below
//!   its share leaves the rest to the others.
//! * `mps`: kernels of different jobs run concurrently, so busy × occupancy must fit: the
//!   MPS gain over naive.
//! * `mps-limited`: as `mps`, with each job capped at its active-thread percentage.
//! * `mig`: each job alone on its slice's share of the SMs, no interference.
//! * Data loading from files (`generated`, `imagefolder`) caps a job at its loader workers'
//!   decode rate, less when the workload's workers exceed the host's cores left beside the
//!   jobs' own processes (one core each).
//!
//! Memory per job is a fixed part plus a per-image part; a job that does not fit (the GPU,
//! its MIG slice, or its pinned MPS limit) runs out of memory during warm-up.

use crate::model::{DataSource, GpuTarget, JobData, PlannedJob, PlannedWorkload};
use colloc_trace::Mode;

pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// CPU cores of the modelled host (the H200 host has 16).
pub const HOST_CORES: f64 = 16.0;

/// Images/s one loader worker decodes and augments to 224×224: small PNGs (32 or 64 px)
/// and full-size JPEGs. From the `h200` campaign (medians of the models alone on generated
/// files, 4 workers): resnet26 on 32 px PNGs 1335 images/s waiting for data 83% of its
/// time, resnet50 on 64 px PNGs 1465 waiting 62%, resnet152 on JPEGs 773 waiting 36%.
pub const LOADER_SMALL_PER_WORKER: f64 = 350.0;
pub const LOADER_LARGE_PER_WORKER: f64 = 200.0;

/// Under `naive`, the share of one job's GPU time that two or more time-sliced jobs get in
/// all: the `h200` campaign's 2, 3 and 7 × resnet26, resnet50 and resnet152 on synthetic
/// data trained at 0.89–0.90 of one job alone in every case, and 3 and 7 × resnet26 on files
/// at 969 and 415 images/s a job (0.90 × 3225 / 3 and / 7: 968 and 415).
pub const NAIVE_CAPACITY: f64 = 0.90;

/// Speed of a model missing from the GPU table, at batch 128, per SM of the GPU.
const UNKNOWN_MODEL_PER_SM: f64 = 1000.0 / 132.0;

/// How a model uses the GPU: share of a step the GPU is busy alone, share of the SMs its
/// kernels need, and memory at batch size b: `fixed + per_image × b` GiB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelProfile {
    pub busy: f64,
    pub occupancy: f64,
    pub mem_fixed_gib: f64,
    pub mem_per_image_gib: f64,
}

pub fn profile(model: &str) -> ModelProfile {
    let p = |busy, occupancy, mem_fixed_gib, mem_per_image_gib| ModelProfile {
        busy,
        occupancy,
        mem_fixed_gib,
        mem_per_image_gib,
    };
    match model {
        "resnet26" => p(0.45, 0.65, 0.9, 0.026),
        "resnet50" => p(0.75, 0.80, 1.0, 0.085),
        "resnet152" => p(0.90, 0.90, 1.5, 0.17),
        m if m.starts_with("cait") => p(0.70, 0.75, 0.6, 0.11),
        m if m.starts_with("efficientnetv2") => p(0.60, 0.70, 0.8, 0.19),
        _ => p(0.70, 0.80, 1.0, 0.10),
    }
}

/// [`profile`] on `gpu`: its busy share and occupancy as fitted on that GPU model, where its
/// table has them (`estimate_profiles`).
pub fn profile_on(gpu: &GpuTarget, model: &str) -> ModelProfile {
    let p = profile(model);
    match gpu.profiles.get(model) {
        Some(f) => ModelProfile { busy: f.busy, occupancy: f.occupancy, ..p },
        None => p,
    }
}

/// Images/s of one job alone on the whole GPU, synthetic data.
pub fn alone_images_per_second(gpu: &GpuTarget, model: &str, batch_size: u32) -> f64 {
    let base = gpu.images_per_second.get(model).copied().unwrap_or(UNKNOWN_MODEL_PER_SM * gpu.sms as f64);
    base * (batch_size.max(1) as f64 / 128.0).powf(0.15)
}

/// Images/s one loader worker delivers for this data; infinite for synthetic data.
pub fn loader_images_per_second_per_worker(data: &JobData) -> f64 {
    match data.source {
        DataSource::Synthetic => f64::INFINITY,
        _ if (1..=64).contains(&data.image_size) => LOADER_SMALL_PER_WORKER,
        _ => LOADER_LARGE_PER_WORKER,
    }
}

/// One job's modelled behaviour in its workload.
#[derive(Debug, Clone, PartialEq)]
pub struct JobModel {
    /// Steady images per second.
    pub images_per_second: f64,
    /// Fraction of training time spent waiting for data.
    pub data_wait_fraction: f64,
    /// Device memory the job allocates.
    pub memory_bytes: u64,
    /// `Some(message)`: the job runs out of memory during warm-up.
    pub oom: Option<String>,
    /// Share of the GPU's SMs the job keeps busy while training.
    pub sm_activity: f64,
    /// Host CPU use of the job's process tree, in % of one core.
    pub cpu_pct: f64,
    pub rss_bytes: u64,
    /// Loader workers + the main process.
    pub processes: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadModel {
    pub jobs: Vec<JobModel>,
    pub memory_total_bytes: u64,
}

/// Share of the GPU's SMs a job may use: its MIG slice or its MPS thread percentage.
fn sm_share(gpu: &GpuTarget, mode: Mode, j: &PlannedJob) -> f64 {
    match mode {
        Mode::Mig => j.mig_slice.as_ref().map(|s| s.compute_slices as f64 / gpu.compute_slices.max(1) as f64),
        Mode::MpsLimited => j.mps_limits.as_ref().map(|l| l.active_thread_percentage as f64 / 100.0),
        _ => None,
    }
    .unwrap_or(1.0)
}

/// Device memory one job of this workload allocates, in bytes.
pub fn job_memory_bytes(mode: Mode, j: &PlannedJob) -> f64 {
    let p = profile(&j.model);
    let ctx = if matches!(mode, Mode::Mps | Mode::MpsLimited) { 0.3 } else { 0.5 };
    (ctx + p.mem_fixed_gib + p.mem_per_image_gib * j.batch_size as f64) * GIB
}

/// A job's demands as if it were alone in its workload's mode: its GPU-bound rate, its
/// loaders' cap, its busy share and occupancy, its memory and its memory limit.
struct JobAlone {
    gpu_rate: f64,
    data_cap: f64,
    busy: f64,
    occ: f64,
    memory: f64,
    limit: f64,
}

/// The modelled behaviour of every job of a workload on the target GPU.
pub fn model_workload(gpu: &GpuTarget, w: &PlannedWorkload) -> WorkloadModel {
    let n = w.jobs.len().max(1) as f64;
    let memory_total = gpu.memory_gib * GIB;
    let cpu_share = loader_cpu_share(w);
    let pre: Vec<JobAlone> = w.jobs.iter().map(|j| job_alone(gpu, w.mode, j, cpu_share)).collect();
    let share = mps_share(w.mode, &pre, n);
    let mig_overhead = if w.mode == Mode::Mig { 0.99 } else { 1.0 };
    // Under naive: each job's share of the GPU's time, the capacity handed out alike (water
    // filling), a job needing less (its loaders' rate) leaving the rest to the others.
    let naive_capacity = if pre.len() > 1 { NAIVE_CAPACITY } else { 1.0 };
    let fair_naive = naive_capacity / pre.len().max(1) as f64;
    let naive_shares: Option<Vec<f64>> = (w.mode == Mode::Naive).then(|| naive_shares(&pre, naive_capacity));
    let oom = job_ooms(w.mode, &pre, memory_total);

    let jobs = w
        .jobs
        .iter()
        .zip(&pre)
        .zip(oom)
        .enumerate()
        .map(|(i, ((j, p), oom))| {
            let (gpu_side, rate) = match &naive_shares {
                // What its time slices would give it unfed, and what it trains at.
                Some(shares) => (p.gpu_rate * shares[i].max(fair_naive), p.gpu_rate * shares[i]),
                None => {
                    let gpu_side = p.gpu_rate * share * mig_overhead;
                    (gpu_side, gpu_side.min(p.data_cap))
                }
            };
            job_model(j, p, oom, gpu_side, rate)
        })
        .collect();
    WorkloadModel { jobs, memory_total_bytes: memory_total as u64 }
}

/// The share of their decode rate the loader workers of a workload get from the host's cores.
fn loader_cpu_share(w: &PlannedWorkload) -> f64 {
    let loading = w.jobs.iter().filter(|j| j.data.source != DataSource::Synthetic);
    let total_workers: f64 = loading.clone().map(|j| j.training.workers as f64).sum();
    // Each loading job's own process keeps a core busy; the workers share the rest (7 ×
    // resnet26 on files: 28 workers on 9 cores, 2905–3631 images/s in all on the H200 host).
    let cores = (HOST_CORES - loading.count() as f64).max(1.0);
    if total_workers > cores {
        cores / total_workers
    } else {
        1.0
    }
}

/// Job `j` as if alone in `mode` on its share of the GPU, its loaders at `cpu_share` of their rate.
fn job_alone(gpu: &GpuTarget, mode: Mode, j: &PlannedJob, cpu_share: f64) -> JobAlone {
    let p = profile_on(gpu, &j.model);
    let b = j.batch_size.max(1) as f64 / 128.0;
    let alone = alone_images_per_second(gpu, &j.model, j.batch_size);
    let busy = (p.busy * b.powf(0.35)).clamp(0.05, 0.98);
    let occ = (p.occupancy * b.powf(0.35)).clamp(0.05, 1.0);
    let share = sm_share(gpu, mode, j);
    let step = (1.0 - busy) + busy * (occ / share).max(1.0);
    let gpu_rate = alone / step;
    let data_cap = loader_images_per_second_per_worker(&j.data) * j.training.workers.max(1) as f64 * cpu_share;
    let memory = job_memory_bytes(mode, j);
    let limit = job_memory_limit(mode, j);
    // Fraction of the step the GPU (or the job's share of it) is busy.
    let busy = busy * (occ / share).max(1.0) / step;
    JobAlone { gpu_rate, data_cap, busy, occ: occ.min(share), memory, limit }
}

/// The device memory job `j` may allocate in `mode`, in bytes: its MIG slice's or its pinned
/// MPS limit; infinite otherwise.
fn job_memory_limit(mode: Mode, j: &PlannedJob) -> f64 {
    match mode {
        Mode::Mig => j.mig_slice.as_ref().map(|s| s.memory_bytes as f64 * 0.93),
        Mode::MpsLimited => j.mps_limits.as_ref().map(|l| l.pinned_mem_limit_mib as f64 * 1024.0 * 1024.0),
        _ => None,
    }
    .unwrap_or(f64::INFINITY)
}

/// Sharing factor of the GPU side under MPS, from what each of the `n` jobs asks of it; 1
/// in the other modes.
fn mps_share(mode: Mode, pre: &[JobAlone], n: f64) -> f64 {
    match mode {
        Mode::Exclusive | Mode::Mig => 1.0,
        // Per job: `naive_shares`.
        Mode::Naive => 1.0,
        Mode::Mps | Mode::MpsLimited => {
            let sum: f64 = pre.iter().map(|p| p.busy * (p.data_cap / p.gpu_rate).min(1.0) * p.occ).sum();
            (1.0 / sum.max(1e-9)).min(1.0) * (1.0 - 0.015 * (n - 1.0)).max(0.7)
        }
    }
}

/// Under `naive`, each job's share of the GPU's time: `capacity` handed out alike (water
/// filling), a job needing less (its loaders' rate) leaving the rest to the others.
fn naive_shares(pre: &[JobAlone], capacity: f64) -> Vec<f64> {
    let needs: Vec<f64> = pre.iter().map(|p| (p.data_cap / p.gpu_rate).min(1.0)).collect();
    let mut order: Vec<usize> = (0..needs.len()).collect();
    order.sort_by(|&a, &b| needs[a].total_cmp(&needs[b]));
    let mut shares = vec![0.0; needs.len()];
    let mut left = capacity;
    for (k, &i) in order.iter().enumerate() {
        let fair = left / (order.len() - k) as f64;
        shares[i] = needs[i].min(fair);
        left -= shares[i];
    }
    shares
}

/// Which jobs run out of memory, and the message of each: per job against its limit; on a
/// shared GPU (all modes but `mig`) the job whose allocation comes last runs out first.
fn job_ooms(mode: Mode, pre: &[JobAlone], memory_total: f64) -> Vec<Option<String>> {
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
    if mode != Mode::Mig {
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
    oom
}

/// Job `j`'s modelled behaviour, training at `rate` where its GPU side alone would give `gpu_side`.
fn job_model(j: &PlannedJob, p: &JobAlone, oom: Option<String>, gpu_side: f64, rate: f64) -> JobModel {
    let wait = if rate < gpu_side { 1.0 - rate / gpu_side } else { 0.0 };
    let workers = j.training.workers;
    let loading = if j.data.source == DataSource::Synthetic { 0.0 } else { 95.0 * rate / p.data_cap };
    JobModel {
        images_per_second: rate,
        data_wait_fraction: wait,
        memory_bytes: p.memory as u64,
        oom,
        sm_activity: (p.busy * p.occ * rate / p.gpu_rate).min(1.0),
        cpu_pct: 100.0 * (1.0 - wait).max(0.2) + loading * workers as f64,
        rss_bytes: ((2.5 + 0.8 * workers as f64) * GIB) as u64,
        processes: 1 + workers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MpsLimits, Training};

    fn project_root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// The H200 as the real planner targets it.
    fn h200() -> GpuTarget {
        crate::plan_campaign(&project_root(), "h200-quick", None).expect("h200-quick plans").gpu
    }

    fn job(model: &str, source: DataSource) -> PlannedJob {
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

    fn workload(mode: Mode, jobs: Vec<PlannedJob>) -> PlannedWorkload {
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
            protocol: None,
            interleaved: false,
        }
    }

    fn total(w: &WorkloadModel) -> f64 {
        w.jobs.iter().map(|j| j.images_per_second).sum()
    }

    #[test]
    fn alone_rates_are_the_gpu_tables_speeds() {
        let gpu = h200();
        for m in ["resnet26", "resnet50", "resnet152"] {
            let s = model_workload(&gpu, &workload(Mode::Exclusive, vec![job(m, DataSource::Synthetic)]));
            let table = gpu.images_per_second[m];
            assert!((s.jobs[0].images_per_second - table).abs() < 1.0, "{m}: {s:?}");
            assert!(s.jobs[0].oom.is_none());
        }
    }

    /// With the model's own profiles (a GPU without fitted ones, as the A100 of the paper):
    /// MPS well above naive, MIG between one job alone and MPS.
    #[test]
    fn collocation_orderings_are_plausible() {
        let mut gpu = h200();
        gpu.profiles.clear();
        let seven = || (0..7).map(|_| job("resnet26", DataSource::Synthetic)).collect::<Vec<_>>();
        let naive = model_workload(&gpu, &workload(Mode::Naive, seven()));
        let mps = model_workload(&gpu, &workload(Mode::Mps, seven()));
        let one_g = crate::plan_campaign(&project_root(), "h200-quick", None)
            .expect("plans")
            .workloads
            .iter()
            .find_map(|w| w.jobs.iter().find_map(|j| j.mig_slice.clone().filter(|s| s.compute_slices == 1)))
            .expect("a 1g slice");
        let mut mig_jobs = seven();
        for j in &mut mig_jobs {
            j.mig_profile = Some(one_g.profile.clone());
            j.mig_slice = Some(one_g.clone());
        }
        let mig = model_workload(&gpu, &workload(Mode::Mig, mig_jobs));
        let alone = gpu.images_per_second["resnet26"];
        assert!((total(&naive) / alone - NAIVE_CAPACITY).abs() < 1e-9, "naive {}", total(&naive));
        assert!(total(&mps) > total(&naive) * 1.2, "mps {} naive {}", total(&mps), total(&naive));
        assert!(total(&mig) > alone && total(&mig) < total(&mps), "mig {}", total(&mig));
        // Every job slower than alone.
        assert!(mps.jobs.iter().all(|j| j.images_per_second < alone));
    }

    /// Time slices handed out alike: jobs on files get what their loaders feed, up to an
    /// equal share of [`NAIVE_CAPACITY`], and leave the rest to the others.
    #[test]
    fn naive_hands_out_the_gpus_time_alike_up_to_what_the_loaders_feed() {
        let gpu = h200();
        let alone = gpu.images_per_second["resnet26"];
        let cap = LOADER_SMALL_PER_WORKER * Training::paper(128).workers as f64;
        let files = |n: usize| (0..n).map(|_| job("resnet26", DataSource::Generated)).collect::<Vec<_>>();
        // Three on files: the GPU is the limit, an equal share each (the h200 campaign: 969 img/s).
        let three = model_workload(&gpu, &workload(Mode::Naive, files(3)));
        for j in &three.jobs {
            assert!((j.images_per_second - NAIVE_CAPACITY * alone / 3.0).abs() < 1e-6, "{three:?}");
            assert!(j.data_wait_fraction < 1e-9);
        }
        // Two on files: each gets what its loaders feed, below its share, and waits for data.
        let two = model_workload(&gpu, &workload(Mode::Naive, files(2)));
        assert!(NAIVE_CAPACITY * alone / 2.0 > cap);
        for j in &two.jobs {
            assert!((j.images_per_second - cap).abs() < 1e-6 && j.data_wait_fraction > 0.0, "{two:?}");
        }
        // One on files beside one on synthetic data: the synthetic job takes what the other leaves.
        let mut mixed = files(1);
        mixed.push(job("resnet26", DataSource::Synthetic));
        let m = model_workload(&gpu, &workload(Mode::Naive, mixed));
        assert!((m.jobs[0].images_per_second - cap).abs() < 1e-6, "{m:?}");
        assert!((m.jobs[1].images_per_second - (NAIVE_CAPACITY * alone - cap)).abs() < 1e-6, "{m:?}");
    }

    #[test]
    fn data_loading_caps_generated_data() {
        let s = model_workload(&h200(), &workload(Mode::Exclusive, vec![job("resnet26", DataSource::Generated)]));
        let cap = LOADER_SMALL_PER_WORKER * Training::paper(128).workers as f64;
        assert!((s.jobs[0].images_per_second - cap).abs() < 1.0, "{s:?}");
        assert!(s.jobs[0].data_wait_fraction > 0.3);
    }

    #[test]
    fn memory_limits_cause_oom() {
        let gpu = h200();
        let mut big = job("resnet152", DataSource::Synthetic);
        big.mps_limits = Some(MpsLimits {
            active_thread_percentage: 12,
            pinned_mem_limit_mib: 16_384,
            stands_in_for: "1g.18gb".into(),
        });
        let s = model_workload(&gpu, &workload(Mode::MpsLimited, vec![big]));
        assert!(s.jobs[0].oom.is_some());
        let many = (0..7).map(|_| job("resnet152", DataSource::Synthetic)).collect();
        let s = model_workload(&gpu, &workload(Mode::Naive, many));
        assert!(s.jobs[0].oom.is_none() && s.jobs[6].oom.is_some(), "{s:?}");
    }
}
