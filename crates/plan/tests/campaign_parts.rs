//! How a campaign's parts shape its plan: repetitions per part, and their errors.

use colloc_plan::plan_project_campaign;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A copy of the project's spec with `artifact.yaml` edited by `edit`.
fn project_with(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, colloc_spec::Project) {
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
    let p = colloc_spec::load_project(d.path()).unwrap_or_else(|e| panic!("{e}"));
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
