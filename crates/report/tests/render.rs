//! Rendering a fixture campaign: every output present, deterministic, SIMULATED marked,
//! stale outputs detected, and the HTML report's figures load in a browser.

use colloc_analysis::testkit::{plan, write_campaign, FixtureOptions};
use colloc_analysis::{evaluate, ClaimOutcome};
use colloc_analysis::{Results, WorkloadForm};
use colloc_report::{outputs, stale, write, Inputs, Layout, Output};
use colloc_spec::gpu::GpuTable;
use colloc_trace::meta::RunStatus;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn project() -> colloc_spec::Project {
    colloc_spec::load_project(&root()).unwrap_or_else(|d| panic!("{d}"))
}

fn claims() -> Vec<colloc_spec::claims::ClaimSpec> {
    project().artifact.claims
}

/// The project's GPU tables.
fn gpus() -> Vec<GpuTable> {
    project().gpus.into_values().collect()
}

fn fixture(opts: FixtureOptions) -> (tempfile::TempDir, Results, Vec<ClaimOutcome>) {
    let d = tempfile::tempdir().unwrap();
    let dir = write_campaign(d.path(), &opts).unwrap();
    let r = colloc_analysis::analyse(&dir, Some(&plan(&opts).unwrap())).unwrap();
    let c = evaluate(&r, &claims()).unwrap();
    (d, r, c)
}

/// The GPU the paper measured on (artifact.yaml's `paper.gpu`).
fn paper_gpu_key() -> String {
    project().artifact.paper.gpu.value
}

fn render(r: &Results, c: &[ClaimOutcome], g: &[GpuTable]) -> Vec<Output> {
    let key = paper_gpu_key();
    let paper_gpu = g.iter().find(|t| t.key == key);
    outputs(&Inputs { results: r, claims: c, gpus: g, paper_gpu, validation: None }, &Layout::default()).unwrap()
}

#[test]
fn every_output_is_generated_deterministically_and_marked_simulated() {
    let (_d, r, c) = fixture(FixtureOptions::default());
    let g = gpus();
    let a = render(&r, &c, &g);
    let b = render(&r, &c, &g);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.path, y.path);
        assert!(x.bytes == y.bytes, "{} differs between two renders", x.path);
    }
    let paths: Vec<&str> = a.iter().map(|o| o.path.as_str()).collect();
    for t in [
        "hardware",
        "hosts",
        "mig_profiles",
        "experiment_matrix",
        "baselines",
        "homogeneous",
        "mixes",
        "interference",
        "utilisation",
        "claims",
    ] {
        for ext in ["tex", "csv", "md"] {
            assert!(paths.contains(&format!("paper/tables/{t}.{ext}").as_str()), "paper/tables/{t}.{ext}");
        }
    }
    for f in colloc_report::FIGURES {
        assert!(paths.contains(&format!("figures/{}.svg", f.id()).as_str()));
        assert!(paths.contains(&format!("figures/{}.png", f.id()).as_str()));
    }
    assert!(paths.contains(&"paper/claims.md") && paths.contains(&"paper/report.html"));
    for o in &a {
        if o.path.ends_with(".png") {
            assert_eq!(&o.bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", o.path);
            continue;
        }
        let text = String::from_utf8(o.bytes.clone()).unwrap();
        assert!(text.contains("SIMULATED"), "{} does not say SIMULATED", o.path);
    }
    // The paper's numbers appear in the claims only.
    let svg =
        String::from_utf8(a.iter().find(|o| o.path == "figures/aggregate_ratio_vs_jobs.svg").unwrap().bytes.clone())
            .unwrap();
    assert!(!svg.contains("4×") && !svg.contains("paper"));
    let md = String::from_utf8(a.iter().find(|o| o.path == "paper/claims.md").unwrap().bytes.clone()).unwrap();
    assert!(md.contains("## C7") && md.contains("not run"), "{md}");
}

#[test]
fn stale_outputs_are_detected() {
    let (_d, r, c) = fixture(FixtureOptions { repetitions: 1, ..Default::default() });
    let g = gpus();
    let out = render(&r, &c, &g);
    let layout = Layout::default();
    let target = tempfile::tempdir().unwrap();
    write(target.path(), &out, &layout).unwrap();
    assert!(stale(target.path(), &out, &layout).unwrap().is_empty());
    // Written again: nothing changes.
    assert!(write(target.path(), &out, &layout).unwrap().is_empty());

    std::fs::write(target.path().join("paper/tables/mixes.csv"), "edited\n").unwrap();
    std::fs::remove_file(target.path().join("figures/data_loading.png")).unwrap();
    std::fs::write(target.path().join("figures/old_figure.svg"), "<svg/>").unwrap();
    let s = stale(target.path(), &out, &layout).unwrap();
    assert!(s.contains(&"paper/tables/mixes.csv: differs from what the traces give".to_string()), "{s:?}");
    assert!(s.contains(&"figures/data_loading.png: missing".to_string()), "{s:?}");
    assert!(s.contains(&"figures/old_figure.svg: no longer generated".to_string()), "{s:?}");
    write(target.path(), &out, &layout).unwrap();
    assert!(stale(target.path(), &out, &layout).unwrap().is_empty());
}

#[test]
fn a_figure_without_data_says_so() {
    let (_d, mut r, c) = fixture(FixtureOptions { repetitions: 1, ..Default::default() });
    r.workloads.retain(|w| !matches!(w.form, WorkloadForm::Mix { .. }));
    r.interference.clear();
    r.timelines.clear();
    let out = render(&r, &c, &[]);
    for id in ["mixes_by_mode", "interference_heatmap", "utilisation_timeline"] {
        let svg = String::from_utf8(out.iter().find(|o| o.path == format!("figures/{id}.svg")).unwrap().bytes.clone())
            .unwrap();
        assert!(svg.contains("No data in this campaign"), "{id}");
    }
    // Without GPU tables the MIG profile table still renders, saying what is missing.
    let md = String::from_utf8(out.iter().find(|o| o.path == "paper/tables/mig_profiles.md").unwrap().bytes.clone())
        .unwrap();
    assert!(md.contains("has no MIG profile table"), "{md}");
}

#[test]
fn the_report_loads_every_figure_in_chromium() {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        eprintln!("\n!!!!!!!! SKIPPED: /usr/bin/chromium is absent, the HTML report was not opened in a browser (apt-get install -y chromium) !!!!!!!!\n");
        return;
    }
    let (_d, r, c) = fixture(FixtureOptions { repetitions: 1, ..Default::default() });
    let out = render(&r, &c, &gpus());
    let html = out.iter().find(|o| o.path == "paper/report.html").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html.bytes).unwrap();
    let dom = open_in_chromium(chromium, dir.path(), &page);
    let n = colloc_report::FIGURES.len();
    assert!(dom.contains(&format!("data-figures=\"{n}\"")), "expected {n} figures");
    assert!(
        dom.contains("data-broken=\"\""),
        "broken figures: {}",
        dom.split("data-broken=\"").nth(1).unwrap_or("").split('"').next().unwrap_or("")
    );
    check_print_width(&dom);
    // The committed report of the shipped campaign, as a committee opens it.
    let shipped = root().join("paper/report.html");
    let dom = open_in_chromium(chromium, dir.path(), &shipped);
    check_print_width(&dom);
}

/// At the width of an A4 landscape page's print area (1040 CSS pixels), no table is wider
/// than the page (a printed page would cut its columns); the grades carry their colours'
/// classes and the glossary lists every term.
fn check_print_width(dom: &str) {
    let attr =
        |name: &str| dom.split(&format!("{name}=\"")).nth(1).unwrap_or("").split('"').next().unwrap_or("").to_string();
    assert_eq!(attr("data-overflow"), "", "tables wider than a printed page");
    assert!(attr("data-grades").parse::<usize>().unwrap_or(0) > 0, "no grade carries its class");
    assert_eq!(attr("data-glossary"), colloc_report::glossary::GLOSSARY.len().to_string(), "the glossary");
}

/// The page's DOM after its check script ran, in a window 1040 pixels wide.
fn open_in_chromium(chromium: &Path, scratch: &Path, page: &Path) -> String {
    let profile = scratch.join("profile");
    let run = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--window-size=1040,1400")
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        dom.contains("data-checked=\"yes\""),
        "{}: the page's check did not run; stderr: {}",
        page.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    dom
}

/// Renders a fixture (or the campaign at `$COLLOC_CAMPAIGN_DIR`) into `$COLLOC_REPORT_KEEP`
/// for a look, when set.
#[test]
fn keep_a_rendering_when_asked() {
    let Ok(dest) = std::env::var("COLLOC_REPORT_KEEP") else { return };
    let (_d, r, c) = match std::env::var("COLLOC_CAMPAIGN_DIR") {
        Ok(dir) => {
            let r = colloc_analysis::analyse(Path::new(&dir), None).unwrap();
            let c = evaluate(&r, &claims()).unwrap();
            (tempfile::tempdir().unwrap(), r, c)
        }
        Err(_) => fixture(FixtureOptions { full: true, window_seconds: 25, ..Default::default() }),
    };
    let out = render(&r, &c, &gpus());
    write(Path::new(&dest), &out, &Layout::default()).unwrap();
    print!("{}", colloc_report::claims_console(&c));
}

#[test]
fn an_out_of_memory_workload_reads_oom_with_its_reason_once_in_the_notes() {
    let (_d, r, c) = fixture(FixtureOptions { repetitions: 1, full: true, ..FixtureOptions::default() });
    let ooms: Vec<_> = r.workloads.iter().filter(|w| w.out_of_memory()).collect();
    assert!(!ooms.is_empty(), "the full fixture has workloads that run out of memory");
    let outs = render(&r, &c, &gpus());
    let md = |name: &str| {
        let o = outs.iter().find(|o| o.path.ends_with(name)).unwrap_or_else(|| panic!("no {name}"));
        String::from_utf8(o.bytes.clone()).unwrap()
    };
    let matrix = md("experiment_matrix.md");
    assert!(matrix.contains("| OOM 0/1 |"), "{matrix}");
    let notes: Vec<&str> = matrix.lines().filter(|l| l.starts_with("- OOM (")).collect();
    assert!(!notes.is_empty(), "{matrix}");
    for n in &notes {
        assert!(n.to_lowercase().contains("out of memory") && !n.contains("stderr"), "{n}");
    }
    let homogeneous = md("homogeneous.md");
    if ooms.iter().any(|w| w.homogeneous() && !matches!(w.form, WorkloadForm::Mix { .. })) {
        assert!(homogeneous.contains("| OOM |"), "{homogeneous}");
    }
    // The figures over job counts mark it too, with a legend entry.
    if ooms.iter().any(|w| w.homogeneous() && !matches!(w.form, WorkloadForm::Mix { .. }) && w.data == r.primary_data) {
        let svg = md("aggregate_ratio_vs_jobs.svg");
        assert!(svg.contains("out of memory"), "the aggregate figure does not mark the out-of-memory workloads");
    }
    // Each distinct reason once: no note line repeats.
    let mut lines: Vec<&str> = matrix.lines().filter(|l| l.starts_with("- ")).collect();
    let n = lines.len();
    lines.sort();
    lines.dedup();
    assert_eq!(lines.len(), n);
}

/// A collocated workload whose every run failed for another reason than memory (a training
/// that diverged) has no value to draw: the figures over job counts mark its job count on
/// the axis, with a legend entry, as they mark one that ran out of memory.
#[test]
fn a_workload_that_failed_otherwise_is_marked_in_the_figures_over_job_counts() {
    let (_d, mut r, c) = fixture(FixtureOptions { repetitions: 1, ..FixtureOptions::default() });
    let svg = |r: &Results| {
        let outs = render(r, &c, &gpus());
        let o = outs.iter().find(|o| o.path.ends_with("aggregate_ratio_vs_jobs.svg")).expect("the figure");
        String::from_utf8(o.bytes.clone()).unwrap()
    };
    let legend = "failed, not out of memory";
    assert!(!svg(&r).contains(legend), "the fixture has no such failure");
    let primary = r.primary_data.clone();
    let w = r
        .workloads
        .iter_mut()
        .find(|w| w.n_jobs() > 1 && w.homogeneous() && w.data == primary && w.stats.aggregate_ratio.is_some())
        .expect("a collocated workload of the main data");
    w.status = RunStatus::Failed;
    w.reasons = vec!["job 0 (resnet26): error: the training loss is nan at step 12".to_string()];
    w.stats.aggregate_ratio = None;
    assert!(!w.out_of_memory());
    assert!(svg(&r).contains(legend), "the figure does not mark the failed workload");
}

/// One row per host (GPU UUID) with its runs: the ok runs of the rows add up to the
/// campaign's, each host's runner commit is named.
#[test]
fn the_hosts_table_accounts_for_every_run() {
    let (_d, r, c) = fixture(FixtureOptions::default());
    let outs = render(&r, &c, &gpus());
    let csv =
        String::from_utf8(outs.iter().find(|o| o.path == "paper/tables/hosts.csv").unwrap().bytes.clone()).unwrap();
    let mut hosts: Vec<&str> = r.runs.iter().filter_map(|x| x.host_id.as_deref()).collect();
    hosts.sort();
    hosts.dedup();
    assert!(!hosts.is_empty());
    let rows: Vec<&str> = csv.lines().filter(|l| !l.starts_with('#')).skip(1).collect();
    assert_eq!(rows.len(), hosts.len() + usize::from(r.runs.iter().any(|x| x.host_id.is_none())), "{csv}");
    let mut ok = 0;
    for row in &rows {
        // `GPU-…,"12 of 14",…`: the ok count is the second cell's first number.
        let cells: Vec<&str> = row.split(',').collect();
        ok += cells[1].trim_matches('"').split(' ').next().unwrap().parse::<usize>().unwrap();
    }
    assert_eq!(ok, r.runs.iter().filter(|x| x.status == RunStatus::Ok).count(), "{csv}");
    for h in hosts {
        assert!(csv.contains(h), "{h} missing: {csv}");
    }
}

#[test]
fn the_data_loading_figure_names_each_configuration_on_its_own_row() {
    let (_d, r, c) = fixture(FixtureOptions::default());
    let outs = render(&r, &c, &gpus());
    let svg =
        String::from_utf8(outs.iter().find(|o| o.path == "figures/data_loading.svg").unwrap().bytes.clone()).unwrap();
    // The fixture measures resnet26 alone and 7 × resnet26 naive and MPS on both data sources.
    for row in ["1 job · alone", "7 jobs · naive", "7 jobs · MPS"] {
        let texts: Vec<&str> = svg.lines().filter(|l| !l.starts_with('<')).collect();
        assert_eq!(texts.iter().filter(|t| **t == row).count(), 1, "{row} in {texts:?}");
    }
    assert!(svg.contains("synthetic data") && svg.contains("generated data"));
}

#[test]
fn the_interference_heatmap_prints_every_measured_cell_of_the_main_data() {
    let (_d, r, c) = fixture(FixtureOptions { repetitions: 1, full: true, ..FixtureOptions::default() });
    let outs = render(&r, &c, &gpus());
    let svg =
        String::from_utf8(outs.iter().find(|o| o.path == "figures/interference_heatmap.svg").unwrap().bytes.clone())
            .unwrap();
    let texts: Vec<&str> = svg.lines().filter(|l| !l.starts_with('<')).collect();
    let cells: Vec<_> = r.interference.iter().filter(|c| c.data == r.primary_data).collect();
    assert!(cells.iter().any(|c| c.normalised_throughput.is_some()), "the fixture measures some mix");
    for cell in &cells {
        assert!(texts.contains(&cell.mix.as_str()), "column {} missing", cell.mix);
        if let Some(s) = cell.normalised_throughput {
            let v = format!("{:.2}", s.median);
            assert!(texts.contains(&v.as_str()), "{} {} {}: {v} missing", cell.mode, cell.mix, cell.class);
        }
    }
    assert!(texts.contains(&"Throughput over the model alone (×)") && svg.contains("SIMULATED"));
}
