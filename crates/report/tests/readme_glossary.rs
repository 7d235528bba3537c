//! The README's glossary is the report's: the same terms, the same words.

#[test]
fn the_readme_glossary_is_the_reports() {
    let readme = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
        .expect("README.md");
    let (begin, end) = ("<!-- glossary: generated from crates/report/src/glossary.rs -->\n", "<!-- /glossary -->");
    let start = readme.find(begin).expect("the README's glossary markers") + begin.len();
    let stop = start + readme[start..].find(end).expect("the glossary's end marker");
    let expected = colloc_report::glossary::markdown();
    assert!(
        readme[start..stop] == expected,
        "README.md's glossary differs from crates/report/src/glossary.rs; it should read:\n{expected}"
    );
}
