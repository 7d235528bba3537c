//! The machine-readable documents: what `cargo xtask reproduce --json` prints
//! ([`ReproduceDocument`]), the grades in them ([`Grade`]) and the version of their format.
//! `cargo xtask compare --json` prints [`crate::compare::Document`]. The JSON Schemas under
//! `schemas/` are generated from these types (`xtask/tests/json.rs` fails when one is stale).

use colloc_analysis::{CheckOutcome, ClaimOutcome, Results, SourceOutcome, Verdict};
use colloc_spec::claims::PaperNumber;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// The version of the documents' format: `format_version` in each. A field added keeps it;
/// one removed, renamed or changed in meaning raises it.
pub const FORMAT_VERSION: u32 = 1;

/// A claim's grade, in the words the claims table uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum Grade {
    #[serde(rename = "holds")]
    Holds,
    #[serde(rename = "direction only")]
    DirectionOnly,
    #[serde(rename = "inconclusive")]
    Inconclusive,
    #[serde(rename = "does not hold")]
    DoesNotHold,
    #[serde(rename = "by construction")]
    ByConstruction,
    #[serde(rename = "not run")]
    NotRun,
}

impl From<Verdict> for Grade {
    fn from(v: Verdict) -> Self {
        match v {
            Verdict::Holds => Grade::Holds,
            Verdict::DirectionOnly => Grade::DirectionOnly,
            Verdict::Inconclusive => Grade::Inconclusive,
            Verdict::DoesNotHold => Grade::DoesNotHold,
            Verdict::ByConstruction => Grade::ByConstruction,
            Verdict::NotRun => Grade::NotRun,
        }
    }
}

/// What `cargo xtask reproduce --json` prints (`schemas/reproduce.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReproduceDocument {
    /// The format of this document: 1.
    pub format_version: u32,
    pub campaign: String,
    /// The GPU the traces name (`NVIDIA H200`; several joined by `, `; `unknown GPU`).
    pub gpu: String,
    /// Some run was made by the simulated backend.
    pub simulated: bool,
    pub counts: RunCounts,
    pub outputs: OutputCounts,
    /// One per claim of `artifact.yaml`, in its order.
    pub claims: Vec<Claim>,
}

/// The campaign's runs against its plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RunCounts {
    /// Run directories analysed.
    pub runs: usize,
    /// Runs by status (`ok`, `failed`, `skipped`, …).
    pub runs_by_status: BTreeMap<String, usize>,
    /// Runs the campaign's plan asks for; `null` when the campaign has no plan (not declared
    /// in `artifact.yaml`).
    pub planned: Option<usize>,
    /// Planned runs without a run directory yet (0: the campaign is complete).
    pub missing: usize,
    /// Their ids (`<workload>.r<n>`).
    pub missing_runs: Vec<String>,
    /// Run directories of a later attempt of a run (`.a2`, …): the latest attempt counts.
    pub attempts_again: usize,
    /// Runs of a repetition the plan does not ask for, which the runner added.
    pub beyond_plan: usize,
}

/// The output files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OutputCounts {
    /// `--check`: compared with those under `root`, nothing written.
    pub check: bool,
    /// Where the outputs were written or compared.
    pub root: String,
    /// Output files generated.
    pub files: usize,
    /// Without `--check`: those written (new or rewritten); with it: how many differ from
    /// those under `root` (0: up to date; otherwise the exit status is 1).
    pub changed: usize,
    /// What `changed` counts: the files written, or how each differs.
    pub changes: Vec<String>,
}

/// One claim of `artifact.yaml`, graded on the campaign.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Claim {
    /// `C1`, …
    pub id: String,
    pub statement: String,
    /// The paper's number: its text, its value when it is one, where it is stated.
    pub paper: PaperNumber,
    /// The claim's tolerance (`±25 %`) and the paper's wording it comes from; `null` for a
    /// qualitative claim.
    pub tolerance: Option<Tolerance>,
    /// The GPU the results came from (`NVIDIA H200`, `NVIDIA H200 (SIMULATED)`).
    pub hardware: String,
    /// The headline grade: that of `headline_data`, else not run.
    pub verdict: Grade,
    /// The data source of the headline grade: the closest to the paper's on which the claim
    /// was measured; `null` when measured on none.
    pub headline_data: Option<String>,
    pub note: Option<String>,
    /// One per data source the campaign measured, closest to the paper's first.
    pub sources: Vec<Source>,
}

/// A claim's tolerance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Tolerance {
    /// `±25 %`.
    pub band: String,
    /// The paper's wording it comes from.
    pub basis: String,
}

/// A claim's checks on one data source.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Source {
    /// `synthetic`, `generated`, `imagefolder`.
    pub data: String,
    /// The checks' grades together.
    pub verdict: Grade,
    pub checks: Vec<Check>,
}

/// One check of a claim on one data source.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Check {
    /// The named query (`max_aggregate_ratio`, …).
    pub query: String,
    /// Its arguments: `experiment=33, mode=mig`.
    pub args: String,
    /// What the query computes.
    pub describe: String,
    /// What the value must satisfy: `≥ 1.1`.
    pub expect: String,
    /// `null` when nothing the check reads was measured (not run).
    pub value: Option<f64>,
    /// The value's 95 % interval `[low, high]`; `null` for a share or a count.
    pub interval: Option<[f64; 2]>,
    /// The paper's number the check is graded against, when it gives one.
    pub paper_value: Option<f64>,
    /// The claim's tolerance around `paper_value`: `±25 % of 4 (3 to 5)`.
    pub tolerance: Option<String>,
    /// The value comes from the `mps-limited` stand-in where the claim speaks of MIG.
    pub stand_in: bool,
    /// The query reads no measurement (the plan's rules answer it).
    pub by_construction: bool,
    pub verdict: Grade,
    /// Why the grade is what it is.
    pub reason: String,
    /// Where the value comes from (workloads, as the traces name them).
    pub detail: String,
    /// Whose the expectation's threshold is: `ours, not the paper's: …`, `the paper's: …`.
    pub threshold_basis: String,
    /// How many workloads the check read.
    pub workloads_read: usize,
    /// The workloads the value was picked from that the analysis marks implausible, with
    /// the reasons.
    pub picked_implausible: BTreeMap<String, Vec<String>>,
}

impl From<&CheckOutcome> for Check {
    fn from(k: &CheckOutcome) -> Self {
        Check {
            query: k.query.clone(),
            args: k.args.clone(),
            describe: k.describe.clone(),
            expect: k.expect.clone(),
            value: k.value,
            interval: k.interval,
            paper_value: k.paper_value,
            tolerance: k.tolerance.clone(),
            stand_in: k.stand_in,
            by_construction: k.by_construction,
            verdict: k.verdict.into(),
            reason: k.reason.clone(),
            detail: k.detail.clone(),
            threshold_basis: k.threshold_basis.clone(),
            workloads_read: k.workloads_read,
            picked_implausible: k.picked_implausible.clone(),
        }
    }
}

impl From<&SourceOutcome> for Source {
    fn from(s: &SourceOutcome) -> Self {
        Source { data: s.data.clone(), verdict: s.verdict.into(), checks: s.checks.iter().map(Check::from).collect() }
    }
}

impl From<&ClaimOutcome> for Claim {
    fn from(c: &ClaimOutcome) -> Self {
        Claim {
            id: c.id.clone(),
            statement: c.statement.clone(),
            paper: c.paper.clone(),
            tolerance: c.tolerance.clone().map(|(band, basis)| Tolerance { band, basis }),
            hardware: c.hardware.clone(),
            verdict: c.verdict.into(),
            headline_data: c.headline_data.clone(),
            note: c.note.clone(),
            sources: c.sources.iter().map(Source::from).collect(),
        }
    }
}

/// The document of a reproduction of `campaign`: its results, its claims' grades and what
/// became of the output files.
pub fn reproduce_document(
    campaign: &str,
    results: &Results,
    claims: &[ClaimOutcome],
    outputs: OutputCounts,
) -> ReproduceDocument {
    let p = &results.provenance;
    ReproduceDocument {
        format_version: FORMAT_VERSION,
        campaign: campaign.to_string(),
        gpu: results.gpu_name(),
        simulated: results.simulated,
        counts: RunCounts {
            runs: results.runs.len(),
            runs_by_status: p.runs_by_status.clone(),
            planned: p.planned_runs,
            missing: p.missing_runs.len(),
            missing_runs: p.missing_runs.clone(),
            attempts_again: p.attempts_again,
            beyond_plan: p.beyond_plan,
        },
        outputs,
        claims: claims.iter().map(Claim::from).collect(),
    }
}

/// The JSON Schema of [`ReproduceDocument`], as published in `schemas/reproduce.schema.json`.
pub fn reproduce_schema() -> String {
    schema_text(schemars::schema_for!(ReproduceDocument))
}

/// A schema as the files under `schemas/` hold it: pretty, with a final line break.
pub(crate) fn schema_text(s: schemars::Schema) -> String {
    serde_json::to_string_pretty(&s).expect("a schema serialises") + "\n"
}
