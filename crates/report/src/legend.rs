//! What captions and legends say about a campaign's mixes and timeline workloads, built
//! from the plan's forms and roles that the results carry.

use colloc_analysis::{MixClass, Results, WorkloadForm};
use std::collections::BTreeSet;

use crate::format::{and_list, dataset_title, number_word};
use crate::order::slices;

/// The forms and experiments of every workload the results know, measured or pending.
fn forms(r: &Results) -> impl Iterator<Item = (u32, &WorkloadForm)> {
    r.workloads.iter().map(|w| (w.experiment, &w.form)).chain(r.pending.iter().map(|w| (w.experiment, &w.form)))
}

/// The classes of the campaign's mixes, each once, from the smallest MIG slice up.
pub(crate) fn mix_classes(r: &Results) -> Vec<&MixClass> {
    let mut classes: Vec<&MixClass> = Vec::new();
    for (_, f) in forms(r) {
        if let WorkloadForm::Mix { classes: cs, .. } = f {
            for c in cs {
                if !classes.iter().any(|x| x.letter == c.letter) {
                    classes.push(c);
                }
            }
        }
    }
    classes.sort_by(|a, b| (slices(&a.mig_class), &a.letter).cmp(&(slices(&b.mig_class), &b.letter)));
    classes
}

/// `Experiment 37`, `Experiments 36 and 37`: the experiments with mixes; `None` without.
pub(crate) fn mix_experiments(r: &Results) -> Option<String> {
    let e: BTreeSet<u32> = forms(r).filter(|(_, f)| matches!(f, WorkloadForm::Mix { .. })).map(|(e, _)| e).collect();
    let e: Vec<String> = e.iter().map(u32::to_string).collect();
    match e.len() {
        0 => None,
        1 => Some(format!("Experiment {}", e[0])),
        _ => Some(format!("Experiments {}", and_list(&e))),
    }
}

/// The model class (`small`) of a mix class's model, as the workloads' jobs give it.
fn size(r: &Results, c: &MixClass) -> Option<String> {
    r.workloads.iter().flat_map(|w| &w.jobs).find(|j| j.model == c.model).map(|j| j.model_class.clone())
}

/// `small (S), medium (M) and large (L)`, or without the letters.
pub(crate) fn mix_sizes(r: &Results, letters: bool) -> String {
    let words: Vec<String> = mix_classes(r)
        .into_iter()
        .map(|c| {
            let size = size(r, c).unwrap_or_else(|| c.letter.clone());
            if letters {
                format!("{size} ({})", c.letter)
            } else {
                size
            }
        })
        .collect();
    and_list(&words)
}

/// `S = resnet26 b128, M = resnet50 b128, L = resnet152 b32`.
pub(crate) fn mix_jobs(r: &Results) -> String {
    let parts: Vec<String> =
        mix_classes(r).into_iter().map(|c| format!("{} = {} b{}", c.letter, c.model, c.batch_size)).collect();
    parts.join(", ")
}

/// `S = resnet26/CIFAR-10/b128, …; under MIG S→1g, …`.
pub(crate) fn mix_jobs_and_slices(r: &Results) -> String {
    let classes = mix_classes(r);
    let jobs: Vec<String> = classes
        .iter()
        .map(|c| format!("{} = {}/{}/b{}", c.letter, c.model, dataset_title(&c.dataset), c.batch_size))
        .collect();
    let slices: Vec<String> = classes.iter().map(|c| format!("{}→{}", c.letter, c.mig_class)).collect();
    format!("{}; under MIG {}", jobs.join(", "), slices.join(", "))
}

/// The labels of the workloads the utilisation timeline shows (the plan's timeline role),
/// each once: `7 × resnet26`.
pub(crate) fn timeline_labels(r: &Results) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    let all = r.workloads.iter().filter(|w| w.timeline).map(|w| &w.label);
    for l in all.chain(r.pending.iter().filter(|w| w.timeline).map(|w| &w.label)) {
        if !labels.contains(l) {
            labels.push(l.clone());
        }
    }
    labels
}

/// The timeline workloads in words: `7 × resnet26`, `7 × resnet26 or 3 × resnet50`, or
/// `a timeline workload` when the campaign declares none.
pub(crate) fn timeline_label(r: &Results) -> String {
    let labels = timeline_labels(r);
    if labels.is_empty() {
        "a timeline workload".to_string()
    } else {
        labels.join(" or ")
    }
}

/// `seven resnet26 jobs` when every timeline workload is that many jobs of one model, else
/// as [`timeline_label`].
pub(crate) fn timeline_jobs(r: &Results) -> String {
    let ws: Vec<_> = r.workloads.iter().filter(|w| w.timeline).collect();
    let kinds: BTreeSet<(usize, &str)> =
        ws.iter().filter(|w| w.homogeneous()).map(|w| (w.n_jobs(), w.jobs[0].model.as_str())).collect();
    match kinds.iter().next() {
        Some((n, model)) if kinds.len() == 1 && ws.iter().all(|w| w.homogeneous()) => {
            format!("{} {model} job{}", number_word(*n), if *n == 1 { "" } else { "s" })
        }
        _ => timeline_label(r),
    }
}
