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
    sha256_reader(fs::File::open(path)?)
}

pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}:{line}: {why}: {text:?}")]
    Syntax { path: PathBuf, line: usize, text: String, why: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// Reads `dir/SHA256SUMS`; a missing manifest is an empty one. The manifest itself must be
/// a regular file, not a link, of at most [`crate::limits::MAX_MANIFEST_BYTES`] (read no
/// further).
pub fn read(dir: &Path) -> Result<Manifest, ManifestError> {
    let path = dir.join(MANIFEST);
    let text = match open_manifest(dir) {
        Ok(f) => crate::limits::read_text(f, crate::limits::MAX_MANIFEST_BYTES).map_err(|why| ManifestError::Io {
            path: path.clone(),
            source: io::Error::new(io::ErrorKind::InvalidData, why),
        })?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Manifest::new()),
        Err(source) => return Err(ManifestError::Io { path, source }),
    };
    parse(&text).map_err(|(line, text, why)| ManifestError::Syntax { path, line, text, why })
}

/// Why a manifest entry's path is refused, if it is: it must name a file inside the
/// campaign directory, relative, with `/` between plain components.
pub fn bad_entry_path(file: &str) -> Option<&'static str> {
    if file.starts_with('/') {
        return Some("an absolute path");
    }
    if file.contains('\\') || file.contains('\0') || file.chars().any(char::is_control) {
        return Some("a path with a backslash or a control character");
    }
    for c in file.split('/') {
        match c {
            "" => return Some("a path with an empty component"),
            "." => return Some("a path with a `.` component"),
            ".." => return Some("a path that leaves the campaign directory (`..`)"),
            _ => {}
        }
    }
    None
}

/// Parses manifest text; on error gives the 1-based line, its text and what is wrong.
pub fn parse(text: &str) -> Result<Manifest, (usize, String, String)> {
    let mut m = Manifest::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| (i + 1, line.to_string(), why.to_string());
        let syntax = || bad("not a sha256sum line");
        let (sum, rest) = line.split_at_checked(64).ok_or_else(syntax)?;
        let file = rest.strip_prefix("  ").or_else(|| rest.strip_prefix(" *")).ok_or_else(syntax)?;
        if !sum.bytes().all(|b| b.is_ascii_hexdigit()) || file.is_empty() {
            return Err(syntax());
        }
        if let Some(why) = bad_entry_path(file) {
            return Err(bad(why));
        }
        if m.insert(file.to_string(), sum.to_ascii_lowercase()).is_some() {
            return Err(bad("a file listed twice"));
        }
    }
    Ok(m)
}

/// Opens `dir/SHA256SUMS` only if it is a regular file and not a symbolic link: nothing
/// outside the campaign directory is read through it.
fn open_manifest(dir: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(dir.join(MANIFEST));
    let f = match f {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "a symbolic link"))
        }
        other => other?,
    };
    if !f.metadata()?.file_type().is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not a regular file"));
    }
    Ok(f)
}

fn sha256_reader(mut f: impl Read) -> io::Result<String> {
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

/// Files under `dir/rel` as sorted relative paths with `/`; an entry that is a link, not a
/// regular file or directory, or whose name is not UTF-8 is an error naming it.
pub fn list_files(dir: &Path, rel: &Path) -> io::Result<Vec<String>> {
    let (files, odd) = entries(dir, rel)?;
    match odd.into_iter().next() {
        Some((path, what)) => Err(io::Error::new(io::ErrorKind::InvalidData, format!("{path}: {what}"))),
        None => Ok(files),
    }
}

/// Entries that are not regular files or directories, with what they are.
type Odd = Vec<(String, &'static str)>;

/// Regular files under `dir/rel` (sorted) and the entries that are something else, with what.
fn entries(dir: &Path, rel: &Path) -> io::Result<(Vec<String>, Odd)> {
    let mut files = Vec::new();
    let mut odd = Vec::new();
    walk(dir, rel, &mut files, &mut odd)?;
    files.sort();
    odd.sort();
    Ok((files, odd))
}

fn walk(root: &Path, rel: &Path, out: &mut Vec<String>, odd: &mut Odd) -> io::Result<()> {
    for entry in fs::read_dir(root.join(rel))? {
        let entry = entry?;
        let r = rel.join(entry.file_name());
        let shown = r.to_string_lossy().replace('\\', "/");
        if entry.file_name().to_str().is_none() {
            odd.push((shown, "a name that is not valid UTF-8"));
            continue;
        }
        // The entry's own type: links are not followed.
        let ty = entry.file_type()?;
        if ty.is_symlink() {
            odd.push((shown, "a symbolic link"));
        } else if ty.is_dir() {
            walk(root, &r, out, odd)?;
        } else if ty.is_file() {
            out.push(shown);
        } else {
            odd.push((shown, "not a regular file"));
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
    /// A link, a device, a pipe or a name that is not UTF-8: never read.
    NotAFile {
        path: String,
        what: String,
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
            Problem::NotAFile { path, what } => write!(f, "{path}: {what}, not a regular file; refused"),
        }
    }
}

/// Hashing threads: one per core the process may use.
fn threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The problems of the listed files `entries` (in manifest order), hashed on `threads`
/// threads; in their order.
/// `regular`: the regular files a walk of the campaign found without following links; a
/// listed file outside it is missing or not a file, and is never opened.
fn check_listed(
    campaign_dir: &Path,
    entries: Vec<(&String, &String)>,
    regular: &std::collections::HashSet<&str>,
    odd: &Odd,
    threads: usize,
) -> Vec<Problem> {
    use std::os::unix::fs::OpenOptionsExt;
    let check = |(rel, expected): (&String, &String)| -> Option<Problem> {
        if !regular.contains(rel.as_str()) {
            return Some(match odd.iter().find(|(p, _)| p == rel) {
                Some((_, what)) => Problem::NotAFile { path: rel.clone(), what: what.to_string() },
                None => Problem::Missing(rel.clone()),
            });
        }
        let opened = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(campaign_dir.join(rel));
        match opened.and_then(sha256_reader) {
            Ok(actual) if actual == *expected => None,
            Ok(actual) => Some(Problem::Altered { path: rel.clone(), expected: expected.clone(), actual }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Some(Problem::Missing(rel.clone())),
            Err(e) if e.kind() == io::ErrorKind::InvalidData || e.raw_os_error() == Some(libc::ELOOP) => {
                Some(Problem::NotAFile { path: rel.clone(), what: e.to_string() })
            }
            Err(e) => Some(Problem::Unreadable { path: rel.clone(), error: e.to_string() }),
        }
    };
    let threads = threads.clamp(1, entries.len().max(1));
    if threads == 1 {
        return entries.into_iter().filter_map(check).collect();
    }
    // Interleaved shares balance large and small files; each thread's results keep their
    // indices, so the order is the manifest's whatever the threads do.
    let mut found: Vec<(usize, Problem)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let entries = &entries;
                let check = &check;
                sc.spawn(move || {
                    (t..entries.len())
                        .step_by(threads)
                        .filter_map(|i| check(entries[i]).map(|p| (i, p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().map(|(_, p)| p).collect()
}

/// Verifies a campaign directory against its manifest: every listed file present with its
/// checksum, and no unlisted file except the manifest itself, dot-files left by an interrupted
/// write, and `quarantine/`.
pub fn verify(campaign_dir: &Path) -> Result<Vec<Problem>, ManifestError> {
    verify_with_threads(campaign_dir, threads())
}

/// [`verify`] hashing on `threads` threads (for benchmarks; the result is the same).
pub fn verify_with_threads(campaign_dir: &Path, threads: usize) -> Result<Vec<Problem>, ManifestError> {
    let m = read(campaign_dir)?;
    let (on_disk, odd) = entries(campaign_dir, Path::new(""))
        .map_err(|source| ManifestError::Io { path: campaign_dir.to_path_buf(), source })?;
    let regular: std::collections::HashSet<&str> = on_disk.iter().map(String::as_str).collect();
    let mut problems = check_listed(campaign_dir, m.iter().collect(), &regular, &odd, threads);
    for (path, what) in odd {
        if !m.contains_key(&path) {
            problems.push(Problem::NotAFile { path, what: what.to_string() });
        }
    }
    for rel in on_disk {
        if !unlisted_allowed(&rel) && !m.contains_key(&rel) {
            problems.push(Problem::Extra(rel));
        }
    }
    Ok(problems)
}

/// A file that may be in the campaign directory without being listed: the manifest itself,
/// dot-files left by an interrupted write, `quarantine/` and a `README.md`.
fn unlisted_allowed(rel: &str) -> bool {
    rel == MANIFEST
        || rel.starts_with(&format!("{QUARANTINE_DIR}/"))
        || rel.split('/').any(|c| c.starts_with('.'))
        || rel == "README.md"
}

/// A campaign verified in one pass with its reading: [`OnePass::begin`] checks which files
/// the campaign holds against its manifest (none missing, none extra, each a regular file)
/// without reading them; each file a reader opens through [`OnePass::open`] is hashed as it
/// is read (and, when the reader stops short of its end, read to its end and hashed as it is
/// dropped); [`OnePass::finish`] hashes the listed files no reader read and gives the same
/// problems [`verify`] gives. Nothing read through it may be used unless `finish` finds none:
/// every byte a reader was handed was hashed, and its file's sum compared with the manifest.
pub struct OnePass {
    dir: PathBuf,
    manifest: Manifest,
    /// The regular files the walk found.
    regular: std::collections::HashSet<String>,
    /// Per file read to its end: its sum, or the first that differs from the manifest's when
    /// it was read more than once.
    sums: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

impl OnePass {
    /// Reads the manifest and walks the campaign directory. `Ok(Err(problems))` when a listed
    /// file is missing or not a regular file, or a file is not listed: the problems are then
    /// [`verify`]'s, every file hashed.
    pub fn begin(campaign_dir: &Path) -> Result<Result<OnePass, Vec<Problem>>, ManifestError> {
        let m = read(campaign_dir)?;
        let (on_disk, odd) = entries(campaign_dir, Path::new(""))
            .map_err(|source| ManifestError::Io { path: campaign_dir.to_path_buf(), source })?;
        let regular: std::collections::HashSet<String> = on_disk.into_iter().collect();
        let differs = !odd.is_empty()
            || m.keys().any(|rel| !regular.contains(rel))
            || regular.iter().any(|rel| !unlisted_allowed(rel) && !m.contains_key(rel));
        if differs {
            return verify(campaign_dir).map(Err);
        }
        let sums = std::sync::Mutex::new(std::collections::HashMap::with_capacity(m.len()));
        Ok(Ok(OnePass { dir: campaign_dir.to_path_buf(), manifest: m, regular, sums }))
    }

    /// Opens the listed file at `path` (inside the campaign directory, not through a link),
    /// its bytes hashed as they are read. A file the manifest does not list is not opened.
    pub fn open(&self, path: &Path) -> io::Result<HashedFile<'_>> {
        use std::os::unix::fs::OpenOptionsExt;
        let rel = path
            .strip_prefix(&self.dir)
            .ok()
            .and_then(Path::to_str)
            .filter(|rel| self.manifest.contains_key(*rel))
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("not listed in {MANIFEST}")))?;
        let file = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path)?;
        Ok(HashedFile { file, hash: Sha256::new(), at_end: false, rel: rel.to_string(), pass: self })
    }

    /// Keeps the sum of a file read whole: the first that differs from the manifest's wins.
    fn record(&self, rel: String, sum: String) {
        let mut sums = self.sums.lock().unwrap_or_else(|e| e.into_inner());
        let expected = self.manifest.get(&rel);
        match sums.get(&rel) {
            Some(kept) if Some(kept) != expected => {}
            _ => {
                sums.insert(rel, sum);
            }
        }
    }

    /// The campaign's problems, in [`verify`]'s order: the listed files that no reader read to
    /// its end are hashed now (on every core), and every sum is compared with the manifest.
    pub fn finish(self) -> Vec<Problem> {
        self.finish_with_threads(threads())
    }

    /// [`OnePass::finish`] hashing on `threads` threads.
    pub fn finish_with_threads(self, threads: usize) -> Vec<Problem> {
        let sums = self.sums.into_inner().unwrap_or_else(|e| e.into_inner());
        let regular: std::collections::HashSet<&str> = self.regular.iter().map(String::as_str).collect();
        let unread: Vec<(&String, &String)> =
            self.manifest.iter().filter(|(rel, _)| !sums.contains_key(*rel)).collect();
        let mut problems = check_listed(&self.dir, unread, &regular, &Odd::new(), threads);
        for (rel, actual) in sums {
            let expected = &self.manifest[&rel];
            if actual != *expected {
                problems.push(Problem::Altered { path: rel, expected: expected.clone(), actual });
            }
        }
        problems.sort_by(|a, b| a.path().cmp(b.path()));
        problems
    }
}

/// A file of a campaign opened by [`OnePass::open`]: its bytes are hashed as they are read;
/// once dropped, its sum (read to its end) is the pass's.
pub struct HashedFile<'a> {
    file: fs::File,
    hash: Sha256,
    at_end: bool,
    rel: String,
    pass: &'a OnePass,
}

impl HashedFile<'_> {
    /// The file's size, as its metadata gives it.
    pub fn size(&self) -> io::Result<u64> {
        self.file.metadata().map(|m| m.len())
    }
}

impl Read for HashedFile<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.hash.update(&buf[..n]);
        self.at_end |= n == 0 && !buf.is_empty();
        Ok(n)
    }
}

impl Drop for HashedFile<'_> {
    /// Reads the rest of the file, hashing it, and hands its sum to the pass; a file that
    /// cannot be read to its end gives none (the pass hashes it again, and says why not).
    fn drop(&mut self) {
        if !self.at_end {
            let mut buf = vec![0u8; 1 << 16];
            loop {
                match self.file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => self.hash.update(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        }
        let sum = hex(&std::mem::take(&mut self.hash).finalize());
        self.pass.record(std::mem::take(&mut self.rel), sum);
    }
}

impl Problem {
    /// The file the problem is of.
    pub fn path(&self) -> &str {
        match self {
            Problem::Missing(p) | Problem::Extra(p) => p,
            Problem::Altered { path, .. } | Problem::Unreadable { path, .. } | Problem::NotAFile { path, .. } => path,
        }
    }
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
    fn hashing_on_several_threads_finds_the_same_problems_in_the_same_order() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..40 {
            let run = d.path().join(format!("runs/r{i:02}"));
            fs::create_dir_all(&run).unwrap();
            fs::write(run.join("f"), vec![i as u8; 1000 * i]).unwrap();
        }
        add_dir(d.path(), "runs").unwrap();
        for i in [3, 17, 18, 39] {
            fs::write(d.path().join(format!("runs/r{i:02}/f")), b"changed").unwrap();
        }
        fs::remove_file(d.path().join("runs/r07/f")).unwrap();
        let one = verify_with_threads(d.path(), 1).unwrap();
        assert_eq!(one.len(), 5, "{one:?}");
        for t in [2, 3, 8, 64] {
            assert_eq!(verify_with_threads(d.path(), t).unwrap(), one, "{t} threads");
        }
    }

    /// A campaign of `n` runs, each with files `a` (small) and `b` (larger than a read).
    fn campaign(n: usize) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for i in 0..n {
            let run = d.path().join(format!("runs/r{i}"));
            fs::create_dir_all(&run).unwrap();
            fs::write(run.join("a"), format!("run {i}")).unwrap();
            fs::write(run.join("b"), vec![i as u8; 200_000]).unwrap();
        }
        add_dir(d.path(), "runs").unwrap();
        d
    }

    fn read_some(pass: &OnePass, path: &Path, bytes: usize) {
        let mut f = pass.open(path).unwrap();
        let mut buf = vec![0u8; bytes];
        let mut got = 0;
        while got < bytes {
            match f.read(&mut buf[got..]).unwrap() {
                0 => break,
                n => got += n,
            }
        }
    }

    #[test]
    fn one_pass_hashes_what_is_read_and_what_is_not() {
        let d = campaign(4);
        // Some files read whole, some in part, some not at all: no problem.
        let pass = OnePass::begin(d.path()).unwrap().unwrap();
        read_some(&pass, &d.path().join("runs/r0/a"), 1 << 20);
        read_some(&pass, &d.path().join("runs/r0/b"), 10);
        read_some(&pass, &d.path().join("runs/r1/b"), 1 << 20);
        read_some(&pass, &d.path().join("runs/r1/b"), 0);
        assert_eq!(pass.finish(), vec![]);
        // A file outside the manifest is not opened.
        let pass = OnePass::begin(d.path()).unwrap().unwrap();
        let e = pass.open(&d.path().join("SHA256SUMS")).err().unwrap();
        assert!(e.to_string().contains("not listed"), "{e}");
    }

    #[test]
    fn one_pass_finds_the_files_changed_before_or_while_they_are_read() {
        let d = campaign(4);
        fs::write(d.path().join("runs/r0/a"), "altered before").unwrap();
        fs::write(d.path().join("runs/r2/a"), "altered, never read").unwrap();
        let pass = OnePass::begin(d.path()).unwrap().unwrap();
        read_some(&pass, &d.path().join("runs/r0/a"), 1 << 20);
        read_some(&pass, &d.path().join("runs/r1/b"), 10);
        // Changed between two reads of it: the read that differs is kept.
        read_some(&pass, &d.path().join("runs/r3/b"), 1 << 20);
        fs::write(d.path().join("runs/r3/b"), b"altered between two reads").unwrap();
        read_some(&pass, &d.path().join("runs/r3/b"), 1 << 20);
        // Changed after its first bytes were read: the rest is read as the reader is dropped.
        let mut f = pass.open(&d.path().join("runs/r1/b")).unwrap();
        f.read_exact(&mut [0u8; 100]).unwrap();
        fs::OpenOptions::new().append(true).open(d.path().join("runs/r1/b")).unwrap().write_all(b"more").unwrap();
        drop(f);
        let problems = pass.finish();
        let paths: Vec<&str> = problems.iter().map(Problem::path).collect();
        assert_eq!(paths, ["runs/r0/a", "runs/r1/b", "runs/r2/a", "runs/r3/b"], "{problems:?}");
        assert!(problems.iter().all(|p| matches!(p, Problem::Altered { .. })), "{problems:?}");
        assert_eq!(problems, verify(d.path()).unwrap());
    }

    #[test]
    fn one_pass_begins_only_when_the_files_are_those_listed() {
        let d = campaign(3);
        fs::write(d.path().join("runs/r0/a"), "altered").unwrap();
        fs::remove_file(d.path().join("runs/r1/a")).unwrap();
        fs::write(d.path().join("runs/r2/extra"), "").unwrap();
        // Every problem, as verify gives them (the altered file's too).
        let problems = OnePass::begin(d.path()).unwrap().err().unwrap();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert_eq!(problems, verify(d.path()).unwrap());
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

    #[test]
    fn entries_outside_the_campaign_or_listed_twice_are_refused_with_their_line() {
        let sum = "a".repeat(64);
        for (entry, why) in [
            ("../../../../etc/hostname", "leaves the campaign directory"),
            ("runs/../../x", "leaves the campaign directory"),
            ("/etc/hostname", "absolute"),
            ("runs//x", "empty component"),
            ("./runs/x", "`.` component"),
            ("runs\\x", "backslash"),
        ] {
            let text = format!("{sum}  runs/ok\n{sum}  {entry}\n");
            let (line, _, what) = parse(&text).unwrap_err();
            assert_eq!(line, 2, "{entry}");
            assert!(what.contains(why), "{entry}: {what}");
        }
        let twice = format!("{sum}  runs/x\n{}  runs/x\n", "b".repeat(64));
        assert_eq!(parse(&twice).unwrap_err().2, "a file listed twice");
    }

    #[test]
    fn verification_opens_nothing_outside_the_campaign() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), b"hello").unwrap();
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("runs/a")).unwrap();
        fs::write(d.path().join("runs/a/meta.json"), b"{}").unwrap();
        add_dir(d.path(), "runs/a").unwrap();
        // An entry with `..` and the right checksum of a file outside: the manifest is refused.
        let escaping = format!("{}  ../{}/secret\n", sha256_bytes(b"hello"), outside.path().display());
        let mut text = fs::read_to_string(d.path().join(MANIFEST)).unwrap();
        let good = text.clone();
        text.push_str(&escaping);
        fs::write(d.path().join(MANIFEST), &text).unwrap();
        assert!(matches!(verify(d.path()), Err(ManifestError::Syntax { line: 2, .. })));
        fs::write(d.path().join(MANIFEST), &good).unwrap();
        // A listed trace replaced by a link to a file elsewhere with the same content.
        fs::remove_file(d.path().join("runs/a/meta.json")).unwrap();
        fs::write(outside.path().join("meta.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(outside.path().join("meta.json"), d.path().join("runs/a/meta.json")).unwrap();
        let p = verify(d.path()).unwrap();
        assert!(matches!(p.as_slice(), [Problem::NotAFile { path, .. }] if path == "runs/a/meta.json"), "{p:?}");
        // A linked directory, and an unlisted link, are refused too.
        fs::remove_file(d.path().join("runs/a/meta.json")).unwrap();
        fs::write(d.path().join("runs/a/meta.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("runs/b")).unwrap();
        let p = verify(d.path()).unwrap();
        assert!(matches!(p.as_slice(), [Problem::NotAFile { path, .. }] if path == "runs/b"), "{p:?}");
        fs::remove_file(d.path().join("runs/b")).unwrap();
        fs::create_dir_all(d.path().join("runs/c")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), d.path().join("runs/c/x")).unwrap();
        let mut text = good.clone();
        text.push_str(&format!("{}  runs/c/x\n", sha256_bytes(b"hello")));
        fs::write(d.path().join(MANIFEST), &text).unwrap();
        let p = verify(d.path()).unwrap();
        assert!(matches!(p.as_slice(), [Problem::NotAFile { path, .. }] if path == "runs/c/x"), "{p:?}");
        // The manifest itself as a link is refused.
        fs::remove_file(d.path().join(MANIFEST)).unwrap();
        fs::write(outside.path().join("sums"), &good).unwrap();
        std::os::unix::fs::symlink(outside.path().join("sums"), d.path().join(MANIFEST)).unwrap();
        assert!(matches!(verify(d.path()), Err(ManifestError::Io { .. })));
    }
}
