//! `paper/report.html`: one self-contained page with the figures (SVG as data: URIs), the
//! tables, the claims and the provenance of the traces. No external resource is loaded.

use colloc_analysis::Results;

use crate::escape::html as escape;
use crate::figures::Figure;
use crate::tables::{Table, SIMULATED_NOTE};

pub(crate) fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(A[(n >> 18) as usize & 63] as char);
        out.push(A[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { A[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { A[n as usize & 63] as char } else { '=' });
    }
    out
}

fn table_html(t: &Table) -> String {
    let mut out = format!("<section class=\"table\" id=\"table-{}\">\n<h3>{}</h3>\n", t.id, escape(&t.title));
    if t.simulated {
        out.push_str(&format!("<p class=\"simulated\">{}</p>\n", escape(SIMULATED_NOTE)));
    }
    // A table of many columns may break its cells' words to fit a printed page's width.
    let wide = if t.columns.len() >= WIDE_COLUMNS { " class=\"wide\"" } else { "" };
    out.push_str(&format!("<p>{}</p>\n<div class=\"scroll\"><table{wide}>\n<thead><tr>", escape(&t.caption.text())));
    for c in &t.columns {
        out.push_str(&format!(
            "<th{}>{}</th>",
            if c.is_numeric() { " class=\"num\"" } else { "" },
            escape(&c.header_with_unit())
        ));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let num = t.columns[i].is_numeric();
            let text = t.display_full(i, cell);
            let class = if num { Some("num") } else { claims_grade_class(t, i, &text) };
            out.push_str(&format!(
                "<td{}>{}</td>",
                class.map_or(String::new(), |c| format!(" class=\"{c}\"")),
                escape(&text)
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n<ul class=\"notes\">");
    for n in t.all_notes() {
        out.push_str(&format!("<li>{}</li>", escape(&n.text())));
    }
    out.push_str("</ul>\n</section>\n");
    out
}

/// In the claims table, the class of a cell showing a grade (the headline, and each data
/// source's `grade: values`): `verdict-holds`, `verdict-direction-only`,
/// `verdict-inconclusive`, `verdict-does-not-hold`, `verdict-by-construction`,
/// `verdict-not-run`.
fn claims_grade_class(t: &Table, column: usize, text: &str) -> Option<&'static str> {
    let h = &t.columns[column].header;
    (t.id == "claims" && (h == "Headline" || h.starts_with("Ours, ")))
        .then(|| crate::claims::grade_class(text))
        .flatten()
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1250px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}\
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}h3{margin-bottom:.2em}\
.simulated{background:#fde8e8;border:2px solid #c00;color:#900;padding:.5em 1em;font-weight:bold}\
figure{margin:2em 0}figure img{width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.9em;color:#444}\
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.85em}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;vertical-align:top}\
th{border-bottom:2px solid #444;text-align:left}.num{text-align:right}@media (min-width:1300px){.num{white-space:nowrap}}.notes{font-size:.8em;color:#555}\
.verdict-holds{color:#070}.verdict-direction-only{color:#a60}.verdict-inconclusive{color:#55a;font-style:italic}\
.verdict-does-not-hold{color:#b00}.verdict-by-construction{color:#367}.verdict-not-run{color:#777}code{font-size:.9em}\
td,th{overflow-wrap:break-word}table.wide td,table.wide th{overflow-wrap:anywhere}@media (max-width:1300px){table{font-size:.72em}}details.claim{margin:.6em 0}details.claim summary{cursor:pointer}details.claim ul{font-size:.9em}\
dl.glossary dt{font-weight:bold;margin-top:.4em}dl.glossary dd{margin-left:1.5em}\
@page{size:A4 landscape;margin:12mm}\
@media print{body{max-width:none;margin:0;font-size:10pt}.scroll{overflow:visible}table{width:100%;font-size:7.5pt}\
th,td{padding:.15em .3em}nav,script{display:none}figure,tr,details{break-inside:avoid}h2{break-before:auto}\
figure img{width:auto;max-width:100%;max-height:150mm;display:block;margin:0 auto}}";

/// Tables with at least this many columns are `wide`: their cells may break words.
const WIDE_COLUMNS: usize = 14;

/// Marks the figures that fail to load, for the headless-browser test.
const CHECK_SCRIPT: &str = "window.addEventListener('load',function(){var i=Array.prototype.slice.call(document.querySelectorAll('img.figure'));\
var b=i.filter(function(x){return !(x.complete&&x.naturalWidth>0);}).map(function(x){return x.alt;});\
document.body.setAttribute('data-figures',String(i.length));document.body.setAttribute('data-broken',b.join(' '));\
var o=Array.prototype.slice.call(document.querySelectorAll('section.table')).filter(function(x){var t=x.querySelector('table');return t&&t.scrollWidth>x.clientWidth+1;}).map(function(x){return x.id;});\
document.body.setAttribute('data-overflow',o.join(' '));\
document.body.setAttribute('data-grades',String(document.querySelectorAll('[class^=verdict-]').length));\
document.body.setAttribute('data-glossary',String(document.querySelectorAll('dl.glossary dt').length));\
document.body.setAttribute('data-checked','yes');});";

/// The page. `figures` are (figure, SVG text) in display order.
pub(crate) fn report(
    results: &Results,
    figures: &[(Figure, String)],
    tables: &[Table],
    claims: &Table,
    claim_outcomes: &[colloc_analysis::ClaimOutcome],
    claims_md_path: &str,
) -> String {
    let p = &results.provenance;
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!(
        "<title>Collocation on GPUs for deep learning training: campaign {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&results.campaign)
    ));
    out.push_str("<h1>An Analysis of Collocation on GPUs for Deep Learning Training: reproduction</h1>\n");
    out.push_str(&format!(
        "<p>Campaign <code>{}</code> on {}; regenerated by <code>cargo xtask reproduce</code> from traces verified against their <code>SHA256SUMS</code>.</p>\n",
        escape(&results.campaign),
        escape(&results.gpu_name())
    ));
    if results.simulated {
        out.push_str(&format!(
            "<p class=\"simulated\">{}. Nothing on this page is a measurement.</p>\n",
            escape(SIMULATED_NOTE)
        ));
    }
    if let Some(note) = results.incomplete() {
        out.push_str(&format!(
            "<p class=\"simulated\">Incomplete campaign: {}. The verdicts cover the runs made so far.</p>\n",
            escape(&note)
        ));
    }
    out.push_str("<nav><a href=\"#provenance\">Provenance</a> · <a href=\"#claims\">Claims</a> · <a href=\"#figures\">Figures</a> · <a href=\"#tables\">Tables</a> · <a href=\"#glossary\">Glossary</a></nav>\n");

    out.push_str("<h2 id=\"provenance\">Provenance</h2>\n<ul>\n");
    let items = [
        ("GPU", p.gpu_names.join(", ")),
        ("Driver", p.driver_versions.join(", ")),
        ("CUDA (driver API)", p.cuda_driver_versions.join(", ")),
        ("Runs", crate::format::runs_line(p)),
        (
            "Dates",
            format!(
                "{} to {}",
                p.first_started_at.clone().unwrap_or_default(),
                p.last_ended_at.clone().unwrap_or_default()
            ),
        ),
        ("Runner", p.runner_versions.join(", ")),
        ("Git commit", p.git_commits.join(", ")),
        ("Protocol", p.protocols.join("; ")),
        ("SHA256SUMS sha256", p.manifest_sha256.clone()),
    ];
    for (k, v) in items {
        out.push_str(&format!("<li><b>{}:</b> <code>{}</code></li>\n", escape(k), escape(&v)));
    }
    out.push_str("</ul>\n<p>The full hardware and software table is below (<a href=\"#table-hardware\">Hardware and software</a>).</p>\n");

    out.push_str("<h2 id=\"claims\">Claims</h2>\n");
    out.push_str(&format!(
        "<p>Claim by claim, with the checks' details, in <code>{}</code>.</p>\n",
        escape(claims_md_path)
    ));
    out.push_str(&table_html(claims));
    out.push_str("<h3>Each claim's checks</h3>\n");
    out.push_str(&crate::claims::details_html(claim_outcomes));

    out.push_str("<h2 id=\"figures\">Figures</h2>\n");
    for (f, svg) in figures {
        out.push_str(&format!(
            "<figure id=\"figure-{id}\">\n<img class=\"figure\" alt=\"{id}\" src=\"data:image/svg+xml;base64,{}\">\n<figcaption><b>{}.</b> {}</figcaption>\n</figure>\n",
            base64(svg.as_bytes()),
            escape(&f.title(results)),
            escape(&f.caption(results)),
            id = f.id(),
        ));
    }
    out.push_str("<h2 id=\"tables\">Tables</h2>\n");
    for t in tables {
        out.push_str(&table_html(t));
    }
    out.push_str("<h2 id=\"glossary\">Glossary</h2>\n");
    out.push_str(&crate::glossary::html());
    out.push_str(&format!("<script>{CHECK_SCRIPT}</script>\n</body>\n</html>\n"));
    out
}

#[cfg(test)]
mod tests {
    /// The claims table's grade cells carry their grade's class, each styled.
    #[test]
    fn claims_grades_carry_their_class() {
        let (_d, r, c) = crate::claims::tests::fixture();
        let html = super::table_html(&crate::claims::table(&r, &c, None));
        for (class, cell) in [
            ("verdict-by-construction", "by construction (synthetic)"),
            ("verdict-not-run", "not run"),
            ("verdict-holds", "holds (generated)"),
            ("verdict-does-not-hold", "does not hold (synthetic)"),
        ] {
            assert!(html.contains(&format!("<td class=\"{class}\">{cell}</td>")), "{class}: {html}");
        }
        assert!(html.contains("<td class=\"verdict-direction-only\">direction only: "), "{html}");
        // The statement and the paper's words are not grades.
        assert!(!html.contains("class=\"verdict-holds\">Collocation"), "{html}");
        for class in [
            "verdict-holds",
            "verdict-direction-only",
            "verdict-inconclusive",
            "verdict-does-not-hold",
            "verdict-by-construction",
            "verdict-not-run",
        ] {
            assert!(super::STYLE.contains(&format!(".{class}{{")), "{class}");
        }
    }

    #[test]
    fn base64_matches_the_rfc() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
    }
}
