//! Every run of the shipped campaigns (`data/*/runs/*`) reads as its types: its `meta.json`
//! (mode and protocol typed) and its job files; and what the types write of a protocol is
//! what the runner wrote, byte for byte, in `meta.json` (fields left out without a value)
//! and in the job files (every field; a job file of protocol version 1 lacks the three of
//! version 2, which are then written after the others).

use colloc_trace::readers;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The run directories of every shipped campaign.
fn runs() -> Vec<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let mut runs = Vec::new();
    for campaign in std::fs::read_dir(&data).unwrap_or_else(|e| panic!("{}: {e}", data.display())) {
        let dir = campaign.unwrap().path().join(colloc_trace::layout::RUNS_DIR);
        for run in std::fs::read_dir(&dir).into_iter().flatten() {
            runs.push(run.unwrap().path());
        }
    }
    runs.sort();
    runs
}

/// The value `key` of a JSON object's text, as written.
fn field(text: &[u8], key: &str) -> Value {
    let v: Value = serde_json::from_slice(text).unwrap();
    v[key].clone()
}

#[test]
fn every_shipped_run_reads_as_its_types_and_writes_its_protocol_back() {
    let (mut metas, mut job_files) = (0, 0);
    for run in runs() {
        let name = run.display();
        let bytes = std::fs::read(run.join(colloc_trace::layout::META)).unwrap();
        let meta = readers::meta_json(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(serde_json::to_value(meta.mode).unwrap(), field(&bytes, "mode"), "{name}");
        assert_eq!(serde_json::to_value(&meta.protocol).unwrap(), field(&bytes, "protocol"), "{name}");
        let written = serde_json::to_string(&meta.protocol).unwrap();
        assert_eq!(written, serde_json::to_string(&field(&bytes, "protocol")).unwrap(), "{name}: field order");
        metas += 1;
        for i in 0..meta.jobs.len().max(1) {
            let Ok(bytes) = std::fs::read(run.join(colloc_trace::layout::job_file(i))) else { continue };
            let job = readers::job_json(&bytes).unwrap_or_else(|e| panic!("{name} job {i}: {e}"));
            let Value::Object(mut back) = serde_json::to_value(&job).unwrap()["protocol"].take() else { panic!() };
            let Value::Object(given) = field(&bytes, "protocol") else { panic!("{name} job {i}") };
            if job.protocol_version == 1 && !given.contains_key("min_iterations") {
                for k in ["min_iterations", "precision_target", "max_window_seconds"] {
                    let v = back.shift_remove(k);
                    assert!(v.is_some_and(|v| v.is_null() || v == 0), "{name} job {i}: {k}");
                }
            }
            let text = |m| serde_json::to_string(&Value::Object(m)).unwrap();
            assert_eq!(text(back), text(given), "{name} job {i}");
            assert_eq!(job.protocol, meta.protocol.kind, "{name} job {i}: the job's protocol is the run's");
            job_files += 1;
        }
    }
    assert!(metas > 700 && job_files > 1500, "{metas} meta.json, {job_files} job files");
}
