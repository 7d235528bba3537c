//! Every file under `tests/broken/` is invalid in the project's context; its first line
//! says where and what: `# expect: LINE:COLUMN: message fragment`.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

#[test]
fn the_shipped_specs_are_valid() {
    let summary = colloc_spec::validate::check(&root(), &[]).unwrap_or_else(|d| panic!("{d}"));
    assert!(summary.contains("198 workloads"), "{summary}");
}

#[test]
fn broken_files_fail_with_line_column_and_message() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/broken");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 12);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let expect =
            text.lines().next().and_then(|l| l.strip_prefix("# expect: ")).expect("first line says what to expect");
        let (line, rest) = expect.split_once(':').unwrap();
        let (col, fragment) = rest.split_once(": ").unwrap();
        let err = colloc_spec::validate::check(&root(), std::slice::from_ref(&f))
            .expect_err(&format!("{} should be invalid", f.display()));
        let name = f.file_name().unwrap().to_str().unwrap();
        let found = err
            .0
            .iter()
            .find(|d| d.file.ends_with(name))
            .unwrap_or_else(|| panic!("{name}: no diagnostic names the file:\n{err}"));
        assert_eq!(
            (found.line.to_string(), found.column.to_string()),
            (line.to_string(), col.to_string()),
            "{name}:\n{err}"
        );
        assert!(found.message.contains(fragment), "{name}: `{}` lacks `{fragment}`", found.message);
        let shown = found.to_string();
        assert!(shown.starts_with(&format!("crates/spec/tests/broken/{name}:{line}:{col}: error: ")), "{shown}");
        assert!(shown.contains(" | "), "a snippet is shown: {shown}");
    }
}

#[test]
fn an_empty_spec_file_is_an_error_at_its_place() {
    for text in ["", "\n\n", "# only a comment\n", "---\n# nothing\n"] {
        let err = colloc_spec::resolve_spec(vec![(PathBuf::from("experiments/empty.yaml"), text.to_string())])
            .expect_err("an empty file is not a valid spec");
        assert_eq!(err.0.len(), 1, "{err}");
        let d = &err.0[0];
        assert_eq!((d.line, d.column), (1, 1), "{err}");
        assert!(d.message.contains("holds no YAML"), "{err}");
        assert!(d.to_string().starts_with("experiments/empty.yaml:1:1: error: "), "{err}");
    }
}

#[test]
fn a_long_line_is_shown_as_a_window_around_the_error() {
    let pad = "a".repeat(3000);
    for (text, col_of) in [
        // The unknown key far into a 3000-character flow mapping.
        (format!("datasets: [{{name: \"{pad}\", bogus_key: 1}}]\n"), "bogus_key"),
        // Near the end of the line, past a tab.
        (format!("datasets: [{{name: \"{pad}\",\tbogus: 1}}]\n"), "bogus"),
    ] {
        let err = colloc_spec::resolve_spec(vec![(PathBuf::from("experiments/long.yaml"), text.clone())])
            .expect_err("an unknown key");
        let d = &err.0[0];
        assert_eq!(d.line, 1, "{err}");
        let byte = text.find(col_of).unwrap();
        assert_eq!(d.column as usize, text[..byte].chars().count() + 1, "{err}");
        let shown = d.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        let (src, caret) = (lines[2], lines[3]);
        assert!(src.starts_with("1 | …") && src.chars().count() < 120, "{src}");
        assert!(src.contains(col_of), "{src}");
        // The caret stands under the key's first character: the same character count, the
        // tabs of the line repeated so it lines up in a terminal too.
        let at = caret.chars().position(|c| c == '^').unwrap();
        assert_eq!(src.chars().skip(at).collect::<String>().split(':').next(), Some(col_of), "{shown}");
        assert_eq!(caret.matches('\t').count(), src[..src.char_indices().nth(at).unwrap().0].matches('\t').count());
    }
}

/// A GPU table's fitted profile outside (0, 1] is refused, naming the model and the field.
#[test]
fn a_gpu_tables_fitted_profile_out_of_range_is_refused() {
    let text = std::fs::read_to_string(root().join("experiments/gpus/h200-141gb.yaml")).unwrap();
    let bad = text.replace("resnet50: { busy: 0.97, occupancy: 0.80 }", "resnet50: { busy: 1.5, occupancy: 0.80 }");
    assert_ne!(bad, text, "the H200 table has resnet50's fitted profile");
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("gpus")).unwrap();
    let f = d.path().join("gpus/h200-141gb.yaml");
    std::fs::write(&f, bad).unwrap();
    let err = colloc_spec::validate::check(&root(), std::slice::from_ref(&f)).expect_err("busy 1.5 is refused");
    assert!(err.to_string().contains("estimate_profiles resnet50: `busy` 1.5 must lie in (0, 1]"), "{err}");
    std::fs::write(&f, text).unwrap();
    colloc_spec::validate::check(&root(), std::slice::from_ref(&f)).expect("the shipped table is valid");
}
