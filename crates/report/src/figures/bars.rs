//! Panels of grouped bars (median, min–max), with marks for cells without a value: upright
//! groups along the x axis, or one row per group when the groups' labels are long.

use anyhow::Result;
use colloc_analysis::Stats;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::de;
use super::lines::{format_tick, whisker};
use super::style::{bold, draw_marker, font, Marker, ALERT, GREY, HEADING_FILL, INK, LIGHT};

pub(super) enum BarValue {
    Value(Stats),
    /// The layout cannot be made (MIG).
    Infeasible,
    /// Planned, but skipped or failed.
    NotRun,
    /// Measured, but there is nothing to compare it with.
    NoReference,
    /// Not in the campaign.
    Absent,
}

pub(super) struct Group {
    /// May hold `\n` for a second line (rows join the lines with " · ").
    pub label: String,
    /// One per series.
    pub bars: Vec<BarValue>,
    /// A reference value of the group alone, drawn as a dashed bar across its width.
    pub reference: Option<f64>,
    /// A heading over the groups that follow (rows only): its label in bold, no bars.
    pub heading: bool,
}

impl Group {
    pub(super) fn new(label: String, bars: Vec<BarValue>) -> Group {
        Group { label, bars, reference: None, heading: false }
    }

    pub(super) fn heading(label: String) -> Group {
        Group { label, bars: Vec::new(), reference: None, heading: true }
    }
}

pub(super) struct BarPanel {
    pub title: String,
    /// The value axis' description, with its unit.
    pub value_desc: String,
    pub colors: Vec<RGBColor>,
    pub groups: Vec<Group>,
    /// A line across the panel (dashed), of `ref_color`.
    pub ref_line: Option<f64>,
    pub ref_color: RGBColor,
    /// The top of the value axis, when panels share it; else fitted to the values.
    pub top: Option<f64>,
}

pub(super) fn draw_bar_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    p: &BarPanel,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let n = p.groups.len().max(1);
    let k = p.colors.len().max(1);
    let hi = value_top(p);
    let x0 = -0.5;
    let x1 = n as f64 - 0.5;
    let lines = p.groups.iter().map(|g| g.label.lines().count()).max().unwrap_or(1) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, font(20.0).color(&INK))
        .margin(12)
        .x_label_area_size(20 + 22 * lines)
        .y_label_area_size(76)
        .build_cartesian_2d(x0..x1, 0.0..hi)
        .map_err(de)?;
    let blank = |_: &f64| String::new();
    let y_fmt = |y: &f64| format_tick(*y);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&blank)
        .y_desc(p.value_desc.as_str())
        .y_labels(6)
        .y_label_formatter(&y_fmt)
        .label_style(font(16.0).color(&INK))
        .axis_desc_style(font(18.0).color(&INK))
        .light_line_style(WHITE)
        .bold_line_style(LIGHT)
        .draw()
        .map_err(de)?;
    if let Some(y) = p.ref_line {
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(x0, y), (x1, y)], p.ref_color.stroke_width(1))))
            .map_err(de)?;
    }
    let width = 0.8 / k as f64;
    for (gi, g) in p.groups.iter().enumerate() {
        if let Some(y) = g.reference {
            // Narrower than the group, so that neighbours at the same level stay apart.
            let (a, b) = (gi as f64 - 0.4, gi as f64 + 0.4);
            let step = (b - a) / 7.0;
            let dashes = (0..7).step_by(2).map(|i| {
                let l = a + i as f64 * step;
                PathElement::new(vec![(l, y), ((l + step).min(b), y)], INK.stroke_width(2))
            });
            chart.draw_series(dashes).map_err(de)?;
        }
    }
    for (gi, g) in p.groups.iter().enumerate() {
        for (si, b) in g.bars.iter().enumerate() {
            let left = gi as f64 - 0.4 + si as f64 * width;
            let mid = left + width / 2.0;
            let color = p.colors.get(si).copied().unwrap_or(GREY);
            match b {
                BarValue::Value(s) => {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(left + width * 0.08, 0.0), (left + width * 0.92, s.median)],
                            color.filled(),
                        )))
                        .map_err(de)?;
                    if s.max > s.min {
                        chart.draw_series(whisker(mid, width * 0.2, s.min, s.max, INK.stroke_width(2))).map_err(de)?;
                    }
                }
                BarValue::Infeasible => {
                    let c = chart.backend_coord(&(mid, 0.0));
                    draw_marker(root, Marker::Cross, (c.0, c.1 - 12), 7, ALERT, true)?;
                }
                BarValue::NotRun => {
                    let c = chart.backend_coord(&(mid, 0.0));
                    draw_marker(root, Marker::Circle, (c.0, c.1 - 12), 6, GREY, false)?;
                }
                BarValue::NoReference => {
                    let c = chart.backend_coord(&(mid, 0.0));
                    root.draw_text(
                        "?",
                        &font(18.0).color(&GREY).pos(Pos::new(HPos::Center, VPos::Bottom)),
                        (c.0, c.1 - 4),
                    )
                    .map_err(de)?;
                }
                BarValue::Absent => {}
            }
        }
        let (px, py) = chart.backend_coord(&(gi as f64, 0.0));
        for (li, line) in g.label.lines().enumerate() {
            root.draw_text(
                line,
                &font(16.0).color(&INK).pos(Pos::new(HPos::Center, VPos::Top)),
                (px, py + 8 + 20 * li as i32),
            )
            .map_err(de)?;
        }
    }
    Ok(())
}

/// The top of the value axis: the largest maximum (or the reference line) and some room,
/// or the panel's own.
pub(super) fn value_top(p: &BarPanel) -> f64 {
    if let Some(t) = p.top {
        return t;
    }
    let mut hi: f64 = p.ref_line.unwrap_or(0.0);
    for g in &p.groups {
        hi = hi.max(g.reference.unwrap_or(0.0));
        for b in &g.bars {
            if let BarValue::Value(s) = b {
                hi = hi.max(s.max);
            }
        }
    }
    if hi > 0.0 {
        hi * 1.15
    } else {
        1.0
    }
}

/// The panel with one row per group, first group on top and its label at the left in
/// `label_width` pixels (0 when a panel beside it already names the rows; panels drawn side
/// by side with the same title size keep their rows level).
pub(super) fn draw_row_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    p: &BarPanel,
    label_width: u32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let n = p.groups.len().max(1);
    let k = p.colors.len().max(1);
    let hi = value_top(p);
    let (y0, y1) = (-0.5, n as f64 - 0.5);
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, font(20.0).color(&INK))
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(label_width + 8)
        .build_cartesian_2d(0.0..hi, y0..y1)
        .map_err(de)?;
    let blank = |_: &f64| String::new();
    let x_fmt = |x: &f64| format_tick(*x);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n + 1)
        .y_label_formatter(&blank)
        .x_desc(p.value_desc.as_str())
        .x_labels(6)
        .x_label_formatter(&x_fmt)
        .label_style(font(16.0).color(&INK))
        .axis_desc_style(font(18.0).color(&INK))
        .light_line_style(WHITE)
        .bold_line_style(LIGHT)
        .draw()
        .map_err(de)?;
    if let Some(x) = p.ref_line {
        let step = (y1 - y0) / 60.0;
        let dashes = (0..60).step_by(2).map(|i| {
            let a = y0 + i as f64 * step;
            PathElement::new(vec![(x, a), (x, (a + step).min(y1))], p.ref_color.stroke_width(1))
        });
        chart.draw_series(dashes).map_err(de)?;
    }
    let height = 0.8 / k as f64;
    for (gi, g) in p.groups.iter().enumerate() {
        let row = (n - 1 - gi) as f64;
        for (si, b) in g.bars.iter().enumerate() {
            let top = row + 0.4 - si as f64 * height;
            let mid = top - height / 2.0;
            let color = p.colors.get(si).copied().unwrap_or(GREY);
            let at_zero = chart.backend_coord(&(0.0, mid));
            match b {
                BarValue::Value(s) => {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(0.0, top - height * 0.92), (s.median, top - height * 0.08)],
                            color.filled(),
                        )))
                        .map_err(de)?;
                    if s.max > s.min {
                        let cap = height * 0.2;
                        let style = INK.stroke_width(2);
                        let lines = [
                            vec![(s.min, mid), (s.max, mid)],
                            vec![(s.min, mid - cap), (s.min, mid + cap)],
                            vec![(s.max, mid - cap), (s.max, mid + cap)],
                        ];
                        chart.draw_series(lines.into_iter().map(|l| PathElement::new(l, style))).map_err(de)?;
                    }
                }
                BarValue::Infeasible => draw_marker(root, Marker::Cross, (at_zero.0 + 12, at_zero.1), 7, ALERT, true)?,
                BarValue::NotRun => draw_marker(root, Marker::Circle, (at_zero.0 + 12, at_zero.1), 6, GREY, false)?,
                BarValue::NoReference => {
                    root.draw_text(
                        "?",
                        &font(18.0).color(&GREY).pos(Pos::new(HPos::Left, VPos::Center)),
                        (at_zero.0 + 4, at_zero.1),
                    )
                    .map_err(de)?;
                }
                BarValue::Absent => {}
            }
        }
        if g.heading {
            // A band across the row, labels included, the heading's text on it.
            let (px, _) = chart.backend_coord(&(0.0, row));
            let (_, top) = chart.backend_coord(&(0.0, row + 0.5));
            let (right, bottom) = chart.backend_coord(&(hi, row - 0.5));
            let x = px - label_width as i32;
            root.draw(&Rectangle::new([(x, top + 1), (right, bottom - 1)], HEADING_FILL.filled())).map_err(de)?;
        }
        if g.heading && label_width > 0 {
            let (px, py) = chart.backend_coord(&(0.0, row));
            let x = px - label_width as i32 + 6;
            root.draw_text(&g.label, &bold(17.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)), (x, py + 3))
                .map_err(de)?;
        } else if label_width > 0 && !g.heading {
            let (px, py) = chart.backend_coord(&(0.0, row));
            let label = g.label.lines().collect::<Vec<_>>().join(" · ");
            root.draw_text(&label, &font(16.0).color(&INK).pos(Pos::new(HPos::Right, VPos::Center)), (px - 10, py))
                .map_err(de)?;
        }
    }
    Ok(())
}
