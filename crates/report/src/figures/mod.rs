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
    /// SM activity against the number of jobs, per model.
    Activity,
    Memory,
    Energy,
    /// Data loading of the workloads of one model.
    DataLoading,
    /// Data loading of the mixes of models.
    DataLoadingMixes,
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

pub const ALL: [Figure; 11] = [
    Figure::AggregateRatio,
    Figure::EpochTime,
    Figure::Mixes,
    Figure::Interference,
    Figure::Utilisation,
    Figure::Activity,
    Figure::Memory,
    Figure::Energy,
    Figure::DataLoading,
    Figure::DataLoadingMixes,
    Figure::EpochStarts,
];

const WIDTH: u32 = 1200;
const HEADER: u32 = 56;
/// The least height of a legend strip.
const LEGEND: u32 = 56;
/// A row of a legend strip.
const LEGEND_ROW: u32 = 30;
/// The body of a figure without data (its note).
const NO_DATA: u32 = 380;

/// The data sources of `r` in display order: the main one, then synthetic data, generated
/// image files, image folders and any other.
pub(crate) fn sources(r: &Results) -> Vec<String> {
    let rank = |d: &str| match d {
        _ if d == r.primary_data => 0,
        "synthetic" => 1,
        "generated" => 2,
        "imagefolder" => 3,
        _ => 4,
    };
    let mut all: Vec<&str> = r.workloads.iter().map(|w| w.data.as_str()).collect();
    all.sort_by_key(|d| (rank(d), *d));
    all.dedup();
    all.into_iter().map(str::to_string).collect()
}

/// The (data source, own protocol) parts of `r` in display order: the sources as
/// [`sources`], the campaign's protocol (empty) before any other.
pub(crate) fn sections_of(r: &Results) -> Vec<(String, String)> {
    let order = sources(r);
    let mut all: Vec<(usize, String, String)> = r
        .workloads
        .iter()
        .map(|w| {
            (order.iter().position(|d| *d == w.data).unwrap_or(order.len()), w.data.clone(), w.own_protocol.clone())
        })
        .collect();
    all.sort();
    all.dedup();
    all.into_iter().map(|(_, d, p)| (d, p)).collect()
}

/// What a data source is, in words: `synthetic data (GPU-bound control)`, `generated
/// image files`.
pub(crate) fn source_title(data: &str) -> String {
    match data {
        "synthetic" => "synthetic data (GPU-bound control)".to_string(),
        "generated" => "generated image files".to_string(),
        "imagefolder" => "image files (ImageFolder)".to_string(),
        other => format!("{other} data"),
    }
}

/// The heading of a section: `Synthetic data (GPU-bound control)`; where some workloads
/// name a protocol of their own (`protocol`, empty under the campaign's), with the
/// protocol: `Generated image files · quick protocol`.
pub(crate) fn section_title(r: &Results, data: &str, protocol: &str) -> String {
    let t = source_title(data);
    let mut c = t.chars();
    let t: String = match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => t,
    };
    let own: Vec<&str> = r.workloads.iter().map(|w| w.own_protocol.as_str()).filter(|p| !p.is_empty()).collect();
    if own.is_empty() {
        return t;
    }
    if !protocol.is_empty() {
        return format!("{t} · {protocol} protocol");
    }
    // The campaign's protocol: the one its runs name that no part names as its own (the
    // provenance describes each as `name: …`).
    let mut campaign: Vec<&str> = r
        .provenance
        .protocols
        .iter()
        .map(|p| p.split(':').next().unwrap_or("").trim())
        .filter(|p| !p.is_empty() && !own.contains(p))
        .collect();
    campaign.dedup();
    match campaign.as_slice() {
        [one] => format!("{t} · {one} protocol"),
        _ => format!("{t} · the campaign's protocol"),
    }
}

impl Figure {
    /// File stem under `figures/`.
    pub fn id(self) -> &'static str {
        match self {
            Figure::AggregateRatio => "aggregate_ratio_vs_jobs",
            Figure::EpochTime => "epoch_time_vs_jobs",
            Figure::Mixes => "mixes_by_mode",
            Figure::Interference => "interference_heatmap",
            Figure::Utilisation => "utilisation_timeline",
            Figure::Activity => "sm_activity_vs_jobs",
            Figure::Memory => "memory_footprint",
            Figure::Energy => "energy_per_image",
            Figure::DataLoading => "data_loading",
            Figure::DataLoadingMixes => "data_loading_mixes",
            Figure::ProtocolValidation => "protocol_validation",
            Figure::EpochStarts => "epoch_starts",
        }
    }

    pub(crate) fn title(self, r: &Results) -> String {
        match self {
            Figure::AggregateRatio => "STP vs. collocated jobs".to_string(),
            Figure::EpochTime => "Per-job epoch time vs. collocated jobs".to_string(),
            Figure::Mixes => "Heterogeneous mixes: STP by mode".to_string(),
            Figure::Interference => "Interference between job classes in the mixes".to_string(),
            Figure::Utilisation => match timeline_labels(r).as_slice() {
                [] => "GPU activity over time".to_string(),
                labels => format!("GPU activity over time, {}", labels.join(", ")),
            },
            Figure::Activity => "SM activity vs. collocated jobs".to_string(),
            Figure::Memory => "Peak device memory vs. collocated jobs".to_string(),
            Figure::Energy => "Energy per image vs. collocated jobs".to_string(),
            Figure::DataLoading => "Data loading, one model per workload: synthetic vs. generated data".to_string(),
            Figure::DataLoadingMixes => "Data loading in the mixes: synthetic vs. generated data".to_string(),
            Figure::ProtocolValidation => "Protocol validation: STP, window vs. whole epochs".to_string(),
            Figure::EpochStarts => "Epoch starts inside the measurement window".to_string(),
        }
    }

    /// What the figure shows, for the report.
    pub(crate) fn caption(self, r: &Results) -> String {
        let sections = "one row of panels per data source: the generated image files the jobs' loaders read, and synthetic data made on the GPU (the GPU-bound control)";
        match self {
            Figure::AggregateRatio => format!("Sum of the collocated jobs' throughput over the same model alone on the whole GPU, per mode, one panel per model, {sections}; markers are medians over repetitions, bars their 95% intervals (a bootstrap over the repetitions, the runs alone each ratio divides by and the windows' intervals; min–max where there is none), a red ring a ratio marked implausible (§ in the tables); hollow markers are further layouts with the same number of jobs; a cross on the axis marks a job count at which some mode ran out of memory, a red bar one at which some mode's every run failed otherwise (its reason in the tables); the dashed line is one job alone (1), and no interference would read as many as the jobs."),
            Figure::EpochTime => format!("Median epoch time of one job (the dataset's training images over its throughput, bars min–max) as more jobs share the GPU, {sections}; the black bar beside each marker is the epoch time of the same model alone that the workload's ratios divide by (its own host's runs alone, the median over its jobs and repetitions), so a marker below its bar is a job faster than alone; a cross on the axis marks a job count at which some mode ran out of memory, a red bar one at which some mode's every run failed otherwise (its reason in the tables)."),
            Figure::Mixes => format!(
                "{} of {} jobs, {sections}: sum over jobs of throughput over the same model alone (bars: its 95% interval, as in the tables); the dashed bar over each mix is no interference (every job as fast as alone: the number of jobs), the grey line one job alone (1); × marks MIG layouts that cannot be made on the GPU (and so neither their MPS-limited stand-in), ○ runs skipped or failed.{}",
                mix_experiments(r).map_or_else(|| "The mixes".to_string(), |e| format!("{e}'s mixes")),
                mix_sizes(r, false),
                match mixes::unmeasured_modes(r).as_slice() {
                    [] => String::new(),
                    modes => format!(" No bars for {}: no mix was measured in it.", and_list(modes)),
                }
            ),
            Figure::Interference => format!(
                "{}: each job class's throughput in the mix over its model alone on the whole GPU (the median over the class's jobs of their median over repetitions), one panel per mode, {sections}, the mixes in declared order; 1 is as fast as alone. Blank: the class is not in the mix; ×: infeasible, the mix's MIG layout does not fit on the GPU (nor, then, its MPS-limited stand-in); hatched —: not measured in that mode (skipped or failed, or no run of the model alone).{}",
                mix_experiments(r).map_or_else(|| "The mixes".to_string(), |e| format!("{e}'s mixes")),
                match heatmap::unmeasured_modes(r).as_slice() {
                    [] => String::new(),
                    modes => format!(" Left out, as no mix was measured in it: {}.", and_list(modes)),
                }
            ),
            Figure::Utilisation => format!(
                "SM activity and occupancy, tensor activity and DRAM bandwidth during one repetition of {}, per mode, {sections}, over the measurement window (shaded: from when all jobs trained to its end; the traces' samples outside it are not shown).{}",
                timeline_jobs(r),
                match timeline::bins(r) {
                    Some(n) => format!(" A window of more than {} samples is drawn as {n} equal spans, each as its least values at its first sample and its greatest at its last.", 2 * n),
                    None => String::new(),
                }
            ),
            Figure::Activity => format!("The share of the measurement window in which the GPU's streaming multiprocessors had work (SM activity, NVML's GPM metric, averaged over the window; median over repetitions, bars min–max), per mode, one panel per model, {sections}; the diamond is the model alone on the whole GPU, the dashed line every SM active for the whole window; a model alone near that line leaves the GPU little to give a second job, so collocation can add little throughput. A cross on the axis marks a job count at which some mode ran out of memory, a red bar one at which some mode's every run failed otherwise (its reason in the tables)."),
            Figure::Memory => format!("Peak device memory used on the GPU in the window per workload (median over repetitions, bars min–max), per mode, one panel per model, {sections}; the diamond is the model alone, the dashed line the GPU's memory, crosses mark job counts at which some mode ran out of memory, a red bar on the axis one at which some mode's every run failed otherwise (its reason in the tables)."),
            Figure::Energy => format!("The increase of the GPU's total-energy counter over the window divided by the images trained in it, per mode, one panel per model, {sections}; the dashed line is the model alone on the whole GPU (the median of its runs), a cross on the axis marks a job count at which some mode ran out of memory, a red bar one at which some mode's every run failed otherwise (its reason in the tables)."),
            Figure::ProtocolValidation => "Each workload's STP under the window protocol and under whole epochs (the median over repetitions, bars min–max), in the same campaign on the same host; each row names the jobs, the mode (MPS-limited with the MIG slices it stands in for) and the STP difference (window / epochs − 1); ! marks the workloads whose STP or per-job epoch time differ by more than the goal (the table protocol_validation has both).".to_string(),
            Figure::EpochStarts => "Per homogeneous workload whose jobs' windows held two epochs of their data set or more, the share of the window a job's loader spent starting epochs: the data waits of each epoch's first iteration beyond the mean wait of the others (median over jobs and repetitions, bars min–max). A generated set of 5% of CIFAR-10's count is 19 iterations an epoch, so one job alone starts 5 to 6 epochs in its window and loses more of it than collocated jobs do; a workload without a bar held fewer than two epochs in its window (on the whole set, 390 iterations an epoch, none does).".to_string(),
            Figure::DataLoading => "The workloads of one model measured both with synthetic data and with generated image files, grouped under their model, one row per job count and mode: aggregate throughput (median over repetitions, bars min–max) and the share of its time a job waited for data (median over the jobs, bars min–max).".to_string(),
            Figure::DataLoadingMixes => "The mixes measured both with synthetic data and with generated image files, grouped under their mix, one row per mode: aggregate throughput (median over repetitions, bars min–max) and the share of its time a job waited for data (median over the jobs, bars min–max).".to_string(),
        }
    }

    /// The body's height below the header.
    fn body_height(self, r: &Results) -> u32 {
        let lines = match self {
            Figure::AggregateRatio => vs_jobs::build(r, vs_jobs::Metric::Ratio),
            Figure::EpochTime => vs_jobs::build(r, vs_jobs::Metric::EpochTime),
            Figure::Energy => vs_jobs::build(r, vs_jobs::Metric::Energy),
            Figure::Memory => vs_jobs::build(r, vs_jobs::Metric::Memory),
            Figure::Activity => vs_jobs::build(r, vs_jobs::Metric::Activity),
            Figure::Utilisation => timeline::build(r),
            Figure::Mixes => return mixes::height(r).unwrap_or(NO_DATA),
            Figure::Interference => return heatmap::height(r),
            Figure::DataLoading => return data_loading::height(r, false).unwrap_or(NO_DATA),
            Figure::DataLoadingMixes => return data_loading::height(r, true).unwrap_or(NO_DATA),
            Figure::ProtocolValidation => return protocols::height(r).unwrap_or(NO_DATA),
            Figure::EpochStarts => return if epoch_starts::has_data(r) { 380 + LEGEND } else { NO_DATA },
        };
        lines.map_or(NO_DATA, |l| l.height())
    }

    fn height(self, r: &Results) -> u32 {
        HEADER + self.body_height(r)
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
        let lines = match self {
            Figure::AggregateRatio => vs_jobs::build(r, vs_jobs::Metric::Ratio),
            Figure::EpochTime => vs_jobs::build(r, vs_jobs::Metric::EpochTime),
            Figure::Energy => vs_jobs::build(r, vs_jobs::Metric::Energy),
            Figure::Memory => vs_jobs::build(r, vs_jobs::Metric::Memory),
            Figure::Activity => vs_jobs::build(r, vs_jobs::Metric::Activity),
            Figure::Utilisation => timeline::build(r),
            Figure::Mixes => return mixes::draw(root, body, r),
            Figure::Interference => return heatmap::draw(root, body, r),
            Figure::DataLoading => return data_loading::draw(root, body, r, false),
            Figure::DataLoadingMixes => return data_loading::draw(root, body, r, true),
            Figure::ProtocolValidation => return protocols::draw(root, body, r),
            Figure::EpochStarts => return epoch_starts::draw(root, body, r),
        };
        match lines {
            Ok(l) => l.draw(root, body).map(|()| None),
            Err(why) => Ok(Some(why)),
        }
    }

    fn paint<DB: DrawingBackend>(self, root: DrawingArea<DB, Shift>, r: &Results) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        // A campaign of one data source names it in the title; with more, the figures
        // head each source's panels with its name (the data loading figures set them side
        // by side).
        let title = match (self, sources(r).as_slice()) {
            (Figure::DataLoading | Figure::DataLoadingMixes, _) => self.title(r),
            (_, [one]) => format!("{} ({})", self.title(r), source_title(one)),
            _ => self.title(r),
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
    let right = if simulated { "SIMULATED — not measured" } else { source };
    let style = if simulated { bold(22.0).color(&ALERT) } else { font(18.0).color(&GREY) };
    // The title as large as fits beside the source.
    let right_w = root.estimate_text_size(right, &style).map(|(x, _)| x as i32).unwrap_or(0);
    let mut size = 26.0;
    while size > 16.0
        && root.estimate_text_size(title, &bold(size).color(&INK)).map(|(x, _)| x as i32).unwrap_or(0) + right_w + 60
            > w as i32
    {
        size -= 1.0;
    }
    root.draw_text(title, &bold(size).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)), (20, mid)).map_err(de)?;
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
    /// A shaded span.
    Shade,
    /// A character drawn as the key.
    Glyph(&'static str),
}

/// The legend's entries in rows that fit the figure's width: the indices of each row.
fn legend_rows(entries: &[(String, RGBColor, Key)]) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = 0;
    let room = WIDTH as i32 - 40;
    for (i, w) in entries.iter().map(|(label, _, _)| entry_width(label)).enumerate() {
        match rows.last_mut() {
            Some(row) if used + LEGEND_GAP + w <= room => {
                row.push(i);
                used += LEGEND_GAP + w;
            }
            _ => {
                rows.push(vec![i]);
                used = w;
            }
        }
    }
    rows
}

const LEGEND_KEY: i32 = 34;
const LEGEND_GAP: i32 = 22;

/// An entry's width: its key and its label.
fn entry_width(label: &str) -> i32 {
    let text = font(18.0).box_size(label).map(|(w, _)| w as i32).unwrap_or(9 * label.chars().count() as i32);
    LEGEND_KEY + 8 + text
}

/// The height of a legend strip for `entries` (none: no strip).
pub(crate) fn legend_height(entries: &[(String, RGBColor, Key)]) -> u32 {
    match legend_rows(entries).len() {
        0 => 0,
        1 => LEGEND,
        n => 20 + LEGEND_ROW * n as u32,
    }
}

/// A legend centred in `area`, in as many rows as its entries need.
pub(crate) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBColor, Key)],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let rows = legend_rows(entries);
    let (w, h) = area.dim_in_pixel();
    let top = h as i32 / 2 - (rows.len() as i32 - 1) * LEGEND_ROW as i32 / 2;
    for (ri, row) in rows.iter().enumerate() {
        let total: i32 =
            row.iter().map(|i| entry_width(&entries[*i].0)).sum::<i32>() + LEGEND_GAP * (row.len() as i32 - 1);
        let mut x = ((w as i32 - total) / 2).max(10);
        let y = top + ri as i32 * LEGEND_ROW as i32;
        for i in row {
            let (label, color, key) = &entries[*i];
            draw_key(area, *key, *color, x, y)?;
            area.draw_text(
                label,
                &font(18.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center)),
                (x + LEGEND_KEY + 8, y),
            )
            .map_err(de)?;
            x += entry_width(label) + LEGEND_GAP;
        }
    }
    Ok(())
}

/// A legend entry's key, `LEGEND_KEY` wide from `x`, centred on `y`.
fn draw_key<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, key: Key, color: RGBColor, x: i32, y: i32) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let key_w = LEGEND_KEY;
    match key {
        Key::Series(m) => {
            area.draw(&PathElement::new(vec![(x, y), (x + key_w, y)], color.stroke_width(3))).map_err(de)?;
            draw_marker(area, m, (x + key_w / 2, y), 6, color, true)?;
        }
        Key::Line => {
            area.draw(&PathElement::new(vec![(x, y), (x + key_w, y)], color.stroke_width(3))).map_err(de)?;
        }
        Key::Mark(m, filled) => draw_marker(area, m, (x + key_w / 2, y), 7, color, filled)?,
        Key::Dashed => {
            let mut px = x;
            while px < x + key_w {
                area.draw(&PathElement::new(vec![(px, y), ((px + 6).min(x + key_w), y)], color.stroke_width(2)))
                    .map_err(de)?;
                px += 10;
            }
        }
        Key::Glyph(g) => {
            area.draw_text(g, &font(20.0).color(&color).pos(Pos::new(HPos::Center, VPos::Center)), (x + key_w / 2, y))
                .map_err(de)?;
        }
        Key::Bar => area.draw(&Rectangle::new([(x + 4, y - 9), (x + key_w - 4, y + 9)], color.filled())).map_err(de)?,
        Key::Shade => {
            area.draw(&Rectangle::new([(x + 2, y - 11), (x + key_w - 2, y + 11)], color.filled())).map_err(de)?
        }
    }
    Ok(())
}

/// Splits the body into the panels' area and the legend strip below, as high as
/// `entries` need.
pub(crate) fn with_legend<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBColor, Key)],
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let (_, h) = body.dim_in_pixel();
    body.split_vertically(h.saturating_sub(legend_height(entries)))
}
