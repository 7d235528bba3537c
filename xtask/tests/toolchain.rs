//! The Rust toolchain the artifact says it needs is the one its locked dependencies need:
//! the workspace's `rust-version` (Cargo.toml) is at least every locked package's
//! `rust_version` (`cargo metadata --locked`), the toolchain running the tests is not older,
//! and the README and the appendix state that version. No `rust-toolchain.toml` pins a
//! channel: CI has only the stable toolchain.

mod common;

use common::root;
use std::process::Command;

/// `1.88`, `1.88.0`, `1.95.0-nightly` → `(1, 88, 0)`, `(1, 95, 0)`.
fn version(s: &str) -> (u64, u64, u64) {
    let numeric = s.trim().split(['-', '+', ' ']).next().unwrap_or("");
    let mut parts = numeric.split('.').map(|p| p.parse::<u64>().unwrap_or_else(|_| panic!("not a version: {s:?}")));
    let major = parts.next().unwrap_or_else(|| panic!("not a version: {s:?}"));
    (major, parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

fn show((a, b, c): (u64, u64, u64)) -> String {
    format!("{a}.{b}.{c}")
}

fn metadata() -> serde_json::Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--locked", "--format-version", "1"])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo metadata --locked failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// The workspace's declared `rust-version`: every member inherits the same one.
fn declared(m: &serde_json::Value) -> String {
    let members: Vec<&str> = m["workspace_members"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let mut versions: Vec<(String, String)> = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| members.contains(&p["id"].as_str().unwrap()))
        .map(|p| {
            let name = p["name"].as_str().unwrap().to_string();
            let rv = p["rust_version"].as_str().unwrap_or_else(|| panic!("{name} declares no rust-version"));
            (name, rv.to_string())
        })
        .collect();
    versions.sort();
    assert!(!versions.is_empty(), "no workspace members in cargo metadata");
    let first = versions[0].1.clone();
    for (name, rv) in &versions {
        assert_eq!(rv, &first, "{name} declares rust-version {rv}, another member {first}: use rust-version.workspace");
    }
    first
}

#[test]
fn no_locked_dependency_needs_a_newer_rust_than_the_workspace_declares() {
    let m = metadata();
    let declared_s = declared(&m);
    let want = version(&declared_s);
    let members: Vec<&str> = m["workspace_members"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let mut newer: Vec<String> = m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !members.contains(&p["id"].as_str().unwrap()))
        .filter_map(|p| {
            let rv = p["rust_version"].as_str()?;
            (version(rv) > want)
                .then(|| format!("{} {} needs Rust {rv}", p["name"].as_str().unwrap(), p["version"].as_str().unwrap()))
        })
        .collect();
    newer.sort();
    assert!(
        newer.is_empty(),
        "the workspace declares rust-version {declared_s} (Cargo.toml) but Cargo.lock holds packages that need a newer \
         Rust: {}; raise rust-version to the highest of them (or lock older versions)",
        newer.join("; ")
    );
}

#[test]
fn the_running_toolchain_is_not_older_than_the_declared_rust_version() {
    let declared_s = declared(&metadata());
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(&rustc).arg("--version").current_dir(root()).output().expect("rustc runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // `rustc 1.95.0 (59807616e 2026-04-14)`
    let got = text.split_whitespace().nth(1).unwrap_or_else(|| panic!("rustc --version printed {text:?}"));
    assert!(
        version(got) >= version(&declared_s),
        "`{} --version` says {got}, older than the workspace's rust-version {declared_s} (Cargo.toml), the \
         oldest Rust the locked dependencies build with; `rustup update stable`",
        rustc.to_string_lossy()
    );
}

#[test]
fn the_readme_and_the_appendix_state_the_declared_rust_version() {
    let declared_s = declared(&metadata());
    for (file, phrase) in [("README.md", "Rust "), ("paper/APPENDIX.md", "a Rust toolchain ")] {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let stated: Vec<&str> = text
            .match_indices(phrase)
            .filter_map(|(at, _)| {
                let rest = &text[at + phrase.len()..];
                let v = rest.split_whitespace().next()?;
                (rest[v.len()..].trim_start().starts_with("or newer") && v.starts_with(|c: char| c.is_ascii_digit()))
                    .then_some(v)
            })
            .collect();
        assert!(!stated.is_empty(), "{file} does not say which Rust it needs (`{phrase}X or newer`)");
        for v in stated {
            assert_eq!(v, declared_s, "{file} says {phrase}{v} or newer; Cargo.toml's rust-version is {declared_s}");
        }
    }
}

#[test]
fn no_toolchain_file_pins_a_channel() {
    for f in ["rust-toolchain", "rust-toolchain.toml"] {
        assert!(
            !root().join(f).exists(),
            "{f} pins a toolchain; CI has only the stable one and cannot download another (rust-version says the minimum)"
        );
    }
}

#[test]
fn versions_compare_as_numbers() {
    assert!(version("1.100") > version("1.95.0"));
    assert_eq!(version("1.95"), version("1.95.0"));
    assert_eq!(show(version("1.95.0-nightly")), "1.95.0");
}
