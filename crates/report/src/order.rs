//! The orders in which modes, mixes and workloads appear in every table and figure.

use colloc_analysis::{WorkloadForm, WorkloadResult};
use colloc_trace::Mode;

/// Modes from alone to the most isolated.
pub(crate) const MODES: [Mode; 5] = [Mode::Exclusive, Mode::Naive, Mode::Mps, Mode::MpsLimited, Mode::Mig];

pub(crate) fn mode_rank(m: Mode) -> usize {
    MODES.iter().position(|x| *x == m).unwrap_or(MODES.len())
}

/// A mix's place in its experiment's declared list of mixes; `None` for a workload that
/// is no mix.
pub(crate) fn mix_position(form: &WorkloadForm) -> Option<usize> {
    match form {
        WorkloadForm::Mix { position, .. } => Some(*position as usize),
        _ => None,
    }
}

/// Human names of modes.
/// `MPS`, `MIG 1g×7`, `MPS-limited 1g×7`: the mode, and the layout where it has one.
pub(crate) fn mode_layout(m: Mode, layout: &str) -> String {
    if layout.is_empty() {
        mode_name(m).to_string()
    } else {
        format!("{} {layout}", mode_name(m))
    }
}

pub(crate) fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Exclusive => "alone",
        Mode::Naive => "naive",
        Mode::Mps => "MPS",
        Mode::MpsLimited => "MPS-limited",
        Mode::Mig => "MIG",
    }
}

/// The workload is a mix of job classes (the plan's form).
pub(crate) fn is_mix(w: &WorkloadResult) -> bool {
    mix_position(&w.form).is_some()
}

/// Models by size: small, medium, large, then any other class.
pub(crate) fn class_rank(class: &str) -> usize {
    match class {
        "small" => 0,
        "medium" => 1,
        "large" => 2,
        _ => 3,
    }
}

/// Sort key of a workload: experiment, model, dataset, batch, data, jobs, mode, layout.
pub(crate) fn workload_key(w: &WorkloadResult) -> (u32, usize, String, String, u32, String, usize, usize, u32, String) {
    let j = &w.jobs[0];
    (
        w.experiment,
        mix_position(&w.form).unwrap_or(0),
        if is_mix(w) { w.label.clone() } else { j.model.clone() },
        j.dataset.clone(),
        j.batch_size,
        w.data.clone(),
        w.n_jobs(),
        mode_rank(w.mode),
        // Larger MIG slices first.
        99 - w.jobs.iter().filter_map(|j| j.mig_class.as_deref()).map(slices).max().unwrap_or(0).min(99),
        w.id.clone(),
    )
}

/// Compute slices of a class such as `3g`.
pub(crate) fn slices(class: &str) -> u32 {
    class.trim_end_matches('g').parse().unwrap_or(0)
}
