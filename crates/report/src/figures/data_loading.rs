//! The same workloads on synthetic data and on generated image files: aggregate throughput
//! and the share of time the jobs waited for data.

use anyhow::Result;
use colloc_analysis::{Results, WorkloadResult};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

use super::bars::{draw_bar_panel, BarPanel, BarValue, Group};
use super::style::PALETTE;
use super::{legend, with_legend, Key};
use crate::format::Quantity;
use crate::order::workload_key;

const SOURCES: [&str; 3] = ["synthetic", "generated", "imagefolder"];

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    // Configurations (same jobs, same mode and layout) measured with more than one source.
    let mut by: BTreeMap<(u32, String, String, String), BTreeMap<String, &WorkloadResult>> = BTreeMap::new();
    let mut ws: Vec<&WorkloadResult> = r.workloads.iter().filter(|w| w.aggregate_throughput.is_some()).collect();
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
    if order.is_empty() {
        return Ok(Some("no workload was measured with more than one data source".to_string()));
    }
    let sources: Vec<&str> = SOURCES.iter().copied().filter(|s| order.iter().any(|k| by[k].contains_key(*s))).collect();
    let extra: BTreeSet<&str> =
        order.iter().flat_map(|k| by[k].keys().map(String::as_str)).filter(|s| !SOURCES.contains(s)).collect();
    let sources: Vec<&str> = sources.into_iter().chain(extra).collect();
    let colors: Vec<RGBColor> = (0..sources.len()).map(|i| PALETTE[(i + 4) % PALETTE.len()]).collect();
    let label = |k: &(u32, String, String, String)| {
        let w = by[k].values().next().expect("a workload");
        // Labels stay short under a bar pair: the job count and the mode (the models are in
        // the panel titles).
        let jobs = match k.1.split_once(" × ") {
            Some(("1", _)) => "1 job".to_string(),
            Some((n, _)) => format!("{n} jobs"),
            None => k.1.clone(),
        };
        format!("{jobs}\n{}", crate::tables::results::mode_label(w))
    };
    let groups_for = |f: &dyn Fn(&WorkloadResult) -> Option<colloc_analysis::Stats>, notes: bool| -> Vec<Group> {
        order
            .iter()
            .map(|k| {
                let cells = &by[k];
                Group {
                    label: label(k),
                    bars: sources
                        .iter()
                        .map(|s| match cells.get(*s).and_then(|w| f(w)) {
                            Some(v) => BarValue::Value(v),
                            None => BarValue::Absent,
                        })
                        .collect(),
                    notes: sources
                        .iter()
                        .map(|s| {
                            if !notes {
                                return None;
                            }
                            cells
                                .get(*s)
                                .and_then(|w| w.data_wait_share)
                                .map(|d| format!("wait {} %", Quantity::Share.number(d.median)))
                        })
                        .collect(),
                }
            })
            .collect()
    };
    let models: Vec<String> = order
        .iter()
        .map(|k| k.1.split_once(" × ").map_or(k.1.as_str(), |(_, m)| m).to_string())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (area, strip) = with_legend(body);
    let (left, right) = area.split_horizontally(area.dim_in_pixel().0 / 2);
    let throughput = BarPanel {
        title: format!("Aggregate throughput ({})", models.join(", ")),
        y_desc: "Images per second (img/s)".into(),
        colors: colors.clone(),
        groups: groups_for(&|w: &WorkloadResult| w.aggregate_throughput, false),
        ref_line: None,
    };
    draw_bar_panel(root, &left, &throughput)?;
    let share = |w: &WorkloadResult| {
        w.data_wait_share.map(|s| colloc_analysis::Stats {
            median: s.median * 100.0,
            min: s.min * 100.0,
            max: s.max * 100.0,
            n: s.n,
        })
    };
    let wait = BarPanel {
        title: "Time waiting for data (mean over jobs)".into(),
        y_desc: "Data wait (%)".into(),
        colors: colors.clone(),
        groups: groups_for(&share, false),
        ref_line: None,
    };
    draw_bar_panel(root, &right, &wait)?;
    let entries: Vec<(String, RGBColor, Key)> =
        sources.iter().zip(&colors).map(|(s, c)| (format!("{s} data"), *c, Key::Bar)).collect();
    legend(&strip, &entries)?;
    Ok(None)
}
