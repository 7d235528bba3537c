//! The real backend: the GPU through NVML (loaded at run time from `libnvidia-ml.so.1`) and
//! the real training program. Read-only: nothing here changes a GPU setting.

use anyhow::{anyhow, bail, Result};
use colloc_plan::PlannedWorkload;
use colloc_trace::meta::{DriverListing, GpuInfo};
use colloc_trace::Mode;
use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::{Device, Nvml};
use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::backend::{Backend, GpuProcess};
use crate::telemetry::nvml::{driver_listing, process_memory, NvmlSource};
use crate::telemetry::GpuSource;

static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();

/// The process-wide NVML handle, initialised on first use.
fn nvml() -> Result<&'static Nvml> {
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

/// The GPU through NVML, and the real training program: the real backend.
pub(crate) struct NvmlGpu {
    nvml: &'static Nvml,
    index: u32,
    uuid: String,
    name: String,
}

impl NvmlGpu {
    /// How many GPUs NVML sees.
    pub(crate) fn count() -> Result<u32> {
        nvml()?.device_count().map_err(|e| anyhow!("NVML cannot count GPUs: {e}"))
    }

    /// Opens GPU `index` through NVML; a clear error when NVML or the GPU is missing.
    pub(crate) fn open(index: u32) -> Result<NvmlGpu> {
        let nvml = nvml()?;
        let count = nvml.device_count().map_err(|e| anyhow!("NVML cannot count GPUs: {e}"))?;
        if index >= count {
            bail!("there is no GPU {index}: NVML sees {count} GPU(s)");
        }
        let dev = nvml.device_by_index(index).map_err(|e| anyhow!("NVML cannot open GPU {index}: {e}"))?;
        let uuid = dev.uuid().map_err(|e| anyhow!("NVML cannot read the UUID of GPU {index}: {e}"))?;
        let name = dev.name().unwrap_or_else(|_| "unknown".into());
        Ok(NvmlGpu { nvml, index, uuid, name })
    }
}

impl Backend for NvmlGpu {
    fn index(&self) -> u32 {
        self.index
    }

    fn uuid(&self) -> &str {
        &self.uuid
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn simulated(&self) -> bool {
        false
    }

    fn info(&self) -> GpuInfo {
        self.read_info()
    }

    fn memory_total(&self) -> Option<u64> {
        self.device().ok()?.memory_info().ok().map(|m| m.total)
    }

    fn mig_enabled_for(&self, _mode: Mode) -> Result<bool> {
        match self.device()?.mig_mode() {
            Ok(m) => Ok(m.current == 1),
            Err(nvml_wrapper::error::NvmlError::NotSupported) => Ok(false),
            Err(e) => Err(anyhow!("NVML cannot read the MIG mode of GPU {}: {e}", self.index)),
        }
    }

    fn compute_processes(&self) -> Result<Vec<GpuProcess>> {
        let dev = self.device()?;
        let mut map = process_memory(&dev)
            .map_err(|e| anyhow!("NVML cannot list the compute processes of GPU {}: {e}", self.index))?;
        for mig in mig_devices(&dev) {
            if let Ok(m) = process_memory(&mig) {
                map.extend(m);
            }
        }
        let mut v: Vec<_> = map.into_iter().map(|(pid, used_bytes)| GpuProcess { pid, used_bytes }).collect();
        v.sort_by_key(|p| p.pid);
        Ok(v)
    }

    fn mps_listing(&self, pids: &[u32], _client_pipe: Option<&str>) -> Result<Vec<DriverListing>> {
        driver_listing(&self.device()?, pids).map_err(|e| anyhow!("GPU {}: {e}", self.index))
    }

    fn executes_mode_commands(&self) -> bool {
        true
    }

    fn run_seconds(&self, protocol_seconds: f64) -> f64 {
        protocol_seconds
    }

    fn telemetry(
        &self,
        _w: &PlannedWorkload,
        _run_id: &str,
        mig_devices: &[(u32, String)],
    ) -> Result<Box<dyn GpuSource>> {
        Ok(Box::new(NvmlSource::new(self.nvml, self.device()?, mig_devices)))
    }

    fn job_env(&self, w: &PlannedWorkload, _run_id: &str) -> Vec<Vec<(String, String)>> {
        vec![Vec::new(); w.jobs.len()]
    }
}

impl NvmlGpu {
    fn device(&self) -> Result<Device<'static>> {
        self.nvml.device_by_uuid(self.uuid.as_str()).map_err(|e| anyhow!("NVML cannot open GPU {}: {e}", self.uuid))
    }

    fn read_info(&self) -> GpuInfo {
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
fn mig_devices(dev: &Device<'static>) -> Vec<Device<'static>> {
    let Ok(count) = dev.mig_device_count() else { return Vec::new() };
    (0..count).filter_map(|i| dev.mig_device_by_index(i).ok()).collect()
}
