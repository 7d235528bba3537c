//! `cargo xtask export` on the shipped campaign: the frames read back (as RFC 4180 CSV) to
//! the analysis' results to the bit, two exports are byte-identical, and the schema beside
//! them is the committed `docs/EXPORT.md`.

mod common;

use colloc_analysis::Results;
use colloc_reproduce::export;
use common::root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// A CSV file as RFC 4180 reads it: records of fields (quoted fields may hold commas, doubled
/// quotes and line breaks), each record ended by CRLF.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = vec![String::new()];
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                record.last_mut().unwrap().push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => record.last_mut().unwrap().push(c),
            (false, '"') => {
                assert!(record.last().unwrap().is_empty(), "a quote inside an unquoted field");
                quoted = true;
            }
            (false, ',') => record.push(String::new()),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "a record ends with CRLF");
                records.push(std::mem::replace(&mut record, vec![String::new()]));
            }
            (false, '\n') => panic!("a bare LF outside a quoted field"),
            (false, c) => record.last_mut().unwrap().push(c),
        }
    }
    assert!(!quoted && record == vec![String::new()], "the file ends inside a record");
    records
}

/// One frame read back: its header and its rows as maps from column to field.
struct Read {
    header: Vec<String>,
    rows: Vec<BTreeMap<String, String>>,
}

fn read(dir: &Path, name: &str) -> Read {
    let text = std::fs::read_to_string(dir.join(format!("{name}.csv"))).unwrap();
    let mut records = parse_csv(&text).into_iter();
    let header = records.next().expect("a header");
    let rows = records
        .map(|r| {
            assert_eq!(r.len(), header.len(), "{name}: {r:?}");
            header.iter().cloned().zip(r).collect()
        })
        .collect();
    Read { header, rows }
}

/// A float field to the bit (empty: none).
fn num(s: &str) -> Option<u64> {
    (!s.is_empty()).then(|| s.parse::<f64>().unwrap_or_else(|e| panic!("{s}: {e}")).to_bits())
}

fn bits(x: Option<f64>) -> Option<u64> {
    x.map(f64::to_bits)
}

fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect()
}

#[test]
fn the_shipped_campaign_exports_frames_that_read_back_to_its_results_and_the_same_bytes_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let o = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["--root", root().to_str().unwrap(), "export", "--format", "csv", "--out", a.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("workloads.csv") && stdout.contains("SCHEMA.md"), "{stdout}");
    // Again, in this process: the same bytes, and the results they come from.
    let e = export::export(&root(), &export::Request { out: Some(&b), ..Default::default() }).unwrap();
    let (fa, fb) = (files_of(&a), files_of(&b));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (name, bytes) in &fa {
        assert!(*bytes == fb[name], "{name} differs between two exports");
    }
    let expected: BTreeSet<String> =
        export::schema().iter().map(|(n, _, _)| format!("{n}.csv")).chain([export::SCHEMA_FILE.to_string()]).collect();
    assert_eq!(fa.keys().cloned().collect::<BTreeSet<_>>(), expected);
    for (name, _, columns) in export::schema() {
        let header = read(&a, name).header;
        assert_eq!(header, columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>(), "{name}");
    }
    let r = &e.results;
    assert!(r.workloads.len() > 100 && r.runs.len() > 250, "the shipped campaign");
    runs_read_back(&a, r);
    jobs_and_baselines_read_back(&a, r);
    workloads_read_back(&a, r);
    hosts_and_telemetry_read_back(&a, r);
}

fn runs_read_back(dir: &Path, r: &Results) {
    let runs = read(dir, "runs").rows;
    assert_eq!(runs.len(), r.runs.len());
    for (row, run) in runs.iter().zip(&r.runs) {
        assert_eq!(row["run_id"], run.run_id);
        assert_eq!(row["workload_id"], run.workload_id);
        assert_eq!(row["status"], run.status.as_str());
        assert_eq!(row["host_id"], run.host_id.clone().unwrap_or_default());
        assert_eq!(row["repetition"], run.repetition.to_string());
        assert_eq!(num(&row["aggregate_throughput_img_s"]), bits(run.aggregate_throughput), "{}", run.run_id);
        assert_eq!(num(&row["stp"]), bits(run.aggregate_ratio), "{}", run.run_id);
        assert_eq!(num(&row["window_s"]), bits(run.window.map(|w| w.seconds)), "{}", run.run_id);
        assert_eq!(row["disturbed"], run.disturbed.to_string());
        let w = r.workload(&run.workload_id).expect("every run's workload");
        assert_eq!((row["mode"].as_str(), row["data"].as_str()), (w.mode.as_str(), w.data.as_str()));
    }
}

fn jobs_and_baselines_read_back(dir: &Path, r: &Results) {
    let jobs = read(dir, "jobs").rows;
    let expected: Vec<_> = r.runs.iter().flat_map(|run| run.jobs.iter().map(move |j| (run, j))).collect();
    assert_eq!(jobs.len(), expected.len());
    for (row, (run, job)) in jobs.iter().zip(&expected) {
        assert_eq!((row["run_id"].as_str(), row["job_index"].as_str()), (run.run_id.as_str(), &*job.index.to_string()));
        assert_eq!(num(&row["throughput_img_s"]), bits(job.throughput), "{} job {}", run.run_id, job.index);
        assert_eq!(num(&row["slowdown"]), bits(job.slowdown));
        assert_eq!(num(&row["gpu_mem_bytes_max"]), bits(job.gpu_mem_bytes_max));
        assert!(!row["model"].is_empty() && !row["batch_size"].is_empty(), "{row:?}");
    }
    let links = read(dir, "baselines").rows;
    let expected: Vec<_> =
        expected.iter().flat_map(|(run, j)| j.baseline_runs.iter().map(move |b| (*run, b))).collect();
    assert!(!expected.is_empty(), "the shipped campaign's ratios name their runs alone");
    assert_eq!(links.len(), expected.len());
    let run_ids: BTreeSet<&str> = r.runs.iter().map(|r| r.run_id.as_str()).collect();
    for (row, (run, b)) in links.iter().zip(&expected) {
        assert_eq!((row["run_id"].as_str(), row["baseline_run_id"].as_str()), (run.run_id.as_str(), b.run_id.as_str()));
        assert_eq!(num(&row["baseline_throughput_img_s"]), Some(b.throughput.to_bits()));
        assert!(run_ids.contains(row["baseline_run_id"].as_str()), "{row:?}");
    }
    let hosts = read(dir, "baseline_hosts").rows;
    assert_eq!(hosts.len(), r.baselines.iter().map(|b| b.hosts.len()).sum::<usize>());
}

fn workloads_read_back(dir: &Path, r: &Results) {
    let rows = read(dir, "workloads").rows;
    assert_eq!(rows.len(), r.workloads.len());
    for (row, w) in rows.iter().zip(&r.workloads) {
        assert_eq!(row["workload_id"], w.id);
        let s = &w.stats;
        assert_eq!(num(&row["stp_median"]), bits(s.aggregate_ratio.map(|x| x.median)), "{}", w.id);
        assert_eq!(num(&row["stp_min"]), bits(s.aggregate_ratio.map(|x| x.min)), "{}", w.id);
        assert_eq!(row["stp_n"], s.aggregate_ratio.map(|x| x.n.to_string()).unwrap_or_default());
        assert_eq!(num(&row["stp_ci_low"]), bits(w.intervals.map(|i| i.stp[0])), "{}", w.id);
        assert_eq!(num(&row["stp_ci_high"]), bits(w.intervals.map(|i| i.stp[1])), "{}", w.id);
        assert_eq!(num(&row["antt_median"]), bits(s.antt.map(|x| x.median)), "{}", w.id);
        assert_eq!(
            num(&row["aggregate_throughput_img_s_median"]),
            bits(s.aggregate_throughput.map(|x| x.median)),
            "{}",
            w.id
        );
        assert_eq!(num(&row["power_w_max"]), bits(s.power_w.map(|x| x.max)), "{}", w.id);
        assert_eq!(row["implausible"], (!w.implausible.is_empty()).to_string());
        assert_eq!(row["implausible_reasons"], w.implausible.join("; "));
        assert_eq!(row["n_jobs"], w.n_jobs().to_string());
        assert_eq!(row["runs_ok"], w.runs_by_status.get("ok").copied().unwrap_or(0).to_string());
    }
    assert!(rows.iter().filter(|w| !w["stp_ci_low"].is_empty()).count() > 50, "intervals exported");
}

fn hosts_and_telemetry_read_back(dir: &Path, r: &Results) {
    let hosts = read(dir, "hosts").rows;
    let ids: BTreeSet<String> = r.runs.iter().map(|r| r.host_id.clone().unwrap_or_default()).collect();
    assert_eq!(hosts.iter().map(|h| h["host_id"].clone()).collect::<BTreeSet<_>>(), ids);
    assert_eq!(hosts.iter().map(|h| h["runs"].parse::<usize>().unwrap()).sum::<usize>(), r.runs.len());
    let telemetry = read(dir, "telemetry").rows;
    let with: Vec<_> = r.runs.iter().filter(|r| r.utilisation.is_some()).collect();
    assert_eq!(telemetry.len(), with.len());
    for (row, run) in telemetry.iter().zip(with) {
        let u = run.utilisation.as_ref().unwrap();
        assert_eq!(row["run_id"], run.run_id);
        assert_eq!(num(&row["power_w"]), bits(u.power_w), "{}", run.run_id);
        assert_eq!(num(&row["energy_j"]), bits(u.energy_j), "{}", run.run_id);
        assert_eq!(num(&row["sm_activity_pct"]), bits(u.sm_activity_pct), "{}", run.run_id);
    }
    let provenance = read(dir, "provenance").rows;
    let field = |f: &str| provenance.iter().filter(|p| p["field"] == f).map(|p| p["value"].clone()).collect::<Vec<_>>();
    assert_eq!(field("campaign"), vec![r.campaign.clone()]);
    assert_eq!(field("cpu_model"), r.provenance.cpu_models);
    assert_eq!(field("gpu_uuid"), r.provenance.gpu_uuids);
}

#[test]
fn the_committed_schema_is_the_one_the_export_writes() {
    // `UPDATE_EXPORT_SCHEMA=1 cargo test -p xtask --test export` rewrites it.
    let path = root().join("docs/EXPORT.md");
    let expected = export::schema_markdown();
    if std::env::var_os("UPDATE_EXPORT_SCHEMA").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "docs/EXPORT.md is stale: run `UPDATE_EXPORT_SCHEMA=1 cargo test -p xtask --test export`"
    );
    // One line per column, each with its type.
    for (name, _, columns) in export::schema() {
        for c in &columns {
            assert!(committed.contains(&format!("| `{}` |", c.name)), "{name}.{}", c.name);
            assert!(!c.meaning.is_empty(), "{name}.{} has no meaning", c.name);
        }
    }
}

#[test]
fn the_readmes_python_example_reads_columns_the_export_has() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = &readme[readme.find("## Working with the results in Python").expect("the README's section")..];
    let code = &section[section.find("```python").expect("its example")..];
    let code = &code[..code[3..].find("```").unwrap() + 3];
    assert!(section.contains("cargo xtask export"), "{section}");
    let schema = export::schema();
    let columns: BTreeSet<&str> = schema.iter().flat_map(|(_, _, cs)| cs.iter().map(|c| c.name.as_str())).collect();
    let named: Vec<&str> =
        code.split('"').skip(1).step_by(2).filter(|s| !s.contains('.') && !s.contains('/')).collect();
    assert!(!named.is_empty(), "{code}");
    for n in named {
        assert!(columns.contains(n), "the README's example reads column {n}, which no frame has");
    }
}

/// A float's bits as `load_export.py` prints them (`null`: missing).
fn json_bits(v: &serde_json::Value) -> Option<u64> {
    v.as_u64()
}

/// The type an engine should read a column as: its declared one, or `empty` when every value
/// is missing; pandas reads an integer column with missing values as floats and a boolean one
/// as objects, and DuckDB's sniffer reads some text columns (times) as its own types.
fn type_read(engine: &str, kind: export::Kind, all_missing: bool, some_missing: bool) -> Vec<String> {
    use export::Kind::*;
    if all_missing {
        return vec!["empty".into()];
    }
    let declared = match kind {
        Text => "text",
        Int => "integer",
        Float => "float",
        Bool => "boolean",
    };
    let mut ok = vec![declared.to_string()];
    match (engine, kind) {
        ("pandas", Int) if some_missing => ok.push("float".into()),
        ("pandas", Bool) if some_missing => ok.push("text".into()),
        ("duckdb", Text) => {
            ok.extend(["other:TIMESTAMP WITH TIME ZONE", "other:TIMESTAMP", "other:DATE"].map(String::from))
        }
        _ => {}
    }
    ok
}

/// The frames load in polars, pandas and DuckDB with their declared types and the results'
/// values, and the README's example runs on them where it reads them.
#[test]
fn the_exported_frames_load_in_polars_pandas_and_duckdb_with_their_types_and_values() {
    // Exported where the README's example reads it: `target/export/<campaign>/` of the project.
    let tmp = tempfile::tempdir().unwrap();
    let campaign = colloc_spec::load_project(&root()).unwrap_or_else(|d| panic!("{d}")).artifact.shipped_campaign.value;
    let out = tmp.path().join("target/export").join(campaign);
    let e = export::export(&root(), &export::Request { out: Some(&out), ..Default::default() }).unwrap();
    let names: Vec<&str> = e.frames.iter().map(|f| f.name).collect();
    let script = root().join("xtask/tests/load_export.py");
    let o = Command::new("python3").arg(&script).arg(&out).args(&names).output().expect("python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for (engine, why) in report["missing"].as_object().unwrap() {
        eprintln!("{engine} is not installed here, so the frames were not loaded in it: {why}");
    }
    let r = &e.results;
    for (engine, loaded) in report["engines"].as_object().unwrap() {
        for frame in &e.frames {
            let got = &loaded["frames"][frame.name];
            assert_eq!(got["rows"].as_u64(), Some(frame.rows.len() as u64), "{engine}: {} rows", frame.name);
            let types = got["types"].as_object().unwrap();
            assert_eq!(types.len(), frame.columns.len(), "{engine}: {} columns", frame.name);
            for (c, column) in frame.columns.iter().enumerate() {
                // An empty text is an empty field too: missing to every reader.
                let missing = frame
                    .rows
                    .iter()
                    .filter(|row| {
                        matches!(&row[c], export::Cell::Null)
                            || matches!(&row[c], export::Cell::Text(t) if t.is_empty())
                    })
                    .count();
                let ok = type_read(engine, column.kind, missing == frame.rows.len(), missing > 0);
                let read = types[&column.name].as_str().unwrap_or_default();
                assert!(
                    ok.iter().any(|t| t == read),
                    "{engine} reads {}.{} as {read}, not {}",
                    frame.name,
                    column.name,
                    ok[0]
                );
            }
        }
        for w in &r.workloads {
            let s = &w.stats;
            let want = [
                bits(s.aggregate_ratio.map(|x| x.median)),
                bits(w.intervals.map(|i| i.stp[0])),
                bits(w.intervals.map(|i| i.stp[1])),
                bits(s.aggregate_throughput.map(|x| x.median)),
            ];
            let got: Vec<Option<u64>> = loaded["workloads"][&w.id].as_array().unwrap().iter().map(json_bits).collect();
            assert_eq!(got, want, "{engine}: {}", w.id);
        }
        for run in &r.runs {
            assert_eq!(json_bits(&loaded["runs"][&run.run_id]), bits(run.aggregate_ratio), "{engine}: {}", run.run_id);
        }
        let want: Vec<(String, u64, Option<u64>)> = r
            .runs
            .iter()
            .flat_map(|run| run.jobs.iter().map(move |j| (run.run_id.clone(), j.index as u64, bits(j.throughput))))
            .collect();
        let got: Vec<(String, u64, Option<u64>)> = loaded["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| (j[0].as_str().unwrap().to_string(), j[1].as_u64().unwrap(), json_bits(&j[2])))
            .collect();
        assert_eq!(got, want, "{engine}: the jobs' throughputs");
    }
    if report["engines"].get("polars").is_some() {
        readmes_python_example_runs(tmp.path());
    } else {
        eprintln!("polars is not installed here, so the README's example was not run");
    }
}

/// The README's Python example, run in `project` (where it reads `target/export/...`): it
/// prints the median STP of the collocated workloads per data source and mode.
fn readmes_python_example_runs(project: &Path) {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = &readme[readme.find("## Working with the results in Python").expect("the README's section")..];
    let code = &section[section.find("```python").expect("its example") + "```python".len()..];
    let code = &code[..code.find("```").unwrap()];
    let o = Command::new("python3").args(["-c", code]).current_dir(project).output().expect("python3");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "the README's example fails:\n{code}\n{}", String::from_utf8_lossy(&o.stderr));
    for word in ["generated", "synthetic", "naive", "mps", "stp_median"] {
        assert!(stdout.contains(word), "the README's example printed no {word}:\n{stdout}");
    }
}
