//! The comparison of two campaigns as one picture: each workload measured in both at (base
//! ratio, new ratio), the line y = x, the declared tolerance floors as bands around it, and
//! each workload's own tolerance as a bar through its point.

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::lines::format_tick;
use super::style::{bold, draw_marker, ensure_fonts, font, Marker, ALERT, GREY, INK, LIGHT, PALETTE};
use super::{de, legend, Key, WIDTH};
use crate::compare::{floor, Comparison, WorkloadRow, WorkloadVerdict, FILE_DATA_FLOOR, SYNTHETIC_FLOOR};

const HEIGHT: u32 = 1000;
const AGREES: RGBColor = PALETTE[0];
const BAND_FILE: RGBColor = RGBColor(238, 238, 238);
const BAND_SYNTHETIC: RGBColor = RGBColor(214, 214, 214);
/// The bars: the verdict's colour, lighter.
const BAR_AGREES: RGBColor = RGBColor(115, 177, 212);
const BAR_DIFFERS: RGBColor = RGBColor(225, 115, 115);

/// The workloads drawn: those compared on their ratio, in id order.
fn points(c: &Comparison) -> Vec<(&WorkloadRow, f64, f64, f64)> {
    c.workloads
        .iter()
        .filter_map(|w| w.ratio.as_ref().map(|r| (w, r.base, r.new, r.tolerance)))
        .filter(|(_, x, y, t)| x.is_finite() && y.is_finite() && t.is_finite())
        .collect()
}

/// The figure of a comparison as SVG: new ratio against base ratio per workload, the line
/// y = x, the tolerance floors as bands around it, each workload's tolerance as a bar
/// through its point, the differing ones labelled.
pub fn svg(c: &Comparison) -> Result<String> {
    ensure_fonts()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        paint(&root, c)?;
        root.present().map_err(|e| anyhow!("comparison figure: {e}"))?;
    }
    Ok(out)
}

/// The same figure as PNG.
pub fn png(c: &Comparison) -> Result<Vec<u8>> {
    ensure_fonts()?;
    let mut buf = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        paint(&root, c)?;
        root.present().map_err(|e| anyhow!("comparison figure: {e}"))?;
    }
    super::encode_png(WIDTH, HEIGHT, &buf)
}

fn paint<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &Comparison) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let simulated = c.base.simulated || c.new.simulated;
    let body = super::header(root, "New against base: aggregate ratio per workload", &side_line(c), simulated)?;
    let (plot, strip) = super::with_legend(&body);
    let pts = points(c);
    if pts.is_empty() {
        let (w, h) = plot.dim_in_pixel();
        let at = Pos::new(HPos::Center, VPos::Center);
        plot.draw_text("No workload measured in both", &bold(28.0).color(&GREY).pos(at), (w as i32 / 2, h as i32 / 2))
            .map_err(de)?;
        return Ok(());
    }

    // One range for both axes, so that y = x is the diagonal; from 0 unless the points lie
    // well away from it.
    let hi = pts.iter().map(|(_, x, y, t)| x.max(*y) * (1.0 + t)).fold(0.0, f64::max).max(1e-9) * 1.05;
    let lo = pts.iter().map(|(_, x, y, t)| x.min(*y) * (1.0 - t)).fold(f64::INFINITY, f64::min) * 0.95;
    let lo = if lo < 0.4 * hi { 0.0 } else { lo };
    let mut chart = ChartBuilder::on(&plot)
        .margin(16)
        .margin_right(40)
        .x_label_area_size(56)
        .y_label_area_size(80)
        .build_cartesian_2d(lo..hi, lo..hi)
        .map_err(de)?;
    let tick = |v: &f64| format_tick(*v);
    chart
        .configure_mesh()
        .x_desc(format!("base {}: aggregate ratio, STP (×)", c.base.label))
        .y_desc(format!("new {}: aggregate ratio, STP (×)", c.new.label))
        .label_style(font(16.0).color(&INK))
        .axis_desc_style(font(18.0).color(&INK))
        .x_labels(8)
        .y_labels(8)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .light_line_style(WHITE)
        .bold_line_style(LIGHT)
        .draw()
        .map_err(de)?;

    // The floors as bands around y = x: file data (wider) under synthetic data.
    let has = |file: bool| pts.iter().any(|(w, ..)| (w.data != "synthetic") == file);
    for (file, f, color) in [(true, FILE_DATA_FLOOR, BAND_FILE), (false, SYNTHETIC_FLOOR, BAND_SYNTHETIC)] {
        if has(file) {
            let band = vec![(lo, lo * (1.0 + f)), (hi, hi * (1.0 + f)), (hi, hi * (1.0 - f)), (lo, lo * (1.0 - f))];
            chart.draw_series(std::iter::once(Polygon::new(band, color.filled()))).map_err(de)?;
        }
    }
    chart.draw_series(LineSeries::new([(lo, lo), (hi, hi)], INK.stroke_width(2))).map_err(de)?;

    // Each workload: its tolerance as a bar (where the new ratio may lie), then its point.
    for (w, x, _, t) in &pts {
        let color = if w.verdict == WorkloadVerdict::Agrees { BAR_AGREES } else { BAR_DIFFERS };
        let bar = vec![(*x, x * (1.0 - t)), (*x, x * (1.0 + t))];
        chart.draw_series(std::iter::once(PathElement::new(bar, color.stroke_width(3)))).map_err(de)?;
    }
    let mut labels = Vec::new();
    for (w, x, y, _) in &pts {
        let agrees = w.verdict == WorkloadVerdict::Agrees;
        let color = if agrees { AGREES } else { ALERT };
        let marker = if w.data == "synthetic" { Marker::Circle } else { Marker::Square };
        let at = chart.backend_coord(&(*x, *y));
        draw_marker(root, marker, at, 6, color, agrees)?;
        if !agrees {
            labels.push((at, format!("{} ({:+.1} %)", w.id, (y / x - 1.0) * 100.0)));
        }
    }
    // The differing ones named above their points, left of them, kept 18 px apart.
    labels.sort_by_key(|((_, y), _)| *y);
    let mut last = i32::MIN;
    for ((x, y), text) in labels {
        let ty = (y - 12).max(last + 18);
        last = ty;
        if ty != y - 12 {
            root.draw(&PathElement::new(vec![(x - 4, y - 4), (x - 14, ty)], ALERT.stroke_width(1))).map_err(de)?;
        }
        root.draw_text(&text, &font(14.0).color(&ALERT).pos(Pos::new(HPos::Right, VPos::Center)), (x - 16, ty))
            .map_err(de)?;
    }

    let mut keys = vec![
        (format!("agrees ({})", c.count(WorkloadVerdict::Agrees)), AGREES, Key::Mark(Marker::Circle, true)),
        (format!("differs ({}), labelled", c.count(WorkloadVerdict::Differs)), ALERT, Key::Mark(Marker::Circle, false)),
        ("y = x".to_string(), INK, Key::Line),
    ];
    if has(false) {
        keys.push((format!("synthetic data: ● ±{:.0} %", floor("synthetic") * 100.0), BAND_SYNTHETIC, Key::Bar));
    }
    if has(true) {
        keys.push((format!("file data: ■ ±{:.0} %", floor("generated") * 100.0), BAND_FILE, Key::Bar));
    }
    keys.push(("bar: its tolerance".to_string(), BAR_AGREES, Key::Line));
    legend(&strip, &keys)?;
    Ok(())
}

/// `base: h200-quick on NVIDIA H200 · new: …`.
fn side_line(c: &Comparison) -> String {
    let side = |s: &crate::compare::SideInfo| {
        if s.gpu.is_empty() {
            s.campaign.clone()
        } else {
            format!("{} on {}", s.campaign, s.gpu)
        }
    };
    format!("base: {} · new: {}", side(&c.base), side(&c.new))
}
