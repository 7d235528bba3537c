//! The comparison of two campaigns as one picture: each workload measured in both at (base
//! ratio, new ratio), the line y = x, the declared tolerance floors as bands around it, and
//! each campaign's 95 % interval of the ratio as an error bar through its point (the base's
//! horizontal, the new's vertical).

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::lines::format_tick;
use super::style::{
    bold, draw_marker, ensure_fonts, font, Marker, AGREES, ALERT, BAND_FILE, BAND_SYNTHETIC, BAR_AGREES, BAR_DIFFERS,
    BAR_HOST_DIFFERS as BAR_HOST, GREY, HOST_DIFFERS as HOST, INK, LIGHT,
};
use super::{de, legend, Key, WIDTH};
use crate::compare::{floor, Comparison, WorkloadRow, WorkloadVerdict, FILE_DATA_FLOOR, SYNTHETIC_FLOOR};

const HEIGHT: u32 = 1000;

/// A workload drawn: its row, its ratios (base, new) and each campaign's 95 % interval of
/// its ratio (the point itself where it has none).
struct Point<'a> {
    w: &'a WorkloadRow,
    x: f64,
    y: f64,
    xs: [f64; 2],
    ys: [f64; 2],
}

/// The workloads drawn: those compared on their ratio, in id order.
fn points(c: &Comparison) -> Vec<Point<'_>> {
    let finite = |i: Option<[f64; 2]>, v: f64| i.filter(|[lo, hi]| lo.is_finite() && hi.is_finite()).unwrap_or([v, v]);
    c.workloads
        .iter()
        .filter_map(|w| w.ratio.as_ref().map(|r| (w, r.base, r.new)))
        .filter(|(_, x, y)| x.is_finite() && y.is_finite())
        .map(|(w, x, y)| Point { w, x, y, xs: finite(w.base_interval, x), ys: finite(w.new_interval, y) })
        .collect()
}

/// Whether some workload drawn has file data (`file`) or synthetic data.
fn has_source(c: &Comparison, file: bool) -> bool {
    points(c).iter().any(|p| (p.w.data != "synthetic") == file)
}

/// The colours of a verdict: its point and its error bars.
fn colors(v: WorkloadVerdict) -> (RGBColor, RGBColor) {
    match v {
        WorkloadVerdict::Agrees => (AGREES, BAR_AGREES),
        WorkloadVerdict::HostDiffers => (HOST, BAR_HOST),
        _ => (ALERT, BAR_DIFFERS),
    }
}

/// The figure of a comparison as SVG: new ratio against base ratio per workload, the line
/// y = x, the tolerance floors as bands around it, each campaign's 95 % interval as an
/// error bar through its point, the differing ones (and those whose host differs) labelled.
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
    let body = super::header(root, "New against base: STP per workload", &side_line(c), simulated)?;
    let keys = legend_keys(c, has_source(c, false), has_source(c, true));
    let (plot, strip) = super::with_legend(&body, &keys);
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
    let hi = pts.iter().map(|p| p.xs[1].max(p.ys[1]).max(p.x).max(p.y)).fold(0.0, f64::max).max(1e-9) * 1.05;
    let lo = pts.iter().map(|p| p.xs[0].min(p.ys[0]).min(p.x).min(p.y)).fold(f64::INFINITY, f64::min) * 0.95;
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
        .x_desc(format!("base {}: STP (×)", c.base.label))
        .y_desc(format!("new {}: STP (×)", c.new.label))
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
    let has = |file: bool| has_source(c, file);
    for (file, f, color) in [(true, FILE_DATA_FLOOR, BAND_FILE), (false, SYNTHETIC_FLOOR, BAND_SYNTHETIC)] {
        if has(file) {
            // The upper edge leaves the plot at y = hi: the band is cut there, not dropped.
            let band =
                vec![(lo, lo * (1.0 + f)), (hi / (1.0 + f), hi), (hi, hi), (hi, hi * (1.0 - f)), (lo, lo * (1.0 - f))];
            chart.draw_series(std::iter::once(Polygon::new(band, color.filled()))).map_err(de)?;
        }
    }
    chart.draw_series(LineSeries::new([(lo, lo), (hi, hi)], INK.stroke_width(2))).map_err(de)?;

    // Each workload: both campaigns' 95 % intervals as error bars with short caps (the
    // base's horizontal, the new's vertical), then its point.
    for p in &pts {
        let (_, bar) = colors(p.w.verdict);
        let style = bar.stroke_width(2);
        let (cx, cy) = chart.backend_coord(&(p.x, p.y));
        let (x0, _) = chart.backend_coord(&(p.xs[0], p.y));
        let (x1, _) = chart.backend_coord(&(p.xs[1], p.y));
        let (_, y0) = chart.backend_coord(&(p.x, p.ys[0]));
        let (_, y1) = chart.backend_coord(&(p.x, p.ys[1]));
        for seg in [
            [(x0, cy), (x1, cy)],
            [(x0, cy - 4), (x0, cy + 4)],
            [(x1, cy - 4), (x1, cy + 4)],
            [(cx, y0), (cx, y1)],
            [(cx - 4, y0), (cx + 4, y0)],
            [(cx - 4, y1), (cx + 4, y1)],
        ] {
            root.draw(&PathElement::new(seg.to_vec(), style)).map_err(de)?;
        }
    }
    let mut labels = Vec::new();
    for p in &pts {
        let (color, _) = colors(p.w.verdict);
        let agrees = p.w.verdict == WorkloadVerdict::Agrees;
        let marker = if p.w.data == "synthetic" { Marker::Circle } else { Marker::Square };
        let at = chart.backend_coord(&(p.x, p.y));
        draw_marker(root, marker, at, 6, color, agrees)?;
        // Labels left of the base's error bar, not across it.
        let left = chart.backend_coord(&(p.xs[0], p.y)).0.min(at.0 - 8);
        let difference = (p.y / p.x - 1.0) * 100.0;
        match p.w.verdict {
            WorkloadVerdict::Differs => labels.push((at, left, format!("{} ({difference:+.1} %)", p.w.id), ALERT)),
            WorkloadVerdict::HostDiffers => {
                labels.push((at, left, format!("{} ({difference:+.1} %, host)", p.w.id), HOST))
            }
            _ => {}
        }
    }
    draw_labels(root, labels)?;
    legend(&strip, &keys)?;
    Ok(())
}

/// The differing workloads named above their points (`at`), right-aligned left of `left`,
/// kept 18 px apart, each with a leader line.
fn draw_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    mut labels: Vec<((i32, i32), i32, String, RGBColor)>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    labels.sort_by_key(|((_, y), ..)| *y);
    let mut last = i32::MIN;
    for ((x, y), left, text, color) in labels {
        let ty = (y - 12).max(last + 18);
        last = ty;
        let tx = left - 8;
        root.draw(&PathElement::new(vec![(x - 4, y - 4), (tx + 2, ty)], color.stroke_width(1))).map_err(de)?;
        root.draw_text(&text, &font(14.0).color(&color).pos(Pos::new(HPos::Right, VPos::Center)), (tx, ty))
            .map_err(de)?;
    }

    Ok(())
}

/// The legend: the verdicts with their counts, y = x, the floors of the data sources drawn
/// (`synthetic`, `file`), the error bars.
fn legend_keys(c: &Comparison, synthetic: bool, file: bool) -> Vec<(String, RGBColor, Key)> {
    // Every verdict with its count, none included: a count of naught is a finding.
    let mut keys = vec![
        (format!("agrees ({})", c.count(WorkloadVerdict::Agrees)), AGREES, Key::Mark(Marker::Circle, true)),
        (
            format!("host differs ({}), labelled", c.count(WorkloadVerdict::HostDiffers)),
            HOST,
            Key::Mark(Marker::Circle, false),
        ),
        (format!("differs ({}), labelled", c.count(WorkloadVerdict::Differs)), ALERT, Key::Mark(Marker::Circle, false)),
        ("y = x".to_string(), INK, Key::Line),
    ];
    if synthetic {
        keys.push((format!("synthetic data: ● ±{:.0} %", floor("synthetic") * 100.0), BAND_SYNTHETIC, Key::Bar));
    }
    if file {
        keys.push((format!("file data: ■ ±{:.0} %", floor("generated") * 100.0), BAND_FILE, Key::Bar));
    }
    keys.push(("bars: 95 % intervals".to_string(), BAR_AGREES, Key::Line));
    keys
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
