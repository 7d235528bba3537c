//! One claim's evidence from the analysed traces — the
//! runs its queries read, the values they used, and the rule its grade follows — per data
//! source. Plain text: what came with the traces (the hardware, data sources, details,
//! reasons) is kept to one line ([`line`]).

use anyhow::{Context, Result};
use colloc_report::escape::line;
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
    let sel = crate::claim_selection(o.project, plan, id)?;
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
        line(o.campaign),
        line(&c.hardware),
        c.verdict.as_str(),
        c.headline_data
            .as_ref()
            .map_or(String::new(), |d| format!(" (from data source {}, the closest to the paper's measured)", line(d)))
    )?;
    match &spec.tolerance {
        Some(t) => writeln!(w, "rule: tolerance {} (artifact.yaml; basis: {})", t.describe(), t.basis.value)?,
        None => writeln!(w, "rule: no tolerance (qualitative): the direction alone grades it")?,
    }
    writeln!(w, "grade of a check: not run if it has no value; by construction if it reads no measurement (the MIG placement rules answer it) and its value meets the expectation; with a 95 % interval (widened to hold the value), does not hold if all of it misses the expectation, inconclusive if it straddles the threshold, else inconclusive if it straddles an edge of the tolerance around the paper's number, direction only if it lies outside it, else holds; without one the value alone decides")?;
    writeln!(w, "grade of the claim: the first of does not hold, not run, inconclusive, direction only, holds, by construction that one of its checks has")?;
    for src in &c.sources {
        writeln!(w, "\n[data {}] grade {}", line(&src.data), src.verdict.as_str())?;
        for k in &src.checks {
            let value = k.value.map_or("none".to_string(), |v| format!("{v:.3}"));
            let stand_in = if k.stand_in { " (stand-in)" } else { "" };
            writeln!(w, "  check {}({}): value {value} — {}{stand_in}", k.query, k.args, line(&k.detail))?;
            match (k.value, k.interval) {
                (Some(_), Some([lo, hi])) => writeln!(w, "    95 % interval [{lo:.3}, {hi:.3}]")?,
                (Some(_), None) if k.by_construction => {
                    writeln!(w, "    no interval: read from the plan's MIG placement rules, not measured")?
                }
                (Some(_), None) => writeln!(w, "    no interval: a share or a count")?,
                (None, _) => {}
            }
            for (id, why) in &k.picked_implausible {
                writeln!(w, "    the value comes from {}, marked implausible: {}", line(id), reasons(why))?;
            }
            writeln!(w, "    expected {}; threshold {}", k.expect, k.threshold_basis)?;
            if let (Some(p), Some(t)) = (k.paper_value, &k.tolerance) {
                writeln!(w, "    paper {p}, {t}")?;
            }
            writeln!(w, "    {} → {}", k.reason, k.verdict.as_str())?;
            writeln!(
                w,
                "    workloads read: {}, {} marked implausible{}",
                k.workloads_read,
                k.read_implausible.len(),
                if k.read_implausible.is_empty() { "" } else { " (§ below)" }
            )?;
        }
        let read: Vec<&str> = sel
            .workloads
            .iter()
            .filter(|(wid, _, _)| plan.workloads.iter().any(|p| &p.id == wid && p.data == src.data))
            .map(|(wid, _, _)| wid.as_str())
            .collect();
        let marked: Vec<&str> =
            read.iter().copied().filter(|wid| r.workload(wid).is_some_and(|x| !x.implausible.is_empty())).collect();
        writeln!(
            w,
            "  runs read (workload: run id status [STP]; § marked implausible, with the reasons): {} workloads, {} marked implausible",
            read.len(),
            marked.len()
        )?;
        for wid in read {
            let runs: Vec<String> = r
                .runs
                .iter()
                .filter(|x| x.workload_id == wid)
                .map(|x| {
                    let ratio = x.aggregate_ratio.map_or(String::new(), |v| format!(" {v:.3}"));
                    let sup = if x.superseded { " superseded" } else { "" };
                    format!("{} {}{sup}{ratio}", line(&x.run_id), x.status.as_str())
                })
                .collect();
            let median = r
                .workload(wid)
                .and_then(|x| x.stats.aggregate_ratio)
                .map_or(String::new(), |m| format!(" (median {:.3})", m.median));
            let runs = if runs.is_empty() { "not run yet".to_string() } else { runs.join(", ") };
            let why = r
                .workload(wid)
                .filter(|x| !x.implausible.is_empty())
                .map_or(String::new(), |x| format!(" § implausible: {}", reasons(&x.implausible)));
            writeln!(w, "    {wid}{median}: {runs}{why}")?;
        }
    }
    Ok(s)
}

/// The analysis's reasons a workload is implausible, the runs a reason ends with in
/// parentheses listed after a colon (`…to settle the host: e33-…@gen.r5`), so that each
/// run id stands as a word of its own.
fn reasons(why: &[String]) -> String {
    why.iter()
        .map(|r| match r.strip_suffix(')').and_then(|t| t.rsplit_once(" (")) {
            Some((text, runs)) if runs.contains('@') => format!("{text}: {runs}"),
            _ => r.clone(),
        })
        .map(|r| line(&r))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    /// C7 on the shipped campaign: its value is the mps-limited stand-in's, marked; it
    /// carries its interval; the threshold says it is ours; the implausible workloads it
    /// read are counted and each is named with its reasons.
    #[test]
    fn c7_evidence_marks_the_stand_in_interval_and_implausible_workloads() {
        let root = colloc_spec::names::project_root().unwrap();
        let o = crate::reproduce(&root, &crate::Request { check: true, ..Default::default() }).unwrap();
        let text = super::render(&o.evidence(), "C7").unwrap();
        let c7 = o.claims.iter().find(|c| c.id == "C7").unwrap();
        let head = c7.headline().unwrap();
        let k = &head.checks[0];
        assert!(k.stand_in, "{k:?}");
        let value = text.lines().find(|l| l.contains(&format!("value {:.3} — ", k.value.unwrap()))).unwrap();
        assert!(value.ends_with(" (stand-in)"), "{value}");
        let [lo, hi] = k.interval.unwrap();
        assert!(text.contains(&format!("95 % interval [{lo:.3}, {hi:.3}]")), "{text}");
        assert!(text.contains("threshold ours, not the paper's: "), "{text}");
        assert!(text.contains(&format!("{} → {}", k.reason, k.verdict.as_str())), "{text}");
        assert!(
            text.contains(&format!(
                "workloads read: {}, {} marked implausible",
                k.workloads_read,
                k.read_implausible.len()
            )),
            "{text}"
        );
        for id in k.picked_implausible.keys() {
            assert!(text.contains(&format!("the value comes from {id}, marked implausible: ")), "{text}");
        }
        let marked = o
            .results
            .workloads
            .iter()
            .filter(|w| !w.implausible.is_empty() && text.contains(&format!("    {} ", w.id)))
            .count();
        assert_eq!(text.matches(" § implausible: ").count(), marked, "{text}");
    }
}
