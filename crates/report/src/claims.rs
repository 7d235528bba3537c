//! The claims check: `paper/claims.md`, the claims table and the console summary. The paper's
//! numbers appear here and nowhere among the measurements.

use colloc_analysis::{CheckOutcome, ClaimOutcome, Results, SourceOutcome, Verdict};

use colloc_spec::gpu::GpuTable;

use crate::tables::{Cell, Column, Table, SIMULATED_NOTE};

/// What the claims table says of its checks.
const RELATIVE: &str = "the checks are relative (ratios, orderings), not absolute numbers.";

/// The paper's number as text: `up to 4× (arXiv abstract)`.
fn paper_text(c: &ClaimOutcome) -> String {
    format!("{} ({})", c.paper.text, c.paper.source)
}

/// Our value of a check: `2.87 — 7 × resnet26 in mps`.
fn check_text(k: &CheckOutcome) -> String {
    match k.value {
        Some(v) => format!("{} — {}", short(v), k.detail),
        None => format!("not run — {}", k.detail),
    }
}

/// Our value, over the paper's where the check has one: `1.20 / 4`, `1`, `—`.
pub(crate) fn ours_over_paper(k: &CheckOutcome) -> String {
    match (k.value, k.paper_value) {
        (Some(v), Some(p)) => format!("{} / {}", short(v), short(p)),
        (Some(v), None) => short(v),
        (None, _) => "—".to_string(),
    }
}

/// A source's grade with our values: `direction only: 1.20 / 4, 1`.
fn source_text(s: &SourceOutcome) -> String {
    format!("{}: {}", s.verdict.as_str(), s.checks.iter().map(ours_over_paper).collect::<Vec<_>>().join(", "))
}

/// The headline grade with its source: `direction only (generated)`, `not run`.
pub(crate) fn headline_text(c: &ClaimOutcome) -> String {
    match &c.headline_data {
        Some(d) => format!("{} ({d})", c.verdict.as_str()),
        None => c.verdict.as_str().to_string(),
    }
}

/// The tolerance and its basis, or `qualitative`.
fn tolerance_text(c: &ClaimOutcome) -> String {
    match &c.tolerance {
        Some((band, basis)) => format!("{band}: {basis}"),
        None => "none (qualitative: holds or does not)".to_string(),
    }
}

/// Whole numbers (counts) without decimals, others with two.
fn short(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{}", v as i64)
    } else {
        crate::format::Quantity::Plain.number(v)
    }
}

/// `holds`, `does not hold`, `not run: why` for one source.
fn verdict_text(s: &SourceOutcome) -> String {
    match s.verdict {
        Verdict::NotRun => {
            let why: Vec<&str> =
                s.checks.iter().filter(|k| k.verdict == Verdict::NotRun).map(|k| k.detail.as_str()).collect();
            format!("not run: {}", why.join("; "))
        }
        v => v.as_str().to_string(),
    }
}

/// The data sources the claims were evaluated on, closest to the paper's first.
fn sources(claims: &[ClaimOutcome]) -> Vec<String> {
    claims.first().map(|c| c.sources.iter().map(|s| s.data.clone()).collect()).unwrap_or_default()
}

const GRADES: &str = "Grades: holds (the paper's direction, and its magnitude within the claim's tolerance of the \
paper's number); direction only (the direction holds, the magnitude lies outside the tolerance; ours / paper's shown); \
does not hold; not run. Each claim is graded on every data source measured; the headline grade is that of the source \
closest to the paper's image files read by 4 loader workers per job (imagefolder, else generated, else synthetic) on \
which the claim was measured.";

pub(crate) fn table(results: &Results, claims: &[ClaimOutcome], paper_gpu: Option<&GpuTable>) -> Table {
    let sources = sources(claims);
    let rows = claims
        .iter()
        .map(|c| {
            let mut row = vec![
                Cell::text(c.id.clone()),
                Cell::text(c.statement.clone()),
                Cell::text(paper_text(c)),
                Cell::text(c.tolerance.as_ref().map_or("qualitative".to_string(), |t| t.0.clone())),
            ];
            for d in &sources {
                row.push(Cell::text(c.sources.iter().find(|s| &s.data == d).map_or("—".to_string(), source_text)));
            }
            row.push(Cell::text(headline_text(c)));
            row.push(Cell::text(c.hardware.clone()));
            row
        })
        .collect();
    let mut columns =
        vec![Column::text("Claim"), Column::text("Statement"), Column::text("Paper"), Column::text("Tolerance")];
    columns.extend(sources.iter().map(|d| Column::text(&format!("Ours, {d} data"))));
    columns.push(Column::text("Headline"));
    columns.push(Column::text("Hardware"));
    Table {
        id: "claims",
        title: "Claims".to_string(),
        caption: format!(
            "The paper's claims graded against campaign {}, per data source (ours / paper's).",
            results.campaign
        ),
        columns,
        rows,
        notes: vec![
            match paper_gpu {
                Some(g) => format!("The paper ran on an {}; {RELATIVE}", g.name),
                None => format!("The {RELATIVE}"),
            },
            GRADES.to_string(),
        ],
        simulated: results.simulated,
    }
}

/// `paper/claims.md`.
pub(crate) fn markdown(results: &Results, claims: &[ClaimOutcome]) -> String {
    let mut out = String::from("# The paper's claims, checked\n\n");
    if results.simulated {
        out.push_str(&format!(
            "> **{SIMULATED_NOTE}.** A claim that holds here holds only for the simulation's model.\n\n"
        ));
    }
    if let Some(note) = results.incomplete() {
        out.push_str(&format!("> **Incomplete campaign:** {note}. The verdicts cover the runs made so far.\n\n"));
    }
    let hardware = claims.first().map_or_else(|| results.gpu_name(), |c| c.hardware.clone());
    out.push_str(&format!(
        "Campaign `{}` on {hardware}; traces verified against `SHA256SUMS` (sha256 `{}`). Regenerate with `cargo xtask reproduce`.\n\n",
        results.campaign,
        results.provenance.manifest_sha256
    ));
    out.push_str(&format!("{GRADES}\n\n"));
    let sources = sources(claims);
    out.push_str("| Claim | Paper | Tolerance |");
    for d in &sources {
        out.push_str(&format!(" {d} |"));
    }
    out.push_str(" Headline |\n| :--- | :--- | :--- |");
    out.push_str(&" :--- |".repeat(sources.len() + 1));
    out.push('\n');
    for c in claims {
        out.push_str(&format!(
            "| {} | {} | {} |",
            c.id,
            cell(&paper_text(c)),
            cell(&c.tolerance.as_ref().map_or("qualitative".to_string(), |t| t.0.clone()))
        ));
        for d in &sources {
            let t = c.sources.iter().find(|s| &s.data == d).map_or("—".to_string(), source_text);
            out.push_str(&format!(" {} |", cell(&t)));
        }
        out.push_str(&format!(" **{}** |\n", headline_text(c)));
    }
    out.push('\n');
    for c in claims {
        out.push_str(&format!("## {}: {}\n\n", c.id, c.statement));
        out.push_str(&format!(
            "- **Paper:** {}{}\n",
            paper_text(c),
            c.paper.value.map(|v| format!("; value {}", short(v))).unwrap_or_default()
        ));
        out.push_str(&format!("- **Tolerance:** {}\n", tolerance_text(c)));
        out.push_str(&format!("- **Hardware here:** {}\n", c.hardware));
        out.push_str(&format!("- **Headline:** {}\n", headline_text(c)));
        for s in &c.sources {
            out.push_str(&format!("- **On {} data:** {}\n", s.data, verdict_text(s)));
            for k in &s.checks {
                let magnitude = match (&k.tolerance, k.value) {
                    (Some(t), Some(_)) => format!("; magnitude: paper's {t}"),
                    (Some(t), None) => format!("; magnitude: {t}"),
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "  - `{}`{}: {}. Direction: {}{magnitude}; **ours:** {} → {}\n",
                    k.query,
                    if k.args.is_empty() { String::new() } else { format!(" ({})", k.args) },
                    k.describe,
                    k.expect,
                    check_text(k),
                    k.verdict.as_str()
                ));
            }
        }
        if let Some(n) = &c.note {
            out.push_str(&format!("- **Note:** {n}\n"));
        }
        out.push('\n');
    }
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The console summary `cargo xtask reproduce` prints: the headline grade and each data
/// source's grade with ours / paper's.
pub fn console(claims: &[ClaimOutcome]) -> String {
    let mut out = String::new();
    let sources = sources(claims);
    if let Some(c) = claims.first() {
        out.push_str(&format!(
            "claims on {} (headline: the measured source closest to the paper's image files; ours / paper's)\n",
            c.hardware
        ));
    }
    let w_id = claims.iter().map(|c| c.id.len()).max().unwrap_or(2).max(5);
    let w_head = claims.iter().map(|c| headline_text(c).chars().count()).max().unwrap_or(8).max(8);
    let widths: Vec<usize> = sources
        .iter()
        .map(|d| {
            claims
                .iter()
                .filter_map(|c| c.sources.iter().find(|s| &s.data == d))
                .map(|s| source_text(s).chars().count())
                .max()
                .unwrap_or(0)
                .max(d.len())
        })
        .collect();
    out.push_str(&format!("{:<w_id$}  {:<w_head$}", "claim", "headline"));
    for (d, w) in sources.iter().zip(&widths) {
        out.push_str(&format!("  {d:<w$}"));
    }
    out.push_str("  paper\n");
    for c in claims {
        out.push_str(&format!("{:<w_id$}  {:<w_head$}", c.id, headline_text(c)));
        for (d, w) in sources.iter().zip(&widths) {
            let t = c.sources.iter().find(|s| &s.data == d).map_or("—".to_string(), source_text);
            out.push_str(&format!("  {t:<w$}"));
        }
        out.push_str(&format!("  {}\n", truncate(&c.paper.text, 40)));
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}
