//! One version per campaign: the software a run was made with (source commit, runner binary
//! and version, the training program's files, the Python packages) against this
//! invocation's, and the host's Python environment against the training program's lock.

use anyhow::{bail, Result};
use colloc_plan::Plan;
use colloc_trace::manifest;
use colloc_trace::meta::{EnvironmentCheck, SoftwareInfo};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use super::select::ListedMetas;
use crate::options::RunOptions;
use crate::progress::Progress;
use crate::provenance;

/// The software of this invocation (its Python environment is checked apart, only when
/// there are runs to make).
pub(crate) fn software(plan: &Plan, opts: &RunOptions) -> SoftwareInfo {
    let (git_commit, git_dirty) = match &opts.source_commit {
        Some((c, d)) => (Some(c.clone()), *d),
        None => std::env::current_dir()
            .ok()
            .and_then(|d| provenance::find_checkout(&d))
            .or_else(|| provenance::find_checkout(&opts.out))
            .or_else(|| std::env::current_exe().ok().and_then(|e| provenance::find_checkout(&e)))
            .map(|root| provenance::git_state(&root))
            .unwrap_or((None, None)),
    };
    SoftwareInfo {
        runner_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit,
        git_dirty,
        plan_hash: manifest::sha256_bytes(&serde_json::to_vec(plan).expect("plans serialise")),
        spec_hash: Some(plan.spec_hash.clone()),
        runner_sha256: std::env::current_exe().ok().and_then(|e| fs::read(e).ok()).map(|b| manifest::sha256_bytes(&b)),
        workload_files: provenance::workload_files(&opts.job_command),
        environment: None,
    }
}

/// What differs between the software that made a run (`then`) and this invocation's
/// (`now`): the source commit; with no commit or uncommitted changes on either side, the
/// runner binary; the runner's version; each file of the training program.
fn version_differences(then: &SoftwareInfo, now: &SoftwareInfo) -> Vec<String> {
    let mut out = Vec::new();
    let show = |c: &Option<String>| c.as_deref().map_or("unknown".to_string(), |c| c.chars().take(12).collect());
    if then.git_commit != now.git_commit {
        out.push(format!("source commit {} vs {} now", show(&then.git_commit), show(&now.git_commit)));
    } else if (then.git_commit.is_none() || then.git_dirty != Some(false) || now.git_dirty != Some(false))
        && then.runner_sha256 != now.runner_sha256
    {
        out.push(format!(
            "runner binary {} vs {} now (the commit alone does not identify it: uncommitted changes or none recorded)",
            show(&then.runner_sha256),
            show(&now.runner_sha256)
        ));
    }
    if then.runner_version != now.runner_version {
        out.push(format!("runner version {} vs {} now", then.runner_version, now.runner_version));
    }
    if then.workload_files.is_empty() && !now.workload_files.is_empty() {
        out.push("the training program's files were not recorded then".to_string());
    } else {
        let names: BTreeSet<&String> = then.workload_files.keys().chain(now.workload_files.keys()).collect();
        for name in names {
            match (then.workload_files.get(name), now.workload_files.get(name)) {
                (Some(a), Some(b)) if a != b => out.push(format!("{name} differs")),
                (Some(_), None) => out.push(format!("{name} is gone")),
                (None, Some(_)) => out.push(format!("{name} is new")),
                _ => {}
            }
        }
    }
    if let (Some(a), Some(b)) = (&then.environment, &now.environment) {
        let names: BTreeSet<&String> = a.here.keys().chain(b.here.keys()).collect();
        let show = |v: Option<&Option<String>>| match v {
            Some(Some(v)) => v.clone(),
            Some(None) => "not installed".to_string(),
            None => "not checked".to_string(),
        };
        for name in names {
            let (x, y) = (a.here.get(name), b.here.get(name));
            if x != y {
                out.push(format!("Python package {name} {} then, {} now", show(x), show(y)));
            }
        }
    }
    out
}

/// Says how the host's Python environment compares with the training program's lock, before
/// any GPU time is spent; with `strict`, a difference, a failed check or no lock at all
/// stops the invocation.
pub(crate) fn check_environment(env: Option<&EnvironmentCheck>, strict: bool, progress: &Progress) -> Result<()> {
    let problem = match env {
        None => Some("the training program has no environment check (envcheck.py beside its script)".to_string()),
        Some(EnvironmentCheck { lock, error: Some(why), .. }) => Some(format!("cannot check it against {lock}: {why}")),
        Some(EnvironmentCheck { lock, differs, .. }) if !differs.is_empty() => {
            Some(format!("it differs from {lock}:\n  {}", differs.join("\n  ")))
        }
        Some(EnvironmentCheck { lock, here, .. }) => {
            let versions: Vec<String> =
                here.iter().map(|(k, v)| format!("{k} {}", v.as_deref().unwrap_or("not installed"))).collect();
            progress.log(&format!("Python environment: as {lock} locks it ({})", versions.join(", ")));
            None
        }
    };
    match problem {
        Some(p) if strict => bail!("Python environment: {p}\n--strict-env refuses to run on it"),
        Some(p) if env.is_some() => {
            progress.log(&format!(
                "warning: Python environment: {p}\n(recorded in each run's meta.json; --strict-env refuses)"
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Refuses to add runs to a campaign made by another version of the runner or the training
/// program (unless `allow`, which only warns), naming what differs and for how many runs.
pub(crate) fn check_versions(
    dir: &Path,
    listed: usize,
    metas: &ListedMetas,
    now: &SoftwareInfo,
    allow: bool,
    progress: &Progress,
) -> Result<()> {
    let mut differing: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for meta in metas.read.values() {
        let diff = version_differences(&meta.software, now);
        if !diff.is_empty() {
            *differing.entry(diff).or_insert(0) += 1;
        }
    }
    if let Some(why) = metas.unreadable.values().next() {
        let what = format!("its meta.json is not this runner's ({why})");
        differing.insert(vec![what], metas.unreadable.len());
    }
    if differing.is_empty() {
        return Ok(());
    }
    let n: usize = differing.values().sum();
    let what: Vec<String> = differing.iter().map(|(d, k)| format!("  {k} run(s): {}", d.join("; "))).collect();
    let text = format!(
        "{} holds {n} of {} run(s) made by another version of the runner or the training program:\n{}",
        dir.display(),
        listed,
        what.join("\n")
    );
    if allow {
        progress.log(&format!("warning: {text}\nadding runs anyway (--allow-mixed-versions)"));
        return Ok(());
    }
    bail!("{text}\nA campaign is made by one version: run into a new directory, or pass --allow-mixed-versions to add runs anyway");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sw(commit: Option<&str>, dirty: Option<bool>, binary: &str, files: &[(&str, &str)]) -> SoftwareInfo {
        SoftwareInfo {
            runner_version: "0.1.0".into(),
            git_commit: commit.map(str::to_string),
            git_dirty: dirty,
            plan_hash: String::new(),
            spec_hash: None,
            runner_sha256: Some(binary.into()),
            workload_files: files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            environment: None,
        }
    }

    #[test]
    fn version_differences_name_what_differs() {
        let files = [("workloads/train.py", "1"), ("workloads/events.py", "2")];
        let a = sw(Some("abc"), Some(false), "x", &files);
        assert!(version_differences(&a, &a).is_empty());
        // A clean commit identifies the version: another binary of it is the same version.
        assert!(version_differences(&a, &sw(Some("abc"), Some(false), "y", &files)).is_empty());
        let d = version_differences(&a, &sw(Some("abd"), Some(false), "x", &files));
        assert_eq!(d, ["source commit abc vs abd now"]);
        // With uncommitted changes the binary counts.
        let d =
            version_differences(&sw(Some("abc"), Some(true), "x", &files), &sw(Some("abc"), Some(true), "y", &files));
        assert!(d.len() == 1 && d[0].starts_with("runner binary x vs y now"), "{d:?}");
        let d = version_differences(
            &a,
            &sw(Some("abc"), Some(false), "x", &[("workloads/train.py", "9"), ("workloads/new.py", "3")]),
        );
        assert_eq!(d, ["workloads/events.py is gone", "workloads/new.py is new", "workloads/train.py differs"]);
        let d = version_differences(&sw(Some("abc"), Some(false), "x", &[]), &a);
        assert_eq!(d, ["the training program's files were not recorded then"]);
        // The Python packages, where both invocations checked them.
        let env = |torch: Option<&str>| EnvironmentCheck {
            lock: "workloads/environment.lock".into(),
            here: [("timm".to_string(), Some("1.0".to_string())), ("torch".to_string(), torch.map(str::to_string))]
                .into(),
            ..Default::default()
        };
        let (mut then, mut now) = (a.clone(), a.clone());
        then.environment = Some(env(Some("2.11")));
        now.environment = Some(env(None));
        assert_eq!(version_differences(&then, &now), ["Python package torch 2.11 then, not installed now"]);
        now.environment = Some(env(Some("2.11")));
        assert!(version_differences(&then, &now).is_empty());
        now.environment = None;
        assert!(version_differences(&then, &now).is_empty(), "an unchecked side compares nothing");
    }

    #[test]
    fn strict_env_refuses_a_difference_a_failed_check_and_no_check() {
        let quiet = Progress::new(crate::options::ProgressMode::Quiet, 0, 0.0);
        let matching = EnvironmentCheck {
            lock: "w/environment.lock".into(),
            here: [("torch".to_string(), Some("2.11".to_string()))].into(),
            ..Default::default()
        };
        let differing = EnvironmentCheck { differs: vec!["torch: 2.10 here, 2.11 locked".into()], ..matching.clone() };
        let failed = EnvironmentCheck { error: Some("no python3".into()), ..matching.clone() };
        for strict in [false, true] {
            assert!(check_environment(Some(&matching), strict, &quiet).is_ok());
        }
        for (env, says) in [
            (Some(&differing), "it differs from w/environment.lock:\n  torch: 2.10 here, 2.11 locked"),
            (Some(&failed), "cannot check it against w/environment.lock: no python3"),
            (None, "the training program has no environment check"),
        ] {
            assert!(check_environment(env, false, &quiet).is_ok());
            let e = check_environment(env, true, &quiet).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--strict-env refuses"), "{e}");
        }
    }

    /// A listed run whose `meta.json` is there but is not this runner's (it does not parse)
    /// counts as made by another version: refused, naming the file and why, unless allowed.
    #[test]
    fn a_listed_run_whose_meta_does_not_parse_is_refused_as_another_version() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join(colloc_trace::layout::RUNS_DIR).join("wl-a.r1");
        fs::create_dir_all(&run).unwrap();
        fs::write(run.join(colloc_trace::layout::META), b"{\"status\": \"ok\"}").unwrap();
        let listed: BTreeSet<String> = ["wl-a.r1".to_string(), "wl-b.r1".to_string()].into();
        let metas = super::super::select::listed_metas(d.path(), &listed);
        assert!(metas.read.is_empty());
        assert_eq!(metas.unreadable.len(), 2, "{:?}", metas.unreadable);
        assert!(metas.unreadable["wl-b.r1"].starts_with("cannot read "), "{:?}", metas.unreadable);
        let quiet = Progress::new(crate::options::ProgressMode::Quiet, 0, 0.0);
        let now = sw(Some("abc"), Some(false), "x", &[]);
        let e = check_versions(d.path(), 2, &metas, &now, false, &quiet).unwrap_err().to_string();
        assert!(e.contains("2 of 2 run(s)") && e.contains("is not this runner's"), "{e}");
        assert!(e.contains("wl-a.r1") && e.contains("meta.json"), "names the file: {e}");
        check_versions(d.path(), 2, &metas, &now, true, &quiet).unwrap();
    }
}
