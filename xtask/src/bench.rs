//! `cargo xtask bench [--quick]`: measured figures, each beside a baseline measured in the
//! same run, with the ratio. Today: verification of a campaign against `sha256sum -c` of the
//! same files (the floor: every byte must be read and hashed once).

use anyhow::{ensure, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Fewer repetitions and a smaller scaled copy (about ten seconds).
    #[arg(long)]
    pub quick: bool,
    /// The campaign to verify (default: the shipped one).
    #[arg(long)]
    pub campaign: Option<String>,
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

/// A campaign made of `copies` copies of `src`'s runs (renamed), with its manifest.
fn scaled_copy(src: &Path, copies: usize, into: &Path) -> Result<PathBuf> {
    let dir = into.join(format!("x{copies}"));
    let runs = src.join(colloc_trace::layout::RUNS_DIR);
    for k in 0..copies {
        for e in std::fs::read_dir(&runs)? {
            let e = e?;
            let to =
                dir.join(colloc_trace::layout::RUNS_DIR).join(format!("{}.copy{k}", e.file_name().to_string_lossy()));
            std::fs::create_dir_all(&to)?;
            for f in std::fs::read_dir(e.path())? {
                let f = f?;
                std::fs::copy(f.path(), to.join(f.file_name()))?;
            }
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

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root();
    let project = colloc_spec::load_project(&root)?;
    let name = a.campaign.unwrap_or_else(|| project.artifact.shipped_campaign.value.clone());
    let dir = crate::campaign_dir(&project.artifact, &root, &name);
    let reps = if a.quick { 3 } else { 9 };
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("machine: {cores} core(s) available to this process");
    verification(&format!("data/{name}"), &dir, reps)?;
    let copies = if a.quick { 3 } else { 10 };
    let tmp = tempfile::tempdir_in(root.join("target")).context("cannot make a temporary directory in target/")?;
    let big = scaled_copy(&dir, copies, tmp.path())?;
    verification(&format!("{copies} copies of data/{name}"), &big, reps)?;
    Ok(ExitCode::SUCCESS)
}
