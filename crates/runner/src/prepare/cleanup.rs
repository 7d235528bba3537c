//! What a killed runner left on the GPU, as `.runner-state.json` lists it: MPS daemons it
//! started (stopped) and MIG instances it created (destroyed, only those whose MIG device
//! UUID proves they are the ones it created).

use anyhow::{bail, Result};
use std::path::Path;

use crate::command::Cmd;
use crate::leftovers::Leftovers;
use crate::modes::{mig, mps, MpsDirs};
use crate::options::RunOptions;
use crate::progress::Progress;

/// Removes what a killed runner left: MPS daemons it started and MIG instances it created
/// (only those whose MIG device UUID proves they are the ones it created).
pub(crate) fn clean_leftovers(
    leftovers: &Leftovers,
    opts: &RunOptions,
    dirs: &MpsDirs,
    progress: &Progress,
) -> Result<()> {
    let state = leftovers.snapshot();
    let tools = &opts.tools;
    for pipe in &state.mps_pipe_dirs {
        let p = Path::new(pipe);
        if mps::answers(tools, p, &dirs.log).map(|(up, _)| up).unwrap_or(false) {
            progress.log(&format!("an MPS daemon left by an earlier run still serves {pipe}: stopping it"));
            mps::quit_at(tools, p, &dirs.log)?;
        }
        leftovers.remove_mps(pipe)?;
    }
    for m in &state.mig {
        let Some(uuid) = &m.uuid else {
            progress.log(&format!(
                "warning: GPU instance {} on GPU {} may be left by an interrupted run, but it cannot be proven \
                 to be ours, so it is not destroyed; check `nvidia-smi mig -i {} -lgi`",
                m.gpu_instance, m.gpu, m.gpu
            ));
            leftovers.remove_mig(m.gpu, m.gpu_instance)?;
            continue;
        };
        let out = Cmd::new(&tools.nvidia_smi, &["-L"], tools.command_timeout).run()?;
        if out.success && mig::parse_list(&out.stdout, m.gpu).contains(uuid) {
            progress.log(&format!(
                "MIG GPU instance {} ({uuid}) on GPU {} was left by an earlier run: destroying it",
                m.gpu_instance, m.gpu
            ));
            if let Some(ci) = m.compute_instance {
                mig::destroy_step(tools, progress, m.gpu, m.gpu_instance, Some(ci))?;
            }
            mig::destroy_step(tools, progress, m.gpu, m.gpu_instance, None)?;
            if mig::gpu_instances(tools, m.gpu)?.contains(&m.gpu_instance) {
                bail!(
                    "MIG GPU instance {} on GPU {} left by an earlier run could not be destroyed",
                    m.gpu_instance,
                    m.gpu
                );
            }
        } else if !out.success {
            bail!("`nvidia-smi -L` failed while checking for leftover MIG instances: {}", out.text());
        }
        leftovers.remove_mig(m.gpu, m.gpu_instance)?;
    }
    Ok(())
}
