//! Markdown (GitHub pipe tables): a title, the caption, the table, the notes.

use super::Table;

pub(crate) fn render(t: &Table) -> String {
    let mut out = format!("### {}\n\n", t.title);
    if t.simulated {
        out.push_str(&format!("> **{}**\n\n", super::SIMULATED_NOTE));
    }
    out.push_str(&format!("{}\n\n", t.caption));
    let headers: Vec<String> = t.columns.iter().map(|c| escape(&c.header_with_unit())).collect();
    out.push_str(&format!("| {} |\n", headers.join(" | ")));
    let rule: Vec<&str> = t.columns.iter().map(|c| if c.is_numeric() { "---:" } else { ":---" }).collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &t.rows {
        let cells: Vec<String> = row.iter().enumerate().map(|(i, c)| escape(&t.display(i, c))).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push('\n');
    for n in t.all_notes() {
        out.push_str(&format!("- {}\n", n));
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
