//! A private MPS control daemon for one GPU: started with `nvidia-cuda-mps-control -d`,
//! `CUDA_VISIBLE_DEVICES=<GPU UUID>` and the campaign's own pipe and log directories,
//! checked to answer `get_server_list`, stopped with `quit` through the same pipe directory.
//! Clients select the GPU by UUID, which means the same device inside and outside MPS.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::context::ModeContext;
use crate::command::{Cmd, Output};
use crate::leftovers::Leftovers;
use crate::options::Tools;

/// `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT` for a client that sees one device (ordinal 0).
pub fn pinned_limit(mib: u64) -> String {
    format!("0={mib}M")
}

pub struct Daemon {
    pipe: PathBuf,
    log: PathBuf,
    exec: bool,
    tools: Tools,
    leftovers: Arc<Leftovers>,
    running: bool,
}

fn control(tools: &Tools, pipe: &Path, log: &Path, input: &str) -> Cmd {
    Cmd::new(&tools.mps_control, &[], tools.command_timeout)
        .env("CUDA_MPS_PIPE_DIRECTORY", &pipe.to_string_lossy())
        .env("CUDA_MPS_LOG_DIRECTORY", &log.to_string_lossy())
        .stdin(input)
}

/// Asks the daemon at `pipe` for its server list; `Ok(true)` when it answers.
pub fn answers(tools: &Tools, pipe: &Path, log: &Path) -> Result<(bool, Output)> {
    let out = control(tools, pipe, log, "get_server_list\n").run()?;
    Ok((out.success, out))
}

/// Asks the daemon at `pipe` to quit and waits until it no longer answers.
pub fn quit_at(tools: &Tools, pipe: &Path, log: &Path) -> Result<()> {
    let out = control(tools, pipe, log, "quit\n").run()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (up, _) = answers(tools, pipe, log)?;
        if !up {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the MPS daemon with pipe directory {} still answers after `quit` ({})", pipe.display(), out.text());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Daemon {
    pub fn start(ctx: &ModeContext) -> Result<Daemon> {
        let pipe = ctx.mps_dirs.pipe.clone();
        let log = ctx.mps_dirs.log.clone();
        let mut d = Daemon {
            pipe: pipe.clone(),
            log: log.clone(),
            exec: ctx.exec,
            tools: ctx.tools.clone(),
            leftovers: ctx.leftovers.clone(),
            running: false,
        };
        if !ctx.exec {
            d.running = true;
            return Ok(d);
        }
        for dir in [&pipe, &log] {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        restrict(&pipe);
        let pipe_s = pipe.to_string_lossy().to_string();
        ctx.leftovers.add_mps(&pipe_s)?;
        let start = Cmd::new(&ctx.tools.mps_control, &["-d"], ctx.tools.command_timeout)
            .env("CUDA_VISIBLE_DEVICES", ctx.gpu_uuid)
            .env("CUDA_MPS_PIPE_DIRECTORY", &pipe_s)
            .env("CUDA_MPS_LOG_DIRECTORY", &log.to_string_lossy());
        ctx.progress.log(&format!("mps: {}", start.display()));
        let out = start.run();
        let out = match out {
            Ok(o) if o.success => o,
            Ok(o) => {
                let _ = ctx.leftovers.remove_mps(&pipe_s);
                bail!("`{}` failed (exit {:?}): {}", start.display(), o.code, o.text());
            }
            Err(e) => {
                let _ = ctx.leftovers.remove_mps(&pipe_s);
                return Err(e);
            }
        };
        d.running = true;
        // The control daemon forks; wait until it answers through our pipe directory.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (up, reply) = answers(ctx.tools, &pipe, &log)?;
            if up {
                ctx.progress.log(&format!("mps: daemon serving GPU {} (pipe {})", ctx.gpu_index, pipe_s));
                return Ok(d);
            }
            if Instant::now() > deadline {
                let err = anyhow!(
                    "the MPS daemon started by `{}` ({}) does not answer get_server_list: {}",
                    start.display(),
                    out.text(),
                    reply.text()
                );
                if let Err(q) = d.quit() {
                    return Err(err.context(format!("and quitting it failed: {q:#}")));
                }
                return Err(err);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Environment of an MPS client of this daemon.
    pub fn client_env(&self) -> Vec<(String, String)> {
        if !self.exec {
            return Vec::new();
        }
        vec![
            ("CUDA_MPS_PIPE_DIRECTORY".into(), self.pipe.to_string_lossy().into()),
            ("CUDA_MPS_LOG_DIRECTORY".into(), self.log.to_string_lossy().into()),
        ]
    }

    pub fn pipe_display(&self) -> String {
        if self.exec {
            self.pipe.to_string_lossy().into()
        } else {
            "simulated".into()
        }
    }

    pub fn log_display(&self) -> String {
        if self.exec {
            self.log.to_string_lossy().into()
        } else {
            "simulated".into()
        }
    }

    /// Stops the daemon (idempotent).
    pub fn quit(&mut self) -> Result<()> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        if !self.exec {
            return Ok(());
        }
        quit_at(&self.tools, &self.pipe, &self.log)?;
        self.leftovers.remove_mps(&self.pipe.to_string_lossy())?;
        // The pipe directory is no longer used; empty log directories go too.
        let _ = std::fs::remove_dir_all(&self.pipe);
        let _ = std::fs::remove_dir(&self.log);
        if let Some(base) = self.pipe.parent() {
            let _ = std::fs::remove_dir(base);
        }
        Ok(())
    }
}

fn restrict(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
}
