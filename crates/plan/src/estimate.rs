//! GPU-time estimates: rough, from the GPU table's single-job speeds. They drive progress
//! bars and campaign budgets, never results.

use colloc_spec::gpu::GpuTable;
use colloc_spec::resolve::{Protocol, ProtocolKind};

use crate::model::{DataSource, Mode, PlannedWorkload};

/// Images/s one loader of 4 workers decodes and augments (seen on the H200 host).
const LOADER_IMAGES_PER_SECOND_PER_WORKER: f64 = 250.0;
/// Model build and start-up of the first job, and of each further one.
const SETUP_SECONDS: f64 = 15.0;
const SETUP_PER_EXTRA_JOB: f64 = 3.0;
const TEARDOWN_SECONDS: f64 = 5.0;

/// Images/s a job of this workload gets, assuming collocated jobs share the GPU evenly
/// (no collocation gain: a conservative estimate) and MIG/MPS caps scale with compute.
fn job_rate(w: &PlannedWorkload, i: usize, gpu: &GpuTable) -> f64 {
    let j = &w.jobs[i];
    let alone = gpu.estimate_images_per_second.get(&j.model).copied().unwrap_or(500.0) * batch_factor(j.batch_size);
    let share = match w.mode {
        Mode::Exclusive => 1.0,
        Mode::Naive | Mode::Mps => 1.0 / w.jobs.len() as f64,
        Mode::Mig | Mode::MpsLimited => {
            let slices = j.mig_class.as_deref().and_then(|c| c.trim_end_matches('g').parse::<f64>().ok()).unwrap_or(1.0);
            slices / gpu.compute_slices as f64
        }
    };
    let gpu_rate = alone * share;
    match j.data.source {
        DataSource::Synthetic => gpu_rate,
        _ => gpu_rate.min(LOADER_IMAGES_PER_SECOND_PER_WORKER * j.training.workers.max(1) as f64),
    }
}

fn batch_factor(batch: u32) -> f64 {
    (batch as f64 / 128.0).powf(0.25).min(1.0)
}

/// Seconds of GPU time one repetition of the workload takes.
pub fn workload_seconds(w: &PlannedWorkload, gpu: &GpuTable, p: &Protocol) -> f64 {
    let setup = SETUP_SECONDS + SETUP_PER_EXTRA_JOB * (w.jobs.len() as f64 - 1.0);
    let body = (0..w.jobs.len())
        .map(|i| {
            let rate = job_rate(w, i, gpu).max(1.0);
            let j = &w.jobs[i];
            match p.kind {
                ProtocolKind::Window { warmup_steps, window_seconds } => {
                    warmup_steps as f64 * j.batch_size as f64 / rate + window_seconds
                }
                ProtocolKind::Epochs { epochs } => {
                    let train = (j.data.train_count as f64 * j.data.fraction) / rate;
                    let val = (j.data.val_count as f64 * j.data.fraction) / (rate * 3.0);
                    epochs as f64 * (train + val)
                }
            }
        })
        .fold(0.0, f64::max);
    (setup + body + TEARDOWN_SECONDS).round()
}
