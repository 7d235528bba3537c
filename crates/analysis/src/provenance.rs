//! Where the traces came from: GPU, driver, host, software, dates, manifest hash.

use colloc_trace::manifest;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::model::Provenance;
use colloc_trace::meta::RunMeta;
use colloc_trace::protocol::{ProtocolKind, RunProtocol};

/// From the campaign's manifest and its runs' `meta.json`s.
pub(crate) fn provenance<'a>(
    campaign_dir: &Path,
    campaign: &str,
    metas: impl IntoIterator<Item = &'a RunMeta>,
) -> std::io::Result<Provenance> {
    let manifest_path = campaign_dir.join(colloc_trace::layout::MANIFEST);
    let manifest_sha256 = manifest::sha256_file(&manifest_path)?;
    // Read within its cap, as its verification read it.
    let manifest_files = manifest::read(campaign_dir).map_err(std::io::Error::other)?.len();

    let mut s: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut add = |k: &'static str, v: Option<String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            s.entry(k).or_default().insert(v);
        }
    };
    let mut p = Provenance { campaign: campaign.to_string(), manifest_sha256, manifest_files, ..Default::default() };
    let mut cores = BTreeSet::new();
    let mut host_mem = BTreeSet::new();
    let mut job_software: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in metas {
        *p.runs_by_status.entry(m.status.as_str().to_string()).or_default() += 1;
        p.simulated |= m.simulated;
        if let Some(g) = &m.gpu {
            add("gpu", Some(g.name.clone()));
            add("uuid", Some(g.uuid.clone()));
            add("driver", g.driver_version.clone());
            add("cuda", g.cuda_version.clone());
            add("mig", g.mig_mode_current.map(|b| if b { "on" } else { "off" }.to_string()));
            p.gpu_memory_total_bytes = p.gpu_memory_total_bytes.max(g.memory_total_bytes);
            p.gpu_sm_count = p.gpu_sm_count.max(g.sm_count);
            if let Some(w) = g.power_limit_watts {
                p.gpu_power_limit_w = Some(p.gpu_power_limit_w.map_or(w, |o: f64| o.max(w)));
            }
        }
        add("host", m.host.hostname.clone());
        add("cpu", m.host.cpu_model.clone());
        add("kernel", m.host.kernel.clone());
        add("os", m.host.os.clone());
        cores.extend(m.host.cpu_cores);
        host_mem.extend(m.host.memory_total_bytes);
        add("runner", Some(m.software.runner_version.clone()));
        add(
            "commit",
            m.software.git_commit.clone().map(|c| match m.software.git_dirty {
                Some(true) => format!("{c} (dirty)"),
                _ => c,
            }),
        );
        add("plan", Some(m.software.plan_hash.clone()));
        add("spec", m.software.spec_hash.clone());
        add("protocol", Some(protocol_text(&m.protocol)));
        add("telemetry", Some(m.telemetry.source.clone()));
        for (col, why) in &m.telemetry.unavailable {
            p.telemetry_unavailable.entry(col.clone()).or_insert_with(|| why.clone());
        }
        for j in &m.jobs {
            if let Some(serde_json::Value::Object(v)) = &j.versions {
                for key in ["python", "torch", "timm", "cuda", "cudnn", "device"] {
                    if let Some(serde_json::Value::String(val)) = v.get(key) {
                        job_software.entry(key.to_string()).or_default().insert(val.clone());
                    }
                }
            }
        }
        if !m.started_at.is_empty() && p.first_started_at.as_ref().is_none_or(|f| m.started_at < *f) {
            p.first_started_at = Some(m.started_at.clone());
        }
        if !m.ended_at.is_empty() && p.last_ended_at.as_ref().is_none_or(|l| m.ended_at > *l) {
            p.last_ended_at = Some(m.ended_at.clone());
        }
    }
    let mut take = |k: &str| s.remove(k).map(|v| v.into_iter().collect()).unwrap_or_default();
    p.gpu_names = take("gpu");
    p.gpu_uuids = take("uuid");
    p.driver_versions = take("driver");
    p.cuda_driver_versions = take("cuda");
    p.mig_mode = take("mig");
    p.hostnames = take("host");
    p.cpu_models = take("cpu");
    p.kernels = take("kernel");
    p.oses = take("os");
    p.runner_versions = take("runner");
    p.git_commits = take("commit");
    p.plan_hashes = take("plan");
    p.spec_hashes = take("spec");
    p.protocols = take("protocol");
    p.telemetry_sources = take("telemetry");
    p.cpu_cores = cores.into_iter().collect();
    p.host_memory_total_bytes = host_mem.into_iter().collect();
    p.job_software = job_software.into_iter().map(|(k, v)| (k, v.into_iter().collect())).collect();
    Ok(p)
}

/// `quick: quick (protocol 2), one common window of at least 10 s and 50 iterations per job
/// after 15 warm-up steps`, `quick: quick, 60 s window after 50 warm-up steps` (protocol 1)
/// or `paper: paper, 5 epochs`.
fn protocol_text(p: &RunProtocol) -> String {
    let name = &p.name;
    match p.kind {
        // Plans of protocol 2 carry `min_iterations`; those of protocol 1 do not.
        ProtocolKind::Window { warmup_steps, window_seconds, min_iterations: Some(min_iterations), .. } => format!(
            "{name}: quick (protocol 2), one common window of at least {window_seconds} s and {min_iterations} iterations per job after {warmup_steps} warm-up steps"
        ),
        ProtocolKind::Window { warmup_steps, window_seconds, min_iterations: None, .. } => {
            format!("{name}: quick, {window_seconds} s window after {warmup_steps} warm-up steps")
        }
        ProtocolKind::Epochs { epochs, .. } => format!("{name}: paper, {epochs} epochs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The protocol's line for each kind of `meta.json` shipped: protocol 2 (with
    /// `min_iterations`), protocol 1 (without) and whole epochs.
    #[test]
    fn protocol_lines() {
        let line = |json: &str| protocol_text(&serde_json::from_str(json).unwrap());
        assert_eq!(
            line(r#"{"name":"quick","kind":"quick","warmup_steps":15,"window_seconds":10.0,"sample_every":10,"min_iterations":50,"timeout_seconds":300.0}"#),
            "quick: quick (protocol 2), one common window of at least 10 s and 50 iterations per job after 15 warm-up steps"
        );
        assert_eq!(
            line(
                r#"{"name":"quick","kind":"quick","warmup_steps":15,"window_seconds":12.5,"sample_every":10,"timeout_seconds":300.0}"#
            ),
            "quick: quick, 12.5 s window after 15 warm-up steps"
        );
        assert_eq!(
            line(r#"{"name":"epochs","kind":"paper","epochs":2,"sample_every":50,"timeout_seconds":7200.0}"#),
            "epochs: paper, 2 epochs"
        );
    }
}
