//! Fonts, colours and markers shared by every figure.

use colloc_spec::Mode;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::sync::Once;

/// DejaVu Sans, bundled so that text renders the same on every machine.
static FONT: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");

/// The family name figures use. SVG viewers read it as a CSS font list.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

static REGISTER: Once = Once::new();

/// Registers the bundled font with plotters (once per process).
pub(crate) fn ensure_fonts() -> anyhow::Result<()> {
    let mut ok = true;
    REGISTER.call_once(|| {
        ok = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok()
            && plotters::style::register_font(FAMILY, FontStyle::Bold, FONT).is_ok();
    });
    anyhow::ensure!(ok, "the bundled font assets/fonts/DejaVuSans.ttf cannot be loaded");
    Ok(())
}

pub(crate) fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), size, FontStyle::Normal)
}

pub(crate) fn bold(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), size, FontStyle::Bold)
}

pub(crate) const INK: RGBColor = RGBColor(33, 33, 33);
pub(crate) const GREY: RGBColor = RGBColor(130, 130, 130);
pub(crate) const LIGHT: RGBColor = RGBColor(225, 225, 225);
pub(crate) const ALERT: RGBColor = RGBColor(200, 0, 0);

/// Okabe–Ito colours, safe for colour-blind readers.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

pub(crate) fn mode_color(m: Mode) -> RGBColor {
    match m {
        Mode::Exclusive => RGBColor(0, 0, 0),
        Mode::Naive => PALETTE[1],
        Mode::Mps => PALETTE[0],
        Mode::MpsLimited => PALETTE[2],
        Mode::Mig => PALETTE[3],
    }
}

/// Marker shapes, so series differ in more than colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Triangle,
    Square,
    Diamond,
    Cross,
}

pub(crate) fn mode_marker(m: Mode) -> Marker {
    match m {
        Mode::Exclusive => Marker::Diamond,
        Mode::Naive => Marker::Triangle,
        Mode::Mps => Marker::Circle,
        Mode::MpsLimited => Marker::Square,
        Mode::Mig => Marker::Diamond,
    }
}

pub(crate) const MARKERS: [Marker; 4] = [Marker::Circle, Marker::Triangle, Marker::Square, Marker::Diamond];

/// Draws a marker centred at a pixel position of `area`.
pub(crate) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    marker: Marker,
    (x, y): (i32, i32),
    size: i32,
    color: RGBColor,
    filled: bool,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let style = if filled { color.filled() } else { color.stroke_width(2) };
    let r = size;
    let polygon = |points: Vec<(i32, i32)>| {
        if filled {
            area.draw(&Polygon::new(points, style))
        } else {
            let mut closed = points.clone();
            closed.push(points[0]);
            area.draw(&PathElement::new(closed, style))
        }
    };
    let res = match marker {
        Marker::Circle => area.draw(&Circle::new((x, y), r, style)),
        Marker::Square => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], style)),
        Marker::Triangle => polygon(vec![(x, y - r - 1), (x - r - 1, y + r), (x + r + 1, y + r)]),
        Marker::Diamond => polygon(vec![(x, y - r - 2), (x + r + 1, y), (x, y + r + 2), (x - r - 1, y)]),
        Marker::Cross => {
            let s = color.stroke_width(3);
            area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], s))?;
            area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], s))
        }
    };
    res.map_err(|e| anyhow::anyhow!("drawing: {e}"))
}
