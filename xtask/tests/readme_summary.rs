//! The README opens with the results in brief: the claims by grade on the shipped campaign,
//! each value as the claims table has it. Generated text, checked here against the traces.

use std::path::Path;

#[test]
fn the_readme_summary_is_the_shipped_campaigns_claims() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let project = colloc_spec::load_project(&root).expect("the project loads");
    let name = project.artifact.shipped_campaign.value.clone();
    let plan = colloc_plan::plan_project_campaign(&project, &name, None).expect("the shipped campaign plans");
    let results = colloc_analysis::analyse(&root.join("data").join(&name), Some(&plan)).expect("the shipped traces");
    let claims = colloc_analysis::evaluate(&results, &project.artifact.claims).expect("the claims");
    let expected = colloc_report::claims_summary(&name, &claims);
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let (begin, end) = ("<!-- results: generated from the shipped campaign's claims -->\n", "<!-- /results -->");
    let start = readme.find(begin).expect("the README's results markers") + begin.len();
    let stop = start + readme[start..].find(end).expect("the results' end marker");
    assert!(
        readme[start..stop] == expected,
        "README.md's results in brief differ from the traces; they should read:\n{expected}"
    );
}
