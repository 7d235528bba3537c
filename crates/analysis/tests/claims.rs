//! The declared claims use known queries and evaluate on a fixture campaign.

use colloc_analysis::testkit::{write_campaign, FixtureOptions};
use colloc_analysis::{evaluate, validate_claims, Verdict};
use colloc_spec::claims::{parse_claims_yaml, ClaimSpec};
use std::path::Path;

/// The project's claims: artifact.yaml's `claims:` when it has them, else the part file.
fn project_claims() -> Vec<ClaimSpec> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("artifact.yaml")).expect("artifact.yaml");
    parse_claims_yaml(&text).expect("artifact.yaml claims")
}

#[test]
fn declared_claims_name_known_queries() {
    let claims = project_claims();
    let ids: Vec<&str> = claims.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"]);
    validate_claims(&claims).unwrap();
}

#[test]
fn claims_evaluate_on_a_fixture() {
    let d = tempfile::tempdir().unwrap();
    let opts = FixtureOptions::default();
    let dir = write_campaign(d.path(), &opts).unwrap();
    let results = colloc_analysis::analyse(&dir, Some(&colloc_analysis::testkit::plan(&opts).unwrap())).unwrap();
    let out = evaluate(&results, &project_claims()).unwrap();
    for c in &out {
        eprintln!(
            "{} {:?}: {:?}",
            c.id,
            c.verdict,
            c.checks.iter().map(|k| (k.value, k.detail.clone())).collect::<Vec<_>>()
        );
    }
    let v = |id: &str| out.iter().find(|c| c.id == id).unwrap().verdict;
    assert_eq!(v("C1"), Verdict::Holds);
    // MIG is skipped in this fixture: a claim about MIG itself is not run.
    assert_eq!(v("C3"), Verdict::NotRun);
    let c3 = out.iter().find(|c| c.id == "C3").unwrap();
    assert!(c3.checks.iter().any(|k| k.detail.contains("skipped")), "{c3:?}");
    assert_eq!(v("C4"), Verdict::Holds);
    assert!(out.iter().all(|c| c.hardware.contains("SIMULATED")));
}

#[test]
fn an_unknown_query_or_argument_is_refused() {
    let mut claims = project_claims();
    claims[0].checks[0].query = "max_aggregate_ration".into();
    let e = validate_claims(&claims).unwrap_err().to_string();
    assert!(e.contains("unknown query `max_aggregate_ration`"), "{e}");
    let mut claims = project_claims();
    claims[0].checks[0].args.insert("modle".into(), colloc_spec::claims::ArgValue::Text("x".into()));
    assert!(validate_claims(&claims).unwrap_err().to_string().contains("modle"));
}
