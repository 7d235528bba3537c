//! Progress: on a terminal, a campaign bar (estimated GPU seconds, with an ETA) and one line
//! per running job; otherwise plain time-stamped log lines on stderr.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::options::ProgressMode;

#[derive(Clone)]
pub(crate) struct Progress {
    inner: Arc<Inner>,
    /// `GPU <i>: ` before every line, on a campaign over several GPUs.
    prefix: Option<Arc<str>>,
}

struct Inner {
    kind: Kind,
    start: Instant,
    /// Each running run's job lines, by run id (several GPUs run at once).
    jobs: Mutex<BTreeMap<String, Vec<ProgressBar>>>,
}

enum Kind {
    Bars { multi: MultiProgress, campaign: ProgressBar },
    Plain,
    Quiet,
}

impl Progress {
    /// `estimated_seconds`: the plan's estimate for the runs to do.
    pub(crate) fn new(mode: ProgressMode, runs: usize, estimated_seconds: f64) -> Progress {
        let kind = match mode {
            ProgressMode::Quiet => Kind::Quiet,
            ProgressMode::Plain => Kind::Plain,
            ProgressMode::Auto if !std::io::stderr().is_terminal() => Kind::Plain,
            ProgressMode::Auto => {
                let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
                let campaign = multi.add(ProgressBar::new(estimated_seconds.max(1.0).round() as u64));
                campaign.set_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} [{wide_bar}] {percent:>3}% of est. GPU time, ETA {eta}  {msg}",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                );
                campaign.set_message(format!("0/{runs} runs"));
                Kind::Bars { multi, campaign }
            }
        };
        Progress {
            inner: Arc::new(Inner { kind, start: Instant::now(), jobs: Mutex::new(BTreeMap::new()) }),
            prefix: None,
        }
    }

    /// The same progress, its lines saying they are of GPU `index`.
    pub(crate) fn for_gpu(&self, index: u32) -> Progress {
        Progress { inner: self.inner.clone(), prefix: Some(format!("GPU {index}: ").into()) }
    }

    /// A line that always shows (above the bars on a terminal).
    pub(crate) fn log(&self, msg: &str) {
        let owned;
        let msg = match &self.prefix {
            Some(p) => {
                owned = format!("{p}{msg}");
                owned.as_str()
            }
            None => msg,
        };
        match &self.inner.kind {
            Kind::Bars { multi, .. } => {
                let _ = multi.println(msg);
            }
            Kind::Plain => {
                let t = self.inner.start.elapsed().as_secs();
                eprintln!("[{:02}:{:02}:{:02}] {msg}", t / 3600, (t / 60) % 60, t % 60);
            }
            Kind::Quiet => {}
        }
    }

    /// A run begins; `jobs` are the jobs' labels.
    pub(crate) fn run_started(&self, n: usize, total: usize, run_id: &str, what: &str, jobs: &[String]) {
        self.log(&format!("run {n}/{total} {run_id}: {what}"));
        if let Kind::Bars { multi, campaign } = &self.inner.kind {
            campaign.set_message(format!("{}/{total} runs, now {run_id}", n - 1));
            let mut bars = self.inner.jobs.lock().unwrap_or_else(|p| p.into_inner());
            for b in bars.remove(run_id).into_iter().flatten() {
                b.finish_and_clear();
            }
            let gpu = self.prefix.as_deref().unwrap_or("");
            let mut lines = Vec::new();
            for label in jobs {
                let b = multi.add(ProgressBar::new_spinner());
                b.set_style(ProgressStyle::with_template("  {spinner} {prefix:<36} {msg}").expect("valid template"));
                b.set_prefix(format!("{gpu}{label}"));
                b.set_message("setup");
                b.enable_steady_tick(Duration::from_millis(200));
                lines.push(b);
            }
            bars.insert(run_id.to_string(), lines);
        }
    }

    /// A job's phase (`setup`, `ready`, `training`, `done`, ...) and a detail.
    pub(crate) fn job(&self, run_id: &str, job: usize, phase: &str, detail: &str, log_it: bool) {
        match &self.inner.kind {
            Kind::Bars { .. } => {
                let bars = self.inner.jobs.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(b) = bars.get(run_id).and_then(|l| l.get(job)) {
                    b.set_message(if detail.is_empty() { phase.to_string() } else { format!("{phase}: {detail}") });
                }
            }
            Kind::Plain if log_it => {
                let d = if detail.is_empty() { String::new() } else { format!(" ({detail})") };
                self.log(&format!("{run_id}: job {job} {phase}{d}"));
            }
            _ => {}
        }
    }

    /// A run ended; `done_estimate` of the plan's seconds are now behind us.
    pub(crate) fn run_finished(&self, n: usize, total: usize, run_id: &str, outcome: &str, done_estimate: f64) {
        self.log(&format!("run {n}/{total} {run_id}: {outcome}"));
        if let Kind::Bars { campaign, .. } = &self.inner.kind {
            let mut bars = self.inner.jobs.lock().unwrap_or_else(|p| p.into_inner());
            for b in bars.remove(run_id).into_iter().flatten() {
                b.finish_and_clear();
            }
            campaign.inc(done_estimate.max(0.0).round() as u64);
            campaign.set_message(format!("{n}/{total} runs"));
        }
    }

    pub(crate) fn finish(&self) {
        if let Kind::Bars { campaign, .. } = &self.inner.kind {
            let mut bars = self.inner.jobs.lock().unwrap_or_else(|p| p.into_inner());
            for b in std::mem::take(&mut *bars).into_values().flatten() {
                b.finish_and_clear();
            }
            campaign.finish();
        }
    }
}
