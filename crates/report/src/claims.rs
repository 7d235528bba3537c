//! The claims check: `paper/claims.md`, the claims table and the console summary. The paper's
//! numbers appear here and nowhere among the measurements.

use colloc_analysis::{CheckOutcome, ClaimOutcome, Results, SourceOutcome, Verdict};

use colloc_spec::gpu::GpuTable;

use crate::escape::{md, md_code};
use crate::tables::{Cell, Column, Prose, Table, SIMULATED_NOTE};

/// What the claims table says of its checks.
const RELATIVE: &str = "the checks are relative (ratios, orderings), not absolute numbers.";

/// The paper's number as text: `up to 4× (arXiv abstract)`.
fn paper_text(c: &ClaimOutcome) -> String {
    format!("{} ({})", c.paper.text, c.paper.source)
}

/// Our value of a check in full, in Markdown: `2.54 (95 % interval 2.41 to 2.66; stand-in:
/// …) — 7 × resnet26 in mps-limited 1g×7`, then the implausible workloads it picked or read.
/// The detail names workloads as the traces do: escaped.
fn check_text(k: &CheckOutcome) -> String {
    let detail = md(&k.detail);
    let Some(v) = k.value else { return format!("not run — {detail}") };
    let mut about = Vec::new();
    if let Some([lo, hi]) = k.interval {
        about.push(format!("95 % interval {} to {}", short(lo), short(hi)));
    }
    if k.stand_in {
        about.push(format!("{STAND_IN_MARK}: {STAND_IN_NOTE}"));
    }
    let mut out = if about.is_empty() {
        format!("{} — {detail}", short(v))
    } else {
        format!("{} ({}) — {detail}", short(v), about.join("; "))
    };
    if !k.picked_implausible.is_empty() {
        out.push_str(&format!(
            "; **the value comes from a workload marked implausible**: {}",
            marked(&k.picked_implausible)
        ));
    }
    if !k.read_implausible.is_empty() {
        out.push_str(&format!(
            "; {} of the {} workloads read are marked implausible",
            k.read_implausible.len(),
            k.workloads_read
        ));
    }
    out
}

/// `e33-…: ANTT below 1; e37-…: STP above 2`, in Markdown.
fn marked(m: &std::collections::BTreeMap<String, Vec<String>>) -> String {
    m.iter().map(|(id, why)| format!("{}: {}", md_code(id), md(&why.join(", ")))).collect::<Vec<_>>().join("; ")
}

/// After a value measured on `mps-limited` where the claim speaks of MIG.
pub(crate) const STAND_IN_MARK: &str = "(stand-in)";

/// What [`STAND_IN_MARK`] means.
pub(crate) const STAND_IN_NOTE: &str = "measured on the mps-limited stand-in (MPS with the thread and memory caps of the MIG profile), not on MIG, which could not be enabled; it is not isolated as MIG is";

/// After a value picked from a workload the analysis marks implausible.
pub(crate) const IMPLAUSIBLE_VALUE_MARK: &str = "(implausible)";

/// Our value with its interval and marks, over the paper's where the check has one:
/// `2.54 [2.41–2.66] (stand-in) / 3`, `1`, `—`.
pub(crate) fn ours_over_paper(k: &CheckOutcome) -> String {
    let Some(v) = k.value else { return "—".to_string() };
    let mut out = short(v);
    if let Some([lo, hi]) = k.interval {
        out.push_str(&format!(" [{}–{}]", short(lo), short(hi)));
    }
    if k.stand_in {
        out.push(' ');
        out.push_str(STAND_IN_MARK);
    }
    if !k.picked_implausible.is_empty() {
        out.push(' ');
        out.push_str(IMPLAUSIBLE_VALUE_MARK);
    }
    if let Some(p) = k.paper_value {
        out.push_str(&format!(" / {}", short(p)));
    }
    out
}

/// The HTML class of a text that starts with a grade (`direction only (generated)`,
/// `holds: 2.85 / 3`): `verdict-direction-only`; `None` for other text.
pub(crate) fn grade_class(text: &str) -> Option<&'static str> {
    // Longest first: no grade's words begin another's, but keep it robust.
    let mut all = Verdict::ALL;
    all.sort_by_key(|v| std::cmp::Reverse(v.as_str().len()));
    all.into_iter().find(|v| text.starts_with(v.as_str())).map(|v| match v {
        Verdict::Holds => "verdict-holds",
        Verdict::DirectionOnly => "verdict-direction-only",
        Verdict::Inconclusive => "verdict-inconclusive",
        Verdict::DoesNotHold => "verdict-does-not-hold",
        Verdict::ByConstruction => "verdict-by-construction",
        Verdict::NotRun => "verdict-not-run",
    })
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

/// `holds`, `does not hold`, `not run: why` for one source, in Markdown.
fn verdict_text(s: &SourceOutcome) -> String {
    match s.verdict {
        Verdict::NotRun => {
            let why: Vec<&str> =
                s.checks.iter().filter(|k| k.verdict == Verdict::NotRun).map(|k| k.detail.as_str()).collect();
            format!("not run: {}", md(&why.join("; ")))
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
inconclusive (the value's 95 % interval, in brackets, straddles the direction's threshold, or the edge of the tolerance \
so that holds and direction only cannot be told apart); does not hold; by construction (the check reads no \
measurement: the MIG placement rules answer it); not run. A value's interval is a workload's STP interval, or for a \
ratio of two workloads the conservative one (low over high, high over low); shares and counts have none. A claim's \
grade is the first of does not hold, not run, inconclusive, direction only, holds, by construction that one of its \
checks has. Each claim is graded on every data source measured; the headline grade is that of the source closest to \
the paper's image files read by 4 loader workers per job (imagefolder, else generated, else synthetic) on which the \
claim was measured. (stand-in): measured on the mps-limited stand-in where the claim speaks of MIG. (implausible): the \
value comes from a workload the analysis marks implausible (§ in the tables). The direction thresholds are ours, not \
the paper's, unless the claim's details say they are the paper's.";

pub(crate) fn table(results: &Results, claims: &[ClaimOutcome], paper_gpu: Option<&GpuTable>) -> Table {
    let sources = sources(claims);
    let rows = claims
        .iter()
        .map(|c| {
            // artifact.yaml's words and the grades with their values are ours; the data
            // source's name and the hardware came with the traces.
            let mut row = vec![
                Cell::own(c.id.clone()),
                Cell::own(c.statement.clone()),
                Cell::own(paper_text(c)),
                Cell::own(c.tolerance.as_ref().map_or("qualitative".to_string(), |t| t.0.clone())),
            ];
            for d in &sources {
                row.push(Cell::own(c.sources.iter().find(|s| &s.data == d).map_or("—".to_string(), source_text)));
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
        caption: Prose::from("The paper's claims graded against campaign ")
            .trace(&results.campaign)
            .own(", per data source (ours / paper's)."),
        columns,
        rows,
        notes: vec![
            match paper_gpu {
                Some(g) => format!("The paper ran on an {}; {RELATIVE}", g.name).into(),
                None => format!("The {RELATIVE}").into(),
            },
            GRADES.into(),
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
    let hardware = md(&claims.first().map_or_else(|| results.gpu_name(), |c| c.hardware.clone()));
    out.push_str(&format!(
        "Campaign {} on {hardware}; traces verified against `SHA256SUMS` (sha256 {}). Regenerate with `cargo xtask reproduce`.\n\n",
        md_code(&results.campaign),
        md_code(&results.provenance.manifest_sha256)
    ));
    out.push_str(&format!("{GRADES}\n\n"));
    let sources = sources(claims);
    out.push_str("| Claim | Paper | Tolerance |");
    for d in &sources {
        out.push_str(&format!(" {} |", md(d)));
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
        out.push_str(&format!(" **{}** |\n", md(&headline_text(c))));
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
        out.push_str(&format!("- **Hardware here:** {}\n", md(&c.hardware)));
        out.push_str(&format!("- **Headline:** {}\n", md(&headline_text(c))));
        for s in &c.sources {
            out.push_str(&format!("- **On {} data:** {}\n", md(&s.data), verdict_text(s)));
            for k in &s.checks {
                let magnitude = match (&k.tolerance, k.value) {
                    (Some(t), Some(_)) => format!("; magnitude: paper's {t}"),
                    (Some(t), None) => format!("; magnitude: {t}"),
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "  - `{}`{}: {}. Direction: {} ({}){magnitude}; **ours:** {} → {}{}\n",
                    k.query,
                    if k.args.is_empty() { String::new() } else { format!(" ({})", k.args) },
                    k.describe,
                    k.expect,
                    k.threshold_basis,
                    check_text(k),
                    k.verdict.as_str(),
                    if k.value.is_some() && !k.reason.is_empty() { format!(": {}", k.reason) } else { String::new() }
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

/// The README's summary of the results: the claims by headline grade, each with the value
/// of its first check on the headline data source (`C1 2.85 [2.69–3.02] against 3`).
pub fn summary_markdown(campaign: &str, claims: &[ClaimOutcome]) -> String {
    let mut out = format!(
        "On the shipped campaign `{campaign}` (each claim on the data closest to the paper's image files; 95% intervals in brackets; `paper/claims.md` has every check):\n\n"
    );
    use Verdict::*;
    for v in [Holds, DirectionOnly, Inconclusive, DoesNotHold, ByConstruction, NotRun] {
        let named: Vec<String> = claims
            .iter()
            .filter(|c| c.verdict == v)
            .map(|c| {
                let first = c
                    .headline_data
                    .as_ref()
                    .and_then(|d| c.sources.iter().find(|s| &s.data == d))
                    .and_then(|s| s.checks.first());
                match first.and_then(|k| k.value.map(|x| (k, x))) {
                    Some((k, x)) if k.interval.is_some() => {
                        let [lo, hi] = k.interval.unwrap_or([x, x]);
                        let paper = k.paper_value.map(|p| format!(" against {}", short(p))).unwrap_or_default();
                        let stand_in = if k.stand_in { format!(" {STAND_IN_MARK}") } else { String::new() };
                        format!("{} {} [{}–{}]{paper}{stand_in}", c.id, short(x), short(lo), short(hi))
                    }
                    Some((k, _)) if k.stand_in => format!("{} {STAND_IN_MARK}", c.id),
                    _ => c.id.clone(),
                }
            })
            .collect();
        if !named.is_empty() {
            out.push_str(&format!("- **{}**: {}\n", v.as_str(), named.join("; ")));
        }
    }
    out
}

/// The claims' details on the HTML page: per claim the paper's number, the tolerance, and
/// each data source's grade with every check, as `paper/claims.md` has them; open, so that
/// a printed page shows them. Every string is escaped for HTML.
pub(crate) fn details_html(claims: &[ClaimOutcome]) -> String {
    use crate::escape::html as h;
    let mut out = String::new();
    for c in claims {
        let class = grade_class(&headline_text(c)).unwrap_or("verdict-not-run");
        out.push_str(&format!(
            "<details open class=\"claim\" id=\"claim-{id}\">\n<summary><b>{id}</b>: {} <span class=\"{class}\">{}</span></summary>\n<ul>\n",
            h(&c.statement),
            h(&headline_text(c)),
            id = h(&c.id),
        ));
        out.push_str(&format!(
            "<li><b>Paper:</b> {}{}</li>\n<li><b>Tolerance:</b> {}</li>\n",
            h(&paper_text(c)),
            c.paper.value.map(|v| format!("; value {}", short(v))).unwrap_or_default(),
            h(&tolerance_text(c))
        ));
        for s in &c.sources {
            let class = grade_class(s.verdict.as_str()).unwrap_or("verdict-not-run");
            out.push_str(&format!(
                "<li><b>On {} data:</b> <span class=\"{class}\">{}</span>\n<ul>\n",
                h(&s.data),
                h(s.verdict.as_str())
            ));
            for k in &s.checks {
                let ours = match k.value {
                    None => format!("not run — {}", h(&k.detail)),
                    Some(v) => {
                        let mut t = short(v);
                        if let Some([lo, hi]) = k.interval {
                            t.push_str(&format!(" [{}–{}]", short(lo), short(hi)));
                        }
                        if k.stand_in {
                            t.push_str(&format!(" {STAND_IN_MARK}"));
                        }
                        format!("{} — {}", h(&t), h(&k.detail))
                    }
                };
                let implausible = if k.picked_implausible.is_empty() {
                    String::new()
                } else {
                    let ids: Vec<&str> = k.picked_implausible.keys().map(String::as_str).collect();
                    format!("; <b>from a workload marked implausible</b> (§): {}", h(&ids.join(", ")))
                };
                out.push_str(&format!(
                    "<li><code>{}</code>{}: {}. Direction: {} ({}); <b>ours:</b> {ours}{implausible} → <span class=\"{}\">{}</span>{}</li>\n",
                    h(&k.query),
                    if k.args.is_empty() { String::new() } else { format!(" ({})", h(&k.args)) },
                    h(&k.describe),
                    h(&k.expect),
                    h(&k.threshold_basis),
                    grade_class(k.verdict.as_str()).unwrap_or("verdict-not-run"),
                    h(k.verdict.as_str()),
                    if k.value.is_some() && !k.reason.is_empty() { format!(": {}", h(&k.reason)) } else { String::new() }
                ));
            }
            out.push_str("</ul></li>\n");
        }
        if let Some(n) = &c.note {
            out.push_str(&format!("<li><b>Note:</b> {}</li>\n", h(n)));
        }
        out.push_str("</ul>\n</details>\n");
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
            crate::escape::line(&c.hardware)
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
        out.push_str(&format!("{:<w_id$}  {:<w_head$}", c.id, crate::escape::line(&headline_text(c))));
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use colloc_analysis::testkit::{plan, write_campaign, FixtureOptions};
    use std::path::Path;

    /// The fixture campaign (MIG skipped, mps-limited standing in) with the project's claims.
    pub(crate) fn fixture() -> (tempfile::TempDir, Results, Vec<ClaimOutcome>) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = std::fs::read_to_string(root.join("artifact.yaml")).unwrap();
        let claims = colloc_spec::claims::parse_claims_yaml(&text).unwrap();
        let d = tempfile::tempdir().unwrap();
        let opts = FixtureOptions::default();
        let dir = write_campaign(d.path(), &opts).unwrap();
        let r = colloc_analysis::analyse(&dir, Some(&plan(&opts).unwrap())).unwrap();
        let c = colloc_analysis::evaluate(&r, &claims).unwrap();
        (d, r, c)
    }

    fn row<'a>(text: &'a str, starts: &str) -> &'a str {
        text.lines().find(|l| l.starts_with(starts)).unwrap_or_else(|| panic!("no line {starts:?} in {text}"))
    }

    #[test]
    fn stand_in_values_are_marked_in_every_rendering() {
        let (_d, r, c) = fixture();
        let c7 = c.iter().find(|c| c.id == "C7").unwrap();
        let k = &c7.headline().unwrap().checks[0];
        assert!(k.stand_in, "{k:?}");
        let cell = ours_over_paper(k);
        assert!(cell.contains(&format!("] {STAND_IN_MARK}")) && cell.ends_with(" / 3"), "{cell}");
        // claims.md: the table row and the check's line.
        let md = markdown(&r, &c);
        assert!(row(&md, "| C7 |").contains(STAND_IN_MARK), "{md}");
        assert!(md.contains(&format!("{STAND_IN_MARK}: {STAND_IN_NOTE}")), "{md}");
        // The console and the claims table.
        assert!(row(&console(&c), "C7 ").contains(STAND_IN_MARK));
        let t = table(&r, &c, None);
        let cells = format!("{:?}", t.rows.iter().find(|row| row[0] == Cell::own("C7")).unwrap());
        assert!(cells.contains(STAND_IN_MARK), "{cells}");
        // C1 (MPS, naive, no MIG) is not marked.
        assert!(!row(&md, "| C1 |").contains(STAND_IN_MARK) && !row(&console(&c), "C1 ").contains(STAND_IN_MARK));
    }

    #[test]
    fn a_value_shows_its_interval_and_an_implausible_source() {
        let (_d, r, c) = fixture();
        let mut k = c.iter().find(|c| c.id == "C1").unwrap().headline().unwrap().checks[0].clone();
        k.value = Some(2.25);
        k.interval = Some([2.1, 2.4]);
        k.picked_implausible.clear();
        assert_eq!(ours_over_paper(&k), "2.25 [2.10–2.40] / 3");
        k.picked_implausible.insert("e33-x".into(), vec!["ANTT below 1".into()]);
        assert_eq!(ours_over_paper(&k), format!("2.25 [2.10–2.40] {IMPLAUSIBLE_VALUE_MARK} / 3"));
        let text = check_text(&k);
        assert!(text.starts_with("2.25 (95 % interval 2.10 to 2.40) — "), "{text}");
        assert!(text.contains("marked implausible**: `e33-x`: ANTT below 1"), "{text}");
        // claims.md names the grades, the thresholds' owners and the grades' reasons.
        let md = markdown(&r, &c);
        for v in Verdict::ALL {
            assert!(GRADES.contains(v.as_str()), "{v:?}");
        }
        assert!(md.contains("(ours, not the paper's: a clear gain"), "{md}");
        assert!(md.contains("→ by construction: 2 meets ≥ 1 by the MIG placement rules"), "{md}");
    }

    #[test]
    fn every_grade_has_its_class() {
        let classes: Vec<Option<&str>> =
            Verdict::ALL.iter().map(|v| grade_class(&format!("{} (generated)", v.as_str()))).collect();
        assert_eq!(
            classes,
            [
                Some("verdict-does-not-hold"),
                Some("verdict-not-run"),
                Some("verdict-inconclusive"),
                Some("verdict-direction-only"),
                Some("verdict-holds"),
                Some("verdict-by-construction"),
            ]
        );
        assert_eq!(grade_class("holds: 2.85 [2.76–2.97] / 3, 0.95"), Some("verdict-holds"));
        assert_eq!(grade_class("qualitative"), None);
        assert_eq!(grade_class("—"), None);
    }
}
