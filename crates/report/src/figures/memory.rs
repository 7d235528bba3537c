//! Peak device memory of the homogeneous workloads against the GPU's capacity, per mode.

use anyhow::Result;
use colloc_analysis::{Results, Stats, WorkloadResult};
use colloc_spec::Mode;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

use super::lines::{draw_panels, Axes, HLine, Mark, Panel, Point, Series};
use super::style::{Marker, ALERT, INK, MARKERS, PALETTE};
use super::{legend, with_legend, Key};
use crate::format::{gib, GIB};
use crate::order::{is_mix, mode_name, MODES};

pub(super) const COLS: usize = 2;

fn workloads(r: &Results) -> Vec<&WorkloadResult> {
    r.workloads
        .iter()
        .filter(|w| !is_mix(w) && w.homogeneous() && w.data == r.primary_data && w.mode != Mode::Exclusive)
        .collect()
}

fn modes(r: &Results) -> Vec<Mode> {
    let ws = workloads(r);
    MODES.iter().copied().filter(|m| ws.iter().any(|w| w.mode == *m)).collect()
}

pub(super) fn panel_rows(r: &Results) -> usize {
    modes(r).len().div_ceil(COLS).max(1)
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let ws = workloads(r);
    let capacity = r.gpu_memory_bytes();
    // Models in a fixed order: (experiment, model size, model, dataset, batch).
    let mut models: Vec<(u32, usize, String, String, u32)> = ws
        .iter()
        .map(|w| {
            let j = &w.jobs[0];
            (w.experiment, crate::order::class_rank(&j.model_class), j.model.clone(), j.dataset.clone(), j.batch_size)
        })
        .collect();
    models.sort();
    models.dedup();
    let mut panels = Vec::new();
    let mut any_oom = false;
    for mode in modes(r) {
        let mut series = Vec::new();
        let mut marks = Vec::new();
        for (i, m) in models.iter().enumerate() {
            let mine: Vec<&&WorkloadResult> = ws
                .iter()
                .filter(|w| {
                    w.mode == mode
                        && (w.experiment, &w.jobs[0].model, &w.jobs[0].dataset, w.jobs[0].batch_size)
                            == (m.0, &m.2, &m.3, m.4)
                })
                .collect();
            let mut by_jobs: BTreeMap<usize, Vec<Stats>> = BTreeMap::new();
            for w in &mine {
                if let Some(s) = w.stats.mem_used_bytes_max {
                    by_jobs.entry(w.n_jobs()).or_default().push(Stats {
                        median: s.median / GIB,
                        min: s.min / GIB,
                        max: s.max / GIB,
                        n: s.n,
                    });
                }
                if w.out_of_memory() {
                    if let Some(c) = capacity {
                        any_oom = true;
                        marks.push(Mark {
                            x: w.n_jobs() as f64,
                            y: c / GIB,
                            lift: 0,
                            color: ALERT,
                            marker: Marker::Cross,
                            filled: true,
                        });
                    }
                }
            }
            let points: Vec<Point> = by_jobs
                .into_iter()
                .flat_map(|(n, v)| v.into_iter().enumerate().map(move |(k, y)| Point { x: n as f64, y, hollow: k > 0 }))
                .collect();
            if !points.is_empty() {
                series.push(Series {
                    color: PALETTE[i % PALETTE.len()],
                    marker: MARKERS[i % MARKERS.len()],
                    points,
                    line: true,
                    markers: true,
                });
            }
        }
        if series.is_empty() && marks.is_empty() {
            continue;
        }
        let hlines = capacity
            .map(|c| HLine { y: c / GIB, color: INK, label: Some(format!("GPU memory {}", gib(c))) })
            .into_iter()
            .collect();
        panels.push(Panel { title: mode_name(mode).to_string(), series, hlines, marks });
    }
    if panels.is_empty() {
        return Ok(Some("no collocated workload with device memory measured".to_string()));
    }
    let (area, strip) = with_legend(body);
    let axes = Axes {
        x_desc: "Collocated jobs".into(),
        y_desc: "Peak device memory used (GiB)".into(),
        x_range: (0.5, 7.5),
        x_integer: true,
        y_from_zero: true,
        y_fixed: None,
        jitter: 0.07,
    };
    draw_panels(root, &area, &panels, &axes, COLS.min(panels.len()))?;
    let mut entries: Vec<(String, RGBColor, Key)> = models
        .iter()
        .enumerate()
        .map(|(i, m)| {
            (format!("{} b{}", m.2, m.4), PALETTE[i % PALETTE.len()], Key::Series(MARKERS[i % MARKERS.len()]))
        })
        .collect();
    entries.push(("GPU capacity".into(), INK, Key::Dashed));
    if any_oom {
        entries.push(("ran out of memory".into(), ALERT, Key::Mark(Marker::Cross, true)));
    }
    legend(&strip, &entries)?;
    Ok(None)
}
