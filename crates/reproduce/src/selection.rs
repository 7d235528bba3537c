//! Workloads chosen from a plan: those one claim reads (`run --claim`, the appendix, the
//! evidence) and the smoke subset (`smoke`, `run --smoke`).

use anyhow::{bail, Result};
use colloc_plan::{Plan, PlannedWorkload};
use colloc_spec::Project;
use colloc_trace::Mode;

/// The workloads of `smoke`'s run phase and of `run --smoke`: for every mode the plan runs,
/// one feasible workload (the plan's headline workload of that mode with the most jobs, else
/// the plan's first of that mode), as the run ids of their first repetition, in mode order.
pub fn smoke_subset(plan: &Plan) -> Vec<String> {
    let mut ids = Vec::new();
    for mode in [Mode::Exclusive, Mode::Naive, Mode::Mps, Mode::MpsLimited, Mode::Mig] {
        let of_mode = || plan.workloads.iter().filter(move |w| w.mode == mode && w.feasible);
        // The first of the most jobs among the headline workloads.
        let headline = of_mode().filter(|w| w.headline).fold(None::<&PlannedWorkload>, |best, w| match best {
            Some(b) if b.jobs.len() >= w.jobs.len() => Some(b),
            _ => Some(w),
        });
        let pick = match mode {
            Mode::Naive | Mode::Mps => headline.or_else(|| of_mode().next()),
            _ => of_mode().next(),
        };
        if let Some(w) = pick {
            ids.push(format!("{}.r1", w.id));
        }
    }
    ids
}

/// The workloads one claim reads in a plan, with their estimated GPU time.
pub struct ClaimSelection {
    pub claim: String,
    pub campaign: String,
    /// (workload id, repetitions, estimated seconds per repetition), in plan order.
    pub workloads: Vec<(String, u32, f64)>,
}

impl ClaimSelection {
    /// Estimated GPU seconds of every repetition of the selected workloads.
    pub fn estimated_seconds(&self) -> f64 {
        self.workloads.iter().map(|(_, n, s)| f64::from(*n) * s).sum()
    }

    /// What `run --claim` prints: the claim, its campaign, its workloads and their times.
    pub fn render(&self) -> String {
        let runs: u32 = self.workloads.iter().map(|(_, n, _)| n).sum();
        let mut s = format!(
            "claim {} on campaign {}: {} workloads, {runs} runs, estimated GPU time {} (plan `estimated_seconds` x repetitions)\n",
            self.claim,
            self.campaign,
            self.workloads.len(),
            crate::duration(self.estimated_seconds()),
        );
        for (w, n, e) in &self.workloads {
            s.push_str(&format!("  {w}  x{n}  {e:.0} s each\n"));
        }
        s
    }
}

/// The workloads of `plan` that claim `id` reads ([`colloc_analysis::claim_workloads`]).
pub fn claim_selection(project: &Project, plan: &Plan, id: &str) -> Result<ClaimSelection> {
    let Some(claim) = project.artifact.claims.iter().find(|c| c.id.eq_ignore_ascii_case(id)) else {
        let known: Vec<&str> = project.artifact.claims.iter().map(|c| c.id.as_str()).collect();
        bail!("no claim `{id}` in artifact.yaml (known: {})", known.join(", "));
    };
    let ids = colloc_analysis::claim_workloads(claim, plan)?;
    let workloads = plan
        .workloads
        .iter()
        .filter(|w| ids.contains(&w.id))
        .map(|w| (w.id.clone(), w.repetitions, w.estimated_seconds))
        .collect();
    Ok(ClaimSelection {
        claim: claim.id.clone(),
        campaign: plan.campaign.clone().unwrap_or_else(|| "(none)".into()),
        workloads,
    })
}

#[cfg(test)]
mod tests {
    fn project() -> colloc_spec::Project {
        colloc_spec::load_project(&colloc_spec::names::project_root().unwrap()).unwrap()
    }

    /// `--claim C7` selects, from the h200-quick plan, the 7 × resnet26 MIG workload, its
    /// mps-limited stand-in (both data sources) and resnet26 alone on each: nothing else.
    #[test]
    fn claim_c7_selects_its_workloads_in_h200_quick() {
        let project = project();
        let plan = colloc_plan::plan_project_campaign(&project, "h200-quick", None).unwrap();
        let sel = super::claim_selection(&project, &plan, "C7").unwrap();
        let ids: Vec<&str> = sel.workloads.iter().map(|(w, _, _)| w.as_str()).collect();
        let mut want = vec![
            "e33-resnet26-cifar10-x1-exclusive@gen",
            "e33-resnet26-cifar10-x1-exclusive@syn",
            "e33-resnet26-cifar10-x7-mig1g@syn",
            "e33-resnet26-cifar10-x7-mpslim1g@gen",
            "e33-resnet26-cifar10-x7-mpslim1g@syn",
        ];
        let mut got = ids.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        let est: f64 = plan
            .workloads
            .iter()
            .filter(|w| ids.contains(&w.id.as_str()))
            .map(|w| f64::from(w.repetitions) * w.estimated_seconds)
            .sum();
        assert!(est > 0.0 && (sel.estimated_seconds() - est).abs() < 1e-9);
        assert!(sel.render().starts_with("claim C7 on campaign h200-quick: 5 workloads"));
        assert!(super::claim_selection(&project, &plan, "C99").is_err());
    }

    /// Every claim selects at least one planned workload of the shipped campaign.
    #[test]
    fn every_claim_selects_workloads_of_the_shipped_campaign() {
        let project = project();
        let plan =
            colloc_plan::plan_project_campaign(&project, &project.artifact.shipped_campaign.value, None).unwrap();
        for c in &project.artifact.claims {
            let sel = super::claim_selection(&project, &plan, &c.id).unwrap();
            assert!(!sel.workloads.is_empty(), "claim {} selects nothing", c.id);
        }
    }

    /// The smoke subset takes, per mode the plan runs, the headline workload with the most
    /// jobs for naive and MPS (7 × resnet26) and the first workload otherwise.
    #[test]
    fn the_smoke_subset_comes_from_the_headline() {
        let project = project();
        let plan = colloc_plan::plan_project_campaign(&project, "sim-smoke", None).unwrap();
        let ids = super::smoke_subset(&plan);
        assert!(ids.contains(&"e33-resnet26-cifar10-x7-naive@syn.r1".to_string()), "{ids:?}");
        assert!(ids.contains(&"e33-resnet26-cifar10-x7-mps@syn.r1".to_string()), "{ids:?}");
        let first = |mode| plan.workloads.iter().find(|w| w.mode == mode && w.feasible).map(|w| format!("{}.r1", w.id));
        assert_eq!(ids.first(), first(colloc_trace::Mode::Exclusive).as_ref());
        assert_eq!(ids.len(), plan.workloads.iter().map(|w| w.mode).collect::<std::collections::BTreeSet<_>>().len());
    }
}
