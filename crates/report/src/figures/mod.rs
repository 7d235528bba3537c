//! The figures, each as SVG and PNG, drawn with plotters and the bundled font.
//!
//! Every figure has a title, labelled axes with units and a legend; a simulated campaign's
//! figures say SIMULATED in their header; a figure whose data the campaign lacks still
//! appears, with a note saying so.

mod bars;
pub(crate) mod compare;
mod data_loading;
mod epoch_starts;
mod heatmap;
mod lines;
mod memory;
mod mixes;
mod protocols;
pub(crate) mod style;
mod timeline;
mod vs_jobs;

use anyhow::{anyhow, Result};
use colloc_analysis::Results;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::format::and_list;
use crate::legend::{mix_experiments, mix_sizes, timeline_jobs, timeline_labels};
use style::{bold, draw_marker, font, Marker, ALERT, GREY, INK};

/// The figures, in the order the report shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    AggregateRatio,
    EpochTime,
    Mixes,
    Interference,
    Utilisation,
    Memory,
    Energy,
    DataLoading,
    /// Only for a campaign with workloads under both a window protocol and whole epochs
    /// (see [`for_results`]).
    ProtocolValidation,
    EpochStarts,
}

/// The figures of `r`: [`ALL`], and the protocol validation when `r` has its pairs.
pub(crate) fn for_results(r: &Results) -> Vec<Figure> {
    let mut all = ALL.to_vec();
    if !r.protocol_validation.is_empty() {
        all.push(Figure::ProtocolValidation);
    }
    all
}

pub const ALL: [Figure; 9] = [
    Figure::AggregateRatio,
    Figure::EpochTime,
    Figure::Mixes,
    Figure::Interference,
    Figure::Utilisation,
    Figure::Memory,
    Figure::Energy,
    Figure::DataLoading,
    Figure::EpochStarts,
];

const WIDTH: u32 = 1200;
const HEADER: u32 = 56;
const LEGEND: u32 = 56;

impl Figure {
    /// File stem under `figures/`.
    pub fn id(self) -> &'static str {
        match self {
            Figure::AggregateRatio => "aggregate_ratio_vs_jobs",
            Figure::EpochTime => "epoch_time_vs_jobs",
            Figure::Mixes => "mixes_by_mode",
            Figure::Interference => "interference_heatmap",
            Figure::Utilisation => "utilisation_timeline",
            Figure::Memory => "memory_footprint",
            Figure::Energy => "energy_per_image",
            Figure::DataLoading => "data_loading",
            Figure::ProtocolValidation => "protocol_validation",
            Figure::EpochStarts => "epoch_starts",
        }
    }

    pub(crate) fn title(self, r: &Results) -> String {
        match self {
            Figure::AggregateRatio => "Aggregate throughput vs. collocated jobs".to_string(),
            Figure::EpochTime => "Per-job epoch time vs. collocated jobs".to_string(),
            Figure::Mixes => "Heterogeneous mixes by mode".to_string(),
            Figure::Interference => "Interference between job classes in the mixes".to_string(),
            Figure::Utilisation => match timeline_labels(r).as_slice() {
                [] => "GPU activity over time".to_string(),
                labels => format!("GPU activity over time, {}", labels.join(", ")),
            },
            Figure::Memory => "Device memory against the GPU's capacity".to_string(),
            Figure::Energy => "Energy per image by mode".to_string(),
            Figure::DataLoading => "Data loading: synthetic vs. generated data".to_string(),
            Figure::ProtocolValidation => "Protocol validation: the quick window against whole epochs".to_string(),
            Figure::EpochStarts => "Epoch starts inside the measurement window".to_string(),
        }
    }

    /// What the figure shows, for the report.
    pub(crate) fn caption(self, r: &Results) -> String {
        match self {
            Figure::AggregateRatio => "Sum of the collocated jobs' throughput over the same model alone on the whole GPU, per mode, one panel per model; markers are medians over repetitions, bars their 95% intervals (a bootstrap over the repetitions, the runs alone each ratio divides by and the windows' intervals; min–max where there is none), a red ring a ratio marked implausible (§ in the tables); hollow markers are further MIG layouts with the same number of jobs; a cross on the axis marks a job count at which some mode ran out of memory.".to_string(),
            Figure::EpochTime => "Median epoch time of one job (the dataset's training images over its throughput) as more jobs share the GPU; the dashed line is the model alone, a cross on the axis a job count at which some mode ran out of memory.".to_string(),
            Figure::Mixes => format!(
                "{} of {} jobs: sum over jobs of throughput over the same model alone (bars: its 95% interval, as in the tables); × marks MIG layouts that cannot be made on the GPU, ○ runs skipped or failed.",
                mix_experiments(r).map_or_else(|| "The mixes".to_string(), |e| format!("{e}'s mixes")),
                mix_sizes(r, false)
            ),
            Figure::Interference => format!(
                "{}: each job class's throughput in the mix over its model alone on the whole GPU (the median over the class's jobs of their median over repetitions), one panel per mode, the mixes in declared order; 1 is as fast as alone. Blank: the class is not in the mix; hatched —: not measured in that mode (infeasible, skipped or failed, or no run of the model alone).{}",
                mix_experiments(r).map_or_else(|| "The mixes".to_string(), |e| format!("{e}'s mixes")),
                match heatmap::unmeasured_modes(r).as_slice() {
                    [] => String::new(),
                    modes => format!(" Left out, as no mix was measured in it: {}.", and_list(modes)),
                }
            ),
            Figure::Utilisation => format!(
                "SM activity and occupancy, tensor activity and DRAM bandwidth during one repetition of {}, per mode, from the start of the window in which all jobs trained.{}",
                timeline_jobs(r),
                match timeline::bins(r) {
                    Some(n) => format!(" A window of more than {} samples is drawn as {n} equal spans, each as its least values at its first sample and its greatest at its last.", 2 * n),
                    None => String::new(),
                }
            ),
            Figure::Memory => "Peak device memory used in the window per workload; the dashed line is the GPU's memory, crosses mark workloads that ran out of memory.".to_string(),
            Figure::Energy => "The increase of the GPU's total-energy counter over the window divided by the images trained in it, per mode, one panel per model; a cross on the axis marks a job count at which some mode ran out of memory.".to_string(),
            Figure::ProtocolValidation => "Each workload's aggregate ratio (STP) under the window protocol and under whole epochs (the median over repetitions, bars min–max), in the same campaign on the same host; each label gives the jobs, the mode (lim: MPS-limited, with the MIG slice it stands in for) and the STP difference (window / epochs − 1), ! marking the workloads whose STP or per-job epoch time differ by more than the goal (the table protocol_validation has both).".to_string(),
            Figure::EpochStarts => "Per homogeneous workload whose jobs' windows held two epochs of their data set or more, the share of the window a job's loader spent starting epochs: the data waits of each epoch's first iteration beyond the mean wait of the others (median over jobs and repetitions, bars min–max). A generated set of 5% of CIFAR-10's count is 19 iterations an epoch, so one job alone starts 5 to 6 epochs in its window and loses more of it than collocated jobs do; a workload without a bar held fewer than two epochs in its window (on the whole set, 390 iterations an epoch, none does).".to_string(),
            Figure::DataLoading => "The same workloads with synthetic data and with generated image files, one row per job count and mode: aggregate throughput (median over repetitions, bars min–max) and the share of its time a job waited for data (median over the jobs, bars min–max).".to_string(),
        }
    }

    fn height(self, r: &Results) -> u32 {
        let rows = match self {
            Figure::AggregateRatio | Figure::EpochTime | Figure::Energy => vs_jobs::panel_rows(r),
            Figure::Utilisation => timeline::panel_rows(r),
            Figure::Memory => memory::panel_rows(r),
            Figure::Mixes | Figure::ProtocolValidation | Figure::EpochStarts => 1,
            Figure::DataLoading => return HEADER + LEGEND + data_loading::height(r),
            Figure::Interference => return HEADER + heatmap::height(r),
        };
        HEADER + LEGEND + 380 * rows.max(1) as u32
    }

    /// Draws the figure; `Ok(Some(why))` when the campaign has no data for it.
    fn draw<DB: DrawingBackend>(
        self,
        root: &DrawingArea<DB, Shift>,
        body: &DrawingArea<DB, Shift>,
        r: &Results,
    ) -> Result<Option<String>>
    where
        DB::ErrorType: 'static,
    {
        match self {
            Figure::AggregateRatio => vs_jobs::draw(root, body, r, vs_jobs::Metric::Ratio),
            Figure::EpochTime => vs_jobs::draw(root, body, r, vs_jobs::Metric::EpochTime),
            Figure::Energy => vs_jobs::draw(root, body, r, vs_jobs::Metric::Energy),
            Figure::Mixes => mixes::draw(root, body, r),
            Figure::Interference => heatmap::draw(root, body, r),
            Figure::Utilisation => timeline::draw(root, body, r),
            Figure::Memory => memory::draw(root, body, r),
            Figure::DataLoading => data_loading::draw(root, body, r),
            Figure::ProtocolValidation => protocols::draw(root, body, r),
            Figure::EpochStarts => epoch_starts::draw(root, body, r),
        }
    }

    fn paint<DB: DrawingBackend>(self, root: DrawingArea<DB, Shift>, r: &Results) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let title = match self {
            Figure::DataLoading => self.title(r),
            _ => format!("{} ({} data)", self.title(r), r.primary_data),
        };
        let body = frame(&root, &title, r)?;
        if let Some(why) = self.draw(&root, &body, r)? {
            no_data(&body, &why)?;
        }
        root.present().map_err(|e| anyhow!("{}: {e}", self.id()))?;
        Ok(())
    }

    /// The figure as an SVG document.
    pub(crate) fn svg(self, r: &Results) -> Result<String> {
        style::ensure_fonts()?;
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (WIDTH, self.height(r))).into_drawing_area();
            self.paint(root, r)?;
        }
        Ok(out)
    }

    /// The figure as RGB pixels: (width, height, 3 bytes per pixel).
    pub(crate) fn rgb(self, r: &Results) -> Result<(u32, u32, Vec<u8>)> {
        style::ensure_fonts()?;
        let (w, h) = (WIDTH, self.height(r));
        let mut buf = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            self.paint(root, r)?;
        }
        Ok((w, h, buf))
    }
}

/// Maps a plotters error into ours.
pub(crate) fn de<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing: {e}")
}

/// White background, the title, the SIMULATED mark; returns the area below the header.
fn frame<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str, r: &Results) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    header(root, title, &format!("{} · {}", r.gpu_name(), r.campaign), r.simulated)
}

/// White background, `title` on the left and `source` on the right of the header, or the
/// SIMULATED mark instead when `simulated`; returns the area below the header.
pub(crate) fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    source: &str,
    simulated: bool,
) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(de)?;
    let (w, _) = root.dim_in_pixel();
    let mid = HEADER as i32 / 2;
    root.draw_text(title, &bold(26.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)), (20, mid)).map_err(de)?;
    let right = if simulated { "SIMULATED — not measured" } else { source };
    let style = if simulated { bold(22.0).color(&ALERT) } else { font(18.0).color(&GREY) };
    root.draw_text(right, &style.pos(Pos::new(HPos::Right, VPos::Center)), (w as i32 - 20, mid)).map_err(de)?;
    Ok(root.split_vertically(HEADER).1)
}

/// RGB pixels as a PNG file.
pub(crate) fn encode_png(w: u32, h: u32, rgb: &[u8]) -> Result<Vec<u8>> {
    use image::ImageEncoder;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(rgb, w, h, image::ColorType::Rgb8)
        .map_err(|e| anyhow!("encoding PNG: {e}"))?;
    Ok(png)
}

/// The note that replaces a figure's content when the campaign has no data for it.
fn no_data<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, why: &str) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    area.draw(&Rectangle::new([(20, 10), (w as i32 - 20, h as i32 - 10)], style::LIGHT.stroke_width(2))).map_err(de)?;
    let c = Pos::new(HPos::Center, VPos::Center);
    area.draw_text("No data in this campaign", &bold(28.0).color(&GREY).pos(c), (w as i32 / 2, h as i32 / 2 - 20))
        .map_err(de)?;
    area.draw_text(why, &font(18.0).color(&GREY).pos(c), (w as i32 / 2, h as i32 / 2 + 20)).map_err(de)?;
    Ok(())
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Key {
    /// A marker on a line.
    Series(Marker),
    /// A marker alone (filled or not).
    Mark(Marker, bool),
    Line,
    Dashed,
    Bar,
    /// A character drawn as the key.
    Glyph(&'static str),
}

/// A horizontal legend centred in `area`.
pub(crate) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBColor, Key)],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if entries.is_empty() {
        return Ok(());
    }
    let text = font(18.0);
    let key_w = 34;
    let gap = 22;
    let widths: Vec<i32> = entries
        .iter()
        .map(|(label, _, _)| {
            area.estimate_text_size(label, &text.color(&INK)).map(|(w, _)| w as i32).unwrap_or(8 * label.len() as i32)
        })
        .collect();
    let total: i32 = widths.iter().map(|w| w + key_w + 8).sum::<i32>() + gap * (entries.len() as i32 - 1);
    let (w, h) = area.dim_in_pixel();
    let mut x = ((w as i32 - total) / 2).max(10);
    let y = h as i32 / 2;
    for ((label, color, key), tw) in entries.iter().zip(&widths) {
        match key {
            Key::Series(m) => {
                area.draw(&PathElement::new(vec![(x, y), (x + key_w, y)], color.stroke_width(3))).map_err(de)?;
                draw_marker(area, *m, (x + key_w / 2, y), 6, *color, true)?;
            }
            Key::Line => {
                area.draw(&PathElement::new(vec![(x, y), (x + key_w, y)], color.stroke_width(3))).map_err(de)?;
            }
            Key::Mark(m, filled) => draw_marker(area, *m, (x + key_w / 2, y), 7, *color, *filled)?,
            Key::Dashed => {
                let mut px = x;
                while px < x + key_w {
                    area.draw(&PathElement::new(vec![(px, y), ((px + 6).min(x + key_w), y)], color.stroke_width(2)))
                        .map_err(de)?;
                    px += 10;
                }
            }
            Key::Glyph(g) => {
                area.draw_text(
                    g,
                    &font(20.0).color(color).pos(Pos::new(HPos::Center, VPos::Center)),
                    (x + key_w / 2, y),
                )
                .map_err(de)?;
            }
            Key::Bar => {
                area.draw(&Rectangle::new([(x + 4, y - 9), (x + key_w - 4, y + 9)], color.filled())).map_err(de)?
            }
        }
        area.draw_text(label, &text.color(&INK).pos(Pos::new(HPos::Left, VPos::Center)), (x + key_w + 8, y))
            .map_err(de)?;
        x += key_w + 8 + tw + gap;
    }
    Ok(())
}

/// Splits the body into the panels' area and the legend strip below.
pub(crate) fn with_legend<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let (_, h) = body.dim_in_pixel();
    body.split_vertically(h.saturating_sub(LEGEND))
}
