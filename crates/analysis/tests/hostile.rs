//! Hostile traces that pass verification (`SHA256SUMS` made anew): one good run of a fixture
//! campaign with one file made hostile. The analysis must refuse each with an error naming
//! the run, the file and the line, within the readers' caps (`colloc_trace::limits`): in
//! little memory (a counting allocator measures the analysis; the tests of this file take one
//! lock, so that each measures only its own) and little time.

use colloc_analysis::analyse;
use colloc_analysis::testkit::{write_campaign, FixtureOptions};
use colloc_trace::jobfile::{DataSource, JobData, JobFile, Training};
use colloc_trace::limits::{self, INFLATED_FLOOR_BYTES};
use colloc_trace::protocol::ProtocolKind;
use colloc_trace::{layout, manifest};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

#[path = "../../trace/tests/common/counting.rs"]
mod counting;
use counting::{measured, ONE_AT_A_TIME};

/// The most the analysis of the one-run campaign may hold at once, whatever a file of it
/// inflates to: half the 64 MiB a gzip trace may always inflate to.
const HELD: usize = 32 << 20;

/// A protocol-2 fixture campaign made once, and its run the tests damage: an ok run of two
/// jobs or more, with telemetry and processes.
fn template() -> &'static (tempfile::TempDir, PathBuf) {
    static T: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    T.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let opts = FixtureOptions { protocol_version: 2, repetitions: 1, ..FixtureOptions::default() };
        let dir = write_campaign(d.path(), &opts).unwrap();
        let mut runs: Vec<PathBuf> =
            std::fs::read_dir(dir.join(layout::RUNS_DIR)).unwrap().map(|e| e.unwrap().path()).collect();
        runs.sort();
        let run = runs
            .into_iter()
            .find(|r| {
                let m: Value = serde_json::from_str(&std::fs::read_to_string(r.join(layout::META)).unwrap()).unwrap();
                m["status"] == "ok"
                    && m["jobs"].as_array().unwrap().len() >= 2
                    && r.join(layout::TELEMETRY).exists()
                    && r.join(layout::PROCESSES).exists()
            })
            .expect("an ok run of two jobs");
        (d, run)
    })
}

fn run_id() -> String {
    template().1.file_name().unwrap().to_string_lossy().into_owned()
}

/// The analysis of a campaign of the template run alone, made hostile by `damage` (given the
/// run directory), with a fresh `SHA256SUMS`; the most it held at once, and its time.
fn analyse_hostile(damage: impl FnOnce(&Path)) -> (anyhow::Result<colloc_analysis::Results>, usize, Duration) {
    let d = tempfile::tempdir().unwrap();
    let campaign = d.path().join("hostile");
    let run = campaign.join(layout::RUNS_DIR).join(run_id());
    std::fs::create_dir_all(&run).unwrap();
    for e in std::fs::read_dir(&template().1).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), run.join(e.file_name())).unwrap();
    }
    damage(&run);
    manifest::add_dir(&campaign, layout::RUNS_DIR).unwrap();
    measured(|| analyse(&campaign, None))
}

/// The error of the hostile campaign, in one line as `cargo xtask reproduce` prints it: it
/// names the run, the file and the line, and was reached in bounded memory and time.
fn refused(file: &str, line: usize, damage: impl FnOnce(&Path)) -> String {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (r, held, took) = analyse_hostile(damage);
    let e = format!("{:#}", r.err().unwrap_or_else(|| panic!("a hostile {file} was analysed")));
    assert!(e.contains(&format!("run {} is unreadable", run_id())), "{e}");
    assert!(e.contains(&format!("runs/{}/{file}: line {line}: ", run_id())), "{e}");
    assert!(held < HELD, "{held} bytes held: {e}");
    assert!(took < Duration::from_secs(30), "{took:?}: {e}");
    e
}

fn gunzip(path: &Path) -> String {
    let mut s = String::new();
    GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut s).unwrap();
    s
}

/// Writes `path` as a gzip stream of `head` then `row` until it holds more than `bytes`.
fn gzip_repeated(path: &Path, head: &str, row: &str, bytes: u64) {
    let mut e = GzEncoder::new(std::fs::File::create(path).unwrap(), flate2::Compression::default());
    e.write_all(head.as_bytes()).unwrap();
    let block = row.repeat((1 << 20) / row.len());
    let mut written = head.len() as u64;
    while written <= bytes {
        e.write_all(block.as_bytes()).unwrap();
        written += block.len() as u64;
    }
    e.finish().unwrap();
}

/// A telemetry file of its real header and last row again and again (`mono` does not go
/// backwards), 80 MiB inflated from a few hundred KiB: refused at the line where it passes
/// 64 MiB, never inflated further.
#[test]
fn a_gzip_bomb_of_telemetry_rows_is_refused_at_its_cap() {
    let text = gunzip(&template().1.join(layout::TELEMETRY));
    let header = text.lines().next().unwrap().to_string() + "\n";
    let row = text.lines().last().unwrap().to_string() + "\n";
    let rows_in_cap = (INFLATED_FLOOR_BYTES as usize - header.len()) / row.len();
    let e = refused(layout::TELEMETRY, rows_in_cap + 2, |run| {
        let path = run.join(layout::TELEMETRY);
        gzip_repeated(&path, &header, &row, 80 << 20);
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size * limits::MAX_INFLATION_RATIO < INFLATED_FLOOR_BYTES, "{size} bytes: not a bomb");
    });
    assert!(e.contains("the gzip stream inflates to more than 67108864 bytes"), "{e}");
}

#[test]
fn a_gzip_bomb_of_process_rows_is_refused_at_its_cap() {
    let text = gunzip(&template().1.join(layout::PROCESSES));
    let header = text.lines().next().unwrap().to_string() + "\n";
    let row = text.lines().last().unwrap().to_string() + "\n";
    let rows_in_cap = (INFLATED_FLOOR_BYTES as usize - header.len()) / row.len();
    let e = refused(layout::PROCESSES, rows_in_cap + 2, |run| {
        gzip_repeated(&run.join(layout::PROCESSES), &header, &row, 80 << 20)
    });
    assert!(e.contains("the gzip stream inflates to more than 67108864 bytes"), "{e}");
}

/// 10 MB of zeros compressed: a first line without end, refused as too long.
#[test]
fn ten_megabytes_of_zeros_as_telemetry_are_refused() {
    let e = refused(layout::TELEMETRY, 1, |run| {
        let mut z = GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&vec![0u8; 10_000_000]).unwrap();
        std::fs::write(run.join(layout::TELEMETRY), z.finish().unwrap()).unwrap();
    });
    assert!(e.contains("a line longer than 64 KiB, more than the runner writes"), "{e}");
}

#[test]
fn a_telemetry_row_longer_than_its_cap_is_refused() {
    let e = refused(layout::PROCESSES, 3, |run| {
        let path = run.join(layout::PROCESSES);
        let mut lines: Vec<String> = gunzip(&path).lines().map(str::to_string).collect();
        lines[2].push_str(&" ".repeat(limits::MAX_CSV_LINE_BYTES));
        let mut z = GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all((lines.join("\n") + "\n").as_bytes()).unwrap();
        std::fs::write(&path, z.finish().unwrap()).unwrap();
    });
    assert!(e.contains("a line longer than 64 KiB, more than the runner writes"), "{e}");
}

/// Job 0's log, its lines as JSON, and the 1-based line of its first `iterations`.
fn events(run: &Path) -> (Vec<Value>, usize) {
    let text = std::fs::read_to_string(run.join(layout::job_events(0))).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let at = lines.iter().position(|v| v["event"] == "iterations").expect("an iterations event");
    (lines, at + 1)
}

fn write_events(run: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(run.join(layout::job_events(0)), text).unwrap();
}

/// The planned batch size of job 0 of the template run.
fn planned_batch() -> u32 {
    let m: Value = serde_json::from_str(&std::fs::read_to_string(template().1.join(layout::META)).unwrap()).unwrap();
    m["workload"]["jobs"][0]["batch_size"].as_u64().unwrap() as u32
}

/// Writes job 0's job file, as the runner does, of `batch_size`.
fn write_job_file(run: &Path, batch_size: u32) {
    std::fs::write(run.join(layout::job_file(0)), job_file(batch_size)).unwrap();
}

/// Job 0's job file of the template run, of `batch_size`.
fn job_file(batch_size: u32) -> String {
    let id = run_id();
    let job = JobFile {
        protocol_version: 2,
        workload_id: id.rsplit_once('.').unwrap().0.to_string(),
        run_id: id,
        job: 0,
        model: "resnet26".into(),
        batch_size,
        data: JobData {
            source: DataSource::Synthetic,
            name: "cifar10".into(),
            path: None,
            image_size: 32,
            train_count: 50_000,
            val_count: 10_000,
            fraction: 1.0,
            format: "png".into(),
        },
        training: Training::paper(batch_size),
        protocol: ProtocolKind::Epochs { epochs: 1, sample_every: 10 },
        events_path: layout::job_events(0),
    };
    serde_json::to_string_pretty(&job).unwrap()
}

#[test]
fn an_iteration_of_more_images_than_the_job_files_batch_size_is_refused() {
    let batch = planned_batch();
    let (lines, at) = events(&template().1);
    let e = refused(&layout::job_events(0), at, |run| {
        write_job_file(run, batch);
        let mut lines = lines;
        lines[at - 1]["images"][1] = Value::from(batch + 12);
        write_events(run, &lines);
    });
    let want =
        format!("an iteration of {} images (iteration 1, images[1]) exceeds the job's batch size {batch}", batch + 12);
    assert!(e.contains(&want), "{e}");
}

#[test]
fn a_job_file_whose_batch_size_is_not_the_planned_one_is_refused() {
    let batch = planned_batch();
    let line = job_file(batch).lines().position(|l| l.contains("\"batch_size\"")).unwrap() + 1;
    let e = refused(&layout::job_file(0), line, |run| write_job_file(run, batch * 2));
    assert!(e.contains(&format!("`batch_size` is {}, but the planned workload's job 0", batch * 2)), "{e}");
}

#[test]
fn iteration_times_that_do_not_increase_are_refused() {
    let (lines, at) = events(&template().1);
    let e = refused(&layout::job_events(0), at, |run| {
        let mut lines = lines;
        let first = lines[at - 1]["end_us"][0].clone();
        lines[at - 1]["end_us"][1] = first;
        write_events(run, &lines);
    });
    assert!(e.contains("iterations: end_us does not increase at index 1"), "{e}");
}

#[test]
fn an_event_line_longer_than_its_cap_is_refused() {
    let (lines, at) = events(&template().1);
    let e = refused(&layout::job_events(0), at, |run| {
        let text: String = lines
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let pad = if i + 1 == at { " ".repeat(limits::MAX_EVENT_LINE_BYTES) } else { String::new() };
                format!("{v}{pad}\n")
            })
            .collect();
        std::fs::write(run.join(layout::job_events(0)), text).unwrap();
    });
    assert!(e.contains("a line longer than 1 MiB, more than the runner writes"), "{e}");
}

/// `meta.json` and a job file past their caps (blank space after the JSON, which a reader of
/// the whole file would take): refused at the line where they pass it.
#[test]
fn meta_json_and_job_files_past_their_caps_are_refused() {
    let meta = std::fs::read_to_string(template().1.join(layout::META)).unwrap().trim_end().to_string();
    let e = refused(layout::META, meta.lines().count() + 1, |run| {
        let text = format!("{meta}\n{}", " ".repeat(limits::MAX_META_BYTES as usize));
        std::fs::write(run.join(layout::META), text).unwrap();
    });
    assert!(e.contains("the file goes on past 16 MiB, more than the runner writes"), "{e}");
    let batch = planned_batch();
    let e = refused(&layout::job_file(0), 2, |run| {
        write_job_file(run, batch);
        let path = run.join(layout::job_file(0));
        let text = std::fs::read_to_string(&path).unwrap().replace('\n', " ") + "\n";
        std::fs::write(&path, text + &" ".repeat(limits::MAX_JOB_FILE_BYTES as usize)).unwrap();
    });
    assert!(e.contains("the file goes on past 1 MiB, more than the runner writes"), "{e}");
}

/// The template run with a job file of its planned batch size is read as without one.
#[test]
fn a_run_with_its_job_files_is_analysed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let batch = planned_batch();
    let (r, held, _) = analyse_hostile(|run| write_job_file(run, batch));
    let r = r.unwrap();
    assert_eq!(r.runs.len(), 1);
    assert!(r.runs[0].aggregate_throughput.is_some(), "{:?}", r.runs[0].notes);
    assert!(held < HELD, "{held} bytes held");
}
