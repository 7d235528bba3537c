//! Spec + campaign + GPU → plan.

use std::collections::BTreeSet;

use colloc_spec::artifact::{CampaignDecl, PartDecl, RepeatDecl};
use colloc_spec::gpu::{GpuTable, MigProfile};
use colloc_spec::written::{ImageFormat, Precision, Schedule, Source, TrainingDecl};
use colloc_spec::{shown, Dataset, Protocol, ProtocolKind as SpecProtocolKind};
use colloc_spec::{Diagnostic, Diagnostics, Project};
use colloc_trace::ids;
use colloc_trace::Mode;
use sha2::{Digest, Sha256};

use crate::estimate;
use crate::model::*;

pub const PLAN_VERSION: u32 = 1;
/// Where generated datasets are cached, relative to the project root.
pub const GENERATED_CACHE: &str = ".cache/datasets";

/// Plans a campaign of `artifact.yaml`, on its own GPU or on `gpu` if given.
pub fn plan_campaign(root: &std::path::Path, campaign: &str, gpu: Option<&str>) -> anyhow::Result<Plan> {
    let project = colloc_spec::load_project(root)?;
    Ok(plan_project_campaign(&project, campaign, gpu)?)
}

/// Plans a campaign of an already loaded project.
pub fn plan_project_campaign(project: &Project, campaign: &str, gpu: Option<&str>) -> Result<Plan, Diagnostics> {
    let c = project.artifact.campaigns.iter().find(|c| c.name.value == campaign).ok_or_else(|| {
        let known: Vec<&str> = project.artifact.campaigns.iter().map(|c| c.name.value.as_str()).collect();
        one(Diagnostic::file(
            &project.artifact_file.0,
            format!("no campaign `{campaign}`; campaigns: {}", known.join(", ")),
        ))
    })?;
    let gpu = gpu_table(project, gpu.unwrap_or(&c.gpu.value))?;
    let protocol = &project.spec.protocols[&c.protocol.value];
    let mut workloads = Vec::new();
    let mut seen = BTreeSet::new();
    let mut diags = Vec::new();
    for part in &c.parts {
        // The part's own protocol, when it names another than the campaign's.
        let own = match &part.protocol {
            Some(p) if p.value != protocol.name => match project.spec.protocols.get(&p.value) {
                Some(own) => Some(own),
                None => {
                    let (f, t) = &project.artifact_file;
                    let known: Vec<&str> = project.spec.protocols.keys().map(String::as_str).collect();
                    diags.push(Diagnostic::spanned(
                        f,
                        t,
                        p,
                        format!("unknown protocol `{}` for a part; expected one of: {}", p.value, known.join(", ")),
                    ));
                    continue;
                }
            },
            _ => None,
        };
        let part_protocol = own.unwrap_or(protocol);
        let repetitions = match &part.repetitions {
            Some(r) if r.value == 0 => {
                let (f, t) = &project.artifact_file;
                diags.push(Diagnostic::spanned(f, t, r, "`repetitions` must be at least 1".to_string()));
                None
            }
            r => r.as_ref().map(|r| r.value),
        };
        for mut w in select(project, part, gpu, part_protocol, &mut diags) {
            if let Some(r) = repetitions {
                w.repetitions = r;
            }
            if let Some(own) = own {
                w.id.push_str(&ids::protocol_suffix(&own.name));
                w.protocol = Some(protocol_plan(own, 0.0));
            }
            if !seen.insert(w.id.clone()) {
                diags.push(project_diag(
                    project,
                    c,
                    format!("workload `{}` is selected by two parts of campaign `{campaign}`", w.id),
                ));
            }
            workloads.push(w);
        }
    }
    let mut workloads = twins_together(workloads);
    if let Some(h) = &c.headline {
        for w in &mut workloads {
            let models: BTreeSet<&str> = w.jobs.iter().map(|j| j.model.as_str()).collect();
            if w.experiment == h.experiment.value
                && models.iter().all(|m| h.models.iter().any(|x| x.value == *m))
                && h.data.is_none_or(|s| w.data == s.as_str())
            {
                w.headline = true;
                w.repetitions = h.repetitions.max(1);
            }
        }
    }
    apply_repeat(project, c, &mut workloads, &mut diags);
    if let Some(t) = &c.timeline {
        for w in &mut workloads {
            w.timeline = w.experiment == t.experiment.value
                && w.jobs.len() == t.jobs as usize
                && w.jobs.iter().all(|j| t.models.iter().any(|m| m.value == j.model));
        }
    }
    let interleave = mark_interleaved(c, &mut workloads);
    if !diags.is_empty() {
        return Err(Diagnostics(diags));
    }
    let mut plan = finish(project, Some(campaign.to_string()), gpu, protocol, workloads);
    if let Some(i) = interleave {
        plan.interleave = Some(i);
        let (runs, seconds) = estimate::interleaved(&plan, i);
        plan.totals.interleaved_runs = runs;
        plan.totals.interleaved_seconds = seconds;
        plan.totals.estimated_gpu_seconds += seconds;
    }
    Ok(plan)
}

/// The campaign's `repeat`: the repetitions of the workloads each pattern selects; a
/// pattern that selects none is an error at its place.
fn apply_repeat(project: &Project, c: &CampaignDecl, workloads: &mut [PlannedWorkload], diags: &mut Vec<Diagnostic>) {
    let campaign = &c.name.value;
    for r in &c.repeat {
        let (f, t) = &project.artifact_file;
        if r.repetitions.value == 0 {
            diags.push(Diagnostic::spanned(f, t, &r.repetitions, "`repetitions` must be at least 1".to_string()));
            continue;
        }
        for pat in &r.workloads {
            let mut any = false;
            for w in workloads.iter_mut().filter(|w| RepeatDecl::selects(&pat.value, &w.id)) {
                w.repetitions = r.repetitions.value;
                any = true;
            }
            if !any {
                diags.push(Diagnostic::spanned(
                    f,
                    t,
                    pat,
                    format!("`{}` selects no workload of campaign `{campaign}`", pat.value),
                ));
            }
        }
    }
}

/// The campaign's `interleaved_baselines`: its baselines held by the host's CPU marked
/// `interleaved`, and the rule the runner follows; `None` without the declaration.
fn mark_interleaved(c: &CampaignDecl, workloads: &mut [PlannedWorkload]) -> Option<Interleave> {
    c.interleaved_baselines.as_ref().map(|i| {
        for w in workloads.iter_mut().filter(|w| w.is_baseline()) {
            let j = &w.jobs[0];
            w.interleaved = i.data.iter().any(|d| d.as_str() == w.data)
                || i.models.iter().any(|m| m.model.value == j.model && m.batch_size == j.batch_size);
        }
        Interleave { between: i.between.value.max(1), runs_per_invocation: i.runs_per_invocation.value.max(2) }
    })
}

/// The workloads in part order, except that one under a part's own protocol (`<id>~<p>`)
/// comes right after its twin under the campaign's (`<id>`): the runs of one workload under
/// both protocols then follow each other, so an invocation that stops at its time budget
/// rarely leaves a workload measured under one protocol on one host and under the other on
/// another.
fn twins_together(workloads: Vec<PlannedWorkload>) -> Vec<PlannedWorkload> {
    let at: std::collections::BTreeMap<&str, usize> =
        workloads.iter().enumerate().map(|(i, w)| (w.id.as_str(), i)).collect();
    let key: Vec<(usize, usize)> = workloads
        .iter()
        .enumerate()
        .map(|(i, w)| match at.get(ids::workload_base(&w.id)) {
            Some(&t) if w.protocol.is_some() && t != i => (t, i),
            _ => (i, i),
        })
        .collect();
    let mut keyed: Vec<((usize, usize), PlannedWorkload)> = key.into_iter().zip(workloads).collect();
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, w)| w).collect()
}

/// Plans every experiment of the spec under `protocol` on `gpu`, data as declared.
pub fn plan_all(project: &Project, gpu: &str, protocol: &str) -> Result<Plan, Diagnostics> {
    let gpu = gpu_table(project, gpu)?;
    let protocol = project
        .spec
        .protocols
        .get(protocol)
        .ok_or_else(|| one(Diagnostic::file(&project.artifact_file.0, format!("no protocol `{protocol}`"))))?;
    let part = PartDecl {
        experiments: Vec::new(),
        models: None,
        modes: None,
        data: None,
        mig_stand_in: false,
        repetitions: None,
        protocol: None,
        data_fraction: None,
        dataset_fractions: Default::default(),
    };
    let mut diags = Vec::new();
    let mut workloads = Vec::new();
    for e in &project.spec.experiments {
        for w in &e.workloads {
            workloads.extend(expand_workload(project, &part, w, gpu, protocol, &mut diags));
        }
    }
    if !diags.is_empty() {
        return Err(Diagnostics(diags));
    }
    Ok(finish(project, None, gpu, protocol, workloads))
}

fn one(d: Diagnostic) -> Diagnostics {
    Diagnostics(vec![d])
}

fn project_diag(project: &Project, c: &CampaignDecl, msg: String) -> Diagnostic {
    let (f, t) = &project.artifact_file;
    Diagnostic::spanned(f, t, &c.name, msg)
}

pub fn gpu_table<'a>(project: &'a Project, key: &str) -> Result<&'a GpuTable, Diagnostics> {
    project.gpus.get(key).ok_or_else(|| {
        let known: Vec<&str> = project.gpus.keys().map(String::as_str).collect();
        one(Diagnostic::file(
            &shown(&project.root, &project.root.join(colloc_spec::names::GPUS_DIR)),
            format!("unknown GPU `{key}`; expected one of: {}", known.join(", ")),
        ))
    })
}

fn select(
    project: &Project,
    part: &PartDecl,
    gpu: &GpuTable,
    protocol: &Protocol,
    diags: &mut Vec<Diagnostic>,
) -> Vec<PlannedWorkload> {
    let mut out = Vec::new();
    for e in project.spec.experiments.iter().filter(|e| part.experiments.iter().any(|x| x.value == e.id)) {
        for w in &e.workloads {
            if let Some(models) = &part.models {
                if !w.jobs.iter().all(|j| models.iter().any(|m| m.value == j.model)) {
                    continue;
                }
            }
            out.extend(expand_workload(project, part, w, gpu, protocol, diags));
        }
    }
    out
}

/// One declared workload → the planned workload, plus its MPS stand-in if asked for;
/// filtered by the part's modes.
fn expand_workload(
    project: &Project,
    part: &PartDecl,
    w: &colloc_spec::Workload,
    gpu: &GpuTable,
    protocol: &Protocol,
    diags: &mut Vec<Diagnostic>,
) -> Vec<PlannedWorkload> {
    let modes: Option<Vec<Mode>> =
        part.modes.as_ref().map(|ms| ms.iter().filter_map(|m| m.value.parse::<Mode>().ok()).collect());
    let keep = |m: Mode| modes.as_ref().is_none_or(|ms| ms.contains(&m));
    let mut out = Vec::new();
    let Some(base) = plan_workload(project, part, w, w.mode, &w.id, gpu, protocol, diags) else { return out };
    let stand_in = (part.mig_stand_in && w.mode == Mode::Mig && base.feasible)
        .then(|| plan_workload(project, part, w, Mode::MpsLimited, &ids::stand_in(&w.id), gpu, protocol, diags));
    if keep(base.mode) {
        out.push(base);
    }
    if let Some(Some(s)) = stand_in {
        if keep(s.mode) {
            out.push(s);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn plan_workload(
    project: &Project,
    part: &PartDecl,
    w: &colloc_spec::Workload,
    mode: Mode,
    id: &str,
    gpu: &GpuTable,
    protocol: &Protocol,
    diags: &mut Vec<Diagnostic>,
) -> Option<PlannedWorkload> {
    let spec = &project.spec;
    let uses_mig = mode.uses_mig_profiles();
    let mut profiles: Vec<&MigProfile> = Vec::new();
    if uses_mig {
        for j in &w.jobs {
            let (spelled, origin) = j.mig.as_ref()?;
            match gpu.profile(spelled) {
                Some(p) => profiles.push(p),
                None => {
                    diags.push(origin.diagnostic(format!(
                        "MIG profile `{spelled}` does not exist on the {}; it has: {}",
                        gpu.name,
                        gpu.profiles.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                    return None;
                }
            }
        }
    }
    let (feasible, reason) = if uses_mig {
        match gpu.place(&profiles) {
            Ok(_) => (true, None),
            Err(why) => (false, Some(format!("MIG layout cannot be created: {why}"))),
        }
    } else {
        (true, None)
    };
    let source_of = |d: &Dataset| part.data.unwrap_or(d.source);
    let mut jobs = Vec::new();
    for (i, j) in w.jobs.iter().enumerate() {
        let model = &spec.models[&j.model];
        let ds = &spec.datasets[&j.dataset];
        let prof = profiles.get(i).copied();
        jobs.push(PlannedJob {
            model: j.model.clone(),
            model_class: model.class.as_str().to_string(),
            dataset: j.dataset.clone(),
            batch_size: j.batch_size,
            mig_profile: (mode == Mode::Mig).then(|| prof.map(|p| p.name.clone())).flatten(),
            mig_class: j.mig.as_ref().filter(|_| uses_mig).map(|(s, _)| class_of(s)),
            mps_limits: (mode == Mode::MpsLimited).then(|| prof.map(|p| mps_limits(gpu, p))).flatten(),
            mig_slice: prof.map(mig_slice),
            data: job_data(ds, source_of(ds), part.fraction_of(&j.dataset, protocol.data_fraction)),
            training: training(&j.training, j.batch_size, model.input_size),
        });
    }
    let sources: BTreeSet<&str> = jobs.iter().map(|j| source_name(j.data.source)).collect();
    let mut id = id.to_string();
    if let Some(src) = part.data {
        id.push_str(ids::data_suffix(data_source(src)));
    }
    let mut pw = PlannedWorkload {
        id,
        experiment: w.experiment,
        label: w.label.clone(),
        mode,
        feasible,
        reason,
        repetitions: protocol.repetitions,
        data: sources.into_iter().collect::<Vec<_>>().join("+"),
        headline: false,
        timeline: false,
        form: form_of(w),
        radt: w.radt.map(|n| RadtRef { experiment: w.experiment, workload: n }),
        estimated_seconds: 0.0,
        jobs,
        protocol: None,
        interleaved: false,
    };
    pw.estimated_seconds = if pw.feasible { estimate::workload_seconds(&pw, &target(gpu), protocol) } else { 0.0 };
    Some(pw)
}

fn form_of(w: &colloc_spec::Workload) -> WorkloadForm {
    if let Some(m) = &w.mix {
        return WorkloadForm::Mix {
            position: m.position,
            classes: m
                .classes
                .iter()
                .map(|c| MixClass {
                    letter: c.letter.to_string(),
                    count: c.count,
                    model: c.model.clone(),
                    dataset: c.dataset.clone(),
                    batch_size: c.batch_size,
                    mig_class: class_of(&c.mig),
                })
                .collect(),
        };
    }
    let first = &w.jobs[0];
    let alike = w.jobs.iter().all(|j| {
        j.model == first.model
            && j.dataset == first.dataset
            && j.batch_size == first.batch_size
            && j.mig.as_ref().map(|m| &m.0) == first.mig.as_ref().map(|m| &m.0)
    });
    match (w.jobs.len(), alike) {
        (1, _) => WorkloadForm::Single,
        (_, true) => WorkloadForm::Homogeneous,
        (_, false) => WorkloadForm::Listed,
    }
}

/// The MIG profile as a job gets it.
pub fn mig_slice(p: &MigProfile) -> MigSlice {
    MigSlice {
        profile: p.name.clone(),
        compute_slices: p.compute_slices,
        sms: p.sms,
        memory_bytes: (p.memory_gib * GIB).round() as u64,
    }
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

fn class_of(spelled: &str) -> String {
    spelled.split('.').next().unwrap_or(spelled).to_string()
}

pub fn source_name(s: DataSource) -> &'static str {
    match s {
        DataSource::Synthetic => "synthetic",
        DataSource::Generated => "generated",
        DataSource::Imagefolder => "imagefolder",
    }
}

/// MPS caps standing in for a MIG profile: its share of the SMs and its memory.
pub fn mps_limits(gpu: &GpuTable, p: &MigProfile) -> MpsLimits {
    MpsLimits {
        active_thread_percentage: ((p.sms as f64 / gpu.sms as f64) * 100.0).round().clamp(1.0, 100.0) as u32,
        pinned_mem_limit_mib: (p.memory_gib * 1024.0).round() as u64,
        stands_in_for: p.name.clone(),
    }
}

fn data_source(s: Source) -> DataSource {
    match s {
        Source::Synthetic => DataSource::Synthetic,
        Source::Generated => DataSource::Generated,
        Source::Imagefolder => DataSource::Imagefolder,
    }
}

/// A job's data; `fraction`, the share of a generated set's counts, applies to generated data only.
fn job_data(ds: &Dataset, source: Source, fraction: f64) -> JobData {
    let fraction = if source == Source::Generated { fraction } else { 1.0 };
    JobData {
        source: data_source(source),
        name: ds.name.clone(),
        path: match source {
            Source::Synthetic => None,
            Source::Generated => Some(format!("{GENERATED_CACHE}/{}", ds.name)),
            Source::Imagefolder => ds.path.clone(),
        },
        image_size: ds.image_size.or(ds.generated_size).unwrap_or(0),
        train_count: ds.train,
        val_count: ds.val,
        fraction,
        format: match ds.format {
            ImageFormat::Png => "png".into(),
            ImageFormat::Jpeg => "jpeg".into(),
        },
    }
}

/// Training settings with the paper's values wherever the spec says nothing.
pub fn training(t: &TrainingDecl, batch: u32, model_input: Option<u32>) -> Training {
    let d = Training::paper(batch);
    Training {
        lr: t.lr.unwrap_or(d.lr),
        momentum: t.momentum.unwrap_or(d.momentum),
        weight_decay: t.weight_decay.unwrap_or(d.weight_decay),
        label_smoothing: t.label_smoothing.unwrap_or(d.label_smoothing),
        schedule: match t.schedule {
            Some(Schedule::Cosine) => "cosine".into(),
            Some(Schedule::Constant) => "constant".into(),
            None => d.schedule,
        },
        precision: match t.precision {
            Some(Precision::Fp32) => "fp32".into(),
            Some(Precision::Amp) => "amp".into(),
            None => d.precision,
        },
        channels_last: t.channels_last.unwrap_or(d.channels_last),
        workers: t.workers.unwrap_or(d.workers),
        input_size: t.input_size.or(model_input),
        num_classes: t.num_classes.unwrap_or(d.num_classes),
        color_jitter: t.color_jitter.unwrap_or(d.color_jitter),
        validate_every_epoch: t.validate_every_epoch.unwrap_or(d.validate_every_epoch),
        seed: t.seed.unwrap_or(d.seed),
    }
}

fn finish(
    project: &Project,
    campaign: Option<String>,
    gpu: &GpuTable,
    protocol: &Protocol,
    mut workloads: Vec<PlannedWorkload>,
) -> Plan {
    // Each protocol's default timeout counts the longest workload under it.
    let longest = |name: Option<&str>| {
        workloads
            .iter()
            .filter(|w| w.protocol.as_ref().map(|p| p.name.as_str()) == name)
            .map(|w| w.estimated_seconds)
            .fold(0.0, f64::max)
    };
    let own: Vec<(String, f64)> = workloads
        .iter()
        .filter_map(|w| w.protocol.as_ref().map(|p| p.name.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|n| {
            let l = longest(Some(&n));
            (n, l)
        })
        .collect();
    let plan_protocol = protocol_plan(protocol, longest(None));
    for w in &mut workloads {
        if let Some(p) = &mut w.protocol {
            if let (Some(spec), Some((_, l))) =
                (project.spec.protocols.get(&p.name), own.iter().find(|(n, _)| *n == p.name))
            {
                *p = protocol_plan(spec, *l);
            }
        }
    }
    let totals = Totals {
        workloads: workloads.len(),
        jobs: workloads.iter().map(|w| w.jobs.len()).sum(),
        infeasible: workloads.iter().filter(|w| !w.feasible).count(),
        runs: workloads.iter().map(|w| w.repetitions as usize).sum(),
        estimated_gpu_seconds: workloads.iter().map(|w| w.estimated_seconds * w.repetitions as f64).sum(),
        interleaved_runs: 0,
        interleaved_seconds: 0.0,
    };
    Plan {
        plan_version: PLAN_VERSION,
        campaign,
        gpu: target(gpu),
        protocol: plan_protocol,
        workloads,
        totals,
        spec_hash: spec_hash(project),
        interleave: None,
    }
}

/// A protocol as the plan carries it; without its own timeout, three times the longest
/// workload under it (`longest` seconds) plus ten minutes.
fn protocol_plan(protocol: &Protocol, longest: f64) -> RunProtocol {
    let sample_every = protocol.sample_every;
    let kind = match protocol.kind {
        SpecProtocolKind::Epochs { epochs } => ProtocolKind::Epochs { epochs, sample_every },
        SpecProtocolKind::Window {
            warmup_steps,
            window_seconds,
            min_iterations,
            precision_target,
            max_window_seconds,
        } => ProtocolKind::Window {
            warmup_steps,
            window_seconds,
            sample_every,
            min_iterations: Some(min_iterations),
            precision_target,
            max_window_seconds,
        },
    };
    RunProtocol {
        name: protocol.name.clone(),
        kind,
        timeout_seconds: protocol.timeout_seconds.unwrap_or((3.0 * longest + 600.0).round()),
    }
}

/// What the plan carries of a GPU table.
pub fn target(gpu: &GpuTable) -> GpuTarget {
    GpuTarget {
        key: gpu.key.clone(),
        name: gpu.name.clone(),
        sms: gpu.sms,
        memory_gib: gpu.memory_gib,
        compute_slices: gpu.compute_slices,
        memory_slices: gpu.memory_slices,
        power_limit_watts: gpu.power_limit_watts,
        images_per_second: gpu.estimate_images_per_second.clone(),
        profiles: gpu.estimate_profiles.clone(),
    }
}

/// sha256 over every spec file, GPU table and artifact.yaml (path and text).
pub fn spec_hash(project: &Project) -> String {
    let mut h = Sha256::new();
    let mut files: Vec<(String, String)> =
        project.spec.files.iter().map(|(p, t)| (p.display().to_string(), t.clone())).collect();
    files.push((project.artifact_file.0.display().to_string(), project.artifact_file.1.clone()));
    for g in project.gpus.values() {
        files.push((format!("gpu:{}", g.key), serde_json::to_string(g).unwrap_or_default()));
    }
    files.sort();
    for (p, t) in files {
        h.update(p.as_bytes());
        h.update([0]);
        h.update(t.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
