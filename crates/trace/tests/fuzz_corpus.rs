//! The committed fuzz corpus (`fuzz/corpus/<target>/`) replayed through the very functions
//! the fuzz targets run ([`colloc_trace::readers`]): every input gives `Ok` or `Err`, never
//! a panic; a seed named `ok-*` (a file of a shipped campaign) is accepted, and a
//! regression named `err-*` (an input the fuzzer found, once a crash) is refused with an
//! error that says what is wrong.

use colloc_trace::readers;
use std::path::{Path, PathBuf};

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn replay<T>(target: &str, read: fn(&[u8]) -> Result<T, String>) {
    let files = corpus(target);
    let mut ok_seeds = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        let bytes = std::fs::read(f).unwrap();
        let got = std::panic::catch_unwind(|| read(&bytes).map(|_| ()))
            .unwrap_or_else(|_| panic!("{target}/{name}: the reader panicked"));
        if name.starts_with("ok-") {
            ok_seeds += 1;
            assert!(got.is_ok(), "{target}/{name}: a seed of a shipped file is refused: {got:?}");
        } else if name.starts_with("err-") {
            let e = got.expect_err(&format!("{target}/{name}: a damaged input is accepted"));
            assert!(!e.trim().is_empty(), "{target}/{name}: an empty error");
        }
    }
    assert!(ok_seeds > 0, "{target}: no ok-* seed among {} files", files.len());
}

#[test]
fn the_sha256sums_corpus_replays_without_panics() {
    replay("sha256sums", readers::sha256sums);
}

#[test]
fn the_meta_json_corpus_replays_without_panics() {
    replay("meta_json", readers::meta_json);
}

#[test]
fn the_job_json_corpus_replays_without_panics() {
    replay("job_json", readers::job_json);
}

#[test]
fn the_events_jsonl_corpus_replays_without_panics() {
    replay("events_jsonl", readers::events_jsonl);
}

#[test]
fn the_telemetry_csv_gz_corpus_replays_without_panics() {
    replay("telemetry_csv_gz", readers::telemetry_csv_gz);
}

#[test]
fn the_processes_csv_gz_corpus_replays_without_panics() {
    replay("processes_csv_gz", readers::processes_csv_gz);
}

/// Every fuzz target has its replay here or in `crates/spec/tests/fuzz_corpus.rs`.
#[test]
fn every_fuzz_target_has_a_corpus_replayed() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut targets: Vec<String> = std::fs::read_dir(fuzz.join("fuzz_targets"))
        .unwrap()
        .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    targets.sort();
    let replayed =
        ["events_jsonl", "job_json", "meta_json", "processes_csv_gz", "sha256sums", "spec", "telemetry_csv_gz"];
    assert_eq!(targets, replayed, "a fuzz target without a corpus replay test (or one replayed but gone)");
    let this = include_str!("fuzz_corpus.rs");
    let spec = include_str!("../../spec/tests/fuzz_corpus.rs");
    for t in targets {
        assert!(fuzz.join("corpus").join(&t).is_dir(), "fuzz/corpus/{t} is missing");
        let body = std::fs::read_to_string(fuzz.join("fuzz_targets").join(format!("{t}.rs"))).unwrap();
        // The target and its replay call the one function.
        let call = if t == "spec" { "colloc_spec::validate::check_text".to_string() } else { format!("readers::{t}") };
        assert!(body.contains(&call), "fuzz_targets/{t}.rs does not call {call}");
        let replay = if t == "spec" { spec.contains("check_text") } else { this.contains(&format!("readers::{t})")) };
        assert!(replay, "no replay of {t} calls {call}");
    }
}
