//! `cargo xtask reproduce`: verify the traces, analyse them, regenerate `figures/` and
//! `paper/`, print the claims.
//!
//! Needs no GPU. The campaign is `--campaign NAME` or the one `artifact.yaml` ships
//! (`shipped_campaign`); its traces are `data/<name>/` (or the campaign's `out`). A trace
//! that differs from its `SHA256SUMS` stops everything with an error naming the files.
//! `--check` regenerates in memory and fails if the files under the project differ.
//! `--json` prints one JSON document to stdout instead of the claims table
//! (`colloc_report::json::ReproduceDocument`, `schemas/reproduce.schema.json`); the notes
//! and the timing go to stderr.

use anyhow::{bail, Result};
use colloc_analysis::{evaluate, ClaimOutcome};
use colloc_report::{Inputs, Layout};
use colloc_spec::gpu::GpuTable;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Campaign to analyse (default: artifact.yaml's `shipped_campaign`).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Run the campaign on this machine's GPU first.
    #[arg(long)]
    pub run: bool,
    /// Do not write: fail if the outputs under the project are not what the traces give.
    #[arg(long)]
    pub check: bool,
    /// Write the outputs under this folder (same layout) instead of the project. Default:
    /// the project for the shipped campaign, `target/reproduce/<campaign>/` for any other,
    /// so the committed outputs always stay those of the shipped traces.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Read the campaign's traces from this directory (default: the campaign's `out` in
    /// artifact.yaml, or data/<campaign>), e.g. a subset of it run elsewhere.
    #[arg(long)]
    pub traces: Option<PathBuf>,
    /// Print this claim's evidence (C1…C9) from the analysed traces: the runs, the values
    /// its queries used and the rule of its grade, per data source. Writes nothing.
    #[arg(long, conflicts_with_all = ["run", "check", "out"])]
    pub claim: Option<String>,
    /// Print one JSON document to stdout instead of the claims table
    /// (schemas/reproduce.schema.json): the run counts, the outputs and every claim's grades
    /// and checks. The notes and the timing go to stderr; the exit status is unchanged.
    #[arg(long, conflicts_with_all = ["run", "claim"])]
    pub json: bool,
}

/// What a reproduction produced.
pub struct Outcome {
    pub campaign: String,
    pub claims: Vec<ClaimOutcome>,
    /// `--check`: how the project's outputs differ (empty: up to date). Otherwise: the files written.
    pub changes: Vec<String>,
    pub outputs: usize,
    /// Where the outputs were written or compared.
    pub out_root: PathBuf,
    pub timing: String,
    /// The campaign lacks planned runs: how many.
    pub incomplete: Option<String>,
    /// The analysed results and the campaign's plan (when artifact.yaml declares it).
    pub results: colloc_analysis::Results,
    pub plan: Option<colloc_plan::Plan>,
    pub project: colloc_spec::Project,
}

impl Outcome {
    /// What `--claim` prints its evidence from.
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

pub fn main(a: Args) -> Result<ExitCode> {
    let root = crate::project_root()?;
    if a.run {
        // First what the campaign lacks, on this machine's GPU (runs already made are kept).
        let name = match &a.campaign {
            Some(c) => c.clone(),
            None => colloc_spec::load_project(&root)?.artifact.shipped_campaign.value,
        };
        let code = crate::run::main(crate::run::Args::for_campaign(&name))?;
        if code != ExitCode::SUCCESS {
            eprintln!("the run of campaign {name} did not complete; nothing was reproduced");
            return Ok(code);
        }
    }
    if let Some(id) = &a.claim {
        let o = reproduce_traces(&root, a.campaign.as_deref(), a.traces.as_deref(), true, None)?;
        print!("{}", crate::evidence::render(&o.evidence(), id)?);
        return Ok(ExitCode::SUCCESS);
    }
    let o = reproduce_traces(&root, a.campaign.as_deref(), a.traces.as_deref(), a.check, a.out.as_deref())?;
    // With --json, stdout holds the document alone and the human lines go to stderr.
    let say = |line: String| if a.json { eprintln!("{line}") } else { println!("{line}") };
    if a.json {
        let outputs = colloc_report::json::OutputCounts {
            check: a.check,
            root: o.out_root.display().to_string(),
            files: o.outputs,
            changed: o.changes.len(),
            changes: o.changes.clone(),
        };
        let doc = colloc_report::json::reproduce_document(&o.campaign, &o.results, &o.claims, outputs);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", colloc_report::claims_console(&o.claims));
    }
    if let Some(note) = &o.incomplete {
        say(format!("note: incomplete campaign: {note}; the verdicts cover the runs made so far"));
    }
    say(o.timing.clone());
    if a.check {
        if o.changes.is_empty() {
            say(format!("outputs are up to date with campaign {}", o.campaign));
            Ok(ExitCode::SUCCESS)
        } else {
            eprintln!("outputs are stale (run `cargo xtask reproduce` and commit the result):");
            for c in &o.changes {
                eprintln!("  {c}");
            }
            Ok(ExitCode::FAILURE)
        }
    } else {
        say(format!("{} of {} output files rewritten under {}", o.changes.len(), o.outputs, o.out_root.display()));
        Ok(ExitCode::SUCCESS)
    }
}

/// Verifies, analyses and renders `campaign` (default: the shipped one) of the project at
/// `root`; writes the outputs (under `out`, see [`Args::out`]) unless `check`.
pub fn reproduce(root: &Path, campaign: Option<&str>, check: bool, out: Option<&Path>) -> Result<Outcome> {
    reproduce_traces(root, campaign, None, check, out)
}

/// [`reproduce`] of the traces in `traces` (default: the campaign's directory).
pub fn reproduce_traces(
    root: &Path,
    campaign: Option<&str>,
    traces: Option<&Path>,
    check: bool,
    out: Option<&Path>,
) -> Result<Outcome> {
    let project = colloc_spec::load_project(root)?;
    let artifact = &project.artifact;
    let name = campaign.map(str::to_string).unwrap_or_else(|| artifact.shipped_campaign.value.clone());
    let out_root: PathBuf = match out {
        Some(o) => o.to_path_buf(),
        None if name == artifact.shipped_campaign.value => root.to_path_buf(),
        None => root.join("target/reproduce").join(&name),
    };
    let dir = match traces {
        Some(t) => t.to_path_buf(),
        None => crate::campaign_dir(artifact, root, &name),
    };
    if !dir.is_dir() {
        bail!("campaign {name}: no traces at {} (run it with `cargo xtask run --campaign {name}`)", dir.display());
    }

    let t0 = Instant::now();
    // The campaign's plan, as `cargo xtask run` makes it: the analysis reads each run as its
    // planned workload and says what the campaign still lacks.
    // Every campaign's plan, once: the appendix gives their times.
    let mut plans = Vec::new();
    for c in &artifact.campaigns {
        let n = &c.name.value;
        plans.push((n.clone(), colloc_plan::plan_project_campaign(&project, n, None)?));
    }
    let planned = |n: &str| plans.iter().find(|(p, _)| p == n).map(|(_, p)| p);
    let plan = planned(&name).cloned();
    let results = colloc_analysis::analyse(&dir, plan.as_ref())?;
    // The shipped campaign's outputs also carry the validation campaign's protocol
    // validation (its traces verified like the shipped ones).
    let validation = match &artifact.validation_campaign {
        Some(v) if name == artifact.shipped_campaign.value => {
            let vname = v.value.as_str();
            let vdir = crate::campaign_dir(artifact, root, vname);
            if !vdir.is_dir() {
                bail!("validation campaign {vname}: no traces at {}", vdir.display());
            }
            if !results.protocol_validation.is_empty() {
                bail!("campaign {name} has a protocol validation of its own; artifact.yaml's validation_campaign {vname} would replace it");
            }
            let vresults = colloc_analysis::analyse(&vdir, planned(vname))
                .map_err(|e| anyhow::anyhow!("validation campaign {vname}: {e:#}"))?;
            Some((vname, vresults))
        }
        _ => None,
    };
    let t_analyse = t0.elapsed();

    let claims = evaluate(&results, &artifact.claims)?;
    let gpus: Vec<GpuTable> = project.gpus.values().cloned().collect();
    // The paper's GPU: the one its own campaign targets.
    let paper_gpu = artifact
        .campaigns
        .iter()
        .find(|c| c.name.value == "paper")
        .and_then(|c| gpus.iter().find(|g| g.key == c.gpu.value));
    let layout = Layout {
        tables: artifact.outputs.tables.clone(),
        figures: artifact.outputs.figures.clone(),
        claims: artifact.outputs.claims.clone(),
        report: artifact.outputs.report.clone(),
    };
    let t1 = Instant::now();
    let mut outputs = colloc_report::outputs(
        &Inputs {
            results: &results,
            claims: &claims,
            gpus: &gpus,
            paper_gpu,
            validation: validation.as_ref().map(|(_, v)| v),
        },
        &layout,
    )?;
    // The artifact appendix, beside the other outputs: every campaign's plan for its times.
    let appendix = crate::appendix::render(&crate::appendix::Inputs {
        project: &project,
        plans: &plans,
        campaign: &name,
        traces: &dir,
        results: &results,
        claims: &claims,
        validation: validation.as_ref().map(|(n, r)| (*n, r)),
    })?;
    outputs.push(colloc_report::Output { path: crate::appendix::PATH.to_string(), bytes: appendix.into_bytes() });
    outputs.sort_by(|a, b| a.path.cmp(&b.path));
    let t_render = t1.elapsed();
    let t2 = Instant::now();
    let changes = if check {
        colloc_report::stale(&out_root, &outputs, &layout)?
    } else {
        colloc_report::write(&out_root, &outputs, &layout)?
    };
    let t_write = t2.elapsed();
    let timing = format!(
        "timing: verify + analyse {:.2} s ({} runs{}), render {:.2} s ({} files), {} {:.2} s",
        t_analyse.as_secs_f64(),
        results.runs.len(),
        validation.as_ref().map_or(String::new(), |(n, v)| format!(", and {} of {n}", v.runs.len())),
        t_render.as_secs_f64(),
        outputs.len(),
        if check { "compare" } else { "write" },
        t_write.as_secs_f64()
    );
    let incomplete = results.incomplete();
    Ok(Outcome {
        campaign: name,
        claims,
        changes,
        outputs: outputs.len(),
        out_root,
        timing,
        incomplete,
        results,
        plan,
        project,
    })
}

#[cfg(test)]
mod tests {
    /// The committed figures, tables and report are what the shipped traces give.
    #[test]
    fn committed_outputs_are_up_to_date() {
        let root = crate::project_root().unwrap();
        let Ok(project) = colloc_spec::load_project(&root) else {
            panic!("artifact.yaml or the specs do not load: run `cargo xtask validate`");
        };
        let shipped = project.artifact.shipped_campaign.value.clone();
        assert!(
            root.join("data").join(&shipped).join("SHA256SUMS").exists(),
            "the shipped campaign data/{shipped}/ is missing"
        );
        let o = super::reproduce(&root, None, true, None).unwrap();
        assert!(o.changes.is_empty(), "outputs are stale; run `cargo xtask reproduce`:\n{}", o.changes.join("\n"));
    }

    /// The shipped campaign's outputs carry the protocol validation of artifact.yaml's
    /// `validation_campaign`: its table (naming that campaign), its figure, both in the
    /// report; another campaign's outputs do not.
    #[test]
    fn the_shipped_outputs_carry_the_validation_campaigns_protocol_validation() {
        let root = crate::project_root().unwrap();
        let d = tempfile::tempdir().unwrap();
        let o = super::reproduce(&root, None, false, Some(d.path())).unwrap();
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
        super::reproduce(&root, Some("h200-quick"), false, Some(other.path())).unwrap();
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
        let root = crate::project_root().unwrap();
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
        let r = super::reproduce(project, Some("stranger"), false, Some(&out));
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
        let root = crate::project_root().unwrap();
        let shipped = colloc_spec::load_project(&root).unwrap().artifact.shipped_campaign.value;
        let o = super::reproduce_traces(&root, None, None, true, None).unwrap();
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
        let root = crate::project_root().unwrap();
        let o = super::reproduce_traces(&root, None, None, true, None).unwrap();
        let text = std::fs::read_to_string(root.join(crate::appendix::PATH)).unwrap();
        for c in &o.project.artifact.claims {
            assert!(text.contains(&format!("`cargo xtask run --claim {0}`", c.id)), "{}", c.id);
            assert!(text.contains(&format!("`cargo xtask reproduce --claim {0}`", c.id)), "{}", c.id);
            if let Some(t) = &c.tolerance {
                assert!(text.contains(&t.basis.value), "{}", c.id);
            }
        }
        assert!(!text.contains(root.to_str().unwrap()), "an absolute path in the appendix");
        let again = super::reproduce_traces(&root, None, None, true, None).unwrap();
        assert!(again.changes.is_empty() && o.changes.is_empty(), "{:?}", o.changes);
    }
}
