//! How a campaign's parts shape its plan: repetitions per part, and their errors.

use colloc_plan::plan_project_campaign;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A copy of the project's spec with `artifact.yaml` edited by `edit`.
fn project_with(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, colloc_spec::Project) {
    let (d, p) = load_with(edit);
    (d, p.unwrap_or_else(|e| panic!("{e}")))
}

/// As [`project_with`], the loading's diagnostics kept.
fn load_with(
    edit: impl Fn(&str) -> String,
) -> (tempfile::TempDir, Result<colloc_spec::Project, colloc_spec::Diagnostics>) {
    let d = tempfile::tempdir().unwrap();
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    };
    copy(&root().join("experiments"), &d.path().join("experiments"));
    copy(&root().join("experiments/gpus"), &d.path().join("experiments/gpus"));
    let text = std::fs::read_to_string(root().join("artifact.yaml")).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(d.path().join("artifact.yaml"), edited).unwrap();
    let p = colloc_spec::load_project(d.path());
    (d, p)
}

/// The generated-data part of `h200-quick`, up to its repetitions.
const GENERATED_PART: &str = "        data: generated\n        mig_stand_in: true\n        repetitions: 2\n";

fn with_repetitions(n: &str) -> String {
    GENERATED_PART.replace("repetitions: 2", &format!("repetitions: {n}"))
}

#[test]
fn a_part_sets_the_repetitions_of_its_workloads_and_the_headline_its_own() {
    let (_d, p) = project_with(|t| t.replacen(GENERATED_PART, &with_repetitions("4"), 1));
    let plan = plan_project_campaign(&p, "h200-quick", None).unwrap();
    for w in &plan.workloads {
        let expected = if w.id.ends_with("@gen") {
            4
        } else if w.headline {
            3
        } else {
            1
        };
        assert_eq!(w.repetitions, expected, "{}", w.id);
    }
}

#[test]
fn zero_repetitions_is_an_error_at_its_place() {
    let (_d, p) = project_with(|t| t.replacen(GENERATED_PART, &with_repetitions("0"), 1));
    let text = &p.artifact_file.1;
    let line = text.lines().position(|l| l.trim() == "repetitions: 0").unwrap() + 1;
    let err = plan_project_campaign(&p, "h200-quick", None).unwrap_err();
    let d = err.0.iter().find(|d| d.message.contains("`repetitions` must be at least 1")).expect("the error");
    assert_eq!(d.line, line as u64, "{err}");
    assert!(d.file.ends_with("artifact.yaml"), "{err}");
}

/// `h200-epochs`: every workload under the campaign's `quick` and again under the part's
/// `epochs` protocol, the latter's ids ending in `~epochs` and carrying that protocol; both
/// on the whole generated set; each normalised by the baseline of its own protocol.
#[test]
fn a_part_runs_its_workloads_under_its_own_protocol_with_suffixed_ids() {
    let p = colloc_spec::load_project(&root()).unwrap();
    let plan = plan_project_campaign(&p, "h200-epochs", None).unwrap();
    assert_eq!(plan.protocol.name, "quick");
    let (epochs, quick): (Vec<_>, Vec<_>) = plan.workloads.iter().partition(|w| w.id.ends_with("~epochs"));
    assert_eq!(epochs.len(), 13, "{:?}", epochs.iter().map(|w| &w.id).collect::<Vec<_>>());
    assert_eq!(quick.len(), epochs.len());
    for w in &epochs {
        let own = w.protocol.as_ref().expect("an epochs workload carries its protocol");
        assert_eq!(own.name, "epochs");
        assert!(matches!(own.kind, colloc_plan::ProtocolKind::Epochs { epochs: 2, .. }), "{own:?}");
        assert_eq!(plan.protocol_of(w), own);
        assert_eq!(colloc_trace::ids::protocol_of_id(&w.id), Some("epochs"));
        let twin = w.id.strip_suffix("~epochs").unwrap();
        let q = quick.iter().find(|q| q.id == twin).unwrap_or_else(|| panic!("no quick twin of {}", w.id));
        assert_eq!((q.mode, q.jobs.len(), q.protocol.as_ref()), (w.mode, w.jobs.len(), None));
        assert_eq!(plan.protocol_of(q).name, "quick");
        assert_eq!(q.repetitions, 2, "{}", q.id);
        assert_eq!(w.repetitions, 1, "{}", w.id);
        for j in q.jobs.iter().chain(&w.jobs) {
            assert_eq!((j.data.fraction, j.data.train_count, j.data.val_count), (1.0, 50_000, 10_000), "{}", w.id);
            assert_eq!(j.data.path.as_deref(), Some(".cache/datasets/cifar10"));
            assert_eq!(j.training.workers, 4);
        }
        let run_id = colloc_trace::ids::run_id(&w.id, 1, 2);
        assert_eq!(colloc_trace::ids::parse_run_id(&run_id), Some((w.id.as_str(), 1, 2)));
        let b = plan.baseline_of(w, 0).expect("a baseline");
        assert_eq!(b.id, "e33-resnet26-cifar10-x1-exclusive@gen~epochs", "{}", w.id);
        assert_eq!(plan.baseline_of(q, 0).unwrap().id, "e33-resnet26-cifar10-x1-exclusive@gen");
        assert!(w.estimated_seconds > q.estimated_seconds, "{}", w.id);
    }
    // Campaigns without a part protocol: no workload carries one, and the JSON is as before.
    let shipped = plan_project_campaign(&p, "h200-quick", None).unwrap();
    assert!(shipped.workloads.iter().all(|w| w.protocol.is_none() && !w.id.contains('~')));
    let json = serde_json::to_value(&shipped).unwrap();
    assert!(json["workloads"].as_array().unwrap().iter().all(|w| w.get("protocol").is_none()));
    // The quick protocol's 5 % cut applies where no part says otherwise.
    let gen = shipped.workloads.iter().find(|w| w.id.ends_with("@gen")).unwrap();
    assert_eq!(gen.jobs[0].data.fraction, 0.05);
}

/// The part that names its own protocol in `h200-epochs`.
const EPOCHS_PART: &str = "        protocol: epochs\n";

/// Loading artifact.yaml edited by `edit` fails with a diagnostic containing `message` that
/// points at the one line holding `text`.
fn error_at(edit: impl Fn(&str) -> String, text: &str, message: &str) {
    let edited = edit(&std::fs::read_to_string(root().join("artifact.yaml")).unwrap());
    let line = edited.lines().position(|l| l.trim() == text).expect("the edited line") + 1;
    let (_d, loaded) = load_with(edit);
    let Err(err) = loaded else { panic!("the edited project loads") };
    let diag = err.0.iter().find(|d| d.message.contains(message)).unwrap_or_else(|| panic!("no `{message}` in {err}"));
    assert_eq!(diag.line, line as u64, "{err}");
    assert!(diag.file.ends_with("artifact.yaml"), "{err}");
}

#[test]
fn an_unknown_part_protocol_is_an_error_at_its_place() {
    error_at(
        |t| t.replacen(EPOCHS_PART, "        protocol: epoch9\n", 1),
        "protocol: epoch9",
        "unknown protocol `epoch9` for a part; expected one of: epochs, paper, quick",
    );
}

#[test]
fn a_part_data_fraction_out_of_range_is_an_error_at_its_place() {
    for bad in ["0.0", "1.5", "-0.2"] {
        error_at(
            |t| t.replacen("        data_fraction: 1.0\n", &format!("        data_fraction: {bad}\n"), 1),
            &format!("data_fraction: {bad}"),
            "`data_fraction` must be in (0, 1]",
        );
    }
}

#[test]
fn a_part_naming_the_campaign_protocol_changes_nothing() {
    let (_d, p) = project_with(|t| t.replacen(EPOCHS_PART, "        protocol: quick\n", 1));
    let err = plan_project_campaign(&p, "h200-epochs", None).unwrap_err();
    // The two parts now select the same workloads under the same protocol.
    assert!(err.0.iter().any(|d| d.message.contains("is selected by two parts")), "{err}");
}

/// In plan order each `~epochs` workload comes right after its `quick` twin (the parts list
/// every quick workload first), and the quick ones keep their parts' order.
#[test]
fn a_workload_under_its_parts_own_protocol_follows_its_twin() {
    let p = colloc_spec::load_project(&root()).unwrap();
    let plan = plan_project_campaign(&p, "h200-epochs", None).unwrap();
    let ids: Vec<&str> = plan.workloads.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(ids.len(), 26);
    for pair in ids.chunks(2) {
        assert_eq!(format!("{}~epochs", pair[0]), pair[1], "{ids:?}");
    }
    assert_eq!(ids[0], "e33-resnet26-cifar10-x1-exclusive@gen", "{ids:?}");
    // A campaign without parts of their own protocol keeps its parts' order.
    let quick = plan_project_campaign(&p, "h200", None).unwrap();
    assert!(quick.workloads.iter().all(|w| w.protocol.is_none()));
    assert_eq!(quick.workloads[0].id, "e33-resnet26-cifar10-x1-exclusive@syn");
}

/// The whole-paper campaign: the CIFAR-10-like set whole and the ImageNet-like sets at the
/// protocol's share (`dataset_fractions`), its representative workloads repeated
/// (`repeat`), and its runs alone held by the host's CPU interleaved (`interleaved_baselines`),
/// their runs counted in the estimate.
#[test]
fn dataset_fractions_repeat_and_interleaved_baselines_shape_the_plan() {
    let plan = colloc_plan::plan_campaign(&root(), "h200-paper", None).unwrap();
    let get = |id: &str| plan.workloads.iter().find(|w| w.id == id).unwrap_or_else(|| panic!("no {id}"));
    assert_eq!(get("e33-resnet26-cifar10-x7-naive@gen").jobs[0].data.fraction, 1.0);
    assert_eq!(get("e33-resnet50-imagenet64-x7-naive@gen").jobs[0].data.fraction, 0.05);
    // A mix reads each of its datasets at that dataset's share.
    let mix = get("e37-L+M+S-mps@gen");
    let fractions: Vec<(&str, f64)> = mix.jobs.iter().map(|j| (j.dataset.as_str(), j.data.fraction)).collect();
    assert!(fractions.contains(&("cifar10", 1.0)) && fractions.contains(&("imagenet", 0.05)), "{fractions:?}");
    assert_eq!(mix.repetitions, 3);
    assert_eq!(get("e37-L+M+S-mps@syn").repetitions, 1);
    assert_eq!(get("e35-cait_xxs24_224-cifar10-x7-mps@gen").repetitions, 3);
    assert_eq!(get("e35-cait_xxs24_224-cifar10-x3-mps@gen").repetitions, 1);
    // The headline three times on files, once on synthetic data (the cut that keeps the
    // campaign within its GPU time).
    assert_eq!(get("e33-resnet26-cifar10-x7-mps@gen").repetitions, 3);
    assert_eq!(get("e33-resnet26-cifar10-x7-mps@syn").repetitions, 1);
    // Interleaved: every model alone on files, and resnet152 at batch 32 on any data.
    assert!(get("e33-resnet26-cifar10-x1-exclusive@gen").interleaved);
    assert!(!get("e33-resnet26-cifar10-x1-exclusive@syn").interleaved);
    assert!(get("e34-resnet152-imagenet-x1-exclusive@syn").interleaved);
    assert!(!get("e33-resnet152-imagenet-x1-exclusive@syn").interleaved);
    let i = plan.interleave.expect("the campaign interleaves");
    assert_eq!((i.between, i.runs_per_invocation), (3, 3));
    let t = &plan.totals;
    assert!(t.interleaved_runs > 50 && t.interleaved_seconds > 0.0, "{t:?}");
    let planned: f64 = plan.workloads.iter().map(|w| w.estimated_seconds * w.repetitions as f64).sum();
    assert!((t.estimated_gpu_seconds - planned - t.interleaved_seconds).abs() < 1e-6);
}

#[test]
fn a_repeat_pattern_that_selects_nothing_is_an_error_at_its_place() {
    let (_d, project) = project_with(|a| {
        a.replace("          - e37-L+M+S-mps@gen\n", "          - e37-L+M+S-mps@gen\n          - e99-nothing-*\n")
    });
    let err = plan_project_campaign(&project, "h200-paper", None).unwrap_err().to_string();
    assert!(err.contains("`e99-nothing-*` selects no workload of campaign `h200-paper`"), "{err}");
    assert!(err.contains("artifact.yaml:"), "{err}");
}
