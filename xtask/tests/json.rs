//! `--json` of `reproduce`, `compare` and `validate`: one document on stdout, valid against
//! its published schema under `schemas/`, saying what the text output says. The schemas are
//! generated from the documents' types; regenerate them with
//! `UPDATE_SCHEMAS=1 cargo test -p xtask --test json`.

mod common;

use common::{copy_dir, copy_of_project, fields, root, scale_samples};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask")).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Stdout parsed as one JSON document (nothing else on it).
fn document(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{}\n{}", text(&o.stdout), text(&o.stderr)))
}

fn check_schema(rel: &str, current: String) {
    let path = root().join(rel);
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &current).unwrap();
        return;
    }
    let published = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        published == current,
        "{rel} is stale: regenerate it with `UPDATE_SCHEMAS=1 cargo test -p xtask --test json`"
    );
}

#[test]
fn the_published_schemas_are_current() {
    check_schema("schemas/reproduce.schema.json", colloc_report::json::reproduce_schema());
    check_schema("schemas/compare.schema.json", colloc_report::compare::document_schema());
    check_schema("schemas/validate.schema.json", colloc_spec::validate::schema());
}

/// The published schema `schemas/<name>.schema.json`.
fn schema(name: &str) -> Value {
    let path = root().join(format!("schemas/{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Where `v` breaks `s` (a schema of `root`), as JSON Schema's keywords that schemars
/// writes say: `$ref`, `type`, `required`, `properties`, `additionalProperties`, `items`,
/// `minItems`, `maxItems`, `enum`, `const`, `anyOf`, `oneOf`, `allOf`. Not a full validator.
fn breaks(v: &Value, s: &Value, root: &Value, at: &str) -> Vec<String> {
    let Some(s) = s.as_object() else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(r.trim_start_matches('#')).unwrap_or_else(|| panic!("{at}: no {r}"));
        out.extend(breaks(v, target, root, at));
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let is = |t: &str| match t {
            "null" => v.is_null(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_u64() || v.is_i64(),
            "number" => v.is_number(),
            "string" => v.is_string(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            _ => false,
        };
        if !types.iter().any(|t| is(t)) {
            out.push(format!("{at}: {v} is not of type {t}"));
            return out;
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            out.push(format!("{at}: {v} is not one of {e:?}"));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            out.push(format!("{at}: {v} is not {c}"));
        }
    }
    for (k, any) in [("anyOf", true), ("oneOf", true), ("allOf", false)] {
        if let Some(alts) = s.get(k).and_then(Value::as_array) {
            let each: Vec<Vec<String>> = alts.iter().map(|a| breaks(v, a, root, at)).collect();
            if any && each.iter().all(|b| !b.is_empty()) {
                out.push(format!("{at}: {v} matches none of {k}: {each:?}"));
            } else if !any {
                out.extend(each.into_iter().flatten());
            }
        }
    }
    if let Some(o) = v.as_object() {
        for k in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !o.contains_key(k.as_str().unwrap()) {
                out.push(format!("{at}: no required key {k}"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, x) in o {
            let here = format!("{at}/{k}");
            match (props.and_then(|p| p.get(k)), s.get("additionalProperties")) {
                (Some(p), _) => out.extend(breaks(x, p, root, &here)),
                (None, Some(Value::Bool(false))) => out.push(format!("{here}: not in the schema")),
                (None, Some(a)) => out.extend(breaks(x, a, root, &here)),
                (None, None) => {}
            }
        }
    }
    if let Some(a) = v.as_array() {
        if let Some(items) = s.get("items") {
            for (i, x) in a.iter().enumerate() {
                out.extend(breaks(x, items, root, &format!("{at}/{i}")));
            }
        }
        let n = a.len() as u64;
        if s.get("minItems").and_then(Value::as_u64).is_some_and(|m| n < m)
            || s.get("maxItems").and_then(Value::as_u64).is_some_and(|m| n > m)
        {
            out.push(format!("{at}: {n} items, out of the schema's bounds"));
        }
    }
    out
}

/// `doc` is valid against `schemas/<name>.schema.json` (as [`breaks`] checks) and of format 1.
fn assert_valid(doc: &Value, name: &str) {
    let s = schema(name);
    let problems = breaks(doc, &s, &s, "");
    assert!(problems.is_empty(), "the {name} document breaks its schema:\n{}", problems.join("\n"));
    assert_eq!(doc["format_version"], 1);
}

#[test]
fn the_schema_check_catches_a_wrong_type_and_a_missing_key() {
    let s = schema("validate");
    let good = serde_json::json!({"format_version": 1, "valid": false, "summary": null,
        "problems": [{"file": "a.yaml", "line": 3, "column": 1, "message": "m", "source_line": null}]});
    assert!(breaks(&good, &s, &s, "").is_empty(), "{:?}", breaks(&good, &s, &s, ""));
    let mut bad = good.clone();
    bad["problems"][0]["line"] = "3".into();
    bad.as_object_mut().unwrap().remove("valid");
    let b = breaks(&bad, &s, &s, "");
    assert!(b.iter().any(|p| p.starts_with("/problems/0/line")) && b.iter().any(|p| p.contains("\"valid\"")), "{b:?}");
}

#[test]
fn reproduce_json_says_what_the_text_says() {
    let tmp = tempfile::tempdir().unwrap();
    let (t_out, j_out) = (tmp.path().join("text"), tmp.path().join("json"));
    // h200-paper: a campaign still being collected (planned runs missing, runs beyond the plan).
    let t = xtask(&["reproduce", "--campaign", "h200-paper", "--out", t_out.to_str().unwrap()]);
    assert_eq!(t.status.code(), Some(0), "{}", text(&t.stderr));
    let j = xtask(&["reproduce", "--campaign", "h200-paper", "--out", j_out.to_str().unwrap(), "--json"]);
    assert_eq!(j.status.code(), Some(0), "{}", text(&j.stderr));
    let doc = document(&j);
    assert_valid(&doc, "reproduce");
    let stdout = text(&t.stdout);
    let stderr = text(&j.stderr);

    assert_eq!(doc["campaign"], "h200-paper");
    assert!(stdout.starts_with(&format!("claims on {} ", doc["gpu"].as_str().unwrap())), "{stdout}");
    // The claims: one table line each, starting with its id and headline grade.
    let claims = doc["claims"].as_array().unwrap();
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('C')).collect();
    assert_eq!(claims.len(), lines.len(), "{stdout}");
    assert_eq!(claims.len(), colloc_spec::load_project(&root()).unwrap().artifact.claims.len());
    for (c, line) in claims.iter().zip(&lines) {
        let headline = match c["headline_data"].as_str() {
            Some(d) => format!("{} ({d})", c["verdict"].as_str().unwrap()),
            None => c["verdict"].as_str().unwrap().to_string(),
        };
        let mut words = line.split("  ").filter(|w| !w.is_empty());
        assert_eq!(words.next(), c["id"].as_str(), "{line}");
        assert_eq!(words.next().map(str::trim), Some(headline.as_str()), "{line}");
        for s in c["sources"].as_array().unwrap() {
            assert!(line.contains(s["verdict"].as_str().unwrap()), "{line}");
            for k in s["checks"].as_array().unwrap() {
                assert!(k["query"].is_string() && k["stand_in"].is_boolean() && k["verdict"].is_string());
            }
        }
    }
    // A stand-in value is flagged as the table marks it.
    let stand_in = claims.iter().any(|c| {
        c["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["checks"].as_array().unwrap().iter().any(|k| k["stand_in"] == true))
    });
    assert_eq!(stand_in, stdout.contains("(stand-in)"), "{stdout}");

    // The counts: `note: incomplete campaign: M of P planned runs made, K not yet`.
    let counts = &doc["counts"];
    let (planned, missing) = (counts["planned"].as_u64().unwrap(), counts["missing"].as_u64().unwrap());
    assert!(missing > 0, "{counts}");
    let note = format!("{} of {planned} planned runs made, {missing} not yet", planned - missing);
    assert!(stdout.contains(&note) && stderr.contains(&note), "{note}\n{stdout}\n{stderr}");
    assert_eq!(counts["missing_runs"].as_array().unwrap().len() as u64, missing);
    let by_status: u64 = counts["runs_by_status"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(by_status, counts["runs"].as_u64().unwrap());
    assert!(stdout.contains(&format!("({} runs)", counts["runs"])), "{stdout}");
    assert!(counts["beyond_plan"].is_u64() && counts["attempts_again"].is_u64());
    // The runs alone interleaved beyond the plan's repetitions are counted beside them.
    let beyond = counts["beyond_plan"].as_u64().unwrap();
    assert!(beyond > 0, "h200-paper measures its models alone interleaved: {counts}");
    let note = format!("{note}, and {beyond} runs beyond the plan's repetitions");
    assert!(stdout.contains(&note), "{note}\n{stdout}");

    // The outputs: `N of M output files rewritten under DIR`.
    let outputs = &doc["outputs"];
    assert_eq!(outputs["check"], false);
    assert_eq!(outputs["root"], j_out.to_str().unwrap());
    let (changed, files) = (&outputs["changed"], &outputs["files"]);
    assert!(stderr.contains(&format!("{changed} of {files} output files rewritten under {}", j_out.display())));
    assert!(stdout.contains(&format!("{changed} of {files} output files rewritten under {}", t_out.display())));
    assert_eq!(outputs["changes"].as_array().unwrap().len() as u64, changed.as_u64().unwrap());

    // --check against what was just written: up to date, exit 0, nothing changed.
    let c = xtask(&["reproduce", "--campaign", "h200-paper", "--out", j_out.to_str().unwrap(), "--check", "--json"]);
    assert_eq!(c.status.code(), Some(0), "{}", text(&c.stderr));
    let doc = document(&c);
    assert_eq!((doc["outputs"]["check"].clone(), doc["outputs"]["changed"].clone()), (true.into(), 0.into()));
    assert!(text(&c.stderr).contains("outputs are up to date with campaign h200-paper"));

    // --json with --claim (evidence, not a document) is refused.
    let r = xtask(&["reproduce", "--json", "--claim", "C1"]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r.stderr));
}

/// The pair made on two hosts, each with interleaved baselines.
fn hosts_pair() -> (std::path::PathBuf, std::path::PathBuf) {
    (root().join("data/h200-hosts"), root().join("data/h200-hosts-rerun"))
}

fn compare(base: &Path, new: &Path, out: &Path, json: bool) -> Output {
    let mut args = vec!["compare", base.to_str().unwrap(), new.to_str().unwrap(), "--out", out.to_str().unwrap()];
    if json {
        args.push("--json");
    }
    xtask(&args)
}

#[test]
fn compare_json_says_what_the_text_says() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new) = hosts_pair();
    let t = compare(&base, &new, &tmp.path().join("text"), false);
    let j = compare(&base, &new, &tmp.path().join("json"), true);
    assert_eq!(t.status.code(), Some(0), "{}", text(&t.stderr));
    assert_eq!(j.status.code(), Some(0), "{}", text(&j.stderr));
    let doc = document(&j);
    assert_valid(&doc, "compare");
    let stdout = text(&t.stdout);
    let totals = &doc["totals"];
    let counts = format!(
        "{} agree, {} agree but the host differs, {} differ, {} only in base, {} only in new",
        totals["agrees"], totals["host_differs"], totals["differs"], totals["only_in_base"], totals["only_in_new"]
    );
    assert!(stdout.contains(&counts), "{counts}\n{stdout}");
    assert_eq!(doc["differs"], false);
    assert_eq!(doc["same_gpu"], true);
    assert_eq!(doc["base"]["label"], base.to_str().unwrap());
    // Every workload's verdict as the CSV gives it.
    let csv = std::fs::read_to_string(tmp.path().join("text/compare.csv")).unwrap();
    let workloads = doc["workloads"].as_array().unwrap();
    assert_eq!(workloads.len() as u64, totals["workloads"].as_u64().unwrap());
    assert_eq!(workloads.len(), csv.lines().count() - 1);
    let header = fields(csv.lines().next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for w in workloads {
        let id = w["id"].as_str().unwrap();
        let row = fields(csv.lines().find(|l| l.starts_with(&format!("{id},"))).unwrap());
        assert_eq!(row[col("verdict")], w["verdict"].as_str().unwrap(), "{row:?}");
        for (column, value) in [
            ("base_ratio", &w["ratio"]["base"]),
            ("new_ratio", &w["ratio"]["new"]),
            ("ratio_difference", &w["ratio"]["difference"]),
            ("ratio_tolerance", &w["ratio"]["tolerance"]),
            ("base_ratio_low", &w["base_interval"][0]),
            ("new_ratio_high", &w["new_interval"][1]),
            ("aggregate_factor", &w["factors"]["aggregate"]),
            ("baseline_factor", &w["factors"]["baseline"]),
        ] {
            // The same digits; serde_json (without `float_roundtrip`) may read them a bit off.
            let (csv, json) = (row[col(column)].parse::<f64>().unwrap(), value.as_f64().unwrap());
            assert!((csv - json).abs() <= 1e-12 * csv.abs(), "{column}: {json} in JSON, {row:?}");
        }
        assert_eq!(row[col("base_in_new_interval")], w["base_in_new"].to_string(), "{row:?}");
        assert_eq!(w["base_interval"].as_array().unwrap().len(), 2);
        assert!(w["factors"]["aggregate"].is_number() && w["factors"]["baseline"].is_number());
    }
    // The claims: `claims: S of N with the same grade`, and each that changed.
    let claims = doc["claims"].as_array().unwrap();
    assert!(stdout.contains(&format!(
        "claims: {} of {} with the same grade",
        totals["claims_same_grade"],
        claims.len()
    )));
    for c in claims.iter().filter(|c| c["base_grade"] != c["new_grade"]) {
        let line = format!(
            "  {}: base {}, new {}",
            c["id"].as_str().unwrap(),
            c["base_grade"].as_str().unwrap(),
            c["new_grade"].as_str().unwrap()
        );
        assert!(stdout.contains(&line), "{line}\n{stdout}");
        assert!(c["base_verdict"].is_string() && c["new_verdict"].is_string());
    }
    assert_eq!(doc["files"].as_array().unwrap().len(), 4);
    assert!(text(&j.stderr).contains("wrote compare.md, compare.csv, compare.svg and compare.png under"));
}

#[test]
fn compare_json_of_a_rerun_that_differs_exits_1_and_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (faster, _) = hosts_pair();
    // The base's runs alone 1.4 times slower (fewer images per iteration, never more than a
    // batch): the new campaign's host runs the model alone 1.4 times faster.
    let base = tmp.path().join("h200-hosts");
    copy_dir(&faster, &base);
    for r in 1..=8 {
        let log = format!("runs/e33-resnet26-cifar10-x1-exclusive@gen.r{r}/job-0.events.jsonl");
        scale_samples(&base, &log, 1.0 / 1.4, true);
    }
    let j = compare(&base, &faster, &tmp.path().join("out"), true);
    assert_eq!(j.status.code(), Some(1), "{}", text(&j.stderr));
    let doc = document(&j);
    assert_valid(&doc, "compare");
    assert_eq!(doc["differs"], true);
    assert_eq!((doc["totals"]["differs"].clone(), doc["totals"]["host_differs"].clone()), (1.into(), 7.into()));
    for w in doc["workloads"].as_array().unwrap() {
        let alone = w["id"].as_str().unwrap().contains("exclusive");
        assert_eq!(w["verdict"], if alone { "differs" } else { "agrees, the host differs" }, "{w}");
        if !alone {
            assert!((w["factors"]["baseline"].as_f64().unwrap() - 1.4).abs() < 0.01, "{w}");
        }
    }

    // An error (a directory that is none): exit 2, nothing on stdout.
    let missing = tmp.path().join("no-such-campaign");
    let e = compare(&missing, &base, &tmp.path().join("out"), true);
    assert_eq!(e.status.code(), Some(2));
    assert!(e.stdout.is_empty() && text(&e.stderr).contains("base campaign directory"), "{}", text(&e.stderr));
}

#[test]
fn validate_json_of_the_shipped_project_counts_what_the_text_counts() {
    let t = xtask(&["validate"]);
    let j = xtask(&["validate", "--json"]);
    assert_eq!((t.status.code(), j.status.code()), (Some(0), Some(0)), "{}", text(&j.stderr));
    let doc = document(&j);
    assert_valid(&doc, "validate");
    assert_eq!((doc["valid"].clone(), doc["problems"].clone()), (true.into(), serde_json::json!([])));
    let s = &doc["summary"];
    let line = format!(
        "valid: {} spec files ({} experiments, {} workloads), {} GPU tables, artifact.yaml ({} campaigns), {} claims\n",
        s["spec_files"], s["experiments"], s["workloads"], s["gpu_tables"], s["campaigns"], s["claims"]
    );
    assert_eq!(text(&t.stdout), line);
    assert_eq!(s["workloads"], 198);
}

#[test]
fn validate_json_names_the_file_line_and_column_of_a_broken_artifact() {
    let tmp = tempfile::tempdir().unwrap();
    let project = copy_of_project(tmp.path(), &["experiments"]);
    let path = project.join("artifact.yaml");
    let yaml = std::fs::read_to_string(&path).unwrap();
    let at = yaml.lines().position(|l| l.starts_with("shipped_campaign: ")).expect("artifact.yaml names one");
    let broken: Vec<String> = yaml
        .lines()
        .enumerate()
        .map(|(i, l)| if i == at { "shipped_campaign: no-such-campaign".to_string() } else { l.to_string() })
        .collect();
    std::fs::write(&path, broken.join("\n") + "\n").unwrap();
    let root = project.to_str().unwrap();
    let t = xtask(&["--root", root, "validate"]);
    let j = xtask(&["--root", root, "validate", "--json"]);
    assert_eq!((t.status.code(), j.status.code()), (Some(1), Some(1)));
    let doc = document(&j);
    assert_valid(&doc, "validate");
    assert_eq!((doc["valid"].clone(), doc["summary"].clone()), (false.into(), Value::Null));
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    let p = &problems[0];
    assert_eq!(p["file"], "artifact.yaml");
    assert_eq!(p["line"], at as u64 + 1);
    assert_eq!(p["column"], "shipped_campaign: ".len() as u64 + 1);
    assert_eq!(p["source_line"], "shipped_campaign: no-such-campaign");
    assert!(p["message"].as_str().unwrap().contains("no-such-campaign"), "{p}");
    let stderr = text(&t.stderr);
    let head = format!("artifact.yaml:{}:{}: error: {}", p["line"], p["column"], p["message"].as_str().unwrap());
    assert!(stderr.starts_with(&head), "{head}\n{stderr}");
    assert!(j.stderr.is_empty(), "{}", text(&j.stderr));

    // A file that does not exist: a problem without a place.
    let j = xtask(&["--root", root, "validate", "--json", "no-such-spec.yaml"]);
    assert_eq!(j.status.code(), Some(1));
    let doc = document(&j);
    assert_valid(&doc, "validate");
    let p = doc["problems"].as_array().unwrap().iter().find(|p| p["message"] == "no such file").unwrap().clone();
    assert_eq!((p["line"].clone(), p["column"].clone()), (Value::Null, Value::Null));
    assert!(p["file"].as_str().unwrap().ends_with("no-such-spec.yaml"), "{p}");
}
