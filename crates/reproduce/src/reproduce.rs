//! The pipeline of `cargo xtask reproduce` from a campaign's traces to its outputs: open the
//! campaign, verify and analyse it (with artifact.yaml's validation campaign when it is the
//! shipped one), grade the claims, render the report's outputs and the appendix, then write
//! them or compare them with those under the output root.

use anyhow::{bail, Result};
use colloc_analysis::{evaluate, ClaimOutcome, Results};
use colloc_plan::Plan;
use colloc_report::{Inputs, Output};
use colloc_spec::gpu::GpuTable;
use colloc_spec::Project;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to reproduce, and where.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// The campaign (default: artifact.yaml's `shipped_campaign`).
    pub campaign: Option<&'a str>,
    /// Its traces (default: the campaign's directory, [`crate::campaign_dir`]).
    pub traces: Option<&'a Path>,
    /// Compare with the files under the output root instead of writing.
    pub check: bool,
    /// The output root (default: the project for the shipped campaign,
    /// `target/reproduce/<campaign>/` for any other, so the committed outputs always stay
    /// those of the shipped traces).
    pub out: Option<&'a Path>,
}

/// What a reproduction produced.
pub struct Outcome {
    pub campaign: String,
    pub claims: Vec<ClaimOutcome>,
    /// `check`: how the outputs under the root differ (empty: up to date). Otherwise: the files written.
    pub changes: Vec<String>,
    pub outputs: usize,
    /// Where the outputs were written or compared.
    pub out_root: PathBuf,
    pub timing: String,
    /// The campaign lacks planned runs: how many.
    pub incomplete: Option<String>,
    /// The analysed results and the campaign's plan (when artifact.yaml declares it).
    pub results: Results,
    pub plan: Option<Plan>,
    pub project: Project,
}

impl Outcome {
    /// What `reproduce --claim` prints its evidence from.
    pub fn evidence(&self) -> crate::evidence::Evidence<'_> {
        crate::evidence::Evidence {
            campaign: &self.campaign,
            project: &self.project,
            plan: self.plan.as_ref(),
            results: &self.results,
            claims: &self.claims,
        }
    }
}

/// The campaign opened: its name, traces and output root.
struct Opened {
    name: String,
    dir: PathBuf,
    out_root: PathBuf,
}

fn open(root: &Path, project: &Project, req: &Request) -> Result<Opened> {
    let artifact = &project.artifact;
    let name = req.campaign.map(str::to_string).unwrap_or_else(|| artifact.shipped_campaign.value.clone());
    let out_root: PathBuf = match req.out {
        Some(o) => o.to_path_buf(),
        None if name == artifact.shipped_campaign.value => root.to_path_buf(),
        None => root.join("target/reproduce").join(&name),
    };
    let dir = match req.traces {
        Some(t) => t.to_path_buf(),
        None => crate::campaign_dir(artifact, root, &name),
    };
    if !dir.is_dir() {
        bail!("campaign {name}: no traces at {} (run it with `cargo xtask run --campaign {name}`)", dir.display());
    }
    Ok(Opened { name, dir, out_root })
}

/// The campaign analysed once, with every campaign's plan and the validation campaign's results.
struct Analysis {
    plans: Vec<(String, Plan)>,
    results: Results,
    validation: Option<(String, Results)>,
    took: Duration,
}

fn analyse(root: &Path, project: &Project, c: &Opened) -> Result<Analysis> {
    let artifact = &project.artifact;
    let t0 = Instant::now();
    // The campaign's plan, as `cargo xtask run` makes it: the analysis reads each run as its
    // planned workload and says what the campaign still lacks. Every campaign's plan, once:
    // the appendix gives their times.
    let plans = crate::plans(project)?;
    let planned = |n: &str| plans.iter().find(|(p, _)| p == n).map(|(_, p)| p);
    let results = colloc_analysis::analyse(&c.dir, planned(&c.name))?;
    // The shipped campaign's outputs also carry the validation campaign's protocol
    // validation (its traces verified like the shipped ones).
    let validation = match &artifact.validation_campaign {
        Some(v) if c.name == artifact.shipped_campaign.value => {
            let vname = v.value.as_str();
            let vdir = crate::campaign_dir(artifact, root, vname);
            if !vdir.is_dir() {
                bail!("validation campaign {vname}: no traces at {}", vdir.display());
            }
            if !results.protocol_validation.is_empty() {
                bail!("campaign {} has a protocol validation of its own; artifact.yaml's validation_campaign {vname} would replace it", c.name);
            }
            let vresults = colloc_analysis::analyse(&vdir, planned(vname))
                .map_err(|e| anyhow::anyhow!("validation campaign {vname}: {e:#}"))?;
            Some((vname.to_string(), vresults))
        }
        _ => None,
    };
    Ok(Analysis { plans, results, validation, took: t0.elapsed() })
}

/// The report's outputs (tables, figures, claims, report) of analysed results, in memory:
/// with the project's GPU tables, the paper's GPU and artifact.yaml's layout.
pub fn report_outputs(
    project: &Project,
    results: &Results,
    claims: &[ClaimOutcome],
    validation: Option<&Results>,
) -> Result<Vec<Output>> {
    let gpus: Vec<GpuTable> = project.gpus.values().cloned().collect();
    let inputs = Inputs { results, claims, gpus: &gpus, paper_gpu: crate::paper_gpu(project), validation };
    colloc_report::outputs(&inputs, &crate::layout(&project.artifact))
}

/// Every output file of the analysed campaign, sorted by path: the report's and the appendix.
fn render(project: &Project, c: &Opened, a: &Analysis, claims: &[ClaimOutcome]) -> Result<Vec<Output>> {
    let mut outputs = report_outputs(project, &a.results, claims, a.validation.as_ref().map(|(_, v)| v))?;
    let appendix = crate::appendix::render(&crate::appendix::Inputs {
        project,
        plans: &a.plans,
        campaign: &c.name,
        traces: &c.dir,
        results: &a.results,
        claims,
        validation: a.validation.as_ref().map(|(n, r)| (n.as_str(), r)),
    })?;
    outputs.push(Output { path: crate::appendix::PATH.to_string(), bytes: appendix.into_bytes() });
    outputs.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(outputs)
}

/// Verifies, analyses and renders a campaign of the project at `root`; writes the outputs,
/// or with `check` compares them with those under the output root.
pub fn reproduce(root: &Path, req: &Request) -> Result<Outcome> {
    let project = colloc_spec::load_project(root)?;
    let c = open(root, &project, req)?;
    let a = analyse(root, &project, &c)?;
    let claims = evaluate(&a.results, &project.artifact.claims)?;
    let t1 = Instant::now();
    let outputs = render(&project, &c, &a, &claims)?;
    let t_render = t1.elapsed();
    let t2 = Instant::now();
    let layout = crate::layout(&project.artifact);
    let changes = if req.check {
        colloc_report::stale(&c.out_root, &outputs, &layout)?
    } else {
        colloc_report::write(&c.out_root, &outputs, &layout)?
    };
    let timing = format!(
        "timing: verify + analyse {:.2} s ({} runs{}), render {:.2} s ({} files), {} {:.2} s",
        a.took.as_secs_f64(),
        a.results.runs.len(),
        a.validation.as_ref().map_or(String::new(), |(n, v)| format!(", and {} of {n}", v.runs.len())),
        t_render.as_secs_f64(),
        outputs.len(),
        if req.check { "compare" } else { "write" },
        t2.elapsed().as_secs_f64()
    );
    let incomplete = a.results.incomplete();
    let plan = a.plans.iter().find(|(n, _)| *n == c.name).map(|(_, p)| p.clone());
    Ok(Outcome {
        campaign: c.name,
        claims,
        changes,
        outputs: outputs.len(),
        out_root: c.out_root,
        timing,
        incomplete,
        results: a.results,
        plan,
        project,
    })
}

#[cfg(test)]
mod tests {
    /// The committed figures, tables and report are what the shipped traces give.
    #[test]
    fn committed_outputs_are_up_to_date() {
        let root = colloc_spec::names::project_root().unwrap();
        let Ok(project) = colloc_spec::load_project(&root) else {
            panic!("artifact.yaml or the specs do not load: run `cargo xtask validate`");
        };
        let shipped = project.artifact.shipped_campaign.value.clone();
        assert!(
            root.join("data").join(&shipped).join("SHA256SUMS").exists(),
            "the shipped campaign data/{shipped}/ is missing"
        );
        let o = super::reproduce(&root, &super::Request { check: true, ..Default::default() }).unwrap();
        assert!(o.changes.is_empty(), "outputs are stale; run `cargo xtask reproduce`:\n{}", o.changes.join("\n"));
    }

    /// The shipped campaign's outputs carry the protocol validation of artifact.yaml's
    /// `validation_campaign`: its table (naming that campaign), its figure, both in the
    /// report; another campaign's outputs do not.
    #[test]
    fn the_shipped_outputs_carry_the_validation_campaigns_protocol_validation() {
        let root = colloc_spec::names::project_root().unwrap();
        let d = tempfile::tempdir().unwrap();
        let o = super::reproduce(&root, &super::Request { out: Some(d.path()), ..Default::default() }).unwrap();
        let v = o.project.artifact.validation_campaign.as_ref().expect("artifact.yaml names one").value.clone();
        let md = std::fs::read_to_string(d.path().join("paper/tables/protocol_validation.md")).unwrap();
        assert!(md.contains(&format!("in the same campaign (`{v}`)")), "{md}");
        let svg = std::fs::read_to_string(d.path().join("figures/protocol_validation.svg")).unwrap();
        assert!(svg.contains(&v), "the figure names its campaign");
        let html = std::fs::read_to_string(d.path().join("paper/report.html")).unwrap();
        assert!(
            html.contains("id=\"figure-protocol_validation\"") && html.contains("id=\"table-protocol_validation\"")
        );
        let appendix = std::fs::read_to_string(d.path().join(crate::appendix::PATH)).unwrap();
        assert!(
            appendix.contains(&format!("## A.4 The quick protocol against whole epochs\n\nCampaign `{v}`")),
            "{appendix}"
        );

        let other = tempfile::tempdir().unwrap();
        super::reproduce(
            &root,
            &super::Request { campaign: Some("h200-quick"), out: Some(other.path()), ..Default::default() },
        )
        .unwrap();
        assert!(!other.path().join("paper/tables/protocol_validation.md").exists());
        assert!(!other.path().join("figures/protocol_validation.svg").exists());
    }

    fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }

    /// A campaign from a stranger whose checksums match but whose trace is damaged: the
    /// reproduction stops with one paragraph naming the campaign, the run, the file, the
    /// line and what is wrong (what `cargo xtask reproduce` prints after `error:`, exiting 1).
    #[test]
    fn a_damaged_trace_stops_the_reproduction_with_one_paragraph() {
        let root = colloc_spec::names::project_root().unwrap();
        let d = tempfile::tempdir().unwrap();
        let project = d.path();
        std::fs::copy(root.join("artifact.yaml"), project.join("artifact.yaml")).unwrap();
        copy_dir(&root.join("experiments"), &project.join("experiments"));
        let run = "e37-M+S-mps@syn.r1";
        let campaign = project.join("data/stranger");
        let run_dir = campaign.join("runs").join(run);
        copy_dir(&root.join("data/h200-quick/runs").join(run), &run_dir);
        // Line 5 of job 1's log: a negative time.
        let log = run_dir.join("job-1.events.jsonl");
        let text = std::fs::read_to_string(&log).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        assert!(lines[4].starts_with("{\"mono\": "), "{}", lines[4]);
        lines[4] = lines[4].replacen("{\"mono\": ", "{\"mono\": -", 1);
        std::fs::write(&log, lines.join("\n") + "\n").unwrap();
        colloc_trace::manifest::add_dir(&campaign, "runs").unwrap();

        let out = d.path().join("out");
        let r = super::reproduce(
            project,
            &super::Request { campaign: Some("stranger"), out: Some(&out), ..Default::default() },
        );
        let Err(e) = r else {
            panic!("a damaged campaign was reproduced");
        };
        let message = format!("{e:#}");
        assert!(!message.contains('\n'), "{message}");
        assert!(
            message.starts_with(&format!("campaign stranger: run {run} is unreadable, nothing was analysed: "))
                && message.contains(&format!("runs/{run}/job-1.events.jsonl: line 5: mono is -")),
            "{message}"
        );
        assert!(!out.exists(), "nothing is written for a campaign that cannot be analysed");
    }
    /// C7's evidence names runs of the shipped traces, and its values are the claims table's.
    #[test]
    fn claim_evidence_names_shipped_runs_and_the_claims_values() {
        let root = colloc_spec::names::project_root().unwrap();
        let shipped = colloc_spec::load_project(&root).unwrap().artifact.shipped_campaign.value;
        let o = super::reproduce(&root, &super::Request { check: true, ..Default::default() }).unwrap();
        for id in ["C7", "C1", "C2"] {
            let text = crate::evidence::render(&o.evidence(), id).unwrap();
            let c = o.claims.iter().find(|c| c.id == id).unwrap();
            assert!(text.contains(&format!("headline grade {}", c.verdict.as_str())), "{text}");
            for s in &c.sources {
                assert!(text.contains(&format!("[data {}] grade {}", s.data, s.verdict.as_str())), "{text}");
                for k in &s.checks {
                    if let Some(v) = k.value {
                        assert!(text.contains(&format!("value {v:.3} — {}", k.detail)), "{text}");
                    }
                }
            }
            let named: Vec<&str> = text.split_whitespace().filter(|w| w.contains('@') && w.contains(".r")).collect();
            assert!(!named.is_empty(), "{text}");
            for run in named {
                let run = run.trim_end_matches([',', ':']);
                assert!(o.results.runs.iter().any(|r| r.run_id == run), "{run} is not a shipped run");
                assert!(root.join("data").join(&shipped).join("runs").join(run).is_dir(), "{run}");
            }
        }
        assert!(text_has_rule(&crate::evidence::render(&o.evidence(), "C7").unwrap()));
    }

    fn text_has_rule(t: &str) -> bool {
        t.contains("rule: tolerance ±0.5 (artifact.yaml; basis:")
    }

    /// The appendix is among the outputs, the same on every render, and names every claim
    /// with its commands and artifact.yaml's tolerance.
    #[test]
    fn the_appendix_is_generated_with_every_claim() {
        let root = colloc_spec::names::project_root().unwrap();
        let o = super::reproduce(&root, &super::Request { check: true, ..Default::default() }).unwrap();
        let text = std::fs::read_to_string(root.join(crate::appendix::PATH)).unwrap();
        for c in &o.project.artifact.claims {
            assert!(text.contains(&format!("`cargo xtask run --claim {0}`", c.id)), "{}", c.id);
            assert!(text.contains(&format!("`cargo xtask reproduce --claim {0}`", c.id)), "{}", c.id);
            if let Some(t) = &c.tolerance {
                assert!(text.contains(&t.basis.value), "{}", c.id);
            }
        }
        assert!(!text.contains(root.to_str().unwrap()), "an absolute path in the appendix");
        let again = super::reproduce(&root, &super::Request { check: true, ..Default::default() }).unwrap();
        assert!(again.changes.is_empty() && o.changes.is_empty(), "{:?}", o.changes);
    }
}
