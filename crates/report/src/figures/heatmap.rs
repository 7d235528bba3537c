//! The mixes' interference matrix as a heatmap: one panel per mode, a row per job class, a
//! column per mix in declared order, each cell the class's normalised throughput in the mix
//! (the analysis' interference cells), coloured on a computed viridis scale.

use anyhow::Result;
use colloc_analysis::{InterferenceCell, Results};
use colloc_spec::Mode;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::de;
use super::lines::format_tick;
use super::style::{bold, font, GREY, INK, LIGHT};
use crate::legend::{mix_classes, mix_experiments};
use crate::order::{mode_name, MODES};

/// Pixels for the classes' names, left of the cells.
const LABELS: i32 = 190;
/// Margins left and right of the figure.
const SIDE: i32 = 20;
/// The widest a cell gets when there are few mixes.
const MAX_CELL: i32 = 130;
const CELL_H: i32 = 46;
/// A panel's title line and its row of mix labels.
const TITLE_H: i32 = 32;
const COLUMNS_H: i32 = 26;
/// Space below each panel.
const GAP: i32 = 14;
/// The colour scale and keys under the panels.
const SCALE_H: i32 = 96;

/// A job class, as a row: its letter, model and batch size.
type Class = (String, String, u32);
/// A mix, as a column: experiment, declared position, label.
type Mix = (u32, u32, String);

/// What the figure draws, gathered from the results' interference cells of the main data.
struct Matrix<'a> {
    classes: Vec<Class>,
    mixes: Vec<Mix>,
    /// The modes with at least one value, in display order, with their cells.
    panels: Vec<(Mode, Vec<&'a InterferenceCell>)>,
    /// Modes whose mixes have cells but no value at all (left out).
    unmeasured: Vec<Mode>,
    /// (experiment, mix, class) for each class of each mix, whatever the mode.
    members: Vec<(u32, String, String)>,
}

fn matrix(r: &Results) -> Matrix<'_> {
    let cells: Vec<&InterferenceCell> = r.interference.iter().filter(|c| c.data == r.primary_data).collect();
    // Rows in the order the captions name the classes (smallest MIG slice first).
    let order = mix_classes(r);
    let rank = |letter: &str| order.iter().position(|c| c.letter == letter).unwrap_or(order.len());
    let mut classes: Vec<(usize, Class)> =
        cells.iter().map(|c| (rank(&c.class), (c.class.clone(), c.model.clone(), c.batch_size))).collect();
    classes.sort();
    classes.dedup();
    let mut mixes: Vec<Mix> = cells.iter().map(|c| (c.experiment, c.position, c.mix.clone())).collect();
    mixes.sort();
    mixes.dedup();
    let (mut panels, mut unmeasured) = (Vec::new(), Vec::new());
    for m in MODES.iter().copied().filter(|m| *m != Mode::Exclusive) {
        let of: Vec<&InterferenceCell> = cells.iter().copied().filter(|c| c.mode == m).collect();
        if of.is_empty() {
            continue;
        }
        if of.iter().any(|c| c.normalised_throughput.is_some()) {
            panels.push((m, of));
        } else {
            unmeasured.push(m);
        }
    }
    let mut members: Vec<(u32, String, String)> =
        cells.iter().map(|c| (c.experiment, c.mix.clone(), c.class.clone())).collect();
    members.sort();
    members.dedup();
    Matrix { classes: classes.into_iter().map(|(_, c)| c).collect(), mixes, panels, unmeasured, members }
}

fn panel_height(rows: usize) -> i32 {
    TITLE_H + COLUMNS_H + CELL_H * rows as i32 + GAP
}

/// The figure's height below the header.
pub(super) fn height(r: &Results) -> u32 {
    let m = matrix(r);
    if m.panels.is_empty() {
        return 380;
    }
    (8 + m.panels.len() as i32 * panel_height(m.classes.len()) + SCALE_H) as u32
}

/// The modes left out because none of their cells has a value: `MIG`.
pub(super) fn unmeasured_modes(r: &Results) -> Vec<String> {
    matrix(r).unmeasured.into_iter().map(|m| mode_name(m).to_string()).collect()
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
        RGBColor(0, 0, 0)
    } else {
        WHITE
    }
}

/// The top of the colour scale: 1 (as fast as alone), or the largest value rounded up to
/// a quarter when some class ran faster than alone.
fn scale_top(m: &Matrix) -> f64 {
    let hi = m
        .panels
        .iter()
        .flat_map(|(_, cs)| cs.iter().filter_map(|c| c.normalised_throughput.map(|s| s.median)))
        .fold(1.0_f64, f64::max);
    if hi > 1.0 {
        (hi * 4.0).ceil() / 4.0
    } else {
        1.0
    }
}

/// Diagonal hatching over a rectangle, for a cell without a value.
fn hatch<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, (x0, y0): (i32, i32), (w, h): (i32, i32)) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.draw(&Rectangle::new([(x0, y0), (x0 + w, y0 + h)], RGBColor(246, 246, 246).filled())).map_err(de)?;
    let style = RGBColor(170, 170, 170).stroke_width(1);
    let mut d = 6;
    while d < w + h {
        let a = (x0 + d.min(w), y0 + d - d.min(w));
        let b = (x0 + d - d.min(h), y0 + d.min(h));
        area.draw(&PathElement::new(vec![a, b], style)).map_err(de)?;
        d += 9;
    }
    Ok(())
}

/// The largest font size (from `size` down) at which `text` fits in `width` pixels.
fn fitting<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, size: f64, width: i32) -> f64 {
    let mut s = size;
    while s > 10.0 {
        match area.estimate_text_size(text, &font(s).color(&INK)) {
            Ok((w, _)) if w as i32 <= width => break,
            Ok(_) => s -= 1.0,
            Err(_) => break,
        }
    }
    s
}

pub(super) fn draw<DB: DrawingBackend>(
    _root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    r: &Results,
) -> Result<Option<String>>
where
    DB::ErrorType: 'static,
{
    let m = matrix(r);
    if m.panels.is_empty() {
        let what =
            mix_experiments(r).map_or_else(|| "the mixes".to_string(), |e| format!("{}'s mixes", e.to_lowercase()));
        return Ok(Some(if r.interference.iter().any(|c| c.data == r.primary_data) {
            format!("no job class of {what} was measured beside its co-runners with {} data", r.primary_data)
        } else {
            format!("{what} were not run with {} data", r.primary_data)
        }));
    }
    let (w, _) = body.dim_in_pixel();
    let n = m.mixes.len().max(1) as i32;
    let cell_w = ((w as i32 - 2 * SIDE - LABELS) / n).min(MAX_CELL);
    let x0 = (w as i32 - LABELS - cell_w * n) / 2 + LABELS;
    let top = scale_top(&m);
    let stand_in =
        r.workloads.iter().any(|w| w.mode == Mode::MpsLimited && w.jobs.iter().any(|j| j.stands_in_for.is_some()));
    let header_size =
        m.mixes.iter().map(|(_, _, label)| fitting(body, label, 15.0, cell_w - 6)).fold(15.0_f64, f64::min);
    let value_size = fitting(body, "0.00", 17.0, cell_w - 8);
    let mut y = 8;
    for (mode, cells) in &m.panels {
        let title = match mode {
            Mode::MpsLimited if stand_in => "MPS-limited (stand-in for MIG: each job capped to its MIG slice's share)",
            _ => mode_name(*mode),
        };
        body.draw_text(title, &bold(19.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)), (SIDE, y + TITLE_H / 2))
            .map_err(de)?;
        let cy = y + TITLE_H + COLUMNS_H / 2;
        for (i, (_, _, label)) in m.mixes.iter().enumerate() {
            let cx = x0 + cell_w * i as i32 + cell_w / 2;
            body.draw_text(label, &font(header_size).color(&INK).pos(Pos::new(HPos::Center, VPos::Center)), (cx, cy))
                .map_err(de)?;
        }
        let grid_y = y + TITLE_H + COLUMNS_H;
        for (ri, (letter, model, batch)) in m.classes.iter().enumerate() {
            let ry = grid_y + CELL_H * ri as i32;
            let mid = ry + CELL_H / 2;
            let tx = x0 - 12;
            body.draw_text(
                &format!("{model} b{batch}"),
                &font(15.0).color(&GREY).pos(Pos::new(HPos::Right, VPos::Center)),
                (tx, mid),
            )
            .map_err(de)?;
            let model_w = body
                .estimate_text_size(&format!("{model} b{batch}"), &font(15.0).color(&GREY))
                .map(|(w, _)| w as i32)
                .unwrap_or(0);
            body.draw_text(
                letter,
                &bold(18.0).color(&INK).pos(Pos::new(HPos::Right, VPos::Center)),
                (tx - model_w - 10, mid),
            )
            .map_err(de)?;
            for (ci, (e, _, mix)) in m.mixes.iter().enumerate() {
                let cx = x0 + cell_w * ci as i32;
                let (cell_x, cell_y, cw, ch) = (cx + 1, ry + 1, cell_w - 2, CELL_H - 2);
                let centre = (cx + cell_w / 2, mid);
                let c = cells.iter().find(|c| (c.experiment, &c.mix, &c.class) == (*e, mix, letter));
                // The class is in the mix when some mode has a cell for it.
                let in_mix = c.is_some() || m.members.contains(&(*e, mix.clone(), letter.clone()));
                match c.map(|c| c.normalised_throughput) {
                    // The class is not in the mix: blank.
                    None if !in_mix => {}
                    Some(Some(s)) => {
                        let bg = viridis(s.median / top);
                        body.draw(&Rectangle::new([(cell_x, cell_y), (cell_x + cw, cell_y + ch)], bg.filled()))
                            .map_err(de)?;
                        body.draw_text(
                            &format!("{:.2}", s.median),
                            &font(value_size).color(&text_on(bg)).pos(Pos::new(HPos::Center, VPos::Center)),
                            centre,
                        )
                        .map_err(de)?;
                    }
                    // The class is in the mix, but the mix was not run in this mode (its
                    // layout not planned for it) or has no value: hatched.
                    None | Some(None) => {
                        hatch(body, (cell_x, cell_y), (cw, ch))?;
                        body.draw_text(
                            "—",
                            &font(value_size).color(&INK).pos(Pos::new(HPos::Center, VPos::Center)),
                            centre,
                        )
                        .map_err(de)?;
                    }
                }
            }
        }
        // A frame around the grid, so that blank cells read as part of it.
        body.draw(&Rectangle::new(
            [(x0, grid_y), (x0 + cell_w * n, grid_y + CELL_H * m.classes.len() as i32)],
            LIGHT.stroke_width(1),
        ))
        .map_err(de)?;
        y += panel_height(m.classes.len());
    }
    scale(body, y, top, w as i32)?;
    Ok(None)
}

/// The colour scale with its ticks, and the keys for blank and hatched cells.
fn scale<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, y: i32, top: f64, width: i32) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let bar_w = 420;
    let bar_h = 20;
    let keys_w = 460;
    let x = (width - bar_w - 60 - keys_w) / 2;
    let label = "Throughput over the model alone (×)";
    area.draw_text(label, &font(17.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Top)), (x, y)).map_err(de)?;
    let by = y + 26;
    let step = 2;
    let mut px = 0;
    while px < bar_w {
        let c = viridis((px as f64 + step as f64 / 2.0) / bar_w as f64);
        area.draw(&Rectangle::new([(x + px, by), (x + (px + step).min(bar_w), by + bar_h)], c.filled())).map_err(de)?;
        px += step;
    }
    area.draw(&Rectangle::new([(x, by), (x + bar_w, by + bar_h)], GREY.stroke_width(1))).map_err(de)?;
    let tick = if top > 2.0 { 0.5 } else { 0.25 };
    let ticks = (top / tick).round() as i32;
    for k in 0..=ticks {
        let v = k as f64 * tick;
        let tx = x + (v / top * bar_w as f64).round() as i32;
        area.draw(&PathElement::new(vec![(tx, by + bar_h), (tx, by + bar_h + 5)], INK.stroke_width(1))).map_err(de)?;
        let text = if v == 1.0 { "1 = alone".to_string() } else { format_tick(v) };
        area.draw_text(&text, &font(15.0).color(&INK).pos(Pos::new(HPos::Center, VPos::Top)), (tx, by + bar_h + 7))
            .map_err(de)?;
    }
    // Keys: a hatched cell, a blank one.
    let kx = x + bar_w + 60;
    let (kw, kh) = (44, 30);
    let ky = by + bar_h / 2 - kh / 2;
    hatch(area, (kx, ky), (kw, kh))?;
    area.draw_text("—", &font(16.0).color(&INK).pos(Pos::new(HPos::Center, VPos::Center)), (kx + kw / 2, ky + kh / 2))
        .map_err(de)?;
    area.draw_text(
        "not measured",
        &font(16.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)),
        (kx + kw + 8, ky + kh / 2),
    )
    .map_err(de)?;
    let bx = kx + kw + 8 + 120;
    area.draw(&Rectangle::new([(bx, ky), (bx + kw, ky + kh)], LIGHT.stroke_width(1))).map_err(de)?;
    area.draw_text(
        "blank: class not in the mix",
        &font(16.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)),
        (bx + kw + 8, ky + kh / 2),
    )
    .map_err(de)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_runs_from_purple_to_yellow_and_text_contrasts() {
        assert_eq!(viridis(0.0), RGBColor(71, 1, 85));
        assert_eq!(viridis(1.0), RGBColor(252, 231, 33));
        // Luminance rises monotonically, so the scale reads in grey too.
        let luma = |c: RGBColor| 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
        let steps: Vec<f64> = (0..=20).map(|i| luma(viridis(i as f64 / 20.0))).collect();
        assert!(steps.windows(2).all(|w| w[1] > w[0]), "{steps:?}");
        assert_eq!(text_on(viridis(0.05)), WHITE);
        assert_eq!(text_on(viridis(0.95)), RGBColor(0, 0, 0));
    }
}
