//! What the xtask's integration tests share: the project root and a recursive copy.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Copies the directory `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A project under `tmp/project`: `artifact.yaml` and the directories `dirs` of this one.
pub fn copy_of_project(tmp: &Path, dirs: &[&str]) -> PathBuf {
    let p = tmp.join("project");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::copy(root().join("artifact.yaml"), p.join("artifact.yaml")).unwrap();
    for d in dirs {
        copy_dir(&root().join(d), &p.join(d));
    }
    p
}

/// Scales the `images` of every `sample` event (protocol 1) and of every iteration in the
/// `iterations` events (protocol 2) in the event log `rel` of the campaign directory `dir`
/// by `factor`; with `manifest`, enters the file's new checksum in
/// `SHA256SUMS` (without it, the campaign no longer verifies).
pub fn scale_samples(dir: &Path, rel: &str, factor: f64, manifest: bool) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = String::new();
    let mut scaled = 0;
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["event"] == "sample" {
            let images = v["images"].as_f64().unwrap();
            v["images"] = serde_json::json!((images * factor).round() as u64);
            scaled += 1;
            out.push_str(&serde_json::to_string(&v).unwrap());
        } else if v["event"] == "iterations" {
            let images: Vec<u64> =
                v["images"].as_array().unwrap().iter().map(|i| (i.as_f64().unwrap() * factor).round() as u64).collect();
            v["images"] = serde_json::json!(images);
            scaled += 1;
            out.push_str(&serde_json::to_string(&v).unwrap());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    assert!(scaled > 0, "no sample or iterations events in {rel}");
    std::fs::write(&path, out).unwrap();
    if manifest {
        let sums = dir.join("SHA256SUMS");
        let sum = colloc_trace::manifest::sha256_file(&path).unwrap();
        let text = std::fs::read_to_string(&sums).unwrap();
        let suffix = format!("  {rel}");
        assert!(text.lines().any(|l| l.ends_with(&suffix)), "{rel} not in SHA256SUMS");
        let new: String = text
            .lines()
            .map(|l| if l.ends_with(&suffix) { format!("{sum}{suffix}\n") } else { format!("{l}\n") })
            .collect();
        std::fs::write(&sums, new).unwrap();
    }
}

/// The fields of a CSV line (quoted fields may hold commas; no quotes inside them here).
pub fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}
