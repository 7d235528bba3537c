//! The mixes' interference matrix as a heatmap: one section per data source, one panel per
//! mode, a row per job class, a column per mix in declared order, each cell the class's
//! normalised throughput in the mix (the analysis' interference cells), coloured on viridis;
//! a mix whose MIG layout does not fit is marked infeasible, apart from the cells not
//! measured.

use anyhow::Result;
use colloc_analysis::{InterferenceCell, Results, WorkloadResult};
use colloc_trace::meta::RunStatus;
use colloc_trace::Mode;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::de;
use super::lines::{format_tick, SECTION_TITLE};
use super::style::{
    bold, draw_marker, font, mode_legend, text_on, viridis, Marker, ALERT, GREY, INFEASIBLE_FILL, INK, LIGHT,
    NOT_MEASURED_FILL, NOT_MEASURED_HATCH,
};
use super::{section_title, sources};
use crate::legend::{mix_classes, mix_experiments};
use crate::order::{is_mix, mode_name, MODES};

/// Pixels for the classes' names, left of the cells.
const LABELS: i32 = 190;
/// Margins left and right of the figure.
const SIDE: i32 = 20;
/// The widest a cell gets when there are few mixes.
const MAX_CELL: i32 = 130;
const CELL_H: i32 = 40;
/// A panel's title line and its row of mix labels.
const TITLE_H: i32 = 30;
const COLUMNS_H: i32 = 24;
/// Space below each panel.
const GAP: i32 = 12;
/// The colour scale and keys under the panels.
const SCALE_H: i32 = 100;

/// A job class, as a row: its letter, model and batch size.
type Class = (String, String, u32);
/// A mix, as a column: experiment, declared position, label.
type Mix = (u32, u32, String);

/// The panels of one data source.
struct Source<'a> {
    data: String,
    /// The modes with at least one value, in display order, with their cells.
    panels: Vec<(Mode, Vec<&'a InterferenceCell>)>,
    /// (experiment, mix, class) for each class of each mix, whatever the mode.
    members: Vec<(u32, String, String)>,
    /// The source's mixes (to tell infeasible layouts).
    mixes: Vec<&'a WorkloadResult>,
}

/// What the figure draws, gathered from the results' interference cells.
struct Matrix<'a> {
    classes: Vec<Class>,
    mixes: Vec<Mix>,
    sources: Vec<Source<'a>>,
    /// Modes whose mixes have cells but no value at all, in any source (left out).
    unmeasured: Vec<Mode>,
}

fn matrix(r: &Results) -> Matrix<'_> {
    let all: Vec<&InterferenceCell> = r.interference.iter().collect();
    // Rows in the order the captions name the classes (smallest MIG slice first).
    let order = mix_classes(r);
    let rank = |letter: &str| order.iter().position(|c| c.letter == letter).unwrap_or(order.len());
    let mut classes: Vec<(usize, Class)> =
        all.iter().map(|c| (rank(&c.class), (c.class.clone(), c.model.clone(), c.batch_size))).collect();
    classes.sort();
    classes.dedup();
    let mut mixes: Vec<Mix> = all.iter().map(|c| (c.experiment, c.position, c.mix.clone())).collect();
    mixes.sort();
    mixes.dedup();
    let mut measured_modes: Vec<Mode> = Vec::new();
    let mut seen_modes: Vec<Mode> = Vec::new();
    let mut out = Vec::new();
    for data in sources(r) {
        let cells: Vec<&InterferenceCell> = all.iter().copied().filter(|c| c.data == data).collect();
        if cells.is_empty() {
            continue;
        }
        let mut panels = Vec::new();
        for m in MODES.iter().copied().filter(|m| *m != Mode::Exclusive) {
            let of: Vec<&InterferenceCell> = cells.iter().copied().filter(|c| c.mode == m).collect();
            if of.is_empty() {
                continue;
            }
            seen_modes.push(m);
            if of.iter().any(|c| c.normalised_throughput.is_some()) {
                measured_modes.push(m);
                panels.push((m, of));
            }
        }
        let mut members: Vec<(u32, String, String)> =
            cells.iter().map(|c| (c.experiment, c.mix.clone(), c.class.clone())).collect();
        members.sort();
        members.dedup();
        if !panels.is_empty() {
            let mixes = r.workloads.iter().filter(|w| is_mix(w) && w.data == data).collect();
            out.push(Source { data, panels, members, mixes });
        }
    }
    let unmeasured = MODES.iter().copied().filter(|m| seen_modes.contains(m) && !measured_modes.contains(m)).collect();
    Matrix { classes: classes.into_iter().map(|(_, c)| c).collect(), mixes, sources: out, unmeasured }
}

fn panel_height(rows: usize) -> i32 {
    TITLE_H + COLUMNS_H + CELL_H * rows as i32 + GAP
}

/// The height of the sources' panels, with their headings when there are several.
fn panels_height(r: &Results, m: &Matrix) -> i32 {
    let headings = if sources(r).len() > 1 { SECTION_TITLE as i32 } else { 0 };
    m.sources.iter().map(|s| headings + s.panels.len() as i32 * panel_height(m.classes.len())).sum()
}

/// The figure's height below the header.
pub(super) fn height(r: &Results) -> u32 {
    let m = matrix(r);
    if m.sources.is_empty() {
        return 380;
    }
    (8 + panels_height(r, &m) + SCALE_H) as u32
}

/// The modes left out because none of their cells has a value: `MIG`.
pub(super) fn unmeasured_modes(r: &Results) -> Vec<String> {
    matrix(r).unmeasured.into_iter().map(|m| mode_name(m).to_string()).collect()
}

/// The top of the colour scale: 1 (as fast as alone), or the largest value rounded up to
/// a quarter when some class ran faster than alone.
fn scale_top(m: &Matrix) -> f64 {
    let hi = m
        .sources
        .iter()
        .flat_map(|s| &s.panels)
        .flat_map(|(_, cs)| cs.iter().filter_map(|c| c.normalised_throughput.map(|s| s.median)))
        .fold(1.0_f64, f64::max);
    if hi > 1.0 {
        (hi * 4.0).ceil() / 4.0
    } else {
        1.0
    }
}

/// Whether the mix's layout cannot be made in `mode`: its own workload is infeasible, or,
/// for an MPS-limited stand-in not planned, the mix's MIG layout is.
fn infeasible(mixes: &[&WorkloadResult], (e, mix): (u32, &str), mode: Mode) -> bool {
    let find = |m: Mode| mixes.iter().find(|w| (w.experiment, w.label.as_str(), w.mode) == (e, mix, m));
    let bad = |w: &&&WorkloadResult| !w.feasible || w.status == RunStatus::Infeasible;
    match find(mode) {
        Some(w) => bad(&w),
        None => matches!(mode, Mode::MpsLimited | Mode::Mig) && find(Mode::Mig).is_some_and(|w| bad(&w)),
    }
}

/// Diagonal hatching over a rectangle, for a cell not measured.
fn hatch<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, (x0, y0): (i32, i32), (w, h): (i32, i32)) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.draw(&Rectangle::new([(x0, y0), (x0 + w, y0 + h)], NOT_MEASURED_FILL.filled())).map_err(de)?;
    let style = NOT_MEASURED_HATCH.stroke_width(1);
    let mut d = 6;
    while d < w + h {
        let a = (x0 + d.min(w), y0 + d - d.min(w));
        let b = (x0 + d - d.min(h), y0 + d.min(h));
        area.draw(&PathElement::new(vec![a, b], style)).map_err(de)?;
        d += 9;
    }
    Ok(())
}

/// A cell whose layout cannot be made: a pale red ground, a red frame and cross.
fn infeasible_cell<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (w, h): (i32, i32),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    area.draw(&Rectangle::new([(x0, y0), (x0 + w, y0 + h)], INFEASIBLE_FILL.filled())).map_err(de)?;
    area.draw(&Rectangle::new([(x0 + 1, y0 + 1), (x0 + w - 1, y0 + h - 1)], ALERT.stroke_width(1))).map_err(de)?;
    draw_marker(area, Marker::Cross, (x0 + w / 2, y0 + h / 2), 7, ALERT, true)
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
    if m.sources.is_empty() {
        let what =
            mix_experiments(r).map_or_else(|| "the mixes".to_string(), |e| format!("{}'s mixes", e.to_lowercase()));
        return Ok(Some(if r.interference.is_empty() {
            format!("{what} were not run")
        } else {
            format!("no job class of {what} was measured beside its co-runners")
        }));
    }
    let (w, _) = body.dim_in_pixel();
    let n = m.mixes.len().max(1) as i32;
    let cell_w = ((w as i32 - 2 * SIDE - LABELS) / n).min(MAX_CELL);
    let x0 = (w as i32 - LABELS - cell_w * n) / 2 + LABELS;
    let top = scale_top(&m);
    let header_size =
        m.mixes.iter().map(|(_, _, label)| fitting(body, label, 15.0, cell_w - 6)).fold(15.0_f64, f64::min);
    let value_size = fitting(body, "0.00", 17.0, cell_w - 8);
    let grid = Grid { x0, cell_w, n, top, header_size, value_size };
    // Whether some cell is infeasible, and some hatched (not measured): their keys.
    let mut marks = (false, false);
    let mut y = 8;
    for s in &m.sources {
        // A campaign of one data source: no heading (the title names it).
        if sources(r).len() > 1 {
            body.draw_text(
                &section_title(r, &s.data, ""),
                &bold(21.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)),
                (16, y + SECTION_TITLE as i32 / 2),
            )
            .map_err(de)?;
            body.draw(&PathElement::new(
                vec![(16, y + SECTION_TITLE as i32 - 5), (w as i32 - 16, y + SECTION_TITLE as i32 - 5)],
                LIGHT.stroke_width(1),
            ))
            .map_err(de)?;
            y += SECTION_TITLE as i32;
        }
        for (mode, cells) in &s.panels {
            draw_panel(body, r, &m, s, (*mode, cells), &grid, y, &mut marks)?;
            y += panel_height(m.classes.len());
        }
    }
    scale(body, y, top, w as i32, marks.0, marks.1)?;
    Ok(None)
}

/// Where a mode's grid of cells lies across the figure, and its type sizes.
struct Grid {
    x0: i32,
    cell_w: i32,
    n: i32,
    top: f64,
    header_size: f64,
    value_size: f64,
}

/// One mode's panel of a data source at `y`: its title, the mixes' headers, a row per job
/// class with a cell per mix. `marks` records whether a cell was infeasible, and hatched.
#[allow(clippy::too_many_arguments)]
fn draw_panel<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    r: &Results,
    m: &Matrix,
    source: &Source,
    (mode, cells): (Mode, &[&InterferenceCell]),
    g: &Grid,
    y: i32,
    marks: &mut (bool, bool),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let title = match &mode {
        Mode::MpsLimited if super::style::stands_in(r) => {
            format!("{} — each job capped to its MIG slice's share", mode_legend(mode, r))
        }
        _ => mode_legend(mode, r),
    };
    body.draw_text(&title, &bold(18.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)), (SIDE, y + TITLE_H / 2))
        .map_err(de)?;
    let cy = y + TITLE_H + COLUMNS_H / 2;
    for (i, (_, _, label)) in m.mixes.iter().enumerate() {
        let cx = g.x0 + g.cell_w * i as i32 + g.cell_w / 2;
        body.draw_text(label, &font(g.header_size).color(&INK).pos(Pos::new(HPos::Center, VPos::Center)), (cx, cy))
            .map_err(de)?;
    }
    let grid_y = y + TITLE_H + COLUMNS_H;
    for (ri, (letter, model, batch)) in m.classes.iter().enumerate() {
        let ry = grid_y + CELL_H * ri as i32;
        let mid = ry + CELL_H / 2;
        let tx = g.x0 - 12;
        let name = format!("{model} b{batch}");
        body.draw_text(&name, &font(15.0).color(&GREY).pos(Pos::new(HPos::Right, VPos::Center)), (tx, mid))
            .map_err(de)?;
        let model_w = body.estimate_text_size(&name, &font(15.0).color(&GREY)).map(|(w, _)| w as i32).unwrap_or(0);
        body.draw_text(
            letter,
            &bold(18.0).color(&INK).pos(Pos::new(HPos::Right, VPos::Center)),
            (tx - model_w - 10, mid),
        )
        .map_err(de)?;
        for (ci, (e, _, mix)) in m.mixes.iter().enumerate() {
            let cx = g.x0 + g.cell_w * ci as i32;
            let (cell_x, cell_y, cw, ch) = (cx + 1, ry + 1, g.cell_w - 2, CELL_H - 2);
            let centre = (cx + g.cell_w / 2, mid);
            let c = cells.iter().find(|c| (c.experiment, &c.mix, &c.class) == (*e, mix, letter));
            // The class is in the mix when some mode has a cell for it.
            let in_mix = c.is_some() || source.members.contains(&(*e, mix.clone(), letter.clone()));
            match c.map(|c| c.normalised_throughput) {
                // The class is not in the mix: blank.
                None if !in_mix => {}
                Some(Some(v)) => {
                    let bg = viridis(v.median / g.top);
                    body.draw(&Rectangle::new([(cell_x, cell_y), (cell_x + cw, cell_y + ch)], bg.filled()))
                        .map_err(de)?;
                    body.draw_text(
                        &format!("{:.2}", v.median),
                        &font(g.value_size).color(&text_on(bg)).pos(Pos::new(HPos::Center, VPos::Center)),
                        centre,
                    )
                    .map_err(de)?;
                }
                // The mix's layout cannot be made in this mode.
                _ if infeasible(&source.mixes, (*e, mix), mode) => {
                    marks.0 = true;
                    infeasible_cell(body, (cell_x, cell_y), (cw, ch))?;
                }
                // The class is in the mix, but the mix was not run in this mode or
                // has no value: hatched.
                None | Some(None) => {
                    marks.1 = true;
                    hatch(body, (cell_x, cell_y), (cw, ch))?;
                    body.draw_text(
                        "—",
                        &font(g.value_size).color(&INK).pos(Pos::new(HPos::Center, VPos::Center)),
                        centre,
                    )
                    .map_err(de)?;
                }
            }
        }
    }
    // A frame around the grid, so that blank cells read as part of it.
    body.draw(&Rectangle::new(
        [(g.x0, grid_y), (g.x0 + g.cell_w * g.n, grid_y + CELL_H * m.classes.len() as i32)],
        LIGHT.stroke_width(1),
    ))
    .map_err(de)?;
    Ok(())
}

/// The colour scale with its ticks, and the keys for the cells without a value.
fn scale<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    y: i32,
    top: f64,
    width: i32,
    infeasible: bool,
    hatched: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let bar_w = 420;
    let bar_h = 20;
    let keys_w = 420;
    let x = (width - bar_w - 70 - keys_w) / 2;
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
    // Keys, one under the other: infeasible, not measured, blank.
    let kx = x + bar_w + 70;
    let (kw, kh) = (40, 24);
    let mut ky = y;
    let text = |ky: i32, s: &str| {
        area.draw_text(s, &font(16.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)), (kx + kw + 10, ky + kh / 2))
            .map_err(de)
    };
    if infeasible {
        infeasible_cell(area, (kx, ky), (kw, kh))?;
        text(ky, "infeasible (layout does not fit)")?;
        ky += kh + 6;
    }
    if hatched {
        hatch(area, (kx, ky), (kw, kh))?;
        area.draw_text(
            "—",
            &font(15.0).color(&INK).pos(Pos::new(HPos::Center, VPos::Center)),
            (kx + kw / 2, ky + kh / 2),
        )
        .map_err(de)?;
        text(ky, "not measured (skipped or failed)")?;
        ky += kh + 6;
    }
    area.draw(&Rectangle::new([(kx, ky), (kx + kw, ky + kh)], LIGHT.stroke_width(1))).map_err(de)?;
    text(ky, "blank: class not in the mix")?;
    Ok(())
}
