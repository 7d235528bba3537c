//! What Slurm is asked: the array tasks of a campaign still in its queue (`squeue`, only a
//! liveness probe), and the cluster's largest array (`scontrol show config`).

use anyhow::{bail, Result};
use std::collections::BTreeSet;
use std::time::Duration;

use crate::command::Cmd;

/// The array tasks of job name `name` in Slurm's queue (pending, running, completing), as
/// (array job id, index).
pub(super) fn queued_tasks(name: &str) -> Result<BTreeSet<(String, usize)>> {
    let out = Cmd::new("squeue", &["-h", "-r", "--name", name, "-o", "%i"], Duration::from_secs(60)).run()?;
    if !out.success {
        bail!("squeue failed: {}", out.text());
    }
    Ok(parse_queue(&out.stdout))
}

/// `squeue -r -o %i` lines: `<job>_<index>` per array task.
fn parse_queue(text: &str) -> BTreeSet<(String, usize)> {
    text.lines()
        .filter_map(|l| l.trim().split_once('_'))
        .filter_map(|(job, i)| i.parse().ok().map(|i| (job.to_string(), i)))
        .collect()
}

/// The cluster's `MaxArraySize` (1001 when it cannot be read).
pub(super) fn max_array_size() -> usize {
    Cmd::new("scontrol", &["show", "config"], Duration::from_secs(60))
        .run()
        .ok()
        .filter(|o| o.success)
        .and_then(|o| {
            o.stdout.lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "MaxArraySize").then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(1001)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_lines_are_array_tasks() {
        let q = parse_queue("12_0\n12_3\n 13_1 \n14\n12_[4-9%2]\n");
        let v: Vec<(String, usize)> = q.into_iter().collect();
        assert_eq!(v, [("12".into(), 0), ("12".into(), 3), ("13".into(), 1)]);
    }
}
