//! The invariants of ARCHITECTURE.md that a test can check, checked on the source tree and
//! `Cargo.lock` (no build, no network).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Package name → names of its dependencies (normal, build and dev alike), from `Cargo.lock`.
fn lock_graph() -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock");
    let mut graph = BTreeMap::new();
    for block in text.split("[[package]]").skip(1) {
        let name = block
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_string())
            .expect("a package has a name");
        let mut deps = Vec::new();
        if let Some(start) = block.find("dependencies = [") {
            for l in block[start..].lines().skip(1) {
                if l.starts_with(']') {
                    break;
                }
                // ` "sha2 0.10.9",` → sha2
                let d = l.trim().trim_end_matches(',').trim_matches('"');
                deps.push(d.split(' ').next().unwrap_or(d).to_string());
            }
        }
        graph.insert(name, deps);
    }
    graph
}

fn closure(graph: &BTreeMap<String, Vec<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(p) = todo.pop() {
        for d in graph.get(&p).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn the_runner_never_depends_on_polars_or_plotters() {
    let deps = closure(&lock_graph(), "colloc-runner");
    let heavy: Vec<&String> = deps.iter().filter(|d| d.starts_with("polars") || d.starts_with("plotters")).collect();
    assert!(heavy.is_empty(), "the runner goes to GPU hosts as a small binary, but depends on {heavy:?}");
    for stage in ["colloc-analysis", "colloc-report"] {
        assert!(!deps.contains(stage), "the runner depends on {stage}");
    }
}

#[test]
fn the_crates_form_a_chain_in_pipeline_order() {
    // Each crate may use only the crates before it in the pipeline.
    let allowed: &[(&str, &[&str])] = &[
        ("colloc-trace", &[]),
        ("colloc-spec", &["colloc-trace"]),
        ("colloc-plan", &["colloc-spec", "colloc-trace"]),
        ("colloc-runner", &["colloc-plan", "colloc-trace"]),
        ("colloc-analysis", &["colloc-spec", "colloc-plan", "colloc-trace"]),
        ("colloc-report", &["colloc-spec", "colloc-plan", "colloc-trace", "colloc-analysis"]),
        ("colloc-reproduce", &["colloc-spec", "colloc-plan", "colloc-trace", "colloc-analysis", "colloc-report"]),
        // The benchmarks time the stages themselves, beside the project stage's outputs.
        ("colloc-bench", &["colloc-spec", "colloc-plan", "colloc-trace", "colloc-analysis", "colloc-reproduce"]),
    ];
    let graph = lock_graph();
    for (krate, ok) in allowed {
        for d in graph[*krate].iter().filter(|d| d.starts_with("colloc-") && d.as_str() != *krate) {
            assert!(ok.contains(&d.as_str()), "{krate} depends on {d}, which comes later in the pipeline");
        }
    }
}

/// Source of a file without comments and without its `#[cfg(test)]` tail.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module → the crate's other top-level modules it names through `crate::`.
fn module_uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(src).expect("inside src");
        let top = rel.iter().next().and_then(|c| c.to_str()).unwrap_or("").trim_end_matches(".rs").to_string();
        let code = code_of(f);
        let mut named = BTreeSet::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                named.extend(group.split(',').map(|p| p.trim().split("::").next().unwrap_or("").to_string()));
            } else {
                named.insert(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            }
        }
        named.retain(|m| !m.is_empty() && *m != top);
        uses.entry(top).or_default().extend(named);
    }
    uses
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let mut pairs = Vec::new();
    for src in [
        "crates/trace/src",
        "crates/spec/src",
        "crates/plan/src",
        "crates/runner/src",
        "crates/analysis/src",
        "crates/report/src",
        "crates/reproduce/src",
        "xtask/src",
    ] {
        let uses = module_uses(&root().join(src));
        for (a, named) in &uses {
            for b in named {
                if a < b && uses.get(b).is_some_and(|n| n.contains(a)) {
                    pairs.push(format!("{src}: {a} ↔ {b}"));
                }
            }
        }
    }
    assert!(pairs.is_empty(), "modules that import each other: {pairs:#?}");
}

/// Lines of the `.rs` files under `dir` (comments and test tails removed) holding one of
/// `needles`, as `file:line: text`.
fn lines_with(dir: &Path, needles: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut hits = Vec::new();
    for f in files {
        for (n, line) in code_of(&f).lines().enumerate() {
            if needles.iter().any(|x| line.contains(x)) {
                hits.push(format!("{}:{}: {}", f.strip_prefix(root()).unwrap_or(&f).display(), n + 1, line.trim()));
            }
        }
    }
    hits
}

/// What only a plan or artifact.yaml may say of a workload or a campaign, written out.
const CLASSIFIERS: &[&str] = &[
    "experiment == ",
    "\"resnet26\"",
    "\"resnet50\"",
    "\"resnet152\"",
    "\"a100-40gb\"",
    "\"M+S\"",
    "n_jobs() == 7",
    "len() == 7",
];

#[test]
fn the_report_the_project_stage_and_xtask_never_classify_workloads() {
    // What a workload is comes with the plan and the results: its form, its roles (headline,
    // timeline) and the paper's GPU (artifact.yaml's `paper.gpu`).
    let mut hits = Vec::new();
    for dir in ["crates/report/src", "crates/reproduce/src", "crates/bench/src", "xtask/src"] {
        hits.extend(lines_with(&root().join(dir), CLASSIFIERS));
    }
    assert!(hits.is_empty(), "workloads classified outside the plan:\n{}", hits.join("\n"));
}

#[test]
fn xtask_reaches_the_analysis_and_the_report_through_the_project_stage() {
    // `colloc_reproduce` opens, analyses and lays out a campaign; xtask parses arguments and
    // prints. Only the benchmarks (`colloc-bench`) call the stages themselves, since they
    // time each of them.
    let stages =
        ["colloc_analysis::analyse(", "colloc_analysis::evaluate(", "colloc_report::outputs(", "colloc_report::write("];
    let hits: Vec<String> = lines_with(&root().join("xtask/src"), &stages).into_iter().collect();
    assert!(hits.is_empty(), "xtask runs a stage of the pipeline itself:\n{}", hits.join("\n"));
    let deps = &lock_graph()["colloc-reproduce"];
    assert!(!deps.iter().any(|d| d == "colloc-runner"), "the project stage needs no runner");
}

/// Whether a line reads the `simulate` option (the word itself, not `simulated`).
fn asks_simulate(line: &str) -> bool {
    line.match_indices("simulate").any(|(i, _)| {
        let after = line[i + "simulate".len()..].chars().next();
        let before = line[..i].chars().next_back();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
    })
}

#[test]
fn the_simulated_backend_lives_in_one_wing() {
    let runner = root().join("crates/runner/src");
    let mut files = Vec::new();
    rust_files(&runner, &mut files);
    let outside: Vec<PathBuf> = files.into_iter().filter(|f| !f.starts_with(runner.join("sim"))).collect();
    let mut hits = Vec::new();
    for f in &outside {
        for (n, line) in code_of(f).lines().enumerate() {
            // The flags (cli.rs) and the one place that picks the backend (options.rs) may
            // name the simulated one, as the crate root does; nothing else.
            let picks = ["cli.rs", "options.rs", "main.rs", "lib.rs"].iter().any(|n| f == &runner.join(n));
            let names_it = line.contains("sim::") || line.contains("Sim") || line.contains("FakeParams");
            if !picks && (names_it || asks_simulate(line)) {
                hits.push(format!("{}:{}: {}", f.strip_prefix(root()).unwrap_or(f).display(), n + 1, line.trim()));
            }
        }
    }
    assert!(hits.is_empty(), "simulated-backend code outside crates/runner/src/sim/:\n{}", hits.join("\n"));
}

#[test]
fn the_project_root_is_found_at_run_time_never_compiled_in() {
    // One cargo target directory may serve several checkouts: a path compiled into a library
    // or a binary would read and write the checkout it was built in. Tests may name theirs.
    let mut hits = Vec::new();
    for krate in ["trace", "spec", "plan", "runner", "analysis", "report", "reproduce", "bench"] {
        for dir in ["src", "examples"] {
            hits.extend(lines_with(&root().join("crates").join(krate).join(dir), &["CARGO_MANIFEST_DIR"]));
        }
    }
    hits.extend(lines_with(&root().join("xtask/src"), &["CARGO_MANIFEST_DIR"]));
    assert!(hits.is_empty(), "a compiled-in path (use colloc_spec::names::project_root):\n{}", hits.join("\n"));
}

/// The functions of `code` (a file's code without comments and test tail) longer than
/// `limit` lines, from the `fn` line to its closing brace at the same indentation.
fn long_functions(code: &str, limit: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let signature = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn ", "async fn "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p));
        let Some(rest) = signature else { continue };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close) {
            if end + 2 > limit {
                long.push((name, end + 2));
            }
        }
    }
    long
}

#[test]
fn no_function_of_the_product_is_over_120_lines() {
    // A function a reader cannot hold at once is split into named steps; tests may list
    // their expectations at length.
    let mut hits = Vec::new();
    let mut dirs = vec![root().join("xtask/src")];
    for krate in ["trace", "spec", "plan", "runner", "analysis", "report", "reproduce", "bench"] {
        dirs.push(root().join("crates").join(krate).join("src"));
        dirs.push(root().join("crates").join(krate).join("examples"));
    }
    for dir in dirs {
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for f in files {
            for (name, n) in long_functions(&code_of(&f), 120) {
                hits.push(format!("{}: fn {name}: {n} lines", f.strip_prefix(root()).unwrap_or(&f).display()));
            }
        }
    }
    assert!(hits.is_empty(), "functions over 120 lines:\n{}", hits.join("\n"));
    // The check finds what it looks for.
    let body = "    let x = 1;\n".repeat(130);
    assert_eq!(long_functions(&format!("fn big() {{\n{body}}}\n"), 120), vec![("big".to_string(), 132)]);
}
