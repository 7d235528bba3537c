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
//!         expect: { within_factor: { of: 3.0, factor: 1.5 } }
//! ```
//!
//! A check names a query that the analysis implements (`colloc_analysis::claims::QUERIES`
//! lists them), gives it a few arguments and says what the query's value must satisfy.
//! A claim holds when every one of its checks does.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    pub expect: Expect,
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

/// What the value of a query must satisfy. At least one field is given; all given must hold.
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

/// Ids are unique and non-empty, every claim has a check, every check an expectation.
pub fn validate(claims: &[ClaimSpec]) -> Result<(), ClaimsError> {
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
            if k.expect == Expect::default() {
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
        expect: { within_factor: { of: 3.0, factor: 1.5 } }
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
        let empty = DOC.replace("{ within_factor: { of: 3.0, factor: 1.5 } }", "{}");
        assert!(matches!(parse_claims_yaml(&empty), Err(ClaimsError::Invalid { .. })));
    }

    #[test]
    fn direction_is_a_sign() {
        let e = Expect { direction: Some(Direction::Increasing), ..Default::default() };
        assert!(e.holds(0.2) && !e.holds(0.0) && !e.holds(-1.0));
        assert_eq!(e.describe(), "> 0 (increasing)");
    }
}
