//! The measurement protocol a run's jobs follow, in the one shape that the plan carries,
//! the runner hands each job (`job-N.json`) and a run's `meta.json` records.
//!
//! The spec's resolved protocol (`colloc_spec::ProtocolKind`) has the same variants,
//! `Epochs` and `Window`; this one adds what a job needs (`sample_every`). As JSON the
//! variants are tagged by `kind`: `paper` (whole epochs) and `quick` (a common window).

use serde::{Deserialize, Serialize};

/// A protocol as planned: its name, what the jobs do and the run's timeout. The plan's
/// protocol and each workload's own are of this type, and a run's `meta.json` records the
/// one it ran under. Its fields are written in this order, those of [`ProtocolKind`] in
/// place of `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunProtocol {
    pub name: String,
    #[serde(flatten)]
    pub kind: ProtocolKind,
    /// Seconds after which a run's jobs are killed.
    pub timeout_seconds: f64,
}

/// What the jobs of a run do: train whole epochs, or measure a common window.
///
/// The JSON of the plan and of `meta.json` leaves out an optional field without a value and
/// ignores fields it does not know, as plans always have; a job file writes every field and
/// takes no other ([`crate::jobfile::JobFile`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum ProtocolKind {
    /// Train whole epochs, as the paper did.
    #[serde(rename = "paper")]
    Epochs { epochs: u32, sample_every: u32 },
    /// Warm up for `warmup_steps`, then measure for `window_seconds` after release; version
    /// 2: and at least `min_iterations`, until the runner's `stop`.
    #[serde(rename = "quick")]
    Window {
        warmup_steps: u32,
        window_seconds: f64,
        sample_every: u32,
        /// Iterations every job trains at least in the common window: absent (`None`) in
        /// plans and traces made before protocol version 2, where it counts as 0
        /// ([`ProtocolKind::min_iterations`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_iterations: Option<u32>,
        /// Noise-adaptive stopping, both or neither: a job meets the window only once the
        /// 95% interval of its throughput since release is within ±`precision_target`
        /// (relative half-width, in (0, 0.5]; [`crate::precision`]), or once
        /// `max_window_seconds` (at least `window_seconds`) have passed. The estimates count
        /// `max_window_seconds` as the window, its upper bound.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        precision_target: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_window_seconds: Option<f64>,
    },
}

impl ProtocolKind {
    /// Whole epochs (`paper`): no common window.
    pub fn whole_epochs(&self) -> bool {
        matches!(self, ProtocolKind::Epochs { .. })
    }

    /// Every how many iterations a job reports one.
    pub fn sample_every(&self) -> u32 {
        match *self {
            ProtocolKind::Epochs { sample_every, .. } | ProtocolKind::Window { sample_every, .. } => sample_every,
        }
    }

    /// The iterations every job trains at least in a window (0 under whole epochs and
    /// before protocol version 2).
    pub fn min_iterations(&self) -> u32 {
        match *self {
            ProtocolKind::Window { min_iterations, .. } => min_iterations.unwrap_or(0),
            ProtocolKind::Epochs { .. } => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(min_iterations: Option<u32>, precision: Option<(f64, f64)>) -> RunProtocol {
        RunProtocol {
            name: "quick".into(),
            kind: ProtocolKind::Window {
                warmup_steps: 15,
                window_seconds: 10.0,
                sample_every: 10,
                min_iterations,
                precision_target: precision.map(|p| p.0),
                max_window_seconds: precision.map(|p| p.1),
            },
            timeout_seconds: 300.0,
        }
    }

    #[test]
    fn written_as_before() {
        let cases = [
            (
                window(Some(50), None),
                r#"{"name":"quick","kind":"quick","warmup_steps":15,"window_seconds":10.0,"sample_every":10,"min_iterations":50,"timeout_seconds":300.0}"#,
            ),
            (
                window(None, None),
                r#"{"name":"quick","kind":"quick","warmup_steps":15,"window_seconds":10.0,"sample_every":10,"timeout_seconds":300.0}"#,
            ),
            (
                window(Some(0), Some((0.02, 40.0))),
                r#"{"name":"quick","kind":"quick","warmup_steps":15,"window_seconds":10.0,"sample_every":10,"min_iterations":0,"precision_target":0.02,"max_window_seconds":40.0,"timeout_seconds":300.0}"#,
            ),
            (
                RunProtocol {
                    name: "paper".into(),
                    kind: ProtocolKind::Epochs { epochs: 2, sample_every: 50 },
                    timeout_seconds: 7200.0,
                },
                r#"{"name":"paper","kind":"paper","epochs":2,"sample_every":50,"timeout_seconds":7200.0}"#,
            ),
        ];
        for (p, json) in cases {
            assert_eq!(serde_json::to_string(&p).unwrap(), json);
            assert_eq!(serde_json::from_str::<RunProtocol>(json).unwrap(), p);
        }
    }

    #[test]
    fn unknown_kinds_and_missing_fields_are_errors() {
        for bad in [
            r#"{"name":"q","kind":"epochs","epochs":1,"sample_every":1,"timeout_seconds":1.0}"#,
            r#"{"name":"q","kind":"paper","epochs":1,"timeout_seconds":1.0}"#,
        ] {
            assert!(serde_json::from_str::<RunProtocol>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_as_types() {
        let p = window(None, None).kind;
        assert!(!p.whole_epochs());
        assert_eq!((p.min_iterations(), p.sample_every()), (0, 10));
        assert!(ProtocolKind::Epochs { epochs: 1, sample_every: 3 }.whole_epochs());
    }
}
