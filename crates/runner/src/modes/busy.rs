//! Is the GPU in use by someone else? Checked before every run: foreign compute processes
//! on the GPU (NVML) and MPS daemons or servers not started by this runner (found in
//! `/proc`; ours are those whose `CUDA_MPS_PIPE_DIRECTORY` is the campaign's).

use anyhow::Result;
use colloc_plan::perf::GIB;
use std::fs;
use std::path::{Path, PathBuf};

use crate::backend::Backend;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MpsProcess {
    pub pid: u32,
    pub name: String,
    /// Its `CUDA_MPS_PIPE_DIRECTORY`; `Err` when its environment cannot be read.
    pub pipe_dir: Result<Option<String>, String>,
}

/// MPS control daemons and servers running on this host.
pub(crate) fn mps_processes() -> Vec<MpsProcess> {
    let me = std::process::id();
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let base = e.path();
        let comm = fs::read_to_string(base.join("comm")).unwrap_or_default();
        let argv0 = fs::read(base.join("cmdline"))
            .ok()
            .and_then(|c| c.split(|b| *b == 0).next().map(|a| String::from_utf8_lossy(a).into_owned()))
            .unwrap_or_default();
        let argv0_base = argv0.rsplit('/').next().unwrap_or("").to_string();
        let is_mps = comm.trim().starts_with("nvidia-cuda-mps") || argv0_base.starts_with("nvidia-cuda-mps-");
        if !is_mps || is_zombie(&base) {
            // A zombie has released everything; where no init reaps them (a container) an
            // exited MPS server stays one for good.
            continue;
        }
        let pipe_dir = match fs::read(base.join("environ")) {
            Ok(env) => Ok(env.split(|b| *b == 0).find_map(|kv| {
                let kv = String::from_utf8_lossy(kv);
                kv.strip_prefix("CUDA_MPS_PIPE_DIRECTORY=").map(str::to_string)
            })),
            // Gone between listing and reading, or exiting: not in anyone's way.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) || e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => Err(e.to_string()),
        };
        let name = if argv0_base.is_empty() { comm.trim().to_string() } else { argv0_base };
        out.push(MpsProcess { pid, name, pipe_dir });
    }
    out.sort_by_key(|p| p.pid);
    out
}

/// Whether `/proc/<pid>` is a zombie (state `Z` after the command name in `stat`).
fn is_zombie(proc_dir: &Path) -> bool {
    fs::read_to_string(proc_dir.join("stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Why the GPU counts as busy (empty: free). `check_mps`: look for foreign MPS daemons;
/// `our_pipes`: the pipe directories of the campaign's own (one per GPU).
pub(crate) fn reasons(gpu: &dyn Backend, our_pipes: &[PathBuf], check_mps: bool) -> Result<Vec<String>> {
    let mut why = Vec::new();
    let is_ours = |d: &str| our_pipes.iter().any(|p| *p.to_string_lossy() == *d);
    if check_mps {
        for p in mps_processes() {
            match &p.pipe_dir {
                Ok(Some(d)) if is_ours(d) => {}
                Ok(Some(d)) => why.push(format!("MPS process {} ({}) with pipe directory {d}", p.pid, p.name)),
                Ok(None) => why.push(format!("MPS process {} ({}) with the default pipe directory", p.pid, p.name)),
                Err(e) => why.push(format!("MPS process {} ({}), environment unreadable ({e})", p.pid, p.name)),
            }
        }
    }
    let ours: Vec<u32> = mps_processes()
        .into_iter()
        .filter(|p| matches!(&p.pipe_dir, Ok(Some(d)) if is_ours(d)))
        .map(|p| p.pid)
        .collect();
    for p in gpu.compute_processes()? {
        if ours.contains(&p.pid) {
            continue;
        }
        let name =
            fs::read_to_string(format!("/proc/{}/comm", p.pid)).map(|s| s.trim().to_string()).unwrap_or_default();
        let mem = p.used_bytes.map(|b| format!(", {:.1} GiB", b as f64 / GIB)).unwrap_or_default();
        why.push(format!(
            "compute process {} ({}{mem}) on GPU {}",
            p.pid,
            if name.is_empty() { "?" } else { &name },
            gpu.index()
        ));
    }
    Ok(why)
}

/// As [`reasons`], but a GPU counts as busy only when it still is after `patience` (what a
/// previous run of ours left, such as an MPS server on its way out, needs a moment to go).
pub(crate) fn reasons_after(
    gpu: &dyn Backend,
    our_pipes: &[PathBuf],
    check_mps: bool,
    patience: std::time::Duration,
) -> Result<Vec<String>> {
    let deadline = std::time::Instant::now() + patience;
    loop {
        let why = reasons(gpu, our_pipes, check_mps)?;
        if why.is_empty() || std::time::Instant::now() >= deadline {
            return Ok(why);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}
