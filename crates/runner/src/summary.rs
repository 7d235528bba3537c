//! What an invocation made of a campaign: each run's outcome, and the summary the command
//! line prints and takes its exit status from.

use colloc_trace::meta::RunStatus;
use std::path::PathBuf;

/// One run made by this invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub run_id: String,
    pub status: RunStatus,
    pub reason: Option<String>,
}

/// What an invocation did with a campaign's selection.
#[derive(Debug, Clone, Default)]
pub struct CampaignSummary {
    pub campaign_dir: PathBuf,
    /// Runs the selection asked for (done now or before).
    pub selected: usize,
    /// Runs found complete in the manifest and not run again.
    pub already_done: Vec<String>,
    /// Runs made now.
    pub runs: Vec<RunOutcome>,
    /// (from, to) of incomplete directories moved to `quarantine/`.
    pub quarantined: Vec<(PathBuf, PathBuf)>,
    /// Why the campaign stopped before its end (interruption, a busy GPU, a teardown that
    /// failed); `None` when every selected run was made.
    pub stopped: Option<String>,
    pub interrupted: bool,
    /// CPU seconds used by the telemetry sampler over all runs.
    pub sampler_cpu_seconds: f64,
    /// `--executor slurm`: runs whose task ended without a complete run (cancelled, timed
    /// out, lost); the next invocation makes them.
    pub lost: Vec<String>,
}

impl CampaignSummary {
    pub fn count(&self, status: RunStatus) -> usize {
        self.runs.iter().filter(|r| r.status == status).count()
    }

    /// The process exit status this outcome calls for: 0 when every selected run was made,
    /// 1 after an early stop, 128 + N after signal N.
    pub fn exit_code(&self) -> std::process::ExitCode {
        if self.interrupted {
            std::process::ExitCode::from(128 + crate::signals::signal().unwrap_or(2).clamp(1, 127) as u8)
        } else if self.stopped.is_some() {
            std::process::ExitCode::FAILURE
        } else {
            std::process::ExitCode::SUCCESS
        }
    }

    /// A short human summary.
    pub fn render(&self) -> String {
        let mut s = format!(
            "{}: {} run(s) selected, {} already done, {} made now: {} ok, {} failed, {} skipped, {} infeasible",
            self.campaign_dir.display(),
            self.selected,
            self.already_done.len(),
            self.runs.len(),
            self.count(RunStatus::Ok),
            self.count(RunStatus::Failed),
            self.count(RunStatus::Skipped),
            self.count(RunStatus::Infeasible),
        );
        for (from, to) in &self.quarantined {
            s.push_str(&format!("\nquarantined {} → {}", from.display(), to.display()));
        }
        for r in &self.lost {
            s.push_str(&format!("\nnot made (its Slurm task ended without a complete run): {r}"));
        }
        for r in self.runs.iter().filter(|r| r.status == RunStatus::Failed) {
            s.push_str(&format!("\nfailed {}: {}", r.run_id, r.reason.as_deref().unwrap_or("")));
        }
        if self.sampler_cpu_seconds > 0.0 {
            s.push_str(&format!("\ntelemetry sampler CPU time: {:.2} s", self.sampler_cpu_seconds));
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!("\nstopped early: {why}"));
        }
        s
    }
}
