//! The mixes of job classes: each mix's aggregate ratio per mode, infeasible MIG layouts marked.

use anyhow::Result;
use colloc_analysis::{Results, WorkloadResult};
use colloc_spec::Mode;
use colloc_trace::meta::RunStatus;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::{draw_bar_panel, BarPanel, BarValue, Group};
use super::style::{mode_color, Marker, ALERT, GREY, INK};
use super::{legend, with_legend, Key};
use crate::format::and_list;
use crate::legend::{mix_classes, mix_experiments, mix_jobs};
use crate::order::{is_mix, mix_position, mode_name, MODES};

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let mixes: Vec<&WorkloadResult> = r.workloads.iter().filter(|w| is_mix(w) && w.data == r.primary_data).collect();
    if mixes.is_empty() {
        return Ok(Some(match mix_experiments(r) {
            Some(e) => format!("{}'s mixes were not run with {} data", e.to_lowercase(), r.primary_data),
            None => format!("no mixes of job classes were run with {} data", r.primary_data),
        }));
    }
    let modes: Vec<Mode> =
        MODES.iter().copied().filter(|m| *m != Mode::Exclusive && mixes.iter().any(|w| w.mode == *m)).collect();
    let mut labels: Vec<(usize, String)> =
        mixes.iter().map(|w| (mix_position(&w.form).unwrap_or(0), w.label.clone())).collect();
    labels.sort();
    labels.dedup();
    // Ratios need each model alone; without those runs, show the raw throughput.
    let use_ratio = mixes.iter().any(|w| w.stats.aggregate_ratio.is_some());
    // A ratio's bar spans its 95% interval where the analysis gave one.
    let value = |w: &WorkloadResult| {
        if use_ratio {
            w.stats.aggregate_ratio.map(|s| match w.intervals {
                Some(i) => colloc_analysis::Stats { min: i.stp[0], max: i.stp[1], ..s },
                None => s,
            })
        } else {
            w.stats.aggregate_throughput
        }
    };
    let (mut infeasible, mut not_run, mut no_ref) = (false, false, false);
    let groups = labels
        .iter()
        .map(|(_, label)| {
            let bars = modes
                .iter()
                .map(|m| match mixes.iter().find(|w| &w.label == label && w.mode == *m) {
                    None => BarValue::Absent,
                    Some(w) => match value(w) {
                        Some(s) => BarValue::Value(s),
                        None if w.status == RunStatus::Ok => {
                            no_ref = true;
                            BarValue::NoReference
                        }
                        None if !w.feasible || w.status == RunStatus::Infeasible => {
                            infeasible = true;
                            BarValue::Infeasible
                        }
                        None => {
                            not_run = true;
                            BarValue::NotRun
                        }
                    },
                })
                .collect();
            Group { label: label.clone(), bars }
        })
        .collect();
    let (area, strip) = with_legend(body);
    let jobs = mix_jobs(r);
    let panel = BarPanel {
        title: if use_ratio { jobs } else { format!("{jobs}; no runs of {} alone: raw throughput", never_alone(r)) },
        value_desc: if use_ratio { "Σ job throughput / alone (×)" } else { "Aggregate throughput (img/s)" }.into(),
        colors: modes.iter().map(|m| mode_color(*m)).collect(),
        groups,
        ref_line: use_ratio.then_some(1.0),
    };
    draw_bar_panel(root, &area, &panel)?;
    let mut entries: Vec<(String, RGBColor, Key)> =
        modes.iter().map(|m| (mode_name(*m).to_string(), mode_color(*m), Key::Bar)).collect();
    if use_ratio {
        entries.push(("one job alone = 1".into(), INK, Key::Dashed));
    }
    if infeasible {
        entries.push(("MIG layout cannot be made".into(), ALERT, Key::Mark(Marker::Cross, true)));
    }
    if not_run {
        entries.push(("skipped or failed".into(), GREY, Key::Mark(Marker::Circle, false)));
    }
    if no_ref {
        entries.push(("no run of a job's model alone".into(), GREY, Key::Glyph("?")));
    }
    legend(&strip, &entries)?;
    Ok(None)
}

/// The mix classes whose model was not measured alone with the main data: `M and L`.
fn never_alone(r: &Results) -> String {
    let letters: Vec<String> = mix_classes(r)
        .into_iter()
        .filter(|c| {
            !r.baselines.iter().any(|b| {
                (&b.model, &b.dataset, b.batch_size, &b.data) == (&c.model, &c.dataset, c.batch_size, &r.primary_data)
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
