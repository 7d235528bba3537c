//! The published JSON Schemas match the Rust types. Regenerate with
//! `UPDATE_SCHEMAS=1 cargo test -p colloc-spec --test schema`.

use std::path::Path;

fn check(rel: &str, current: String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &current).unwrap();
        return;
    }
    let published = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        published == current,
        "{rel} is stale: regenerate it with `UPDATE_SCHEMAS=1 cargo test -p colloc-spec --test schema`"
    );
}

#[test]
fn spec_schema_is_current() {
    check("experiments/schema.json", colloc_spec::spec_schema());
}

#[test]
fn artifact_schema_is_current() {
    check("experiments/artifact.schema.json", colloc_spec::artifact_schema());
}

#[test]
fn gpu_schema_is_current() {
    check("experiments/gpu.schema.json", colloc_spec::gpu_schema());
}
