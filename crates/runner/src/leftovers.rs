//! What the runner has set up on the GPU and not yet torn down, kept in the campaign's
//! `.runner-state.json` (written atomically before each set-up and after each teardown,
//! removed when nothing is left).
//! A runner killed with SIGKILL cannot tear down; the next run in the campaign reads this
//! file and removes exactly what is listed and still provably ours.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub(crate) const STATE_FILE: &str = ".runner-state.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct State {
    /// Pipe directories of MPS control daemons started by the runner.
    pub mps_pipe_dirs: Vec<String>,
    /// MIG instances created by the runner.
    pub mig: Vec<MigLeftover>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MigLeftover {
    pub gpu: u32,
    pub gpu_instance: u32,
    pub compute_instance: Option<u32>,
    /// The MIG device's UUID once known: proof that an instance with this id is ours.
    pub uuid: Option<String>,
}

pub(crate) struct Leftovers {
    path: PathBuf,
    state: Mutex<State>,
}

impl Leftovers {
    pub(crate) fn load(campaign_dir: &Path) -> Result<Leftovers> {
        let path = campaign_dir.join(STATE_FILE);
        let state = match std::fs::read_to_string(&path) {
            Ok(t) => {
                serde_json::from_str(&t).with_context(|| format!("{}: not a runner state file", path.display()))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => State::default(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        Ok(Leftovers { path, state: Mutex::new(state) })
    }

    pub(crate) fn snapshot(&self) -> State {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut State)) -> Result<()> {
        let mut s = self.lock();
        f(&mut s);
        if s.mps_pipe_dirs.is_empty() && s.mig.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e).with_context(|| format!("cannot remove {}", self.path.display())),
            };
        }
        let text = serde_json::to_string_pretty(&*s).expect("state serialises");
        colloc_trace::manifest::write_atomic(&self.path, text.as_bytes())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    pub(crate) fn add_mps(&self, pipe_dir: &str) -> Result<()> {
        self.update(|s| {
            if !s.mps_pipe_dirs.iter().any(|p| p == pipe_dir) {
                s.mps_pipe_dirs.push(pipe_dir.to_string());
            }
        })
    }

    pub(crate) fn remove_mps(&self, pipe_dir: &str) -> Result<()> {
        self.update(|s| s.mps_pipe_dirs.retain(|p| p != pipe_dir))
    }

    pub(crate) fn add_mig(&self, m: MigLeftover) -> Result<()> {
        self.update(|s| {
            s.mig.retain(|x| !(x.gpu == m.gpu && x.gpu_instance == m.gpu_instance));
            s.mig.push(m);
        })
    }

    pub(crate) fn remove_mig(&self, gpu: u32, gpu_instance: u32) -> Result<()> {
        self.update(|s| s.mig.retain(|x| !(x.gpu == gpu && x.gpu_instance == gpu_instance)))
    }
}
