//! The protocol validation: each workload measured under a window protocol and under whole
//! epochs, side by side (only for a campaign that has both).

use colloc_analysis::{ProtocolValidation, Results, PROTOCOL_GOAL};

use super::{Cell, Column, Prose, Table};
use crate::format::{Quantity, MISSING};
use crate::order::{mode_layout, MODES};

/// `+1.2%`: a relative difference.
pub(crate) fn difference(d: Option<f64>) -> String {
    match d {
        // Rounded first, so that -0.04 % does not read -0.0 %.
        Some(d) => format!("{:+.1}%", (d * 1000.0).round() / 10.0 + 0.0),
        None => MISSING.to_string(),
    }
}

/// `yes`, `no` or the missing mark: within the goal.
fn within(v: Option<bool>) -> String {
    match v {
        Some(true) => "yes".to_string(),
        Some(false) => "NO".to_string(),
        None => MISSING.to_string(),
    }
}

/// The pairs in display order: experiment, jobs, mode (in the report's order), layout, data.
pub(crate) fn pairs(results: &Results) -> Vec<&ProtocolValidation> {
    let mut ps: Vec<&ProtocolValidation> = results.protocol_validation.iter().collect();
    let mode = |p: &ProtocolValidation| MODES.iter().position(|m| *m == p.mode).unwrap_or(MODES.len());
    ps.sort_by(|a, b| {
        (a.experiment, a.n_jobs, mode(a), &a.layout, &a.data, &a.window_id).cmp(&(
            b.experiment,
            b.n_jobs,
            mode(b),
            &b.layout,
            &b.data,
            &b.window_id,
        ))
    });
    ps
}

/// `None` when the campaign has no workload under both kinds of protocol.
pub(crate) fn validation(results: &Results) -> Option<Table> {
    let ps = pairs(results);
    let first = ps.first()?;
    let (window, epochs) = (first.window_protocol.clone(), first.epoch_protocol.clone());
    let goal = format!("{:.0}%", PROTOCOL_GOAL * 100.0);
    let rows = ps
        .iter()
        .map(|p| {
            vec![
                Cell::text(p.experiment.to_string()),
                Cell::text(p.label.clone()),
                Cell::text(mode_layout(p.mode, &p.layout)),
                Cell::text(p.data.clone()),
                Cell::text(format!("{} / {}", p.window_runs, p.epoch_runs)),
                Cell::Value(p.window_ratio),
                Cell::Value(p.epoch_ratio),
                Cell::text(difference(p.ratio_difference)),
                Cell::Value(p.window_epoch_seconds),
                Cell::Value(p.epoch_epoch_seconds),
                Cell::text(difference(p.epoch_seconds_difference)),
                Cell::Ci(p.window_ci_rel),
                Cell::Value(p.epoch_start_seconds),
                Cell::text(within(p.within_goal)),
            ]
        })
        .collect();
    let outside: Vec<String> = ps
        .iter()
        .filter(|p| p.within_goal == Some(false))
        .map(|p| format!("{} {}", p.label, mode_layout(p.mode, &p.layout)))
        .collect();
    let mut notes = vec![
        Prose::from("Runs: repetitions with an STP under ").code(&window).own(" / under ").code(&epochs).own(". STP: the jobs' throughputs each over the same model alone on the whole GPU under the same protocol, summed (the median over repetitions)."),
        Prose::from("Epoch time: the dataset's training images over a job's throughput, the median over jobs and repetitions: under ").code(&window).own(" in its common window, under ").code(&epochs).own(" from the jobs' epoch_end events (training seconds, validation left out) of every epoch after the first, which carries the start-up; collocated jobs' epochs need not coincide."),
        Prose::from("95% CI, ").trace(&window).own(": the precision of the window's throughputs (below); a difference within it is noise of the window as much as a bias of the protocol. Epoch start, ").trace(&epochs).own(": the seconds an epoch after the first loses at its start (the loader's workers restarting, their queues refilling), beyond its first interval's images at the rate of the epoch's other intervals, the median over jobs and repetitions: a window inside one epoch does not see it, so the window's epoch time is short by about this much."),
        Prose::from("Difference: ").trace(&window).own(" / ").trace(&epochs).own(format!(" − 1. Within {goal}: both differences within ±{goal}, the goal of the quick protocol; NO marks the workloads outside it.")),
    ];
    notes.push(match outside.len() {
        0 => format!("Every workload with both measured is within {goal}.").into(),
        n => Prose::from(format!("{n} of {} outside ±{goal}: ", ps.len())).trace(outside.join("; ")).own("."),
    });
    Some(Table {
        id: "protocol_validation",
        title: format!("Protocol validation: {window} against whole epochs ({epochs})"),
        caption: Prose::from("Each workload under the ")
            .code(&window)
            .own(" protocol's common window and under ")
            .code(&epochs)
            .own(" (whole epochs), in the same campaign (")
            .code(&results.provenance.campaign)
            .own(") on the same host: STP and per-job epoch time under each, and their difference."),
        columns: vec![
            Column::text("Exp."),
            Column::text("Workload"),
            Column::text("Mode"),
            Column::text("Data"),
            Column::text("Runs"),
            Column::number(&format!("STP, {window}"), Quantity::Ratio),
            Column::number(&format!("STP, {epochs}"), Quantity::Ratio),
            Column::text("STP difference"),
            Column::number(&format!("Epoch time, {window}"), Quantity::Seconds),
            Column::number(&format!("Epoch time, {epochs}"), Quantity::Seconds),
            Column::text("Epoch time difference"),
            Column::number(&format!("95% CI, {window}"), Quantity::HalfWidth),
            Column::number(&format!("Epoch start, {epochs}"), Quantity::Seconds),
            Column::text(&format!("Within {goal}")),
        ],
        rows,
        notes,
        simulated: results.simulated,
    })
}

#[cfg(test)]
mod tests {
    use super::difference;

    #[test]
    fn differences_read_with_their_sign_and_never_as_minus_zero() {
        assert_eq!(difference(Some(0.0123)), "+1.2%");
        assert_eq!(difference(Some(-0.031)), "-3.1%");
        assert_eq!(difference(Some(-0.0004)), "+0.0%");
        assert_eq!(difference(None), crate::format::MISSING);
    }
}
