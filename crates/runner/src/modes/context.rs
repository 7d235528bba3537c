//! What the mode set-up is given: the GPU, the tools, the campaign's MPS directories and
//! state file, the progress.

use std::path::PathBuf;
use std::sync::Arc;

use crate::leftovers::Leftovers;
use crate::options::Tools;
use crate::progress::Progress;

/// Where and how mode commands run.
pub(crate) struct ModeContext<'a> {
    pub gpu_index: u32,
    pub gpu_uuid: &'a str,
    pub tools: &'a Tools,
    /// `false`: simulated: no command runs, ids and UUIDs are made up.
    pub exec: bool,
    pub mps_dirs: &'a MpsDirs,
    pub leftovers: &'a Arc<Leftovers>,
    pub progress: &'a Progress,
}

/// The campaign's private MPS directories.
#[derive(Debug, Clone)]
pub(crate) struct MpsDirs {
    /// Short path under the temporary directory (the daemon's sockets live there).
    pub pipe: PathBuf,
    pub log: PathBuf,
}
