//! Every string from a trace is escaped for the format it goes into. A fixture campaign whose
//! `meta.json` files carry hostile text (a pipe, an HTML tag, backticks, a line break, quotes
//! and a comma, a LaTeX command, an entity) in its GPU, driver, host, labels, reasons and
//! campaign name is reproduced with `cargo xtask reproduce`; then every Markdown table keeps
//! its column count and no Markdown output holds a raw `<`, the HTML report holds no tag but
//! its own, no LaTeX table row gains a column or a raw command, and every CSV parses back
//! to the planted strings.

mod common;

use colloc_analysis::testkit::{write_campaign, FixtureOptions};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const PIPE: &str = "a|b";
const TAG: &str = "<img src=x onerror=alert(1)>";
const TICKS: &str = "`x` *y*";
const BREAK: &str = "line\nbreak";
const QUOTES: &str = "\"q,uo\"te";
const TEX: &str = "\\textbf{x}";
const ENTITY: &str = "&amp;";
/// The campaign's name, its directory's name too (so no `/`).
const CAMPAIGN: &str = "hostile|<i>`c`&amp;";

/// The label each workload gets: its own with the entity and emphasis marks after it.
fn label(own: &str) -> String {
    format!("{own} {ENTITY} _u_")
}

/// Writes the fixture campaign under `tmp` and plants the hostile strings in every run's
/// meta.json; the manifest is written again over the changed files.
fn hostile_campaign(tmp: &Path) -> PathBuf {
    let opts = FixtureOptions { name: CAMPAIGN.into(), repetitions: 1, ..FixtureOptions::default() };
    let dir = write_campaign(tmp, &opts).unwrap();
    let mut skipped = 0;
    for e in std::fs::read_dir(dir.join("runs")).unwrap() {
        let path = e.unwrap().path().join("meta.json");
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        m["gpu"]["name"] = TAG.into();
        m["gpu"]["driver_version"] = PIPE.into();
        m["gpu"]["cuda_version"] = ENTITY.into();
        m["gpu"]["uuid"] = TEX.into();
        m["host"]["cpu_model"] = TICKS.into();
        m["host"]["kernel"] = BREAK.into();
        m["host"]["os"] = QUOTES.into();
        m["host"]["hostname"] = TAG.into();
        let own = m["workload"]["label"].as_str().unwrap().to_string();
        m["workload"]["label"] = label(&own).into();
        if m["status"] == "skipped" {
            m["reason"] = format!("{TAG} {PIPE} {BREAK}").into();
            skipped += 1;
        }
        if let Some(u) = m["telemetry"]["unavailable"].as_object_mut() {
            for v in u.values_mut() {
                *v = format!("{QUOTES} {TICKS}").into();
            }
        }
        std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap() + "\n").unwrap();
    }
    assert!(skipped > 0, "the fixture has no skipped run to carry a reason");
    std::fs::remove_file(dir.join("SHA256SUMS")).unwrap();
    colloc_trace::manifest::add_dir(&dir, "runs").unwrap();
    dir
}

/// The campaign reproduced under `tmp/out`, once for all the tests.
fn outputs() -> &'static BTreeMap<String, String> {
    static OUT: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();
    OUT.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = hostile_campaign(tmp.path());
        let out = tmp.path().join("out");
        let r = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(["reproduce", "--campaign", CAMPAIGN, "--traces"])
            .arg(&dir)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            r.status.success(),
            "reproduce failed:\n{}\n{}",
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&r.stderr)
        );
        let mut files = BTreeMap::new();
        collect(&out, &out, &mut files);
        assert!(
            files.contains_key("paper/APPENDIX.md") && files.contains_key("paper/report.html"),
            "{:?}",
            files.keys()
        );
        files
    })
}

fn collect(root: &Path, dir: &Path, into: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(root, &p, into);
        } else if ["md", "html", "tex", "csv"].iter().any(|x| p.extension().is_some_and(|e| e == *x)) {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            into.insert(rel, std::fs::read_to_string(&p).unwrap());
        }
    }
}

fn of_kind(ext: &str) -> Vec<(&'static str, &'static str)> {
    outputs().iter().filter(|(p, _)| p.ends_with(ext)).map(|(p, t)| (p.as_str(), t.as_str())).collect()
}

/// The cells of a Markdown table row: split at the `|` no backslash escapes.
fn md_cells(row: &str) -> usize {
    let mut pipes = 0;
    let mut chars = row.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '|' => pipes += 1,
            _ => {}
        }
    }
    pipes - 1
}

#[test]
fn markdown_tables_keep_their_columns_and_hold_no_raw_html() {
    let mds = of_kind(".md");
    assert!(mds.len() >= 10, "{:?}", mds.iter().map(|m| m.0).collect::<Vec<_>>());
    let mut rows = 0;
    for (path, text) in &mds {
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if !lines[i].starts_with('|') {
                i += 1;
                continue;
            }
            let header = md_cells(lines[i]);
            let start = i;
            while i < lines.len() && lines[i].starts_with('|') {
                assert!(lines[i].ends_with('|'), "{path}:{}: a row that does not end its cells: {}", i + 1, lines[i]);
                assert_eq!(
                    md_cells(lines[i]),
                    header,
                    "{path}:{}: {} cells, the header {header}: {}",
                    i + 1,
                    md_cells(lines[i]),
                    lines[i]
                );
                rows += 1;
                i += 1;
            }
            assert!(i - start >= 2, "{path}:{}: a table without its rule", start + 1);
        }
        for (n, line) in lines.iter().enumerate() {
            // No `<` in a table; elsewhere only artifact.yaml's own (`train/<class>/`) and the
            // appendix's comment, none of the traces'.
            assert!(!line.starts_with('|') || !line.contains('<'), "{path}:{}: a raw `<` in a table: {line}", n + 1);
            for tag in ["<img", "<i>", "</i>"] {
                assert!(!line.contains(tag), "{path}:{}: a raw {tag}: {line}", n + 1);
            }
            for raw in [TAG, PIPE, TICKS, CAMPAIGN] {
                assert!(!line.contains(raw), "{path}:{}: {raw:?} as it came: {line}", n + 1);
            }
            // Escaped, these hold themselves: `&amp;amp;`, `\\textbf{x}`.
            assert_eq!(line.matches(ENTITY).count(), line.matches("&amp;amp;").count(), "{path}:{}: {line}", n + 1);
            assert_eq!(line.matches(TEX).count(), line.matches("\\textbf{x}").count(), "{path}:{}: {line}", n + 1);
        }
    }
    assert!(rows > 50, "only {rows} table rows");
    // The planted strings are there, escaped.
    let hardware = outputs()["paper/tables/hardware.md"].as_str();
    for escaped in
        ["&lt;img src=x onerror=alert(1)&gt;", "a\\|b", "\\`x\\` \\*y\\*", "line break", "\"q,uo\"te", "&amp;amp;"]
    {
        assert!(hardware.contains(escaped), "hardware.md lacks {escaped:?}:\n{hardware}");
    }
    let hosts = outputs()["paper/tables/hosts.md"].as_str();
    assert!(hosts.contains("| \\\\textbf{x} |"), "hosts.md lacks the GPU's UUID escaped:\n{hosts}");
    let matrix = outputs()["paper/tables/experiment_matrix.md"].as_str();
    assert!(matrix.contains("&amp;amp; \\_u\\_"), "{matrix}");
    assert!(matrix.contains("hostile\\|&lt;i&gt;\\`c\\`&amp;amp;"), "the campaign's name in the caption: {matrix}");
    assert!(
        matrix.contains("skipped (") && matrix.contains("&lt;img src=x onerror=alert(1)&gt; a\\|b line break"),
        "{matrix}"
    );
    let appendix = outputs()["paper/APPENDIX.md"].as_str();
    assert!(
        appendix.contains(
            "- **Hardware of the shipped traces:** &lt;img src=x onerror=alert(1)&gt; (driver a\\|b, CUDA &amp;amp;"
        ),
        "{appendix}"
    );
}

/// The names of the tags in an HTML page, with their text as written.
fn tags(html: &str) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    for (at, _) in html.match_indices('<') {
        let rest = &html[at + 1..];
        let name: String =
            rest.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '!').collect();
        let end = rest.find('>').map_or(rest.len(), |e| e + 1);
        out.push((name.to_ascii_lowercase(), &html[at..at + 1 + end]));
    }
    out
}

#[test]
fn the_html_report_holds_only_its_own_tags() {
    let html = outputs()["paper/report.html"].as_str();
    let own: BTreeSet<&str> = [
        "!doctype",
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "h1",
        "h2",
        "h3",
        "p",
        "nav",
        "a",
        "ul",
        "li",
        "b",
        "code",
        "section",
        "div",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "figure",
        "img",
        "figcaption",
        "script",
        // The claims' details and the glossary.
        "details",
        "summary",
        "span",
        "dl",
        "dt",
        "dd",
    ]
    .into();
    for (name, text) in tags(html) {
        assert!(own.contains(name.as_str()), "a tag the report does not write: {text}");
        if name == "span" && !text.starts_with("</") {
            assert!(text.starts_with("<span class=\"verdict-"), "{text}");
        }
        if name == "img" {
            assert!(text.starts_with("<img class=\"figure\" alt=\""), "{text}");
        }
    }
    assert_eq!(html.matches("<script").count(), 1);
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;")
            && html.contains("&quot;q,uo&quot;te")
            && html.contains("&amp;amp;")
    );
    assert!(!html.contains(TAG) && !html.contains(QUOTES));
}

/// The unescaped `&` of a LaTeX line (column separators).
fn ampersands(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len()).filter(|&i| b[i] == b'&' && (i == 0 || b[i - 1] != b'\\')).count()
}

#[test]
fn latex_rows_keep_their_columns_and_hold_no_raw_command() {
    let texs = of_kind(".tex");
    assert!(texs.len() >= 10);
    for (path, text) in &texs {
        let spec = text
            .lines()
            .find_map(|l| l.strip_prefix("\\begin{tabular}{@{}"))
            .unwrap_or_else(|| panic!("{path}: no tabular"));
        let columns = spec.trim_end_matches("@{}}").len();
        // The header and the body rows, between \toprule and \bottomrule.
        let mut rows = false;
        for (n, line) in text.lines().enumerate() {
            match line {
                "\\toprule" => rows = true,
                "\\bottomrule" => rows = false,
                "\\midrule" => {}
                _ if rows => {
                    assert!(line.ends_with(" \\\\"), "{path}:{}: a row that does not end: {line}", n + 1);
                    assert_eq!(ampersands(line), columns - 1, "{path}:{}: {line}", n + 1);
                }
                _ => assert_eq!(ampersands(line), 0, "{path}:{}: an unescaped & outside the rows: {line}", n + 1),
            }
            for raw in [TAG, TEX, CAMPAIGN, "<", "\\textbf{"] {
                assert!(!line.contains(raw), "{path}:{}: {raw:?} unescaped: {line}", n + 1);
            }
        }
    }
    let hardware = outputs()["paper/tables/hardware.tex"].as_str();
    for escaped in ["\\textless{}img src=x onerror=alert(1)\\textgreater{}", "line break", "\\&amp;"] {
        assert!(hardware.contains(escaped), "hardware.tex lacks {escaped:?}:\n{hardware}");
    }
    let hosts = outputs()["paper/tables/hosts.tex"].as_str();
    assert!(hosts.contains("\\textbackslash{}textbf\\{x\\} &"), "hosts.tex lacks the GPU's UUID escaped:\n{hosts}");
}

/// RFC 4180 records: fields split at commas outside quotes, `""` a quote inside them.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut field, mut quoted, mut was_quoted) = (Vec::new(), String::new(), false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => {
                assert!(field.is_empty() && !was_quoted, "a quote inside an unquoted field: {field:?}");
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                record.push(std::mem::take(&mut field));
                was_quoted = false;
            }
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                was_quoted = false;
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted && field.is_empty() && record.is_empty(), "the CSV ends inside a record");
    records
}

#[test]
fn csv_parses_back_to_the_planted_strings() {
    let mut fields = BTreeSet::new();
    for (path, text) in of_kind(".csv") {
        // A simulated table's first line is a comment; a field may hold a line break, so the
        // rest is parsed whole, not line by line.
        let body = if text.starts_with('#') { text.split_once('\n').unwrap().1 } else { text };
        let records = parse_csv(body);
        let width = records[0].len();
        for (n, r) in records.iter().enumerate() {
            assert_eq!(r.len(), width, "{path}: record {}: {r:?}", n + 1);
        }
        fields.extend(records.into_iter().flatten());
    }
    for s in [TAG, PIPE, ENTITY, TICKS, BREAK, QUOTES, TEX] {
        assert!(fields.contains(s), "no CSV field is {s:?}");
    }
    assert!(fields.iter().any(|f| f.ends_with(&format!(" {ENTITY} _u_"))), "no CSV field holds a planted label");
    let hardware = outputs()["paper/tables/hardware.csv"].as_str();
    let hardware = parse_csv(if hardware.starts_with('#') { hardware.split_once('\n').unwrap().1 } else { hardware });
    let value = |item: &str| hardware.iter().find(|r| r[0] == item).map(|r| r[1].clone());
    assert_eq!(value("Kernel").as_deref(), Some(BREAK));
    assert_eq!(value("OS").as_deref(), Some(QUOTES));
    assert_eq!(value("GPU").as_deref(), Some(TAG));
    assert_eq!(value("Campaign").as_deref(), Some(CAMPAIGN));
}
