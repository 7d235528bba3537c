//! GPU-time estimates: rough, from the GPU table's single-job speeds. They drive progress
//! bars and campaign budgets, never results.

use colloc_spec::gpu::GpuTable;
use colloc_spec::resolve::{Protocol, ProtocolKind};

use crate::model::{DataSource, Mode, PlannedWorkload};

/// Images/s one loader worker decodes and augments to 224×224: small PNGs (32 or 64 px;
/// 4 workers fed resnet26 about 2000 images/s on the H200 host), and full-size JPEGs.
const LOADER_SMALL_PER_WORKER: f64 = 500.0;
const LOADER_LARGE_PER_WORKER: f64 = 120.0;
/// Python start, imports and model build of the first job (7–8 s measured on the H200
/// host), and what each further job adds when they start together.
const SETUP_SECONDS: f64 = 10.0;
const SETUP_PER_EXTRA_JOB: f64 = 1.5;
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
            let slices =
                j.mig_class.as_deref().and_then(|c| c.trim_end_matches('g').parse::<f64>().ok()).unwrap_or(1.0);
            slices / gpu.compute_slices as f64
        }
    };
    let gpu_rate = alone * share;
    match j.data.source {
        DataSource::Synthetic => gpu_rate,
        _ => {
            let per_worker =
                if (1..=64).contains(&j.data.image_size) { LOADER_SMALL_PER_WORKER } else { LOADER_LARGE_PER_WORKER };
            gpu_rate.min(per_worker * j.training.workers.max(1) as f64)
        }
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
