//! Two campaigns side by side: a reviewer's re-run of (a subset of) a campaign against the
//! one shipped, with a verdict per workload and the claims' grades of both.
//!
//! For every workload measured in both (the same workload id, ok runs with an aggregate
//! throughput ratio), [`compare`] sets the aggregate ratio (STP) of the base beside the new
//! one, their difference `new / base − 1`, and — when both campaigns ran on the same GPU
//! model — the aggregate throughput in images per second likewise. Each compared value has a
//! tolerance (see [`tolerance`]); a workload `agrees` when every compared value lies within
//! its tolerance, else it `differs`. Workloads measured in only one campaign are listed as
//! `only in base` or `only in new`.
//!
//! Across different GPU models absolute throughputs are not compared: only the ratios (each
//! job over its model alone on the same GPU) and the claims.

use colloc_analysis::{ClaimOutcome, Results, Stats, WorkloadResult};
use std::collections::BTreeSet;

/// The declared floor of the tolerance on synthetic data (no loader, no files): 2 %.
pub const SYNTHETIC_FLOOR: f64 = 0.02;
/// The declared floor on file data (`generated`, `imagefolder`, any other source): 5 %,
/// since the loader and the host's CPU and storage enter the throughput.
pub const FILE_DATA_FLOOR: f64 = 0.05;

/// How the tolerance is made, in words (the Markdown report says it).
pub const TOLERANCE_RULE: &str = "Tolerance: the larger of a declared floor (2 % on synthetic data, 5 % on file \
data: generated or imagefolder) and the combined relative uncertainty of the two campaigns. A campaign's \
uncertainty of a value is sqrt((2a)² + b²), with a the relative half-range of its repetitions ((max − min) / 2 / \
median), doubled as a rough 95 % bound, and b the median relative half-width of the 95 % confidence intervals of its \
jobs' throughputs; the two campaigns' uncertainties combine as sqrt(u_base² + u_new²). A workload agrees when \
|new / base − 1| ≤ tolerance for every value compared.";

/// The floor of the tolerance for a workload's data source.
pub fn floor(data: &str) -> f64 {
    if data == "synthetic" {
        SYNTHETIC_FLOOR
    } else {
        FILE_DATA_FLOOR
    }
}

/// One campaign's relative uncertainty of a value, as a rough 95% half-width: its
/// repetitions' relative half-range `a = (max − min) / 2 / median`, doubled, combined with
/// the median relative 95% CI half-width `b` of its jobs: `sqrt((2a)² + b²)`.
pub fn spread(stats: &Stats, ci_rel: Option<&Stats>) -> f64 {
    let half_range = if stats.median > 0.0 { (stats.max - stats.min) / 2.0 / stats.median } else { 0.0 };
    let ci = ci_rel.map(|s| s.median).filter(|v| v.is_finite()).unwrap_or(0.0);
    (2.0 * half_range).hypot(ci)
}

/// The tolerance of a difference: the larger of `floor` and the two uncertainties
/// combined, `sqrt(u_base² + u_new²)`.
pub fn tolerance(floor: f64, spread_base: f64, spread_new: f64) -> f64 {
    floor.max(spread_base.hypot(spread_new))
}

/// One value of a workload in both campaigns.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The medians over repetitions.
    pub base: f64,
    pub new: f64,
    /// `new / base − 1`.
    pub difference: f64,
    pub tolerance: f64,
}

impl Compared {
    pub fn agrees(&self) -> bool {
        self.difference.abs() <= self.tolerance
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadVerdict {
    Agrees,
    Differs,
    OnlyInBase,
    OnlyInNew,
}

impl WorkloadVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadVerdict::Agrees => "agrees",
            WorkloadVerdict::Differs => "differs",
            WorkloadVerdict::OnlyInBase => "only in base",
            WorkloadVerdict::OnlyInNew => "only in new",
        }
    }
}

/// A workload of either campaign.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRow {
    pub id: String,
    pub data: String,
    pub verdict: WorkloadVerdict,
    /// The aggregate throughput ratio (STP); `None` unless measured in both.
    pub ratio: Option<Compared>,
    /// The aggregate throughput, images per second: same GPU model only.
    pub throughput: Option<Compared>,
    /// The ratio of the one campaign that has it (`only in …`).
    pub only_ratio: Option<f64>,
}

/// A claim's headline grades side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRow {
    pub id: String,
    /// `holds (generated)`, `not run`; `—` when the campaign has no such claim.
    pub base_grade: String,
    /// The headline source's values, ours / paper's: `1.20 / 4, 1`.
    pub base_value: String,
    pub new_grade: String,
    pub new_value: String,
}

impl ClaimRow {
    pub fn same_grade(&self) -> bool {
        self.base_grade == self.new_grade
    }
}

/// One campaign of a comparison.
pub struct Side<'a> {
    /// How the user named it (the directory as given).
    pub label: &'a str,
    pub results: &'a Results,
    pub claims: &'a [ClaimOutcome],
}

/// What a side says of itself in the outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct SideInfo {
    pub label: String,
    pub campaign: String,
    pub gpu: String,
    pub simulated: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub base: SideInfo,
    pub new: SideInfo,
    /// Both campaigns ran on one GPU model (the same, non-empty GPU names): absolute
    /// throughputs are compared too.
    pub same_gpu: bool,
    /// Sorted by workload id.
    pub workloads: Vec<WorkloadRow>,
    /// In the base's order, then the new's own.
    pub claims: Vec<ClaimRow>,
}

/// A workload is measured when its runs are ok and give an aggregate ratio.
fn measured(r: &Results) -> impl Iterator<Item = &WorkloadResult> {
    r.workloads.iter().filter(|w| w.status == colloc_trace::meta::RunStatus::Ok && w.stats.aggregate_ratio.is_some())
}

fn compared(floor: f64, b: &Stats, b_ci: Option<&Stats>, n: &Stats, n_ci: Option<&Stats>) -> Option<Compared> {
    (b.median > 0.0 && b.median.is_finite() && n.median.is_finite()).then(|| Compared {
        base: b.median,
        new: n.median,
        difference: n.median / b.median - 1.0,
        tolerance: tolerance(floor, spread(b, b_ci), spread(n, n_ci)),
    })
}

fn side_info(s: &Side<'_>) -> SideInfo {
    SideInfo {
        label: s.label.to_string(),
        campaign: s.results.campaign.clone(),
        gpu: s.results.gpu_name(),
        simulated: s.results.simulated,
    }
}

/// Compares the workloads and claims of `new` against those of `base`.
pub fn compare(base: &Side<'_>, new: &Side<'_>) -> Comparison {
    let (b, n) = (base.results, new.results);
    let same_gpu = !b.provenance.gpu_names.is_empty() && b.provenance.gpu_names == n.provenance.gpu_names;
    let ids: BTreeSet<&str> = measured(b).chain(measured(n)).map(|w| w.id.as_str()).collect();
    let find = |r: &'_ Results, id: &str| measured(r).find(|w| w.id == id).cloned();
    let workloads = ids
        .into_iter()
        .map(|id| match (find(b, id), find(n, id)) {
            (Some(wb), Some(wn)) => {
                let floor = floor(&wb.data);
                let (bs, ns) = (&wb.stats, &wn.stats);
                let ratio = match (bs.aggregate_ratio, ns.aggregate_ratio) {
                    (Some(x), Some(y)) => {
                        compared(floor, &x, bs.throughput_ci_rel.as_ref(), &y, ns.throughput_ci_rel.as_ref())
                    }
                    _ => None,
                };
                let throughput = match (same_gpu, bs.aggregate_throughput, ns.aggregate_throughput) {
                    (true, Some(x), Some(y)) => {
                        compared(floor, &x, bs.throughput_ci_rel.as_ref(), &y, ns.throughput_ci_rel.as_ref())
                    }
                    _ => None,
                };
                let agrees =
                    ratio.as_ref().is_some_and(Compared::agrees) && throughput.as_ref().is_none_or(Compared::agrees);
                let verdict = if agrees { WorkloadVerdict::Agrees } else { WorkloadVerdict::Differs };
                WorkloadRow { id: id.to_string(), data: wb.data.clone(), verdict, ratio, throughput, only_ratio: None }
            }
            (Some(w), None) | (None, Some(w)) => WorkloadRow {
                id: id.to_string(),
                data: w.data.clone(),
                verdict: if find(b, id).is_some() { WorkloadVerdict::OnlyInBase } else { WorkloadVerdict::OnlyInNew },
                ratio: None,
                throughput: None,
                only_ratio: w.stats.aggregate_ratio.map(|s| s.median),
            },
            (None, None) => unreachable!("every id comes from one of the campaigns"),
        })
        .collect();

    let mut claim_ids: Vec<&str> = Vec::new();
    for c in base.claims.iter().chain(new.claims) {
        if !claim_ids.contains(&c.id.as_str()) {
            claim_ids.push(&c.id);
        }
    }
    let grade = |cs: &[ClaimOutcome], id: &str| -> (String, String) {
        match cs.iter().find(|c| c.id == id) {
            Some(c) => (
                crate::claims::headline_text(c),
                c.headline()
                    .map(|s| s.checks.iter().map(crate::claims::ours_over_paper).collect::<Vec<_>>().join(", "))
                    .unwrap_or_else(|| "—".to_string()),
            ),
            None => ("—".to_string(), "—".to_string()),
        }
    };
    let claims = claim_ids
        .into_iter()
        .map(|id| {
            let (base_grade, base_value) = grade(base.claims, id);
            let (new_grade, new_value) = grade(new.claims, id);
            ClaimRow { id: id.to_string(), base_grade, base_value, new_grade, new_value }
        })
        .collect();
    Comparison { base: side_info(base), new: side_info(new), same_gpu, workloads, claims }
}

/// `+10.0 %`.
fn pct(v: f64) -> String {
    format!("{:+.1} %", v * 100.0)
}

/// `±2.0 %`.
fn tol(v: f64) -> String {
    format!("±{:.1} %", v * 100.0)
}

impl Comparison {
    pub fn count(&self, v: WorkloadVerdict) -> usize {
        self.workloads.iter().filter(|w| w.verdict == v).count()
    }

    /// Some workload measured in both differs.
    pub fn differs(&self) -> bool {
        self.count(WorkloadVerdict::Differs) > 0
    }

    fn gpu_note(&self) -> String {
        if self.same_gpu {
            format!("Both on {}: aggregate ratios and absolute aggregate throughputs compared.", self.base.gpu)
        } else {
            format!(
                "Different GPU models ({} vs {}): only aggregate ratios and claims are compared, not absolute \
                 throughputs.",
                self.base.gpu, self.new.gpu
            )
        }
    }

    fn counts_line(&self) -> String {
        format!(
            "{} agree, {} differ, {} only in base, {} only in new",
            self.count(WorkloadVerdict::Agrees),
            self.count(WorkloadVerdict::Differs),
            self.count(WorkloadVerdict::OnlyInBase),
            self.count(WorkloadVerdict::OnlyInNew)
        )
    }

    fn side_text(s: &SideInfo) -> String {
        let sim = if s.simulated { ", SIMULATED" } else { "" };
        format!("{} (campaign {}, {}{sim})", s.label, s.campaign, s.gpu)
    }

    /// One line per differing workload: its values in both.
    fn differing_line(w: &WorkloadRow) -> String {
        let mut s = format!("  {}:", w.id);
        if let Some(r) = &w.ratio {
            s.push_str(&format!(
                " STP base {:.3}, new {:.3} ({}, tolerance {})",
                r.base,
                r.new,
                pct(r.difference),
                tol(r.tolerance)
            ));
        }
        if let Some(t) = &w.throughput {
            s.push_str(&format!(
                "; img/s base {:.0}, new {:.0} ({}, tolerance {})",
                t.base,
                t.new,
                pct(t.difference),
                tol(t.tolerance)
            ));
        }
        s
    }

    /// The short console summary.
    pub fn console(&self) -> String {
        let mut out = format!(
            "compare: base {}\n     vs new  {}\n{}\n{}\n",
            Self::side_text(&self.base),
            Self::side_text(&self.new),
            self.gpu_note(),
            self.counts_line()
        );
        for w in self.workloads.iter().filter(|w| w.verdict == WorkloadVerdict::Differs) {
            out.push_str(&Self::differing_line(w));
            out.push('\n');
        }
        let changed: Vec<&ClaimRow> = self.claims.iter().filter(|c| !c.same_grade()).collect();
        out.push_str(&format!(
            "claims: {} of {} with the same grade\n",
            self.claims.len() - changed.len(),
            self.claims.len()
        ));
        for c in changed {
            out.push_str(&format!("  {}: base {}, new {}\n", c.id, c.base_grade, c.new_grade));
        }
        out
    }

    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut out = String::from("# Comparison of two campaigns\n\n");
        out.push_str(&format!("- base: {}\n- new: {}\n\n", Self::side_text(&self.base), Self::side_text(&self.new)));
        out.push_str(&format!("{}\n\n", self.gpu_note()));
        out.push_str(&format!("Workloads: {}.\n\n", self.counts_line()));
        out.push_str(&format!(
            "Compared: for each workload measured in both (same id, ok runs), the median over repetitions of the \
             aggregate throughput ratio (STP: each job's throughput over its model alone on the whole GPU, summed){}; \
             difference = new / base − 1.\n\n{TOLERANCE_RULE}\n\n",
            if self.same_gpu { " and of the aggregate throughput (img/s)" } else { "" }
        ));
        out.push_str("## Workloads\n\n");
        let mut header = vec!["Workload", "Data", "STP base", "STP new", "Difference", "Tolerance"];
        if self.same_gpu {
            header.extend(["img/s base", "img/s new", "Difference", "Tolerance"]);
        }
        header.push("Verdict");
        out.push_str(&format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len())));
        for w in &self.workloads {
            let mut cells = vec![format!("`{}`", w.id), w.data.clone()];
            let push =
                |cells: &mut Vec<String>, c: &Option<Compared>, decimals: usize, only: Option<f64>, w: &WorkloadRow| {
                    match c {
                        Some(c) => cells.extend([
                            format!("{:.*}", decimals, c.base),
                            format!("{:.*}", decimals, c.new),
                            pct(c.difference),
                            tol(c.tolerance),
                        ]),
                        None => {
                            let v = only.map_or("—".to_string(), |v| format!("{v:.decimals$}"));
                            let (b, n) = match w.verdict {
                                WorkloadVerdict::OnlyInBase => (v, "—".to_string()),
                                WorkloadVerdict::OnlyInNew => ("—".to_string(), v),
                                _ => ("—".to_string(), "—".to_string()),
                            };
                            cells.extend([b, n, "—".to_string(), "—".to_string()]);
                        }
                    }
                };
            push(&mut cells, &w.ratio, 3, w.only_ratio, w);
            if self.same_gpu {
                push(&mut cells, &w.throughput, 0, None, w);
            }
            cells.push(match w.verdict {
                WorkloadVerdict::Differs => "**differs**".to_string(),
                v => v.as_str().to_string(),
            });
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push_str(
            "\n## Claims\n\nThe headline grade of each claim in both campaigns, with the headline source's values \
             (ours / paper's).\n\n| Claim | Base grade | Base value | New grade | New value | Same grade |\n\
             |---|---|---|---|---|---|\n",
        );
        for c in &self.claims {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                c.id,
                c.base_grade,
                c.base_value,
                c.new_grade,
                c.new_value,
                if c.same_grade() { "yes" } else { "**no**" }
            ));
        }
        out
    }

    /// The workloads as CSV, one row each; empty cells where a value is not compared.
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "workload,data,verdict,base_ratio,new_ratio,ratio_difference,ratio_tolerance,\
             base_throughput,new_throughput,throughput_difference,throughput_tolerance\n",
        );
        let cells = |c: &Option<Compared>| match c {
            Some(c) => format!("{},{},{},{}", c.base, c.new, c.difference, c.tolerance),
            None => ",,,".to_string(),
        };
        for w in &self.workloads {
            let ratio = match (&w.ratio, w.verdict, w.only_ratio) {
                (None, WorkloadVerdict::OnlyInBase, Some(v)) => format!("{v},,,"),
                (None, WorkloadVerdict::OnlyInNew, Some(v)) => format!(",{v},,"),
                _ => cells(&w.ratio),
            };
            out.push_str(&format!("{},{},{},{},{}\n", w.id, w.data, w.verdict.as_str(), ratio, cells(&w.throughput)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median: f64, min: f64, max: f64) -> Stats {
        Stats { median, min, max, n: 3 }
    }

    #[test]
    fn the_tolerance_is_the_floor_or_the_combined_uncertainty() {
        assert_eq!(floor("synthetic"), 0.02);
        assert_eq!(floor("generated"), 0.05);
        assert_eq!(floor("imagefolder"), 0.05);
        // Half-range 1.5 % (doubled: 3 %), CI 4 %: uncertainty 5 %.
        let s = spread(&stats(1.0, 0.985, 1.015), Some(&stats(0.04, 0.0, 1.0)));
        assert!((s - 0.05).abs() < 1e-12, "{s}");
        // Both sides 5 %: sqrt(2) · 5 % ≈ 7.1 %, above either floor.
        assert!((tolerance(0.02, s, s) - 0.05 * 2f64.sqrt()).abs() < 1e-12);
        // A tight campaign falls back to the floor.
        let tight = spread(&stats(2.0, 2.0, 2.0), Some(&stats(0.001, 0.0, 1.0)));
        assert_eq!(tolerance(0.02, tight, tight), 0.02);
        assert_eq!(spread(&stats(2.0, 2.0, 2.0), None), 0.0);
    }

    #[test]
    fn a_value_agrees_within_its_tolerance_only() {
        let c = |b: f64, n: f64| Compared { base: b, new: n, difference: n / b - 1.0, tolerance: 0.05 };
        assert!(c(1.0, 1.04).agrees());
        assert!(c(1.0, 0.96).agrees());
        assert!(!c(1.0, 1.06).agrees());
        assert!(!c(1.0, 0.9).agrees());
    }
}
