//! Faults injected for tests, each chosen per job by a selector: a comma-separated list of
//! `INDEX`, `*` (every job) or `PATTERN:INDEX` / `PATTERN:*` (jobs of runs whose id contains
//! PATTERN). The simulated job's faults (`COLLOC_FAKE_*`) and the simulated backend's
//! `--fault-wrong-mps-pipe` share this grammar.

/// Whether `selector` selects job `job` of run `run_id`.
pub(super) fn selects(selector: &str, run_id: &str, job: u32) -> bool {
    selector.split(',').map(str::trim).filter(|s| !s.is_empty()).any(|item| {
        let (pattern, index) = match item.rsplit_once(':') {
            Some((p, i)) => (Some(p), i),
            None => (None, item),
        };
        pattern.is_none_or(|p| run_id.contains(p)) && (index == "*" || index.parse::<u32>().ok() == Some(job))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors() {
        assert!(selects("1", "w.r1", 1));
        assert!(!selects("1", "w.r1", 0));
        assert!(selects("0, 2", "w.r1", 2));
        assert!(selects("*", "w.r1", 5));
        assert!(selects("e33-a:*", "e33-a-naive.r2", 3));
        assert!(!selects("e33-b:0", "e33-a-naive.r2", 0));
        assert!(selects("x:1,e33-a:0", "e33-a-naive.r2", 0));
        assert!(!selects("", "w", 0));
        assert!(!selects("e33-a:x", "e33-a-naive.r2", 0));
    }
}
