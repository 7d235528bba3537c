//! The same workloads on synthetic data and on generated image files: aggregate throughput
//! and the share of time the jobs waited for data.

use anyhow::Result;
use colloc_analysis::{Results, WorkloadResult};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

use super::bars::{draw_row_panel, BarPanel, BarValue, Group};
use super::style::PALETTE;
use super::{legend, with_legend, Key};
use crate::order::workload_key;

const SOURCES: [&str; 3] = ["synthetic", "generated", "imagefolder"];

/// Pixels for the rows' names, left of the first panel.
const LABELS: u32 = 240;

/// A configuration: experiment, jobs label, mode, layout.
type Config = (u32, String, String, String);

/// The configurations measured with more than one data source, in the tables' order, and
/// their workloads by source.
fn configurations(r: &Results) -> (Vec<Config>, BTreeMap<Config, BTreeMap<String, &WorkloadResult>>) {
    let mut by: BTreeMap<Config, BTreeMap<String, &WorkloadResult>> = BTreeMap::new();
    let mut ws: Vec<&WorkloadResult> = r.workloads.iter().filter(|w| w.stats.aggregate_throughput.is_some()).collect();
    ws.sort_by_key(|w| workload_key(w));
    let mut order = Vec::new();
    for w in ws {
        let key = (w.experiment, w.label.clone(), w.mode.to_string(), w.layout.clone());
        if !order.contains(&key) {
            order.push(key.clone());
        }
        by.entry(key).or_default().insert(w.data.clone(), w);
    }
    order.retain(|k| by[k].len() > 1);
    (order, by)
}

/// The figure's height for its rows (one per configuration).
pub(super) fn height(r: &Results) -> u32 {
    let rows = configurations(r).0.len() as u32;
    if rows == 0 {
        380
    } else {
        130 + 46 * rows
    }
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let (order, by) = configurations(r);
    if order.is_empty() {
        return Ok(Some("no workload was measured with more than one data source".to_string()));
    }
    let sources: Vec<&str> = SOURCES.iter().copied().filter(|s| order.iter().any(|k| by[k].contains_key(*s))).collect();
    let extra: BTreeSet<&str> =
        order.iter().flat_map(|k| by[k].keys().map(String::as_str)).filter(|s| !SOURCES.contains(s)).collect();
    let sources: Vec<&str> = sources.into_iter().chain(extra).collect();
    let colors: Vec<RGBColor> = (0..sources.len()).map(|i| PALETTE[(i + 4) % PALETTE.len()]).collect();
    // A row is named by its job count and mode (the models are in the panel's title).
    let label = |k: &Config| {
        let w = by[k].values().next().expect("a workload");
        let jobs = match w.n_jobs() {
            1 => "1 job".to_string(),
            n => format!("{n} jobs"),
        };
        format!("{jobs}\n{}", crate::tables::results::mode_label(w))
    };
    let groups_for = |f: &dyn Fn(&WorkloadResult) -> Option<colloc_analysis::Stats>| -> Vec<Group> {
        order
            .iter()
            .map(|k| Group {
                label: label(k),
                bars: sources
                    .iter()
                    .map(|s| match by[k].get(*s).and_then(|w| f(w)) {
                        Some(v) => BarValue::Value(v),
                        None => BarValue::Absent,
                    })
                    .collect(),
            })
            .collect()
    };
    let models: Vec<String> = order
        .iter()
        .flat_map(|k| by[k].values().flat_map(|w| w.jobs.iter().map(|j| j.model.clone())))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (area, strip) = with_legend(body);
    let (left, right) = area.split_horizontally(area.dim_in_pixel().0 * 3 / 5);
    let throughput = BarPanel {
        title: format!("Aggregate throughput ({})", models.join(", ")),
        value_desc: "Images per second (img/s)".into(),
        colors: colors.clone(),
        groups: groups_for(&|w: &WorkloadResult| w.stats.aggregate_throughput),
        ref_line: None,
    };
    draw_row_panel(root, &left, &throughput, LABELS)?;
    let share = |w: &WorkloadResult| {
        w.stats.data_wait_share.map(|s| colloc_analysis::Stats {
            median: s.median * 100.0,
            min: s.min * 100.0,
            max: s.max * 100.0,
            n: s.n,
        })
    };
    let wait = BarPanel {
        title: "Time waiting for data (median over jobs)".into(),
        value_desc: "Data wait (%)".into(),
        colors: colors.clone(),
        groups: groups_for(&share),
        ref_line: None,
    };
    draw_row_panel(root, &right, &wait, 0)?;
    let entries: Vec<(String, RGBColor, Key)> =
        sources.iter().zip(&colors).map(|(s, c)| (format!("{s} data"), *c, Key::Bar)).collect();
    legend(&strip, &entries)?;
    Ok(None)
}
