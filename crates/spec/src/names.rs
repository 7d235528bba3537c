//! Where the spec's files live and which names and values are valid.

use std::path::Path;

pub const EXPERIMENTS_DIR: &str = "experiments";
pub const GPUS_DIR: &str = "experiments/gpus";
pub const ARTIFACT: &str = "artifact.yaml";

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
