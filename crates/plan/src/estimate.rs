//! GPU-time estimates: rough, from the speed model ([`crate::perf`]). They drive progress
//! bars and campaign budgets, never results.

use colloc_spec::{Protocol, ProtocolKind};

use crate::model::{GpuTarget, PlannedWorkload};
use crate::perf;

/// What a run costs beyond the warm-up iterations and the window, fitted to the mean of
/// 34 runs on the H200 with the runner's `--preload`
/// (benchmarks/2026-12-01-h200-exact-measurement, host C): a forked job's set-up (CUDA,
/// model, data) about 1 s, then its first iteration's cuDNN autotuning, 4 s on a warm host
/// but up to 22 s for an invocation's first run or under MPS thread caps (9 s on average);
/// each further job starting beside it about 0.4 s; the jobs' exit after the stop and the
/// mode's teardown about 1 s. Without `--preload` each job also imports PyTorch and timm
/// (about 9 s more per run).
const SETUP_SECONDS: f64 = 9.0;
const SETUP_PER_EXTRA_JOB: f64 = 0.4;
const TEARDOWN_SECONDS: f64 = 1.0;

/// Seconds of GPU time one repetition of the workload takes (under a precision target, its
/// upper bound: the window counted at `max_window_seconds`). The common window of a
/// workload lasts until its slowest job has trained `min_iterations` too.
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
                // The window also lasts until every job has trained `min_iterations`.
                ProtocolKind::Window { warmup_steps, window_seconds, max_window_seconds, min_iterations, .. } => {
                    let iteration = j.batch_size as f64 / rate;
                    let window = max_window_seconds.unwrap_or(window_seconds).max(min_iterations as f64 * iteration);
                    warmup_steps as f64 * iteration + window
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

/// The interleaved baselines' runs a plan adds and their seconds: per interleaved
/// baseline, the collocated runs it divides over `between`, rounded up (one run of it after
/// every `between` of them; the run before a stretch is the one after the last). The
/// `runs_per_invocation - 1` before an invocation's first are not counted: how many
/// invocations a campaign takes is not known in advance. MIG workloads are left out: on a
/// GPU whose MIG mode is off they are skipped without a run, and the plan's total says how
/// much of it they are.
pub fn interleaved(plan: &crate::model::Plan, i: crate::model::Interleave) -> (usize, f64) {
    let mut divided: std::collections::BTreeMap<&str, (u32, f64)> = std::collections::BTreeMap::new();
    for w in plan.workloads.iter().filter(|w| !w.is_baseline() && w.feasible && !w.jobs.is_empty()) {
        if w.mode == colloc_trace::Mode::Mig {
            continue;
        }
        let mut needed: Vec<&str> = Vec::new();
        for k in 0..w.jobs.len() {
            if let Some(b) = plan.baseline_of(w, k).filter(|b| b.interleaved) {
                if !needed.contains(&b.id.as_str()) {
                    needed.push(&b.id);
                    let e = divided.entry(&b.id).or_insert((0, b.estimated_seconds));
                    e.0 += w.repetitions;
                }
            }
        }
    }
    let (mut runs, mut seconds) = (0usize, 0.0);
    for (n, each) in divided.values() {
        let k = n.div_ceil(i.between) as usize;
        runs += k;
        seconds += k as f64 * each;
    }
    (runs, seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(min_iterations: u32) -> Protocol {
        Protocol {
            name: "quick".into(),
            description: None,
            kind: ProtocolKind::Window {
                warmup_steps: 15,
                window_seconds: 10.0,
                min_iterations,
                precision_target: None,
                max_window_seconds: None,
            },
            data_fraction: 0.05,
            sample_every: 10,
            repetitions: 1,
            timeout_seconds: None,
        }
    }

    /// A workload whose slowest job needs longer than the window for `min_iterations` is
    /// estimated with that longer window; a fast one is not.
    #[test]
    fn the_window_lasts_until_the_slowest_job_has_its_minimum_of_iterations() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let plan = crate::plan_campaign(&root, "h200", None).expect("the h200 campaign plans");
        let get = |id: &str| plan.workloads.iter().find(|w| w.id == id).unwrap_or_else(|| panic!("{id}"));
        let slow = get("e33-resnet152-imagenet-x7-naive@gen");
        let fast = get("e33-resnet26-cifar10-x1-exclusive@syn");
        let model = perf::model_workload(&plan.gpu, slow);
        let slowest = model.jobs.iter().map(|j| j.images_per_second).fold(f64::INFINITY, f64::min);
        let needed = 50.0 * slow.jobs[0].batch_size as f64 / slowest;
        assert!(needed > 10.0, "the test needs a job slower than 50 iterations in 10 s: {needed:.1} s");
        let grown = workload_seconds(slow, &plan.gpu, &quick(50)) - workload_seconds(slow, &plan.gpu, &quick(0));
        assert!((grown - (needed - 10.0)).abs() < 1.0, "grew {grown:.1} s, expected {:.1} s", needed - 10.0);
        assert_eq!(workload_seconds(fast, &plan.gpu, &quick(50)), workload_seconds(fast, &plan.gpu, &quick(0)));
    }
}
