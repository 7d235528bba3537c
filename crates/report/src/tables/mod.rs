//! The paper's tables: a format-free model ([`Table`]) built from the results, written as
//! LaTeX ([`latex`]), CSV ([`csv`]) and Markdown ([`markdown`]).

pub(crate) mod campaign;
pub(crate) mod csv;
pub(crate) mod latex;
pub(crate) mod markdown;
pub(crate) mod results;

use crate::format::{Quantity, MISSING};
use colloc_analysis::{brief_reason, Stats, WorkloadResult};
use std::collections::BTreeMap;

/// One cell: text, a number of a quantity, or a median with its spread.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Text(String),
    Value(Option<f64>),
    Stats(Option<Stats>),
}

impl Cell {
    pub(crate) fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }
}

/// How a column's values read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    pub header: String,
    pub quantity: Option<Quantity>,
}

impl Column {
    pub(crate) fn text(header: &str) -> Column {
        Column { header: header.to_string(), quantity: None }
    }
    pub(crate) fn number(header: &str, q: Quantity) -> Column {
        Column { header: header.to_string(), quantity: Some(q) }
    }
    /// `Throughput (img/s)`.
    pub(crate) fn header_with_unit(&self) -> String {
        match self.quantity.and_then(Quantity::unit) {
            Some(u) => format!("{} ({u})", self.header),
            None => self.header.clone(),
        }
    }
    pub(crate) fn is_numeric(&self) -> bool {
        self.quantity.is_some()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    /// File stem: `paper/tables/<id>.{tex,csv,md}`.
    pub id: &'static str,
    pub title: String,
    /// One or two sentences saying what the rows are.
    pub caption: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines under the table (statuses, sources).
    pub notes: Vec<String>,
    /// The numbers come from the simulated backend.
    pub simulated: bool,
}

/// What simulated tables and figures say.
pub(crate) const SIMULATED_NOTE: &str =
    "SIMULATED: these numbers come from the runner's simulated backend, not from a GPU";

impl Table {
    /// The display text of a cell (Markdown, LaTeX, HTML): numbers in the column's format,
    /// statistics as `median (min–max)`.
    pub(crate) fn display(&self, col: usize, cell: &Cell) -> String {
        let q = self.columns[col].quantity.unwrap_or(Quantity::Plain);
        match cell {
            Cell::Text(s) if s.is_empty() => MISSING.to_string(),
            Cell::Text(s) => s.clone(),
            Cell::Value(v) => q.opt(*v),
            Cell::Stats(s) => q.stats(*s),
        }
    }

    /// The caption with the SIMULATED mark first when it applies.
    pub(crate) fn full_caption(&self) -> String {
        if self.simulated {
            format!("{SIMULATED_NOTE}. {}", self.caption)
        } else {
            self.caption.clone()
        }
    }

    /// The notes, with the statistics convention when a column holds statistics.
    pub(crate) fn all_notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if self.rows.iter().flatten().any(|c| matches!(c, Cell::Stats(_))) {
            notes.push("Values are the median over repetitions, with min–max in parentheses.".to_string());
        }
        notes.push(format!("{MISSING}: not measured (see the status)."));
        notes
    }
}

/// Notes for the workloads that were not measured: one line per distinct outcome and
/// reason (briefly), naming the workloads when there are few and counting them otherwise.
pub(crate) fn status_notes<'a>(ws: impl IntoIterator<Item = &'a WorkloadResult>) -> Vec<String> {
    const NAMED: usize = 3;
    let mut groups: BTreeMap<(&'static str, String), Vec<String>> = BTreeMap::new();
    for w in ws {
        if w.status.as_str() == "ok" {
            continue;
        }
        for r in w.reasons.iter().chain(w.plan_reason.iter()).map(|r| brief_reason(r)) {
            let who = format!("{} {}", w.label, results::mode_label(w));
            let list = groups.entry((w.status_word(), r)).or_default();
            if !list.contains(&who) {
                list.push(who);
            }
        }
    }
    groups
        .into_iter()
        .map(|((word, reason), who)| {
            let whom = if who.len() <= NAMED { who.join("; ") } else { format!("{} workloads", who.len()) };
            format!("{word} ({whom}): {reason}")
        })
        .collect()
}

/// The three files of a table.
pub(crate) fn render(t: &Table) -> Vec<(String, String)> {
    vec![
        (format!("{}.tex", t.id), latex::render(t)),
        (format!("{}.csv", t.id), csv::render(t)),
        (format!("{}.md", t.id), markdown::render(t)),
    ]
}
