//! Markdown (GitHub pipe tables): a title, the caption, the table, the notes. Text from the
//! traces is escaped ([`crate::escape::md`]): in cells and headers, and where captions and
//! notes quote it ([`super::Prose`]); numbers and our own words keep only `|` and line breaks
//! escaped.

use super::{Cell, Table};
use crate::escape::md;

pub(crate) fn render(t: &Table) -> String {
    let mut out = format!("### {}\n\n", md(&t.title));
    if t.simulated {
        out.push_str(&format!("> **{}**\n\n", super::SIMULATED_NOTE));
    }
    out.push_str(&format!("{}\n\n", t.caption.markdown()));
    let headers: Vec<String> = t.columns.iter().map(|c| md(&c.header_with_unit())).collect();
    out.push_str(&format!("| {} |\n", headers.join(" | ")));
    let rule: Vec<&str> = t.columns.iter().map(|c| if c.is_numeric() { "---:" } else { ":---" }).collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                Cell::Text(_) => md(&t.display(i, c)),
                _ => cell_edges(&t.display(i, c)),
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push('\n');
    for n in t.all_notes() {
        out.push_str(&format!("- {}\n", n.markdown()));
    }
    out
}

/// Our own text in a cell: `|` escaped, line breaks as spaces.
fn cell_edges(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
