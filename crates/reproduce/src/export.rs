//! The campaign's results as tidy frames, for a researcher who extends the study in polars,
//! pandas or DuckDB (`cargo xtask export`).
//!
//! Every column is read from [`colloc_analysis::Results`]: nothing here decides anything the
//! analysis decided (which runs count, which baseline a ratio divides by, what is
//! implausible); it lays the results out one row per run, job, workload, baseline link, host,
//! telemetry window and provenance value. Each frame's columns are declared once, with their
//! type, unit and meaning: the same declarations make the rows and the schema document
//! ([`schema_markdown`], `SCHEMA.md` beside the files and `docs/EXPORT.md` in the project).
//!
//! The files are CSV (RFC 4180: comma-separated, CRLF line ends, a field quoted when it holds
//! a comma, a quote or a line break, quotes inside doubled; UTF-8 without a byte-order mark;
//! a missing value is an empty field), one per frame. Numbers are written in Rust's shortest
//! form that reads back to the same `f64` (never an exponent; a float's whole value with
//! `.0`, so that readers that guess types read float columns as floats), so a value reads
//! back to the bit; rows come in a fixed order, so the same traces give the same bytes. Parquet is not
//! offered: polars' `parquet` feature would add 124 crates to the build (polars' streaming
//! engine, an HTTP and TLS stack, three compression libraries in C) for files of a few
//! hundred rows.

use anyhow::{bail, Context, Result};
use colloc_analysis::{BaselineRun, JobRun, PlannedJobInfo, Results, RunResult, WorkloadResult};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What to export, and where.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// The campaign (default: artifact.yaml's `shipped_campaign`).
    pub campaign: Option<&'a str>,
    /// Its traces (default: the campaign's directory, [`crate::campaign_dir`]).
    pub traces: Option<&'a Path>,
    /// The folder of the files (default: `target/export/<campaign>/` under the project).
    pub out: Option<&'a Path>,
}

/// What an export wrote.
pub struct Exported {
    pub campaign: String,
    pub out: PathBuf,
    /// The frames, in the order written.
    pub frames: Vec<Frame>,
    /// The files written, in order (the frames', then `SCHEMA.md`).
    pub files: Vec<PathBuf>,
    /// The results the frames come from.
    pub results: Results,
}

/// Verifies and analyses the campaign as `reproduce` does (against its plan when
/// artifact.yaml declares it) and writes its frames and `SCHEMA.md` under the output folder.
pub fn export(root: &Path, req: &Request) -> Result<Exported> {
    let project = colloc_spec::load_project(root)?;
    let artifact = &project.artifact;
    let campaign = req.campaign.map(str::to_string).unwrap_or_else(|| artifact.shipped_campaign.value.clone());
    let dir = match req.traces {
        Some(t) => t.to_path_buf(),
        None => crate::campaign_dir(artifact, root, &campaign),
    };
    if !dir.is_dir() {
        bail!("campaign {campaign}: no traces at {}", dir.display());
    }
    let plan = artifact
        .campaigns
        .iter()
        .any(|c| c.name.value == campaign)
        .then(|| colloc_plan::plan_project_campaign(&project, &campaign, None))
        .transpose()?;
    let results = colloc_analysis::analyse(&dir, plan.as_ref())
        .with_context(|| format!("campaign {campaign}: traces at {}", dir.display()))?;
    let out = req.out.map(Path::to_path_buf).unwrap_or_else(|| root.join("target/export").join(&campaign));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let frames = frames(&results);
    let mut files = Vec::new();
    let mut write = |name: String, bytes: String| -> Result<()> {
        let p = out.join(name);
        std::fs::write(&p, bytes).with_context(|| format!("writing {}", p.display()))?;
        files.push(p);
        Ok(())
    };
    for f in &frames {
        write(format!("{}.csv", f.name), f.csv())?;
    }
    write(SCHEMA_FILE.to_string(), schema_markdown())?;
    Ok(Exported { campaign, out, frames, files, results })
}

/// The schema document's name beside the files.
pub const SCHEMA_FILE: &str = "SCHEMA.md";

/// A value of a frame's cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Cell {
    /// The cell as a CSV field: RFC 4180 quoting; numbers in their shortest round-trip form.
    fn csv(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Text(s) => colloc_report::escape::csv(s),
            Cell::Int(i) => i.to_string(),
            Cell::Float(x) => float_field(*x),
            Cell::Bool(b) => b.to_string(),
        }
    }
}

/// A float as a CSV field: Rust's shortest form that reads back to the same `f64`, never an
/// exponent, and a whole value with `.0`, so that a reader that guesses a column's type from
/// its values (polars, pandas, DuckDB) reads a float column whose values happen to be whole
/// (bytes, a clock scale of 1) as floats, not integers.
fn float_field(x: f64) -> String {
    let s = format!("{x}");
    if s.contains('.') {
        s
    } else {
        s + ".0"
    }
}

/// A column's type, as the schema names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Float,
    Bool,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Int => "integer",
            Kind::Float => "float",
            Kind::Bool => "boolean",
        }
    }
}

/// A column's declaration: its name, type, unit (empty when it has none) and meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    pub unit: String,
    pub meaning: String,
}

/// One frame: its columns and its rows (each as long as the columns).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub name: &'static str,
    /// What a row is, and the order of the rows.
    pub about: &'static str,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

impl Frame {
    /// The frame as RFC 4180 CSV, header first.
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let mut line = |fields: Vec<String>| {
            out.push_str(&fields.join(","));
            out.push_str("\r\n");
        };
        line(self.columns.iter().map(|c| colloc_report::escape::csv(&c.name)).collect());
        for r in &self.rows {
            line(r.iter().map(Cell::csv).collect());
        }
        out
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// A column of rows of type `T`: its declaration and how a row gives its cell.
struct Col<T> {
    column: Column,
    get: Box<dyn Fn(&T) -> Cell>,
}

fn col<T>(name: &str, kind: Kind, unit: &str, meaning: &str, get: impl Fn(&T) -> Cell + 'static) -> Col<T> {
    Col {
        column: Column { name: name.to_string(), kind, unit: unit.to_string(), meaning: meaning.to_string() },
        get: Box::new(get),
    }
}

fn text(s: &str) -> Cell {
    Cell::Text(s.to_string())
}
fn opt_text(s: Option<&str>) -> Cell {
    s.map_or(Cell::Null, text)
}
fn int(i: impl TryInto<i64>) -> Cell {
    i.try_into().map_or(Cell::Null, Cell::Int)
}
fn opt_int<I: TryInto<i64>>(i: Option<I>) -> Cell {
    i.map_or(Cell::Null, int)
}
/// A float; a value that is not finite is missing.
fn float(x: Option<f64>) -> Cell {
    x.filter(|x| x.is_finite()).map_or(Cell::Null, Cell::Float)
}
fn boolean(b: bool) -> Cell {
    Cell::Bool(b)
}
/// A list of texts joined by `; ` (empty: missing).
fn list(items: &[String]) -> Cell {
    if items.is_empty() {
        Cell::Null
    } else {
        Cell::Text(items.join("; "))
    }
}

/// Builds a frame from its columns and rows.
fn build<T>(name: &'static str, about: &'static str, cols: Vec<Col<T>>, rows: impl IntoIterator<Item = T>) -> Frame {
    let rows = rows.into_iter().map(|r| cols.iter().map(|c| (c.get)(&r)).collect()).collect();
    Frame { name, about, columns: cols.into_iter().map(|c| c.column).collect(), rows }
}

/// What each frame is: its name and what a row of it is.
const RUNS: (&str, &str) = ("runs", "One row per run directory, whatever its status, sorted by run id.");
const JOBS: (&str, &str) = ("jobs", "One row per job of a run, in the order of `runs`, then by job index.");
const WORKLOADS: (&str, &str) = (
    "workloads",
    "One row per workload with runs, in the analysis' order (experiment, label, data, mode, id); \
     statistics over its counted repetitions (superseded attempts left out).",
);
const BASELINES: (&str, &str) = (
    "baselines",
    "One row per run alone that a job's ratio divides by (the ratio divides by their median), \
     in the order of `jobs`, then as the analysis lists them.",
);
const BASELINE_HOSTS: (&str, &str) = (
    "baseline_hosts",
    "One row per model alone on the whole GPU (per data source and protocol) and host with runs \
     of it: what a collocated run on that host is divided by; sorted as the analysis sorts them.",
);
const HOSTS: (&str, &str) =
    ("hosts", "One row per host (GPU UUID) named by the runs, sorted by it; an empty id gathers runs naming none.");
const TELEMETRY: (&str, &str) = (
    "telemetry",
    "One row per run with GPU telemetry over its common window (averages unless said), in the order of `runs`.",
);
const PROVENANCE: (&str, &str) = (
    "provenance",
    "One row per value of the campaign's provenance (distinct values over its runs, sorted), field by field.",
);

/// The campaign's frames, in the order written.
pub fn frames(results: &Results) -> Vec<Frame> {
    let by_id: HashMap<&str, &WorkloadResult> = results.workloads.iter().map(|w| (w.id.as_str(), w)).collect();
    let runs: Vec<RunRow> =
        results.runs.iter().map(|r| RunRow { run: r, workload: by_id.get(r.workload_id.as_str()).copied() }).collect();
    let jobs: Vec<JobRow> = runs
        .iter()
        .flat_map(|r| {
            r.run.jobs.iter().map(move |j| JobRow {
                run: r.run,
                job: j,
                planned: r.workload.and_then(|w| w.jobs.iter().find(|p| p.index == j.index)),
            })
        })
        .collect();
    let links: Vec<LinkRow> =
        jobs.iter().flat_map(|j| j.job.baseline_runs.iter().map(move |b| LinkRow { row: j, baseline: b })).collect();
    let hosts: Vec<HostRow> = hosts(&results.runs);
    let host_baselines: Vec<HostBaselineRow> = results
        .baselines
        .iter()
        .flat_map(|b| b.hosts.iter().map(move |h| HostBaselineRow { baseline: b, host: h }))
        .collect();
    let telemetry: Vec<&RunResult> = results.runs.iter().filter(|r| r.utilisation.is_some()).collect();
    vec![
        build(RUNS.0, RUNS.1, run_columns(), runs.iter().copied()),
        build(JOBS.0, JOBS.1, job_columns(), jobs.iter().copied()),
        build(WORKLOADS.0, WORKLOADS.1, workload_columns(), results.workloads.iter()),
        build(BASELINES.0, BASELINES.1, link_columns(), links.iter().copied()),
        build(BASELINE_HOSTS.0, BASELINE_HOSTS.1, host_baseline_columns(), host_baselines.iter().copied()),
        build(HOSTS.0, HOSTS.1, host_columns(), hosts),
        build(TELEMETRY.0, TELEMETRY.1, telemetry_columns(), telemetry),
        build(PROVENANCE.0, PROVENANCE.1, provenance_columns(), provenance_rows(results)),
    ]
}

/// The frames' names, what a row is, and their columns: the schema, without any data.
pub fn schema() -> Vec<(&'static str, &'static str, Vec<Column>)> {
    fn cols<T>(c: Vec<Col<T>>) -> Vec<Column> {
        c.into_iter().map(|c| c.column).collect()
    }
    vec![
        (RUNS.0, RUNS.1, cols(run_columns())),
        (JOBS.0, JOBS.1, cols(job_columns())),
        (WORKLOADS.0, WORKLOADS.1, cols(workload_columns())),
        (BASELINES.0, BASELINES.1, cols(link_columns())),
        (BASELINE_HOSTS.0, BASELINE_HOSTS.1, cols(host_baseline_columns())),
        (HOSTS.0, HOSTS.1, cols(host_columns())),
        (TELEMETRY.0, TELEMETRY.1, cols(telemetry_columns())),
        (PROVENANCE.0, PROVENANCE.1, cols(provenance_columns())),
    ]
}

/// The schema as Markdown: per frame what a row is, then one line per column with its type,
/// unit and meaning. `SCHEMA.md` beside the files; `docs/EXPORT.md` in the project.
pub fn schema_markdown() -> String {
    let mut s = String::from(SCHEMA_HEAD);
    for (name, about, columns) in schema() {
        s.push_str(&format!("\n## `{name}.csv`\n\n{about}\n\n| column | type | unit | meaning |\n|---|---|---|---|\n"));
        // Our own words, written as Markdown (no `|` in them: a unit test holds it).
        for c in columns {
            s.push_str(&format!("| `{}` | {} | {} | {} |\n", c.name, c.kind.word(), c.unit, c.meaning));
        }
    }
    s
}

const SCHEMA_HEAD: &str = "# The exported frames\n\n\
`cargo xtask export [--campaign NAME] [--traces DIR] [--out DIR]` writes a campaign's results as \
tidy frames, one CSV file each, with this file beside them (default folder: \
`target/export/<campaign>/`). Every value comes from the analysis' results \
(`colloc_analysis::Results`): the same runs counted, the same baselines, the same intervals and \
marks as the tables and figures.\n\n\
The files are RFC 4180 CSV (comma-separated, CRLF line ends, a field quoted when it holds a comma, \
a quote or a line break), UTF-8. A missing value is an empty field; booleans are `true` and \
`false`; numbers are written in the shortest form that reads back to the same 64-bit float, \
without an exponent, and a float column's whole values with `.0` (`3.0`), so that polars, pandas \
and DuckDB read a float column as floats whatever its values. Lists \
of texts (reasons, notes) are joined by `; `. Units are in the column names (`_img_s` images per \
second, `_s` seconds, `_bytes`, `_pct` percent, `_w` watts, `_j` joules) and below. Statistics over \
repetitions come as `_median`, `_min`, `_max` and `_n` (the number of values). `run_id`, \
`workload_id` and `host_id` join the frames.\n\n\
The types below are the columns' own. A reader that guesses types from the first rows reads a \
column empty there as text: in polars pass `infer_schema_length=None` (pandas reads the whole \
file; DuckDB samples 20,480 rows); a column empty throughout (e.g. whole-epoch measures under a \
window protocol) reads as text and is cast by its type here.\n\n\
Parquet is not offered: polars' `parquet` feature adds 124 crates to the build (its streaming \
engine, an HTTP and TLS stack, C compression libraries; outside polars alone they took 90 s to \
build on 2 cores), far more than files of a few hundred \
rows are worth; `pl.read_csv(...).write_parquet(...)` makes one.\n";

/// A run with its workload.
#[derive(Clone, Copy)]
struct RunRow<'a> {
    run: &'a RunResult,
    workload: Option<&'a WorkloadResult>,
}

fn run_columns<'a>() -> Vec<Col<RunRow<'a>>> {
    use Kind::*;
    let w = |r: &RunRow<'a>, f: fn(&WorkloadResult) -> Cell| r.workload.map_or(Cell::Null, f);
    let mut c = vec![
        col(
            "run_id",
            Text,
            "",
            "The run: `<workload id>.r<repetition>`, `.a<attempt>` for a later attempt.",
            |r: &RunRow| text(&r.run.run_id),
        ),
        col("workload_id", Text, "", "Its workload (`workloads.workload_id`).", |r: &RunRow| text(&r.run.workload_id)),
        col("experiment", Int, "", "The paper's experiment number (from the workload).", move |r: &RunRow<'a>| {
            w(r, |w| int(w.experiment))
        }),
        col("label", Text, "", "The workload's label in its experiment.", move |r: &RunRow<'a>| {
            w(r, |w| text(&w.label))
        }),
        col(
            "mode",
            Text,
            "",
            "The workload's mode: exclusive, naive, mps, mps-limited or mig.",
            move |r: &RunRow<'a>| w(r, |w| text(w.mode.as_str())),
        ),
        col("mode_applied", Text, "", "The mode the runner applied (or planned, when nothing ran).", |r: &RunRow| {
            text(&r.run.mode_applied)
        }),
        col(
            "layout",
            Text,
            "",
            "MIG slices per job (`1g×7`) in mig and mps-limited modes; empty otherwise.",
            move |r: &RunRow<'a>| w(r, |w| text(&w.layout)),
        ),
        col("data", Text, "", "The data source: synthetic, generated or imagefolder.", move |r: &RunRow<'a>| {
            w(r, |w| text(&w.data))
        }),
        col(
            "protocol",
            Text,
            "",
            "The protocol of a campaign part that names its own (`~<protocol>`); empty under the campaign's.",
            move |r: &RunRow<'a>| w(r, |w| text(&w.own_protocol)),
        ),
        col("repetition", Int, "", "The repetition number.", |r: &RunRow| int(r.run.repetition)),
        col("attempt", Int, "", "The attempt number of that repetition.", |r: &RunRow| int(r.run.attempt)),
        col(
            "superseded",
            Bool,
            "",
            "A later attempt of the same repetition replaces this run in every statistic.",
            |r: &RunRow| boolean(r.run.superseded),
        ),
        col("status", Text, "", "ok, failed, skipped or infeasible.", |r: &RunRow| text(r.run.status.as_str())),
        col("reason", Text, "", "Why the run is not ok.", |r: &RunRow| opt_text(r.run.reason.as_deref())),
        col("simulated", Bool, "", "Made by the runner's simulated backend.", |r: &RunRow| boolean(r.run.simulated)),
    ];
    c.extend(run_place_columns());
    c.extend(run_measure_columns());
    c
}

fn run_place_columns<'a>() -> Vec<Col<RunRow<'a>>> {
    use Kind::*;
    let win = |r: &RunRow, f: fn(&colloc_analysis::Window) -> f64| float(r.run.window.as_ref().map(f));
    vec![
        col(
            "host_id",
            Text,
            "",
            "The host: its GPU's UUID (`hosts.host_id`); empty when the trace names none.",
            |r: &RunRow| opt_text(r.run.host_id.as_deref()),
        ),
        col("invocation", Text, "", "The runner invocation that made the run; empty in older traces.", |r: &RunRow| {
            opt_text(r.run.invocation.as_deref())
        }),
        col("git_commit", Text, "", "The runner's source commit, its first 12 characters.", |r: &RunRow| {
            opt_text(r.run.git_commit.as_deref())
        }),
        col(
            "host_cpu_single_thread_mib_s",
            Float,
            "MiB/s",
            "The host's single-thread CPU score (SHA-256 of memory), when measured.",
            |r: &RunRow| float(r.run.host_cpu_single_thread_mib_s),
        ),
        col(
            "settled",
            Bool,
            "",
            "An unrecorded run was made first on this host in the invocation (`--settle`).",
            |r: &RunRow| boolean(r.run.settled),
        ),
        col("started_at", Text, "RFC 3339", "When the run started.", |r: &RunRow| text(&r.run.started_at)),
        col("ended_at", Text, "RFC 3339", "When the run ended.", |r: &RunRow| text(&r.run.ended_at)),
        col(
            "protocol_version",
            Int,
            "",
            "The job protocol its jobs spoke: 1 (each job's own window) or 2 (one common window).",
            |r: &RunRow| int(r.run.protocol_version),
        ),
        col(
            "window_start_mono_s",
            Float,
            "s",
            "Start of the common window, host monotonic seconds.",
            move |r: &RunRow| win(r, |w| w.start_mono),
        ),
        col("window_end_mono_s", Float, "s", "End of the common window, host monotonic seconds.", move |r: &RunRow| {
            win(r, |w| w.end_mono)
        }),
        col("window_s", Float, "s", "Length of the common window in which every job trained.", move |r: &RunRow| {
            win(r, |w| w.seconds)
        }),
        col("clock_scale", Float, "", "The jobs' seconds per host second (1 for real traces).", move |r: &RunRow| {
            win(r, |w| w.clock_scale)
        }),
    ]
}

fn run_measure_columns<'a>() -> Vec<Col<RunRow<'a>>> {
    use Kind::*;
    vec![
        col("n_jobs", Int, "", "The jobs of the run (`jobs` has one row each).", |r: &RunRow| int(r.run.jobs.len())),
        col(
            "aggregate_throughput_img_s",
            Float,
            "images/s",
            "The jobs' throughputs in the common window, summed.",
            |r: &RunRow| float(r.run.aggregate_throughput),
        ),
        col(
            "stp",
            Float,
            "ratio",
            "System throughput (STP): each job's throughput over its model alone, summed.",
            |r: &RunRow| float(r.run.aggregate_ratio),
        ),
        col(
            "cross_host_baseline",
            Bool,
            "",
            "Some job's ratio divides by the baseline of other hosts (†).",
            |r: &RunRow| boolean(r.run.cross_host_baseline),
        ),
        col("disturbed", Bool, "", "A process of no job was on the GPU during the window (‡).", |r: &RunRow| {
            boolean(r.run.disturbed)
        }),
        col(
            "workload_implausible",
            Bool,
            "",
            "The run's workload is marked implausible (§; `workloads.implausible_reasons`).",
            |r: &RunRow| r.workload.map_or(Cell::Null, |w| boolean(!w.implausible.is_empty())),
        ),
        col(
            "energy_per_image_j",
            Float,
            "J/image",
            "GPU energy in the window over the images trained in it.",
            |r: &RunRow| float(r.run.energy_per_image_j),
        ),
        col("notes", Text, "", "Why some value is missing, `; `-joined.", |r: &RunRow| list(&r.run.notes)),
    ]
}

/// A job of a run, with its planned job.
#[derive(Clone, Copy)]
struct JobRow<'a> {
    run: &'a RunResult,
    job: &'a JobRun,
    planned: Option<&'a PlannedJobInfo>,
}

fn job_columns<'a>() -> Vec<Col<JobRow<'a>>> {
    use Kind::*;
    let p = |r: &JobRow, f: fn(&PlannedJobInfo) -> Cell| r.planned.map_or(Cell::Null, f);
    let mut c = vec![
        col("run_id", Text, "", "The run (`runs.run_id`).", |r: &JobRow| text(&r.run.run_id)),
        col("workload_id", Text, "", "Its workload (`workloads.workload_id`).", |r: &JobRow| text(&r.run.workload_id)),
        col("job_index", Int, "", "The job's index in its workload, from 0.", |r: &JobRow| int(r.job.index)),
        col("model", Text, "", "The model trained.", move |r: &JobRow| p(r, |p| text(&p.model))),
        col("model_class", Text, "", "Its class (small, medium, large).", move |r: &JobRow| {
            p(r, |p| text(&p.model_class))
        }),
        col("dataset", Text, "", "The dataset.", move |r: &JobRow| p(r, |p| text(&p.dataset))),
        col("batch_size", Int, "images", "The batch size.", move |r: &JobRow| p(r, |p| int(p.batch_size))),
        col("train_images", Int, "images", "The dataset's training images (an epoch).", move |r: &JobRow| {
            p(r, |p| int(p.train_count))
        }),
        col("mig_profile", Text, "", "The job's MIG profile (mig mode).", move |r: &JobRow| {
            p(r, |p| opt_text(p.mig_profile.as_deref()))
        }),
        col("mig_class", Text, "", "The MIG class as declared (mig and mps-limited).", move |r: &JobRow| {
            p(r, |p| opt_text(p.mig_class.as_deref()))
        }),
        col("stands_in_for", Text, "", "mps-limited: the MIG profile the caps stand in for.", move |r: &JobRow| {
            p(r, |p| opt_text(p.stands_in_for.as_deref()))
        }),
        col("mps_thread_pct", Int, "%", "mps-limited: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.", move |r: &JobRow| {
            p(r, |p| opt_int(p.mps_thread_pct))
        }),
        col("mps_mem_limit_mib", Int, "MiB", "mps-limited: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT.", move |r: &JobRow| {
            p(r, |p| opt_int(p.mps_mem_limit_mib))
        }),
        col("failure", Text, "", "Why the job failed.", |r: &JobRow| opt_text(r.job.failure.as_deref())),
    ];
    c.extend(job_speed_columns());
    c.extend(job_use_columns());
    c
}

fn job_speed_columns<'a>() -> Vec<Col<JobRow<'a>>> {
    use Kind::*;
    let ci =
        |r: &JobRow, f: fn(&colloc_analysis::ThroughputCi) -> Cell| r.job.throughput_ci.as_ref().map_or(Cell::Null, f);
    vec![
        col("throughput_img_s", Float, "images/s", "The job's throughput in the common window.", |r: &JobRow| {
            float(r.job.throughput)
        }),
        col(
            "throughput_ci_half_width_img_s",
            Float,
            "images/s",
            "Half-width of its 95% interval (batch means).",
            move |r: &JobRow| ci(r, |c| float(Some(c.half_width))),
        ),
        col("throughput_ci_rel", Float, "ratio", "That half-width over the batch means' mean.", move |r: &JobRow| {
            ci(r, |c| float(Some(c.relative_half_width)))
        }),
        col("throughput_ci_batches", Int, "", "The batches of the interval.", move |r: &JobRow| {
            ci(r, |c| int(c.batches))
        }),
        col("throughput_ci_records", Int, "", "The iteration records ending in the window.", move |r: &JobRow| {
            ci(r, |c| int(c.records))
        }),
        col("throughput_ci_missing", Text, "", "Why the job has no interval.", |r: &JobRow| {
            opt_text(r.job.throughput_ci_missing.as_deref())
        }),
        col("epoch_s", Float, "s", "The dataset's training images over the throughput.", |r: &JobRow| {
            float(r.job.epoch_seconds)
        }),
        col(
            "measured_epoch_s",
            Float,
            "s",
            "Median of the epochs the job finished, scaled to the whole dataset.",
            |r: &JobRow| float(r.job.measured_epoch_seconds),
        ),
        col("epochs_measured", Int, "", "The epochs the job finished.", |r: &JobRow| int(r.job.epochs_measured)),
        col(
            "epoch_start_s",
            Float,
            "s",
            "Whole epochs: the seconds an epoch after the first loses at its start.",
            |r: &JobRow| float(r.job.epoch_start_seconds),
        ),
        col(
            "slowdown",
            Float,
            "ratio",
            "Its model's throughput alone over this one (its normalised turnaround; > 1 slower than alone).",
            |r: &JobRow| float(r.job.slowdown),
        ),
        col(
            "baseline_host",
            Text,
            "",
            "Which runs alone the ratio divides by: interleaved, same_host or other_hosts.",
            |r: &JobRow| opt_text(r.job.baseline_host.map(baseline_host)),
        ),
        col("baseline_runs", Int, "", "How many runs alone it divides by (`baselines` lists them).", |r: &JobRow| {
            int(r.job.baseline_runs.len())
        }),
        col(
            "baseline_spread_log",
            Float,
            "log",
            "Pooled standard deviation of the log throughput of runs alone beside each other: on the run's host where it has 4 degrees of freedom or more of them, else over every host.",
            |r: &JobRow| float(r.job.baseline_spread),
        ),
        col(
            "measured_from_mono_s",
            Float,
            "s",
            "Protocol 2: start of the interval the throughput was measured over (host monotonic).",
            |r: &JobRow| float(r.job.measured_over.map(|m| m[0])),
        ),
        col("measured_to_mono_s", Float, "s", "Protocol 2: its end.", |r: &JobRow| {
            float(r.job.measured_over.map(|m| m[1]))
        }),
    ]
}

fn job_use_columns<'a>() -> Vec<Col<JobRow<'a>>> {
    use Kind::*;
    vec![
        col("data_wait_share", Float, "ratio", "Share of the window spent waiting for data.", |r: &JobRow| {
            float(r.job.data_wait_share)
        }),
        col(
            "slow_data_steps",
            Float,
            "iterations",
            "Iterations in the window whose data wait exceeded 0.1 s.",
            |r: &JobRow| float(r.job.slow_data_steps),
        ),
        col(
            "epoch_start_wait_share",
            Float,
            "ratio",
            "Share of the window the loader spent starting epochs.",
            |r: &JobRow| float(r.job.epoch_start_wait_share),
        ),
        col(
            "cpu_cores",
            Float,
            "cores",
            "Host CPU use of the job's process tree (1 = one core busy).",
            |r: &JobRow| float(r.job.cpu_cores),
        ),
        col("rss_bytes_max", Float, "bytes", "Peak resident memory of the job's processes.", |r: &JobRow| {
            float(r.job.rss_bytes_max)
        }),
        col(
            "gpu_mem_bytes_max",
            Float,
            "bytes",
            "Peak device memory of the job's processes in the window (NVML).",
            |r: &JobRow| float(r.job.gpu_mem_bytes_max),
        ),
        col(
            "torch_peak_reserved_bytes",
            Float,
            "bytes",
            "Peak reserved memory of PyTorch's caching allocator.",
            |r: &JobRow| float(r.job.torch_peak_reserved_bytes),
        ),
    ]
}

fn baseline_host(h: colloc_analysis::BaselineHost) -> &'static str {
    match h {
        colloc_analysis::BaselineHost::Interleaved => "interleaved",
        colloc_analysis::BaselineHost::SameHost => "same_host",
        colloc_analysis::BaselineHost::OtherHosts => "other_hosts",
    }
}

fn workload_columns<'a>() -> Vec<Col<&'a WorkloadResult>> {
    use Kind::*;
    type W<'b> = &'b WorkloadResult;
    let mut c = vec![
        col(
            "workload_id",
            Text,
            "",
            "The workload: `e<experiment>-<jobs>-<mode>@<data>`, `~<protocol>` under a part's own protocol.",
            |w: &W| text(&w.id),
        ),
        col("experiment", Int, "", "The paper's experiment number.", |w: &W| int(w.experiment)),
        col("label", Text, "", "Its label in the experiment (a mix: `L+M+2S`).", |w: &W| text(&w.label)),
        col("mode", Text, "", "exclusive, naive, mps, mps-limited or mig.", |w: &W| text(w.mode.as_str())),
        col(
            "layout",
            Text,
            "",
            "MIG slices per job (`1g×7`) in mig and mps-limited modes; empty otherwise.",
            |w: &W| text(&w.layout),
        ),
        col("data", Text, "", "The data source: synthetic, generated or imagefolder.", |w: &W| text(&w.data)),
        col(
            "protocol",
            Text,
            "",
            "The protocol of a campaign part that names its own; empty under the campaign's.",
            |w: &W| text(&w.own_protocol),
        ),
        col("config", Text, "", "Same jobs and data in any mode: the key that compares modes.", |w: &W| {
            text(&w.config)
        }),
        col("form", Text, "", "single, homogeneous, listed or mix (the plan's).", |w: &W| text(form(&w.form).0)),
        col("mix_position", Int, "", "A mix's place in its experiment's declared list, from 0.", |w: &W| {
            opt_int(form(&w.form).1)
        }),
        col("headline", Bool, "", "A headline workload of the campaign (repeated most).", |w: &W| boolean(w.headline)),
        col("timeline", Bool, "", "A workload the utilisation timeline shows.", |w: &W| boolean(w.timeline)),
        col("feasible", Bool, "", "Its layout can be made on the GPU.", |w: &W| boolean(w.feasible)),
        col("plan_reason", Text, "", "The plan's reason for infeasibility.", |w: &W| {
            opt_text(w.plan_reason.as_deref())
        }),
        col("n_jobs", Int, "", "Its jobs.", |w: &W| int(w.n_jobs())),
        col("jobs", Text, "", "Its jobs as `model/dataset/batch size`, `+`-joined in job order.", |w: &W| {
            text(&jobs_text(w))
        }),
        col("repetitions_planned", Int, "", "Repetitions the plan asks for.", |w: &W| int(w.repetitions_planned)),
    ];
    c.extend(workload_status_columns());
    c.extend(workload_stat_columns());
    c.extend(workload_interval_columns());
    c
}

fn workload_status_columns<'a>() -> Vec<Col<&'a WorkloadResult>> {
    use Kind::*;
    type W<'b> = &'b WorkloadResult;
    let n = |w: &W, s: &str| int(w.runs_by_status.get(s).copied().unwrap_or(0));
    vec![
        col("runs_ok", Int, "", "Counted runs that are ok (superseded attempts left out).", move |w: &W| n(w, "ok")),
        col("runs_failed", Int, "", "Counted runs that failed.", move |w: &W| n(w, "failed")),
        col("runs_skipped", Int, "", "Counted runs skipped.", move |w: &W| n(w, "skipped")),
        col("runs_infeasible", Int, "", "Counted runs infeasible.", move |w: &W| n(w, "infeasible")),
        col(
            "status",
            Text,
            "",
            "ok when any repetition is ok, else the runs' status; OOM when a job ran out of device memory.",
            |w: &W| text(w.status_word()),
        ),
        col("reasons", Text, "", "Distinct reasons of the runs that are not ok, `; `-joined.", |w: &W| {
            list(&w.reasons)
        }),
        col(
            "cross_host_runs",
            Int,
            "",
            "Counted repetitions dividing some job by another host's baseline (†).",
            |w: &W| int(w.cross_host_runs),
        ),
        col("disturbed_runs", Int, "", "Counted repetitions a foreign process disturbed (‡).", |w: &W| {
            int(w.disturbed_runs)
        }),
        col("implausible", Bool, "", "Its ratios are implausible as they stand (§).", |w: &W| {
            boolean(!w.implausible.is_empty())
        }),
        col("implausible_reasons", Text, "", "Why, `; `-joined.", |w: &W| list(&w.implausible)),
    ]
}

/// The statistics of a workload over its repetitions: the field of `WorkloadStats`, the
/// column's stem, its unit and meaning.
pub const WORKLOAD_METRICS: &[(&str, &str, &str, &str)] = &[
    ("aggregate_throughput", "aggregate_throughput_img_s", "images/s", "The jobs' throughputs summed, per run."),
    ("aggregate_ratio", "stp", "ratio", "System throughput (STP): each job over its model alone, summed, per run."),
    (
        "antt",
        "antt",
        "ratio",
        "Average normalised turnaround time: the mean over the jobs of alone over collocated throughput, per run.",
    ),
    ("fairness", "fairness", "ratio", "The lowest normalised throughput of a run's jobs over the highest."),
    (
        "per_job_normalised_throughput",
        "job_normalised_throughput",
        "ratio",
        "A job's throughput over its model alone, over all jobs and repetitions.",
    ),
    (
        "energy_per_image_j",
        "energy_per_image_j",
        "J/image",
        "GPU energy in the window over the images trained in it, per run.",
    ),
    (
        "per_job_epoch_seconds",
        "job_epoch_s",
        "s",
        "A job's epoch time from its throughput, over all jobs and repetitions.",
    ),
    (
        "per_job_epoch_start_seconds",
        "job_epoch_start_s",
        "s",
        "Whole epochs: the seconds an epoch after the first loses at its start, over all jobs and repetitions.",
    ),
    (
        "per_job_slowdown",
        "job_slowdown",
        "ratio",
        "A job's model alone over its throughput, over all jobs and repetitions.",
    ),
    (
        "data_wait_share",
        "data_wait_share",
        "ratio",
        "A job's share of the window waiting for data, over all jobs and repetitions.",
    ),
    (
        "epoch_start_wait_share",
        "epoch_start_wait_share",
        "ratio",
        "A job's share of the window starting epochs, over all jobs and repetitions.",
    ),
    (
        "throughput_ci_rel",
        "throughput_ci_rel",
        "ratio",
        "Relative half-width of a job's 95% throughput interval, over all jobs and repetitions with one.",
    ),
    ("cpu_cores_total", "cpu_cores_total", "cores", "Host CPU use of the run's jobs together."),
    ("mem_used_bytes_max", "gpu_mem_used_bytes_max", "bytes", "Peak device memory used in the window, per run."),
    ("mem_used_share", "gpu_mem_used_share", "ratio", "That peak over the GPU's memory, per run."),
    ("sm_activity_pct", "sm_activity_pct", "%", "SM activity (GPM) averaged over the window, per run."),
    ("sm_occupancy_pct", "sm_occupancy_pct", "%", "SM occupancy (GPM) averaged over the window, per run."),
    ("tensor_activity_pct", "tensor_activity_pct", "%", "Tensor activity (GPM) averaged over the window, per run."),
    ("dram_bw_util_pct", "dram_bw_util_pct", "%", "DRAM bandwidth use (GPM) averaged over the window, per run."),
    ("gpu_util_pct", "gpu_util_pct", "%", "NVML GPU utilisation averaged over the window, per run."),
    ("power_w", "power_w", "W", "GPU power averaged over the window, per run."),
];

/// A cell of a statistic: its median, min, max or n.
type StatCell = fn(&colloc_analysis::Stats) -> Cell;

fn workload_stat_columns<'a>() -> Vec<Col<&'a WorkloadResult>> {
    use Kind::*;
    let mut c = Vec::new();
    for &(field, stem, unit, meaning) in WORKLOAD_METRICS {
        let parts: [(&str, Kind, &str, StatCell); 4] = [
            ("median", Float, "median over its counted repetitions", |s| float(Some(s.median))),
            ("min", Float, "least", |s| float(Some(s.min))),
            ("max", Float, "greatest", |s| float(Some(s.max))),
            ("n", Int, "number of values", |s| int(s.n)),
        ];
        for (suffix, kind, what, get) in parts {
            let unit = if suffix == "n" { "" } else { unit };
            let name = format!("{stem}_{suffix}");
            let meaning = format!("{meaning} The {what}.");
            c.push(col(&name, kind, unit, &meaning, move |w: &&WorkloadResult| {
                workload_stat(w, field).map_or(Cell::Null, |s| get(&s))
            }));
        }
    }
    c
}

/// The statistic `field` of a workload's `WorkloadStats`, by its name.
fn workload_stat(w: &WorkloadResult, field: &str) -> Option<colloc_analysis::Stats> {
    w.stats.by_name(field).flatten()
}

fn workload_interval_columns<'a>() -> Vec<Col<&'a WorkloadResult>> {
    use Kind::*;
    type W<'b> = &'b WorkloadResult;
    let i = |w: &W, f: fn(&colloc_analysis::RatioIntervals) -> f64| float(w.intervals.as_ref().map(f));
    vec![
        col(
            "stp_ci_low",
            Float,
            "ratio",
            "95% interval of STP, low end (seeded bootstrap over repetitions, runs alone and window intervals).",
            move |w: &W| i(w, |x| x.stp[0]),
        ),
        col("stp_ci_high", Float, "ratio", "95% interval of STP, high end.", move |w: &W| i(w, |x| x.stp[1])),
        col("antt_ci_low", Float, "ratio", "95% interval of ANTT, low end.", move |w: &W| i(w, |x| x.antt[0])),
        col("antt_ci_high", Float, "ratio", "95% interval of ANTT, high end.", move |w: &W| i(w, |x| x.antt[1])),
        col("fairness_ci_low", Float, "ratio", "95% interval of fairness, low end.", move |w: &W| {
            i(w, |x| x.fairness[0])
        }),
        col("fairness_ci_high", Float, "ratio", "95% interval of fairness, high end.", move |w: &W| {
            i(w, |x| x.fairness[1])
        }),
        col(
            "aggregate_throughput_ci_low_img_s",
            Float,
            "images/s",
            "95% interval of the aggregate throughput, low end (repetitions and windows).",
            move |w: &W| i(w, |x| x.aggregate_throughput[0]),
        ),
        col(
            "aggregate_throughput_ci_high_img_s",
            Float,
            "images/s",
            "95% interval of the aggregate throughput, high end.",
            move |w: &W| i(w, |x| x.aggregate_throughput[1]),
        ),
        col("ci_resamples", Int, "", "Bootstrap resamples drawn for the intervals.", |w: &W| {
            opt_int(w.intervals.as_ref().map(|x| x.resamples))
        }),
    ]
}

/// A workload's form as a word, and a mix's position.
fn form(f: &colloc_analysis::WorkloadForm) -> (&'static str, Option<u32>) {
    use colloc_analysis::WorkloadForm::*;
    match f {
        Single => ("single", None),
        Homogeneous => ("homogeneous", None),
        Listed => ("listed", None),
        Mix { position, .. } => ("mix", Some(*position)),
    }
}

fn jobs_text(w: &WorkloadResult) -> String {
    w.jobs.iter().map(|j| format!("{}/{}/{}", j.model, j.dataset, j.batch_size)).collect::<Vec<_>>().join("+")
}

/// One run alone a job's ratio divides by.
#[derive(Clone, Copy)]
struct LinkRow<'a> {
    row: &'a JobRow<'a>,
    baseline: &'a BaselineRun,
}

fn link_columns<'a>() -> Vec<Col<LinkRow<'a>>> {
    use Kind::*;
    vec![
        col("run_id", Text, "", "The collocated (or any) run whose job's ratio divides by it.", |l: &LinkRow| {
            text(&l.row.run.run_id)
        }),
        col("workload_id", Text, "", "Its workload.", |l: &LinkRow| text(&l.row.run.workload_id)),
        col("job_index", Int, "", "The job (`jobs.job_index`).", |l: &LinkRow| int(l.row.job.index)),
        col("host_id", Text, "", "The run's host (GPU UUID).", |l: &LinkRow| opt_text(l.row.run.host_id.as_deref())),
        col("invocation", Text, "", "The run's invocation.", |l: &LinkRow| opt_text(l.row.run.invocation.as_deref())),
        col(
            "baseline_host",
            Text,
            "",
            "interleaved (nearest in time, same host and invocation), same_host or other_hosts.",
            |l: &LinkRow| opt_text(l.row.job.baseline_host.map(baseline_host)),
        ),
        col("baseline_run_id", Text, "", "The run alone (`runs.run_id`).", |l: &LinkRow| text(&l.baseline.run_id)),
        col("baseline_throughput_img_s", Float, "images/s", "Its throughput.", |l: &LinkRow| {
            float(Some(l.baseline.throughput))
        }),
        col("baseline_ci_rel", Float, "ratio", "Relative half-width of its window's 95% interval.", |l: &LinkRow| {
            float(l.baseline.ci_rel)
        }),
        col(
            "baseline_first_on_host",
            Bool,
            "",
            "It was its host's first run (in the campaign or invocation) with nothing settling the host before it.",
            |l: &LinkRow| boolean(l.baseline.first_on_host),
        ),
    ]
}

/// A model alone on one host.
#[derive(Clone, Copy)]
struct HostBaselineRow<'a> {
    baseline: &'a colloc_analysis::Baseline,
    host: &'a colloc_analysis::HostBaseline,
}

fn host_baseline_columns<'a>() -> Vec<Col<HostBaselineRow<'a>>> {
    use Kind::*;
    type B<'b> = HostBaselineRow<'b>;
    let all =
        |b: &B, f: fn(&colloc_analysis::Stats) -> Cell| b.baseline.stats.throughput.as_ref().map_or(Cell::Null, f);
    vec![
        col("model", Text, "", "The model alone on the whole GPU.", |b: &B| text(&b.baseline.model)),
        col("dataset", Text, "", "Its dataset.", |b: &B| text(&b.baseline.dataset)),
        col("batch_size", Int, "images", "Its batch size.", |b: &B| int(b.baseline.batch_size)),
        col("data", Text, "", "The data source.", |b: &B| text(&b.baseline.data)),
        col(
            "protocol",
            Text,
            "",
            "The protocol of a campaign part that names its own; empty under the campaign's.",
            |b: &B| text(&b.baseline.protocol),
        ),
        col(
            "mode",
            Text,
            "",
            "exclusive, or naive with one job when the campaign has no exclusive run of it.",
            |b: &B| text(b.baseline.mode.as_str()),
        ),
        col("host_id", Text, "", "The host (GPU UUID).", |b: &B| opt_text(b.host.host_id.as_deref())),
        col("throughput_img_s_median", Float, "images/s", "Median throughput over the host's runs of it.", |b: &B| {
            float(Some(b.host.throughput.median))
        }),
        col("throughput_img_s_min", Float, "images/s", "Least.", |b: &B| float(Some(b.host.throughput.min))),
        col("throughput_img_s_max", Float, "images/s", "Greatest.", |b: &B| float(Some(b.host.throughput.max))),
        col("runs", Int, "", "The host's runs of it.", |b: &B| int(b.host.throughput.n)),
        col(
            "cpu_single_thread_mib_s",
            Float,
            "MiB/s",
            "The host's single-thread CPU score, median over those runs.",
            |b: &B| float(b.host.cpu_single_thread_mib_s),
        ),
        col(
            "all_hosts_throughput_img_s_median",
            Float,
            "images/s",
            "Median throughput over every host's runs of it.",
            move |b: &B| all(b, |s| float(Some(s.median))),
        ),
        col("all_hosts_runs", Int, "", "Every host's runs of it.", move |b: &B| all(b, |s| int(s.n))),
        col("host_count", Int, "", "Hosts with runs of it.", |b: &B| int(b.baseline.host_count)),
        col(
            "host_spread",
            Float,
            "ratio",
            "The largest per-host median throughput over the smallest (two or more hosts).",
            |b: &B| float(b.baseline.host_spread),
        ),
    ]
}

/// A host and its runs.
struct HostRow<'a> {
    id: Option<&'a str>,
    runs: Vec<&'a RunResult>,
}

/// The hosts named by the runs, in order of their ids (runs naming none first).
fn hosts(runs: &[RunResult]) -> Vec<HostRow<'_>> {
    let mut by: BTreeMap<Option<&str>, Vec<&RunResult>> = BTreeMap::new();
    for r in runs {
        by.entry(r.host_id.as_deref()).or_default().push(r);
    }
    by.into_iter().map(|(id, runs)| HostRow { id, runs }).collect()
}

fn host_columns<'a>() -> Vec<Col<HostRow<'a>>> {
    use Kind::*;
    type H<'b> = HostRow<'b>;
    let cpu = |h: &H| -> Vec<f64> { h.runs.iter().filter_map(|r| r.host_cpu_single_thread_mib_s).collect() };
    vec![
        col("host_id", Text, "", "The host: its GPU's UUID.", |h: &H| opt_text(h.id)),
        col("runs", Int, "", "Its run directories, whatever their status.", |h: &H| int(h.runs.len())),
        col("runs_ok", Int, "", "Those that are ok.", |h: &H| {
            int(h.runs.iter().filter(|r| r.status.as_str() == "ok").count())
        }),
        col("invocations", Int, "", "Distinct runner invocations its runs name.", |h: &H| {
            int(h.runs.iter().filter_map(|r| r.invocation.as_deref()).collect::<BTreeSet<_>>().len())
        }),
        col("first_started_at", Text, "RFC 3339", "Its earliest run start.", |h: &H| {
            opt_text(h.runs.iter().map(|r| r.started_at.as_str()).filter(|s| !s.is_empty()).min())
        }),
        col("last_ended_at", Text, "RFC 3339", "Its latest run end.", |h: &H| {
            opt_text(h.runs.iter().map(|r| r.ended_at.as_str()).max().filter(|s| !s.is_empty()))
        }),
        col(
            "cpu_single_thread_mib_s_min",
            Float,
            "MiB/s",
            "Its single-thread CPU score, least over its runs with one.",
            move |h: &H| float(cpu(h).into_iter().reduce(f64::min)),
        ),
        col("cpu_single_thread_mib_s_max", Float, "MiB/s", "Greatest.", move |h: &H| {
            float(cpu(h).into_iter().reduce(f64::max))
        }),
        col("simulated", Bool, "", "Some run of it came from the simulated backend.", |h: &H| {
            boolean(h.runs.iter().any(|r| r.simulated))
        }),
    ]
}

fn telemetry_columns<'a>() -> Vec<Col<&'a RunResult>> {
    use Kind::*;
    type R<'b> = &'b RunResult;
    let u = |r: &R, f: fn(&colloc_analysis::Utilisation) -> Option<f64>| float(r.utilisation.as_ref().and_then(f));
    vec![
        col("run_id", Text, "", "The run (`runs.run_id`).", |r: &R| text(&r.run_id)),
        col("workload_id", Text, "", "Its workload.", |r: &R| text(&r.workload_id)),
        col("scope", Text, "", "gpu (whole-GPU samples) or instances (mean over MIG instances).", |r: &R| {
            opt_text(r.utilisation.as_ref().map(|u| u.scope.as_str()))
        }),
        col("samples", Int, "", "Telemetry samples in the window.", |r: &R| {
            opt_int(r.utilisation.as_ref().map(|u| u.samples))
        }),
        col("window_s", Float, "s", "The common window's length.", |r: &R| float(r.window.map(|w| w.seconds))),
        col("sm_activity_pct", Float, "%", "SM activity (GPM).", move |r: &R| u(r, |u| u.sm_activity_pct)),
        col("sm_occupancy_pct", Float, "%", "SM occupancy (GPM).", move |r: &R| u(r, |u| u.sm_occupancy_pct)),
        col("tensor_activity_pct", Float, "%", "Tensor activity (GPM).", move |r: &R| u(r, |u| u.tensor_activity_pct)),
        col("dram_bw_util_pct", Float, "%", "DRAM bandwidth use (GPM).", move |r: &R| u(r, |u| u.dram_bw_util_pct)),
        col("gpu_util_pct", Float, "%", "NVML GPU utilisation.", move |r: &R| u(r, |u| u.gpu_util_pct)),
        col("mem_util_pct", Float, "%", "NVML memory utilisation.", move |r: &R| u(r, |u| u.mem_util_pct)),
        col("power_w", Float, "W", "GPU power.", move |r: &R| u(r, |u| u.power_w)),
        col(
            "energy_j",
            Float,
            "J",
            "GPU energy in the window (its counter; power times window without one).",
            move |r: &R| u(r, |u| u.energy_j),
        ),
        col("energy_per_image_j", Float, "J/image", "That energy over the images trained in the window.", |r: &R| {
            float(r.energy_per_image_j)
        }),
        col("mem_used_bytes_max", Float, "bytes", "Peak device memory used in the window.", move |r: &R| {
            u(r, |u| u.mem_used_bytes_max)
        }),
        col("mem_total_bytes", Float, "bytes", "The GPU's device memory.", move |r: &R| u(r, |u| u.mem_total_bytes)),
        col("mem_used_share", Float, "ratio", "The peak over the GPU's memory.", move |r: &R| {
            u(r, |u| u.mem_used_share)
        }),
    ]
}

/// One value of the provenance.
struct ProvenanceRow {
    field: String,
    value: String,
}

fn provenance_columns() -> Vec<Col<ProvenanceRow>> {
    use Kind::*;
    vec![
        col(
            "field",
            Text,
            "",
            "What the value is: campaign, gpu_name, cpu_model, driver_version, `job_software.torch`, … \
             (one row per distinct value).",
            |p: &ProvenanceRow| text(&p.field),
        ),
        col(
            "value",
            Text,
            "",
            "The value, as the traces or the analysis give it (numbers as text).",
            |p: &ProvenanceRow| text(&p.value),
        ),
    ]
}

/// The provenance, field by field, each list's values in order.
fn provenance_rows(results: &Results) -> Vec<ProvenanceRow> {
    let p = &results.provenance;
    let mut rows = Vec::new();
    let mut add = |field: &str, values: Vec<String>| {
        rows.extend(values.into_iter().map(|value| ProvenanceRow { field: field.to_string(), value }));
    };
    add("campaign", vec![p.campaign.clone()]);
    add("simulated", vec![p.simulated.to_string()]);
    add("manifest_sha256", vec![p.manifest_sha256.clone()]);
    add("manifest_files", vec![p.manifest_files.to_string()]);
    for (status, n) in &p.runs_by_status {
        add(&format!("runs_{status}"), vec![n.to_string()]);
    }
    add("planned_runs", p.planned_runs.iter().map(|n| n.to_string()).collect());
    add("missing_run", p.missing_runs.clone());
    add("attempts_again", vec![p.attempts_again.to_string()]);
    add("beyond_plan", vec![p.beyond_plan.to_string()]);
    add("gpu_name", p.gpu_names.clone());
    add("gpu_uuid", p.gpu_uuids.clone());
    add("driver_version", p.driver_versions.clone());
    add("cuda_driver_version", p.cuda_driver_versions.clone());
    add("gpu_memory_total_bytes", p.gpu_memory_total_bytes.iter().map(|b| b.to_string()).collect());
    add("gpu_sm_count", p.gpu_sm_count.iter().map(|b| b.to_string()).collect());
    add("gpu_power_limit_w", p.gpu_power_limit_w.iter().map(|b| b.to_string()).collect());
    add("mig_mode", p.mig_mode.clone());
    add("hostname", p.hostnames.clone());
    add("cpu_model", p.cpu_models.clone());
    add("cpu_cores", p.cpu_cores.iter().map(|b| b.to_string()).collect());
    add("host_memory_total_bytes", p.host_memory_total_bytes.iter().map(|b| b.to_string()).collect());
    add("kernel", p.kernels.clone());
    add("os", p.oses.clone());
    add("runner_version", p.runner_versions.clone());
    add("git_commit", p.git_commits.clone());
    add("plan_hash", p.plan_hashes.clone());
    add("spec_hash", p.spec_hashes.clone());
    for (k, v) in &p.job_software {
        add(&format!("job_software.{k}"), v.clone());
    }
    add("protocol", p.protocols.clone());
    add("telemetry_source", p.telemetry_sources.clone());
    for (col, why) in &p.telemetry_unavailable {
        add(&format!("telemetry_unavailable.{col}"), vec![why.clone()]);
    }
    add("first_started_at", p.first_started_at.iter().cloned().collect());
    add("last_ended_at", p.last_ended_at.iter().cloned().collect());
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_back_to_the_bit_and_never_as_integers() {
        for x in
            [0.0, -0.0, 1.0, 3.0, -7.0, 150754820096.0, 1e300, 0.1, 2.5e-9, 1167.358922, f64::MAX, f64::MIN_POSITIVE]
        {
            let s = float_field(x);
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{s}");
            assert!(s.contains('.') && !s.contains('e'), "{s}");
        }
    }

    #[test]
    fn csv_fields_are_quoted_as_rfc_4180_says_and_numbers_read_back_to_the_bit() {
        assert_eq!(Cell::Text("a,b".into()).csv(), "\"a,b\"");
        assert_eq!(Cell::Text("say \"hi\"\nthen".into()).csv(), "\"say \"\"hi\"\"\nthen\"");
        assert_eq!(Cell::Text("plain".into()).csv(), "plain");
        assert_eq!(Cell::Null.csv(), "");
        for x in [0.1 + 0.2, 1e-9, 123456789.12345679, 2.5e20, f64::MIN_POSITIVE] {
            let s = Cell::Float(x).csv();
            assert!(!s.contains('e'), "{s}");
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{s}");
        }
        assert_eq!(float(Some(f64::NAN)), Cell::Null);
    }

    #[test]
    fn every_column_name_is_unique_within_its_frame_and_every_statistic_is_exported() {
        for (name, _, columns) in schema() {
            let mut seen = BTreeSet::new();
            for c in &columns {
                assert!(seen.insert(&c.name), "{name}: column {} twice", c.name);
                assert!(
                    c.name.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'),
                    "{}",
                    c.name
                );
                assert!(!c.meaning.contains('|') && !c.unit.contains('|'), "{name}.{}: a `|` splits its row", c.name);
            }
        }
        // Every statistic the analysis gives a workload has its columns here.
        let fields: Vec<String> = match serde_json::to_value(colloc_analysis::WorkloadStats::default()).unwrap() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            v => panic!("{v}"),
        };
        let declared: Vec<String> = WORKLOAD_METRICS.iter().map(|m| m.0.to_string()).collect();
        assert_eq!(fields, declared);
        let stats = colloc_analysis::WorkloadStats::default();
        assert!(declared.iter().all(|f| stats.by_name(f).is_some()), "a statistic the export cannot read by name");
    }
}
