//! Where a campaign's runs are made, chosen once per campaign from the options (as the
//! backend is): the local executor makes them on this host's GPUs ([`crate::local`]), the
//! Slurm executor has a job array make them and merges what its tasks staged
//! ([`crate::slurm`]). Both are given the campaign directory [`crate::prepare`] opened and
//! call its preparation (quarantine, the listed runs' check, the versions, the GPU model) at
//! their own point; neither calls into the other.

use anyhow::Result;
use colloc_plan::Plan;

use crate::options::RunOptions;
use crate::prepare::Opened;
use crate::summary::CampaignSummary;

/// A way of making a campaign's selected runs.
pub(crate) trait Executor {
    /// An error for options this executor cannot run with, before the campaign directory is
    /// opened.
    fn check(&self, opts: &RunOptions) -> Result<()>;

    /// Makes the selected runs of the opened campaign `campaign` (or has them made), holding
    /// its lock until they are, and says what came of them.
    fn make<'a>(&self, plan: &'a Plan, opts: &RunOptions, campaign: Opened<'a>) -> Result<CampaignSummary>;
}
