//! Host CPU and memory of each job's process tree, from `/proc`: the job's process and its
//! descendants (data-loader workers), found through the parent pid in `/proc/<pid>/stat`.

use std::collections::{HashMap, HashSet};
use std::fs;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stat {
    pub pid: u32,
    pub ppid: u32,
    /// utime + stime, clock ticks.
    pub cpu_ticks: u64,
    /// Start time after boot, clock ticks.
    pub start_ticks: u64,
    pub rss_pages: u64,
}

/// Parses the text of `/proc/<pid>/stat` (the command name may hold spaces and parentheses).
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // f[0] is field 3 (state) of proc(5).
    let field = |n: usize| f.get(n - 3).and_then(|s| s.parse::<u64>().ok());
    Some(Stat {
        pid,
        ppid: field(4)? as u32,
        cpu_ticks: field(14)? + field(15)?,
        start_ticks: field(22)?,
        rss_pages: field(24)?,
    })
}

/// Every process on the host.
pub(crate) fn scan() -> Vec<Stat> {
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            parse_stat(&fs::read_to_string(e.path().join("stat")).ok()?)
        })
        .collect()
}

/// `root` and its descendants among `procs`.
pub(crate) fn tree(root: u32, procs: &[Stat]) -> Vec<Stat> {
    let mut children: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut by_pid: HashMap<u32, usize> = HashMap::new();
    for (i, p) in procs.iter().enumerate() {
        children.entry(p.ppid).or_default().push(i);
        by_pid.insert(p.pid, i);
    }
    let mut out = Vec::new();
    let Some(&r) = by_pid.get(&root) else { return out };
    let mut stack = vec![r];
    let mut seen = HashSet::new();
    while let Some(i) = stack.pop() {
        if !seen.insert(i) {
            continue;
        }
        out.push(procs[i]);
        if let Some(c) = children.get(&procs[i].pid) {
            stack.extend(c.iter().copied());
        }
    }
    out
}

/// The value of `key` in the environment process `pid` started with (`Some(None)`: not
/// set); `None` when the process is gone, a zombie, or its environment is unreadable.
pub(crate) fn env_var(pid: u32, key: &str) -> Option<Option<String>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    if stat.rsplit_once(')').is_none_or(|(_, rest)| rest.trim_start().starts_with('Z')) {
        return None;
    }
    let env = fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{key}=");
    Some(env.split(|b| *b == 0).find_map(|kv| {
        let kv = String::from_utf8_lossy(kv);
        kv.strip_prefix(&prefix).map(str::to_string)
    }))
}

/// The command name of process `pid` (`/proc/<pid>/comm`); `None` when it is gone or
/// unreadable.
pub(crate) fn comm(pid: u32) -> Option<String> {
    let c = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let c = c.trim();
    (!c.is_empty()).then(|| c.to_string())
}

/// One job's usage at a sample.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Usage {
    pub pids: Vec<u32>,
    /// % of one core since the previous sample (for a new process: since it started).
    pub cpu_pct: Option<f64>,
    pub rss_bytes: u64,
}

/// CPU accounting across samples.
pub(crate) struct CpuMeter {
    clk_tck: f64,
    page_size: u64,
    /// (pid, start) → cpu ticks at the previous sample.
    prev: HashMap<(u32, u64), u64>,
    prev_uptime: Option<f64>,
}

impl Default for CpuMeter {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuMeter {
    pub(crate) fn new() -> Self {
        // SAFETY: sysconf has no preconditions.
        let clk = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        CpuMeter {
            clk_tck: if clk > 0 { clk as f64 } else { 100.0 },
            page_size: if page > 0 { page as u64 } else { 4096 },
            prev: HashMap::new(),
            prev_uptime: None,
        }
    }

    /// Usage of each root's tree; `None` for a root without a pid or no longer running.
    pub(crate) fn sample(&mut self, roots: &[Option<u32>]) -> Vec<Option<Usage>> {
        let uptime = fs::read_to_string("/proc/uptime")
            .ok()
            .and_then(|t| t.split_whitespace().next().and_then(|s| s.parse::<f64>().ok()));
        let procs = scan();
        let mut next = HashMap::new();
        let out = roots
            .iter()
            .map(|root| {
                let t = tree((*root)?, &procs);
                if t.is_empty() {
                    return None;
                }
                let mut cpu_rate = 0.0;
                let mut known = true;
                for p in &t {
                    let key = (p.pid, p.start_ticks);
                    let (ticks, secs) = match (self.prev.get(&key), self.prev_uptime, uptime) {
                        (Some(&before), Some(u0), Some(u1)) => (p.cpu_ticks.saturating_sub(before), u1 - u0),
                        (_, _, Some(u1)) => (p.cpu_ticks, u1 - p.start_ticks as f64 / self.clk_tck),
                        _ => {
                            known = false;
                            (0, 1.0)
                        }
                    };
                    if secs > 1e-3 {
                        cpu_rate += ticks as f64 / self.clk_tck / secs;
                    }
                    next.insert(key, p.cpu_ticks);
                }
                Some(Usage {
                    pids: t.iter().map(|p| p.pid).collect(),
                    cpu_pct: known.then_some(100.0 * cpu_rate),
                    rss_bytes: t.iter().map(|p| p.rss_pages * self.page_size).sum(),
                })
            })
            .collect();
        self.prev = next;
        self.prev_uptime = uptime;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_names() {
        let line = "1234 (python3 (worker) x) S 1200 1234 1234 0 -1 4194304 100 0 0 0 250 30 0 0 20 0 5 0 98765 1000000 2560 18446744073709551615";
        let s = parse_stat(line).unwrap();
        assert_eq!((s.pid, s.ppid, s.cpu_ticks, s.start_ticks, s.rss_pages), (1234, 1200, 280, 98765, 2560));
    }

    #[test]
    fn reads_a_process_environment() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("COLLOC_PROCFS_TEST", "pipe-a")
            .env_remove("COLLOC_PROCFS_UNSET")
            .spawn()
            .unwrap();
        let pid = child.id();
        // Until its exec is complete a new process shows an empty command line and environment.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while fs::read(format!("/proc/{pid}/cmdline")).map(|c| c.is_empty()).unwrap_or(true) {
            assert!(std::time::Instant::now() < deadline, "sleep never started");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(env_var(pid, "COLLOC_PROCFS_TEST"), Some(Some("pipe-a".into())));
        assert_eq!(comm(pid).as_deref(), Some("sleep"));
        assert_eq!(env_var(pid, "COLLOC_PROCFS_UNSET"), Some(None));
        child.kill().unwrap();
        // A zombie (killed, not yet reaped) has no environment to speak of.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while env_var(pid, "COLLOC_PROCFS_TEST").is_some() {
            assert!(std::time::Instant::now() < deadline, "the killed process still shows its environment");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.wait().unwrap();
        assert_eq!(env_var(pid, "COLLOC_PROCFS_TEST"), None);
    }

    #[test]
    fn finds_own_tree_and_measures_cpu() {
        let me = std::process::id();
        let mut m = CpuMeter::new();
        let u = m.sample(&[Some(me), None, Some(u32::MAX)]);
        let mine = u[0].as_ref().unwrap();
        assert!(mine.pids.contains(&me) && mine.rss_bytes > 0);
        assert!(u[1].is_none() && u[2].is_none());
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let u = m.sample(&[Some(me)]);
        assert!(u[0].as_ref().unwrap().cpu_pct.unwrap() >= 0.0);
    }
}
