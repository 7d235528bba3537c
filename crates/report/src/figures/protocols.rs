//! The protocol validation: each workload's aggregate ratio under the window protocol and
//! under whole epochs, side by side, the workloads outside the goal named.

use anyhow::Result;
use colloc_analysis::{Results, PROTOCOL_GOAL};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::{draw_bar_panel, BarPanel, BarValue, Group};
use super::style::{Marker, GREY, INK};
use super::{legend, with_legend, Key};
use crate::order::mode_name;
use crate::tables::protocols::{difference, pairs};

/// The window protocol's colour and whole epochs'.
const WINDOW: RGBColor = RGBColor(31, 119, 180);
const EPOCHS: RGBColor = RGBColor(255, 127, 14);

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let ps = pairs(r);
    let Some(first) = ps.first() else {
        return Ok(Some("no workload was measured under both a window protocol and whole epochs".to_string()));
    };
    let stats = |id: &str| r.workload(id).and_then(|w| w.stats.aggregate_ratio);
    let value = |id: &str| stats(id).map_or(BarValue::NotRun, BarValue::Value);
    let groups = ps
        .iter()
        .map(|p| {
            // Short enough for a group 1/13 of the width: `7 lim 1g`, `+0.4%`, `!` when outside.
            let mode = match (p.mode, p.layout.split('×').next()) {
                (colloc_spec::Mode::MpsLimited, Some(slice)) if !slice.is_empty() => format!("lim {slice}"),
                (m, _) => mode_name(m).to_string(),
            };
            let mark = if p.within_goal == Some(false) { " !" } else { "" };
            Group {
                label: format!("{} {mode}\n{}{mark}", p.n_jobs, difference(p.ratio_difference)),
                bars: vec![value(&p.window_id), value(&p.epochs_id)],
            }
        })
        .collect();
    let not_run = ps.iter().any(|p| stats(&p.window_id).is_none() || stats(&p.epochs_id).is_none());
    let (area, strip) = with_legend(body);
    let outside = ps.iter().filter(|p| p.within_goal == Some(false)).count();
    let panel = BarPanel {
        title: format!(
            "{} of {} workloads within ±{:.0}% (STP and epoch time, {} / {} − 1)",
            ps.len() - outside,
            ps.len(),
            PROTOCOL_GOAL * 100.0,
            first.window_protocol,
            first.epoch_protocol
        ),
        value_desc: "Σ job throughput / alone (×)".into(),
        colors: vec![WINDOW, EPOCHS],
        groups,
        ref_line: Some(1.0),
    };
    draw_bar_panel(root, &area, &panel)?;
    let mut entries = vec![
        (first.window_protocol.clone(), WINDOW, Key::Bar),
        (first.epoch_protocol.clone(), EPOCHS, Key::Bar),
        ("one job alone = 1".into(), INK, Key::Dashed),
    ];
    // Only where a bar is missing.
    if not_run {
        entries.push(("skipped or failed".into(), GREY, Key::Mark(Marker::Circle, false)));
    }
    legend(&strip, &entries)?;
    Ok(None)
}
