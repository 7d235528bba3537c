//! `--settle`: before each GPU's first run in an invocation on data it has not read yet in
//! it, that run made once unrecorded, in a scratch directory under the system's temporary
//! directory (`colloc-settle-<pid>-gpu<index>`) removed after, so that the recorded runs do
//! not meet a freshly started host's cold caches; and the removal of the scratch directories
//! a killed runner left.

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::budget::past_budget;
use crate::options::ProgressMode;
use crate::progress::Progress;
use crate::queue::Todo;
use crate::run::{self, Env, Outcome, Request};
use crate::signals;

/// One GPU's settling in an invocation: the data it has read, and what its recorded runs say
/// of the unrecorded runs made for them.
#[derive(Default)]
pub(crate) struct Settling {
    warmed: BTreeSet<String>,
    made: Vec<String>,
}

impl Settling {
    /// Before run `t`, which starts jobs on this GPU: settles with it when it reads data this
    /// GPU has not read yet in this invocation, `used` into the time budget. `Some(text)` when
    /// a stop signal came during the settling run.
    pub(crate) fn before(&mut self, env: &Env, t: &Todo, used: Duration) -> Result<Option<String>> {
        let new_data: Vec<String> = data_read(t.workload).into_iter().filter(|d| !self.warmed.contains(d)).collect();
        if new_data.is_empty() {
            return Ok(None);
        }
        self.warmed.extend(new_data);
        match settle(env, t, used)? {
            Settled::Made(text) => self.made.push(text),
            Settled::NotMade(why) => env.progress.log(&why),
            Settled::Interrupted(text) => return Ok(Some(text)),
        }
        Ok(None)
    }

    /// What a recorded run says of the settling runs before it (`meta.json` → `settled`).
    pub(crate) fn note(&self) -> Option<String> {
        (!self.made.is_empty()).then(|| self.made.join("; "))
    }
}

/// What came of `--settle`'s unrecorded run.
enum Settled {
    /// Made: what each recorded run of this GPU says of it (`meta.json` → `settled`).
    Made(String),
    /// Not made (with the first run it could pass the time budget): why.
    NotMade(String),
    /// A stop signal arrived during it.
    Interrupted(String),
}

/// A directory under the system's temporary directory, removed with what is in it when
/// dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn create(name: &str) -> Result<Scratch> {
        let path = std::env::temp_dir().join(name);
        if path.exists() {
            fs::remove_dir_all(&path).with_context(|| format!("cannot remove the stale {}", path.display()))?;
        }
        fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Scratch(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The data a workload's jobs read: `synthetic`, or each data set read from files.
fn data_read(w: &colloc_plan::PlannedWorkload) -> BTreeSet<String> {
    w.jobs
        .iter()
        .map(|j| match j.data.source {
            colloc_trace::jobfile::DataSource::Synthetic => "synthetic".to_string(),
            source => format!("{source:?} {} ({} of its images)", j.data.name, j.data.fraction),
        })
        .collect()
}

/// The name of a settling run's scratch directory, before `<pid>-gpu<index>`.
const SETTLE_PREFIX: &str = "colloc-settle-";

/// Removes the settling scratch directories under `tmp` whose runner (the pid in the name)
/// is no longer alive, as a killed runner leaves them; returns those removed. Anything else,
/// a symbolic link included, is left alone.
fn remove_stale_settle_dirs(tmp: &Path, alive: &dyn Fn(u32) -> Option<bool>) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for e in fs::read_dir(tmp).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(SETTLE_PREFIX)
            .and_then(|rest| rest.split_once("-gpu"))
            .filter(|(_, gpu)| !gpu.is_empty() && gpu.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let is_dir = fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir());
        if is_dir && alive(pid) == Some(false) && fs::remove_dir_all(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed.sort();
    removed
}

/// Whether process `pid` is alive; `None` where this system cannot tell (no `/proc`).
fn process_alive(pid: u32) -> Option<bool> {
    Path::new("/proc/self").exists().then(|| Path::new(&format!("/proc/{pid}")).exists())
}

/// `--settle`: makes run `t` once unrecorded, in a scratch directory removed after, before
/// this GPU's first run in the invocation on data it has not read yet in it, so that the
/// recorded runs do not meet a freshly started host's cold caches (the data set's pages,
/// the libraries, the GPU's first kernels); the first run on such a host can be 14-20%
/// slower where the data loaders are the limit. Its time counts in the time budget: it is
/// made only when it and `t` fit.
fn settle(env: &Env, t: &Todo, used: Duration) -> Result<Settled> {
    if let Some(why) = past_budget(env.opts, used, 2.0 * t.workload.estimated_seconds) {
        return Ok(Settled::NotMade(format!("not settling first: {} made twice {why}", t.run_id)));
    }
    let scratch = Scratch::create(&format!("{SETTLE_PREFIX}{}-gpu{}", std::process::id(), env.backend.index()))?;
    env.progress.log(&format!("settling: {} once unrecorded first (--settle)", t.run_id));
    let quiet = Progress::new(ProgressMode::Quiet, 1, t.workload.estimated_seconds);
    let scratch_env = Env { campaign_dir: scratch.path(), progress: &quiet, ..env.clone() };
    let req = Request {
        workload: t.workload,
        repetition: t.repetition,
        attempt: t.attempt,
        run_id: t.run_id.clone(),
        n: 1,
        total: 1,
        added: None,
        settled: None,
    };
    let began = std::time::Instant::now();
    let outcome = run::execute(&scratch_env, &req).with_context(|| format!("settling with {}", t.run_id))?;
    let seconds = began.elapsed().as_secs_f64();
    match outcome {
        Outcome::Finished { status, reason, fatal, .. } => {
            if let Some(f) = fatal {
                bail!("settling with {}: {f}", t.run_id);
            }
            let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
            let text = format!("{} made once unrecorded first ({}{why}, {seconds:.1} s)", t.run_id, status.as_str());
            env.progress.log(&format!("settled: {text}"));
            Ok(Settled::Made(text))
        }
        Outcome::Interrupted { teardown_error, .. } => {
            let mut text = format!("{} while settling with {}", signals::interrupt_text(), t.run_id);
            if let Some(e) = teardown_error {
                text.push_str(&format!("; teardown failed: {e}"));
            }
            Ok(Settled::Interrupted(text))
        }
    }
}

/// Removes the settling scratch directories that runners now gone left under the system's
/// temporary directory, saying which.
pub(crate) fn remove_stale(progress: &Progress) {
    for stale in remove_stale_settle_dirs(&std::env::temp_dir(), &process_alive) {
        progress.log(&format!("removed {}, left by a runner that is gone", stale.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the settling directories of runners that are gone are removed: not a live
    /// runner's, not one whose liveness cannot be told, not a link, not other names.
    #[test]
    fn stale_settle_dirs_of_dead_runners_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let make = |name: &str| {
            let p = tmp.path().join(name);
            fs::create_dir_all(p.join("runs")).unwrap();
            fs::write(p.join("runs/x"), "x").unwrap();
            p
        };
        let dead = make("colloc-settle-41-gpu0");
        let dead1 = make("colloc-settle-41-gpu1");
        let live = make("colloc-settle-42-gpu0");
        let unknown = make("colloc-settle-43-gpu0");
        let others = [
            make("colloc-settle-41"),
            make("colloc-settle-41-gpu"),
            make("colloc-settle-x-gpu0"),
            make("other-41-gpu0"),
        ];
        let target = make("target");
        std::os::unix::fs::symlink(&target, tmp.path().join("colloc-settle-44-gpu0")).unwrap();
        let alive = |pid: u32| match pid {
            42 => Some(true),
            43 => None,
            _ => Some(false),
        };
        let removed = remove_stale_settle_dirs(tmp.path(), &alive);
        assert_eq!(removed, [dead.clone(), dead1.clone()]);
        assert!(!dead.exists() && !dead1.exists());
        assert!(live.exists() && unknown.exists() && others.iter().all(|p| p.exists()));
        assert!(target.join("runs/x").exists() && tmp.path().join("colloc-settle-44-gpu0").exists());
        assert!(remove_stale_settle_dirs(tmp.path(), &alive).is_empty());
        // This process is alive by /proc.
        assert_eq!(process_alive(std::process::id()), Some(true));
    }
}
