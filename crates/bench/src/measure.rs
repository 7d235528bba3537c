//! The benchmarks (`cargo xtask bench [--quick]`): measured figures, each beside a baseline measured in the
//! same run, with the ratio: verification of a campaign against `sha256sum -c` of the same
//! files (the floor: every byte must be read and hashed once), the whole verify + analyse
//! of scaled copies of the campaign against the same floor (time, ms per run, peak memory),
//! and, on generated campaigns, ours against its peers (pandas, DuckDB and polars scripts that
//! compute the same aggregates from the same files, `scale`), all held to agree to 1e-9.

use anyhow::{ensure, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What `cargo xtask bench` measures.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Fewer repetitions and smaller scaled copies (under half a minute).
    pub quick: bool,
    /// The campaign to verify (default: the shipped one).
    pub campaign: Option<String>,
    /// Sizes of the generated campaigns, in whole-GPU telemetry samples (default: 1e5 with
    /// `quick`, else 1e6,1e7); `0` generates none.
    pub samples: Vec<f64>,
    /// Where the generated campaigns are written, and kept (default: a temporary directory
    /// in the target directory, removed afterwards).
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
pub fn child_main(root: &Path, dir: &Path, campaign: Option<&str>, dump: Option<&Path>) -> Result<()> {
    let project = colloc_spec::load_project(root)?;
    let artifact = &project.artifact;
    let plan = match campaign {
        Some(name) => Some(colloc_plan::plan_project_campaign(&project, name, None)?),
        None => None,
    };
    let t0 = Instant::now();
    let results = colloc_analysis::analyse(dir, plan.as_ref())?;
    let analyse_s = t0.elapsed().as_secs_f64();
    let analysed_peak_kb = peak_kb();
    if let Some(path) = dump {
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
    Ok(())
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

/// What one run of the analysis child printed.
struct ChildRun {
    runs: usize,
    /// Verify + analyse (`colloc_analysis::analyse`), seconds.
    analyse: f64,
    /// Claims + render in memory, seconds.
    render: f64,
    /// The child's peak resident memory, kB.
    peak_kb: u64,
    /// The same once analysed, before the claims and the render.
    analysed_peak_kb: u64,
}

/// One run of the child on `dir`, with the plan of `campaign`.
fn child_once(root: &Path, dir: &Path, campaign: &str) -> Result<ChildRun> {
    child(root, dir, Some(campaign), None)
}

/// The child on `dir`, with the plan of `campaign` when given, dumping its values to `dump`.
fn child(root: &Path, dir: &Path, campaign: Option<&str>, dump: Option<&Path>) -> Result<ChildRun> {
    let exe = std::env::current_exe().context("cannot find the xtask binary")?;
    let mut cmd = Command::new(exe);
    cmd.arg("--root").arg(root).arg("bench-analyse-child");
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
    Ok(ChildRun {
        runs: get("runs")? as usize,
        analyse: get("analyse_s")?,
        render: get("render_s")?,
        peak_kb: get("peak_kb")? as u64,
        analysed_peak_kb: get("analysed_peak_kb")? as u64,
    })
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
fn analysis_at(root: &Path, copies: usize, dir: &Path, campaign: &str, reps: usize) -> Result<Scale> {
    let sha = median_seconds(reps, || sha256sum_check(dir))?;
    child_once(root, dir, campaign)?; // warm-up
    let mut runs = Vec::new();
    for _ in 0..reps {
        runs.push(child_once(root, dir, campaign)?);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok(Scale {
        copies,
        runs: runs[0].runs,
        sha,
        analyse: median(runs.iter().map(|r| r.analyse).collect()),
        render: median(runs.iter().map(|r| r.render).collect()),
        peak_kb: runs.iter().map(|r| r.peak_kb).max().unwrap_or(0),
    })
}

fn analysis_section(root: &Path, name: &str, sizes: &[(usize, PathBuf)], reps: usize) -> Result<()> {
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
        let s = analysis_at(root, *copies, dir, name, reps)?;
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

/// One peer's figures on one generated campaign, and how its values compare with ours.
struct PeerFigures {
    peer: &'static crate::scale::Peer,
    run: crate::scale::PeerRun,
    agree: crate::scale::Agreement,
    dump: serde_json::Value,
}

/// Every engine's figures on one generated campaign.
struct SizeFigures {
    g: crate::scale::Generated,
    files: usize,
    bytes: u64,
    sha: f64,
    /// `colloc_trace::manifest::verify` alone, in this process (`analyse` hashes each file as it
    /// reads it, in the same pass, so this is what a verification apart would cost).
    verify: f64,
    /// Wall time around our child process (verify + analyse + claims + render, start included).
    ours_wall: f64,
    ours: ChildRun,
    peers: Vec<PeerFigures>,
    /// The peers whose script did not succeed, kept with their reasons.
    failed: Vec<(&'static crate::scale::Peer, crate::scale::PeerFailure)>,
}

impl SizeFigures {
    /// Ours without the verification that the peers do not do: less a verification apart
    /// (an estimate, since `analyse` hashes the bytes it reads in the same pass).
    fn analyse_alone(&self) -> f64 {
        (self.ours.analyse - self.verify).max(0.0)
    }
}

fn read_json(f: &Path) -> Result<serde_json::Value> {
    Ok(serde_json::from_slice(&std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?)?)
}

/// Generates a campaign of `n` samples and measures, one after another on a warm page cache,
/// `sha256sum -c`, our verification alone, our child, then every available peer; each peer's
/// values must agree with ours to 1e-9.
fn measure_size(root: &Path, n: f64, scratch: &Path, peers: &[&'static crate::scale::Peer]) -> Result<SizeFigures> {
    let g = crate::scale::generate(root, n, scratch)?;
    let (files, bytes) = size_of(&g.dir)?;
    let sha = median_seconds(1, || sha256sum_check(&g.dir))?;
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let verify = median_seconds(1, || ours(&g.dir, cores))?;
    let ours_json = g.dir.with_extension("ours.json");
    let t = Instant::now();
    let ours_run = child(root, &g.dir, None, Some(&ours_json))?;
    let ours_wall = t.elapsed().as_secs_f64();
    let ours_dump = read_json(&ours_json)?;
    let (mut done, mut failed) = (Vec::new(), Vec::new());
    for &peer in peers {
        let out = g.dir.with_extension(format!("{}.json", peer.name));
        let run = match peer.run(root, &g.dir, &out)? {
            Ok(run) => run,
            Err(failure) => {
                failed.push((peer, failure));
                continue;
            }
        };
        ensure!(run.runs > 0, "the {} script found no ok run", peer.name);
        let dump = read_json(&out)?;
        let agree = crate::scale::agreement(&ours_dump, &dump, peer.name)
            .with_context(|| format!("ours and {}'s values differ in shape", peer.name))?;
        ensure!(agree.max_rel <= 1e-9, "ours and {} differ by {:.3e}: {}", peer.name, agree.max_rel, agree.worst);
        done.push(PeerFigures { peer, run, agree, dump });
    }
    Ok(SizeFigures { g, files, bytes, sha, verify, ours_wall, ours: ours_run, peers: done, failed })
}

/// The largest relative difference between any two peers (each agrees with ours already);
/// fails above 1e-9.
fn peers_agree(peers: &[PeerFigures]) -> Result<Option<(f64, String)>> {
    let mut worst: Option<(f64, String)> = None;
    for (i, a) in peers.iter().enumerate() {
        for b in &peers[i + 1..] {
            let d = crate::scale::agreement_between(&a.dump, a.peer.name, &b.dump, b.peer.name)?;
            ensure!(d.max_rel <= 1e-9, "{} and {} differ by {:.3e}: {}", a.peer.name, b.peer.name, d.max_rel, d.worst);
            if worst.as_ref().is_none_or(|w| d.max_rel > w.0) {
                worst = Some((d.max_rel, format!("{} and {}{}", a.peer.name, b.peer.name, at(&d))));
            }
        }
    }
    Ok(worst)
}

/// ` (where)` of an agreement's largest difference, when there is one.
fn at(a: &crate::scale::Agreement) -> String {
    if a.max_rel > 0.0 {
        format!(" ({})", a.worst)
    } else {
        String::new()
    }
}

fn print_size(f: &SizeFigures) -> Result<()> {
    let g = &f.g;
    println!(
        "  {:.0e} samples: {} ok runs, window {} s, {} files, {:.0} MB, {} telemetry rows; generated in {:.1} s; \
         sha256sum -c {:.3} s",
        g.samples as f64,
        g.ok_runs,
        g.window_seconds,
        f.files,
        f.bytes as f64 / 1e6,
        g.samples,
        g.seconds,
        f.sha
    );
    println!(
        "    {:<26} {:>9} {:>8} {:>11} {:>11} {:>11} {:>9}  agreement with ours",
        "engine", "time", "peak MB", "÷ours whole", "÷ours v+a", "÷ours a", "peak÷ours"
    );
    let mb = |kb: u64| kb as f64 / 1024.0;
    let (whole, va, alone) = (f.ours_wall, f.ours.analyse, f.analyse_alone());
    println!(
        "    {:<26} {:>7.3} s {:>8.0}   (verify + analyse + claims + render, process start included; {} runs; {:.2}× sha256sum)",
        "ours, whole child",
        whole,
        mb(f.ours.peak_kb),
        f.ours.runs,
        whole / f.sha
    );
    println!(
        "    {:<26} {:>7.3} s {:>8.0}   (peak once analysed)",
        "ours, verify + analyse",
        va,
        mb(f.ours.analysed_peak_kb)
    );
    println!(
        "    {:<26} {:>7.3} s {:>8}   (less a verification apart, {:.3} s, timed in this process; an estimate: analyse hashes as it reads)",
        "ours, analyse alone", alone, "—", f.verify
    );
    for p in &f.peers {
        println!(
            "    {:<26} {:>7.3} s {:>8.0} {:>10.2}× {:>10.2}× {:>10.2}× {:>9.2}  {} values, largest relative difference {:.1e}{}",
            format!("{} (script {:.3} s)", p.peer.name, p.run.own),
            p.run.wall,
            mb(p.run.peak_kb),
            p.run.wall / whole,
            p.run.wall / va,
            p.run.wall / alone,
            p.run.peak_kb as f64 / f.ours.peak_kb as f64,
            p.agree.values,
            p.agree.max_rel,
            at(&p.agree)
        );
    }
    for (peer, failure) in &f.failed {
        println!("    {:<26} {:>7.3} s   failed: {}", peer.name, failure.wall, failure.why);
    }
    if let Some((rel, which)) = peers_agree(&f.peers)? {
        let ours_worst = f.peers.iter().map(|p| p.agree.max_rel).fold(0.0, f64::max);
        println!(
            "    all {} engines agree to 1e-9: largest relative difference {:.1e} with ours, {rel:.1e} between peers ({which})",
            f.peers.len() + 1,
            ours_worst
        );
    }
    Ok(())
}

/// Generated campaigns of `samples` telemetry rows each: time and peak memory of our verify +
/// analyse + render (child process) and of each peer's script on the same files, beside
/// `sha256sum -c`, and the check that every engine computed the same numbers.
fn generated_section(root: &Path, sizes: &[f64], scratch: &Path, keep: bool) -> Result<()> {
    println!(
        "generated campaigns (the whole h200-quick plan, {} repetitions, protocol 2, telemetry and process samples at {} Hz): \
         ours = verify + analyse + claims + render in memory (child process); the peers compute the same per-run and \
         per-workload aggregates from the same files (pandas: benchmarks/tools/pandas_analysis.py; duckdb: SQL over the raw \
         files, benchmarks/tools/duckdb_analysis.py; polars: lazy API, benchmarks/tools/polars_analysis.py), each in a python3 child \
         process (time: its wall time, interpreter start and imports included; peak: its ru_maxrss); ÷ours: the peer's \
         time over ours (above 1: ours is faster), whole, verify + analyse (v+a), analyse alone (a); one run each, warm \
         page cache",
        2,
        crate::scale::SAMPLE_HZ
    );
    let mut peers = Vec::new();
    for p in &crate::scale::PEERS {
        match p.available() {
            Ok(()) => peers.push(p),
            Err(line) => println!("  {line}"),
        }
    }
    let mut prev: Option<SizeFigures> = None;
    for &n in sizes {
        let f = measure_size(root, n, scratch, &peers)?;
        print_size(&f)?;
        if let Some(p) = &prev {
            let mut line = format!(
                "    growth: samples ×{:.1}, sha256sum ×{:.2}, ours (whole) ×{:.2}, ours (analyse alone) ×{:.2}",
                f.g.samples as f64 / p.g.samples as f64,
                f.sha / p.sha,
                f.ours_wall / p.ours_wall,
                f.analyse_alone() / p.analyse_alone()
            );
            for b in &f.peers {
                if let Some(a) = p.peers.iter().find(|a| a.peer.name == b.peer.name) {
                    line += &format!(", {} ×{:.2}", b.peer.name, b.run.wall / a.run.wall);
                }
            }
            println!("{line}");
        }
        if keep {
            println!("    kept in {}", f.g.dir.display());
        } else {
            std::fs::remove_dir_all(f.g.dir.parent().unwrap_or(&f.g.dir))
                .with_context(|| format!("cannot remove {}", f.g.dir.display()))?;
        }
        prev = Some(f);
    }
    Ok(())
}

/// Runs the benchmarks of the project at `root`, printing each figure as it is measured.
pub fn run(root: &Path, a: &Options) -> Result<()> {
    let project = colloc_spec::load_project(root)?;
    let name = a.campaign.clone().unwrap_or_else(|| project.artifact.shipped_campaign.value.clone());
    let dir = colloc_reproduce::campaign_dir(&project.artifact, root, &name);
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
    analysis_section(root, &name, &sizes, 3)?;
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
        generated_section(root, &samples, scratch, a.scratch.is_some())?;
    }
    Ok(())
}
