//! GPU samples from NVML: power, total energy, utilisation, memory, clocks, temperature,
//! clocks-event (throttle) reasons, and on Hopper and newer the GPM metrics (SM activity,
//! SM occupancy, tensor activity, DRAM bandwidth utilisation), for the whole GPU and, in
//! MIG mode, per GPU instance.

use colloc_trace::meta::DriverListing;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::gpm::{gpm_metrics_get, GpmSample};
use nvml_wrapper::{Device, Nvml};
use std::collections::{HashMap, HashSet};

use super::{Gaps, GpuRow, GpuSource, JobState, Num};

const GPM: [(GpmMetricId, &str); 4] = [
    (GpmMetricId::SmUtil, "sm_activity_pct"),
    (GpmMetricId::SmOccupancy, "sm_occupancy_pct"),
    (GpmMetricId::AnyTensorUtil, "tensor_activity_pct"),
    (GpmMetricId::DramBwUtil, "dram_bw_util_pct"),
];

struct MigTarget {
    gi: u32,
    dev: Result<Device<'static>, String>,
    prev: Option<GpmSample<'static>>,
}

pub(crate) struct NvmlSource {
    nvml: &'static Nvml,
    dev: Device<'static>,
    /// `Err(reason)` when GPM cannot be used.
    gpm: Result<(), String>,
    prev: Option<GpmSample<'static>>,
    mig: Vec<MigTarget>,
}

impl NvmlSource {
    /// `mig_devices`: (GPU-instance id, MIG device UUID) of the run's instances.
    pub(crate) fn new(nvml: &'static Nvml, dev: Device<'static>, mig_devices: &[(u32, String)]) -> NvmlSource {
        let gpm = match dev.gpm_support() {
            Ok(true) => Ok(()),
            Ok(false) => Err("GPM is not supported by this GPU (Hopper or newer needed)".to_string()),
            Err(e) => Err(format!("GPM support cannot be queried: {e}")),
        };
        let mig = mig_devices
            .iter()
            .map(|(gi, uuid)| MigTarget {
                gi: *gi,
                dev: nvml.device_by_uuid(uuid.as_str()).map_err(|e| format!("MIG device {uuid}: {e}")),
                prev: None,
            })
            .collect();
        NvmlSource { nvml, dev, gpm, prev: None, mig }
    }
}

fn put<T, E: std::fmt::Display>(
    row: &mut GpuRow,
    gaps: &mut Gaps,
    col: &str,
    instance: bool,
    r: Result<T, E>,
    f: impl FnOnce(T) -> Num,
) {
    match r {
        Ok(v) => row.set(col, f(v)),
        Err(e) => gaps.miss(col, instance, || e.to_string()),
    }
}

/// Fills the GPM columns from `prev` → `new`, or records why they are empty.
fn gpm_fill(
    nvml: &'static Nvml,
    row: &mut GpuRow,
    gaps: &mut Gaps,
    instance: bool,
    prev: &mut Option<GpmSample<'static>>,
    new: Result<GpmSample<'static>, String>,
) {
    let new = match new {
        Ok(s) => s,
        Err(e) => {
            for (_, col) in GPM {
                gaps.miss(col, instance, || e.clone());
            }
            return;
        }
    };
    match prev.as_ref() {
        None => {
            for (_, col) in GPM {
                gaps.miss(col, instance, || "the first sample (GPM compares two samples)".into());
            }
        }
        Some(p) => match gpm_metrics_get(nvml, p, &new, &GPM.map(|(id, _)| id)) {
            Ok(results) => {
                // One metric missing makes the pair of samples suspect: on an H200 the DRAM
                // bandwidth came back NaN while the others read 0 with the GPU 100% busy.
                // Then none of the sample's GPM metrics is kept.
                let values: Vec<Result<f64, String>> = results
                    .into_iter()
                    .map(|r| match r {
                        Ok(m) if m.value.is_finite() => Ok(m.value),
                        Ok(m) => Err(format!("GPM returned {}", m.value)),
                        Err(e) => Err(format!("GPM: {e}")),
                    })
                    .collect();
                let bad = GPM.iter().zip(&values).find_map(|((_, col), v)| v.as_ref().err().map(|e| (*col, e.clone())));
                for ((_, col), v) in GPM.iter().zip(values) {
                    match (v, &bad) {
                        (Ok(v), None) => row.set(col, Num::F(v)),
                        (Err(e), _) => gaps.miss(col, instance, || e),
                        (Ok(_), Some((other, e))) => {
                            gaps.miss(col, instance, || format!("left out with {other} of the same GPM sample ({e})"))
                        }
                    }
                }
            }
            Err(e) => {
                for (_, col) in GPM {
                    gaps.miss(col, instance, || format!("GPM: {e}"));
                }
            }
        },
    }
    *prev = Some(new);
}

impl GpuSource for NvmlSource {
    fn name(&self) -> &'static str {
        "nvml"
    }

    fn sample(&mut self, _jobs: &[JobState], gaps: &mut Gaps, energy: bool) -> Vec<GpuRow> {
        let d = &self.dev;
        let mut row = GpuRow::new(-1);
        put(&mut row, gaps, "power_w", false, d.power_usage(), |mw| Num::F(mw as f64 / 1000.0));
        if energy {
            put(&mut row, gaps, "energy_j", false, d.total_energy_consumption(), |mj| Num::F(mj as f64 / 1000.0));
        }
        let util = d.utilization_rates();
        put(&mut row, gaps, "gpu_util_pct", false, util.as_ref().map(|u| u.gpu), |v| Num::U(v as u64));
        put(&mut row, gaps, "mem_util_pct", false, util.as_ref().map(|u| u.memory), |v| Num::U(v as u64));
        let mem = d.memory_info();
        put(&mut row, gaps, "mem_used_bytes", false, mem.as_ref().map(|m| m.used), Num::U);
        put(&mut row, gaps, "mem_total_bytes", false, mem.as_ref().map(|m| m.total), Num::U);
        put(&mut row, gaps, "sm_clock_mhz", false, d.clock_info(Clock::SM), |v| Num::U(v as u64));
        put(&mut row, gaps, "mem_clock_mhz", false, d.clock_info(Clock::Memory), |v| Num::U(v as u64));
        put(&mut row, gaps, "temperature_c", false, d.temperature(TemperatureSensor::Gpu), |v| Num::U(v as u64));
        put(&mut row, gaps, "throttle_reasons", false, d.current_throttle_reasons(), |r| Num::U(r.bits()));
        let new = match &self.gpm {
            Ok(()) => d.gpm_sample().map_err(|e| format!("GPM sample: {e}")),
            Err(e) => Err(e.clone()),
        };
        gpm_fill(self.nvml, &mut row, gaps, false, &mut self.prev, new);
        let mut rows = vec![row];

        for m in &mut self.mig {
            let mut r = GpuRow::new(m.gi as i64);
            for col in [
                "power_w",
                "energy_j",
                "gpu_util_pct",
                "mem_util_pct",
                "sm_clock_mhz",
                "mem_clock_mhz",
                "temperature_c",
                "throttle_reasons",
            ] {
                gaps.miss(col, true, || "not measured per MIG instance (see the whole-GPU rows)".into());
            }
            match &m.dev {
                Ok(md) => {
                    let mem = md.memory_info();
                    put(&mut r, gaps, "mem_used_bytes", true, mem.as_ref().map(|x| x.used), Num::U);
                    put(&mut r, gaps, "mem_total_bytes", true, mem.as_ref().map(|x| x.total), Num::U);
                }
                Err(e) => {
                    gaps.miss("mem_used_bytes", true, || e.clone());
                    gaps.miss("mem_total_bytes", true, || e.clone());
                }
            }
            let new = match &self.gpm {
                Ok(()) => d.gpm_mig_sample(m.gi).map_err(|e| format!("GPM sample of GPU instance {}: {e}", m.gi)),
                Err(e) => Err(e.clone()),
            };
            gpm_fill(self.nvml, &mut r, gaps, true, &mut m.prev, new);
            rows.push(r);
        }
        rows
    }

    fn process_memory(&mut self, gaps: &mut Gaps) -> Option<HashMap<u32, Option<u64>>> {
        let mut map = match process_memory(&self.dev) {
            Ok(m) => m,
            Err(e) => {
                gaps.miss_process("gpu_mem_bytes", || format!("NVML process list: {e}"));
                return None;
            }
        };
        for m in &self.mig {
            if let Ok(md) = &m.dev {
                if let Ok(x) = process_memory(md) {
                    map.extend(x);
                }
            }
        }
        Some(map)
    }
}

/// pid → used GPU memory (`None` where the driver does not say) of the compute and MPS
/// client processes on a device.
pub(crate) fn process_memory(dev: &Device<'static>) -> Result<HashMap<u32, Option<u64>>, NvmlError> {
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

/// How the driver lists each of `pids` on a device: among its MPS clients, among its compute
/// processes only, or neither. An error names the list that could not be read.
pub(crate) fn driver_listing(dev: &Device<'static>, pids: &[u32]) -> Result<Vec<DriverListing>, String> {
    let pids_of = |list: Vec<nvml_wrapper::struct_wrappers::device::ProcessInfo>| -> HashSet<u32> {
        list.into_iter().map(|p| p.pid).collect()
    };
    let clients = dev
        .mps_running_compute_processes()
        .map(pids_of)
        .map_err(|e| format!("NVML cannot list the MPS clients (nvmlDeviceGetMPSComputeRunningProcesses): {e}"))?;
    let compute = dev
        .running_compute_processes()
        .map(pids_of)
        .map_err(|e| format!("NVML cannot list the compute processes (nvmlDeviceGetComputeRunningProcesses): {e}"))?;
    Ok(pids
        .iter()
        .map(|pid| {
            if clients.contains(pid) {
                DriverListing::MpsClient
            } else if compute.contains(pid) {
                DriverListing::ComputeProcess
            } else {
                DriverListing::NotListed
            }
        })
        .collect())
}
