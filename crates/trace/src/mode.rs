//! How the jobs of a workload share the GPU: the collocation modes.

use serde::{Deserialize, Serialize};

/// How the jobs of a workload share the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One job alone on the whole GPU.
    Exclusive,
    /// Plain processes sharing the GPU by time slicing.
    Naive,
    /// NVIDIA Multi-Process Service, no limits.
    Mps,
    /// MPS with per-job thread percentage and pinned memory limits derived from the MIG
    /// profile the job would get: a stand-in for MIG where MIG cannot be turned on.
    MpsLimited,
    /// Multi-Instance GPU: one GPU instance per job.
    Mig,
}

impl Mode {
    pub const ALL: [Mode; 5] = [Mode::Exclusive, Mode::Naive, Mode::Mps, Mode::MpsLimited, Mode::Mig];

    /// The name as written in specs, plans and traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::Naive => "naive",
            Mode::Mps => "mps",
            Mode::MpsLimited => "mps-limited",
            Mode::Mig => "mig",
        }
    }

    /// Whether each job of the mode has a MIG profile (its own, or one it stands in for).
    pub fn uses_mig_profiles(self) -> bool {
        matches!(self, Mode::Mig | Mode::MpsLimited)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode `{0}`; expected exclusive, naive, mps, mps-limited or mig")]
pub struct UnknownMode(pub String);

impl std::str::FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| UnknownMode(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{m}\""));
        }
        assert_eq!("MPS".parse::<Mode>(), Err(UnknownMode("MPS".into())));
    }
}
