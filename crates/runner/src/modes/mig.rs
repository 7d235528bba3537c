//! MIG instances of one run on one GPU. MIG mode must already be on (the runner never
//! changes it). For each job, largest profile first (so that placements do not fragment):
//! `nvidia-smi -L` (the MIG devices before), `nvidia-smi mig -i N -cgi <profile> -C`, the
//! created GPU- and compute-instance ids parsed from its output and recorded in the
//! campaign's state file, then `nvidia-smi -L` again: the one new MIG device is the job's.
//! Teardown destroys exactly those instances (`-dci -gi G -ci C`, then `-dgi -gi G`),
//! retrying while the driver says they are in use, and checks with `-lgi` that they are gone.

use anyhow::{anyhow, bail, Result};
use colloc_trace::meta::MigInstance;
use std::collections::BTreeSet;
use std::sync::Arc;

use super::context::ModeContext;
use crate::command::{Cmd, Output};
use crate::leftovers::{Leftovers, MigLeftover};
use crate::options::Tools;
use crate::progress::Progress;

#[derive(Debug, Clone)]
struct Created {
    job: u32,
    profile: String,
    gi: u32,
    ci: Option<u32>,
    uuid: String,
}

pub(crate) struct Instances {
    gpu: u32,
    exec: bool,
    tools: Tools,
    leftovers: Arc<Leftovers>,
    progress: Progress,
    created: Vec<Created>,
    destroyed: bool,
}

/// Runs `nvidia-smi` with arguments.
fn smi(tools: &Tools, args: &[&str]) -> Cmd {
    Cmd::new(&tools.nvidia_smi, args, tools.command_timeout)
}

/// MIG device UUIDs of GPU `gpu` in `nvidia-smi -L` output.
pub(crate) fn parse_list(text: &str, gpu: u32) -> Vec<String> {
    let mut current: Option<u32> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("GPU ") {
            current = rest.split(':').next().and_then(|n| n.trim().parse().ok());
        } else if t.starts_with("MIG ") && current == Some(gpu) {
            if let Some(u) = t.split("UUID:").nth(1) {
                let u = u.trim().trim_end_matches(')').trim();
                if !u.is_empty() {
                    out.push(u.to_string());
                }
            }
        }
    }
    out
}

fn number_after(text: &str, key: &str) -> Option<u32> {
    let at = text.find(key)? + key.len();
    let digits: String = text[at..].trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// (GPU-instance id, compute-instance id) created, from `nvidia-smi mig -cgi ... -C` output.
pub(crate) fn parse_created(text: &str) -> Vec<(u32, Option<u32>)> {
    let mut out: Vec<(u32, Option<u32>)> = Vec::new();
    for line in text.lines() {
        if line.contains("created GPU instance ID") {
            if let Some(gi) = number_after(line, "GPU instance ID") {
                out.push((gi, None));
            }
        } else if line.contains("created compute instance ID") {
            if let (Some(ci), Some(gi)) =
                (number_after(line, "compute instance ID"), number_after(line, "GPU instance ID"))
            {
                match out.iter_mut().find(|(g, c)| *g == gi && c.is_none()) {
                    Some(e) => e.1 = Some(ci),
                    None => out.push((gi, Some(ci))),
                }
            }
        }
    }
    out
}

/// GPU-instance ids of GPU `gpu` in `nvidia-smi mig -lgi` output; `None` when it is not such
/// a listing.
pub(crate) fn parse_lgi(text: &str, gpu: u32) -> Option<Vec<u32>> {
    if text.contains("No GPU instances found") {
        return Some(Vec::new());
    }
    if !text.contains("GPU instances:") {
        return None;
    }
    let mut ids = Vec::new();
    for line in text.lines() {
        let t: Vec<&str> = line.trim().trim_matches('|').split_whitespace().collect();
        if t.len() >= 5 && t[1] == "MIG" && t[0].parse::<u32>().ok() == Some(gpu) {
            if let Ok(gi) = t[4].parse() {
                ids.push(gi);
            }
        }
    }
    Some(ids)
}

/// Compute slices of a profile name (`3g.71gb` → 3), for the creation order.
fn slices(profile: &str) -> u32 {
    profile.split('g').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

impl Instances {
    /// Creates one instance per job (`profiles[job]`); on failure destroys what it created.
    pub(crate) fn create(ctx: &ModeContext, profiles: &[String]) -> Result<Instances> {
        let mut inst = Instances {
            gpu: ctx.gpu_index,
            exec: ctx.exec,
            tools: ctx.tools.clone(),
            leftovers: ctx.leftovers.clone(),
            progress: ctx.progress.clone(),
            created: Vec::new(),
            destroyed: false,
        };
        let mut order: Vec<usize> = (0..profiles.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(slices(&profiles[i])));
        for i in order {
            if let Err(e) = inst.create_one(i as u32, &profiles[i]) {
                return match inst.destroy() {
                    Ok(()) => Err(e),
                    Err(d) => Err(e.context(format!("and destroying the instances created so far failed: {d:#}"))),
                };
            }
        }
        Ok(inst)
    }

    fn list(&self) -> Result<Vec<String>> {
        let out = smi(&self.tools, &["-L"]).run()?;
        if !out.success {
            bail!("`nvidia-smi -L` failed: {}", out.text());
        }
        Ok(parse_list(&out.stdout, self.gpu))
    }

    fn create_one(&mut self, job: u32, profile: &str) -> Result<()> {
        if !self.exec {
            let gi = 1 + self.created.len() as u32;
            self.created.push(Created {
                job,
                profile: profile.to_string(),
                gi,
                ci: Some(0),
                uuid: format!("MIG-5e5e5e5e-0000-4000-8000-{:06}{:06}", self.gpu, gi),
            });
            return Ok(());
        }
        let before: BTreeSet<String> = self.list()?.into_iter().collect();
        let gpu = self.gpu.to_string();
        let cmd = smi(&self.tools, &["mig", "-i", &gpu, "-cgi", profile, "-C"]);
        self.progress.log(&format!("mig: {}", cmd.display()));
        let out = cmd.run()?;
        let ids = parse_created(&out.stdout);
        for &(gi, ci) in &ids {
            self.leftovers.add_mig(MigLeftover {
                gpu: self.gpu,
                gpu_instance: gi,
                compute_instance: ci,
                uuid: None,
            })?;
            self.created.push(Created { job, profile: profile.to_string(), gi, ci, uuid: String::new() });
        }
        if !out.success || ids.len() != 1 || ids[0].1.is_none() {
            bail!("`{}` did not create one GPU instance with its compute instance: {}", cmd.display(), out.text());
        }
        let after = self.list()?;
        let new: Vec<&String> = after.iter().filter(|u| !before.contains(*u)).collect();
        let [uuid] = new.as_slice() else {
            bail!(
                "after `{}`, `nvidia-smi -L` shows {} new MIG devices on GPU {} instead of one",
                cmd.display(),
                new.len(),
                self.gpu
            );
        };
        let (gi, ci) = ids[0];
        let last = self.created.last_mut().expect("just pushed");
        last.uuid = (*uuid).clone();
        self.leftovers.add_mig(MigLeftover {
            gpu: self.gpu,
            gpu_instance: gi,
            compute_instance: ci,
            uuid: Some((*uuid).clone()),
        })?;
        self.progress.log(&format!("mig: job {job}: {profile} = GPU instance {gi}, compute instance {ci:?}, {uuid}"));
        Ok(())
    }

    /// Instances in job order, for `meta.json`.
    pub(crate) fn by_job(&self) -> Vec<MigInstance> {
        let mut v: Vec<MigInstance> = self
            .created
            .iter()
            .map(|c| MigInstance {
                job: c.job,
                profile: c.profile.clone(),
                gpu_instance_id: c.gi,
                compute_instance_id: c.ci.unwrap_or(0),
                device_uuid: c.uuid.clone(),
            })
            .collect();
        v.sort_by_key(|m| m.job);
        v
    }

    pub(crate) fn all_destroyed(&self) -> bool {
        self.destroyed
    }

    /// Destroys the instances created (idempotent); checks that they are gone.
    pub(crate) fn destroy(&mut self) -> Result<()> {
        if self.destroyed {
            return Ok(());
        }
        if !self.exec {
            self.destroyed = true;
            return Ok(());
        }
        let mut problems = Vec::new();
        for c in self.created.iter().rev() {
            if let Some(ci) = c.ci {
                if let Err(e) = destroy_step(&self.tools, &self.progress, self.gpu, c.gi, Some(ci)) {
                    problems.push(format!("{e:#}"));
                }
            }
            if let Err(e) = destroy_step(&self.tools, &self.progress, self.gpu, c.gi, None) {
                problems.push(format!("{e:#}"));
            }
        }
        let remaining = gpu_instances(&self.tools, self.gpu)?;
        let ours: Vec<u32> = self.created.iter().map(|c| c.gi).filter(|gi| remaining.contains(gi)).collect();
        if !ours.is_empty() {
            return Err(anyhow!(
                "MIG GPU instances {ours:?} created by this run still exist on GPU {}{}",
                self.gpu,
                if problems.is_empty() { String::new() } else { format!(": {}", problems.join("; ")) }
            ));
        }
        for c in &self.created {
            self.leftovers.remove_mig(self.gpu, c.gi)?;
        }
        self.destroyed = true;
        Ok(())
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        if let Err(e) = self.destroy() {
            eprintln!("colloc-runner: {e:#}");
        }
    }
}

/// The GPU-instance ids on a GPU, from `nvidia-smi mig -i N -lgi`.
pub(crate) fn gpu_instances(tools: &Tools, gpu: u32) -> Result<Vec<u32>> {
    let g = gpu.to_string();
    let out = smi(tools, &["mig", "-i", &g, "-lgi"]).run()?;
    parse_lgi(&out.text(), gpu).ok_or_else(|| anyhow!("`nvidia-smi mig -i {gpu} -lgi` gave no listing: {}", out.text()))
}

/// Destroys one compute instance (`ci` given) or GPU instance, retrying while in use.
pub(crate) fn destroy_step(tools: &Tools, progress: &Progress, gpu: u32, gi: u32, ci: Option<u32>) -> Result<()> {
    let (g, gis) = (gpu.to_string(), gi.to_string());
    let cis = ci.map(|c| c.to_string());
    let args: Vec<&str> = match &cis {
        Some(c) => vec!["mig", "-i", &g, "-dci", "-gi", &gis, "-ci", c],
        None => vec!["mig", "-i", &g, "-dgi", "-gi", &gis],
    };
    let cmd = smi(tools, &args);
    let mut last: Option<Output> = None;
    for attempt in 0..=tools.busy_retries {
        if attempt > 0 {
            std::thread::sleep(tools.busy_retry_delay);
        }
        progress.log(&format!("mig: {}", cmd.display()));
        let out = cmd.run()?;
        if out.success {
            return Ok(());
        }
        let busy = out.text().to_ascii_lowercase().contains("in use");
        last = Some(out);
        if !busy {
            break;
        }
    }
    let text = last.map(|o| o.text()).unwrap_or_default();
    bail!("`{}` failed: {text}", cmd.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nvidia_smi_output() {
        let created = "Successfully created GPU instance ID  2 on GPU  0 using profile MIG 4g.40gb (ID  5)\n\
                       Successfully created compute instance ID  0 on GPU  0 GPU instance ID  2 using profile MIG 4g.40gb (ID  3)\n";
        assert_eq!(parse_created(created), vec![(2, Some(0))]);
        let list = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ddb16622-80d1-5e78-5bf7-a0ecfd723d0a)\n  \
                    MIG 4g.40gb     Device  0: (UUID: MIG-fca28630-a1bd-5e73-9206-ccd17a013f5f)\n\
                    GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-4ce12868-fd2c-46a5-1451-877de5670d53)\n  \
                    MIG 1g.10gb     Device  0: (UUID: MIG-aaaaaaaa-a1bd-5e73-9206-ccd17a013f5f)\n";
        assert_eq!(parse_list(list, 0), vec!["MIG-fca28630-a1bd-5e73-9206-ccd17a013f5f".to_string()]);
        assert_eq!(parse_list(list, 1).len(), 1);
        let lgi = "+-------------------------------------------------------+\n\
                   | GPU instances:                                        |\n\
                   | GPU   Name             Profile  Instance   Placement  |\n\
                   |                          ID       ID       Start:Size |\n\
                   |=======================================================|\n\
                   |   0  MIG 1g.5gb          19        7          0:1     |\n\
                   |   1  MIG 3g.20gb          9        2          4:4     |\n\
                   +-------------------------------------------------------+\n";
        assert_eq!(parse_lgi(lgi, 0), Some(vec![7]));
        assert_eq!(parse_lgi(lgi, 1), Some(vec![2]));
        assert_eq!(parse_lgi("No GPU instances found: Not Found", 0), Some(vec![]));
        assert_eq!(parse_lgi("Insufficient Permissions", 0), None);
        assert_eq!(slices("7g.141gb"), 7);
    }
}
