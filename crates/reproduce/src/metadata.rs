//! The citation metadata of the artifact, made from `artifact.yaml`: `CITATION.cff`,
//! `.zenodo.json` and `codemeta.json` (written by `cargo xtask package --metadata`, checked
//! by the tests against the committed files).

use colloc_spec::Artifact;
use serde_json::json;

/// The generated metadata files: path relative to the root → contents.
pub fn metadata_files(a: &Artifact) -> Vec<(&'static str, String)> {
    vec![("CITATION.cff", citation_cff(a)), (".zenodo.json", zenodo_json(a)), ("codemeta.json", codemeta_json(a))]
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn citation_cff(a: &Artifact) -> String {
    let s = &a.software;
    let p = &a.paper;
    let mut out = String::from("# Made by `cargo xtask package` from artifact.yaml; do not edit.\n");
    out += "cff-version: 1.2.0\n";
    out += "message: If you use this artifact, please cite the paper it reproduces (preferred-citation) and the artifact.\n";
    out += "type: software\n";
    out += &format!("title: {}\n", yaml_str(&s.title));
    out += &format!("version: {}\n", yaml_str(&s.version));
    out += &format!("abstract: {}\n", yaml_str(&s.description));
    out += "authors:\n";
    for name in &s.authors {
        out += &format!("  - name: {}\n", yaml_str(name));
    }
    out += "license:\n";
    for l in s.license.split(" OR ") {
        out += &format!("  - {}\n", yaml_str(l.trim()));
    }
    out += "keywords:\n";
    for k in &s.keywords {
        out += &format!("  - {}\n", yaml_str(k));
    }
    out += "preferred-citation:\n";
    out += "  type: conference-paper\n";
    out += &format!("  title: {}\n", yaml_str(&p.title));
    out += "  authors:\n";
    for name in &p.authors {
        let (given, family) = split_name(name);
        out += &format!("    - family-names: {}\n      given-names: {}\n", yaml_str(family), yaml_str(given));
    }
    out += &format!("  collection-title: {}\n", yaml_str(&p.venue));
    out += &format!("  doi: {}\n", yaml_str(&p.doi));
    out += &format!(
        "  identifiers:\n    - type: other\n      value: {}\n      description: arXiv\n",
        yaml_str(&format!("arXiv:{}", p.arxiv))
    );
    out += &format!("  license: {}\n", yaml_str(&spdx(&p.license)));
    out
}

/// "Ties Robroek" → ("Ties", "Robroek"); the family name is the last word.
fn split_name(name: &str) -> (&str, &str) {
    match name.trim().rsplit_once(' ') {
        Some((g, f)) => (g, f),
        None => ("", name.trim()),
    }
}

/// "CC BY 4.0" → "CC-BY-4.0".
fn spdx(license: &str) -> String {
    license.trim().replace(' ', "-")
}

/// Zenodo's `license` takes one licence identifier (its deposit metadata has no SPDX
/// expression): the first alternative of the code's licence, with the whole expression,
/// either at the user's choice, in `notes`.
fn zenodo_json(a: &Artifact) -> String {
    let s = &a.software;
    let p = &a.paper;
    let first = s.license.split(" OR ").next().unwrap_or("").trim();
    let code = if s.license.contains(" OR ") {
        format!(
            "{}, at the user's choice (Zenodo's licence field holds one identifier, so it names {first})",
            s.license
        )
    } else {
        s.license.clone()
    };
    let v = json!({
        "title": s.title,
        "version": s.version,
        "upload_type": "software",
        "description": s.description,
        "creators": s.authors.iter().map(|n| json!({ "name": n })).collect::<Vec<_>>(),
        "license": first,
        "keywords": s.keywords,
        "related_identifiers": [
            { "identifier": p.doi, "relation": "isSupplementTo", "scheme": "doi", "resource_type": "publication-conferencepaper" },
            { "identifier": format!("arXiv:{}", p.arxiv), "relation": "isSupplementTo", "scheme": "arxiv" }
        ],
        "notes": format!("Code: {code}. Traces, tables and figures: {}.", s.data_license),
    });
    serde_json::to_string_pretty(&v).expect("json") + "\n"
}

fn codemeta_json(a: &Artifact) -> String {
    let s = &a.software;
    let p = &a.paper;
    let v = json!({
        "@context": "https://w3id.org/codemeta/3.0",
        "@type": "SoftwareSourceCode",
        "name": s.title,
        "identifier": s.name,
        "version": s.version,
        "description": s.description,
        "author": s.authors.iter().map(|n| json!({ "@type": "Organization", "name": n })).collect::<Vec<_>>(),
        "license": s.license.split(" OR ").map(|l| format!("https://spdx.org/licenses/{}", l.trim())).collect::<Vec<_>>(),
        "keywords": s.keywords,
        "programmingLanguage": ["Rust", "Python"],
        "referencePublication": {
            "@type": "ScholarlyArticle",
            "name": p.title,
            "identifier": format!("https://doi.org/{}", p.doi),
            "author": p.authors.iter().map(|n| json!({ "@type": "Person", "name": n })).collect::<Vec<_>>(),
        },
    });
    serde_json::to_string_pretty(&v).expect("json") + "\n"
}
