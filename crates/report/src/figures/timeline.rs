//! GPU activity over the common window of the campaign's timeline workloads (the plan's
//! timeline role): one section per data source, one panel per mode, the measurement window
//! shaded.

use colloc_analysis::{Results, Stats, Timeline, TimelinePoint};
use plotters::prelude::*;

use super::lines::{Axes, Band, Lines, Panel, Point, Section, Series};
use super::style::{mode_layout_legend, Marker, METRIC_COLORS, SHADE};
use super::{section_title, sources, Key};
use crate::legend::timeline_label;
use crate::order::mode_rank;

/// Panels per row.
pub(super) const COLS: usize = 3;
/// A panel's height in pixels.
const PANEL_H: u32 = 330;

type Getter = fn(&TimelinePoint) -> Option<f64>;

const METRICS: [(&str, Getter); 5] = [
    ("SM activity", |p| p.sm_activity_pct),
    ("SM occupancy", |p| p.sm_occupancy_pct),
    ("Tensor activity", |p| p.tensor_activity_pct),
    ("DRAM bandwidth", |p| p.dram_bw_util_pct),
    ("GPU utilisation (NVML)", |p| p.gpu_util_pct),
];

/// The timelines shown, by data source in display order, each source's in mode order.
fn chosen(r: &Results) -> Vec<(String, Vec<&Timeline>)> {
    sources(r)
        .into_iter()
        .map(|d| {
            let mut t: Vec<&Timeline> = r.timelines.iter().filter(|t| t.data == d && !t.points.is_empty()).collect();
            t.sort_by_key(|t| (mode_rank(t.mode), t.layout.clone(), t.workload_id.clone()));
            (d, t)
        })
        .filter(|(_, t)| !t.is_empty())
        .collect()
}

/// The number of spans of the shown timelines that are binned (`colloc_analysis::Timeline`'s
/// `bins`), if any is.
pub(super) fn bins(r: &Results) -> Option<u32> {
    chosen(r).iter().flat_map(|(_, ts)| ts.iter().filter_map(|t| t.bins)).max()
}

/// The measurement window of a timeline's run, in seconds since it opened (the jobs' clock).
fn window_seconds(r: &Results, t: &Timeline) -> Option<f64> {
    r.runs.iter().find(|x| x.run_id == t.run_id).and_then(|x| x.window).map(|w| w.seconds * w.clock_scale)
}

pub(super) fn build(r: &Results) -> Result<Lines, String> {
    let by_source = chosen(r);
    if by_source.is_empty() {
        return Err(format!("no run of {} with GPU telemetry", timeline_label(r)));
    }
    let all: Vec<&Timeline> = by_source.iter().flat_map(|(_, ts)| ts.iter().copied()).collect();
    // Metrics with any value; NVML's utilisation only when the finer ones are all missing.
    let has = |g: Getter| all.iter().any(|t| t.points.iter().any(|p| g(p).is_some()));
    let mut metrics: Vec<usize> = (0..4).filter(|i| has(METRICS[*i].1)).collect();
    if metrics.is_empty() && has(METRICS[4].1) {
        metrics.push(4);
    }
    if metrics.is_empty() {
        return Err(format!("the telemetry of {} has no activity metric", timeline_label(r)));
    }
    let t_max =
        all.iter().flat_map(|t| t.points.iter().map(|p| p.t).chain(window_seconds(r, t))).fold(1.0_f64, f64::max);
    let panel = |t: &Timeline| {
        let series = metrics
            .iter()
            .map(|&i| Series {
                color: METRIC_COLORS[i],
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
                            reference: None,
                        })
                    })
                    .collect(),
            })
            .collect();
        let mut p = Panel::new(mode_layout_legend(t.mode, &t.layout, r), series);
        p.bands = window_seconds(r, t)
            .map(|s| Band { from: 0.0, to: s, color: SHADE, label: format!("measurement window, {s:.1} s") })
            .into_iter()
            .collect();
        p
    };
    let mut sections: Vec<Section> = by_source
        .iter()
        .map(|(d, ts)| Section { title: section_title(r, d, ""), panels: ts.iter().map(|t| panel(t)).collect() })
        .collect();
    // A campaign of one data source: no heading (the title names it).
    if sources(r).len() == 1 {
        sections[0].title.clear();
    }
    let mut legend: Vec<(String, RGBColor, Key)> =
        metrics.iter().map(|&i| (format!("{} (%)", METRICS[i].0), METRIC_COLORS[i], Key::Line)).collect();
    if sections.iter().flat_map(|s| &s.panels).any(|p| !p.bands.is_empty()) {
        legend.push(("measurement window".into(), SHADE, Key::Shade));
    }
    let margin = t_max * 0.03;
    let cols = super::lines::grid_columns(&sections, COLS);
    Ok(Lines {
        sections,
        cols,
        panel_h: PANEL_H,
        legend,
        axes: Axes {
            x_desc: "Time since the window opened (s)".into(),
            y_desc: "Activity (%)".into(),
            x_range: (-margin, t_max + margin),
            x_integer: false,
            y_from_zero: true,
            // Room above 100% for the window's label.
            y_fixed: Some((0.0, 118.0)),
            y_label_max: Some(100.0),
            jitter: 0.0,
            share_y: false,
        },
    })
}
