//! Fonts, colours and markers shared by every figure: the one place that gives a colour
//! its meaning. Each palette has one meaning in every figure, and none reuses another's
//! colours:
//!
//! - modes ([`mode_color`], [`mode_marker`]): alone, naive, MPS, MPS-limited (the MIG
//!   stand-in) and MIG, the same colour and marker wherever a mode is drawn;
//! - comparisons of two alike things ([`source_color`], [`protocol_color`], the campaign
//!   verdicts): greys, dark for the first and light for the second;
//! - other series, such as the timeline's metrics ([`METRIC_COLORS`]): colours no mode
//!   uses;
//! - status marks: [`ALERT`] (out of memory, infeasible, implausible, differs) and
//!   [`GREY`] (not measured);
//! - values on a scale (the heatmap): [`viridis`].

use colloc_analysis::Results;
use colloc_trace::Mode;
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

/// Text, axes and reference lines.
pub(crate) const INK: RGBColor = RGBColor(33, 33, 33);
/// Secondary text; not measured (skipped or failed).
pub(crate) const GREY: RGBColor = RGBColor(130, 130, 130);
/// Grid lines and frames.
pub(crate) const LIGHT: RGBColor = RGBColor(225, 225, 225);
/// Out of memory, infeasible, implausible, differs.
pub(crate) const ALERT: RGBColor = RGBColor(200, 0, 0);
/// The background of a heatmap cell not measured, and its hatching.
pub(crate) const NOT_MEASURED_FILL: RGBColor = RGBColor(246, 246, 246);
pub(crate) const NOT_MEASURED_HATCH: RGBColor = RGBColor(170, 170, 170);
/// The background of a heatmap cell whose layout cannot be made (its mark is [`ALERT`]).
pub(crate) const INFEASIBLE_FILL: RGBColor = RGBColor(252, 226, 226);
/// The band behind a heading among rows of bars.
pub(crate) const HEADING_FILL: RGBColor = RGBColor(238, 238, 238);
/// A shaded span of time (the measurement window).
pub(crate) const SHADE: RGBColor = RGBColor(236, 240, 246);

/// The modes, each with its one colour (Okabe–Ito, safe for colour-blind readers).
const ALONE: RGBColor = RGBColor(0, 0, 0);
const NAIVE: RGBColor = RGBColor(230, 159, 0);
const MPS: RGBColor = RGBColor(0, 114, 178);
const MPS_LIMITED: RGBColor = RGBColor(0, 158, 115);
const MIG: RGBColor = RGBColor(213, 94, 0);

/// The colour of a mode in every figure.
pub(crate) fn mode_color(m: Mode) -> RGBColor {
    match m {
        Mode::Exclusive => ALONE,
        Mode::Naive => NAIVE,
        Mode::Mps => MPS,
        Mode::MpsLimited => MPS_LIMITED,
        Mode::Mig => MIG,
    }
}

/// Series that are neither modes nor compared things (the timeline's metrics, in order):
/// no mode's colour, nor a grey.
pub(crate) const METRIC_COLORS: [RGBColor; 5] = [
    RGBColor(84, 39, 143),
    RGBColor(204, 121, 167),
    RGBColor(128, 128, 0),
    RGBColor(140, 81, 10),
    RGBColor(84, 39, 143),
];

/// Two or three alike things compared (data sources, protocols, campaigns): greys, the
/// first dark, the second light.
pub(crate) const COMPARED: [RGBColor; 3] = [RGBColor(64, 64, 64), RGBColor(176, 176, 176), RGBColor(120, 120, 120)];

/// A data source's colour where sources are compared bar by bar: synthetic data dark,
/// generated image files light.
pub(crate) fn source_color(data: &str) -> RGBColor {
    match data {
        "synthetic" => COMPARED[0],
        "generated" => COMPARED[1],
        _ => COMPARED[2],
    }
}

/// A protocol's colour where protocols are compared: the window dark, whole epochs light.
pub(crate) fn protocol_color(window: bool) -> RGBColor {
    if window {
        COMPARED[0]
    } else {
        COMPARED[1]
    }
}

/// Two campaigns compared: a workload that agrees (dark), one whose host differs (mid
/// grey), one that differs ([`ALERT`]); with the lighter colours of their error bars.
pub(crate) const AGREES: RGBColor = COMPARED[0];
pub(crate) const HOST_DIFFERS: RGBColor = COMPARED[2];
pub(crate) const BAR_AGREES: RGBColor = RGBColor(185, 185, 185);
pub(crate) const BAR_HOST_DIFFERS: RGBColor = RGBColor(205, 205, 205);
pub(crate) const BAR_DIFFERS: RGBColor = RGBColor(232, 140, 140);
/// The tolerance bands of the comparison: file data (wider) and synthetic data.
pub(crate) const BAND_FILE: RGBColor = RGBColor(240, 240, 240);
pub(crate) const BAND_SYNTHETIC: RGBColor = RGBColor(220, 220, 220);

/// A mode as legends and panel titles name it: `MPS-limited (MIG stand-in)` where the
/// campaign's MPS-limited jobs stand in for MIG slices.
pub(crate) fn mode_legend(m: Mode, r: &Results) -> String {
    match m {
        Mode::MpsLimited if stands_in(r) => "MPS-limited (MIG stand-in)".to_string(),
        _ => crate::order::mode_name(m).to_string(),
    }
}

/// `MPS-limited 1g×7 (MIG stand-in)`: the mode, its layout, and what it stands in for.
pub(crate) fn mode_layout_legend(m: Mode, layout: &str, r: &Results) -> String {
    let base = crate::order::mode_layout(m, layout);
    match m {
        Mode::MpsLimited if stands_in(r) => format!("{base} (MIG stand-in)"),
        _ => base,
    }
}

/// Whether the campaign's MPS-limited jobs stand in for MIG slices.
pub(crate) fn stands_in(r: &Results) -> bool {
    r.workloads.iter().any(|w| w.mode == Mode::MpsLimited && w.jobs.iter().any(|j| j.stands_in_for.is_some()))
}

/// Viridis (the matplotlib colour map: perceptually uniform, readable in grey and by
/// colour-blind readers) at `t` in 0..=1, from its published polynomial fit.
pub(crate) fn viridis(t: f64) -> RGBColor {
    const C: [[f64; 3]; 7] = [
        [0.277_727_327_223_417_7, 0.005_407_344_544_966_578, 0.334_099_805_335_306_1],
        [0.105_093_043_108_577_4, 1.404_613_529_898_575, 1.384_590_162_594_685],
        [-0.330_861_828_725_556_3, 0.214_847_559_468_213, 0.095_095_163_028_236_59],
        [-4.634_230_498_983_486, -5.799_100_973_351_585, -19.332_440_956_279_87],
        [6.228_269_936_347_081, 14.179_933_366_805_09, 56.690_552_600_681_05],
        [4.776_384_997_670_288, -13.745_145_377_746_01, -65.353_032_633_372_34],
        [-5.435_455_855_934_631, 4.645_852_612_178_535, 26.312_435_249_583_2],
    ];
    let t = t.clamp(0.0, 1.0);
    let channel = |k: usize| {
        let v = C.iter().rev().fold(0.0, |acc, c| acc * t + c[k]);
        (v.clamp(0.0, 1.0) * 255.0).round() as u8
    };
    RGBColor(channel(0), channel(1), channel(2))
}

/// Black or white, whichever contrasts more with `bg` (WCAG relative luminance).
pub(crate) fn text_on(bg: RGBColor) -> RGBColor {
    let lin = |c: u8| {
        let c = c as f64 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let l = 0.2126 * lin(bg.0) + 0.7152 * lin(bg.1) + 0.0722 * lin(bg.2);
    if (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) {
        BLACK
    } else {
        WHITE
    }
}

/// Marker shapes, so series differ in more than colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Triangle,
    TriangleDown,
    Square,
    Diamond,
    Cross,
    /// A short horizontal bar (a reference value beside a point).
    Dash,
}

/// The marker of a mode in every figure.
pub(crate) fn mode_marker(m: Mode) -> Marker {
    match m {
        Mode::Exclusive => Marker::Diamond,
        Mode::Naive => Marker::Triangle,
        Mode::Mps => Marker::Circle,
        Mode::MpsLimited => Marker::Square,
        Mode::Mig => Marker::TriangleDown,
    }
}

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
        Marker::TriangleDown => polygon(vec![(x, y + r + 1), (x - r - 1, y - r), (x + r + 1, y - r)]),
        Marker::Diamond => polygon(vec![(x, y - r - 2), (x + r + 1, y), (x, y + r + 2), (x - r - 1, y)]),
        Marker::Cross => {
            let s = color.stroke_width(3);
            area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], s))?;
            area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], s))
        }
        Marker::Dash => area.draw(&Rectangle::new([(x - r - 2, y - 1), (x + r + 2, y + 2)], color.filled())),
    };
    res.map_err(|e| anyhow::anyhow!("drawing: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::MODES;

    fn distance(a: RGBColor, b: RGBColor) -> f64 {
        let d = |x: u8, y: u8| (x as f64 - y as f64).powi(2);
        (d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)).sqrt()
    }

    #[test]
    fn every_mode_has_its_own_colour_and_marker() {
        for (i, a) in MODES.iter().enumerate() {
            for b in &MODES[i + 1..] {
                // Okabe–Ito's orange and vermillion are the closest pair (naive, MIG).
                assert!(distance(mode_color(*a), mode_color(*b)) > 60.0, "{a:?} and {b:?} look alike");
                assert_ne!(mode_marker(*a), mode_marker(*b), "{a:?} and {b:?} share a marker");
            }
        }
    }

    #[test]
    fn no_other_palette_reuses_a_mode_colour() {
        let others = METRIC_COLORS.iter().chain(&COMPARED).chain(&[
            AGREES,
            HOST_DIFFERS,
            BAR_AGREES,
            BAR_HOST_DIFFERS,
            BAR_DIFFERS,
            ALERT,
            GREY,
            SHADE,
        ]);
        for c in others {
            for m in MODES {
                assert!(distance(*c, mode_color(m)) > 60.0, "{c:?} is too close to {m:?}'s colour");
            }
        }
        // The metrics are no greys: a grey means a compared thing.
        for c in &METRIC_COLORS {
            for g in &COMPARED {
                assert!(distance(*c, *g) > 60.0, "{c:?} is too close to the grey {g:?}");
            }
        }
        assert!(distance(source_color("synthetic"), source_color("generated")) > 80.0);
        assert!(distance(protocol_color(true), protocol_color(false)) > 80.0);
    }

    #[test]
    fn viridis_runs_from_purple_to_yellow_and_text_contrasts() {
        assert_eq!(viridis(0.0), RGBColor(71, 1, 85));
        assert_eq!(viridis(1.0), RGBColor(252, 231, 33));
        // Luminance rises monotonically, so the scale reads in grey too.
        let luma = |c: RGBColor| 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
        let steps: Vec<f64> = (0..=20).map(|i| luma(viridis(i as f64 / 20.0))).collect();
        assert!(steps.windows(2).all(|w| w[1] > w[0]), "{steps:?}");
        assert_eq!(text_on(viridis(0.05)), WHITE);
        assert_eq!(text_on(viridis(0.95)), BLACK);
    }
}
