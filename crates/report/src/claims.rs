//! The claims check: `paper/claims.md`, the claims table and the console summary. The paper's
//! numbers appear here and nowhere among the measurements.

use colloc_analysis::{CheckOutcome, ClaimOutcome, Results, Verdict};

use colloc_spec::gpu::GpuTable;

use crate::tables::{Cell, Column, Table, SIMULATED_NOTE};

/// What the claims table says of its checks.
const RELATIVE: &str = "the checks are relative (ratios, orderings), not absolute numbers.";

/// The paper's number as text: `up to 4× (arXiv abstract)`.
fn paper_text(c: &ClaimOutcome) -> String {
    format!("{} ({})", c.paper.text, c.paper.source)
}

/// Our value of a check: `2.87 — 2.87× for 7 × resnet26 in mps`.
fn check_text(k: &CheckOutcome) -> String {
    match k.value {
        Some(v) => format!("{} — {}", short(v), k.detail),
        None => format!("not run — {}", k.detail),
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

/// `holds`, `does not hold`, `not run: why`.
fn verdict_text(c: &ClaimOutcome) -> String {
    match c.verdict {
        Verdict::NotRun => {
            let why: Vec<&str> =
                c.checks.iter().filter(|k| k.verdict == Verdict::NotRun).map(|k| k.detail.as_str()).collect();
            format!("not run: {}", why.join("; "))
        }
        v => v.as_str().to_string(),
    }
}

pub(crate) fn table(results: &Results, claims: &[ClaimOutcome], paper_gpu: Option<&GpuTable>) -> Table {
    let rows = claims
        .iter()
        .map(|c| {
            vec![
                Cell::text(c.id.clone()),
                Cell::text(c.statement.clone()),
                Cell::text(paper_text(c)),
                Cell::text(c.checks.iter().map(check_text).collect::<Vec<_>>().join("; ")),
                Cell::text(c.checks.iter().map(|k| k.expect.clone()).collect::<Vec<_>>().join("; ")),
                Cell::text(c.hardware.clone()),
                Cell::text(c.verdict.as_str()),
            ]
        })
        .collect();
    Table {
        id: "claims",
        title: "Claims".to_string(),
        caption: format!("The paper's claims checked against campaign {}.", results.campaign),
        columns: vec![
            Column::text("Claim"),
            Column::text("Statement"),
            Column::text("Paper"),
            Column::text("Ours"),
            Column::text("Expected"),
            Column::text("Hardware"),
            Column::text("Verdict"),
        ],
        rows,
        notes: vec![match paper_gpu {
            Some(g) => format!("The paper ran on an {}; {RELATIVE}", g.name),
            None => format!("The {RELATIVE}"),
        }],
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
    out.push_str(&format!(
        "Campaign `{}` on {}; traces verified against `SHA256SUMS` (sha256 `{}`). Regenerate with `cargo xtask reproduce`.\n\n",
        results.campaign,
        results.gpu_name(),
        results.provenance.manifest_sha256
    ));
    out.push_str("| Claim | Paper | Ours | Verdict |\n| :--- | :--- | :--- | :--- |\n");
    for c in claims {
        let ours = c.checks.iter().map(|k| k.value.map_or("—".to_string(), short)).collect::<Vec<_>>().join(", ");
        out.push_str(&format!("| {} | {} | {} | {} |\n", c.id, cell(&paper_text(c)), ours, c.verdict.as_str()));
    }
    out.push('\n');
    for c in claims {
        out.push_str(&format!("## {}: {}\n\n", c.id, c.statement));
        out.push_str(&format!(
            "- **Paper:** {}{}\n",
            paper_text(c),
            c.paper.value.map(|v| format!("; value {}", short(v))).unwrap_or_default()
        ));
        out.push_str(&format!("- **Hardware here:** {}\n", c.hardware));
        for k in &c.checks {
            out.push_str(&format!(
                "- **Check** `{}`{}: {}. Expected {}; **ours:** {} → {}\n",
                k.query,
                if k.args.is_empty() { String::new() } else { format!(" ({})", k.args) },
                k.describe,
                k.expect,
                check_text(k),
                k.verdict.as_str()
            ));
        }
        out.push_str(&format!("- **Verdict:** {}\n", verdict_text(c)));
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

/// The console summary `cargo xtask reproduce` prints.
pub fn console(claims: &[ClaimOutcome]) -> String {
    let mut out = String::new();
    let w_id = claims.iter().map(|c| c.id.len()).max().unwrap_or(2).max(5);
    out.push_str(&format!("{:<w_id$}  {:<14}  {:<32}  ours\n", "claim", "verdict", "paper"));
    for c in claims {
        let paper = truncate(&c.paper.text, 32);
        let ours = c.checks.iter().map(|k| k.value.map_or("—".to_string(), short)).collect::<Vec<_>>().join(", ");
        out.push_str(&format!("{:<w_id$}  {:<14}  {:<32}  {}\n", c.id, c.verdict.as_str(), paper, ours));
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
