//! Protocols compared: a workload of a campaign measured under a window protocol (`quick`)
//! and again under whole epochs, its twin under a campaign part's own protocol (the id
//! with `~<protocol>`), side by side. Empty unless the campaign has such pairs.

use std::collections::BTreeMap;

use crate::model::{ProtocolValidation, WorkloadResult, PROTOCOL_GOAL};

/// A workload's protocol as its runs recorded it: the name, and whether it trains whole
/// epochs.
pub(crate) type RecordedProtocol = (String, bool);

/// Every pair of workloads alike but for their protocol, one of whole epochs and one of a
/// window, in the order of `workloads` (that of the window's workload).
pub(crate) fn validation(
    workloads: &[WorkloadResult],
    protocols: &BTreeMap<String, RecordedProtocol>,
) -> Vec<ProtocolValidation> {
    let by_id: BTreeMap<&str, &WorkloadResult> = workloads.iter().map(|w| (w.id.as_str(), w)).collect();
    let mut out = Vec::new();
    for own in workloads.iter().filter(|w| !w.own_protocol.is_empty()) {
        let suffix = colloc_trace::ids::protocol_suffix(&own.own_protocol);
        let Some(twin) = own.id.strip_suffix(&suffix).and_then(|id| by_id.get(id)) else { continue };
        let (Some(a), Some(b)) = (protocols.get(&own.id), protocols.get(&twin.id)) else { continue };
        let (window, epochs, window_protocol, epoch_protocol) = match (a.1, b.1) {
            (true, false) => (*twin, own, &b.0, &a.0),
            (false, true) => (own, *twin, &a.0, &b.0),
            _ => continue,
        };
        if (window.mode, window.jobs.len(), &window.layout) != (epochs.mode, epochs.jobs.len(), &epochs.layout) {
            continue;
        }
        let median = |s: Option<crate::model::Stats>| s.map(|s| s.median);
        let diff = |q: Option<f64>, e: Option<f64>| match (q, e) {
            (Some(q), Some(e)) if e > 0.0 => Some(q / e - 1.0),
            _ => None,
        };
        let ratio = (median(window.stats.aggregate_ratio), median(epochs.stats.aggregate_ratio));
        let epoch = (median(window.stats.per_job_epoch_seconds), median(epochs.stats.per_job_epoch_seconds));
        let (ratio_difference, epoch_seconds_difference) = (diff(ratio.0, ratio.1), diff(epoch.0, epoch.1));
        let within_goal = match (ratio_difference, epoch_seconds_difference) {
            (Some(r), Some(e)) => Some(r.abs() <= PROTOCOL_GOAL && e.abs() <= PROTOCOL_GOAL),
            _ => None,
        };
        out.push(ProtocolValidation {
            window_id: window.id.clone(),
            epochs_id: epochs.id.clone(),
            experiment: window.experiment,
            label: window.label.clone(),
            mode: window.mode,
            layout: window.layout.clone(),
            data: window.data.clone(),
            n_jobs: window.jobs.len(),
            window_protocol: window_protocol.clone(),
            epoch_protocol: epoch_protocol.clone(),
            window_runs: window.stats.aggregate_ratio.map_or(0, |s| s.n),
            epoch_runs: epochs.stats.aggregate_ratio.map_or(0, |s| s.n),
            window_ratio: ratio.0,
            epoch_ratio: ratio.1,
            ratio_difference,
            window_epoch_seconds: epoch.0,
            epoch_epoch_seconds: epoch.1,
            epoch_seconds_difference,
            window_ci_rel: window.stats.throughput_ci_rel,
            epoch_start_seconds: median(epochs.stats.per_job_epoch_start_seconds),
            within_goal,
        });
    }
    out
}
