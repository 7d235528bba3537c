//! The protocol validation: each workload's aggregate ratio (STP) under the window protocol
//! and under whole epochs, side by side, one row per workload, the workloads outside the
//! goal marked.

use anyhow::Result;
use colloc_analysis::{Results, PROTOCOL_GOAL};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::{draw_row_panel, BarPanel, BarValue, Group};
use super::style::{mode_layout_legend, protocol_color, Marker, GREY, INK};
use super::{legend, legend_height, with_legend, Key};
use crate::tables::protocols::{difference, pairs};

/// Pixels for the rows' names, left of the bars.
const LABELS: u32 = 420;
/// Pixels per workload.
const ROW: u32 = 40;
/// The panel's title and value axis.
const FRAME: u32 = 110;

fn entries(r: &Results) -> Vec<(String, RGBColor, Key)> {
    let ps = pairs(r);
    let Some(first) = ps.first() else { return Vec::new() };
    let stats = |id: &str| r.workload(id).and_then(|w| w.stats.aggregate_ratio);
    let mut entries = vec![
        (format!("{} protocol (window)", first.window_protocol), protocol_color(true), Key::Bar),
        (format!("{} protocol (whole epochs)", first.epoch_protocol), protocol_color(false), Key::Bar),
    ];
    // Only where a bar is missing.
    if ps.iter().any(|p| stats(&p.window_id).is_none() || stats(&p.epochs_id).is_none()) {
        entries.push(("skipped or failed".into(), GREY, Key::Mark(Marker::Circle, false)));
    }
    entries
}

/// The figure's height below the header (`None`: no pairs).
pub(super) fn height(r: &Results) -> Option<u32> {
    let n = pairs(r).len() as u32;
    (n > 0).then(|| FRAME + ROW * n + legend_height(&entries(r)))
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let ps = pairs(r);
    if ps.is_empty() {
        return Ok(Some("no workload was measured under both a window protocol and whole epochs".to_string()));
    }
    let stats = |id: &str| r.workload(id).and_then(|w| w.stats.aggregate_ratio);
    let value = |id: &str| stats(id).map_or(BarValue::NotRun, BarValue::Value);
    let groups = ps
        .iter()
        .map(|p| {
            let jobs = if p.n_jobs == 1 { "1 job".to_string() } else { format!("{} jobs", p.n_jobs) };
            let mark = if p.within_goal == Some(false) { " !" } else { "" };
            Group::new(
                format!(
                    "{jobs} · {} · STP {}{mark}",
                    mode_layout_legend(p.mode, &p.layout, r),
                    difference(p.ratio_difference)
                ),
                vec![value(&p.window_id), value(&p.epochs_id)],
            )
        })
        .collect();
    let entries = entries(r);
    let (area, strip) = with_legend(body, &entries);
    let outside = ps.iter().filter(|p| p.within_goal == Some(false)).count();
    let panel = BarPanel {
        title: format!(
            "{} of {} workloads within ±{:.0}%; ! marks those outside it in STP or per-job epoch time",
            ps.len() - outside,
            ps.len(),
            PROTOCOL_GOAL * 100.0,
        ),
        value_desc: "STP: Σ job throughput / alone (×)".into(),
        colors: vec![protocol_color(true), protocol_color(false)],
        groups,
        ref_line: None,
        ref_color: INK,
        top: None,
    };
    draw_row_panel(root, &area, &panel, LABELS)?;
    legend(&strip, &entries)?;
    Ok(None)
}
