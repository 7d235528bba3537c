//! GPU tables (`experiments/gpus/*.yaml`): the MIG profiles of a GPU model with their
//! placement rules, and single-job speeds used only to estimate GPU time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuTable {
    /// Short key used on the command line: `a100-40gb`, `h200-141gb`.
    pub key: String,
    /// Marketing name.
    pub name: String,
    /// Substrings of the NVML device name that identify this model (e.g. `H200`).
    pub nvml_names: Vec<String>,
    /// Streaming multiprocessors of the whole GPU (MIG off).
    pub sms: u32,
    pub memory_gib: f64,
    /// Compute slices MIG divides the GPU into (7).
    pub compute_slices: u32,
    /// Memory slices MIG divides the GPU into (8): placements are counted in these.
    pub memory_slices: u32,
    /// Board power limit in watts (the simulated GPU reports it).
    pub power_limit_watts: f64,
    /// Where the table comes from.
    pub source: String,
    pub profiles: Vec<MigProfile>,
    /// Images/s of one job of the model alone, batch 128, FP32, synthetic data: used for
    /// GPU-time estimates only, never as results.
    #[serde(default)]
    pub estimate_images_per_second: BTreeMap<String, f64>,
    /// How a model uses this GPU, fitted to measurements on it, in place of the speed
    /// model's GPU-independent profile: used for GPU-time estimates and the simulated
    /// backend only, never as results.
    #[serde(default)]
    pub estimate_profiles: BTreeMap<String, ProfileFit>,
}

/// A model's use of one GPU model, for the speed model (`colloc_plan::perf`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileFit {
    /// Share of a training step alone in which the GPU is busy (0 to 1).
    pub busy: f64,
    /// Share of the GPU's SMs its kernels need to run at full speed (0 to 1).
    pub occupancy: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MigProfile {
    /// `1g.5gb`, `1g.18gb+me`...
    pub name: String,
    /// NVML GPU-instance profile id.
    pub id: u32,
    /// The compute-slice class this profile is the canonical one of (`1g`..`7g`); absent for
    /// variants (`+me`, double-memory) that a class never maps to.
    #[serde(default)]
    pub class: Option<String>,
    pub compute_slices: u32,
    pub memory_slices: u32,
    pub sms: u32,
    pub memory_gib: f64,
    pub max_instances: u32,
    /// Memory-slice indices at which an instance of this profile may start; it occupies
    /// `memory_slices` consecutive slices from there.
    pub placements: Vec<u32>,
}

impl GpuTable {
    /// The profile a class (`1g`) or a profile name (`1g.5gb`) denotes on this GPU.
    pub fn profile(&self, spelled: &str) -> Option<&MigProfile> {
        self.profiles
            .iter()
            .find(|p| p.name == spelled)
            .or_else(|| self.profiles.iter().find(|p| p.class.as_deref() == Some(spelled)))
    }

    /// Tries to place instances of the given profiles side by side. Returns each one's
    /// start slice in the given order, or why they do not fit.
    pub fn place(&self, profiles: &[&MigProfile]) -> Result<Vec<u32>, String> {
        let compute: u32 = profiles.iter().map(|p| p.compute_slices).sum();
        if compute > self.compute_slices {
            return Err(format!("needs {compute} of the {}'s {} compute slices", self.name, self.compute_slices));
        }
        for p in profiles {
            let n = profiles.iter().filter(|q| q.name == p.name).count() as u32;
            if n > p.max_instances {
                return Err(format!("{n} × {} but at most {} fit on the {}", p.name, p.max_instances, self.name));
            }
        }
        // Largest first, as the driver's placement does; backtracking keeps it exact.
        let mut order: Vec<usize> = (0..profiles.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse((profiles[i].memory_slices, profiles[i].compute_slices)));
        let mut used = vec![false; self.memory_slices as usize];
        let mut starts = vec![0u32; profiles.len()];
        if self.place_from(profiles, &order, 0, &mut used, &mut starts) {
            Ok(starts)
        } else {
            let names: Vec<&str> = profiles.iter().map(|p| p.name.as_str()).collect();
            Err(format!(
                "no placement of {} fits the {}'s {} memory slices",
                names.join(" + "),
                self.name,
                self.memory_slices
            ))
        }
    }

    fn place_from(&self, ps: &[&MigProfile], order: &[usize], k: usize, used: &mut [bool], starts: &mut [u32]) -> bool {
        let Some(&i) = order.get(k) else { return true };
        let p = ps[i];
        for &s in &p.placements {
            let range = s as usize..(s + p.memory_slices) as usize;
            if range.end > used.len() || used[range.clone()].iter().any(|&u| u) {
                continue;
            }
            used[range.clone()].iter_mut().for_each(|u| *u = true);
            starts[i] = s;
            if self.place_from(ps, order, k + 1, used, starts) {
                return true;
            }
            used[range].iter_mut().for_each(|u| *u = false);
        }
        false
    }
}

/// The GPU table whose `nvml_names` the NVML device name contains (the longest such name
/// when several do); none is an error that lists the tables and says how to add one.
pub fn table_for_device<'a>(tables: &'a BTreeMap<String, GpuTable>, device: &str) -> anyhow::Result<&'a GpuTable> {
    let best = tables
        .values()
        .flat_map(|t| t.nvml_names.iter().filter(|n| device.contains(n.as_str())).map(move |n| (n.len(), t)))
        .max_by_key(|(len, _)| *len);
    match best {
        Some((_, t)) => Ok(t),
        None => {
            let known: Vec<String> = tables
                .values()
                .map(|t| format!("  {}: {} (names {})", t.key, t.name, t.nvml_names.join(", ")))
                .collect();
            anyhow::bail!(
                "no GPU table matches `{device}`. Supported:\n{}\nTo add this GPU, write \
                 experiments/gpus/<key>.yaml (schema: experiments/gpu.schema.json; `nvidia-smi mig -lgip` \
                 lists its MIG profiles) with `nvml_names` holding part of its name, then run again.",
                known.join("\n")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    /// A device name picks the table whose `nvml_names` it contains, the longest match
    /// winning; an unknown GPU is refused with the supported ones and how to add one.
    #[test]
    fn the_device_name_picks_its_gpu_table() {
        let project = crate::load_project(&crate::names::project_root().unwrap()).unwrap();
        for (device, key) in [
            ("NVIDIA H200", "h200-141gb"),
            ("NVIDIA H200 NVL", "h200-141gb"),
            ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
            ("NVIDIA A100 80GB PCIe", "a100-80gb"),
            ("NVIDIA H100 80GB HBM3", "h100-80gb"),
        ] {
            assert_eq!(super::table_for_device(&project.gpus, device).unwrap().key, key, "{device}");
        }
        let e = super::table_for_device(&project.gpus, "Tesla V100-SXM2-16GB").unwrap_err().to_string();
        assert!(e.contains("no GPU table matches `Tesla V100-SXM2-16GB`") && e.contains("h100-80gb: "), "{e}");
    }
}
