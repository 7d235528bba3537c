//! GPU-time estimates: rough, from the speed model ([`crate::perf`]). They drive progress
//! bars and campaign budgets, never results.

use colloc_spec::{Protocol, ProtocolKind};

use crate::model::{GpuTarget, PlannedWorkload};
use crate::perf;

/// Python start, imports and model build of the first job (7–8 s measured on the H200
/// host), and what each further job adds when they start together.
const SETUP_SECONDS: f64 = 10.0;
const SETUP_PER_EXTRA_JOB: f64 = 1.5;
const TEARDOWN_SECONDS: f64 = 5.0;

/// Seconds of GPU time one repetition of the workload takes (under a precision target, its
/// upper bound: the window counted at `max_window_seconds`).
pub fn workload_seconds(w: &PlannedWorkload, gpu: &GpuTarget, p: &Protocol) -> f64 {
    let setup = SETUP_SECONDS + SETUP_PER_EXTRA_JOB * (w.jobs.len() as f64 - 1.0);
    let model = perf::model_workload(gpu, w);
    let body = (0..w.jobs.len())
        .map(|i| {
            let rate = model.jobs[i].images_per_second.max(1.0);
            let j = &w.jobs[i];
            match p.kind {
                // With a precision target the window ends between `window_seconds` and
                // `max_window_seconds`: the estimate takes the upper bound.
                ProtocolKind::Window { warmup_steps, window_seconds, max_window_seconds, .. } => {
                    warmup_steps as f64 * j.batch_size as f64 / rate + max_window_seconds.unwrap_or(window_seconds)
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
