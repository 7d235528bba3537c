//! A metric against the number of collocated jobs, one panel per model, one series per mode:
//! aggregate throughput ratio, per-job epoch time, energy per image.

use anyhow::Result;
use colloc_analysis::{Results, Stats, WorkloadResult};
use colloc_spec::Mode;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

use super::lines::{draw_panels, Axes, HLine, Mark, Panel, Point, Series};
use super::style::{mode_color, mode_marker, Marker, ALERT, GREY, INK};
use super::{legend, with_legend, Key};
use crate::order::{is_mix, mode_name, slices, MODES};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Metric {
    Ratio,
    EpochTime,
    Energy,
}

impl Metric {
    fn value(self, w: &WorkloadResult) -> Option<Stats> {
        match self {
            // The bars of a ratio are its 95% interval where the analysis gave one.
            Metric::Ratio => w.stats.aggregate_ratio.map(|s| match w.intervals {
                Some(i) => Stats { min: i.stp[0], max: i.stp[1], ..s },
                None => s,
            }),
            Metric::EpochTime => w.stats.per_job_epoch_seconds,
            Metric::Energy => w.stats.energy_per_image_j,
        }
    }
    fn y_desc(self) -> &'static str {
        match self {
            Metric::Ratio => "Aggregate throughput / alone (×)",
            Metric::EpochTime => "Per-job epoch time (s)",
            Metric::Energy => "Energy per image (J)",
        }
    }
}

pub(super) const COLS: usize = 3;

/// (experiment, model size, model, dataset, batch) → the homogeneous workloads of the main
/// data source; panels go from the small model to the large one.
fn groups(r: &Results) -> BTreeMap<(u32, usize, String, String, u32), Vec<&WorkloadResult>> {
    let mut g: BTreeMap<(u32, usize, String, String, u32), Vec<&WorkloadResult>> = BTreeMap::new();
    for w in r.workloads.iter().filter(|w| !is_mix(w) && w.homogeneous() && w.data == r.primary_data) {
        let j = &w.jobs[0];
        let key =
            (w.experiment, crate::order::class_rank(&j.model_class), j.model.clone(), j.dataset.clone(), j.batch_size);
        g.entry(key).or_default().push(w);
    }
    g
}

pub(super) fn panel_rows(r: &Results) -> usize {
    groups(r).len().div_ceil(COLS).max(1)
}

/// Total compute slices of a MIG layout (0 outside MIG).
fn total_slices(w: &WorkloadResult) -> u32 {
    w.jobs.iter().filter_map(|j| j.mig_class.as_deref()).map(slices).sum()
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
    metric: Metric,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let groups = groups(r);
    let mut panels = Vec::new();
    let mut modes_seen = Vec::new();
    // Modes with a further layout at some job count, drawn hollow.
    let mut hollow_modes: Vec<Mode> = Vec::new();
    let mut any_oom = false;
    let mut any_implausible = false;
    for ((exp, _, model, dataset, batch), ws) in &groups {
        let mut series = Vec::new();
        for mode in MODES.iter().copied().filter(|m| *m != Mode::Exclusive) {
            // jobs → workloads with a value, best layout first
            let mut at: BTreeMap<usize, Vec<(&WorkloadResult, Stats)>> = BTreeMap::new();
            for w in ws.iter().filter(|w| w.mode == mode) {
                if let Some(v) = metric.value(w) {
                    at.entry(w.n_jobs()).or_default().push((w, v));
                }
            }
            if at.is_empty() {
                continue;
            }
            let mut points = Vec::new();
            for (n, mut list) in at {
                list.sort_by(|a, b| total_slices(b.0).cmp(&total_slices(a.0)).then(a.0.id.cmp(&b.0.id)));
                for (i, (_, v)) in list.into_iter().enumerate() {
                    if i > 0 && !hollow_modes.contains(&mode) {
                        hollow_modes.push(mode);
                    }
                    points.push(Point { x: n as f64, y: v, hollow: i > 0 });
                }
            }
            if !modes_seen.contains(&mode) {
                modes_seen.push(mode);
            }
            series.push(Series {
                color: mode_color(mode),
                marker: mode_marker(mode),
                points,
                line: true,
                markers: true,
            });
        }
        let alone = ws.iter().find(|w| w.mode == Mode::Exclusive).and_then(|w| match metric {
            Metric::Ratio => w.stats.aggregate_ratio.map(|_| 1.0),
            _ => metric.value(w).map(|s| s.median),
        });
        let hlines = match (metric, alone) {
            (Metric::Ratio, _) => vec![HLine { y: 1.0, color: INK, label: None }],
            (_, Some(y)) => vec![HLine { y, color: INK, label: None }],
            _ => vec![],
        };
        if series.is_empty() {
            continue;
        }
        // Job counts at which some mode ran out of memory: a cross on the x axis.
        let mut oom: Vec<usize> = ws.iter().filter(|w| w.out_of_memory()).map(|w| w.n_jobs()).collect();
        oom.sort_unstable();
        oom.dedup();
        any_oom |= !oom.is_empty();
        let marks = oom
            .into_iter()
            .map(|n| Mark { x: n as f64, y: 0.0, lift: 12, color: ALERT, marker: Marker::Cross, filled: true })
            .collect::<Vec<_>>();
        // A ratio marked implausible (§ in the tables): a ring around its marker.
        let mut marks = marks;
        if metric == Metric::Ratio {
            for w in ws.iter().filter(|w| w.mode != Mode::Exclusive && !w.implausible.is_empty()) {
                if let Some(v) = w.stats.aggregate_ratio {
                    any_implausible = true;
                    marks.push(Mark {
                        x: w.n_jobs() as f64,
                        y: v.median,
                        lift: 0,
                        color: ALERT,
                        marker: Marker::Circle,
                        filled: false,
                    });
                }
            }
        }
        panels.push(Panel { title: format!("{model} · {dataset} · b{batch} (exp. {exp})"), series, hlines, marks });
    }
    if panels.is_empty() {
        return Ok(Some(format!(
            "no homogeneous workload with {} measured on {} data",
            match metric {
                Metric::Ratio => "a throughput ratio",
                Metric::EpochTime => "an epoch time",
                Metric::Energy => "an energy counter",
            },
            r.primary_data
        )));
    }
    let (area, strip) = with_legend(body);
    let axes = Axes {
        x_desc: "Collocated jobs".into(),
        y_desc: metric.y_desc().into(),
        x_range: (0.5, 7.5),
        x_integer: true,
        y_from_zero: true,
        y_fixed: None,
        jitter: 0.09,
    };
    draw_panels(root, &area, &panels, &axes, COLS.min(panels.len()))?;
    modes_seen.sort_by_key(|m| crate::order::mode_rank(*m));
    let mut entries: Vec<(String, RGBColor, Key)> =
        modes_seen.iter().map(|m| (mode_name(*m).to_string(), mode_color(*m), Key::Series(mode_marker(*m)))).collect();
    entries.push(("alone on the whole GPU".into(), INK, Key::Dashed));
    if any_oom {
        entries.push(("out of memory".into(), ALERT, Key::Mark(Marker::Cross, true)));
    }
    if any_implausible {
        entries.push(("implausible (§)".into(), ALERT, Key::Mark(Marker::Circle, false)));
    }
    // The key looks like the hollow markers drawn: the mode's own when one mode has them.
    match hollow_modes.as_slice() {
        [] => {}
        [m] => entries.push(("other MIG layout, same jobs".into(), mode_color(*m), Key::Mark(mode_marker(*m), false))),
        _ => entries.push(("hollow: other MIG layout, same jobs".into(), GREY, Key::Mark(Marker::Circle, false))),
    }
    legend(&strip, &entries)?;
    Ok(None)
}
