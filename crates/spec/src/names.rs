//! Where the spec's files live and which names and values are valid.

use std::io;
use std::path::{Path, PathBuf};

pub const EXPERIMENTS_DIR: &str = "experiments";
pub const GPUS_DIR: &str = "experiments/gpus";
pub const ARTIFACT: &str = "artifact.yaml";

/// The environment variable that names the project root, overriding the search.
pub const ROOT_ENV: &str = "COLLOC_ROOT";

pub const MAX_BATCH: u32 = 4096;
pub const MAX_JOBS: u32 = 64;

/// A name of a model, dataset, protocol or workload.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Whether a relative path climbs out of the directory it is relative to.
pub fn escapes(p: &str) -> bool {
    let mut depth = 0i32;
    for c in Path::new(p).components() {
        match c {
            std::path::Component::ParentDir => depth -= 1,
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::RootDir | std::path::Component::Prefix(_) => return true,
            std::path::Component::CurDir => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// The project root of the running process: `$COLLOC_ROOT` when set, else the working
/// directory or the nearest directory above it that holds `artifact.yaml` and `Cargo.toml`.
/// Found at run time, never compiled in: one cargo target directory may serve several
/// checkouts, and a binary built in one must not read or write another.
pub fn project_root() -> io::Result<PathBuf> {
    if let Some(root) = std::env::var_os(ROOT_ENV).filter(|r| !r.is_empty()) {
        return Ok(PathBuf::from(root));
    }
    let cwd = std::env::current_dir()?;
    find_project_root(&cwd).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "no {ARTIFACT} beside a Cargo.toml in {} or any directory above it: run inside the \
                 project, or name its directory with {ROOT_ENV}",
                cwd.display()
            ),
        )
    })
}

/// `start` or the nearest directory above it that holds `artifact.yaml` and `Cargo.toml`.
pub fn find_project_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find(|d| d.join(ARTIFACT).is_file() && d.join("Cargo.toml").is_file()).map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest directory up from the start that holds both files is the root; one with
    /// `artifact.yaml` alone is not.
    #[test]
    fn the_root_is_the_nearest_directory_up_with_artifact_yaml_and_cargo_toml() {
        let d = tempfile::tempdir().unwrap();
        let (root, deep) = (d.path().join("project"), d.path().join("project/data/campaign/runs"));
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(find_project_root(&deep), None);
        std::fs::write(root.join(ARTIFACT), "").unwrap();
        assert_eq!(find_project_root(&deep), None, "artifact.yaml without Cargo.toml");
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        assert_eq!(find_project_root(&deep), Some(root.clone()));
        assert_eq!(find_project_root(&root), Some(root.clone()));
        // A nearer pair wins.
        let inner = root.join("data");
        std::fs::write(inner.join(ARTIFACT), "").unwrap();
        std::fs::write(inner.join("Cargo.toml"), "").unwrap();
        assert_eq!(find_project_root(&deep), Some(inner));
    }
}
