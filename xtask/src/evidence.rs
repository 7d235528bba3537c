//! `cargo xtask reproduce --claim Cn`: one claim's evidence from the analysed traces — the
//! runs its queries read, the values they used, and the rule its grade follows — per data
//! source.

use anyhow::{Context, Result};
use colloc_analysis::Verdict;
use std::fmt::Write;

/// What the evidence is read from: one reproduction's project, plan, results and claims.
pub struct Evidence<'a> {
    pub campaign: &'a str,
    pub project: &'a colloc_spec::Project,
    pub plan: Option<&'a colloc_plan::Plan>,
    pub results: &'a colloc_analysis::Results,
    pub claims: &'a [colloc_analysis::ClaimOutcome],
}

/// The evidence of claim `id` in a reproduction's results.
pub fn render(o: &Evidence, id: &str) -> Result<String> {
    let plan = o.plan.context("the campaign is not declared in artifact.yaml: no plan to select from")?;
    let sel = crate::run::claim_selection(o.project, plan, id)?;
    let spec = o.project.artifact.claims.iter().find(|c| c.id == sel.claim).context("claim")?;
    let c = o.claims.iter().find(|c| c.id == sel.claim).context("claim not evaluated")?;
    let r = o.results;
    let mut s = String::new();
    let w = &mut s;
    writeln!(w, "claim {}: {}", c.id, c.statement)?;
    writeln!(w, "paper: {} ({})", c.paper.text, c.paper.source)?;
    writeln!(
        w,
        "campaign {} on {}: headline grade {}{}",
        o.campaign,
        c.hardware,
        c.verdict.as_str(),
        c.headline_data
            .as_ref()
            .map_or(String::new(), |d| format!(" (from data source {d}, the closest to the paper's measured)"))
    )?;
    match &spec.tolerance {
        Some(t) => writeln!(w, "rule: tolerance {} (artifact.yaml; basis: {})", t.describe(), t.basis.value)?,
        None => writeln!(w, "rule: no tolerance (qualitative): the direction alone grades it")?,
    }
    writeln!(w, "grade: does not hold if a check's value misses its expectation; not run if a check has no value; direction only if a value lies outside the tolerance around the paper's number; else holds")?;
    for src in &c.sources {
        writeln!(w, "\n[data {}] grade {}", src.data, src.verdict.as_str())?;
        for k in &src.checks {
            let value = k.value.map_or("none".to_string(), |v| format!("{v:.3}"));
            writeln!(w, "  check {}({}): value {value} — {}", k.query, k.args, k.detail)?;
            let direction = match k.value {
                None => "no value: not run".to_string(),
                Some(_) if k.verdict == Verdict::DoesNotHold => format!("expected {}: missed", k.expect),
                Some(_) => format!("expected {}: met", k.expect),
            };
            let magnitude = match (k.paper_value, &k.tolerance, k.verdict) {
                (Some(p), Some(t), Verdict::DirectionOnly) => format!("; paper {p}, {t}: outside"),
                (Some(p), Some(t), Verdict::Holds) => format!("; paper {p}, {t}: within"),
                (Some(p), Some(t), _) => format!("; paper {p}, {t}"),
                _ => String::new(),
            };
            writeln!(w, "    {direction}{magnitude} → {}", k.verdict.as_str())?;
        }
        writeln!(w, "  runs read (workload: run id status [aggregate ratio]):")?;
        for (wid, _, _) in
            sel.workloads.iter().filter(|(wid, _, _)| plan.workloads.iter().any(|p| &p.id == wid && p.data == src.data))
        {
            let runs: Vec<String> = r
                .runs
                .iter()
                .filter(|x| &x.workload_id == wid)
                .map(|x| {
                    let ratio = x.aggregate_ratio.map_or(String::new(), |v| format!(" {v:.3}"));
                    let sup = if x.superseded { " superseded" } else { "" };
                    format!("{} {}{sup}{ratio}", x.run_id, x.status.as_str())
                })
                .collect();
            let median = r
                .workload(wid)
                .and_then(|x| x.stats.aggregate_ratio)
                .map_or(String::new(), |m| format!(" (median {:.3})", m.median));
            let runs = if runs.is_empty() { "not run yet".to_string() } else { runs.join(", ") };
            writeln!(w, "    {wid}{median}: {runs}")?;
        }
    }
    Ok(s)
}
