//! A private MPS control daemon for one GPU: started with `nvidia-cuda-mps-control -d`,
//! `CUDA_VISIBLE_DEVICES=<GPU UUID>` and the campaign's own pipe and log directories,
//! checked to answer `get_server_list`, stopped with `quit` through the same pipe directory.
//! Clients select the GPU by UUID, which means the same device inside and outside MPS.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use colloc_trace::meta::{DriverListing, MpsClientCheck, MpsClientJob};

use super::context::ModeContext;
use crate::backend::Backend;
use crate::command::{Cmd, Output};
use crate::leftovers::Leftovers;
use crate::options::Tools;

/// `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT` for a client that sees one device (ordinal 0).
pub(crate) fn pinned_limit(mib: u64) -> String {
    format!("0={mib}M")
}

pub(crate) struct Daemon {
    pipe: PathBuf,
    log: PathBuf,
    exec: bool,
    tools: Tools,
    leftovers: Arc<Leftovers>,
    running: bool,
    /// The daemon no longer answered when the run ended: it died during the run.
    died: bool,
}

fn control(tools: &Tools, pipe: &Path, log: &Path, input: &str) -> Cmd {
    Cmd::new(&tools.mps_control, &[], tools.command_timeout)
        .env("CUDA_MPS_PIPE_DIRECTORY", &pipe.to_string_lossy())
        .env("CUDA_MPS_LOG_DIRECTORY", &log.to_string_lossy())
        .stdin(input)
}

/// Asks the daemon at `pipe` for its server list; `Ok(true)` when it answers.
pub(crate) fn answers(tools: &Tools, pipe: &Path, log: &Path) -> Result<(bool, Output)> {
    let out = control(tools, pipe, log, "get_server_list\n").run()?;
    Ok((out.success, out))
}

/// Asks the daemon at `pipe` to quit and waits until it no longer answers.
pub(crate) fn quit_at(tools: &Tools, pipe: &Path, log: &Path) -> Result<()> {
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
    pub(crate) fn start(ctx: &ModeContext) -> Result<Daemon> {
        let pipe = ctx.mps_dirs.pipe.clone();
        let log = ctx.mps_dirs.log.clone();
        let mut d = Daemon {
            pipe: pipe.clone(),
            log: log.clone(),
            exec: ctx.exec,
            tools: ctx.tools.clone(),
            leftovers: ctx.leftovers.clone(),
            running: false,
            died: false,
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
    pub(crate) fn client_env(&self) -> Vec<(String, String)> {
        if !self.exec {
            return Vec::new();
        }
        vec![
            ("CUDA_MPS_PIPE_DIRECTORY".into(), self.pipe.to_string_lossy().into()),
            ("CUDA_MPS_LOG_DIRECTORY".into(), self.log.to_string_lossy().into()),
        ]
    }

    /// Where the jobs look for this daemon: the pipe directory it gives its clients, or (a
    /// daemon that runs no command) the runner's own `CUDA_MPS_PIPE_DIRECTORY`, which the
    /// jobs inherit.
    pub(crate) fn client_pipe(&self) -> Option<String> {
        if self.exec {
            Some(self.pipe.to_string_lossy().into())
        } else {
            std::env::var("CUDA_MPS_PIPE_DIRECTORY").ok()
        }
    }

    pub(crate) fn pipe_display(&self) -> String {
        if self.exec {
            self.pipe.to_string_lossy().into()
        } else {
            "simulated".into()
        }
    }

    pub(crate) fn log_display(&self) -> String {
        if self.exec {
            self.log.to_string_lossy().into()
        } else {
            "simulated".into()
        }
    }

    /// Whether the daemon had died when the run ended (found by [`Daemon::quit`]).
    pub(crate) fn died(&self) -> bool {
        self.died
    }

    /// Stops the daemon (idempotent).
    pub(crate) fn quit(&mut self) -> Result<()> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        if !self.exec {
            return Ok(());
        }
        // A daemon that no longer answers died during the run: nothing to quit.
        if answers(&self.tools, &self.pipe, &self.log).map(|(up, _)| up).unwrap_or(true) {
            quit_at(&self.tools, &self.pipe, &self.log)?;
        } else {
            self.died = true;
        }
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

/// How long the driver is given to list a ready job among the MPS clients.
const CLIENT_PATIENCE: Duration = Duration::from_secs(2);

/// Asks the driver whether each job's own process (`pids`, in job order) is a client of the
/// run's daemon, whose clients look for it in `client_pipe`; a job not listed as one is
/// asked about again for up to [`CLIENT_PATIENCE`]. A driver that cannot list MPS clients
/// makes the check not possible, with the reason, rather than failed.
pub(crate) fn check_clients(gpu: &dyn Backend, pids: &[Option<u32>], client_pipe: Option<&str>) -> MpsClientCheck {
    let deadline = Instant::now() + CLIENT_PATIENCE;
    loop {
        let check = list_clients(gpu, pids, client_pipe);
        let served = check.jobs.iter().all(|j| j.listed_as == DriverListing::MpsClient);
        if !check.checked || served || Instant::now() >= deadline {
            return check;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One look at the driver's lists for [`check_clients`].
fn list_clients(gpu: &dyn Backend, pids: &[Option<u32>], client_pipe: Option<&str>) -> MpsClientCheck {
    let known: Vec<u32> = pids.iter().flatten().copied().collect();
    match gpu.mps_listing(&known, client_pipe) {
        Ok(listing) => {
            let mut listing = listing.into_iter();
            let jobs = pids
                .iter()
                .map(|&pid| MpsClientJob {
                    pid,
                    listed_as: pid.and_then(|_| listing.next()).unwrap_or(DriverListing::NotListed),
                })
                .collect();
            MpsClientCheck { checked: true, reason: None, jobs }
        }
        Err(e) => MpsClientCheck { checked: false, reason: Some(format!("{e:#}")), jobs: Vec::new() },
    }
}

/// Why the run fails when the check found jobs that the daemon does not serve (`models`:
/// each job's model); `None` when it serves every job or the check was not possible.
pub(crate) fn unserved(check: &MpsClientCheck, models: &[String]) -> Option<String> {
    let why: Vec<String> = check
        .jobs
        .iter()
        .enumerate()
        .filter_map(|(i, j)| {
            let listed = match j.listed_as {
                DriverListing::MpsClient => return None,
                DriverListing::ComputeProcess => "the driver lists it as a plain compute process, not an MPS client",
                DriverListing::NotListed => "the driver lists it neither as an MPS client nor as a compute process",
            };
            let model = models.get(i).map(String::as_str).unwrap_or("?");
            let pid = j.pid.map_or("no pid".to_string(), |p| format!("pid {p}"));
            Some(format!("job {i} ({model}, {pid}) is not a client of the run's MPS daemon: {listed}"))
        })
        .collect();
    (!why.is_empty()).then(|| why.join("; "))
}

fn restrict(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(listed: &[(Option<u32>, DriverListing)]) -> MpsClientCheck {
        MpsClientCheck {
            checked: true,
            reason: None,
            jobs: listed.iter().map(|&(pid, listed_as)| MpsClientJob { pid, listed_as }).collect(),
        }
    }

    #[test]
    fn jobs_the_daemon_does_not_serve_are_named() {
        let models = vec!["resnet26".to_string(), "resnet50".to_string(), "resnet152".to_string()];
        let all = check(&[(Some(10), DriverListing::MpsClient), (Some(11), DriverListing::MpsClient)]);
        assert_eq!(unserved(&all, &models), None);
        let one = check(&[
            (Some(10), DriverListing::MpsClient),
            (Some(11), DriverListing::ComputeProcess),
            (None, DriverListing::NotListed),
        ]);
        assert_eq!(
            unserved(&one, &models).as_deref(),
            Some(
                "job 1 (resnet50, pid 11) is not a client of the run's MPS daemon: the driver lists it as a plain \
                 compute process, not an MPS client; job 2 (resnet152, no pid) is not a client of the run's MPS \
                 daemon: the driver lists it neither as an MPS client nor as a compute process"
            )
        );
        let unchecked = MpsClientCheck { checked: false, reason: Some("Not Supported".into()), jobs: Vec::new() };
        assert_eq!(unserved(&unchecked, &models), None);
    }
}
