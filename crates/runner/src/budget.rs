//! `--time-budget`: no run is begun that, by its plan estimate with a margin, could end after
//! the budget (counted from the invocation's start); a unit of runs made together on one host
//! is begun only when all of it fits.

use anyhow::Result;
use std::time::Duration;

use crate::backend::Backend;
use crate::options::{RunOptions, BUDGET_MARGIN};
use crate::queue::{starts_here, Todo};

/// With a time budget: why work estimated at `estimated` seconds is not begun after `used`,
/// because with the margin it could end after the budget; `None` when it fits.
pub(crate) fn past_budget(opts: &RunOptions, used: Duration, estimated: f64) -> Option<String> {
    let budget = opts.time_budget?.as_secs_f64();
    let (needs, used) = (estimated * BUDGET_MARGIN, used.as_secs_f64());
    (used + needs > budget).then(|| {
        format!(
            "(estimated {estimated:.0} s, with the margin {needs:.0} s) could end after the budget of {budget:.0} s ({used:.0} s used)"
        )
    })
}

/// With a time budget: why a unit of several runs that start here (its added baselines
/// and its own runs) is not begun, because together they could end after the budget.
/// `None` when they fit, when the unit has one such run (each run is checked on its own as
/// it comes), or when this GPU has started nothing yet, so that a unit larger than any
/// budget still makes progress run by run.
pub(crate) fn unit_past_budget(
    runs: &[Todo<'_>],
    gpu: &dyn Backend,
    opts: &RunOptions,
    used: Duration,
    made_here: usize,
    owed: f64,
) -> Result<Option<String>> {
    if opts.time_budget.is_none() || made_here == 0 {
        return Ok(None);
    }
    let mut starting = Vec::new();
    for t in runs {
        if starts_here(t.workload, gpu)? {
            starting.push(t);
        }
    }
    if starting.len() < 2 && owed == 0.0 {
        return Ok(None);
    }
    let Some(first) = starting.first() else { return Ok(None) };
    let estimated: f64 = starting.iter().map(|t| t.workload.estimated_seconds).sum::<f64>() + owed;
    let owing = if owed > 0.0 {
        format!(" (and {owed:.0} s for the interleaved baselines owed after them)")
    } else {
        String::new()
    };
    Ok(past_budget(opts, used, estimated).map(|why| {
        format!("{} and the {} run(s) made with it on one host{owing} {why}", first.run_id, starting.len() - 1)
    }))
}
