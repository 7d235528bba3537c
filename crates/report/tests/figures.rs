//! The figures as a reader meets them: one palette per meaning (the modes' colours come
//! from one function of `figures/style.rs`, and no other figure module defines a colour),
//! and the shipped campaign's figures fit a printed page, with the keys a reader needs.

use colloc_report::{outputs, Inputs, Layout, Output};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn figures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/figures")
}

/// Every figure module but `style.rs`, with its text.
fn figure_modules() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(figures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs") && p.file_name().is_some_and(|n| n != "style.rs"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    assert!(out.len() >= 10, "the figure modules: {:?}", out.iter().map(|(n, _)| n).collect::<Vec<_>>());
    out
}

/// The code of a module without its comments (a comment may name a colour).
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

#[test]
fn no_figure_module_but_style_defines_a_colour() {
    // plotters' named colours but white (backgrounds) and the constructors of colours.
    let forbidden = [
        "RGBColor(",
        "RGBAColor(",
        "HSLColor(",
        "&RED",
        "&BLUE",
        "&GREEN",
        "&CYAN",
        "&MAGENTA",
        "&YELLOW",
        "&BLACK",
        " RED",
        " BLUE",
        " GREEN",
        " CYAN",
        " MAGENTA",
        " YELLOW",
        " BLACK",
        "PALETTE",
    ];
    for (name, text) in figure_modules() {
        let code = code(&text);
        for f in forbidden {
            assert!(!code.contains(f), "figures/{name} uses `{}`: colours come from figures/style.rs", f.trim());
        }
        for line in code.lines() {
            assert!(
                !(line.contains("const ") && line.contains(": RGBColor")),
                "figures/{name} defines a colour constant: {line}"
            );
        }
    }
}

#[test]
fn one_function_gives_a_mode_its_colour_and_every_figure_of_modes_uses_it() {
    let all: Vec<(String, String)> = figure_modules()
        .into_iter()
        .chain(std::iter::once((
            "style.rs".to_string(),
            std::fs::read_to_string(figures_dir().join("style.rs")).unwrap(),
        )))
        .collect();
    let defined: Vec<&String> = all.iter().filter(|(_, t)| t.contains("fn mode_color(")).map(|(n, _)| n).collect();
    assert_eq!(defined, ["style.rs"], "mode_color is defined once, in style.rs");
    // A module that colours series or bars by mode takes the colour from mode_color.
    for (name, text) in &all {
        let code = code(text);
        if code.contains("Mode::Naive") || code.contains("Mode::Mps =>") {
            assert!(name == "style.rs", "figures/{name} matches modes itself");
        }
        if code.contains("colors: modes") || code.contains("color: mode") {
            assert!(code.contains("mode_color"), "figures/{name} colours modes without mode_color");
        }
    }
}

/// The shipped campaign's outputs, rendered once.
fn shipped() -> &'static Vec<Output> {
    static OUT: OnceLock<Vec<Output>> = OnceLock::new();
    OUT.get_or_init(|| {
        let project = colloc_spec::load_project(&root()).unwrap_or_else(|d| panic!("{d}"));
        let name = project.artifact.shipped_campaign.value.clone();
        let r = colloc_analysis::analyse(&root().join("data").join(&name), None).unwrap_or_else(|e| panic!("{e:#}"));
        outputs(&Inputs { results: &r, claims: &[], gpus: &[], paper_gpu: None, validation: None }, &Layout::default())
            .unwrap()
    })
}

fn svg(id: &str) -> String {
    let o = shipped().iter().find(|o| o.path == format!("figures/{id}.svg")).unwrap_or_else(|| panic!("no {id}"));
    String::from_utf8(o.bytes.clone()).unwrap()
}

/// The text lines of an SVG (plotters writes each text on a line of its own).
fn texts(svg: &str) -> Vec<String> {
    svg.lines().filter(|l| !l.starts_with('<')).map(str::to_string).collect()
}

#[test]
fn every_shipped_figure_fits_a_printed_page() {
    let pngs: Vec<&Output> =
        shipped().iter().filter(|o| o.path.starts_with("figures/") && o.path.ends_with(".png")).collect();
    assert!(pngs.len() >= colloc_report::FIGURES.len());
    for o in pngs {
        // The PNG header: width and height, big-endian, at bytes 16 and 20.
        let w = u32::from_be_bytes(o.bytes[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(o.bytes[20..24].try_into().unwrap());
        assert!(w <= 1200 && h <= 1800, "{} is {w}×{h} px, more than a page (1200×1800)", o.path);
    }
}

#[test]
fn the_mode_colours_mean_modes_only() {
    // Okabe–Ito orange, blue, green, vermillion: naive, MPS, MPS-limited, MIG.
    let modes = ["#E69F00", "#0072B2", "#009E73", "#D55E00"];
    for id in ["utilisation_timeline", "data_loading", "data_loading_mixes"] {
        let s = svg(id);
        for hex in modes {
            assert!(!s.contains(hex), "{id} uses the mode colour {hex} for something else");
        }
    }
    // The figures of modes use them (MPS is blue in each).
    for id in [
        "aggregate_ratio_vs_jobs",
        "epoch_time_vs_jobs",
        "sm_activity_vs_jobs",
        "memory_footprint",
        "energy_per_image",
        "mixes_by_mode",
    ] {
        assert!(svg(id).contains("#0072B2"), "{id} draws no MPS series in MPS blue");
    }
}

#[test]
fn the_shipped_figures_carry_the_keys_a_reader_needs() {
    // The stand-in is called one wherever a legend names it.
    for id in [
        "aggregate_ratio_vs_jobs",
        "epoch_time_vs_jobs",
        "sm_activity_vs_jobs",
        "memory_footprint",
        "energy_per_image",
        "mixes_by_mode",
    ] {
        let t = texts(&svg(id));
        assert!(t.iter().any(|l| l == "MPS-limited (MIG stand-in)"), "{id}: {t:?}");
        assert!(!t.iter().any(|l| l == "MPS-limited"), "{id} names MPS-limited without saying it stands in for MIG");
    }
    // SM activity: the model alone as a point of its own, and the line of every SM active.
    let activity = texts(&svg("sm_activity_vs_jobs"));
    for key in ["alone on the whole GPU", "every SM active (100 %)", "SM activity in the window (%)"] {
        assert!(activity.iter().any(|l| l == key), "sm_activity_vs_jobs lacks {key:?}: {activity:?}");
    }
    // The mixes: no key for MIG, never measured; each mix's no-interference level.
    let mixes = texts(&svg("mixes_by_mode"));
    assert!(!mixes.iter().any(|l| l == "MIG"), "{mixes:?}");
    assert!(mixes.iter().any(|l| l == "no interference (= number of jobs)"), "{mixes:?}");
    // The heatmap tells layouts that do not fit from cells not measured.
    let heat = texts(&svg("interference_heatmap"));
    assert!(heat.iter().any(|l| l == "infeasible (layout does not fit)"), "{heat:?}");
    // The timeline shades the measurement window and says so.
    let tl = texts(&svg("utilisation_timeline"));
    assert!(tl.iter().any(|l| l == "measurement window"), "{tl:?}");
    assert!(tl.iter().any(|l| l == "Time since the window opened (s)"), "{tl:?}");
    // Synthetic data beside the generated image files.
    for id in ["aggregate_ratio_vs_jobs", "mixes_by_mode", "utilisation_timeline", "interference_heatmap"] {
        let t = texts(&svg(id));
        assert!(t.iter().any(|l| l == "Synthetic data (GPU-bound control)"), "{id}: {t:?}");
        assert!(t.iter().any(|l| l == "Generated image files"), "{id}: {t:?}");
    }
    // The data loading figures head each model's or mix's rows.
    let dl = texts(&svg("data_loading"));
    assert!(dl.iter().any(|l| l.starts_with("resnet26 · cifar10 · b128 (exp. 33)")), "{dl:?}");
}
