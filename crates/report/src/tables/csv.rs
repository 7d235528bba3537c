//! CSV (RFC 4180): a header line, one line per row. A column of statistics becomes three
//! columns (`… median`, `… min`, `… max`); numbers carry the same decimals as elsewhere and
//! no unit (the unit is in the header). Simulated tables start with a `#` comment line.

use super::{Cell, Table, SIMULATED_NOTE};

pub(crate) fn render(t: &Table) -> String {
    let mut out = String::new();
    if t.simulated {
        out.push_str(&format!("# {SIMULATED_NOTE}\n"));
    }
    let any = |i: usize, f: fn(&Cell) -> bool| t.rows.iter().any(|r| r.get(i).is_some_and(f));
    let stats_cols: Vec<bool> = (0..t.columns.len())
        .map(|i| any(i, |c| matches!(c, Cell::Stats(_) | Cell::Marked(..) | Cell::Ratio(..))))
        .collect();
    let cross_cols: Vec<bool> = (0..t.columns.len()).map(|i| any(i, |c| c.marks().cross_host)).collect();
    let disturbed_cols: Vec<bool> = (0..t.columns.len()).map(|i| any(i, |c| c.marks().disturbed)).collect();
    let ci_cols: Vec<bool> = (0..t.columns.len()).map(|i| any(i, |c| matches!(c, Cell::Ci(_)))).collect();
    let ratio_cols: Vec<bool> = (0..t.columns.len()).map(|i| any(i, |c| matches!(c, Cell::Ratio(..)))).collect();
    let implausible_cols: Vec<bool> = (0..t.columns.len()).map(|i| any(i, |c| c.marks().implausible)).collect();
    let mut header = Vec::new();
    for (i, c) in t.columns.iter().enumerate() {
        let h = c.header_with_unit();
        if ci_cols[i] {
            header.push(format!("{} half-width (%) median", c.header));
            header.push(format!("{} half-width (%) max", c.header));
        } else if stats_cols[i] {
            header.push(format!("{h} median"));
            header.push(format!("{h} min"));
            header.push(format!("{h} max"));
            if ratio_cols[i] {
                header.push(format!("{h} 95% low"));
                header.push(format!("{h} 95% high"));
            }
        } else {
            header.push(h.clone());
        }
        if cross_cols[i] {
            header.push(format!("{} against another host's baseline", c.header));
        }
        if disturbed_cols[i] {
            header.push(format!("{} from a disturbed run", c.header));
        }
        if implausible_cols[i] {
            header.push(format!("{} implausible", c.header));
        }
    }
    line(&mut out, &header);
    for row in &t.rows {
        let mut fields = Vec::new();
        for (i, cell) in row.iter().enumerate() {
            let q = t.columns[i].quantity.unwrap_or(crate::format::Quantity::Plain);
            let num = |v: Option<f64>| v.map(|v| q.number(v)).unwrap_or_default();
            match cell {
                Cell::Stats(s) | Cell::Marked(s, _) | Cell::Ratio(s, _, _) => {
                    fields.push(num(s.map(|s| s.median)));
                    fields.push(num(s.map(|s| s.min)));
                    fields.push(num(s.map(|s| s.max)));
                    if ratio_cols[i] {
                        let interval = match cell {
                            Cell::Ratio(_, i, _) => *i,
                            _ => None,
                        };
                        fields.push(num(interval.map(|i| i[0])));
                        fields.push(num(interval.map(|i| i[1])));
                    }
                }
                Cell::Ci(s) => {
                    let share =
                        |v: Option<f64>| v.map(|v| crate::format::Quantity::HalfWidth.number(v)).unwrap_or_default();
                    fields.push(share(s.map(|s| s.median)));
                    fields.push(share(s.map(|s| s.max)));
                }
                other if stats_cols[i] => {
                    // A text (status) in a statistics column: first field, others empty.
                    fields.push(plain(t, i, other));
                    fields.push(String::new());
                    fields.push(String::new());
                    if ratio_cols[i] {
                        fields.push(String::new());
                        fields.push(String::new());
                    }
                }
                other if ci_cols[i] => {
                    fields.push(plain(t, i, other));
                    fields.push(String::new());
                }
                other => fields.push(plain(t, i, other)),
            }
            let yes = |b: bool| if b { "yes".to_string() } else { String::new() };
            if cross_cols[i] {
                fields.push(yes(cell.marks().cross_host));
            }
            if disturbed_cols[i] {
                fields.push(yes(cell.marks().disturbed));
            }
            if implausible_cols[i] {
                fields.push(yes(cell.marks().implausible));
            }
        }
        line(&mut out, &fields);
    }
    out
}

fn plain(t: &Table, col: usize, cell: &Cell) -> String {
    match cell {
        Cell::Text(s) | Cell::Own(s) => s.clone(),
        Cell::Value(v) => {
            v.map(|v| t.columns[col].quantity.unwrap_or(crate::format::Quantity::Plain).number(v)).unwrap_or_default()
        }
        Cell::Stats(_) | Cell::Marked(..) | Cell::Ratio(..) | Cell::Ci(_) => unreachable!("handled by the caller"),
    }
}

fn line(out: &mut String, fields: &[String]) {
    let quoted: Vec<String> = fields.iter().map(|f| crate::escape::csv(f)).collect();
    out.push_str(&quoted.join(","));
    out.push('\n');
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
                vec![
                    Cell::text("d"),
                    Cell::Marked(
                        Some(Stats { median: 1.5, min: 1.5, max: 1.5, n: 1 }),
                        crate::tables::Marks { cross_host: true, ..Default::default() },
                    ),
                ],
            ],
            notes: vec![],
            simulated: true,
        };
        let s = render(&t);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[0].starts_with("# SIMULATED"));
        assert_eq!(
            lines[1],
            "Workload,Ratio (×) median,Ratio (×) min,Ratio (×) max,Ratio against another host's baseline"
        );
        assert_eq!(lines[2], "\"a, b\",2.00,1.00,3.00,");
        assert_eq!(lines[3], "c,skipped,,,");
        assert_eq!(lines[4], "d,1.50,1.50,1.50,yes");
    }

    #[test]
    fn a_disturbed_value_is_marked_in_every_format() {
        let marks = crate::tables::Marks { disturbed: true, ..Default::default() };
        let t = Table {
            id: "t",
            title: "T".into(),
            caption: "c".into(),
            columns: vec![Column::text("Workload"), Column::number("Ratio", Quantity::Ratio)],
            rows: vec![
                vec![Cell::text("a"), Cell::Marked(Some(Stats { median: 1.5, min: 1.4, max: 1.6, n: 2 }), marks)],
                vec![Cell::text("b"), Cell::Stats(Some(Stats { median: 2.0, min: 2.0, max: 2.0, n: 1 }))],
            ],
            notes: vec![],
            simulated: false,
        };
        let s = render(&t);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "Workload,Ratio (×) median,Ratio (×) min,Ratio (×) max,Ratio from a disturbed run");
        assert_eq!((lines[1], lines[2]), ("a,1.50,1.40,1.60,yes", "b,2.00,2.00,2.00,"));
        assert!(t.display(1, &t.rows[0][1]).ends_with('‡'), "{}", t.display(1, &t.rows[0][1]));
        assert!(!t.display(1, &t.rows[1][1]).contains('‡'));
        assert!(t.all_notes().iter().any(|n| n.text().starts_with("‡:")), "{:?}", t.all_notes());
        assert!(!t.all_notes().iter().any(|n| n.text().starts_with("†:")));
        assert!(crate::tables::latex::render(&t).contains("\\textsuperscript{\\ddag}"));
    }
}
