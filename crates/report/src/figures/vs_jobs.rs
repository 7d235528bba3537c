//! A metric against the number of collocated jobs, one section per data source (synthetic
//! data beside the generated image files), one panel per model, one series per mode:
//! aggregate throughput ratio, per-job epoch time, energy per image, peak device memory, SM
//! activity.

use colloc_analysis::{Results, Stats, WorkloadResult};
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use plotters::prelude::*;
use std::collections::BTreeMap;

use super::lines::{Axes, HLine, Lines, Mark, Panel, Point, Section, Series};
use super::style::{mode_color, mode_legend, mode_marker, Marker, ALERT, GREY, INK};
use super::{section_title, sections_of, Key};
use crate::format::{gib, GIB};
use crate::order::{is_mix, slices, MODES};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Metric {
    Ratio,
    EpochTime,
    Energy,
    Memory,
    /// The share of the window the GPU's SMs had work (SM activity, NVML's GPM metric).
    Activity,
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
            Metric::Memory => w.stats.mem_used_bytes_max.map(|s| Stats {
                median: s.median / GIB,
                min: s.min / GIB,
                max: s.max / GIB,
                n: s.n,
            }),
            Metric::Activity => w.stats.sm_activity_pct,
        }
    }

    /// Whether the model alone is a point of its own at one job (where the metric is not
    /// measured against it).
    fn alone_point(self) -> bool {
        matches!(self, Metric::Memory | Metric::Activity)
    }

    fn y_desc(self) -> &'static str {
        match self {
            Metric::Ratio => "STP: Σ job throughput / alone (×)",
            Metric::EpochTime => "Per-job epoch time (s)",
            Metric::Energy => "Energy per image (J)",
            Metric::Memory => "Peak device memory used (GiB)",
            Metric::Activity => "SM activity in the window (%)",
        }
    }
    /// What the campaign lacks when no panel has a value.
    fn missing(self) -> &'static str {
        match self {
            Metric::Ratio => "an STP",
            Metric::EpochTime => "an epoch time",
            Metric::Energy => "an energy counter",
            Metric::Memory => "device memory",
            Metric::Activity => "SM activity",
        }
    }
}

/// Panels per row.
pub(super) const COLS: usize = 3;
/// A panel's height in pixels.
pub(super) const PANEL_H: u32 = 360;

type GroupKey = (u32, usize, String, String, u32);

/// (experiment, model size, model, dataset, batch) → the homogeneous workloads of one data
/// source and protocol; panels go from the small model to the large one.
fn groups<'a>(r: &'a Results, data: &str, protocol: &str) -> BTreeMap<GroupKey, Vec<&'a WorkloadResult>> {
    let mut g: BTreeMap<GroupKey, Vec<&WorkloadResult>> = BTreeMap::new();
    for w in r
        .workloads
        .iter()
        .filter(|w| !is_mix(w) && w.homogeneous() && w.data == data && w.own_protocol == protocol && !w.jobs.is_empty())
    {
        let j = &w.jobs[0];
        let key =
            (w.experiment, crate::order::class_rank(&j.model_class), j.model.clone(), j.dataset.clone(), j.batch_size);
        g.entry(key).or_default().push(w);
    }
    g
}

/// Total compute slices of a MIG layout (0 outside MIG).
fn total_slices(w: &WorkloadResult) -> u32 {
    w.jobs.iter().filter_map(|j| j.mig_class.as_deref()).map(slices).sum()
}

/// The epoch time alone that the workload's ratio divides by: per job and counted run, its
/// epoch time over its slowdown (the dataset's images over the median throughput of the
/// runs alone it was divided by), the median over them.
fn alone_epoch_seconds(r: &Results, w: &WorkloadResult) -> Option<f64> {
    let mut v: Vec<f64> = r
        .runs
        .iter()
        .filter(|x| x.workload_id == w.id && x.status == RunStatus::Ok && !x.superseded)
        .flat_map(|x| x.jobs.iter())
        .filter_map(|j| match (j.epoch_seconds, j.slowdown) {
            (Some(e), Some(s)) if s > 0.0 && e.is_finite() && s.is_finite() => Some(e / s),
            _ => None,
        })
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// What the panels drew, for the legend: which modes, which of them hollow (a further
/// layout at some job count), and which marks and reference lines.
#[derive(Default)]
struct Seen {
    modes: Vec<Mode>,
    hollow_modes: Vec<Mode>,
    oom: bool,
    failed: bool,
    implausible: bool,
    alone_line: bool,
    reference: bool,
}

pub(super) fn build(r: &Results, metric: Metric) -> Result<Lines, String> {
    let mut sections = Vec::new();
    let mut seen = Seen::default();
    for (data, protocol) in sections_of(r) {
        let mut panels = Vec::new();
        for ((exp, _, model, dataset, batch), ws) in &groups(r, &data, &protocol) {
            let series = mode_series(r, ws, metric, &mut seen);
            if series.iter().all(|s| s.color == mode_color(Mode::Exclusive)) {
                continue;
            }
            let mut panel = Panel::new(format!("{model} · {dataset} · b{batch} (exp. {exp})"), series);
            panel.hlines = hlines(r, ws, metric, &mut seen);
            panel.marks = marks(r, ws, metric, &mut seen);
            panel.reference_color = mode_color(Mode::Exclusive);
            panels.push(panel);
        }
        if !panels.is_empty() {
            sections.push(Section { title: section_title(r, &data, &protocol), panels });
        }
    }
    if sections.is_empty() {
        return Err(format!("no homogeneous workload with {} measured", metric.missing()));
    }
    // A campaign of one data source and protocol: no heading (the title names the source).
    if sections_of(r).len() == 1 {
        sections[0].title.clear();
    }
    let legend = legend_entries(r, metric, seen);
    let cols = super::lines::grid_columns(&sections, COLS);
    let axes = Axes {
        x_desc: "Collocated jobs".into(),
        y_desc: metric.y_desc().into(),
        x_range: (0.5, 7.5),
        x_integer: true,
        y_from_zero: true,
        y_fixed: None,
        jitter: if metric == Metric::EpochTime { 0.16 } else { 0.09 },
        share_y: true,
        y_label_max: None,
    };
    Ok(Lines { sections, cols, panel_h: PANEL_H, legend, axes })
}

/// One series per mode of a panel's workloads: a point per job count, further layouts at
/// the same count hollow.
fn mode_series(r: &Results, ws: &[&WorkloadResult], metric: Metric, seen: &mut Seen) -> Vec<Series> {
    let mut series = Vec::new();
    // Memory and activity: the model alone is a point of its own at one job.
    let modes = MODES.iter().copied().filter(|m| *m != Mode::Exclusive || metric.alone_point());
    for mode in modes {
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
            for (i, (w, v)) in list.into_iter().enumerate() {
                if i > 0 && !seen.hollow_modes.contains(&mode) {
                    seen.hollow_modes.push(mode);
                }
                let reference = match metric {
                    Metric::EpochTime => alone_epoch_seconds(r, w),
                    _ => None,
                };
                seen.reference |= reference.is_some();
                points.push(Point { x: n as f64, y: v, hollow: i > 0, reference });
            }
        }
        if !seen.modes.contains(&mode) {
            seen.modes.push(mode);
        }
        series.push(Series {
            color: mode_color(mode),
            marker: mode_marker(mode),
            points,
            line: mode != Mode::Exclusive,
            markers: true,
        });
    }
    series
}

/// A panel's horizontal lines: one alone (ratio, energy), the GPU's capacity (memory), every
/// SM active (activity).
fn hlines(r: &Results, ws: &[&WorkloadResult], metric: Metric, seen: &mut Seen) -> Vec<HLine> {
    let alone = ws.iter().find(|w| w.mode == Mode::Exclusive);
    match metric {
        Metric::Ratio => vec![HLine { y: 1.0, color: mode_color(Mode::Exclusive), label: None }],
        Metric::Energy => match alone.and_then(|w| metric.value(w)) {
            Some(s) => {
                seen.alone_line = true;
                vec![HLine { y: s.median, color: mode_color(Mode::Exclusive), label: None }]
            }
            None => vec![],
        },
        Metric::Memory => r
            .gpu_memory_bytes()
            .map(|c| HLine { y: c / GIB, color: INK, label: Some(format!("GPU memory {}", gib(c))) })
            .into_iter()
            .collect(),
        Metric::Activity => vec![HLine { y: 100.0, color: INK, label: Some("every SM active".into()) }],
        Metric::EpochTime => vec![],
    }
}

/// A panel's marks: a cross at each job count where some mode ran out of memory (on the x
/// axis, or at the GPU's capacity in the memory figure), a bar on the x axis at each other
/// job count where some mode's every run failed for another reason (a diverged training,
/// say: no value to draw), a ring around a ratio marked implausible (§ in the tables).
fn marks(r: &Results, ws: &[&WorkloadResult], metric: Metric, seen: &mut Seen) -> Vec<Mark> {
    let capacity = r.gpu_memory_bytes();
    let job_counts = |keep: &dyn Fn(&WorkloadResult) -> bool| {
        let mut n: Vec<usize> = ws.iter().filter(|w| keep(w)).map(|w| w.n_jobs()).collect();
        n.sort_unstable();
        n.dedup();
        n
    };
    let oom = job_counts(&|w| w.out_of_memory());
    let failed: Vec<usize> =
        job_counts(&|w| w.status == RunStatus::Failed).into_iter().filter(|n| !oom.contains(n)).collect();
    seen.oom |= !oom.is_empty();
    seen.failed |= !failed.is_empty();
    // A mark standing on the x axis at a job count.
    let on_axis = |n: usize, marker| Mark { x: n as f64, y: 0.0, lift: 12, color: ALERT, marker, filled: true };
    let mut marks: Vec<Mark> = oom
        .into_iter()
        .map(|n| match (metric, capacity) {
            (Metric::Memory, Some(c)) => {
                Mark { x: n as f64, y: c / GIB, lift: 0, color: ALERT, marker: Marker::Cross, filled: true }
            }
            _ => on_axis(n, Marker::Cross),
        })
        .collect();
    marks.extend(failed.into_iter().map(|n| on_axis(n, Marker::Dash)));
    if metric == Metric::Ratio {
        for w in ws.iter().filter(|w| w.mode != Mode::Exclusive && !w.implausible.is_empty()) {
            if let Some(v) = w.stats.aggregate_ratio {
                seen.implausible = true;
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
    marks
}

/// The legend: the modes drawn, then the lines and marks some panel has.
fn legend_entries(r: &Results, metric: Metric, mut seen: Seen) -> Vec<(String, RGBColor, Key)> {
    seen.modes.sort_by_key(|m| crate::order::mode_rank(*m));
    let mut legend: Vec<(String, RGBColor, Key)> = seen
        .modes
        .iter()
        .map(|m| {
            let key =
                if *m == Mode::Exclusive { Key::Mark(mode_marker(*m), true) } else { Key::Series(mode_marker(*m)) };
            let label = if *m == Mode::Exclusive { "alone on the whole GPU".to_string() } else { mode_legend(*m, r) };
            (label, mode_color(*m), key)
        })
        .collect();
    let alone = mode_color(Mode::Exclusive);
    match metric {
        Metric::Ratio => legend.push(("alone on the whole GPU = 1".into(), alone, Key::Dashed)),
        Metric::EpochTime if seen.reference => {
            legend.push(("alone: the runs each ratio divides by".into(), alone, Key::Mark(Marker::Dash, true)))
        }
        Metric::Energy if seen.alone_line => {
            legend.push(("alone on the whole GPU (median of its runs)".into(), alone, Key::Dashed))
        }
        Metric::Memory if r.gpu_memory_bytes().is_some() => legend.push(("GPU capacity".into(), INK, Key::Dashed)),
        Metric::Activity => legend.push(("every SM active (100 %)".into(), INK, Key::Dashed)),
        _ => {}
    }
    if seen.oom {
        legend.push(("out of memory".into(), ALERT, Key::Mark(Marker::Cross, true)));
    }
    if seen.failed {
        legend.push(("failed, not out of memory".into(), ALERT, Key::Mark(Marker::Dash, true)));
    }
    if seen.implausible {
        legend.push(("implausible (§)".into(), ALERT, Key::Mark(Marker::Circle, false)));
    }
    // The key looks like the hollow markers drawn: the mode's own when one mode has them.
    match seen.hollow_modes.as_slice() {
        [] => {}
        [m] => legend.push(("other layout, same jobs".into(), mode_color(*m), Key::Mark(mode_marker(*m), false))),
        _ => legend.push(("hollow: other layout, same jobs".into(), GREY, Key::Mark(Marker::Circle, false))),
    }
    legend
}
