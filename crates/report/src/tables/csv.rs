//! CSV (RFC 4180): a header line, one line per row. A column of statistics becomes three
//! columns (`… median`, `… min`, `… max`); numbers carry the same decimals as elsewhere and
//! no unit (the unit is in the header). Simulated tables start with a `#` comment line.

use super::{Cell, Table, SIMULATED_NOTE};

pub(crate) fn render(t: &Table) -> String {
    let mut out = String::new();
    if t.simulated {
        out.push_str(&format!("# {SIMULATED_NOTE}\n"));
    }
    let stats_cols: Vec<bool> =
        (0..t.columns.len()).map(|i| t.rows.iter().any(|r| matches!(r.get(i), Some(Cell::Stats(_))))).collect();
    let mut header = Vec::new();
    for (c, is_stats) in t.columns.iter().zip(&stats_cols) {
        let h = c.header_with_unit();
        if *is_stats {
            header.push(format!("{h} median"));
            header.push(format!("{h} min"));
            header.push(format!("{h} max"));
        } else {
            header.push(h);
        }
    }
    line(&mut out, &header);
    for row in &t.rows {
        let mut fields = Vec::new();
        for (i, cell) in row.iter().enumerate() {
            let q = t.columns[i].quantity.unwrap_or(crate::format::Quantity::Plain);
            let num = |v: Option<f64>| v.map(|v| q.number(v)).unwrap_or_default();
            match cell {
                Cell::Stats(s) => {
                    fields.push(num(s.map(|s| s.median)));
                    fields.push(num(s.map(|s| s.min)));
                    fields.push(num(s.map(|s| s.max)));
                }
                other if stats_cols[i] => {
                    // A text (status) in a statistics column: first field, others empty.
                    fields.push(plain(t, i, other));
                    fields.push(String::new());
                    fields.push(String::new());
                }
                other => fields.push(plain(t, i, other)),
            }
        }
        line(&mut out, &fields);
    }
    out
}

fn plain(t: &Table, col: usize, cell: &Cell) -> String {
    match cell {
        Cell::Text(s) => s.clone(),
        Cell::Value(v) => {
            v.map(|v| t.columns[col].quantity.unwrap_or(crate::format::Quantity::Plain).number(v)).unwrap_or_default()
        }
        Cell::Stats(_) => unreachable!("handled by the caller"),
    }
}

fn line(out: &mut String, fields: &[String]) {
    let quoted: Vec<String> = fields.iter().map(|f| quote(f)).collect();
    out.push_str(&quoted.join(","));
    out.push('\n');
}

fn quote(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Quantity;
    use crate::tables::Column;
    use colloc_analysis::Stats;

    #[test]
    fn expands_statistics_and_quotes() {
        let t = Table {
            id: "t",
            title: "T".into(),
            caption: "c".into(),
            columns: vec![Column::text("Workload"), Column::number("Ratio", Quantity::Ratio)],
            rows: vec![
                vec![Cell::text("a, b"), Cell::Stats(Some(Stats { median: 2.0, min: 1.0, max: 3.0, n: 3 }))],
                vec![Cell::text("c"), Cell::text("skipped")],
            ],
            notes: vec![],
            simulated: true,
        };
        let s = render(&t);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[0].starts_with("# SIMULATED"));
        assert_eq!(lines[1], "Workload,Ratio (×) median,Ratio (×) min,Ratio (×) max");
        assert_eq!(lines[2], "\"a, b\",2.00,1.00,3.00");
        assert_eq!(lines[3], "c,skipped,,");
    }
}
