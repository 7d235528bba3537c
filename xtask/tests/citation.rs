//! What a repository (Zenodo, a citation tool, a package index) reads of the artifact agrees:
//! `.zenodo.json`, `CITATION.cff` (parsed as YAML), `codemeta.json` and Cargo.toml (through
//! `cargo metadata`) give one licence, one version and one title, and each licence the
//! code names has its text beside it.

mod common;

use common::root;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn json(file: &str) -> Value {
    let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn citation() -> Value {
    let text = std::fs::read_to_string(root().join("CITATION.cff")).unwrap();
    colloc_spec::parse_yaml::<Value>(Path::new("CITATION.cff"), &text).unwrap_or_else(|d| panic!("{d}"))
}

/// The workspace members' `(license, version)`, each the same for all.
fn cargo() -> (String, String) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--locked", "--no-deps", "--format-version", "1"])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo metadata failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    let of = |key: &str| -> BTreeSet<String> {
        m["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[key].as_str().unwrap_or_else(|| panic!("{} has no {key}", p["name"])).to_string())
            .collect()
    };
    let (licenses, versions) = (of("license"), of("version"));
    assert_eq!(licenses.len(), 1, "the workspace's crates differ in licence: {licenses:?}");
    assert_eq!(versions.len(), 1, "the workspace's crates differ in version: {versions:?}");
    (licenses.into_iter().next().unwrap(), versions.into_iter().next().unwrap())
}

/// `MIT OR Apache-2.0` → {MIT, Apache-2.0}.
fn alternatives(expression: &str) -> BTreeSet<String> {
    let ids: BTreeSet<String> = expression.split(" OR ").map(|l| l.trim().to_string()).collect();
    assert!(
        ids.iter().all(|l| !l.is_empty() && !l.contains(' ') && !l.contains('(')),
        "only `A OR B` expressions are read here: {expression}"
    );
    ids
}

fn strings(v: &Value, what: &str) -> BTreeSet<String> {
    match v {
        Value::String(s) => BTreeSet::from([s.clone()]),
        Value::Array(a) => a.iter().map(|x| x.as_str().unwrap_or_else(|| panic!("{what}: {x}")).to_string()).collect(),
        other => panic!("{what}: neither a string nor a list: {other}"),
    }
}

#[test]
fn the_licence_is_the_same_everywhere() {
    let (expression, _) = cargo();
    let ids = alternatives(&expression);
    assert_eq!(
        strings(&citation()["license"], "CITATION.cff license"),
        ids,
        "CITATION.cff's licences are not Cargo.toml's {expression}"
    );
    let codemeta: BTreeSet<String> = strings(&json("codemeta.json")["license"], "codemeta.json license")
        .iter()
        .map(|u| u.strip_prefix("https://spdx.org/licenses/").unwrap_or(u).to_string())
        .collect();
    assert_eq!(codemeta, ids, "codemeta.json's licences are not Cargo.toml's {expression}");
    // Zenodo's field takes one identifier: one of the alternatives, the whole expression in
    // the notes.
    let zenodo = json(".zenodo.json");
    let one = zenodo["license"].as_str().expect(".zenodo.json license is one identifier");
    assert!(ids.contains(one), ".zenodo.json's licence {one} is not one of Cargo.toml's {expression}");
    let notes = zenodo["notes"].as_str().unwrap_or_default();
    assert!(
        notes.contains(&format!("Code: {expression}")),
        ".zenodo.json's notes do not say `Code: {expression}`: {notes}"
    );
    for id in &ids {
        let (file, heading) = match id.as_str() {
            "MIT" => ("LICENSE-MIT", "MIT License"),
            "Apache-2.0" => ("LICENSE-APACHE", "Apache License"),
            other => panic!("no licence file known for {other}"),
        };
        let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(text.contains(heading), "{file} is not the {id} text");
    }
    let data = std::fs::read_to_string(root().join("LICENSE-DATA")).unwrap();
    for id in &ids {
        let file = if id == "MIT" { "LICENSE-MIT" } else { "LICENSE-APACHE" };
        assert!(data.contains(file), "LICENSE-DATA does not name {file} for the code");
    }
}

#[test]
fn the_version_and_the_title_are_the_same_everywhere() {
    let (_, version) = cargo();
    let (zenodo, cff, codemeta) = (json(".zenodo.json"), citation(), json("codemeta.json"));
    for (file, v) in [
        (".zenodo.json", &zenodo["version"]),
        ("CITATION.cff", &cff["version"]),
        ("codemeta.json", &codemeta["version"]),
    ] {
        assert_eq!(v.as_str(), Some(version.as_str()), "{file}'s version is not Cargo.toml's {version}");
    }
    let title = zenodo["title"].as_str().expect(".zenodo.json has a title");
    assert_eq!(cff["title"].as_str(), Some(title), "CITATION.cff's title is not .zenodo.json's");
    assert_eq!(codemeta["name"].as_str(), Some(title), "codemeta.json's name is not .zenodo.json's title");
    let artifact = std::fs::read_to_string(root().join("artifact.yaml")).unwrap();
    assert!(artifact.contains(title), "artifact.yaml's software title is not {title:?}");
}
