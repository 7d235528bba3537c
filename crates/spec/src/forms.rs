//! The three forms an experiment is written in — a matrix (models × job counts × modes),
//! mixes of job classes (`L+M+2S`), or workloads listed one by one — expanded into
//! [`Workload`]s with every name checked.

use std::collections::BTreeMap;
use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::Diagnostic;
use crate::names::{valid_name, MAX_BATCH, MAX_JOBS};
use crate::resolved::{Job, Mix, MixClass, Origin, Spec, Workload};
use crate::written::*;
use colloc_trace::ids;
use colloc_trace::Mode;

pub(crate) struct Cx<'a> {
    pub spec: &'a Spec,
    pub file: &'a Path,
    pub text: &'a str,
    pub diags: &'a mut Vec<Diagnostic>,
}

impl Cx<'_> {
    fn origin<T>(&self, s: &Spanned<T>) -> Origin {
        let d = Diagnostic::spanned(self.file, self.text, s, "");
        Origin { file: d.file, line: d.line, column: d.column, source_line: d.source_line }
    }
    fn err<T>(&mut self, s: &Spanned<T>, msg: impl Into<String>) {
        self.diags.push(Diagnostic::spanned(self.file, self.text, s, msg));
    }

    fn model(&mut self, m: &Spanned<String>) -> bool {
        if self.spec.models.contains_key(&m.value) {
            return true;
        }
        let known: Vec<&str> = self.spec.models.keys().map(String::as_str).collect();
        self.err(m, format!("unknown model `{}`; expected one of: {}", m.value, known.join(", ")));
        false
    }
    fn dataset(&mut self, d: &Spanned<String>) -> bool {
        if self.spec.datasets.contains_key(&d.value) {
            return true;
        }
        let known: Vec<&str> = self.spec.datasets.keys().map(String::as_str).collect();
        self.err(d, format!("unknown dataset `{}`; expected one of: {}", d.value, known.join(", ")));
        false
    }
    fn batch(&mut self, b: &Spanned<u32>) -> bool {
        if (1..=MAX_BATCH).contains(&b.value) {
            return true;
        }
        self.err(b, format!("batch size must be between 1 and {MAX_BATCH}, not {}", b.value));
        false
    }
    fn profile(&mut self, p: &Spanned<String>) -> Option<(String, Origin)> {
        if is_profile_spelling(&p.value) {
            Some((p.value.clone(), self.origin(p)))
        } else {
            self.err(
                p,
                format!(
                    "`{}` is not a MIG profile: expected a class `1g`..`7g` or a profile name such as `1g.5gb`",
                    p.value
                ),
            );
            None
        }
    }

    fn training(&self, own: Option<&TrainingDecl>) -> TrainingDecl {
        merge_training(&self.spec.training_defaults, own)
    }

    pub(crate) fn experiment(&mut self, e: &ExperimentDecl) -> Vec<Workload> {
        let forms = e.matrix.is_some() as u8 + e.mixes.is_some() as u8 + (!e.workloads.is_empty()) as u8;
        if forms != 1 {
            self.err(&e.id, "an experiment needs exactly one of `matrix`, `mixes` or `workloads`");
            return Vec::new();
        }
        let id = e.id.value;
        if let Some(m) = &e.matrix {
            self.matrix(id, m)
        } else if let Some(m) = &e.mixes {
            self.mixes(id, m)
        } else {
            e.workloads.iter().filter_map(|w| self.explicit(id, w)).collect()
        }
    }

    fn matrix(&mut self, exp: u32, m: &Spanned<MatrixDecl>) -> Vec<Workload> {
        let mv = &m.value;
        self.batch(&mv.batch_size);
        let training = self.training(mv.training.as_ref());
        let mut out = Vec::new();
        for t in &mv.models {
            let ok = self.model(&t.model) & self.dataset(&t.dataset);
            let batch = match &t.batch_size {
                Some(b) => {
                    self.batch(b);
                    b.value
                }
                None => mv.batch_size.value,
            };
            for l in &mv.layouts {
                let n = l.jobs.value;
                if n == 0 || n > MAX_JOBS {
                    self.err(&l.jobs, format!("job count must be between 1 and {MAX_JOBS}, not {n}"));
                    continue;
                }
                for ms in &l.modes {
                    let Some((mode, prof)) = self.layout_mode(ms) else { continue };
                    if mode == Mode::Exclusive && n != 1 {
                        self.err(ms, format!("`exclusive` means one job alone, but this layout has {n} jobs"));
                        continue;
                    }
                    if !ok {
                        continue;
                    }
                    let tag = ids::layout_tag(mode, prof.as_ref().map(|(p, _)| p.as_str()));
                    let job = Job {
                        model: t.model.value.clone(),
                        dataset: t.dataset.value.clone(),
                        batch_size: batch,
                        mig: prof.clone(),
                        training: training.clone(),
                    };
                    out.push(Workload {
                        id: ids::homogeneous(exp, &t.model.value, &t.dataset.value, n as usize, &tag),
                        experiment: exp,
                        label: format!("{n} × {}", t.model.value),
                        mode,
                        jobs: vec![job; n as usize],
                        radt: None,
                        mix: None,
                        origin: self.origin(ms),
                    });
                }
            }
        }
        out
    }

    /// `exclusive`, `naive`, `mps`, `mig:<profile>`, `mps-limited:<profile>`.
    fn layout_mode(&mut self, s: &Spanned<String>) -> Option<(Mode, Option<(String, Origin)>)> {
        let (m, prof) = match s.value.split_once(':') {
            Some((m, p)) => (m, Some(p)),
            None => (s.value.as_str(), None),
        };
        let mode = match m.parse::<Mode>().ok() {
            Some(mode) => mode,
            None => {
                self.err(
                    s,
                    format!(
                        "unknown mode `{}`; expected exclusive, naive, mps, mig:<profile> or mps-limited:<profile>",
                        s.value
                    ),
                );
                return None;
            }
        };
        let needs = mode.uses_mig_profiles();
        match (needs, prof) {
            (true, Some(p)) => {
                let sp = Spanned::new(p.to_string(), s.referenced, s.defined);
                let prof = self.profile(&sp)?;
                Some((mode, Some(prof)))
            }
            (true, None) => {
                self.err(s, format!("`{m}` needs a MIG profile: `{m}:1g`"));
                None
            }
            (false, Some(_)) => {
                self.err(s, format!("`{m}` takes no profile"));
                None
            }
            (false, None) => Some((mode, None)),
        }
    }

    fn mixes(&mut self, exp: u32, m: &Spanned<MixesDecl>) -> Vec<Workload> {
        let mv = &m.value;
        let training = self.training(mv.training.as_ref());
        let mut classes = BTreeMap::new();
        for (letter, c) in &mv.classes {
            let ok = self.model(&c.model) & self.dataset(&c.dataset) & self.batch(&c.batch_size);
            let prof = self.profile(&c.mig);
            if letter.len() != 1 || !letter.chars().all(|ch| ch.is_ascii_uppercase()) {
                self.err(&c.model, format!("class name `{letter}` must be one capital letter"));
                continue;
            }
            if let (true, Some(prof)) = (ok, prof) {
                classes.insert(letter.chars().next().unwrap_or('?'), (c, prof));
            }
        }
        let mut modes = Vec::new();
        for s in &mv.modes {
            match s.value.parse::<Mode>().ok() {
                Some(Mode::Exclusive) | None => {
                    self.err(s, format!("mixes run in `naive`, `mps`, `mps-limited` or `mig`, not `{}`", s.value))
                }
                Some(mode) => modes.push((mode, s)),
            }
        }
        let mut out = Vec::new();
        for (position, mix) in mv.mixes.iter().enumerate() {
            let Some(parts) = self.parse_mix(mix, &classes) else { continue };
            let form = Mix {
                position: position as u32,
                classes: parts
                    .iter()
                    .map(|(count, letter)| {
                        let (c, prof) = &classes[letter];
                        MixClass {
                            letter: *letter,
                            count: *count,
                            model: c.model.value.clone(),
                            dataset: c.dataset.value.clone(),
                            batch_size: c.batch_size.value,
                            mig: prof.0.clone(),
                        }
                    })
                    .collect(),
            };
            for (mode, ms) in &modes {
                let mut jobs = Vec::new();
                for (count, letter) in &parts {
                    let (c, prof) = &classes[letter];
                    let job = Job {
                        model: c.model.value.clone(),
                        dataset: c.dataset.value.clone(),
                        batch_size: c.batch_size.value,
                        mig: mode.uses_mig_profiles().then(|| prof.clone()),
                        training: training.clone(),
                    };
                    jobs.extend(std::iter::repeat_n(job, *count as usize));
                }
                out.push(Workload {
                    id: ids::mix(exp, &mix.value, *mode),
                    experiment: exp,
                    label: mix.value.clone(),
                    mode: *mode,
                    jobs,
                    radt: None,
                    mix: Some(form.clone()),
                    origin: self.origin(ms),
                });
            }
        }
        out
    }

    /// `L+M+2S` → [(1,'L'),(1,'M'),(2,'S')].
    fn parse_mix(
        &mut self,
        mix: &Spanned<String>,
        classes: &BTreeMap<char, (&ClassDecl, (String, Origin))>,
    ) -> Option<Vec<(u32, char)>> {
        let mut parts = Vec::new();
        for term in mix.value.split('+') {
            let term = term.trim();
            let digits: String = term.chars().take_while(|c| c.is_ascii_digit()).collect();
            let rest = &term[digits.len()..];
            let count = if digits.is_empty() { 1 } else { digits.parse().unwrap_or(0) };
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                (Some(letter), None) if classes.contains_key(&letter) && (1..=MAX_JOBS).contains(&count) => {
                    parts.push((count, letter))
                }
                (Some(letter), None) if classes.contains_key(&letter) => {
                    self.err(mix, format!("`{term}`: count must be between 1 and {MAX_JOBS}"));
                    return None;
                }
                _ => {
                    let known: String = classes.keys().collect();
                    self.err(
                        mix,
                        format!("`{term}` in mix `{}` is not a count and a class letter (classes: {known})", mix.value),
                    );
                    return None;
                }
            }
        }
        Some(parts)
    }

    fn explicit(&mut self, exp: u32, w: &WorkloadDecl) -> Option<Workload> {
        let mode = match w.mode.value.parse::<Mode>().ok() {
            Some(m) => m,
            None => {
                self.err(
                    &w.mode,
                    format!("unknown mode `{}`; expected exclusive, naive, mps, mps-limited or mig", w.mode.value),
                );
                return None;
            }
        };
        let training = self.training(w.training.as_ref());
        let mut jobs = Vec::new();
        let mut ok = true;
        for j in &w.jobs {
            ok &= self.model(&j.model) & self.dataset(&j.dataset) & self.batch(&j.batch_size);
            let prof = match (&j.mig, mode.uses_mig_profiles()) {
                (Some(p), true) => self.profile(p),
                (None, true) => {
                    self.err(&j.model, format!("every job of a `{mode}` workload needs `mig: <profile>`"));
                    ok = false;
                    None
                }
                (Some(p), false) => {
                    self.err(p, format!("`mig` is only for `mig` and `mps-limited` workloads, not `{mode}`"));
                    ok = false;
                    None
                }
                (None, false) => None,
            };
            let count = j.count.unwrap_or(1);
            if count == 0 || count > MAX_JOBS {
                self.err(&j.model, format!("`count` must be between 1 and {MAX_JOBS}"));
                ok = false;
            }
            let job = Job {
                model: j.model.value.clone(),
                dataset: j.dataset.value.clone(),
                batch_size: j.batch_size.value,
                mig: prof,
                training: training.clone(),
            };
            jobs.extend(std::iter::repeat_n(job, count as usize));
        }
        if jobs.is_empty() {
            self.err(&w.mode, "a workload needs at least one job");
            return None;
        }
        if mode == Mode::Exclusive && jobs.len() != 1 {
            self.err(&w.mode, format!("`exclusive` means one job alone, but this workload has {} jobs", jobs.len()));
            return None;
        }
        if !ok {
            return None;
        }
        let label = label_of(&jobs);
        let id = match &w.id {
            Some(id) if valid_name(&id.value) => id.value.clone(),
            Some(id) => {
                self.err(id, "a workload id may hold letters, digits, `_`, `.`, `-` only");
                return None;
            }
            None => default_id(exp, mode, &jobs),
        };
        Some(Workload { id, experiment: exp, label, mode, jobs, radt: w.radt, mix: None, origin: self.origin(&w.mode) })
    }
}

/// The id a listed workload gets when none is written: the same as a matrix would give
/// for identical jobs, else the jobs' models joined.
pub(crate) fn default_id(exp: u32, mode: Mode, jobs: &[Job]) -> String {
    let first = &jobs[0];
    let same = jobs.iter().all(|j| {
        j.model == first.model
            && j.dataset == first.dataset
            && j.mig.as_ref().map(|m| &m.0) == first.mig.as_ref().map(|m| &m.0)
    });
    if same {
        let tag = ids::layout_tag(mode, first.mig.as_ref().map(|(p, _)| p.as_str()));
        ids::homogeneous(exp, &first.model, &first.dataset, jobs.len(), &tag)
    } else {
        let models: Vec<&str> = jobs.iter().map(|j| j.model.as_str()).collect();
        ids::listed(exp, &models, ids::mode_tag(mode))
    }
}

fn label_of(jobs: &[Job]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for j in jobs {
        match counts.iter_mut().find(|(m, _)| *m == j.model) {
            Some((_, n)) => *n += 1,
            None => counts.push((j.model.clone(), 1)),
        }
    }
    counts.iter().map(|(m, n)| format!("{n} × {m}")).collect::<Vec<_>>().join(" + ")
}

/// `1g`..`7g`, or a profile name like `1g.5gb`, `1g.18gb+me`.
pub(crate) fn is_profile_spelling(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 2 || !(b'1'..=b'7').contains(&b[0]) || b[1] != b'g' {
        return false;
    }
    let rest = &s[2..];
    if rest.is_empty() {
        return true;
    }
    let Some(mem) = rest.strip_prefix('.') else { return false };
    let mem = mem.strip_suffix("+me").unwrap_or(mem);
    mem.strip_suffix("gb").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// A job's own settings over the defaults, field by field.
pub(crate) fn merge_training(base: &TrainingDecl, own: Option<&TrainingDecl>) -> TrainingDecl {
    let Some(o) = own else { return base.clone() };
    TrainingDecl {
        lr: o.lr.or(base.lr),
        momentum: o.momentum.or(base.momentum),
        weight_decay: o.weight_decay.or(base.weight_decay),
        label_smoothing: o.label_smoothing.or(base.label_smoothing),
        schedule: o.schedule.or(base.schedule),
        precision: o.precision.or(base.precision),
        channels_last: o.channels_last.or(base.channels_last),
        workers: o.workers.or(base.workers),
        input_size: o.input_size.or(base.input_size),
        num_classes: o.num_classes.or(base.num_classes),
        color_jitter: o.color_jitter.or(base.color_jitter),
        validate_every_epoch: o.validate_every_epoch.or(base.validate_every_epoch),
        seed: o.seed.or(base.seed),
    }
}
