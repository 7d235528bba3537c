//! Checking: spec files as written ([`crate::written`]) → the resolved [`Spec`], with every
//! name checked, or located diagnostics.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_saphyr::Spanned;

use crate::diag::{holds_no_yaml, parse_yaml, Diagnostic, Diagnostics};
use crate::names::{escapes, valid_name};
use crate::resolved::*;
use crate::written::*;

/// The noise-adaptive stopping of a window protocol: `precision_target` and
/// `max_window_seconds`, both or neither, each in its range; the protocol's own
/// `timeout_seconds` must exceed the maximum window.
fn precision_stop(
    f: &Path,
    t: &str,
    p: &ProtocolDecl,
    window_seconds: f64,
    diags: &mut Vec<Diagnostic>,
) -> (Option<f64>, Option<f64>) {
    let (target, most) = match (&p.precision_target, &p.max_window_seconds) {
        (None, None) => return (None, None),
        (Some(v), None) => {
            diags.push(Diagnostic::spanned(
                f,
                t,
                v,
                "`precision_target` needs `max_window_seconds` too: they come together (both or neither)",
            ));
            return (None, None);
        }
        (None, Some(v)) => {
            diags.push(Diagnostic::spanned(
                f,
                t,
                v,
                "`max_window_seconds` needs `precision_target` too: they come together (both or neither)",
            ));
            return (None, None);
        }
        (Some(a), Some(b)) => (a, b),
    };
    let mut ok = true;
    if !(target.value > 0.0 && target.value <= 0.5) {
        diags.push(Diagnostic::spanned(
            f,
            t,
            target,
            format!(
                "`precision_target` (the relative half-width of the 95% interval) must be in (0, 0.5], not {}",
                target.value
            ),
        ));
        ok = false;
    }
    if !(most.value >= window_seconds && most.value <= 86_400.0) {
        diags.push(Diagnostic::spanned(
            f,
            t,
            most,
            format!(
                "`max_window_seconds` must be at least `window_seconds` ({window_seconds}) and at most 86400, not {}",
                most.value
            ),
        ));
        ok = false;
    }
    if let Some(timeout) = p.timeout_seconds.filter(|&s| s <= most.value) {
        diags.push(Diagnostic::spanned(
            f,
            t,
            most,
            format!(
                "`timeout_seconds` ({timeout}) leaves no room for `max_window_seconds` ({}): a run could be killed before its window ends",
                most.value
            ),
        ));
        ok = false;
    }
    if ok {
        (Some(target.value), Some(most.value))
    } else {
        (None, None)
    }
}

/// Merges and checks spec files given as (shown path, text).
pub fn resolve_spec(files: Vec<(PathBuf, String)>) -> Result<Spec, Diagnostics> {
    let mut diags = Vec::new();
    let parsed = parse_spec_files(&files, &mut diags);
    let mut spec = Spec { files: files.clone(), ..Default::default() };
    // Names first, so experiments may refer to models of any file.
    let mut defaults_from: Option<PathBuf> = None;
    for (f, t, s) in &parsed {
        declare_models(&mut spec, f, t, s, &mut diags);
        declare_datasets(&mut spec, f, t, s, &mut diags);
        declare_protocols(&mut spec, f, t, s, &mut diags);
        if let Some(td) = &s.training_defaults {
            if let Some(prev) = &defaults_from {
                diags.push(Diagnostic::file(f, format!("`training_defaults` is also set in {}", prev.display())));
            }
            defaults_from = Some(f.clone());
            spec.training_defaults = td.clone();
        }
    }
    resolve_experiments(&mut spec, &parsed, &mut diags);
    spec.experiments.sort_by_key(|e| e.id);
    if diags.is_empty() {
        Ok(spec)
    } else {
        Err(Diagnostics(diags))
    }
}

/// Parses each spec file, diagnosing one that holds no YAML or does not parse.
fn parse_spec_files(files: &[(PathBuf, String)], diags: &mut Vec<Diagnostic>) -> Vec<(PathBuf, String, SpecFile)> {
    let mut parsed = Vec::new();
    for (f, t) in files {
        if holds_no_yaml(t) {
            diags.push(Diagnostic::at(
                f,
                t,
                1,
                1,
                "the file holds no YAML, only comments or blank lines; a spec file declares models, datasets, \
                 protocols, training_defaults or experiments",
            ));
            continue;
        }
        match parse_yaml::<SpecFile>(f, t) {
            Ok(s) => parsed.push((f.clone(), t.clone(), s)),
            Err(d) => diags.push(d),
        }
    }
    parsed
}

/// Adds the models of spec file `s` to `spec`, diagnosing a name defined twice or not a timm name.
fn declare_models(spec: &mut Spec, f: &Path, t: &str, s: &SpecFile, diags: &mut Vec<Diagnostic>) {
    let d = |sp: &Spanned<String>, m: String| Diagnostic::spanned(f, t, sp, m);
    for m in &s.models {
        if spec.models.contains_key(&m.name.value) {
            diags.push(d(&m.name, format!("model `{}` is defined twice", m.name.value)));
        }
        if !valid_name(&m.name.value) {
            diags.push(d(
                &m.name,
                format!("`{}` is not a timm model name (letters, digits, `_`, `.`, `-`)", m.name.value),
            ));
        }
        spec.models.insert(
            m.name.value.clone(),
            Model { name: m.name.value.clone(), class: m.class, input_size: m.input_size },
        );
    }
}

/// Adds the datasets of spec file `s` to `spec`, diagnosing a name defined twice, image
/// counts out of range and a missing or escaping `path`.
fn declare_datasets(spec: &mut Spec, f: &Path, t: &str, s: &SpecFile, diags: &mut Vec<Diagnostic>) {
    let d = |sp: &Spanned<String>, m: String| Diagnostic::spanned(f, t, sp, m);
    for ds in &s.datasets {
        if spec.datasets.contains_key(&ds.name.value) {
            diags.push(d(&ds.name, format!("dataset `{}` is defined twice", ds.name.value)));
        }
        for (n, what) in [(&ds.train, "train"), (&ds.val, "val")] {
            if n.value == 0 || n.value > 100_000_000 {
                diags.push(Diagnostic::spanned(
                    f,
                    t,
                    n,
                    format!("`{what}` must be between 1 and 100000000 images, not {}", n.value),
                ));
            }
        }
        if ds.source == Source::Imagefolder && ds.path.is_none() {
            diags.push(d(&ds.name, format!("dataset `{}` comes from an imagefolder but has no `path`", ds.name.value)));
        }
        if let Some(p) = &ds.path {
            if Path::new(p).is_relative() && escapes(p) {
                diags.push(d(&ds.name, format!("relative path `{p}` leaves the project")));
            }
        }
        spec.datasets.insert(
            ds.name.value.clone(),
            Dataset {
                name: ds.name.value.clone(),
                image_size: ds.image_size,
                generated_size: ds.generated_size,
                train: ds.train.value,
                val: ds.val.value,
                format: ds.format,
                path: ds.path.clone(),
                source: ds.source,
            },
        );
    }
}

/// Adds the protocols of spec file `s` to `spec`, diagnosing a name defined twice and each
/// protocol's kind, precision stop and `data_fraction`; a protocol of no valid kind is left out.
fn declare_protocols(spec: &mut Spec, f: &Path, t: &str, s: &SpecFile, diags: &mut Vec<Diagnostic>) {
    for p in &s.protocols {
        if spec.protocols.contains_key(&p.name.value) {
            diags.push(Diagnostic::spanned(f, t, &p.name, format!("protocol `{}` is defined twice", p.name.value)));
        }
        let kind = protocol_kind(f, t, p, diags);
        if p.epochs.is_some() && p.window_seconds.is_none() {
            epochs_protocol_without_precision(f, t, p, diags);
        }
        let fraction = p.data_fraction.unwrap_or(1.0);
        if !(fraction > 0.0 && fraction <= 1.0) {
            diags.push(Diagnostic::spanned(
                f,
                t,
                &p.name,
                format!("`data_fraction` must be in (0, 1], not {fraction}"),
            ));
        }
        if let Some(kind) = kind {
            spec.protocols.insert(
                p.name.value.clone(),
                Protocol {
                    name: p.name.value.clone(),
                    description: p.description.clone(),
                    kind,
                    data_fraction: fraction,
                    sample_every: p.sample_every.unwrap_or(10).max(1),
                    repetitions: p.repetitions.unwrap_or(1).max(1),
                    timeout_seconds: p.timeout_seconds,
                },
            );
        }
    }
}

/// The kind of protocol `p`: whole `epochs` or a measurement window (with its precision
/// stop), each in its range; `None`, diagnosed, when it is neither or out of range.
fn protocol_kind(f: &Path, t: &str, p: &ProtocolDecl, diags: &mut Vec<Diagnostic>) -> Option<ProtocolKind> {
    match (&p.epochs, &p.window_seconds) {
        (Some(e), None) if (1..=1000).contains(&e.value) => Some(ProtocolKind::Epochs { epochs: e.value }),
        (Some(e), None) => {
            diags.push(Diagnostic::spanned(f, t, e, format!("`epochs` must be between 1 and 1000, not {}", e.value)));
            None
        }
        (None, Some(w)) if w.value > 0.0 && w.value <= 86_400.0 => {
            let (precision_target, max_window_seconds) = precision_stop(f, t, p, w.value, diags);
            Some(ProtocolKind::Window {
                warmup_steps: p.warmup_steps.unwrap_or(20),
                window_seconds: w.value,
                min_iterations: p.min_iterations.unwrap_or(0),
                precision_target,
                max_window_seconds,
            })
        }
        (None, Some(w)) => {
            diags.push(Diagnostic::spanned(
                f,
                t,
                w,
                format!("`window_seconds` must be in (0, 86400], not {}", w.value),
            ));
            None
        }
        _ => {
            diags.push(Diagnostic::spanned(
                f,
                t,
                &p.name,
                "a protocol needs exactly one of `epochs` (whole epochs) or `window_seconds` (a measurement window)",
            ));
            None
        }
    }
}

/// Diagnoses `precision_target` and `max_window_seconds` on an `epochs` protocol, where they
/// do not apply.
fn epochs_protocol_without_precision(f: &Path, t: &str, p: &ProtocolDecl, diags: &mut Vec<Diagnostic>) {
    for (key, v) in [("precision_target", &p.precision_target), ("max_window_seconds", &p.max_window_seconds)] {
        if let Some(v) = v {
            diags.push(Diagnostic::spanned(
                f,
                t,
                v,
                format!("`{key}` applies to a `window_seconds` protocol, not to one of `epochs`"),
            ));
        }
    }
}

/// Resolves the experiments of every parsed file into `spec`, diagnosing an experiment id
/// declared twice and a workload id used twice across them.
fn resolve_experiments(spec: &mut Spec, parsed: &[(PathBuf, String, SpecFile)], diags: &mut Vec<Diagnostic>) {
    let mut exp_ids = BTreeSet::new();
    let mut workload_ids: BTreeMap<String, Origin> = BTreeMap::new();
    for (f, t, s) in parsed {
        for e in &s.experiments {
            if !exp_ids.insert(e.id.value) {
                diags.push(Diagnostic::spanned(f, t, &e.id, format!("experiment {} is declared twice", e.id.value)));
                continue;
            }
            let mut cx = crate::forms::Cx { spec, file: f, text: t, diags: &mut *diags };
            let workloads = cx.experiment(e);
            check_workload_ids(&workloads, &mut workload_ids, diags);
            spec.experiments.push(Experiment { id: e.id.value, title: e.title.clone(), workloads });
        }
    }
}

/// Records the ids of an experiment's `workloads` in `seen`, diagnosing one already used.
fn check_workload_ids(workloads: &[Workload], seen: &mut BTreeMap<String, Origin>, diags: &mut Vec<Diagnostic>) {
    for w in workloads {
        if let Some(prev) = seen.get(&w.id) {
            let msg = format!("workload id `{}` is used twice (first at {}:{})", w.id, prev.file.display(), prev.line);
            diags.push(w.origin.diagnostic(msg));
        } else {
            seen.insert(w.id.clone(), w.origin.clone());
        }
    }
}
