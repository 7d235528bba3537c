//! The GPU the runner works on: NVML (loaded at run time from `libnvidia-ml.so.1`) or the
//! simulated GPU of `--simulate`. Read-only: nothing here changes a GPU setting.

use anyhow::{anyhow, bail, Result};
use colloc_plan::GpuTarget;
use colloc_trace::meta::GpuInfo;
use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::{Device, Nvml};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();

/// The process-wide NVML handle, initialised on first use.
pub fn nvml() -> Result<&'static Nvml> {
    NVML.get_or_init(|| {
        Nvml::init().map_err(|e| {
            format!(
                "NVML is not available ({e}): libnvidia-ml.so.1 could not be loaded or initialised. \
                 Is the NVIDIA driver installed on this machine? Use --simulate to run without a GPU"
            )
        })
    })
    .as_ref()
    .map_err(|e| anyhow!("{e}"))
}

/// A process using the GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuProcess {
    pub pid: u32,
    pub used_bytes: Option<u64>,
}

pub enum Gpu {
    Nvml(NvmlGpu),
    Sim(SimGpu),
}

pub struct NvmlGpu {
    pub nvml: &'static Nvml,
    pub index: u32,
    pub uuid: String,
    pub name: String,
}

/// The simulated GPU: looks like the plan's target GPU, says `Simulated` in its name.
pub struct SimGpu {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub target: GpuTarget,
    /// `None`: MIG mode as each workload needs it (as if MIG workloads ran on a second,
    /// MIG-enabled GPU, the way the paper's authors ran them).
    pub mig_mode: Option<bool>,
}

impl Gpu {
    /// Opens GPU `index` through NVML; a clear error when NVML or the GPU is missing.
    pub fn open_nvml(index: u32) -> Result<Gpu> {
        let nvml = nvml()?;
        let count = nvml.device_count().map_err(|e| anyhow!("NVML cannot count GPUs: {e}"))?;
        if index >= count {
            bail!("there is no GPU {index}: NVML sees {count} GPU(s)");
        }
        let dev = nvml.device_by_index(index).map_err(|e| anyhow!("NVML cannot open GPU {index}: {e}"))?;
        let uuid = dev.uuid().map_err(|e| anyhow!("NVML cannot read the UUID of GPU {index}: {e}"))?;
        let name = dev.name().unwrap_or_else(|_| "unknown".into());
        Ok(Gpu::Nvml(NvmlGpu { nvml, index, uuid, name }))
    }

    pub fn simulated(index: u32, target: &GpuTarget, mig_mode: Option<bool>) -> Gpu {
        Gpu::Sim(SimGpu {
            index,
            uuid: format!("GPU-5e5e5e5e-0000-4000-8000-{index:012}"),
            name: format!("Simulated {}", target.name),
            target: target.clone(),
            mig_mode,
        })
    }

    pub fn is_simulated(&self) -> bool {
        matches!(self, Gpu::Sim(_))
    }

    pub fn index(&self) -> u32 {
        match self {
            Gpu::Nvml(g) => g.index,
            Gpu::Sim(g) => g.index,
        }
    }

    pub fn uuid(&self) -> &str {
        match self {
            Gpu::Nvml(g) => &g.uuid,
            Gpu::Sim(g) => &g.uuid,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Gpu::Nvml(g) => &g.name,
            Gpu::Sim(g) => &g.name,
        }
    }

    /// Whether MIG mode is enabled for a run of a workload in `mode`.
    pub fn mig_enabled_for(&self, mode: colloc_plan::Mode) -> Result<bool> {
        match self {
            Gpu::Sim(SimGpu { mig_mode: None, .. }) => Ok(mode == colloc_plan::Mode::Mig),
            _ => self.mig_enabled(),
        }
    }

    /// Whether MIG mode is currently enabled (a simulated GPU in `auto` says no).
    pub fn mig_enabled(&self) -> Result<bool> {
        match self {
            Gpu::Sim(g) => Ok(g.mig_mode.unwrap_or(false)),
            Gpu::Nvml(g) => match g.device()?.mig_mode() {
                Ok(m) => Ok(m.current == 1),
                Err(nvml_wrapper::error::NvmlError::NotSupported) => Ok(false),
                Err(e) => Err(anyhow!("NVML cannot read the MIG mode of GPU {}: {e}", g.index)),
            },
        }
    }

    /// Total memory in bytes.
    pub fn memory_total(&self) -> Option<u64> {
        match self {
            Gpu::Sim(g) => Some((g.target.memory_gib * GIB) as u64),
            Gpu::Nvml(g) => g.device().ok()?.memory_info().ok().map(|m| m.total),
        }
    }

    /// Compute processes on the GPU and on its MIG devices.
    pub fn compute_processes(&self) -> Result<Vec<GpuProcess>> {
        match self {
            Gpu::Sim(_) => Ok(Vec::new()),
            Gpu::Nvml(g) => {
                let dev = g.device()?;
                let mut map = process_memory(&dev)
                    .map_err(|e| anyhow!("NVML cannot list the compute processes of GPU {}: {e}", g.index))?;
                for mig in mig_devices(&dev) {
                    if let Ok(m) = process_memory(&mig) {
                        map.extend(m);
                    }
                }
                let mut v: Vec<_> = map.into_iter().map(|(pid, used_bytes)| GpuProcess { pid, used_bytes }).collect();
                v.sort_by_key(|p| p.pid);
                Ok(v)
            }
        }
    }

    /// Provenance of the GPU as it is now.
    pub fn info(&self) -> GpuInfo {
        match self {
            Gpu::Sim(g) => GpuInfo {
                index: g.index,
                name: g.name.clone(),
                uuid: g.uuid.clone(),
                driver_version: None,
                cuda_version: None,
                nvml_version: None,
                architecture: Some("simulated".into()),
                memory_total_bytes: self.memory_total(),
                sm_count: Some(g.target.sms),
                mig_mode_current: g.mig_mode,
                mig_mode_pending: g.mig_mode,
                compute_mode: None,
                persistence_mode: None,
                power_limit_watts: Some(crate::sim_model::tdp_watts(&g.target)),
                clocks_max_mhz: BTreeMap::new(),
                clocks_applied_mhz: BTreeMap::new(),
            },
            Gpu::Nvml(g) => g.info(),
        }
    }
}

pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl NvmlGpu {
    pub fn device(&self) -> Result<Device<'static>> {
        self.nvml.device_by_uuid(self.uuid.as_str()).map_err(|e| anyhow!("NVML cannot open GPU {}: {e}", self.uuid))
    }

    fn info(&self) -> GpuInfo {
        let dev = self.device().ok();
        let d = dev.as_ref();
        let mig = d.and_then(|d| d.mig_mode().ok());
        let clocks = |f: &dyn Fn(&Device<'static>, Clock) -> Option<u32>| {
            let mut m = BTreeMap::new();
            if let Some(d) = d {
                for (k, c) in [("graphics", Clock::Graphics), ("sm", Clock::SM), ("memory", Clock::Memory)] {
                    if let Some(v) = f(d, c) {
                        m.insert(k.to_string(), v);
                    }
                }
            }
            m
        };
        GpuInfo {
            index: self.index,
            name: self.name.clone(),
            uuid: self.uuid.clone(),
            driver_version: self.nvml.sys_driver_version().ok(),
            cuda_version: self.nvml.sys_cuda_driver_version().ok().map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
            nvml_version: self.nvml.sys_nvml_version().ok(),
            architecture: d.and_then(|d| d.architecture().ok()).map(|a| format!("{a:?}")),
            memory_total_bytes: d.and_then(|d| d.memory_info().ok()).map(|m| m.total),
            sm_count: None,
            mig_mode_current: mig.as_ref().map(|m| m.current == 1),
            mig_mode_pending: mig.as_ref().map(|m| m.pending == 1),
            compute_mode: d.and_then(|d| d.compute_mode().ok()).map(|m| format!("{m:?}")),
            persistence_mode: d.and_then(|d| d.is_in_persistent_mode().ok()),
            power_limit_watts: d.and_then(|d| d.enforced_power_limit().ok()).map(|mw| mw as f64 / 1000.0),
            clocks_max_mhz: clocks(&|d, c| d.max_clock_info(c).ok()),
            clocks_applied_mhz: clocks(&|d, c| d.applications_clock(c).ok()),
        }
    }
}

/// MIG device handles of a GPU (none when MIG is off).
pub fn mig_devices(dev: &Device<'static>) -> Vec<Device<'static>> {
    let Ok(count) = dev.mig_device_count() else { return Vec::new() };
    (0..count).filter_map(|i| dev.mig_device_by_index(i).ok()).collect()
}

/// pid → used GPU memory (`None` where the driver does not say) of the compute and MPS
/// client processes on a device.
pub fn process_memory(dev: &Device<'static>) -> Result<HashMap<u32, Option<u64>>, nvml_wrapper::error::NvmlError> {
    let mut map = HashMap::new();
    let mut add = |list: Vec<nvml_wrapper::struct_wrappers::device::ProcessInfo>| {
        for p in list {
            let used = match p.used_gpu_memory {
                UsedGpuMemory::Used(b) => Some(b),
                UsedGpuMemory::Unavailable => None,
            };
            let e = map.entry(p.pid).or_insert(None);
            if used.is_some() {
                *e = used;
            }
        }
    };
    add(dev.running_compute_processes()?);
    if let Ok(mps) = dev.mps_running_compute_processes() {
        add(mps);
    }
    Ok(map)
}
