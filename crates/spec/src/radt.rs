//! Import of the authors' radT experiment CSV (columns `Experiment, Workload, Status, Run,
//! Devices, Collocation, File, Listeners, Params`) into our YAML.
//!
//! Rows with the same (Experiment, Workload) run together. `Collocation` is `-` (plain
//! processes: `exclusive` for one job, `naive` for several), `MPS`, or a MIG profile name,
//! written here as its compute-slice class so that it maps onto any GPU's profiles.

use std::fmt::Write as _;
use std::path::Path;

use crate::diag::{Diagnostic, Diagnostics};
use crate::resolved::Spec;

struct Row {
    line: u64,
    experiment: u32,
    workload: u32,
    mode: String,
    mig: Option<String>,
    model: String,
    dataset: String,
    batch: u32,
}

const COLUMNS: [&str; 9] =
    ["Experiment", "Workload", "Status", "Run", "Devices", "Collocation", "File", "Listeners", "Params"];

/// Turns radT CSV text into a spec file; datasets are recognised by their path's last
/// component matching a dataset of `spec` (its name or the last component of its `path`).
pub fn import(file: &Path, text: &str, spec: &Spec) -> Result<String, Diagnostics> {
    let mut diags = Vec::new();
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines.next().map(|(_, l)| l.split(',').map(str::trim).collect()).unwrap_or_default();
    if header != COLUMNS {
        return Err(Diagnostics(vec![Diagnostic::at(
            file,
            text,
            1,
            1,
            format!("expected the radT header `{}`", COLUMNS.join(",")),
        )]));
    }
    let mut rows = Vec::new();
    for (i, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        let line = i as u64 + 1;
        match row(l, line, spec) {
            Ok(r) => rows.push(r),
            Err((col, msg)) => diags.push(Diagnostic::at(file, text, line, col, msg)),
        }
    }
    if !diags.is_empty() {
        return Err(Diagnostics(diags));
    }
    // Group consecutive rows of one workload, keeping the file's order.
    let mut out = String::new();
    let _ = writeln!(out, "# yaml-language-server: $schema=schema.json");
    let _ = writeln!(
        out,
        "# Imported from {} by `cargo xtask import-radt`.",
        file.file_name().and_then(|n| n.to_str()).unwrap_or("radT CSV")
    );
    let _ = writeln!(out, "\nexperiments:");
    let mut i = 0;
    let mut current_exp = None;
    let mut seen = std::collections::BTreeSet::new();
    while i < rows.len() {
        let (e, w) = (rows[i].experiment, rows[i].workload);
        let mut j = i;
        while j < rows.len() && rows[j].experiment == e && rows[j].workload == w {
            j += 1;
        }
        let group = &rows[i..j];
        if !seen.insert((e, w)) {
            return Err(Diagnostics(vec![Diagnostic::at(
                file,
                text,
                group[0].line,
                1,
                format!("rows of experiment {e} workload {w} are not together"),
            )]));
        }
        if group.iter().any(|r| r.mode != group[0].mode && !(r.mig.is_some() && group[0].mig.is_some())) {
            return Err(Diagnostics(vec![Diagnostic::at(
                file,
                text,
                group[0].line,
                1,
                format!("experiment {e} workload {w} mixes collocation modes"),
            )]));
        }
        if current_exp != Some(e) {
            let _ = writeln!(out, "  - id: {e}\n    title: radT experiment {e}\n    workloads:");
            current_exp = Some(e);
        }
        let mode = match group[0].mode.as_str() {
            "-" if group.len() == 1 => "exclusive",
            "-" => "naive",
            m => m,
        };
        let _ = writeln!(out, "      - mode: {mode}\n        radt: {w}\n        jobs:");
        for r in group {
            let mig = r.mig.as_ref().map(|m| format!(", mig: {m}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "          - {{ model: {}, dataset: {}, batch_size: {}{mig} }}",
                r.model, r.dataset, r.batch
            );
        }
        i = j;
    }
    Ok(out)
}

fn row(l: &str, _line: u64, spec: &Spec) -> Result<Row, (u64, String)> {
    let cells: Vec<&str> = l.split(',').collect();
    if cells.len() != COLUMNS.len() {
        return Err((1, format!("expected {} columns, found {}", COLUMNS.len(), cells.len())));
    }
    let col = |k: usize| cells[..k].iter().map(|c| c.len() as u64 + 1).sum::<u64>() + 1;
    let num = |k: usize, what: &str| {
        cells[k].trim().parse::<u32>().map_err(|_| (col(k), format!("{what} `{}` is not a number", cells[k])))
    };
    let experiment = num(0, "Experiment")?;
    let workload = num(1, "Workload")?;
    let collocation = cells[5].trim();
    let (mode, mig) = match collocation {
        "-" => ("-".to_string(), None),
        "MPS" | "mps" => ("mps".to_string(), None),
        p if crate::forms::is_profile_spelling(p) && p.contains('.') => {
            ("mig".to_string(), Some(p.split('.').next().unwrap_or(p).to_string()))
        }
        other => return Err((col(5), format!("Collocation `{other}` is neither `-`, `MPS` nor a MIG profile name"))),
    };
    let params: Vec<&str> = cells[8].split_whitespace().collect();
    let (mut model, mut data_dir, mut batch) = (None, None, None);
    let mut k = 0;
    while k < params.len() {
        let value = params.get(k + 1).copied();
        match (params[k], value) {
            ("--model", Some(v)) => model = Some(v),
            ("--data-dir", Some(v)) => data_dir = Some(v),
            ("--batch-size" | "-b", Some(v)) => batch = Some(v.parse::<u32>().map_err(|_| (col(8), format!("--batch-size `{v}` is not a number")))?),
            ("--warmup-epochs", Some("0")) => {}
            (flag, _) => return Err((col(8), format!("train.py flag `{flag}` is not supported by the import (only --model, --data-dir, --batch-size, --warmup-epochs 0)"))),
        }
        k += 2;
    }
    let model = model.ok_or((col(8), "Params lack --model".to_string()))?;
    if !spec.models.contains_key(model) {
        return Err((col(8), format!("model `{model}` is not in the spec's models")));
    }
    let dir = data_dir.ok_or((col(8), "Params lack --data-dir".to_string()))?;
    let last = |p: &str| p.trim_end_matches('/').rsplit('/').next().unwrap_or("").to_string();
    let dataset = spec
        .datasets
        .values()
        .find(|d| d.name == last(dir) || d.path.as_deref().is_some_and(|p| last(p) == last(dir)))
        .map(|d| d.name.clone())
        .ok_or((col(8), format!("no dataset of the spec matches --data-dir `{dir}`")))?;
    let batch = batch.ok_or((col(8), "Params lack --batch-size".to_string()))?;
    Ok(Row { line: _line, experiment, workload, mode, mig, model: model.to_string(), dataset, batch })
}
