//! The same workloads on synthetic data and on generated image files: aggregate throughput
//! and the share of time the jobs waited for data. Two figures: the workloads of one model,
//! grouped under their model, and the mixes, grouped under their mix.

use anyhow::Result;
use colloc_analysis::{Results, Stats, WorkloadResult};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

use super::bars::{draw_row_panel, value_top, BarPanel, BarValue, Group};
use super::style::{source_color, INK};
use super::{legend, legend_height, source_title, with_legend, Key};
use crate::order::{is_mix, mode_layout, workload_key};

const SOURCES: [&str; 3] = ["synthetic", "generated", "imagefolder"];

/// Pixels for the rows' names, left of the first panel.
const LABELS: u32 = 250;
/// Pixels per row (a configuration, or a heading).
const ROW: u32 = 29;
/// The panels' titles and value axes.
const FRAME: u32 = 110;

/// A configuration: experiment, jobs label, mode, layout, own protocol.
type Config = (u32, String, String, String, String);

/// The configurations measured with more than one data source, in the tables' order, and
/// their workloads by source; the mixes (`mixes`) or the workloads of one model.
fn configurations(r: &Results, mixes: bool) -> (Vec<Config>, BTreeMap<Config, BTreeMap<String, &WorkloadResult>>) {
    let mut by: BTreeMap<Config, BTreeMap<String, &WorkloadResult>> = BTreeMap::new();
    let mut ws: Vec<&WorkloadResult> = r
        .workloads
        .iter()
        .filter(|w| w.stats.aggregate_throughput.is_some() && is_mix(w) == mixes && !w.jobs.is_empty())
        .collect();
    // Models from the small one to the large one, as in the other figures.
    // Models from the small one to the large one, as in the other figures; mixes in their
    // declared order.
    let size = |w: &WorkloadResult| if mixes { 0 } else { crate::order::class_rank(&w.jobs[0].model_class) };
    ws.sort_by_key(|w| (w.experiment, size(w), workload_key(w)));
    let mut order = Vec::new();
    for w in ws {
        let key = (w.experiment, w.label.clone(), w.mode.to_string(), w.layout.clone(), w.own_protocol.clone());
        if !order.contains(&key) {
            order.push(key.clone());
        }
        by.entry(key).or_default().insert(w.data.clone(), w);
    }
    order.retain(|k| by[k].len() > 1);
    (order, by)
}

/// What a heading names: the model (dataset, batch) or the mix and its jobs, with the
/// experiment and the protocol when it is not the campaign's.
fn heading(w: &WorkloadResult, mixes: bool) -> String {
    let protocol = if w.own_protocol.is_empty() { String::new() } else { format!(", {} protocol", w.own_protocol) };
    if mixes {
        let mut kinds: Vec<(String, usize)> = Vec::new();
        for j in &w.jobs {
            let k = format!("{} b{}", j.model, j.batch_size);
            match kinds.iter_mut().find(|(x, _)| *x == k) {
                Some((_, n)) => *n += 1,
                None => kinds.push((k, 1)),
            }
        }
        let jobs: Vec<String> =
            kinds.iter().map(|(k, n)| if *n > 1 { format!("{n} × {k}") } else { k.clone() }).collect();
        format!("{}: {} (exp. {}{protocol})", w.label, jobs.join(" + "), w.experiment)
    } else {
        let j = &w.jobs[0];
        format!("{} · {} · b{} (exp. {}{protocol})", j.model, j.dataset, j.batch_size, w.experiment)
    }
}

/// The rows: a heading before each model's (or mix's) configurations, then one row per
/// configuration; the data sources drawn.
struct Rows {
    groups_throughput: Vec<Group>,
    groups_wait: Vec<Group>,
    sources: Vec<String>,
}

fn rows(r: &Results, mixes: bool) -> Option<Rows> {
    let (order, by) = configurations(r, mixes);
    if order.is_empty() {
        return None;
    }
    let present: BTreeSet<&str> = order.iter().flat_map(|k| by[k].keys().map(String::as_str)).collect();
    let sources: Vec<String> = SOURCES
        .iter()
        .copied()
        .filter(|s| present.contains(s))
        .chain(present.iter().copied().filter(|s| !SOURCES.contains(s)))
        .map(str::to_string)
        .collect();
    let percent = |s: Stats| Stats { median: s.median * 100.0, min: s.min * 100.0, max: s.max * 100.0, n: s.n };
    let (mut throughput, mut wait) = (Vec::new(), Vec::new());
    let mut last_heading = String::new();
    for k in &order {
        let any = by[k].values().next().expect("a workload");
        let h = heading(any, mixes);
        if h != last_heading {
            throughput.push(Group::heading(h.clone()));
            wait.push(Group::heading(h.clone()));
            last_heading = h;
        }
        // A row is named by its job count and mode (the model is in the heading above it).
        let mode = mode_layout(any.mode, &any.layout);
        let label = if mixes {
            mode
        } else {
            match any.n_jobs() {
                1 => format!("1 job\n{mode}"),
                n => format!("{n} jobs\n{mode}"),
            }
        };
        let bars = |f: &dyn Fn(&WorkloadResult) -> Option<Stats>| -> Vec<BarValue> {
            sources
                .iter()
                .map(|s| match by[k].get(s).and_then(|w| f(w)) {
                    Some(v) => BarValue::Value(v),
                    None => BarValue::Absent,
                })
                .collect()
        };
        throughput.push(Group::new(label.clone(), bars(&|w| w.stats.aggregate_throughput)));
        wait.push(Group::new(label, bars(&|w| w.stats.data_wait_share.map(percent))));
    }
    Some(Rows { groups_throughput: throughput, groups_wait: wait, sources })
}

fn entries(sources: &[String]) -> Vec<(String, RGBColor, Key)> {
    sources.iter().map(|s| (source_title(s), source_color(s), Key::Bar)).collect()
}

/// The figure's height below the header (`None`: nothing measured with two sources).
pub(super) fn height(r: &Results, mixes: bool) -> Option<u32> {
    let rows = rows(r, mixes)?;
    Some(FRAME + ROW * rows.groups_throughput.len() as u32 + legend_height(&entries(&rows.sources)))
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
    mixes: bool,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let Some(rows) = rows(r, mixes) else {
        return Ok(Some(format!(
            "no {} was measured with more than one data source",
            if mixes { "mix" } else { "workload of one model" }
        )));
    };
    let colors: Vec<RGBColor> = rows.sources.iter().map(|s| source_color(s)).collect();
    let entries = entries(&rows.sources);
    let (area, strip) = with_legend(body, &entries);
    let (left, right) = area.split_horizontally(area.dim_in_pixel().0 * 62 / 100);
    let throughput = BarPanel {
        title: "Aggregate throughput".into(),
        value_desc: "Images per second, all jobs (img/s)".into(),
        colors: colors.clone(),
        groups: rows.groups_throughput,
        ref_line: None,
        ref_color: INK,
        top: None,
    };
    let top = value_top(&throughput);
    draw_row_panel(root, &left, &BarPanel { top: Some(top), ..throughput }, LABELS)?;
    let wait = BarPanel {
        title: "Time waiting for data, per job".into(),
        value_desc: "Share of the window (%)".into(),
        colors,
        groups: rows.groups_wait,
        ref_line: None,
        ref_color: INK,
        top: Some(100.0),
    };
    draw_row_panel(root, &right, &wait, 0)?;
    legend(&strip, &entries)?;
    Ok(None)
}
