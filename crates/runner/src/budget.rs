//! `--time-budget`: no run is begun that, by its plan estimate with a margin, could end after
//! the budget (counted from the invocation's start); a unit of runs made together on one host
//! is begun only when all of it fits. A baseline the runner added to a unit (or owes after
//! it) was counted, with the margin, when the unit was begun; as it comes it is checked
//! against its bare estimate, so that a unit whose runs took longer than estimated keeps its
//! baselines on its host while they still fit the budget.

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

/// With a time budget: why a run that starts here is not begun after `used`. A run the
/// runner added (a baseline of the unit it belongs to, counted with the margin when the unit
/// was begun) is held to its bare estimate; any other to its estimate with the margin.
pub(crate) fn run_past_budget(opts: &RunOptions, used: Duration, estimated: f64, added: bool) -> Option<String> {
    if !added {
        return past_budget(opts, used, estimated);
    }
    let budget = opts.time_budget?.as_secs_f64();
    let used = used.as_secs_f64();
    (used + estimated > budget).then(|| {
        format!(
            "(estimated {estimated:.0} s, a baseline added to the unit before it) could end after the budget of {budget:.0} s ({used:.0} s used)"
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

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(seconds: u64) -> RunOptions {
        let mut o = RunOptions::new("unused");
        o.time_budget = Some(Duration::from_secs(seconds));
        o
    }

    #[test]
    fn an_added_baseline_is_held_to_its_bare_estimate_and_any_other_run_to_the_margin() {
        let o = budget(100);
        let used = Duration::from_secs(86);
        // 86 + 12 = 98 fits 100; 86 + 12 × 1.25 = 101 does not.
        assert_eq!(run_past_budget(&o, used, 12.0, true), None);
        let why = run_past_budget(&o, used, 12.0, false).expect("with the margin 15 s, past 100 s");
        assert!(
            why.starts_with("(estimated 12 s, with the margin 15 s) could end after the budget of 100 s (86 s used)"),
            "{why}"
        );
        // Past the budget even bare: refused, saying it is an added baseline.
        let why = run_past_budget(&o, used, 16.0, true).expect("86 + 16 > 100");
        assert!(why.starts_with("(estimated 16 s, a baseline added to the unit before it) could end after"), "{why}");
        // Without a budget nothing is refused.
        let free = RunOptions::new("unused");
        assert_eq!(run_past_budget(&free, Duration::from_secs(10_000), 1e6, true), None);
        assert_eq!(run_past_budget(&free, Duration::from_secs(10_000), 1e6, false), None);
    }
}
