//! The mixes of job classes: each mix's aggregate ratio per mode, one panel per data source
//! (generated image files, synthetic data), each mix's no-interference level marked,
//! infeasible MIG layouts marked.

use anyhow::Result;
use colloc_analysis::{Results, WorkloadResult};
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::{draw_bar_panel, value_top, BarPanel, BarValue, Group};
use super::lines::SECTION_TITLE;
use super::style::{mode_color, mode_legend, Marker, ALERT, GREY, INK};
use super::{legend, legend_height, section_title, sources, with_legend, Key};
use crate::format::and_list;
use crate::legend::{mix_classes, mix_experiments, mix_jobs};
use crate::order::{is_mix, mix_position, mode_name, MODES};

/// A panel's height in pixels.
const PANEL_H: u32 = 330;

/// The mixes of one data source.
struct Source<'a> {
    data: String,
    mixes: Vec<&'a WorkloadResult>,
}

/// What the figure draws: the sources with mixes, the modes with a value in some mix, the
/// mixes' labels in declared order, and whether ratios (else raw throughput) are shown.
struct Plan<'a> {
    sources: Vec<Source<'a>>,
    modes: Vec<Mode>,
    labels: Vec<(usize, String)>,
    use_ratio: bool,
}

fn plan(r: &Results) -> Option<Plan<'_>> {
    let sources: Vec<Source> = sources(r)
        .into_iter()
        .map(|d| Source { mixes: r.workloads.iter().filter(|w| is_mix(w) && w.data == d).collect(), data: d })
        .filter(|s| !s.mixes.is_empty())
        .collect();
    if sources.is_empty() {
        return None;
    }
    let all: Vec<&WorkloadResult> = sources.iter().flat_map(|s| s.mixes.iter().copied()).collect();
    // Ratios need each model alone; without those runs, show the raw throughput.
    let use_ratio = all.iter().any(|w| w.stats.aggregate_ratio.is_some());
    let has_value = |w: &&WorkloadResult| {
        if use_ratio {
            w.stats.aggregate_ratio.is_some()
        } else {
            w.stats.aggregate_throughput.is_some()
        }
    };
    // A mode gets a bar in each mix only when some mix has a value in it.
    let modes: Vec<Mode> = MODES
        .iter()
        .copied()
        .filter(|m| *m != Mode::Exclusive && all.iter().any(|w| w.mode == *m && has_value(w)))
        .collect();
    let mut labels: Vec<(usize, String)> =
        all.iter().map(|w| (mix_position(&w.form).unwrap_or(0), w.label.clone())).collect();
    labels.sort();
    labels.dedup();
    Some(Plan { sources, modes, labels, use_ratio })
}

/// The modes of the mixes without a bar: none of their mixes measured (`MIG`).
pub(super) fn unmeasured_modes(r: &Results) -> Vec<String> {
    let Some(p) = plan(r) else { return Vec::new() };
    MODES
        .iter()
        .copied()
        .filter(|m| {
            *m != Mode::Exclusive
                && !p.modes.contains(m)
                && p.sources.iter().any(|s| s.mixes.iter().any(|w| w.mode == *m))
        })
        .map(|m| mode_name(m).to_string())
        .collect()
}

/// The figure's height below the header, `None` without mixes.
pub(super) fn height(r: &Results) -> Option<u32> {
    let p = plan(r)?;
    let headings = if sources(r).len() > 1 { SECTION_TITLE } else { 0 };
    let (_, marks) = panels(r, &p);
    Some(p.sources.len() as u32 * (PANEL_H + headings) + legend_height(&entries(r, &p, &marks)))
}

/// The marks drawn, for the legend.
#[derive(Default, Clone, Copy)]
struct Marks {
    infeasible: bool,
    not_run: bool,
    no_ref: bool,
}

fn entries(r: &Results, p: &Plan, marks: &Marks) -> Vec<(String, RGBColor, Key)> {
    let mut entries: Vec<(String, RGBColor, Key)> =
        p.modes.iter().map(|m| (mode_legend(*m, r), mode_color(*m), Key::Bar)).collect();
    if p.use_ratio {
        entries.push(("no interference (= number of jobs)".into(), INK, Key::Dashed));
        entries.push(("one job alone = 1".into(), GREY, Key::Line));
    }
    if marks.infeasible {
        entries.push(("infeasible: MIG layout does not fit".into(), ALERT, Key::Mark(Marker::Cross, true)));
    }
    if marks.not_run {
        entries.push(("skipped or failed".into(), GREY, Key::Mark(Marker::Circle, false)));
    }
    if marks.no_ref {
        entries.push(("no run of a job's model alone".into(), GREY, Key::Glyph("?")));
    }
    entries
}

/// Whether the mix's layout cannot be made in `mode`: its own workload is infeasible, or,
/// for the MPS-limited stand-in that was not planned, the mix's MIG layout is.
fn infeasible(mixes: &[&WorkloadResult], label: &str, mode: Mode) -> bool {
    let find = |m: Mode| mixes.iter().find(|w| w.label == label && w.mode == m);
    let bad = |w: &&&WorkloadResult| !w.feasible || w.status == RunStatus::Infeasible;
    match find(mode) {
        Some(w) => bad(&w),
        None => mode == Mode::MpsLimited && find(Mode::Mig).is_some_and(|w| bad(&w)),
    }
}

/// A bar panel per source with its data source, sharing one value axis; the marks drawn.
fn panels(r: &Results, p: &Plan) -> (Vec<(String, BarPanel)>, Marks) {
    // A ratio's bar spans its 95% interval where the analysis gave one.
    let value = |w: &WorkloadResult| {
        if p.use_ratio {
            w.stats.aggregate_ratio.map(|s| match w.intervals {
                Some(i) => colloc_analysis::Stats { min: i.stp[0], max: i.stp[1], ..s },
                None => s,
            })
        } else {
            w.stats.aggregate_throughput
        }
    };
    let mut marks = Marks::default();
    let mut panels = Vec::new();
    for s in &p.sources {
        let groups: Vec<Group> = p
            .labels
            .iter()
            .map(|(_, label)| {
                let bars = p
                    .modes
                    .iter()
                    .map(|m| match s.mixes.iter().find(|w| &w.label == label && w.mode == *m) {
                        None if infeasible(&s.mixes, label, *m) => {
                            marks.infeasible = true;
                            BarValue::Infeasible
                        }
                        None => BarValue::Absent,
                        Some(w) => match value(w) {
                            Some(v) => BarValue::Value(v),
                            None if infeasible(&s.mixes, label, *m) => {
                                marks.infeasible = true;
                                BarValue::Infeasible
                            }
                            None if w.status == RunStatus::Ok => {
                                marks.no_ref = true;
                                BarValue::NoReference
                            }
                            None => {
                                marks.not_run = true;
                                BarValue::NotRun
                            }
                        },
                    })
                    .collect();
                let jobs = s.mixes.iter().find(|w| &w.label == label).map(|w| w.n_jobs() as f64);
                let mut g = Group::new(label.clone(), bars);
                g.reference = if p.use_ratio { jobs } else { None };
                g
            })
            .collect();
        let title = if p.use_ratio {
            mix_jobs(r)
        } else {
            format!("{}; no runs of {} alone: raw throughput", mix_jobs(r), never_alone(r, &s.data))
        };
        panels.push((
            s.data.clone(),
            BarPanel {
                title,
                value_desc: if p.use_ratio {
                    "STP: Σ job throughput / alone (×)"
                } else {
                    "Aggregate throughput (img/s)"
                }
                .into(),
                colors: p.modes.iter().map(|m| mode_color(*m)).collect(),
                groups,
                ref_line: p.use_ratio.then_some(1.0),
                ref_color: GREY,
                top: None,
            },
        ));
    }
    // One value axis for all the sources, so that their bars compare.
    let top = panels.iter().map(|(_, panel)| value_top(panel)).fold(0.0_f64, f64::max);
    for (_, panel) in &mut panels {
        panel.top = Some(top);
    }
    (panels, marks)
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let Some(p) = plan(r) else {
        return Ok(Some(match mix_experiments(r) {
            Some(e) => format!("{}'s mixes were not run", e.to_lowercase()),
            None => "no mixes of job classes were run".to_string(),
        }));
    };
    let (panels, marks) = panels(r, &p);
    let entries = entries(r, &p, &marks);
    let (area, strip) = with_legend(body, &entries);
    let (w, _) = area.dim_in_pixel();
    // A campaign of one data source: no heading (the title names it).
    let headings = sources(r).len() > 1;
    let mut y = 0_i32;
    for (data, panel) in &panels {
        if headings {
            y += super::lines::section_heading(&area, &section_title(r, data, ""), y)?;
        }
        let cell = area.clone().shrink((0, y), (w, PANEL_H));
        draw_bar_panel(root, &cell, panel)?;
        y += PANEL_H as i32;
    }
    legend(&strip, &entries)?;
    Ok(None)
}

/// The mix classes whose model was not measured alone with `data`: `M and L`.
fn never_alone(r: &Results, data: &str) -> String {
    let letters: Vec<String> = mix_classes(r)
        .into_iter()
        .filter(|c| {
            !r.baselines.iter().any(|b| {
                (&b.model, &b.dataset, b.batch_size, b.data.as_str()) == (&c.model, &c.dataset, c.batch_size, data)
            })
        })
        .map(|c| c.letter.clone())
        .collect();
    if letters.is_empty() {
        "the classes".to_string()
    } else {
        and_list(&letters)
    }
}
