//! Collocation modes, each set up before a run's jobs start and torn down after they end,
//! scoped to the chosen GPU. [`ModeGuard`] tears down on drop too (a panic, an early
//! return), so no daemon or MIG instance of the runner outlives a run.
//!
//! * `exclusive`, `naive`: nothing to set up; each job gets `CUDA_VISIBLE_DEVICES=<GPU UUID>`.
//! * `mps`, `mps-limited`: [`mps::Daemon`], a private MPS control daemon for this GPU.
//! * `mig`: [`mig::Instances`], one GPU instance (with its compute instance) per job.

pub(crate) mod busy;
mod context;
pub(crate) mod mig;
pub(crate) mod mps;

pub(crate) use context::{ModeContext, MpsDirs};

use anyhow::Result;
use colloc_plan::PlannedWorkload;
use colloc_trace::meta::{MigInfo, MpsInfo};
use colloc_trace::Mode;

/// What a job gets from the mode: its device and environment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placement {
    pub device: String,
    pub env: Vec<(String, String)>,
}

/// The mode as applied.
#[derive(Debug, Clone)]
pub(crate) struct Applied {
    pub jobs: Vec<Placement>,
    pub mps: Option<MpsInfo>,
    pub mig: Option<MigInfo>,
    /// (GPU-instance id, MIG device UUID) per job, for telemetry per instance.
    pub mig_devices: Vec<(u32, String)>,
    /// `mps`, `mps-limited`: the `CUDA_MPS_PIPE_DIRECTORY` the jobs look for the daemon in
    /// ([`mps::Daemon::client_pipe`]), for the check that each job is its client.
    pub mps_client_pipe: Option<String>,
}

enum Active {
    Plain,
    Mps(mps::Daemon),
    Mig(mig::Instances),
}

/// Owns what a mode set up; tears it down once.
pub(crate) struct ModeGuard {
    active: Active,
    done: bool,
}

impl ModeGuard {
    /// Tears down (idempotent). An error means something may be left on the GPU.
    pub(crate) fn teardown(&mut self) -> Result<()> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        match &mut self.active {
            Active::Plain => Ok(()),
            Active::Mps(d) => d.quit(),
            Active::Mig(m) => m.destroy(),
        }
    }

    /// Whether the run's MPS daemon had died when the run ended.
    pub(crate) fn mps_died(&self) -> bool {
        matches!(&self.active, Active::Mps(d) if d.died())
    }

    /// For `meta.json`: whether the MIG instances were destroyed and checked gone.
    pub(crate) fn mig_torn_down(&self) -> bool {
        match &self.active {
            Active::Mig(m) => m.all_destroyed(),
            _ => false,
        }
    }
}

impl Drop for ModeGuard {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("colloc-runner: teardown failed: {e:#}");
        }
    }
}

/// Sets up the workload's mode. An error means the run cannot start (nothing is left set up).
pub(crate) fn apply(ctx: &ModeContext, w: &PlannedWorkload) -> Result<(ModeGuard, Applied)> {
    let plain = |_: usize| Placement {
        device: ctx.gpu_uuid.to_string(),
        env: vec![("CUDA_VISIBLE_DEVICES".into(), ctx.gpu_uuid.to_string())],
    };
    match w.mode {
        Mode::Exclusive | Mode::Naive => Ok((
            ModeGuard { active: Active::Plain, done: false },
            Applied {
                jobs: (0..w.jobs.len()).map(plain).collect(),
                mps: None,
                mig: None,
                mig_devices: Vec::new(),
                mps_client_pipe: None,
            },
        )),
        Mode::Mps | Mode::MpsLimited => {
            let limited = w.mode == Mode::MpsLimited;
            let mut limits = Vec::new();
            for (i, j) in w.jobs.iter().enumerate() {
                match (&j.mps_limits, limited) {
                    (Some(l), true) => limits.push(Some(l.clone())),
                    (None, true) => anyhow::bail!("job {i} of an mps-limited workload has no mps_limits in the plan"),
                    _ => limits.push(None),
                }
            }
            let daemon = mps::Daemon::start(ctx)?;
            let jobs = limits
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let mut p = plain(i);
                    p.env.extend(daemon.client_env());
                    if let Some(l) = l {
                        p.env
                            .push(("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".into(), l.active_thread_percentage.to_string()));
                        p.env.push((
                            "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".into(),
                            mps::pinned_limit(l.pinned_mem_limit_mib),
                        ));
                    }
                    p
                })
                .collect();
            let info = MpsInfo {
                daemon_started: true,
                pipe_directory: daemon.pipe_display(),
                log_directory: daemon.log_display(),
                active_thread_percentage: limits
                    .iter()
                    .map(|l| l.as_ref().map(|l| l.active_thread_percentage))
                    .collect(),
                pinned_mem_limit_mib: limits.iter().map(|l| l.as_ref().map(|l| l.pinned_mem_limit_mib)).collect(),
                clients: None,
            };
            let mps_client_pipe = daemon.client_pipe();
            Ok((
                ModeGuard { active: Active::Mps(daemon), done: false },
                Applied { jobs, mps: Some(info), mig: None, mig_devices: Vec::new(), mps_client_pipe },
            ))
        }
        Mode::Mig => {
            let mut profiles = Vec::new();
            for (i, j) in w.jobs.iter().enumerate() {
                match &j.mig_profile {
                    Some(p) => profiles.push(p.clone()),
                    None => anyhow::bail!("job {i} of a mig workload has no mig_profile in the plan"),
                }
            }
            let instances = mig::Instances::create(ctx, &profiles)?;
            let created = instances.by_job();
            let jobs = created
                .iter()
                .map(|c| Placement {
                    device: c.device_uuid.clone(),
                    env: vec![("CUDA_VISIBLE_DEVICES".into(), c.device_uuid.clone())],
                })
                .collect();
            let mig_devices = created.iter().map(|c| (c.gpu_instance_id, c.device_uuid.clone())).collect();
            let info = MigInfo { instances: created, torn_down: false };
            Ok((
                ModeGuard { active: Active::Mig(instances), done: false },
                Applied { jobs, mps: None, mig: Some(info), mig_devices, mps_client_pipe: None },
            ))
        }
    }
}
