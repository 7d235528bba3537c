//! The paper's claims as declared in `artifact.yaml` (`claims:`), each with the paper's
//! number and the check run over our results.
//!
//! ```yaml
//! claims:
//!   - id: C7
//!     statement: Seven small models on 1g.5gb instances give about 3x the throughput of one on the full GPU
//!     paper: { text: "~3x", value: 3.0, source: "arXiv 2209.06018v1, abstract" }
//!     checks:
//!       - query: aggregate_ratio
//!         args: { experiment: 33, model: resnet26, jobs: 7, mode: mig, stand_in: true }
//!         expect: { at_least: 1.1, basis: { ours: "a clear gain: at least 10 %, as C1" } }
//!         paper_value: 3.0
//!     tolerance: { absolute: 0.5, basis: "\"~3×\" is given to one significant digit" }
//! ```
//!
//! A check names a query that the analysis implements (`colloc_analysis::claims::QUERIES`
//! lists them), gives it a few arguments and says what the query's value must satisfy for
//! the paper's direction (`expect`), and whose that threshold is (`expect.basis`: `ours`,
//! a threshold we chose, or `paper`, one the paper's words state). A check with a
//! `paper_value` is also graded on magnitude: its value must lie within the claim's
//! `tolerance` of the paper's number. The grades (`colloc_analysis::Verdict`): `holds`,
//! `direction only` (the magnitude outside the tolerance), `inconclusive` (the value's 95 %
//! interval straddles the threshold or the tolerance's edge), `does not hold`, `by
//! construction` (a check that reads no measurement), `not run`. The tolerance comes from
//! the paper's own wording, never from our measurements; a qualitative claim has neither
//! tolerance nor paper values.

use serde::{Deserialize, Serialize};
use serde_saphyr::{Location, Spanned};
use std::collections::BTreeMap;
use std::path::Path;

use crate::diag::Diagnostic;

/// One claim of the paper and how we check it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// `C1` … `C9`.
    pub id: String,
    /// The claim in the paper's words (or a close paraphrase).
    pub statement: String,
    /// What the paper reports.
    pub paper: PaperNumber,
    /// Every check must hold for the claim to hold.
    pub checks: Vec<ClaimCheck>,
    /// How far from the paper's number a magnitude may lie and still hold; declared once
    /// per claim, for every check with a `paper_value`. Required exactly when some check
    /// has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Tolerance>,
    /// Why the checks are what they are (hardware differences, tolerances).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The paper's number for a claim, as text and, when it is one, as a value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PaperNumber {
    /// As the paper puts it: `up to 4x`, `qualitative`.
    pub text: String,
    /// The number, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Where it is stated: `arXiv abstract`, `EuroMLSys abstract`, a section.
    pub source: String,
}

/// A named query over the analysis results and what its value must satisfy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimCheck {
    /// A query the analysis implements, e.g. `max_aggregate_ratio`, `mps_over_naive_max`,
    /// `infeasible_mig_mixes`, `per_job_epoch_time_grows`.
    pub query: String,
    /// The query's arguments (experiment, model, jobs, mode, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, ArgValue>,
    /// What the value must satisfy for the paper's direction or ordering to hold.
    pub expect: Expect,
    /// The paper's number this check's value is compared with, within the claim's
    /// tolerance (one of the numbers in the claim's `paper.text`). Without it the check is
    /// qualitative: it holds or does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub paper_value: Option<Spanned<f64>>,
    /// One line saying what the check measures, for the claims table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub describe: Option<String>,
}

/// An argument of a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ArgValue {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<String>),
}

impl ArgValue {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ArgValue::Number(v) => Some(*v),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ArgValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// A text or a list of texts as a list.
    pub fn as_list(&self) -> Option<Vec<String>> {
        match self {
            ArgValue::Text(s) => Some(vec![s.clone()]),
            ArgValue::List(l) => Some(l.clone()),
            _ => None,
        }
    }
}

impl std::fmt::Display for ArgValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgValue::Bool(b) => write!(f, "{b}"),
            ArgValue::Number(v) => write!(f, "{v}"),
            ArgValue::Text(s) => f.write_str(s),
            ArgValue::List(l) => write!(f, "[{}]", l.join(", ")),
        }
    }
}

/// What the value of a query must satisfy. At least one bound is given; all given must
/// hold. `basis` says whose the bounds are: the paper's (a bound that its words state or
/// imply, `"some mixes cannot be laid out": at least one`) or ours (a threshold we chose to
/// read a direction from a measurement, `a clear gain: at least 10 %`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// value ≥ at_least
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    /// value ≤ at_most
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
    /// of / factor ≤ value ≤ of × factor
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_factor: Option<WithinFactor>,
    /// The sign of the value: `increasing` (> 0) or `decreasing` (< 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Whose bounds these are, and why: `{ ours: "…" }` or `{ paper: "…" }`. Required.
    pub basis: ThresholdBasis,
}

/// Where a check's direction threshold comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ThresholdBasis {
    /// Ours, not the paper's: why we chose it (`a clear gain: at least 10 %`).
    Ours(#[schemars(with = "String")] Spanned<String>),
    /// The paper's: the words of the paper that state or imply it.
    Paper(#[schemars(with = "String")] Spanned<String>),
}

impl Default for ThresholdBasis {
    /// Ours, without a reason: [`diagnose`] refuses it in a file.
    fn default() -> Self {
        ThresholdBasis::Ours(Spanned::new(String::new(), Location::UNKNOWN, Location::UNKNOWN))
    }
}

impl ThresholdBasis {
    /// Whether the threshold is ours rather than the paper's.
    pub fn is_ours(&self) -> bool {
        matches!(self, ThresholdBasis::Ours(_))
    }

    /// The reason as written.
    pub fn text(&self) -> &str {
        match self {
            ThresholdBasis::Ours(s) | ThresholdBasis::Paper(s) => &s.value,
        }
    }

    /// `ours: a clear gain: at least 10 %`, `paper's: "some mixes cannot be laid out"`.
    pub fn describe(&self) -> String {
        match self {
            ThresholdBasis::Ours(s) => format!("ours, not the paper's: {}", s.value),
            ThresholdBasis::Paper(s) => format!("the paper's: {}", s.value),
        }
    }

    fn spanned(&self) -> &Spanned<String> {
        match self {
            ThresholdBasis::Ours(s) | ThresholdBasis::Paper(s) => s,
        }
    }
}

/// A band around the paper's number: exactly one of `relative` and `absolute`, with the
/// paper's wording that justifies it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// A share of the paper's number either way, 0 < relative < 1: 0.25 is 3 to 5 around 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub relative: Option<Spanned<f64>>,
    /// An amount either way, > 0, in the value's unit: 0.5 is 2.5 to 3.5 around 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub absolute: Option<Spanned<f64>>,
    /// Where the band comes from, in the paper's own wording (`the paper gives 4× and 3× in
    /// its two versions`): never from our measurements.
    #[schemars(with = "String")]
    pub basis: Spanned<String>,
}

impl Tolerance {
    /// `[low, high]` around the paper's `value`.
    pub fn band(&self, value: f64) -> (f64, f64) {
        match (&self.relative, &self.absolute) {
            (Some(r), _) => (value * (1.0 - r.value), value * (1.0 + r.value)),
            (None, Some(a)) => (value - a.value, value + a.value),
            (None, None) => (value, value),
        }
    }

    /// Whether `ours` lies in the band around the paper's `value`.
    pub fn contains(&self, value: f64, ours: f64) -> bool {
        let (lo, hi) = self.band(value);
        // Bands are declared to a few digits; a value on the edge is inside.
        const EDGE: f64 = 1e-9;
        ours.is_finite() && ours >= lo - EDGE && ours <= hi + EDGE
    }

    /// Whether every value of `[low, high]` lies in the band around `value` (`Some(true)`),
    /// none does (`Some(false)`), or the interval straddles an edge of the band (`None`).
    pub fn contains_over(&self, value: f64, low: f64, high: f64) -> Option<bool> {
        if self.contains(value, low) && self.contains(value, high) {
            return Some(true);
        }
        let (lo, hi) = self.band(value);
        const EDGE: f64 = 1e-9;
        if !(low.is_finite() && high.is_finite()) || high < lo - EDGE || low > hi + EDGE {
            Some(false)
        } else {
            None
        }
    }

    /// The band in words: `±25 %`, `±0.5`.
    pub fn describe(&self) -> String {
        match (&self.relative, &self.absolute) {
            (Some(r), _) => format!("±{} %", short(r.value * 100.0)),
            (None, Some(a)) => format!("±{}", short(a.value)),
            (None, None) => String::new(),
        }
    }

    /// The band around `value` in words: `±25 % of 4 (3 to 5)`.
    pub fn describe_around(&self, value: f64) -> String {
        let (lo, hi) = self.band(value);
        format!("{} of {} ({} to {})", self.describe(), short(value), short(lo), short(hi))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WithinFactor {
    /// The reference value (usually the paper's number).
    pub of: f64,
    /// Allowed factor either way, > 1.
    pub factor: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Increasing,
    Decreasing,
}

impl Expect {
    /// Whether some bound is given.
    pub fn has_bounds(&self) -> bool {
        self.at_least.is_some() || self.at_most.is_some() || self.within_factor.is_some() || self.direction.is_some()
    }

    /// The values that satisfy every bound: `(low, high)`, closed except where a
    /// `direction` makes an end 0 open; `low > high` when none does.
    fn accepted(&self) -> (f64, f64) {
        let mut lo = f64::NEG_INFINITY;
        let mut hi = f64::INFINITY;
        if let Some(b) = self.at_least {
            lo = lo.max(b);
        }
        if let Some(b) = self.at_most {
            hi = hi.min(b);
        }
        if let Some(w) = &self.within_factor {
            lo = lo.max(w.of / w.factor);
            hi = hi.min(w.of * w.factor);
        }
        match self.direction {
            Some(Direction::Increasing) => lo = lo.max(0.0),
            Some(Direction::Decreasing) => hi = hi.min(0.0),
            None => {}
        }
        (lo, hi)
    }

    /// Whether every value of the interval `[low, high]` satisfies the bounds (`Some(true)`),
    /// none does (`Some(false)`), or the interval straddles a bound (`None`): the value is
    /// then inconclusive.
    pub fn holds_over(&self, low: f64, high: f64) -> Option<bool> {
        if !(low.is_finite() && high.is_finite()) || low > high {
            return Some(false);
        }
        if self.holds(low) && self.holds(high) {
            return Some(true);
        }
        let (lo, hi) = self.accepted();
        let open_low = self.direction == Some(Direction::Increasing) && lo == 0.0;
        let open_high = self.direction == Some(Direction::Decreasing) && hi == 0.0;
        let below = high < lo || (open_low && high <= lo);
        let above = low > hi || (open_high && low >= hi);
        if lo > hi || below || above {
            Some(false)
        } else {
            None
        }
    }

    /// Whether `value` satisfies every bound given.
    pub fn holds(&self, value: f64) -> bool {
        if !value.is_finite() {
            return false;
        }
        self.at_least.is_none_or(|b| value >= b)
            && self.at_most.is_none_or(|b| value <= b)
            && self.within_factor.as_ref().is_none_or(|w| value >= w.of / w.factor && value <= w.of * w.factor)
            && self.direction.is_none_or(|d| match d {
                Direction::Increasing => value > 0.0,
                Direction::Decreasing => value < 0.0,
            })
    }

    /// The bounds as text: `≥ 1.1`, `within ×1.5 of 3`, `> 0 (increasing)`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = self.at_least {
            parts.push(format!("≥ {}", short(b)));
        }
        if let Some(b) = self.at_most {
            parts.push(format!("≤ {}", short(b)));
        }
        if let Some(w) = &self.within_factor {
            parts.push(format!("within ×{} of {}", short(w.factor), short(w.of)));
        }
        if let Some(d) = self.direction {
            parts.push(match d {
                Direction::Increasing => "> 0 (increasing)".to_string(),
                Direction::Decreasing => "< 0 (decreasing)".to_string(),
            });
        }
        parts.join(" and ")
    }
}

fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// A problem in the declared claims.
#[derive(Debug, thiserror::Error)]
pub enum ClaimsError {
    #[error("claims: {0}")]
    Yaml(String),
    #[error("claim {id}: {problem}")]
    Invalid { id: String, problem: String },
    /// A tolerance or paper value is wrong (see [`diagnose`]).
    #[error("{0}")]
    Tolerance(String),
}

/// The `claims:` key of a YAML document (artifact.yaml or a part of it); other keys are ignored.
#[derive(Debug, Deserialize)]
struct ClaimsOnly {
    #[serde(default)]
    claims: Vec<ClaimSpec>,
}

/// Reads the `claims:` list of a YAML document and checks it (see [`validate`]).
pub fn parse_claims_yaml(text: &str) -> Result<Vec<ClaimSpec>, ClaimsError> {
    let doc: ClaimsOnly = serde_saphyr::from_str(text).map_err(|e| ClaimsError::Yaml(e.to_string()))?;
    validate(&doc.claims)?;
    Ok(doc.claims)
}

/// Problems with the claims' tolerances and paper values, each at its place in `text` (the
/// file the claims were read from, shown as `file`): a tolerance is one band, relative
/// (between 0 and 1) or absolute (above 0), with its basis; it is declared exactly when
/// some check has a paper value; a paper value is a positive number that satisfies its
/// check's own expectation; the claim's `paper.value`, when given, is one of them.
pub fn diagnose(claims: &[ClaimSpec], file: &Path, text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for c in claims {
        let mut d = |at: &serde_saphyr::Location, m: String| {
            out.push(Diagnostic::new(file, text, *at, format!("claim {}: {m}", c.id)))
        };
        for k in &c.checks {
            let b = k.expect.basis.spanned();
            if b.value.trim().is_empty() {
                d(
                    &b.referenced,
                    format!(
                        "check `{}`: `basis` must say whose threshold {} is and why: `{{ ours: \"…\" }}` for one we chose, `{{ paper: \"…\" }}` with the paper's words",
                        k.query,
                        k.expect.describe()
                    ),
                );
            }
        }
        let valued: Vec<&ClaimCheck> = c.checks.iter().filter(|k| k.paper_value.is_some()).collect();
        for k in &valued {
            let p = k.paper_value.as_ref().expect("filtered");
            if !(p.value.is_finite() && p.value > 0.0) {
                d(&p.referenced, format!("check `{}`: paper_value must be a number above 0", k.query));
            } else if !k.expect.holds(p.value) {
                d(
                    &p.referenced,
                    format!(
                        "check `{}`: the paper's {} does not satisfy the check's own expectation ({}): the direction and the paper disagree",
                        k.query,
                        short(p.value),
                        k.expect.describe()
                    ),
                );
            }
            if c.tolerance.is_none() {
                d(
                    &p.referenced,
                    format!(
                        "check `{}` compares with the paper's {} but the claim declares no `tolerance` (give `tolerance: {{ relative: …, basis: … }}` or `{{ absolute: …, basis: … }}`)",
                        k.query,
                        short(p.value)
                    ),
                );
            }
        }
        if let Some(t) = &c.tolerance {
            match (&t.relative, &t.absolute) {
                (Some(r), Some(_)) => {
                    d(&r.referenced, "tolerance: give one of `relative` and `absolute`, not both".to_string())
                }
                (None, None) => d(
                    &t.basis.referenced,
                    "tolerance: give `relative` (a share of the paper's number, 0 < r < 1) or `absolute` (> 0)"
                        .to_string(),
                ),
                (Some(r), None) if !(r.value > 0.0 && r.value < 1.0) => d(
                    &r.referenced,
                    format!(
                        "tolerance: `relative` must lie between 0 and 1 (a share of the paper's number), not {}",
                        r.value
                    ),
                ),
                (None, Some(a)) if !(a.value.is_finite() && a.value > 0.0) => {
                    d(&a.referenced, format!("tolerance: `absolute` must be above 0, not {}", a.value))
                }
                _ => {}
            }
            if t.basis.value.trim().is_empty() {
                d(
                    &t.basis.referenced,
                    "tolerance: `basis` must say which words of the paper the band comes from".to_string(),
                );
            }
            if valued.is_empty() {
                d(
                    &t.basis.referenced,
                    "a tolerance without a check that has a `paper_value`: a qualitative claim holds or does not, so drop the tolerance or give a check the paper's number".to_string(),
                );
            }
        }
        if let Some(v) = c.paper.value {
            if !valued.is_empty() && !valued.iter().any(|k| k.paper_value.as_ref().is_some_and(|p| p.value == v)) {
                let at = valued[0].paper_value.as_ref().expect("filtered").referenced;
                d(&at, format!("the paper's value {} is the paper_value of none of the checks", short(v)));
            }
        }
    }
    out
}

/// Ids are unique and non-empty, every claim has a check, every check an expectation.
pub fn validate(claims: &[ClaimSpec]) -> Result<(), ClaimsError> {
    if let Some(d) = diagnose(claims, Path::new("claims"), "").first() {
        return Err(ClaimsError::Tolerance(format!("{}:{}:{}: {}", d.file.display(), d.line, d.column, d.message)));
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in claims {
        let bad = |problem: &str| ClaimsError::Invalid { id: c.id.clone(), problem: problem.to_string() };
        if c.id.trim().is_empty() {
            return Err(bad("empty id"));
        }
        if !seen.insert(c.id.as_str()) {
            return Err(bad("id declared twice"));
        }
        if c.checks.is_empty() {
            return Err(bad("no checks"));
        }
        for k in &c.checks {
            if k.query.trim().is_empty() {
                return Err(bad("a check without a query"));
            }
            if !k.expect.has_bounds() {
                return Err(bad(&format!(
                    "check `{}` expects nothing (give at_least, at_most, within_factor or direction)",
                    k.query
                )));
            }
            if let Some(w) = &k.expect.within_factor {
                if !(w.factor > 1.0 && w.of > 0.0) {
                    return Err(bad(&format!("check `{}`: within_factor needs of > 0 and factor > 1", k.query)));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"
other: ignored
claims:
  - id: C7
    statement: Seven small models give about 3x
    paper: { text: "~3x", value: 3.0, source: "arXiv v1 abstract" }
    checks:
      - query: aggregate_ratio
        args: { experiment: 33, model: resnet26, jobs: 7, mode: mig, stand_in: true, classes: [small, medium] }
        expect: { within_factor: { of: 3.0, factor: 1.5 }, basis: { ours: "within half again" } }
"#;

    #[test]
    fn parses_and_checks() {
        let c = parse_claims_yaml(DOC).unwrap();
        assert_eq!(c.len(), 1);
        let k = &c[0].checks[0];
        assert_eq!(k.args["experiment"].as_f64(), Some(33.0));
        assert_eq!(k.args["model"].as_list(), Some(vec!["resnet26".to_string()]));
        assert_eq!(k.args["stand_in"].as_bool(), Some(true));
        assert_eq!(k.args["classes"].as_list().unwrap().len(), 2);
        assert!(k.expect.holds(2.5));
        assert!(!k.expect.holds(1.9));
        assert!(!k.expect.holds(f64::NAN));
    }

    #[test]
    fn rejects_unknown_fields_and_empty_expectations() {
        let typo = DOC.replace("statement:", "statment:");
        assert!(parse_claims_yaml(&typo).is_err());
        let empty = DOC.replace("within_factor: { of: 3.0, factor: 1.5 }, ", "");
        assert!(matches!(parse_claims_yaml(&empty), Err(ClaimsError::Invalid { .. })));
    }

    #[test]
    fn direction_is_a_sign() {
        let e = Expect { direction: Some(Direction::Increasing), ..Default::default() };
        assert!(e.holds(0.2) && !e.holds(0.0) && !e.holds(-1.0));
        assert_eq!(e.describe(), "> 0 (increasing)");
        assert_eq!(e.holds_over(0.1, 0.3), Some(true));
        assert_eq!(e.holds_over(-0.1, 0.3), None);
        assert_eq!(e.holds_over(-0.3, 0.0), Some(false));
    }

    #[test]
    fn an_interval_holds_misses_or_straddles() {
        let e = Expect { at_least: Some(1.1), ..Default::default() };
        assert_eq!(e.holds_over(1.2, 1.5), Some(true));
        assert_eq!(e.holds_over(0.9, 1.05), Some(false));
        assert_eq!(e.holds_over(1.05, 1.2), None);
        let band = Expect { at_least: Some(1.0), at_most: Some(2.0), ..Default::default() };
        assert_eq!(band.holds_over(0.5, 2.5), None, "an interval over the whole band straddles both ends");
        assert_eq!(band.holds_over(2.1, 2.5), Some(false));
        assert_eq!(band.holds_over(1.0, 2.0), Some(true));
        assert_eq!(band.holds_over(f64::NAN, 2.0), Some(false));
    }

    #[test]
    fn a_threshold_says_whose_it_is() {
        let c = parse_claims_yaml(DOC).unwrap();
        let b = &c[0].checks[0].expect.basis;
        assert!(b.is_ours() && b.text() == "within half again", "{b:?}");
        let paper = DOC.replace("{ ours: \"within half again\" }", "{ paper: \"about 3×\" }");
        let b = parse_claims_yaml(&paper).unwrap()[0].checks[0].expect.basis.clone();
        assert!(!b.is_ours() && b.describe() == "the paper's: about 3×", "{b:?}");
        // Missing, or given without a reason: refused.
        assert!(parse_claims_yaml(&DOC.replace(", basis: { ours: \"within half again\" }", "")).is_err());
        let empty = DOC.replace("\"within half again\"", "\"\"");
        let c: ClaimsOnly = serde_saphyr::from_str(&empty).unwrap();
        let d = diagnose(&c.claims, Path::new("artifact.yaml"), &empty);
        assert!(d.len() == 1 && d[0].line == 10 && d[0].message.contains("whose threshold"), "{d:?}");
        // Both at once is not one basis.
        assert!(parse_claims_yaml(&DOC.replace("{ ours: \"within half again\" }", "{ ours: a, paper: b }")).is_err());
    }

    const GRADED: &str = r#"
claims:
  - id: C6
    statement: MPS gives up to 80 % more
    paper: { text: "up to 1.8×", value: 1.8, source: "summary" }
    checks:
      - query: mps_over_naive_max
        expect: { at_least: 1.05, basis: { ours: "a clear gain" } }
        paper_value: 1.8
    tolerance: { absolute: 0.05, basis: "to the nearest ten percent" }
"#;

    #[test]
    fn a_tolerance_is_a_band_around_the_papers_number() {
        let c = parse_claims_yaml(GRADED).unwrap();
        let t = c[0].tolerance.as_ref().unwrap();
        assert!(t.contains(1.8, 1.75) && t.contains(1.8, 1.85) && !t.contains(1.8, 1.31));
        assert_eq!(t.describe_around(1.8), "±0.05 of 1.8 (1.75 to 1.85)");
        assert_eq!(t.contains_over(1.8, 1.76, 1.84), Some(true));
        assert_eq!(t.contains_over(1.8, 1.3, 1.7), Some(false));
        assert_eq!(t.contains_over(1.8, 1.7, 1.8), None);
        let rel = GRADED.replace("absolute: 0.05", "relative: 0.25");
        let t = parse_claims_yaml(&rel).unwrap()[0].tolerance.clone().unwrap();
        assert_eq!(t.describe_around(4.0), "±25 % of 4 (3 to 5)");
    }

    #[test]
    fn bad_tolerances_are_named_at_their_place() {
        let at = |doc: &str| {
            let c: ClaimsOnly = serde_saphyr::from_str(doc).unwrap();
            diagnose(&c.claims, Path::new("artifact.yaml"), doc)
                .into_iter()
                .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
                .collect::<Vec<_>>()
        };
        assert!(at(GRADED).is_empty());
        let wide = at(&GRADED.replace("absolute: 0.05", "relative: 1.5"));
        assert_eq!(wide.len(), 1, "{wide:?}");
        assert!(wide[0].starts_with("10:") && wide[0].contains("`relative` must lie between 0 and 1"), "{wide:?}");
        let none =
            at(&GRADED.replace("    tolerance: { absolute: 0.05, basis: \"to the nearest ten percent\" }\n", ""));
        assert!(none[0].starts_with("9:") && none[0].contains("declares no `tolerance`"), "{none:?}");
        let both = at(&GRADED.replace("absolute: 0.05", "absolute: 0.05, relative: 0.1"));
        assert!(both[0].contains("not both"), "{both:?}");
        let against = at(&GRADED.replace("paper_value: 1.8", "paper_value: 1.0"));
        assert!(against.iter().any(|m| m.contains("does not satisfy the check's own expectation")), "{against:?}");
        assert!(against.iter().any(|m| m.contains("paper's value 1.8 is the paper_value of none")), "{against:?}");
        let qualitative = at(&GRADED.replace("        paper_value: 1.8\n", ""));
        assert!(qualitative[0].contains("a qualitative claim holds or does not"), "{qualitative:?}");
        assert!(parse_claims_yaml(&GRADED.replace("absolute: 0.05", "absolute: -1")).is_err());
    }
}
