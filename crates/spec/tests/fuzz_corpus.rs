//! The committed corpus of the fuzz target `spec` (`fuzz/corpus/spec/`) replayed through
//! the function the target runs, [`colloc_spec::validate::check_text`]: every input gives
//! `Ok` or `Err`, never a panic; a seed named `ok-*` resolves, one named `err-*` (a
//! regression the fuzzer found) is refused with a diagnostic.

use std::path::{Path, PathBuf};

#[test]
fn the_spec_corpus_replays_without_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/spec");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut ok_seeds = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        let bytes = std::fs::read(f).unwrap();
        let got = std::panic::catch_unwind(|| colloc_spec::validate::check_text(&bytes))
            .unwrap_or_else(|_| panic!("spec/{name}: checking panicked"));
        if name.starts_with("ok-") {
            ok_seeds += 1;
            let workloads = got.unwrap_or_else(|e| panic!("spec/{name}: a seed of shipped files is refused:\n{e}"));
            assert!(workloads > 0, "spec/{name}: no workloads");
        } else if name.starts_with("err-") {
            let e = got.expect_err(&format!("spec/{name}: a broken input is accepted"));
            assert!(e.contains(": error: "), "spec/{name}: not a diagnostic: {e}");
        }
    }
    assert!(ok_seeds > 0, "no ok-* seed among {} files", files.len());
}
