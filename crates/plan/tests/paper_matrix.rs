//! The YAML under `experiments/` expands to exactly the authors' matrix
//! (`tests/fixtures/collocation_experiment.csv`), workload for workload.

use std::path::{Path, PathBuf};

use colloc_plan::{plan_all, plan_campaign, plan_project_campaign, Plan, WorkloadForm};
use colloc_spec::{load_gpus, resolve_spec, Project};
use colloc_trace::Mode;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn csv() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/collocation_experiment.csv"))
        .unwrap()
}

/// (experiment, mode, jobs as (model, dataset, batch, MIG profile)) per CSV workload, in file order.
type Expected = Vec<(u32, Mode, Vec<(String, String, u32, Option<String>)>)>;

fn csv_workloads() -> Expected {
    let text = csv();
    let mut out: Expected = Vec::new();
    let mut last = None;
    for line in text.lines().skip(1) {
        let c: Vec<&str> = line.split(',').collect();
        let (e, w): (u32, u32) = (c[0].parse().unwrap(), c[1].parse().unwrap());
        let p: Vec<&str> = c[8].split_whitespace().collect();
        let arg = |f: &str| p[p.iter().position(|x| *x == f).unwrap() + 1].to_string();
        let dataset = match arg("--data-dir").trim_end_matches('/').rsplit('/').next().unwrap() {
            "cifar10" => "cifar10",
            "imagenet64_images" => "imagenet64",
            "imagenet" => "imagenet",
            d => panic!("unknown data dir {d}"),
        };
        let mig = (!matches!(c[5], "-" | "MPS")).then(|| c[5].to_string());
        let job = (arg("--model"), dataset.to_string(), arg("--batch-size").parse().unwrap(), mig);
        let mode = match c[5] {
            "-" => Mode::Naive,
            "MPS" => Mode::Mps,
            _ => Mode::Mig,
        };
        if last == Some((e, w)) {
            out.last_mut().unwrap().2.push(job);
        } else {
            out.push((e, mode, vec![job]));
            last = Some((e, w));
        }
    }
    for w in &mut out {
        if w.1 == Mode::Naive && w.2.len() == 1 {
            w.1 = Mode::Exclusive;
        }
    }
    out
}

fn plan_workloads(plan: &Plan) -> Expected {
    plan.workloads
        .iter()
        .map(|w| {
            let jobs = w
                .jobs
                .iter()
                .map(|j| (j.model.clone(), j.dataset.clone(), j.batch_size, j.mig_profile.clone()))
                .collect();
            (w.experiment, w.mode, jobs)
        })
        .collect()
}

fn sorted(mut e: Expected) -> Expected {
    for w in &mut e {
        w.2.sort();
    }
    e
}

#[test]
fn the_paper_campaign_is_the_authors_matrix() {
    let project = colloc_spec::load_project(&root()).unwrap();
    let plan = plan_project_campaign(&project, "paper", Some("a100-40gb")).unwrap();
    assert_eq!(plan.totals.workloads, 198);
    assert_eq!(plan.totals.jobs, 618);
    let expected = csv_workloads();
    assert_eq!(expected.len(), 198);
    let got = plan_workloads(&plan);
    for (i, (g, e)) in sorted(got).iter().zip(sorted(expected)).enumerate() {
        assert_eq!(g, &e, "workload {i} ({}) differs from the CSV", plan.workloads[i].id);
    }
}

#[test]
fn exactly_three_mig_mixes_are_infeasible_on_an_a100() {
    let project = colloc_spec::load_project(&root()).unwrap();
    let plan = plan_project_campaign(&project, "paper", Some("a100-40gb")).unwrap();
    let infeasible: Vec<&str> = plan.workloads.iter().filter(|w| !w.feasible).map(|w| w.id.as_str()).collect();
    assert_eq!(infeasible, ["e37-L+2M-mig", "e37-L+M+2S-mig", "e37-L+M+3S-mig"]);
    for w in plan.workloads.iter().filter(|w| !w.feasible) {
        let reason = w.reason.as_deref().unwrap();
        assert!(reason.contains("needs 8 of") || reason.contains("needs 9 of"), "{reason}");
    }
    assert_eq!(plan.totals.infeasible, 3);
}

#[test]
fn json_has_the_documented_shape() {
    let project = colloc_spec::load_project(&root()).unwrap();
    let plan = plan_project_campaign(&project, "paper", Some("a100-40gb")).unwrap();
    let v: serde_json::Value = serde_json::to_value(&plan).unwrap();
    let ws = v["workloads"].as_array().unwrap();
    assert_eq!(ws.len(), 198);
    for w in ws {
        for k in ["id", "experiment", "mode", "feasible", "reason", "jobs"] {
            assert!(w.get(k).is_some(), "workload lacks `{k}`: {w}");
        }
        for j in w["jobs"].as_array().unwrap() {
            for k in ["model", "dataset", "batch_size", "mig_profile"] {
                assert!(j.get(k).is_some(), "job lacks `{k}`");
            }
            assert_eq!(j["mig_profile"].is_null(), w["mode"] != "mig");
        }
    }
}

#[test]
fn importing_the_radt_csv_gives_the_same_plan() {
    let project = colloc_spec::load_project(&root()).unwrap();
    let yaml = colloc_spec::radt::import(Path::new("collocation_experiment.csv"), &csv(), &project.spec).unwrap();
    // The imported experiments replace ours; the catalog and protocols stay.
    let mut files: Vec<_> =
        project.spec.files.iter().filter(|(p, _)| !p.to_string_lossy().contains("exp3")).cloned().collect();
    files.push((PathBuf::from("imported.yaml"), yaml));
    let spec = resolve_spec(files).unwrap_or_else(|d| panic!("{d}"));
    let imported = Project { spec, gpus: load_gpus(&root()).unwrap(), ..project.clone() };
    let ours = plan_all(&project, "a100-40gb", "paper").unwrap();
    let theirs = plan_all(&imported, "a100-40gb", "paper").unwrap();
    assert_eq!(ours.workloads.len(), theirs.workloads.len());
    for (a, b) in ours.workloads.iter().zip(&theirs.workloads) {
        assert_eq!(
            (a.experiment, a.mode, a.feasible, &a.reason, &a.jobs),
            (b.experiment, b.mode, b.feasible, &b.reason, &b.jobs),
            "{} vs {}",
            a.id,
            b.id
        );
        assert!(b.radt.is_some());
    }
    assert_eq!(ours.totals, theirs.totals);
}

#[test]
fn the_stand_in_caps_come_from_the_h200_profiles() {
    let project = colloc_spec::load_project(&root()).unwrap();
    let plan = plan_project_campaign(&project, "h200-quick", None).unwrap();
    let w = plan.workloads.iter().find(|w| w.id == "e33-resnet26-cifar10-x7-mpslim1g@syn").unwrap();
    assert_eq!(w.mode, Mode::MpsLimited);
    let l = w.jobs[0].mps_limits.as_ref().unwrap();
    assert_eq!((l.active_thread_percentage, l.pinned_mem_limit_mib, l.stands_in_for.as_str()), (12, 16384, "1g.18gb"));
    // Only feasible MIG layouts get a stand-in; MIG itself stays planned (to be skipped).
    assert!(plan.workloads.iter().any(|w| w.id == "e37-L+2M-mig@syn" && !w.feasible));
    assert!(!plan.workloads.iter().any(|w| w.id == "e37-L+2M-mpslim@syn"));
    let headline: Vec<_> = plan.workloads.iter().filter(|w| w.headline).collect();
    assert!(headline.iter().all(|w| w.repetitions == 3 && w.jobs.iter().all(|j| j.model == "resnet26")));
    // The headline is restricted to synthetic data: its generated-data copies run twice
    // (their part's repetitions).
    assert_eq!(headline.len(), 18);
    assert!(headline.iter().all(|w| w.data == "synthetic"));
    let generated: Vec<_> = plan.workloads.iter().filter(|w| w.id.ends_with("@gen")).collect();
    assert_eq!(generated.len(), 13);
    assert!(generated
        .iter()
        .all(|w| w.repetitions == 2 && !w.headline && w.jobs[0].data.source == colloc_plan::DataSource::Generated));
}

#[test]
fn a_profile_the_target_gpu_lacks_is_an_error_with_its_place() {
    let root = root();
    let extra = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/specs/a100_profile.yaml");
    let project = colloc_spec::load_project_with(&root, &[extra]).unwrap_or_else(|d| panic!("{d}"));
    let err = plan_all(&project, "h200-141gb", "quick").unwrap_err();
    let d = err.0.iter().find(|d| d.file.ends_with("a100_profile.yaml")).unwrap_or_else(|| panic!("{err}"));
    assert_eq!((d.line, d.column), (9, 37));
    assert!(d.message.contains("`1g.5gb` does not exist on the NVIDIA H200 141GB"), "{}", d.message);
    // On the A100 it is fine.
    plan_all(&project, "a100-40gb", "paper").unwrap();
}

#[test]
fn the_plan_carries_forms_roles_and_mig_slices() {
    let plan = plan_campaign(&root(), "h200-quick", None).unwrap();
    let project = colloc_spec::load_project(&root()).unwrap();
    // Mixes: their form holds the declared position and classes, in every mode.
    let declared: Vec<String> = {
        let text = std::fs::read_to_string(root().join("experiments/exp37.yaml")).unwrap();
        let line = text.lines().find(|l| l.trim_start().starts_with("mixes: [")).unwrap();
        line.split_once('[').unwrap().1.trim_end_matches(']').split(',').map(|m| m.trim().to_string()).collect()
    };
    let mut mixes = 0;
    for w in &plan.workloads {
        match &w.form {
            WorkloadForm::Mix { position, classes } => {
                mixes += 1;
                assert_eq!(declared[*position as usize], w.label, "{}", w.id);
                let jobs: u32 = classes.iter().map(|c| c.count).sum();
                assert_eq!(jobs as usize, w.jobs.len(), "{}", w.id);
                for c in classes {
                    assert_eq!(w.jobs.iter().filter(|j| j.model == c.model).count() as u32, c.count, "{}", w.id);
                }
            }
            WorkloadForm::Single => assert_eq!(w.jobs.len(), 1, "{}", w.id),
            WorkloadForm::Homogeneous => assert!(w.jobs.len() > 1 && w.jobs.iter().all(|j| j.model == w.jobs[0].model)),
            WorkloadForm::Listed => panic!("{} is not listed job by job", w.id),
        }
        // The timeline role: exactly the 7 × resnet26 workloads of exp 33.
        let seven_small = w.experiment == 33 && w.jobs.len() == 7 && w.jobs.iter().all(|j| j.model == "resnet26");
        assert_eq!(w.timeline, seven_small, "{}", w.id);
        // MIG slices come from the GPU table, in mig and mps-limited modes only.
        for j in &w.jobs {
            match (&j.mig_slice, w.mode.uses_mig_profiles()) {
                (Some(s), true) => {
                    let p = project.gpus["h200-141gb"].profile(&s.profile).unwrap();
                    assert_eq!((s.sms, s.compute_slices), (p.sms, p.compute_slices));
                    assert_eq!(s.memory_bytes, (p.memory_gib * 1024.0 * 1024.0 * 1024.0).round() as u64);
                }
                (None, false) => {}
                (s, _) => panic!("{}: mig_slice {s:?} in mode {}", w.id, w.mode),
            }
        }
    }
    // 14 mixes in naive, mps and mig; a stand-in for the 11 MIG layouts that can be placed.
    assert_eq!(mixes, 14 * 3 + 11);
    assert_eq!(plan.gpu.images_per_second, project.gpus["h200-141gb"].estimate_images_per_second);
}
