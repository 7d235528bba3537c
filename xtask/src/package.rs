//! `cargo xtask package` and `cargo xtask verify-package`: a deterministic archive of the
//! tracked sources, shipped traces and outputs, and its check; and the citation metadata
//! (`CITATION.cff`, `.zenodo.json`, `codemeta.json`), all made from `artifact.yaml`.
//!
//! The archive is a `.tar.gz` whose entries are the files git tracks, sorted, under one
//! folder `<name>-<version>/`, with owner 0, mode 0644 (0755 for executables), a fixed
//! modification time and a gzip header without time or name, plus `CHECKSUMS.sha256` listing
//! every other entry: the same commit packs to the same bytes.

use anyhow::{bail, ensure, Context, Result};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Modification time of every entry: 2000-01-01T00:00:00Z (tools read 0 as "unknown").
const MTIME: u64 = 946_684_800;
pub const CHECKSUMS: &str = "CHECKSUMS.sha256";

#[derive(clap::Args)]
pub struct Args {
    /// The archive to write (default: target/package/<name>-<version>.tar.gz).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Pack although the working tree differs from the commit (the archive then says so).
    #[arg(long)]
    pub allow_dirty: bool,
    /// Only (re)write CITATION.cff, .zenodo.json and codemeta.json from artifact.yaml.
    #[arg(long)]
    pub metadata: bool,
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The archive to check.
    pub file: PathBuf,
}

fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .with_context(|| format!("cannot run git {}", args.join(" ")))?;
    ensure!(out.status.success(), "git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    Ok(out.stdout)
}

/// The tracked files of the work tree at `root`, sorted, with whether each is executable.
fn tracked_files(root: &Path) -> Result<Vec<(String, bool)>> {
    let out = git(root, &["ls-files", "-z", "--stage"])?;
    let mut files = Vec::new();
    for rec in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rec = std::str::from_utf8(rec).context("a tracked path is not UTF-8")?;
        // `<mode> <object> <stage>\t<path>`
        let (meta, path) = rec.split_once('\t').context("unexpected git ls-files output")?;
        if meta.starts_with("120000") || meta.starts_with("160000") {
            bail!("{path}: a symbolic link or submodule; the archive holds regular files only");
        }
        files.push((path.to_string(), meta.starts_with("100755")));
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// A regular file's header; names longer than it holds go into a GNU long-name entry
/// (`append_data` writes it).
fn header(size: u64, executable: bool) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_size(size);
    h.set_mode(if executable { 0o755 } else { 0o644 });
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(MTIME);
    h.set_entry_type(tar::EntryType::Regular);
    h
}

/// Packs the tracked files of `root` into `out`; returns the number of files listed in
/// `CHECKSUMS.sha256` and the archive's sha256.
pub fn pack(root: &Path, out: &Path, name: &str, version: &str, allow_dirty: bool) -> Result<(usize, String)> {
    let dirty = !git(root, &["status", "--porcelain", "--untracked-files=no"])?.is_empty();
    ensure!(
        !dirty || allow_dirty,
        "the working tree differs from the commit; commit first (or --allow-dirty, and the archive will not match any commit)"
    );
    let commit = String::from_utf8_lossy(&git(root, &["rev-parse", "HEAD"])?).trim().to_string();
    let prefix = format!("{name}-{version}");
    let mut entries: Vec<(String, Vec<u8>, bool)> = Vec::new();
    for (path, exec) in tracked_files(root)? {
        let full = root.join(&path);
        let bytes = match std::fs::symlink_metadata(&full) {
            Ok(md) if md.file_type().is_file() => {
                std::fs::read(&full).with_context(|| format!("cannot read {path}"))?
            }
            Ok(_) => bail!("{path}: not a regular file"),
            // Deleted in the work tree (only with --allow-dirty).
            Err(_) => continue,
        };
        entries.push((path, bytes, exec));
    }
    let source = format!("commit {commit}{}\n", if dirty { " with uncommitted changes" } else { "" });
    entries.push(("SOURCE".into(), source.into_bytes(), false));
    let sums: String = entries.iter().map(|(path, bytes, _)| format!("{}  {path}\n", sha256(bytes))).collect();
    entries.push((CHECKSUMS.into(), sums.into_bytes(), false));

    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let gz = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    let n = entries.len() - 1;
    for (path, bytes, exec) in entries {
        let mut h = header(bytes.len() as u64, exec);
        tar.append_data(&mut h, format!("{prefix}/{path}"), bytes.as_slice())
            .with_context(|| format!("cannot add {path}"))?;
    }
    let bytes = tar.into_inner()?.finish()?;
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, &bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, out).with_context(|| format!("cannot write {}", out.display()))?;
    Ok((n, sha256(&bytes)))
}

use colloc_trace::manifest::sha256_bytes as sha256;

/// What `verify-package` found.
#[derive(Debug, Default)]
pub struct Check {
    pub files: usize,
    pub problems: Vec<String>,
}

/// Checks an archive: one top folder, regular files only, no path leaving it, and every
/// file listed in `CHECKSUMS.sha256` with its checksum, nothing unlisted.
pub fn verify(file: &Path) -> Result<Check> {
    let f = std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let mut listed: Option<String> = None;
    let mut prefix: Option<String> = None;
    let mut check = Check::default();
    for entry in ar.entries().with_context(|| format!("{}: not a tar.gz archive", file.display()))? {
        let mut e = entry.with_context(|| format!("{}: a damaged entry", file.display()))?;
        let path = e.path()?.to_string_lossy().into_owned();
        if e.header().entry_type() != tar::EntryType::Regular {
            check.problems.push(format!("{path}: not a regular file"));
            continue;
        }
        let Some((top, rel)) = path.split_once('/') else {
            check.problems.push(format!("{path}: outside the archive's folder"));
            continue;
        };
        if colloc_trace::manifest::bad_entry_path(rel).is_some() || top.is_empty() || top == ".." {
            check.problems.push(format!("{path}: a path that is not a plain relative one"));
            continue;
        }
        match &prefix {
            None => prefix = Some(top.to_string()),
            Some(p) if p != top => check.problems.push(format!("{path}: a second top folder")),
            Some(_) => {}
        }
        let mut bytes = Vec::new();
        e.read_to_end(&mut bytes)?;
        if rel == CHECKSUMS {
            listed = Some(String::from_utf8(bytes).context("CHECKSUMS.sha256 is not UTF-8")?);
        } else if found.insert(rel.to_string(), sha256(&bytes)).is_some() {
            check.problems.push(format!("{rel}: twice in the archive"));
        }
    }
    let Some(listed) = listed else { bail!("{}: no {CHECKSUMS} in the archive", file.display()) };
    let listed = colloc_trace::manifest::parse(&listed)
        .map_err(|(line, text, why)| anyhow::anyhow!("{CHECKSUMS}:{line}: {why}: {text:?}"))?;
    for (rel, sum) in &listed {
        match found.get(rel) {
            Some(s) if s == sum => check.files += 1,
            Some(s) => check.problems.push(format!("{rel}: checksum differs (listed {sum}, found {s})")),
            None => check.problems.push(format!("{rel}: listed but not in the archive")),
        }
    }
    for rel in found.keys().filter(|r| !listed.contains_key(*r)) {
        check.problems.push(format!("{rel}: in the archive but not listed"));
    }
    Ok(check)
}

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root()?;
    let project = colloc_spec::load_project(&root)?;
    let s = &project.artifact.software;
    let files = colloc_reproduce::metadata_files(&project.artifact);
    if a.metadata {
        for (path, text) in &files {
            std::fs::write(root.join(path), text).with_context(|| format!("cannot write {path}"))?;
            println!("wrote {path}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    for (path, text) in &files {
        let now = std::fs::read_to_string(root.join(path)).unwrap_or_default();
        ensure!(now == *text, "{path} differs from artifact.yaml: `cargo xtask package --metadata` rewrites it");
    }
    let out = a.out.unwrap_or_else(|| root.join("target/package").join(format!("{}-{}.tar.gz", s.name, s.version)));
    let t = std::time::Instant::now();
    let (n, sum) = pack(&root, &out, &s.name, &s.version, a.allow_dirty)?;
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!(
        "{}: {n} files and {CHECKSUMS}, {:.1} MiB, sha256 {sum} ({:.1} s)",
        out.strip_prefix(&root).unwrap_or(&out).display(),
        size as f64 / (1024.0 * 1024.0),
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn verify_main(a: VerifyArgs) -> Result<ExitCode> {
    let c = verify(&a.file)?;
    if c.problems.is_empty() {
        println!("{}: {} files, every one as listed in {CHECKSUMS}", a.file.display(), c.files);
        Ok(ExitCode::SUCCESS)
    } else {
        for p in &c.problems {
            eprintln!("{}: {p}", a.file.display());
        }
        eprintln!("{}: {} problem(s)", a.file.display(), c.problems.len());
        Ok(ExitCode::FAILURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_metadata_is_made_from_artifact_yaml() {
        let root = crate::project_root().unwrap();
        let project = colloc_spec::load_project(&root).unwrap();
        for (path, text) in colloc_reproduce::metadata_files(&project.artifact) {
            let now = std::fs::read_to_string(root.join(path)).unwrap_or_default();
            assert!(now == text, "{path} is stale: `cargo xtask package --metadata` rewrites it");
        }
    }

    fn git_in(dir: &Path, args: &[&str]) {
        let st = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    }

    #[test]
    fn the_same_commit_packs_to_the_same_bytes_and_verifies() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("repo");
        std::fs::create_dir_all(repo.join("data/c/runs/a-long-run-name-that-is-long.r1")).unwrap();
        let long = format!("data/c/runs/a-long-run-name-that-is-long.r1/{}.json", "x".repeat(120));
        std::fs::write(repo.join(&long), b"{}").unwrap();
        std::fs::write(repo.join("README.md"), b"hello\n").unwrap();
        std::fs::write(repo.join("run.sh"), b"#!/bin/sh\n").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        git_in(&repo, &["init", "-q"]);
        git_in(&repo, &["add", "."]);
        git_in(&repo, &["commit", "-q", "-m", "x"]);
        let a = d.path().join("a.tar.gz");
        let b = d.path().join("b.tar.gz");
        pack(&repo, &a, "art", "1.0", false).unwrap();
        // Other modification times and a second run give the same bytes.
        std::fs::write(repo.join("README.md"), b"hello\n").unwrap();
        pack(&repo, &b, "art", "1.0", false).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let c = verify(&a).unwrap();
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.files, 4, "three files and SOURCE");
        assert_eq!(pack(&repo, &b, "art", "1.0", false).unwrap().0, 4);
        // A dirty tree is refused unless asked for.
        std::fs::write(repo.join("README.md"), b"changed\n").unwrap();
        assert!(pack(&repo, &b, "art", "1.0", false).is_err());
        pack(&repo, &b, "art", "1.0", true).unwrap();
        assert!(verify(&b).unwrap().problems.is_empty());
        assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }

    #[test]
    fn a_tampered_archive_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.tar.gz");
        let write = |files: &[(&str, &[u8])]| {
            let gz = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::default());
            let mut tar = tar::Builder::new(gz);
            for (p, b) in files {
                let mut h = header(b.len() as u64, false);
                tar.append_data(&mut h, p, *b).unwrap();
            }
            std::fs::write(&path, tar.into_inner().unwrap().finish().unwrap()).unwrap();
        };
        let sum = sha256(b"one");
        let sums = format!("{sum}  a.txt\n");
        write(&[("x/a.txt", b"one"), ("x/CHECKSUMS.sha256", sums.as_bytes())]);
        assert!(verify(&path).unwrap().problems.is_empty());
        write(&[("x/a.txt", b"two"), ("x/CHECKSUMS.sha256", sums.as_bytes())]);
        assert!(verify(&path).unwrap().problems[0].contains("checksum differs"));
        write(&[("x/a.txt", b"one"), ("x/b.txt", b""), ("x/CHECKSUMS.sha256", sums.as_bytes())]);
        assert!(verify(&path).unwrap().problems[0].contains("not listed"));
        write(&[("x/a.txt", b"one"), ("y/a.txt", b"one"), ("x/CHECKSUMS.sha256", sums.as_bytes())]);
        assert!(verify(&path).unwrap().problems.iter().any(|p| p.contains("second top folder")));
        write(&[("x/a.txt", b"one")]);
        assert!(verify(&path).is_err());
    }
}
