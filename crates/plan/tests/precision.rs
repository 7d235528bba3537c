//! A `quick` protocol with noise-adaptive stopping (`precision_target`, `max_window_seconds`):
//! carried into the plan, counted at its maximum window by the estimates and the timeout.

use colloc_plan::{plan_project_campaign, Plan, ProtocolKind};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The `h200-quick` plan of a copy of the project whose `protocols.yaml` is edited by `edit`.
fn plan_with(edit: impl Fn(&str) -> String) -> Result<Plan, String> {
    let d = tempfile::tempdir().unwrap();
    for dir in ["experiments", "experiments/gpus"] {
        std::fs::create_dir_all(d.path().join(dir)).unwrap();
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), d.path().join(dir).join(e.file_name())).unwrap();
            }
        }
    }
    std::fs::copy(root().join("artifact.yaml"), d.path().join("artifact.yaml")).unwrap();
    let path = d.path().join("experiments/protocols.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(&path, edited).unwrap();
    let p = colloc_spec::load_project(d.path()).map_err(|e| e.to_string())?;
    plan_project_campaign(&p, "h200-quick", None).map_err(|e| e.to_string())
}

const QUICK_WINDOW: &str = "    window_seconds: 10\n";

fn with_precision(target: &'static str, max_window: &'static str) -> impl Fn(&str) -> String {
    move |t| {
        t.replacen(
            QUICK_WINDOW,
            &format!("{QUICK_WINDOW}    precision_target: {target}\n    max_window_seconds: {max_window}\n"),
            1,
        )
    }
}

#[test]
fn a_precision_target_reaches_the_plan_and_the_estimate_counts_the_maximum_window() {
    let shipped = colloc_plan::plan_campaign(&root(), "h200-quick", None).unwrap();
    let precise = plan_with(with_precision("0.01", "40")).unwrap();
    let ProtocolKind::Window { window_seconds, precision_target, max_window_seconds, .. } = precise.protocol.kind
    else {
        panic!("{:?}", precise.protocol.kind)
    };
    assert_eq!((window_seconds, precision_target, max_window_seconds), (10.0, Some(0.01), Some(40.0)));
    assert!(precise.protocol.timeout_seconds > 40.0, "{}", precise.protocol.timeout_seconds);
    // Every feasible workload's estimate grows by the 30 s between the window and its maximum,
    // less what its minimum of iterations already made the window longer than 10 s.
    assert_eq!(shipped.workloads.len(), precise.workloads.len());
    for (a, b) in shipped.workloads.iter().zip(&precise.workloads) {
        assert_eq!(a.id, b.id);
        if a.feasible {
            let grown = b.estimated_seconds - a.estimated_seconds;
            assert!((0.0..=30.0).contains(&grown), "{}: {grown}", a.id);
            if a.id == "e33-resnet26-cifar10-x1-exclusive@syn" {
                assert_eq!(grown, 30.0);
            }
        }
    }
    let json = serde_json::to_value(&precise.protocol).unwrap();
    assert_eq!((json["precision_target"].as_f64(), json["max_window_seconds"].as_f64()), (Some(0.01), Some(40.0)));
    // A plan without a target writes neither field, as before they existed, and reads back.
    let json = serde_json::to_string(&shipped.protocol).unwrap();
    assert!(!json.contains("precision_target") && !json.contains("max_window_seconds"), "{json}");
    let back: colloc_plan::RunProtocol = serde_json::from_str(&json).unwrap();
    assert_eq!(back, shipped.protocol);
}

#[test]
fn a_default_timeout_leaves_room_for_the_maximum_window() {
    let plan = plan_with(|t| with_precision("0.02", "900")(t).replacen("    timeout_seconds: 300\n", "", 1)).unwrap();
    let longest = plan.workloads.iter().map(|w| w.estimated_seconds).fold(0.0, f64::max);
    assert!(longest > 900.0, "{longest}");
    assert_eq!(plan.protocol.timeout_seconds, (3.0 * longest + 600.0).round());
}

#[test]
fn precision_fields_are_checked_at_their_place() {
    let cases = [
        (with_precision("0", "40")(QUICK_WINDOW), "must be in (0, 0.5], not 0"),
        (with_precision("0.01", "400")(QUICK_WINDOW), "`timeout_seconds` (300) leaves no room"),
    ];
    for (insert, fragment) in cases {
        let err = plan_with(|t| t.replacen(QUICK_WINDOW, &insert, 1)).unwrap_err();
        assert!(err.contains("experiments/protocols.yaml:") && err.contains(fragment), "{err}");
    }
}
