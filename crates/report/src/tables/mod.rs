//! The paper's tables: a format-free model ([`Table`]) built from the results, written as
//! LaTeX ([`latex`]), CSV ([`csv`]) and Markdown ([`markdown`]).

pub(crate) mod campaign;
pub(crate) mod csv;
pub(crate) mod latex;
pub(crate) mod markdown;
pub(crate) mod protocols;
pub(crate) mod results;

use crate::format::{Quantity, MISSING};
use colloc_analysis::{brief_reason, Stats, WorkloadResult};
use std::collections::{BTreeMap, BTreeSet};

/// One cell: text, a number of a quantity, or a median with its spread.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    /// Text as it came, from the traces or anywhere: each format escapes all of it.
    Text(String),
    /// Our own words (the claims' from artifact.yaml, a grade with its values and
    /// intervals): Markdown shows them as written, only `|` and line breaks escaped; the
    /// other formats as [`Cell::Text`].
    Own(String),
    Value(Option<f64>),
    Stats(Option<Stats>),
    /// Statistics with marks: some divide by a baseline measured on another host than the
    /// run's ([`CROSS_HOST_MARK`]), some come from a run a foreign process disturbed
    /// ([`DISTURBED_MARK`]); shown after the number.
    Marked(Option<Stats>, Marks),
    /// A ratio (STP, ANTT, fairness): the median over repetitions with its 95% interval
    /// (shown in brackets in place of the repetitions' min–max, which it includes) and its
    /// marks.
    Ratio(Option<Stats>, Option<[f64; 2]>, Marks),
    /// The relative half-width of 95% confidence intervals (shares), over jobs and
    /// repetitions: `±0.4%` (the median), with the maximum in CSV and HTML.
    Ci(Option<Stats>),
}

impl Cell {
    pub(crate) fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }
    pub(crate) fn own(s: impl Into<String>) -> Cell {
        Cell::Own(s.into())
    }
    /// Ratio statistics with their 95% interval (when the analysis gave one), marked when
    /// some divide by another host's baseline, come from a disturbed run or are implausible.
    pub(crate) fn ratio(s: Option<Stats>, interval: Option<[f64; 2]>, marks: Marks) -> Cell {
        match (s, interval) {
            (Some(_), Some(_)) => Cell::Ratio(s, interval, marks),
            _ if (marks.cross_host || marks.disturbed || marks.implausible) && s.is_some() => Cell::Marked(s, marks),
            _ => Cell::Stats(s),
        }
    }

    fn marks(&self) -> Marks {
        match self {
            Cell::Marked(_, m) | Cell::Ratio(_, _, m) => *m,
            _ => Marks::default(),
        }
    }
}

/// What a value's marks say.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Marks {
    /// Some value divides by another host's baseline.
    pub cross_host: bool,
    /// Some value comes from a run during whose window a foreign process was on the GPU.
    pub disturbed: bool,
    /// The workload's ratios are implausible as they stand ([`IMPLAUSIBLE_MARK`]).
    pub implausible: bool,
}

impl Marks {
    /// A workload's values: marked as its counted runs are.
    pub(crate) fn of(w: &WorkloadResult) -> Marks {
        Marks {
            cross_host: w.cross_host_runs > 0,
            disturbed: w.disturbed_runs > 0,
            implausible: !w.implausible.is_empty(),
        }
    }

    /// The marks as they follow a value: `†`, `‡`, `§`.
    fn suffix(&self) -> String {
        [(self.cross_host, CROSS_HOST_MARK), (self.disturbed, DISTURBED_MARK), (self.implausible, IMPLAUSIBLE_MARK)]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, m)| *m)
            .collect()
    }
}

/// After a ratio of a workload marked implausible.
pub(crate) const IMPLAUSIBLE_MARK: &str = "§";

/// The legend of [`IMPLAUSIBLE_MARK`] (the reasons per workload follow it).
pub(crate) const IMPLAUSIBLE_NOTE: &str = "§: implausible as it stands: ANTT below 1 (every job faster beside the others than alone), STP above the number of jobs, or a ratio resting on one run of the model alone or on a host's first run with nothing before it to settle the host; the reasons per workload follow.";

/// The legend of the ratios' intervals.
pub(crate) const INTERVAL_NOTE: &str = "STP, ANTT and fairness: the median over repetitions with its 95% interval in brackets, a percentile bootstrap (2,000 resamples) over the repetitions, the runs of each job's model alone that its ratio divides by, and each throughput's own window interval.";

/// After a value from a run a foreign process disturbed.
pub(crate) const DISTURBED_MARK: &str = "‡";

/// The legend of [`DISTURBED_MARK`].
pub(crate) const DISTURBED_NOTE: &str = "‡: some run of the value had a process of someone else on the GPU during its measurement window (the runner's samples saw it; the run's notes name it): its numbers are disturbed.";

/// After a ratio whose baseline came from another host.
pub(crate) const CROSS_HOST_MARK: &str = "†";

/// The legend of [`CROSS_HOST_MARK`].
pub(crate) const CROSS_HOST_NOTE: &str = "†: some run of the value has no run of a job's model alone on its own host (GPU), so that job is divided by the baseline of the other hosts; a CPU-bound job's speed alone differs between hosts (see the baselines' between-host spread).";

/// The legend of a 95% CI column.
pub(crate) const CI_NOTE: &str = "95% CI: the half-width of the 95% confidence interval of a job's throughput over its measured window (batch means: the window cut into 4 to 10 equal parts), relative to the throughput; the median over the jobs and repetitions that have one (the maximum in the CSV and the HTML report); — where no job's window holds the 20 iterations or samples an interval needs.";

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

/// A caption or a note: our own words, which Markdown shows as written (with their code
/// spans), and the strings in it that came with the traces (campaign and GPU names, labels,
/// reasons), kept apart so that Markdown escapes them ([`crate::escape::md`]). LaTeX and
/// HTML escape the whole text ([`Prose::text`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Prose(Vec<Piece>);

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Own(String),
    /// From the traces.
    Trace(String),
    /// From the traces, shown as code (in backticks).
    Code(String),
}

impl Prose {
    /// Our own words.
    pub(crate) fn own(mut self, s: impl Into<String>) -> Prose {
        self.0.push(Piece::Own(s.into()));
        self
    }
    /// A string from the traces.
    pub(crate) fn trace(mut self, s: impl Into<String>) -> Prose {
        self.0.push(Piece::Trace(s.into()));
        self
    }
    /// A string from the traces, as code.
    pub(crate) fn code(mut self, s: impl Into<String>) -> Prose {
        self.0.push(Piece::Code(s.into()));
        self
    }
    /// This, then `more`.
    pub(crate) fn and(mut self, more: Prose) -> Prose {
        self.0.extend(more.0);
        self
    }
    /// The text as it reads (code in backticks), for formats that escape all of it.
    pub(crate) fn text(&self) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Own(s) | Piece::Trace(s) => s.clone(),
                Piece::Code(s) => format!("`{s}`"),
            })
            .collect()
    }
    /// Markdown: our words as written, the traces' escaped.
    pub(crate) fn markdown(&self) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Own(s) => s.clone(),
                Piece::Trace(s) => crate::escape::md(s),
                Piece::Code(s) => crate::escape::md_code(s),
            })
            .collect()
    }
}

impl From<String> for Prose {
    fn from(s: String) -> Prose {
        Prose::default().own(s)
    }
}

impl From<&str> for Prose {
    fn from(s: &str) -> Prose {
        Prose::default().own(s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    /// File stem: `paper/tables/<id>.{tex,csv,md}`.
    pub id: &'static str,
    pub title: String,
    /// One or two sentences saying what the rows are.
    pub caption: Prose,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines under the table (statuses, sources).
    pub notes: Vec<Prose>,
    /// The numbers come from the simulated backend.
    pub simulated: bool,
}

/// What simulated tables and figures say.
pub(crate) const SIMULATED_NOTE: &str =
    "SIMULATED: these numbers come from the runner's simulated backend, not from a GPU";

impl Table {
    /// The display text of a cell (Markdown, LaTeX): numbers in the column's format,
    /// statistics as `median (min–max)`, intervals as `±median`.
    pub(crate) fn display(&self, col: usize, cell: &Cell) -> String {
        let q = self.columns[col].quantity.unwrap_or(Quantity::Plain);
        match cell {
            Cell::Text(s) | Cell::Own(s) if s.is_empty() => MISSING.to_string(),
            Cell::Text(s) | Cell::Own(s) => s.clone(),
            Cell::Value(v) => q.opt(*v),
            Cell::Stats(s) => q.stats(*s),
            Cell::Marked(s, m) => match s {
                Some(_) => format!("{}{}", q.stats(*s), m.suffix()),
                None => MISSING.to_string(),
            },
            Cell::Ratio(s, i, m) => match (s, i) {
                (Some(s), Some([lo, hi])) => {
                    format!("{} [{}–{}]{}", q.number(s.median), q.number(*lo), q.number(*hi), m.suffix())
                }
                _ => format!("{}{}", q.stats(*s), m.suffix()),
            },
            Cell::Ci(s) => s.map_or_else(|| MISSING.to_string(), |s| half_width(s.median)),
        }
    }

    /// As [`Table::display`], with an interval's maximum beside its median: `±0.4% (max ±0.9%)`.
    pub(crate) fn display_full(&self, col: usize, cell: &Cell) -> String {
        match cell {
            Cell::Ci(Some(s)) if half_width(s.max) != half_width(s.median) => {
                format!("{} (max {})", half_width(s.median), half_width(s.max))
            }
            _ => self.display(col, cell),
        }
    }

    /// The caption with the SIMULATED mark first when it applies.
    pub(crate) fn full_caption(&self) -> Prose {
        if self.simulated {
            Prose::from(format!("{SIMULATED_NOTE}. ")).and(self.caption.clone())
        } else {
            self.caption.clone()
        }
    }

    /// The notes, with the statistics convention when a column holds statistics.
    pub(crate) fn all_notes(&self) -> Vec<Prose> {
        let mut notes = self.notes.clone();
        let any = |f: fn(&Cell) -> bool| self.rows.iter().flatten().any(f);
        if any(|c| matches!(c, Cell::Stats(_) | Cell::Marked(..))) {
            notes.push("Values are the median over repetitions, with min–max in parentheses.".into());
        }
        if any(|c| matches!(c, Cell::Ratio(..))) {
            notes.push(INTERVAL_NOTE.into());
        }
        if any(|c| c.marks().implausible) {
            notes.push(IMPLAUSIBLE_NOTE.into());
        }
        if any(|c| c.marks().cross_host) {
            notes.push(CROSS_HOST_NOTE.into());
        }
        if any(|c| c.marks().disturbed) {
            notes.push(DISTURBED_NOTE.into());
        }
        if any(|c| matches!(c, Cell::Ci(_))) {
            notes.push(CI_NOTE.into());
        }
        notes.push(format!("{MISSING}: not measured (see the status).").into());
        notes
    }
}

/// `±0.4%`: a relative half-width (a share).
fn half_width(share: f64) -> String {
    format!("±{}%", Quantity::HalfWidth.number(share))
}

/// Notes for the workloads that were not measured: one line per distinct outcome and
/// reason (briefly), naming the workloads when there are few and counting them otherwise.
pub(crate) fn status_notes<'a>(ws: impl IntoIterator<Item = &'a WorkloadResult>) -> Vec<Prose> {
    const NAMED: usize = 3;
    // Per (status, reason): the workloads' labels with their mode (a label on several data
    // sources once), and the workloads themselves.
    let mut groups: BTreeMap<(&'static str, String), (Vec<String>, BTreeSet<&str>)> = BTreeMap::new();
    for w in ws {
        if w.status.as_str() == "ok" {
            continue;
        }
        for r in w.reasons.iter().chain(w.plan_reason.iter()).map(|r| brief_reason(r)) {
            let who = format!("{} {}", w.label, results::mode_label(w));
            let (list, ids) = groups.entry((w.status_word(), r)).or_default();
            ids.insert(w.id.as_str());
            if !list.contains(&who) {
                list.push(who);
            }
        }
    }
    groups
        .into_iter()
        .map(|((word, reason), (who, ids))| {
            let whom = if who.len() <= NAMED {
                Prose::default().trace(who.join("; "))
            } else if ids.len() > who.len() {
                Prose::from(format!(
                    "{} workloads: {} configurations, each on several data sources",
                    ids.len(),
                    who.len()
                ))
            } else {
                Prose::from(format!("{} workloads", who.len()))
            };
            Prose::from(format!("{word} (")).and(whom).own("): ").trace(reason)
        })
        .collect()
}

/// One line per workload marked implausible ([`IMPLAUSIBLE_MARK`]): which, and why.
pub(crate) fn implausible_notes<'a>(ws: impl IntoIterator<Item = &'a WorkloadResult>) -> Vec<Prose> {
    ws.into_iter()
        .filter(|w| !w.implausible.is_empty())
        .map(|w| {
            Prose::from(format!("{IMPLAUSIBLE_MARK} "))
                .trace(format!("{} {} ({}): {}", w.label, results::mode_label(w), w.data, w.implausible.join("; ")))
                .own(".")
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
