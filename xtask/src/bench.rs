//! `cargo xtask bench [--quick]`: measured figures, each beside a baseline measured in the
//! same run, with the ratio: verification of a campaign against `sha256sum -c` of the same
//! files (the floor: every byte must be read and hashed once), and the whole verify + analyse
//! of scaled copies of the campaign against the same floor (time, ms per run, peak memory).

use anyhow::{ensure, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Fewer repetitions and smaller scaled copies (under half a minute).
    #[arg(long)]
    pub quick: bool,
    /// The campaign to verify (default: the shipped one).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Sizes of the generated campaigns, in whole-GPU telemetry samples (default: 1e5 with
    /// `--quick`, else 1e6,1e7); `0` generates none.
    #[arg(long, value_delimiter = ',', value_name = "N,..")]
    pub samples: Vec<f64>,
    /// Where the generated campaigns are written, and kept (default: a temporary directory
    /// in the target directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// Median of the seconds `f` takes, over `n` runs after one unmeasured warm-up run.
fn median_seconds(n: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut t = Vec::with_capacity(n);
    for _ in 0..n {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn sha256sum_check(dir: &Path) -> Result<()> {
    let st = Command::new("sha256sum")
        .args(["-c", "--quiet", "--strict", colloc_trace::layout::MANIFEST])
        .current_dir(dir)
        .status()
        .context("cannot run sha256sum (coreutils)")?;
    ensure!(st.success(), "sha256sum -c failed in {}", dir.display());
    Ok(())
}

fn ours(dir: &Path, threads: usize) -> Result<()> {
    let p = colloc_trace::manifest::verify_with_threads(dir, threads)?;
    ensure!(p.is_empty(), "{}: {} problem(s), first: {}", dir.display(), p.len(), p[0]);
    Ok(())
}

/// A campaign made of `copies` copies of `src`'s runs, each a valid run of its own: copy `k`
/// of repetition `r` is repetition `r + 1000 k` (its directory and `meta.json` renamed to
/// match), so the copies verify and analyse as one campaign `copies` times as large.
fn scaled_copy(src: &Path, copies: usize, into: &Path) -> Result<PathBuf> {
    let dir = into.join(format!("x{copies}"));
    let runs = src.join(colloc_trace::layout::RUNS_DIR);
    let mut names: Vec<_> = std::fs::read_dir(&runs)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    names.sort();
    for k in 0..copies {
        for from in &names {
            let meta = from.join(colloc_trace::layout::META);
            let text = colloc_trace::limits::read_file_text(&meta, colloc_trace::limits::MAX_META_BYTES)
                .map_err(|e| anyhow::anyhow!("{}: {e}", meta.display()))?;
            let mut meta: serde_json::Value = serde_json::from_str(&text)?;
            let id = meta["workload_id"].as_str().context("meta.json without a workload_id")?.to_string();
            let rep = meta["repetition"].as_u64().context("meta.json without a repetition")? + 1000 * k as u64;
            let attempt = meta["attempt"].as_u64().unwrap_or(1);
            let run_id = colloc_trace::ids::run_id(&id, rep as u32, attempt as u32);
            meta["repetition"] = rep.into();
            meta["run_id"] = run_id.clone().into();
            let to = dir.join(colloc_trace::layout::RUNS_DIR).join(&run_id);
            std::fs::create_dir_all(&to)?;
            for f in std::fs::read_dir(from)? {
                let f = f?;
                if f.file_name() != colloc_trace::layout::META {
                    std::fs::copy(f.path(), to.join(f.file_name()))?;
                }
            }
            std::fs::write(to.join(colloc_trace::layout::META), serde_json::to_string_pretty(&meta)? + "\n")?;
        }
    }
    colloc_trace::manifest::add_dir(&dir, colloc_trace::layout::RUNS_DIR)?;
    Ok(dir)
}

fn size_of(dir: &Path) -> Result<(usize, u64)> {
    let m = colloc_trace::manifest::read(dir)?;
    let bytes = m.keys().map(|k| std::fs::metadata(dir.join(k)).map(|md| md.len()).unwrap_or(0)).sum();
    Ok((m.len(), bytes))
}

fn verification(label: &str, dir: &Path, reps: usize) -> Result<()> {
    let (files, bytes) = size_of(dir)?;
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("verify {label}: {files} files, {:.1} MB, warm page cache, median of {reps} runs", bytes as f64 / 1e6);
    let base = median_seconds(reps, || sha256sum_check(dir))?;
    println!("  {:<28} {:>8.3} s   (baseline)", "sha256sum -c", base);
    let mut threads = vec![1];
    if cores > 1 {
        threads.push(cores);
    }
    for t in threads {
        let s = median_seconds(reps, || ours(dir, t))?;
        println!(
            "  {:<28} {:>8.3} s   {:.2}× the baseline's speed",
            format!("ours, {t} thread{}", if t == 1 { "" } else { "s" }),
            s,
            base / s
        );
    }
    Ok(())
}

/// `cargo xtask bench-analyse-child DIR [--campaign NAME]` (hidden): verify and analyse the
/// campaign in DIR as `reproduce` does (with the plan of campaign NAME), evaluate the claims
/// and render the outputs in memory; print one line of `key=value` figures for the parent
/// (`runs`, `analyse_s`, `render_s`, `peak_kb`: this process' peak resident memory, and
/// `analysed_peak_kb`: the same once analysed, before the claims and the render).
#[derive(clap::Args)]
pub struct ChildArgs {
    pub dir: PathBuf,
    #[arg(long)]
    pub campaign: Option<String>,
    /// Also write the per-run and per-workload values the pandas script computes, as JSON.
    #[arg(long)]
    pub dump: Option<PathBuf>,
}

pub fn child_main(a: ChildArgs) -> Result<ExitCode> {
    let root = crate::project_root()?;
    let project = colloc_spec::load_project(&root)?;
    let artifact = &project.artifact;
    let plan = match &a.campaign {
        Some(name) => Some(colloc_plan::plan_project_campaign(&project, name, None)?),
        None => None,
    };
    let t0 = Instant::now();
    let results = colloc_analysis::analyse(&a.dir, plan.as_ref())?;
    let analyse_s = t0.elapsed().as_secs_f64();
    let analysed_peak_kb = peak_kb();
    if let Some(path) = &a.dump {
        std::fs::write(path, serde_json::to_vec(&crate::scale::dump(&results)?)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let t1 = Instant::now();
    let claims = colloc_analysis::evaluate(&results, &artifact.claims)?;
    let outputs = colloc_reproduce::report_outputs(&project, &results, &claims, None)?;
    let render_s = t1.elapsed().as_secs_f64();
    let peak_kb = peak_kb();
    println!(
        "runs={} analyse_s={analyse_s:.6} render_s={render_s:.6} outputs={} analysed_peak_kb={analysed_peak_kb} peak_kb={peak_kb}",
        results.runs.len(),
        outputs.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// This process' peak resident memory so far (`VmHWM`), in kB.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
}

/// One run of the child on `dir`: (runs, analyse s, render s, peak kB).
fn child_once(dir: &Path, campaign: &str) -> Result<(usize, f64, f64, u64)> {
    child(dir, Some(campaign), None)
}

/// The child on `dir`, with the plan of `campaign` when given, dumping its values to `dump`.
fn child(dir: &Path, campaign: Option<&str>, dump: Option<&Path>) -> Result<(usize, f64, f64, u64)> {
    let exe = std::env::current_exe().context("cannot find the xtask binary")?;
    let mut cmd = Command::new(exe);
    cmd.arg("--root").arg(crate::project_root()?).arg("bench-analyse-child");
    if let Some(c) = campaign {
        cmd.args(["--campaign", c]);
    }
    if let Some(d) = dump {
        cmd.arg("--dump").arg(d);
    }
    let out = cmd.arg(dir).output().context("cannot run the analysis child process")?;
    ensure!(
        out.status.success(),
        "the analysis of {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let get = crate::scale::figures_line(&out.stdout, "the child");
    Ok((get("runs")? as usize, get("analyse_s")?, get("render_s")?, get("peak_kb")? as u64))
}

/// Figures of the analysis of one campaign size.
struct Scale {
    copies: usize,
    runs: usize,
    sha: f64,
    analyse: f64,
    render: f64,
    peak_kb: u64,
}

/// `sha256sum -c` against verify + analyse (child process, median of `reps`) of `dir`.
fn analysis_at(copies: usize, dir: &Path, campaign: &str, reps: usize) -> Result<Scale> {
    let sha = median_seconds(reps, || sha256sum_check(dir))?;
    child_once(dir, campaign)?; // warm-up
    let mut runs = Vec::new();
    for _ in 0..reps {
        runs.push(child_once(dir, campaign)?);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok(Scale {
        copies,
        runs: runs[0].0,
        sha,
        analyse: median(runs.iter().map(|r| r.1).collect()),
        render: median(runs.iter().map(|r| r.2).collect()),
        peak_kb: runs.iter().map(|r| r.3).max().unwrap_or(0),
    })
}

fn analysis_section(name: &str, sizes: &[(usize, PathBuf)], reps: usize) -> Result<()> {
    println!(
        "analysis at scale: verify + analyse (`colloc_analysis::analyse` with the plan, as `reproduce` calls it) \
         in a child process, then claims + render in memory; warm page cache, median of {reps} runs"
    );
    println!(
        "  {:>6} {:>6} {:>7} {:>10} {:>12} {:>7} {:>9} {:>9} {:>8}",
        "copies", "runs", "files", "sha256sum", "ver+analyse", "ratio", "ms/run", "render", "peak MB"
    );
    let mut done: Vec<Scale> = Vec::new();
    for (copies, dir) in sizes {
        let (files, _) = size_of(dir)?;
        let s = analysis_at(*copies, dir, name, reps)?;
        println!(
            "  {:>6} {:>6} {:>7} {:>8.3} s {:>10.3} s {:>6.1}× {:>9.2} {:>7.3} s {:>8.0}",
            s.copies,
            s.runs,
            files,
            s.sha,
            s.analyse,
            s.analyse / s.sha,
            s.analyse * 1e3 / s.runs as f64,
            s.render,
            s.peak_kb as f64 / 1024.0
        );
        done.push(s);
    }
    for w in done.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let marginal = (b.analyse - a.analyse) * 1e3 / (b.runs - a.runs) as f64;
        println!(
            "  growth {}→{} copies: runs ×{:.1}, time ×{:.2}, {:.2} ms per added run (sha256sum: ×{:.2})",
            a.copies,
            b.copies,
            b.runs as f64 / a.runs as f64,
            b.analyse / a.analyse,
            marginal,
            b.sha / a.sha
        );
    }
    Ok(())
}

/// Generated campaigns of `samples` telemetry rows each: time and peak memory of our verify +
/// analyse + render (child process) and of the pandas script on the same files, beside
/// `sha256sum -c`, and the check that both computed the same numbers.
fn generated_section(root: &Path, sizes: &[f64], scratch: &Path, keep: bool) -> Result<()> {
    let pandas = crate::scale::pandas_available();
    println!(
        "generated campaigns (the whole h200-quick plan, {} repetitions, protocol 2, telemetry and process samples at {} Hz): \
         ours = verify + analyse + claims + render in memory (child process); pandas = benchmarks/pandas_analysis.py \
         (the same per-run and per-workload aggregates); one run each, warm page cache",
        2,
        crate::scale::SAMPLE_HZ
    );
    if let Err(why) = &pandas {
        println!("  pandas: not measured: {why}");
    }
    println!(
        "  {:>8} {:>5} {:>7} {:>7} {:>9} {:>9} {:>10} {:>8} {:>10} {:>8} {:>8} {:>10}",
        "samples",
        "runs",
        "window",
        "MB",
        "generate",
        "sha256sum",
        "ours",
        "peak MB",
        "pandas",
        "peak MB",
        "speed-up",
        "ours/sha"
    );
    let mut prev: Option<(u64, f64, f64)> = None;
    for &n in sizes {
        let g = crate::scale::generate(root, n, scratch)?;
        let (files, bytes) = size_of(&g.dir)?;
        let sha = median_seconds(1, || sha256sum_check(&g.dir))?;
        let ours_json = g.dir.with_extension("ours.json");
        let t = Instant::now();
        let (runs, _, _, peak) = child(&g.dir, None, Some(&ours_json))?;
        let ours = t.elapsed().as_secs_f64();
        let (pandas_cell, pandas_peak, speedup, agree) = match &pandas {
            Ok(()) => {
                let theirs_json = g.dir.with_extension("pandas.json");
                let p = crate::scale::pandas(root, &g.dir, &theirs_json)?;
                let read = |f: &Path| -> Result<serde_json::Value> {
                    Ok(serde_json::from_slice(
                        &std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?,
                    )?)
                };
                let a = crate::scale::agreement(&read(&ours_json)?, &read(&theirs_json)?)
                    .context("ours and pandas' values differ in shape")?;
                ensure!(p.runs > 0, "the pandas script found no ok run");
                (
                    format!("{:.3} s", p.wall),
                    format!("{:.0}", p.peak_kb as f64 / 1024.0),
                    format!("{:.1}×", p.wall / ours),
                    Some(a),
                )
            }
            Err(_) => ("—".into(), "—".into(), "—".into(), None),
        };
        println!(
            "  {:>8.0e} {:>5} {:>6}s {:>7.0} {:>7.1} s {:>7.3} s {:>8.3} s {:>8.0} {:>10} {:>8} {:>8} {:>9.1}×",
            g.samples as f64,
            runs,
            g.window_seconds,
            bytes as f64 / 1e6,
            g.seconds,
            sha,
            ours,
            peak as f64 / 1024.0,
            pandas_cell,
            pandas_peak,
            speedup,
            ours / sha
        );
        println!(
            "           {} ok runs, {files} files, {} telemetry rows{}",
            g.ok_runs,
            g.samples,
            match &agree {
                Some(a) => format!(
                    "; ours and pandas agree on {} values, largest relative difference {:.1e}{}",
                    a.values,
                    a.max_rel,
                    if a.max_rel > 0.0 { format!(" ({})", a.worst) } else { String::new() }
                ),
                None => String::new(),
            }
        );
        if let Some(a) = &agree {
            ensure!(a.max_rel <= 1e-9, "ours and pandas differ by {:.3e}: {}", a.max_rel, a.worst);
        }
        if let Some((s0, o0, sh0)) = prev {
            println!(
                "           growth: samples ×{:.1}, ours ×{:.2}, sha256sum ×{:.2}",
                g.samples as f64 / s0 as f64,
                ours / o0,
                sha / sh0
            );
        }
        prev = Some((g.samples, ours, sha));
        if keep {
            println!("           kept in {}", g.dir.display());
        } else {
            std::fs::remove_dir_all(g.dir.parent().unwrap_or(&g.dir))
                .with_context(|| format!("cannot remove {}", g.dir.display()))?;
        }
    }
    Ok(())
}

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root()?;
    let project = colloc_spec::load_project(&root)?;
    let name = a.campaign.unwrap_or_else(|| project.artifact.shipped_campaign.value.clone());
    let dir = colloc_reproduce::campaign_dir(&project.artifact, &root, &name);
    let reps = if a.quick { 3 } else { 9 };
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("machine: {cores} core(s) available to this process");
    verification(&format!("data/{name}"), &dir, reps)?;
    let copies = if a.quick { 3 } else { 10 };
    // Scratch space beside the build: the target directory (CARGO_TARGET_DIR when set).
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let tmp = tempfile::tempdir_in(&target)
        .with_context(|| format!("cannot make a temporary directory in {}", target.display()))?;
    let big = scaled_copy(&dir, copies, tmp.path())?;
    verification(&format!("{copies} copies of data/{name}"), &big, reps)?;
    let mut sizes = vec![(1, dir.clone())];
    if !a.quick {
        sizes.push((3, scaled_copy(&dir, 3, tmp.path())?));
    }
    sizes.push((copies, big));
    analysis_section(&name, &sizes, 3)?;
    let samples: Vec<f64> = match (a.samples.as_slice(), a.quick) {
        ([], true) => vec![1e5],
        ([], false) => vec![1e6, 1e7],
        (s, _) => s.iter().copied().filter(|n| *n > 0.0).collect(),
    };
    if !samples.is_empty() {
        let own;
        let scratch = match &a.scratch {
            Some(d) => {
                std::fs::create_dir_all(d).with_context(|| format!("cannot make {}", d.display()))?;
                d.as_path()
            }
            None => {
                own = tempfile::tempdir_in(&target)?;
                own.path()
            }
        };
        generated_section(&root, &samples, scratch, a.scratch.is_some())?;
    }
    Ok(ExitCode::SUCCESS)
}
