//! The share of the window a job's loader spent starting epochs, per workload on files:
//! where a generated set is so small that several epochs start inside the measurement
//! window, the window measures the loader's restarts as well as the training.

use anyhow::Result;
use colloc_analysis::{Results, Stats, WorkloadResult};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::{draw_bar_panel, BarPanel, BarValue, Group};
use super::style::{mode_color, mode_legend, INK};
use super::{legend, with_legend, Key};
use crate::order::{is_mix, workload_key, MODES};

/// The homogeneous workloads whose jobs' windows held two epochs or more, grouped by model
/// and number of jobs; the modes measured among them.
fn measured(r: &Results) -> (Vec<(String, Vec<&WorkloadResult>)>, Vec<colloc_trace::Mode>) {
    let mut ws: Vec<&WorkloadResult> = r
        .workloads
        .iter()
        .filter(|w| !is_mix(w) && w.homogeneous() && w.stats.epoch_start_wait_share.is_some())
        .collect();
    ws.sort_by_key(|w| workload_key(w));
    let mut groups: Vec<(String, Vec<&WorkloadResult>)> = Vec::new();
    for w in ws {
        let j = &w.jobs[0];
        let label = format!("{} {}\n{} job{}", j.model, w.data, w.n_jobs(), if w.n_jobs() == 1 { "" } else { "s" });
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, list)) => list.push(w),
            None => groups.push((label, vec![w])),
        }
    }
    let modes: Vec<colloc_trace::Mode> =
        MODES.iter().copied().filter(|m| groups.iter().any(|(_, g)| g.iter().any(|w| w.mode == *m))).collect();
    (groups, modes)
}

/// Whether some workload's windows held two epochs or more.
pub(super) fn has_data(r: &Results) -> bool {
    !measured(r).0.is_empty()
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let (groups, modes) = measured(r);
    if groups.is_empty() {
        return Ok(Some(
            "no job's window held two epochs of its data set: no epoch start was measured inside a window".to_string(),
        ));
    }
    // Per mode, the first (widest MIG stand-in first) workload of the group: the share in %.
    let percent = |s: Stats| Stats { median: s.median * 100.0, min: s.min * 100.0, max: s.max * 100.0, n: s.n };
    let groups = groups
        .iter()
        .map(|(label, ws)| {
            Group::new(
                label.clone(),
                modes
                    .iter()
                    .map(|m| match ws.iter().find(|w| w.mode == *m).and_then(|w| w.stats.epoch_start_wait_share) {
                        Some(s) => BarValue::Value(percent(s)),
                        None => BarValue::Absent,
                    })
                    .collect(),
            )
        })
        .collect();
    let entries: Vec<(String, RGBColor, Key)> =
        modes.iter().map(|m| (mode_legend(*m, r), mode_color(*m), Key::Bar)).collect();
    let (area, strip) = with_legend(body, &entries);
    let panel = BarPanel {
        title: "Window spent starting epochs, per job".into(),
        value_desc: "Share of the window (%)".into(),
        colors: modes.iter().map(|m| mode_color(*m)).collect(),
        groups,
        ref_line: None,
        ref_color: INK,
        top: None,
    };
    draw_bar_panel(root, &area, &panel)?;
    legend(&strip, &entries)?;
    Ok(None)
}
