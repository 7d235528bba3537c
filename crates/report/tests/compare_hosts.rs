//! `colloc_report::compare` on the real pair of campaigns made on two hosts
//! (`data/h200-hosts`, `data/h200-hosts-rerun`) and on synthetic pairs made from one of them
//! in memory: only the baselines changed (the host differs), or only the collocated
//! throughputs (the result differs).

use colloc_analysis::Results;
use colloc_report::compare::{compare, Comparison, Side, WorkloadRow, WorkloadVerdict};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn analysed(dir: &str) -> Results {
    colloc_analysis::analyse(&root().join(dir), None).unwrap_or_else(|e| panic!("{dir}: {e:#}"))
}

/// `data/h200-hosts`, analysed once.
fn hosts() -> &'static Results {
    static R: OnceLock<Results> = OnceLock::new();
    R.get_or_init(|| analysed("data/h200-hosts"))
}

fn pair(base: &Results, new: &Results) -> Comparison {
    compare(&Side { label: "base", results: base, claims: &[] }, &Side { label: "new", results: new, claims: &[] })
}

fn scale_stats(s: &mut Option<colloc_analysis::Stats>, k: f64) {
    if let Some(s) = s {
        s.median *= k;
        s.min *= k;
        s.max *= k;
    }
}

/// `r` with every run alone `k` times as fast: each job's baseline runs and slowdown, each
/// ratio, its statistics and intervals, the baselines per host; the collocated throughputs
/// untouched.
fn baselines_scaled(r: &Results, k: f64) -> Results {
    let mut r = r.clone();
    for run in &mut r.runs {
        for j in &mut run.jobs {
            for b in &mut j.baseline_runs {
                b.throughput *= k;
            }
            j.slowdown = j.slowdown.map(|s| s * k);
        }
        run.aggregate_ratio = run.aggregate_ratio.map(|x| x / k);
    }
    for w in &mut r.workloads {
        scale_stats(&mut w.stats.aggregate_ratio, 1.0 / k);
        if let Some(i) = &mut w.intervals {
            i.stp = [i.stp[0] / k, i.stp[1] / k];
        }
    }
    for b in &mut r.baselines {
        for h in &mut b.hosts {
            let t = &mut h.throughput;
            (t.median, t.min, t.max) = (t.median * k, t.min * k, t.max * k);
        }
    }
    r
}

/// `r` with every collocated job `k` times as fast: throughputs, ratios, their statistics
/// and intervals; the runs alone each job divides by untouched.
fn throughputs_scaled(r: &Results, k: f64) -> Results {
    let mut r = r.clone();
    for run in &mut r.runs {
        for j in &mut run.jobs {
            j.throughput = j.throughput.map(|t| t * k);
            j.slowdown = j.slowdown.map(|s| s / k);
        }
        run.aggregate_throughput = run.aggregate_throughput.map(|x| x * k);
        run.aggregate_ratio = run.aggregate_ratio.map(|x| x * k);
    }
    for w in &mut r.workloads {
        scale_stats(&mut w.stats.aggregate_ratio, k);
        scale_stats(&mut w.stats.aggregate_throughput, k);
        if let Some(i) = &mut w.intervals {
            i.stp = [i.stp[0] * k, i.stp[1] * k];
            i.aggregate_throughput = [i.aggregate_throughput[0] * k, i.aggregate_throughput[1] * k];
        }
    }
    r
}

fn compared(c: &Comparison) -> Vec<&WorkloadRow> {
    c.workloads.iter().filter(|w| w.ratio.is_some()).collect()
}

/// The factors of every compared workload multiply to its STP ratio within 1e-9.
fn assert_factors_multiply(rows: &[&WorkloadRow]) {
    for w in rows {
        let f = w.factors.unwrap_or_else(|| panic!("{}: no factors", w.id));
        let r = w.ratio.as_ref().unwrap();
        assert!((f.stp - (1.0 + r.difference)).abs() < 1e-12, "{}: {f:?} {r:?}", w.id);
        assert!((f.aggregate / f.baseline - f.stp).abs() < 1e-9, "{}: {f:?}", w.id);
        assert!(f.residual().abs() < 1e-9, "{}: {f:?}", w.id);
    }
}

#[test]
fn only_the_baselines_differing_is_the_host_not_the_result() {
    let base = hosts();
    let c = pair(base, &baselines_scaled(base, 1.4));
    let rows = compared(&c);
    assert_eq!(rows.len(), 8, "{}", c.console());
    for w in &rows {
        assert_eq!(w.verdict, WorkloadVerdict::HostDiffers, "{}\n{}", w.id, c.console());
        let (r, t, b) = (w.ratio.as_ref().unwrap(), w.throughput.as_ref().unwrap(), w.baseline.as_ref().unwrap());
        assert!(!r.agrees() && t.agrees() && !b.agrees(), "{}: {r:?} {t:?} {b:?}", w.id);
        assert!((r.difference - (1.0 / 1.4 - 1.0)).abs() < 1e-9, "{}: {r:?}", w.id);
        assert!(t.difference.abs() < 1e-12 && (b.difference - 0.4).abs() < 1e-9, "{}: {t:?} {b:?}", w.id);
        let f = w.factors.unwrap();
        assert!((f.aggregate - 1.0).abs() < 1e-12 && (f.baseline - 1.4).abs() < 1e-9, "{}: {f:?}", w.id);
    }
    assert_factors_multiply(&rows);
    // Not a failure: `xtask compare` exits 0.
    assert!(!c.differs());
    assert_eq!(c.count(WorkloadVerdict::HostDiffers), 8);
    assert!(c.console().contains("0 agree, 8 agree but the host differs, 0 differ"), "{}", c.console());
    let csv = c.csv();
    assert_eq!(csv.matches(",\"agrees, the host differs\",").count(), 8, "{csv}");
    // Slightly moved baselines stay within their tolerance: STP agrees.
    let c = pair(base, &baselines_scaled(base, 1.01));
    assert_eq!(c.count(WorkloadVerdict::Agrees), 8, "{}", c.console());
}

#[test]
fn the_collocated_throughput_differing_is_the_result() {
    let base = hosts();
    let c = pair(base, &throughputs_scaled(base, 1.4));
    let rows = compared(&c);
    assert_eq!(rows.len(), 8);
    for w in &rows {
        assert_eq!(w.verdict, WorkloadVerdict::Differs, "{}\n{}", w.id, c.console());
        let (r, t, b) = (w.ratio.as_ref().unwrap(), w.throughput.as_ref().unwrap(), w.baseline.as_ref().unwrap());
        assert!(!r.agrees() && !t.agrees() && b.agrees(), "{}: {r:?} {t:?} {b:?}", w.id);
        let f = w.factors.unwrap();
        assert!((f.aggregate - 1.4).abs() < 1e-9 && (f.baseline - 1.0).abs() < 1e-12, "{}: {f:?}", w.id);
    }
    assert_factors_multiply(&rows);
    assert!(c.differs());
    // Both moved alike (the whole host faster): STP agrees, the aggregate does not: differs.
    let c = pair(base, &baselines_scaled(&throughputs_scaled(base, 1.4), 1.4));
    for w in compared(&c) {
        assert!(w.ratio.as_ref().unwrap().agrees(), "{}", w.id);
        assert_eq!(w.verdict, WorkloadVerdict::Differs, "{}", w.id);
    }
}

#[test]
fn the_real_pair_of_hosts_gives_no_differs() {
    let new = analysed("data/h200-hosts-rerun");
    let c = pair(hosts(), &new);
    let rows = compared(&c);
    assert_eq!(rows.len(), 8, "{}", c.console());
    for w in &rows {
        assert_ne!(w.verdict, WorkloadVerdict::Differs, "{}\n{}", w.id, c.console());
        // Tolerances from the campaigns' 95 % intervals, at least the 5 % floor of file data.
        assert!(!w.old_rule, "{}", w.id);
        let (r, t, b) = (w.ratio.as_ref().unwrap(), w.throughput.as_ref().unwrap(), w.baseline.as_ref().unwrap());
        // Not wide by construction: the widest, 1 × MPS, is ±36 %, its second host's runs
        // alone around it 1061–1702 img/s.
        for x in [r, t, b] {
            assert!(x.tolerance >= 0.05 && x.tolerance < 0.40, "{}: {x:?}", w.id);
        }
        assert!(w.base_interval.is_some() && w.new_interval.is_some());
        assert!(w.new_in_base().is_some() && w.base_in_new().is_some());
    }
    assert!(!c.differs());
    // Homogeneous workloads of one repetition each: every job divides by one baseline, so
    // the factors multiply to the STP ratio exactly.
    let single: Vec<&WorkloadRow> = rows.iter().copied().filter(|w| !w.id.contains("exclusive")).collect();
    assert_eq!(single.len(), 7);
    assert_factors_multiply(&single);
    // Each campaign's baselines per host: one host each, 8 runs alone.
    let hosts: Vec<(&str, u32)> = c.baselines.iter().map(|h| (h.side, h.runs)).collect();
    assert_eq!(hosts, vec![("base", 8), ("new", 8)], "{:?}", c.baselines);
    let md = c.markdown();
    assert!(md.contains("## Baselines per host") && md.contains("| base | resnet26 | 128 | generated | GPU-"), "{md}");
    assert!(md.contains("STP base [95 %]") && md.contains("Aggregate factor") && md.contains("Baseline factor"));
}

#[test]
fn host_and_run_ids_from_traces_are_escaped_in_markdown() {
    let base = hosts();
    let mut new = baselines_scaled(base, 1.4);
    let evil = "GPU-a|`<b>`-c";
    for run in &mut new.runs {
        run.host_id = Some(evil.to_string());
        for j in &mut run.jobs {
            for b in &mut j.baseline_runs {
                b.run_id = format!("{}|<i>", b.run_id);
            }
        }
    }
    for b in &mut new.baselines {
        for h in &mut b.hosts {
            h.host_id = Some(evil.to_string());
        }
    }
    let md = pair(base, &new).markdown();
    assert!(md.contains("GPU-a\\|\\`&lt;b&gt;\\`"), "{md}");
    assert!(md.contains("\\|&lt;i&gt;"), "{md}");
    assert!(!md.contains("<b>") && !md.contains("<i>") && !md.contains("|`"), "{md}");
}
