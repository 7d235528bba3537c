//! Panels of lines with median markers and bars (min–max, or the 95% interval where the
//! caller gives it), on a shared style, in sections (one per data source) of a grid.

use anyhow::Result;
use colloc_analysis::Stats;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{bold, draw_marker, font, Marker, GREY, INK, LIGHT};
use super::{de, legend, legend_height, with_legend, Key};

pub(super) struct Point {
    pub x: f64,
    pub y: Stats,
    /// Drawn hollow and left off the line (a further variant at the same x).
    pub hollow: bool,
    /// A reference value drawn beside the point as a short bar of the panel's
    /// [`Panel::reference_color`] (what the point is compared with).
    pub reference: Option<f64>,
}

pub(super) struct Series {
    pub color: RGBColor,
    pub marker: Marker,
    pub points: Vec<Point>,
    /// Connect the points with a line.
    pub line: bool,
    /// Draw a marker at each point.
    pub markers: bool,
}

/// A dashed horizontal reference line.
pub(super) struct HLine {
    pub y: f64,
    pub color: RGBColor,
    pub label: Option<String>,
}

/// A lone marker (out of memory, infeasible...).
pub(super) struct Mark {
    pub x: f64,
    pub y: f64,
    /// Pixels above `y` (a mark standing on the x axis rather than across it).
    pub lift: i32,
    pub color: RGBColor,
    pub marker: Marker,
    /// Drawn filled; else a ring, larger, around what it marks.
    pub filled: bool,
}

/// A shaded span of x, labelled at its top left.
pub(super) struct Band {
    pub from: f64,
    pub to: f64,
    pub color: RGBColor,
    pub label: String,
}

pub(super) struct Panel {
    pub title: String,
    pub series: Vec<Series>,
    pub hlines: Vec<HLine>,
    pub marks: Vec<Mark>,
    pub bands: Vec<Band>,
    /// The colour of the points' reference bars.
    pub reference_color: RGBColor,
}

impl Panel {
    pub(super) fn new(title: String, series: Vec<Series>) -> Panel {
        Panel { title, series, hlines: vec![], marks: vec![], bands: vec![], reference_color: INK }
    }
}

/// Panels under a heading (empty: none), e.g. those of one data source.
pub(super) struct Section {
    pub title: String,
    pub panels: Vec<Panel>,
}

/// A figure of line panels in sections, with its legend.
pub(super) struct Lines {
    pub sections: Vec<Section>,
    /// Columns of the grid.
    pub cols: usize,
    /// A panel's height in pixels.
    pub panel_h: u32,
    pub legend: Vec<(String, RGBColor, Key)>,
    pub axes: Axes,
}

impl Lines {
    /// The body's height: the sections and the legend.
    pub(super) fn height(&self) -> u32 {
        sections_height(&self.sections, self.cols, self.panel_h) + legend_height(&self.legend)
    }

    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        body: &DrawingArea<DB, Shift>,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let (area, strip) = with_legend(body, &self.legend);
        draw_sections(root, &area, &self.sections, &self.axes, self.cols, self.panel_h)?;
        legend(&strip, &self.legend)
    }
}

/// Pixels of a section's heading.
pub(super) const SECTION_TITLE: u32 = 36;

/// A section's heading across `area` at `y` (its title, a rule under it); the height it takes.
pub(super) fn section_heading<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, title: &str, y: i32) -> Result<i32>
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    area.draw_text(
        title,
        &bold(21.0).color(&INK).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        )),
        (16, y + SECTION_TITLE as i32 / 2 + 2),
    )
    .map_err(de)?;
    area.draw(&PathElement::new(
        vec![(16, y + SECTION_TITLE as i32 - 3), (w as i32 - 16, y + SECTION_TITLE as i32 - 3)],
        LIGHT.stroke_width(1),
    ))
    .map_err(de)?;
    Ok(SECTION_TITLE as i32)
}

/// The height `sections` take in a grid of `cols` columns with panels `panel_h` high.
pub(super) fn sections_height(sections: &[Section], cols: usize, panel_h: u32) -> u32 {
    sections
        .iter()
        .map(|s| {
            let heading = if s.title.is_empty() { 0 } else { SECTION_TITLE };
            heading + panel_h * s.panels.len().div_ceil(cols.max(1)).max(1) as u32
        })
        .sum()
}

/// The columns of a grid of at most `max` columns for `sections`: as many as the fullest
/// section needs.
pub(super) fn grid_columns(sections: &[Section], max: usize) -> usize {
    sections.iter().map(|s| s.panels.len()).max().unwrap_or(1).clamp(1, max.max(1))
}

/// Draws `sections` one under the other over `area`, each heading in bold, each section's
/// panels in rows of `cols` (a panel `panel_h` high); markers go on `root`. With
/// `axes.share_y`, panels of the same title in different sections share their y range.
pub(super) fn draw_sections<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    sections: &[Section],
    axes: &Axes,
    cols: usize,
    panel_h: u32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let cols = cols.max(1);
    let (w, _) = area.dim_in_pixel();
    let shared: Vec<(String, (f64, f64))> = if axes.share_y {
        let mut by: Vec<(String, (f64, f64))> = Vec::new();
        for p in sections.iter().flat_map(|s| &s.panels) {
            let r = y_range(p, axes);
            match by.iter_mut().find(|(t, _)| *t == p.title) {
                Some((_, (lo, hi))) => {
                    *lo = lo.min(r.0);
                    *hi = hi.max(r.1);
                }
                None => by.push((p.title.clone(), r)),
            }
        }
        by
    } else {
        Vec::new()
    };
    let mut y = 0_i32;
    for s in sections {
        if !s.title.is_empty() {
            y += section_heading(&area, &s.title, y)?;
        }
        let rows = s.panels.len().div_ceil(cols).max(1) as i32;
        let h = rows * panel_h as i32;
        let sub = area.clone().shrink((0, y), (w, h as u32));
        let ranges: Vec<Option<(f64, f64)>> =
            s.panels.iter().map(|p| shared.iter().find(|(t, _)| *t == p.title).map(|(_, r)| *r)).collect();
        draw_grid(root, &sub, &s.panels, &ranges, axes, cols)?;
        y += h;
    }
    Ok(())
}

pub(super) struct Axes {
    pub x_desc: String,
    pub y_desc: String,
    pub x_range: (f64, f64),
    /// Label only whole numbers on x (jobs).
    pub x_integer: bool,
    pub y_from_zero: bool,
    /// Fixed y range instead of one fitted to the data.
    pub y_fixed: Option<(f64, f64)>,
    /// Horizontal offset between series, so their bars do not overlap.
    pub jitter: f64,
    /// Panels of the same title in different sections share their y range.
    pub share_y: bool,
    /// No y tick labels above this value (room left for labels inside the panel).
    pub y_label_max: Option<f64>,
}

fn y_range(p: &Panel, axes: &Axes) -> (f64, f64) {
    if let Some(r) = axes.y_fixed {
        return r;
    }
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut see = |v: f64| {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    };
    for s in &p.series {
        for pt in &s.points {
            see(pt.y.min);
            see(pt.y.max);
        }
    }
    for h in &p.hlines {
        see(h.y);
    }
    for m in &p.marks {
        see(m.y);
    }
    for r in p.series.iter().flat_map(|s| s.points.iter().filter_map(|pt| pt.reference)) {
        see(r);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if axes.y_from_zero {
        lo = lo.min(0.0);
    }
    let span = (hi - lo).max(hi.abs() * 0.1).max(1e-9);
    let lo = if axes.y_from_zero && lo >= 0.0 { 0.0 } else { lo - span * 0.08 };
    (lo, hi + span * 0.12)
}

/// Draws `panels` in a grid of `cols` columns over `area`, each with its range from
/// `ranges` or fitted to it; markers go on `root`.
fn draw_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    panels: &[Panel],
    ranges: &[Option<(f64, f64)>],
    axes: &Axes,
    cols: usize,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols).max(1);
    let cells = area.split_evenly((rows, cols));
    for (i, (p, cell)) in panels.iter().zip(cells.iter()).enumerate() {
        let (y0, y1) = ranges.get(i).copied().flatten().unwrap_or_else(|| y_range(p, axes));
        let (x0, x1) = axes.x_range;
        let mut chart = ChartBuilder::on(cell)
            .caption(&p.title, font(20.0).color(&INK))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(76)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(de)?;
        let x_fmt = |x: &f64| {
            if axes.x_integer {
                if (x - x.round()).abs() < 1e-6 {
                    format!("{}", x.round() as i64)
                } else {
                    String::new()
                }
            } else {
                format_tick(*x)
            }
        };
        let y_fmt = |y: &f64| match axes.y_label_max {
            Some(m) if *y > m + 1e-9 => String::new(),
            _ => format_tick(*y),
        };
        chart
            .configure_mesh()
            .x_desc(axes.x_desc.as_str())
            .y_desc(axes.y_desc.as_str())
            .label_style(font(16.0).color(&INK))
            .axis_desc_style(font(18.0).color(&INK))
            .x_labels(if axes.x_integer { (x1 - x0).round() as usize + 1 } else { 8 })
            .y_labels(6)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .light_line_style(WHITE)
            .bold_line_style(LIGHT)
            .draw()
            .map_err(de)?;
        for b in &p.bands {
            let (from, to) = (b.from.max(x0), b.to.min(x1));
            chart.draw_series(std::iter::once(Rectangle::new([(from, y0), (to, y1)], b.color.filled()))).map_err(de)?;
            let (px, py) = chart.backend_coord(&(from, y1));
            let style = font(15.0).color(&GREY).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Top,
            ));
            root.draw_text(&b.label, &style, (px + 6, py + 4)).map_err(de)?;
        }
        for h in &p.hlines {
            let step = (x1 - x0) / 60.0;
            let dashes = (0..60).step_by(2).map(|i| {
                let a = x0 + i as f64 * step;
                PathElement::new(vec![(a, h.y), ((a + step).min(x1), h.y)], h.color.stroke_width(2))
            });
            chart.draw_series(dashes).map_err(de)?;
            if let Some(label) = &h.label {
                let (px, py) = chart.backend_coord(&(x1, h.y));
                let style = font(15.0).color(&GREY).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Right,
                    plotters::style::text_anchor::VPos::Bottom,
                ));
                root.draw_text(label, &style, (px - 6, py - 7)).map_err(de)?;
            }
        }
        let n = p.series.len() as f64;
        for (i, s) in p.series.iter().enumerate() {
            let off = (i as f64 - (n - 1.0) / 2.0) * axes.jitter;
            let mut solid: Vec<&Point> = s.points.iter().filter(|pt| !pt.hollow).collect();
            solid.sort_by(|a, b| a.x.total_cmp(&b.x));
            if s.line && solid.len() > 1 {
                chart
                    .draw_series(LineSeries::new(
                        solid.iter().map(|pt| (pt.x + off, pt.y.median)),
                        s.color.stroke_width(if s.markers { 3 } else { 2 }),
                    ))
                    .map_err(de)?;
            }
            let cap = axes.jitter.max((x1 - x0) * 0.01) * 0.4;
            for pt in s.points.iter().filter(|pt| pt.y.max > pt.y.min) {
                let x = pt.x + off;
                chart.draw_series(whisker(x, cap, pt.y.min, pt.y.max, s.color.stroke_width(2))).map_err(de)?;
            }
            for pt in s.points.iter() {
                if let Some(r) = pt.reference {
                    let c = chart.backend_coord(&(pt.x + off, r));
                    draw_marker(root, Marker::Dash, c, 6, p.reference_color, true)?;
                }
            }
            for pt in s.points.iter().filter(|_| s.markers) {
                let c = chart.backend_coord(&(pt.x + off, pt.y.median));
                draw_marker(root, s.marker, c, 6, s.color, !pt.hollow)?;
            }
        }
        for m in &p.marks {
            let c = chart.backend_coord(&(m.x, m.y));
            let size = if m.filled { 8 } else { 11 };
            draw_marker(root, m.marker, (c.0, c.1 - m.lift), size, m.color, m.filled)?;
        }
    }
    Ok(())
}

/// Axis numbers: no more digits than needed.
pub(super) fn format_tick(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A vertical min–max bar with caps, in chart coordinates.
pub(super) fn whisker(x: f64, cap: f64, lo: f64, hi: f64, style: ShapeStyle) -> Vec<PathElement<(f64, f64)>> {
    vec![
        PathElement::new(vec![(x, lo), (x, hi)], style),
        PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
        PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
    ]
}
