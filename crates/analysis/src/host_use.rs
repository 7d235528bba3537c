//! Each job's use of the host over a run's window, summed from `processes.csv.gz` as its
//! rows are read (the file is never held): the mean CPU use of the job's processes, their
//! peak resident memory and peak device memory.

use colloc_trace::rows::{Row, RowSink};

use crate::exact::{greatest, ExactSum, FINE};
use crate::model::{JobRun, Window};

/// Where each column the sums need is in the file's header.
#[derive(Default)]
struct Columns {
    mono: Option<usize>,
    job: Option<usize>,
    cpu: Option<usize>,
    rss: Option<usize>,
    gpu_mem: Option<usize>,
}

/// One job's rows in the window.
#[derive(Clone)]
struct JobSums {
    cpu_pct: ExactSum,
    rss_max: Option<f64>,
    gpu_mem_max: Option<f64>,
}

/// The sums of a run's process samples over its window, per job, fed by the file's reader.
pub(crate) struct HostUse {
    window: Option<Window>,
    columns: Columns,
    /// Per job of the workload, once it has a row in the window.
    jobs: Vec<Option<JobSums>>,
    /// Whether a row in the window has no job (polars grouped those apart).
    no_job: bool,
}

impl HostUse {
    /// Sums over `window` (`None`: the rows are only checked) for a workload of `jobs` jobs.
    pub(crate) fn new(window: Option<Window>, jobs: usize) -> Self {
        HostUse { window, columns: Columns::default(), jobs: vec![None; jobs], no_job: false }
    }

    /// Each job's CPU (in cores), RSS and device memory in the window; a job without rows in
    /// it is left as it is.
    pub(crate) fn fill(&self, jobs: &mut [JobRun]) {
        let groups = self.jobs.iter().flatten().count() + usize::from(self.no_job);
        for (job, sums) in jobs.iter_mut().zip(&self.jobs) {
            let Some(s) = sums else { continue };
            job.cpu_cores = Some(s.cpu_pct.mean(groups)).filter(|v| v.is_finite()).map(|p| p / 100.0);
            job.rss_bytes_max = s.rss_max;
            job.gpu_mem_bytes_max = s.gpu_mem_max;
        }
    }
}

impl RowSink for HostUse {
    fn needs(&self, column: &str) -> bool {
        self.window.is_some() && ["mono", "job", "cpu_pct", "rss_bytes", "gpu_mem_bytes"].contains(&column)
    }

    fn columns(&mut self, names: &[&str]) {
        let at = |name: &str| names.iter().position(|n| *n == name);
        self.columns = Columns {
            mono: at("mono"),
            job: at("job"),
            cpu: at("cpu_pct"),
            rss: at("rss_bytes"),
            gpu_mem: at("gpu_mem_bytes"),
        };
    }

    fn row(&mut self, row: &Row<'_>) {
        let numbers = row.numbers;
        let Some(w) = self.window else { return };
        let c = &self.columns;
        let value = |at: Option<usize>| at.and_then(|i| numbers[i]);
        let Some(mono) = value(c.mono) else { return };
        if !w.contains(mono) {
            return;
        }
        let Some(job) = value(c.job) else {
            self.no_job = true;
            return;
        };
        // The reader checked `job`: a whole number below the workload's jobs.
        let Some(slot) = self.jobs.get_mut(job as usize) else { return };
        let s = slot.get_or_insert_with(|| JobSums { cpu_pct: ExactSum::new(FINE), rss_max: None, gpu_mem_max: None });
        s.cpu_pct.add(value(c.cpu));
        s.rss_max = greatest(s.rss_max, value(c.rss));
        s.gpu_mem_max = greatest(s.gpu_mem_max, value(c.gpu_mem));
    }
}
