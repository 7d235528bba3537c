//! GPU activity over the common window of the campaign's timeline workloads (the plan's
//! timeline role), one panel per mode.

use anyhow::Result;
use colloc_analysis::{Results, Stats, Timeline, TimelinePoint};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::lines::{draw_panels, Axes, Panel, Point, Series};
use super::style::{Marker, PALETTE};
use super::{legend, with_legend, Key};
use crate::legend::timeline_label;
use crate::order::{mode_layout, mode_rank};

pub(super) const COLS: usize = 2;

type Getter = fn(&TimelinePoint) -> Option<f64>;

const METRICS: [(&str, Getter); 5] = [
    ("SM activity", |p| p.sm_activity_pct),
    ("SM occupancy", |p| p.sm_occupancy_pct),
    ("Tensor activity", |p| p.tensor_activity_pct),
    ("DRAM bandwidth", |p| p.dram_bw_util_pct),
    ("GPU utilisation (NVML)", |p| p.gpu_util_pct),
];

/// The timelines shown: those of the main data source, in mode order.
fn chosen(r: &Results) -> Vec<&Timeline> {
    let mut t: Vec<&Timeline> =
        r.timelines.iter().filter(|t| t.data == r.primary_data && !t.points.is_empty()).collect();
    t.sort_by_key(|t| (mode_rank(t.mode), t.layout.clone(), t.workload_id.clone()));
    t
}

/// The number of spans of the shown timelines that are binned (`colloc_analysis::Timeline`'s
/// `bins`), if any is.
pub(super) fn bins(r: &Results) -> Option<u32> {
    chosen(r).iter().filter_map(|t| t.bins).max()
}

pub(super) fn panel_rows(r: &Results) -> usize {
    chosen(r).len().div_ceil(COLS).max(1)
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let ts = chosen(r);
    if ts.is_empty() {
        return Ok(Some(format!("no run of {} on {} data with GPU telemetry", timeline_label(r), r.primary_data)));
    }
    // Metrics with any value; NVML's utilisation only when the finer ones are all missing.
    let has = |g: Getter| ts.iter().any(|t| t.points.iter().any(|p| g(p).is_some()));
    let mut metrics: Vec<usize> = (0..4).filter(|i| has(METRICS[*i].1)).collect();
    if metrics.is_empty() && has(METRICS[4].1) {
        metrics.push(4);
    }
    if metrics.is_empty() {
        return Ok(Some(format!("the telemetry of {} has no activity metric", timeline_label(r))));
    }
    let t_max = ts.iter().flat_map(|t| t.points.iter().map(|p| p.t)).fold(1.0_f64, f64::max);
    let panels: Vec<Panel> = ts
        .iter()
        .map(|t| Panel {
            title: mode_layout(t.mode, &t.layout),
            series: metrics
                .iter()
                .map(|&i| Series {
                    color: PALETTE[i],
                    marker: Marker::Circle,
                    line: true,
                    // Sparse series (few telemetry samples in the window) get markers.
                    markers: t.points.len() < 30,
                    points: t
                        .points
                        .iter()
                        .filter_map(|p| {
                            METRICS[i].1(p).map(|v| Point {
                                x: p.t,
                                y: Stats { median: v, min: v, max: v, n: 1 },
                                hollow: false,
                            })
                        })
                        .collect(),
                })
                .collect(),
            hlines: vec![],
            marks: vec![],
        })
        .collect();
    let (area, strip) = with_legend(body);
    let axes = Axes {
        x_desc: "Time since all jobs trained (s)".into(),
        y_desc: "Activity (%)".into(),
        x_range: (0.0, t_max),
        x_integer: false,
        y_from_zero: true,
        y_fixed: Some((0.0, 105.0)),
        jitter: 0.0,
    };
    draw_lines_without_markers(root, &area, &panels, &axes)?;
    let entries: Vec<(String, RGBColor, Key)> =
        metrics.iter().map(|&i| (format!("{} (%)", METRICS[i].0), PALETTE[i], Key::Line)).collect();
    legend(&strip, &entries)?;
    Ok(None)
}

/// Time series are dense: lines only.
fn draw_lines_without_markers<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    panels: &[Panel],
    axes: &Axes,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    draw_panels(root, area, panels, axes, COLS.min(panels.len()))
}
