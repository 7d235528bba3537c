//! The campaign's `SHA256SUMS`: `sha256sum` format (`<64 hex>  <relative path>`), sorted by
//! path, rewritten atomically (temporary file, fsync, rename, fsync of the directory).
//! `sha256sum -c SHA256SUMS` inside the campaign directory verifies it.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::layout::{MANIFEST, QUARANTINE_DIR};

/// Relative path (with `/`) → lowercase hex sha256.
pub type Manifest = BTreeMap<String, String>;

pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut f = fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}:{line}: not a sha256sum line: {text:?}")]
    Syntax { path: PathBuf, line: usize, text: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// Reads `dir/SHA256SUMS`; a missing manifest is an empty one.
pub fn read(dir: &Path) -> Result<Manifest, ManifestError> {
    let path = dir.join(MANIFEST);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Manifest::new()),
        Err(source) => return Err(ManifestError::Io { path, source }),
    };
    parse(&text).map_err(|(line, text)| ManifestError::Syntax { path, line, text })
}

/// Parses manifest text; on error gives the 1-based line and its text.
pub fn parse(text: &str) -> Result<Manifest, (usize, String)> {
    let mut m = Manifest::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = || (i + 1, line.to_string());
        let (sum, rest) = line.split_at_checked(64).ok_or_else(bad)?;
        let file = rest.strip_prefix("  ").or_else(|| rest.strip_prefix(" *")).ok_or_else(bad)?;
        if !sum.bytes().all(|b| b.is_ascii_hexdigit()) || file.is_empty() {
            return Err(bad());
        }
        m.insert(file.to_string(), sum.to_ascii_lowercase());
    }
    Ok(m)
}

pub fn render(m: &Manifest) -> String {
    m.iter().map(|(p, s)| format!("{s}  {p}\n")).collect()
}

/// Writes `bytes` to `path` atomically: a temporary sibling, fsync, rename, fsync of the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    fsync_dir(dir)
}

pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Adds every file under `campaign_dir/rel_dir` to the manifest and rewrites it atomically.
/// Entries already present for those paths must not differ: a directory in the manifest is
/// never modified.
pub fn add_dir(campaign_dir: &Path, rel_dir: &str) -> Result<Manifest, ManifestError> {
    let mut m = read(campaign_dir)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ManifestError::Io { path, source }
    };
    for rel in list_files(campaign_dir, Path::new(rel_dir)).map_err(io(&campaign_dir.join(rel_dir)))? {
        let full = campaign_dir.join(&rel);
        let sum = sha256_file(&full).map_err(io(&full))?;
        if let Some(old) = m.get(&rel) {
            if *old != sum {
                return Err(ManifestError::Io {
                    path: full,
                    source: io::Error::other("already in the manifest with another checksum"),
                });
            }
        }
        m.insert(rel, sum);
    }
    let path = campaign_dir.join(MANIFEST);
    write_atomic(&path, render(&m).as_bytes()).map_err(io(&path))?;
    Ok(m)
}

/// Files under `dir/rel` as sorted relative paths with `/`.
pub fn list_files(dir: &Path, rel: &Path) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    walk(dir, rel, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<String>) -> io::Result<()> {
    for entry in fs::read_dir(root.join(rel))? {
        let entry = entry?;
        let r = rel.join(entry.file_name());
        let ty = entry.file_type()?;
        if ty.is_dir() {
            walk(root, &r, out)?;
        } else {
            out.push(r.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

/// One way a campaign directory differs from its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// In the manifest, not on disk.
    Missing(String),
    /// On disk (outside `quarantine/`), not in the manifest.
    Extra(String),
    /// Checksum differs; sizes tell truncation apart.
    Altered {
        path: String,
        expected: String,
        actual: String,
    },
    Unreadable {
        path: String,
        error: String,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Missing(p) => write!(f, "{p}: listed in {MANIFEST} but missing"),
            Problem::Extra(p) => write!(f, "{p}: present but not listed in {MANIFEST}"),
            Problem::Altered { path, expected, actual } => {
                write!(f, "{path}: checksum differs (expected {expected}, found {actual})")
            }
            Problem::Unreadable { path, error } => write!(f, "{path}: cannot be read: {error}"),
        }
    }
}

/// Verifies a campaign directory against its manifest: every listed file present with its
/// checksum, and no unlisted file except the manifest itself, dot-files left by an interrupted
/// write, and `quarantine/`.
pub fn verify(campaign_dir: &Path) -> Result<Vec<Problem>, ManifestError> {
    let m = read(campaign_dir)?;
    let mut problems = Vec::new();
    for (rel, expected) in &m {
        let full = campaign_dir.join(rel);
        match sha256_file(&full) {
            Ok(actual) if actual == *expected => {}
            Ok(actual) => problems.push(Problem::Altered { path: rel.clone(), expected: expected.clone(), actual }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => problems.push(Problem::Missing(rel.clone())),
            Err(e) => problems.push(Problem::Unreadable { path: rel.clone(), error: e.to_string() }),
        }
    }
    let on_disk = list_files(campaign_dir, Path::new(""))
        .map_err(|source| ManifestError::Io { path: campaign_dir.to_path_buf(), source })?;
    for rel in on_disk {
        let ignored = rel == MANIFEST
            || rel.starts_with(&format!("{QUARANTINE_DIR}/"))
            || rel.split('/').any(|c| c.starts_with('.'))
            || rel == "README.md";
        if !ignored && !m.contains_key(&rel) {
            problems.push(Problem::Extra(rel));
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_verify_and_detect_changes() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("runs/a.r1");
        fs::create_dir_all(&run).unwrap();
        fs::write(run.join("meta.json"), b"{}").unwrap();
        fs::write(run.join("x.txt"), b"hello").unwrap();
        add_dir(d.path(), "runs/a.r1").unwrap();
        assert!(verify(d.path()).unwrap().is_empty());
        let text = fs::read_to_string(d.path().join(MANIFEST)).unwrap();
        assert!(text.contains("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  runs/a.r1/x.txt"));

        fs::write(run.join("x.txt"), b"hellO").unwrap();
        fs::write(run.join("new.txt"), b"").unwrap();
        fs::remove_file(run.join("meta.json")).unwrap();
        let p = verify(d.path()).unwrap();
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p.contains(&Problem::Missing("runs/a.r1/meta.json".into())));
        assert!(p.contains(&Problem::Extra("runs/a.r1/new.txt".into())));
        assert!(p.iter().any(|q| matches!(q, Problem::Altered { path, .. } if path == "runs/a.r1/x.txt")));
    }

    #[test]
    fn a_listed_file_is_never_rechecksummed_differently() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("runs/a")).unwrap();
        fs::write(d.path().join("runs/a/f"), b"1").unwrap();
        add_dir(d.path(), "runs/a").unwrap();
        fs::write(d.path().join("runs/a/f"), b"2").unwrap();
        assert!(add_dir(d.path(), "runs/a").is_err());
    }

    #[test]
    fn parse_rejects_garbage_with_line() {
        let good = format!("{}  runs/x\n", "a".repeat(64));
        assert_eq!(parse(&good).unwrap().len(), 1);
        let bad = format!("{good}zz  runs/y\n");
        assert_eq!(parse(&bad).unwrap_err().0, 2);
    }
}
