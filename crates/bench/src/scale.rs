//! Generated campaigns for `cargo xtask bench`: the fixture writer of `colloc_analysis::testkit`
//! (the real planner's whole `h200-quick` plan, protocol 2, per-iteration records,
//! telemetry and process samples at 10 Hz) with its windows stretched until the campaign holds
//! a given number of whole-GPU telemetry samples; the peers, scripts that compute the same
//! aggregates from the same files with pandas, DuckDB and polars (`benchmarks/tools/*_analysis.py`);
//! and the check that every engine gives the same numbers.

use anyhow::{bail, ensure, Context, Result};
use colloc_analysis::testkit::{self, FixtureOptions};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The telemetry rate of the generated campaigns (the runner's default).
pub(crate) const SAMPLE_HZ: u32 = 10;

/// Repetitions of every workload of the generated campaigns.
const REPETITIONS: u32 = 2;

/// What a generated campaign is.
pub(crate) struct Generated {
    pub(crate) dir: PathBuf,
    pub(crate) ok_runs: usize,
    pub(crate) window_seconds: u32,
    /// Whole-GPU telemetry rows over all runs.
    pub(crate) samples: u64,
    pub(crate) seconds: f64,
}

/// The fixture options of a campaign with about `samples` whole-GPU telemetry rows, and its
/// ok runs.
fn options(project: &Path, samples: f64) -> Result<(FixtureOptions, usize)> {
    let mut opts = FixtureOptions {
        name: "generated".into(),
        repetitions: REPETITIONS,
        full: true,
        protocol_version: 2,
        sample_hz: SAMPLE_HZ,
        project: Some(project.to_path_buf()),
        ..FixtureOptions::default()
    };
    let ok = testkit::ok_runs(&opts)?;
    ensure!(ok > 0, "the generated campaign would have no ok run");
    let per_run = samples / ok as f64 / SAMPLE_HZ as f64;
    ensure!(per_run.is_finite() && per_run <= u32::MAX as f64, "{samples} samples: too many");
    opts.window_seconds = (per_run.round() as u32).saturating_sub(4).max(10);
    Ok((opts, ok))
}

/// Writes a campaign of about `samples` telemetry rows under `into` (a new directory), with
/// the workloads of the project at `project`.
pub(crate) fn generate(project: &Path, samples: f64, into: &Path) -> Result<Generated> {
    let (opts, ok_runs) = options(project, samples)?;
    let root = into.join(format!("samples-{samples:.0e}"));
    std::fs::create_dir_all(&root)?;
    let t = Instant::now();
    let dir = testkit::write_campaign(&root, &opts)?;
    Ok(Generated {
        dir,
        ok_runs,
        window_seconds: opts.window_seconds,
        samples: testkit::telemetry_samples(&opts) * ok_runs as u64,
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// A peer: a Python script beside ours that computes the same per-run and per-workload
/// aggregates from the same files, in another engine.
pub(crate) struct Peer {
    /// Its name in the bench's output.
    pub(crate) name: &'static str,
    /// The script, relative to the project root.
    pub(crate) script: &'static str,
    /// The modules it imports (checked before it is run).
    pub(crate) modules: &'static str,
}

/// The peers, in the order the bench prints them: pandas, DuckDB (SQL over the raw files),
/// polars' lazy API; each pinned in `benchmarks/requirements.txt`.
pub(crate) static PEERS: [Peer; 3] = [
    Peer { name: "pandas", script: "benchmarks/tools/pandas_analysis.py", modules: "pandas, numpy" },
    Peer { name: "duckdb", script: "benchmarks/tools/duckdb_analysis.py", modules: "duckdb" },
    Peer { name: "polars", script: "benchmarks/tools/polars_analysis.py", modules: "polars" },
];

/// What a peer's script printed: its runs, peak resident kB (`ru_maxrss`) and its own seconds
/// (after its imports), and the wall time around it (interpreter start and imports included).
#[derive(Debug)]
pub(crate) struct PeerRun {
    pub(crate) runs: usize,
    pub(crate) peak_kb: u64,
    pub(crate) own: f64,
    pub(crate) wall: f64,
}

impl Peer {
    /// Whether `python3` can import the peer's modules; the one line that says why not.
    pub(crate) fn available(&self) -> Result<(), String> {
        match Command::new("python3").args(["-c", &format!("import {}", self.modules)]).output() {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                let last = err.lines().last().unwrap_or("").trim();
                if last.starts_with("ModuleNotFoundError") || last.starts_with("ImportError") {
                    Err(format!("{}: not installed (pip install -r benchmarks/requirements.txt); skipped", self.name))
                } else {
                    Err(format!("{}: python3 cannot import {}: {last}; skipped", self.name, self.modules))
                }
            }
            Err(e) => Err(format!("{}: cannot run python3: {e}; skipped", self.name)),
        }
    }

    /// Runs `python3 SCRIPT DIR OUT` in a child process: `Ok(Err(failure))` when the script
    /// ends without success (an error, or killed: at scale, the kernel's out-of-memory killer
    /// ends a peer that asks for more memory than the machine has).
    pub(crate) fn run(&self, root: &Path, dir: &Path, out: &Path) -> Result<Result<PeerRun, PeerFailure>> {
        let t = Instant::now();
        let o = Command::new("python3")
            .arg(root.join(self.script))
            .arg(dir)
            .arg(out)
            .output()
            .context("cannot run python3")?;
        let wall = t.elapsed().as_secs_f64();
        if !o.status.success() {
            return Ok(Err(PeerFailure { wall, why: failure_words(&o.status, &o.stderr) }));
        }
        let who = format!("the {} script", self.name);
        let get = figures_line(&o.stdout, &who);
        Ok(Ok(PeerRun { runs: get("runs")? as usize, peak_kb: get("peak_kb")? as u64, own: get("seconds")?, wall }))
    }
}

/// A peer's script that did not succeed: after how long, and why, in one line.
#[derive(Debug)]
pub(crate) struct PeerFailure {
    pub(crate) wall: f64,
    pub(crate) why: String,
}

/// Why a child ended without success, in one line: its signal or exit status, and the last
/// line it wrote to stderr.
pub(crate) fn failure_words(status: &std::process::ExitStatus, stderr: &[u8]) -> String {
    use std::os::unix::process::ExitStatusExt;
    let how = match (status.code(), status.signal()) {
        (_, Some(9)) => {
            "killed by signal 9 (SIGKILL: the out-of-memory killer, when the machine ran out of memory)".to_string()
        }
        (_, Some(sig)) => format!("killed by signal {sig}"),
        (Some(code), _) => format!("exit status {code}"),
        (None, None) => "ended without an exit status".to_string(),
    };
    let err = String::from_utf8_lossy(stderr);
    match err.lines().map(str::trim).rfind(|l| !l.is_empty()) {
        Some(last) => format!("{how}: {}", last.chars().take(300).collect::<String>()),
        None => how,
    }
}

/// The figures of a child's last output line (`key=value` words), by key; `who` names the
/// child in the error when one is missing.
pub(crate) fn figures_line<'a>(stdout: &[u8], who: &'a str) -> impl Fn(&str) -> Result<f64> + 'a {
    let line = String::from_utf8_lossy(stdout).lines().last().unwrap_or("").to_string();
    move |k: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("{who} printed no {k}: {line:?}"))
    }
}

/// The values every engine computes, per ok run and per workload, as JSON in the shape the
/// peers' scripts write.
pub(crate) fn dump(results: &colloc_analysis::Results) -> Result<Value> {
    let mut runs = Map::new();
    for r in results.runs.iter().filter(|r| r.status == colloc_trace::meta::RunStatus::Ok && !r.superseded) {
        let u = r.utilisation.as_ref();
        let mut v = json!({
            "aggregate_throughput": r.aggregate_throughput,
            "aggregate_ratio": r.aggregate_ratio,
            "power_w": u.and_then(|u| u.power_w),
            "gpu_util_pct": u.and_then(|u| u.gpu_util_pct),
            "sm_activity_pct": u.and_then(|u| u.sm_activity_pct),
            "mem_used_bytes_max": u.and_then(|u| u.mem_used_bytes_max),
            "jobs": r.jobs.iter().map(|j| json!({"throughput": j.throughput, "cpu_cores": j.cpu_cores})).collect::<Vec<_>>(),
        });
        if let Some(e) = u.and_then(|u| u.energy_j) {
            v["energy_j"] = e.into();
        }
        runs.insert(r.run_id.clone(), v);
    }
    let mut workloads = Map::new();
    for w in &results.workloads {
        let stats = serde_json::to_value(w.stats)?;
        let median = |k: &str| stats.get(k).and_then(|s| s.get("median")).cloned().unwrap_or(Value::Null);
        if w.runs_by_status.get("ok").copied().unwrap_or(0) > 0 {
            workloads.insert(
                w.id.clone(),
                json!({"aggregate_throughput": median("aggregate_throughput"), "aggregate_ratio": median("aggregate_ratio")}),
            );
        }
    }
    Ok(json!({"runs": runs, "workloads": workloads}))
}

/// How two dumps compare: the values compared and the largest relative difference (with
/// where it is).
#[derive(Debug)]
pub(crate) struct Agreement {
    pub(crate) values: usize,
    pub(crate) max_rel: f64,
    pub(crate) worst: String,
}

/// Compares every number of `ours` with the same place in `theirs` (the dump of the engine
/// named `who`): both must have the same runs and workloads, and the same places null.
pub(crate) fn agreement(ours: &Value, theirs: &Value, who: &str) -> Result<Agreement> {
    agreement_between(ours, "ours", theirs, who)
}

/// [`agreement`] of the dumps of any two engines, named in its messages.
pub(crate) fn agreement_between(x: &Value, x_name: &str, y: &Value, y_name: &str) -> Result<Agreement> {
    let mut a = Agreement { values: 0, max_rel: 0.0, worst: String::new() };
    walk(x, y, String::new(), (x_name, y_name), &mut a)?;
    Ok(a)
}

fn walk(ours: &Value, theirs: &Value, at: String, names: (&str, &str), a: &mut Agreement) -> Result<()> {
    let (me, who) = names;
    match (ours, theirs) {
        (Value::Object(x), Value::Object(y)) => {
            let (mut kx, mut ky): (Vec<_>, Vec<_>) = (x.keys().collect(), y.keys().collect());
            kx.sort();
            ky.sort();
            if kx != ky {
                let only_ours: Vec<_> = kx.iter().filter(|k| !y.contains_key(**k)).take(3).collect();
                let only_theirs: Vec<_> = ky.iter().filter(|k| !x.contains_key(**k)).take(3).collect();
                bail!("{at}: keys differ (only {me}'s: {only_ours:?}, only {who}'s: {only_theirs:?})");
            }
            for (k, v) in x {
                walk(v, &y[k], format!("{at}/{k}"), names, a)?;
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            ensure!(x.len() == y.len(), "{at}: {me}'s {} values against {who}'s {}", x.len(), y.len());
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                walk(v, w, format!("{at}/{i}"), names, a)?;
            }
        }
        (Value::Null, Value::Null) => {}
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            let rel = if x == y { 0.0 } else { (x - y).abs() / x.abs().max(y.abs()) };
            a.values += 1;
            if rel.is_nan() || rel > a.max_rel {
                a.max_rel = rel;
                a.worst = format!("{at}: {me} {x}, {who} {y}");
            }
        }
        _ => bail!("{at}: {me} {ours}, {who} {theirs}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_finds_the_largest_difference_and_refuses_other_shapes() {
        let ours = json!({"runs": {"a.r1": {"x": 100.0, "jobs": [{"t": 2.0}], "n": null}}, "workloads": {}});
        let same = json!({"workloads": {}, "runs": {"a.r1": {"n": null, "jobs": [{"t": 2.0}], "x": 100.0}}});
        let a = agreement(&ours, &same, "pandas").unwrap();
        assert_eq!((a.values, a.max_rel), (2, 0.0));

        let off = json!({"workloads": {}, "runs": {"a.r1": {"n": null, "jobs": [{"t": 2.2}], "x": 100.0}}});
        let a = agreement(&ours, &off, "pandas").unwrap();
        assert!((a.max_rel - 0.2 / 2.2).abs() < 1e-12, "{}", a.max_rel);
        assert!(a.worst.starts_with("/runs/a.r1/jobs/0/t"), "{}", a.worst);

        let missing_run = json!({"workloads": {}, "runs": {}});
        assert!(agreement(&ours, &missing_run, "pandas").unwrap_err().to_string().contains("keys differ"));
        let null_here = json!({"workloads": {}, "runs": {"a.r1": {"n": 1.0, "jobs": [{"t": 2.0}], "x": 100.0}}});
        assert!(agreement(&ours, &null_here, "pandas").is_err());
    }

    /// A peer's script that fails, or is killed as the out-of-memory killer kills, is a
    /// failure with its reason, not an error that ends the bench.
    #[test]
    fn a_peer_that_fails_or_is_killed_is_kept_as_a_failure_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let script = |name: &str, body: &str| {
            std::fs::write(dir.path().join(name), body).unwrap();
            Peer { name: "peer", script: Box::leak(name.to_string().into_boxed_str()), modules: "sys" }
        };
        if Command::new("python3").arg("-c").arg("pass").status().is_err() {
            return; // no python3: the peers are skipped before they run
        }
        let raises =
            script("raises.py", "import sys\nprint('working', file=sys.stderr)\nraise MemoryError('out of memory')\n");
        let killed = script("killed.py", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n");
        let out = dir.path().join("out.json");
        let failure = raises.run(dir.path(), dir.path(), &out).unwrap().unwrap_err();
        assert_eq!(failure.why, "exit status 1: MemoryError: out of memory");
        let failure = killed.run(dir.path(), dir.path(), &out).unwrap().unwrap_err();
        assert!(failure.why.starts_with("killed by signal 9 (SIGKILL: the out-of-memory killer"), "{}", failure.why);
        assert!(failure.wall >= 0.0);
    }

    #[test]
    fn a_peer_that_cannot_be_imported_is_skipped_in_one_line() {
        let missing = Peer { name: "nothere", script: "benchmarks/nothere.py", modules: "colloc_no_such_module" };
        match missing.available() {
            // Without python3 at all the line says so instead.
            Err(why) => assert!(
                why == "nothere: not installed (pip install -r benchmarks/requirements.txt); skipped"
                    || why.starts_with("nothere: cannot run python3"),
                "{why}"
            ),
            Ok(()) => panic!("a module that does not exist was imported"),
        }
        for p in &PEERS {
            assert!(colloc_spec::names::project_root().unwrap().join(p.script).is_file(), "{} is missing", p.script);
        }
    }

    #[test]
    fn a_generated_campaign_holds_the_samples_asked_for() {
        let (opts, ok) = options(&colloc_spec::names::project_root().unwrap(), 1e5).unwrap();
        assert_eq!(ok, testkit::ok_runs(&opts).unwrap());
        let ok = ok as f64;
        let rows = testkit::telemetry_samples(&opts) as f64 * ok;
        assert!((rows / 1e5 - 1.0).abs() < 0.05, "{rows} rows for 1e5 asked");
        assert_eq!(opts.sample_hz, SAMPLE_HZ);
    }
}
