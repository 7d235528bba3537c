//! One runner per campaign directory: an exclusive `flock` on its `.runner.lock`, held while
//! the runner works.

use anyhow::{bail, Context, Result};
use std::fs;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

const LOCK_FILE: &str = ".runner.lock";

/// Holds the campaign's lock file while the runner works.
pub(crate) struct Lock(#[allow(dead_code)] fs::File);

pub(super) fn lock(dir: &Path) -> Result<Lock> {
    let path = dir.join(LOCK_FILE);
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // A lock just released can stay held for a moment by a child process forked elsewhere in
    // this program and not yet exec'd (it shares the descriptor until exec closes it): try
    // for a while before deciding another runner holds it.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(Lock(f));
        }
        if std::time::Instant::now() >= deadline {
            bail!("another runner is working on {} (its lock {} is held)", dir.display(), path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A held lock refuses a second runner (after a few seconds' patience); one released
    /// within them is taken.
    #[test]
    fn the_campaign_lock_waits_briefly_then_refuses() {
        let d = tempfile::tempdir().unwrap();
        let held = lock(d.path()).unwrap();
        let t = std::time::Instant::now();
        let e = lock(d.path()).err().expect("the lock is held").to_string();
        assert!(e.contains("another runner is working on") && t.elapsed() >= Duration::from_secs(2), "{e}");
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        assert!(lock(d.path()).is_ok(), "released within the patience: taken");
        release.join().unwrap();
    }
}
