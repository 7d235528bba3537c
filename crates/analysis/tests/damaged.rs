//! Damaged traces that still pass verification: one good run of a fixture campaign, one
//! file damaged, `SHA256SUMS` made anew. The analysis must refuse each with an error that
//! names the run, the file and the line or row, and never panic.

use colloc_analysis::analyse;
use colloc_analysis::testkit::{write_campaign, FixtureOptions};
use colloc_trace::{layout, manifest};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A protocol-2 fixture campaign made once for every test, and the run the tests damage: an
/// ok run of two jobs or more, with telemetry and processes.
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

/// The template run's id.
fn run_id() -> String {
    template().1.file_name().unwrap().to_string_lossy().into_owned()
}

/// A campaign of the template run alone, damaged by `damage` (given the run directory),
/// with a fresh `SHA256SUMS`: the analysis's result.
fn analyse_damaged(damage: impl FnOnce(&Path)) -> (tempfile::TempDir, anyhow::Result<colloc_analysis::Results>) {
    let d = tempfile::tempdir().unwrap();
    let campaign = d.path().join("damaged");
    let run = campaign.join(layout::RUNS_DIR).join(run_id());
    std::fs::create_dir_all(&run).unwrap();
    for e in std::fs::read_dir(&template().1).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), run.join(e.file_name())).unwrap();
    }
    damage(&run);
    manifest::add_dir(&campaign, layout::RUNS_DIR).unwrap();
    assert!(manifest::verify(&campaign).unwrap().is_empty(), "the damaged campaign must pass verification");
    let r = analyse(&campaign, None);
    (d, r)
}

/// The error of the damaged campaign, in one line as `cargo xtask reproduce` prints it.
/// It must name the run and the file.
fn refused(file: &str, damage: impl FnOnce(&Path)) -> String {
    let (_d, r) = analyse_damaged(damage);
    let e = format!("{:#}", r.err().unwrap_or_else(|| panic!("a damaged {file} was analysed")));
    assert!(e.contains(&format!("run {} is unreadable", run_id())), "{e}");
    assert!(e.contains(&format!("runs/{}/{file}", run_id())), "{e}");
    e
}

fn edit_text(path: &Path, f: impl FnOnce(String) -> String) {
    let t = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(t)).unwrap();
}

fn edit_meta(run: &Path, f: impl FnOnce(&mut Value)) {
    let path = run.join(layout::META);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// Edits job 0's log line by line (1-based numbers), each line as JSON.
fn edit_events(run: &Path, f: impl FnOnce(&mut Vec<Value>)) {
    let path = run.join(layout::job_events(0));
    let mut lines: Vec<Value> =
        std::fs::read_to_string(&path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    f(&mut lines);
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(&path, text).unwrap();
}

/// The 1-based line of the first event of `kind` in job 0's log.
fn line_of(kind: &str) -> usize {
    let text = std::fs::read_to_string(template().1.join(layout::job_events(0))).unwrap();
    text.lines().position(|l| l.contains(&format!("\"event\":\"{kind}\""))).expect(kind) + 1
}

fn gunzip(path: &Path) -> String {
    let mut s = String::new();
    GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut s).unwrap();
    s
}

fn gzip(path: &Path, text: &str) {
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    std::fs::write(path, e.finish().unwrap()).unwrap();
}

/// Replaces field `column` of data row `row` (1-based) of a gzip CSV.
fn edit_csv_field(path: &Path, row: usize, column: &str, value: &str) {
    let text = gunzip(path);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let c = lines[0].split(',').position(|n| n == column).unwrap();
    let mut fields: Vec<String> = lines[row].split(',').map(str::to_string).collect();
    fields[c] = value.to_string();
    lines[row] = fields.join(",");
    gzip(path, &(lines.join("\n") + "\n"));
}

#[test]
fn the_undamaged_run_is_analysed() {
    let (_d, r) = analyse_damaged(|_| {});
    let r = r.unwrap();
    assert_eq!(r.runs.len(), 1);
    assert!(r.runs[0].aggregate_throughput.is_some(), "{:?}", r.runs[0].notes);
    assert!(r.runs[0].utilisation.is_some());
}

// ---- meta.json ----

#[test]
fn meta_json_that_is_not_json_names_its_line() {
    let e = refused("meta.json", |run| edit_text(&run.join(layout::META), |t| t[..t.len() / 2].to_string()));
    assert!(e.contains("not a run's meta.json") && e.contains("line"), "{e}");
}

#[test]
fn meta_json_of_the_wrong_types_is_refused() {
    let e = refused("meta.json", |run| edit_meta(run, |m| m["repetition"] = Value::from("one")));
    assert!(e.contains("invalid type: string \"one\", expected u32"), "{e}");
}

#[test]
fn meta_json_with_fewer_job_records_than_planned_jobs_is_refused() {
    let e = refused("meta.json", |run| edit_meta(run, |m| drop(m["jobs"].as_array_mut().unwrap().pop())));
    assert!(e.contains("records, but the planned workload (`workload.jobs`) has"), "{e}");
}

#[test]
fn an_ok_run_without_release_mono_is_refused() {
    let e = refused("meta.json", |run| edit_meta(run, |m| m["release_mono"] = Value::Null));
    assert!(e.contains("status ok without a `release_mono`"), "{e}");
}

#[test]
fn a_window_ending_before_the_release_is_refused() {
    let e = refused("meta.json", |run| {
        edit_meta(run, |m| m["window_end_mono"] = Value::from(m["release_mono"].as_f64().unwrap() - 1.0))
    });
    assert!(e.contains("is not after `release_mono`"), "{e}");
}

#[test]
fn negative_and_out_of_range_times_in_meta_json_are_refused() {
    let e = refused("meta.json", |run| edit_meta(run, |m| m["release_mono"] = Value::from(-5.0)));
    assert!(e.contains("`release_mono` is -5, not a finite number ≥ 0"), "{e}");
    let e = refused("meta.json", |run| {
        edit_text(&run.join(layout::META), |t| {
            t.replacen("\"window_end_mono\": ", "\"window_end_mono\": 1e999, \"x\": ", 1)
        })
    });
    assert!(e.contains("not a run's meta.json") && e.contains("line"), "{e}");
}

#[test]
fn a_run_id_that_is_not_the_directory_is_refused() {
    let e = refused("meta.json", |run| edit_meta(run, |m| m["attempt"] = Value::from(2)));
    assert!(e.contains("is not that of workload"), "{e}");
}

#[test]
fn a_missing_event_log_of_an_ok_run_is_refused() {
    let e = refused("job-1.events.jsonl", |run| std::fs::remove_file(run.join(layout::job_events(1))).unwrap());
    assert!(e.contains("missing, but meta.json says the run is ok"), "{e}");
}

// ---- job-N.events.jsonl ----

#[test]
fn an_event_line_that_is_not_json_names_the_file_and_line() {
    let e = refused("job-0.events.jsonl", |run| {
        edit_text(&run.join(layout::job_events(0)), |t| {
            let mut lines: Vec<&str> = t.lines().collect();
            lines[2] = "{\"mono\": 1.0, \"wall\"";
            lines.join("\n") + "\n"
        })
    });
    assert!(e.contains("job-0.events.jsonl: line 3: not an event"), "{e}");
}

#[test]
fn events_out_of_the_protocols_order_are_refused() {
    let (ready, release) = (line_of("ready"), line_of("release"));
    assert_eq!(release, ready + 1);
    let e = refused("job-0.events.jsonl", |run| {
        edit_events(run, |l| {
            l.swap(ready - 1, release - 1);
            // Keep mono in order, so that the order of the kinds is what is wrong.
            let m = l[ready - 1]["mono"].clone();
            l[ready - 1]["mono"] = l[release - 1]["mono"].clone();
            l[release - 1]["mono"] = m;
        })
    });
    assert!(e.contains(&format!("job-0.events.jsonl: line {ready}: release before ready")), "{e}");
    let e = refused("job-0.events.jsonl", |run| {
        edit_events(run, |l| {
            let hello = l[0].clone();
            l.insert(3, hello);
            l[3]["mono"] = l[2]["mono"].clone();
        })
    });
    assert!(e.contains("job-0.events.jsonl: line 4: a second hello event"), "{e}");
}

#[test]
fn negative_or_decreasing_mono_in_an_event_log_is_refused() {
    let e = refused("job-0.events.jsonl", |run| edit_events(run, |l| l[0]["mono"] = Value::from(-1.0)));
    assert!(e.contains("job-0.events.jsonl: line 1: mono is -1, not a finite number ≥ 0"), "{e}");
    let e = refused("job-0.events.jsonl", |run| edit_events(run, |l| l[2]["mono"] = Value::from(0.5)));
    assert!(e.contains("job-0.events.jsonl: line 3: mono goes backwards"), "{e}");
}

#[test]
fn decreasing_end_us_within_a_chunk_is_refused() {
    let at = line_of("iterations");
    let e = refused("job-0.events.jsonl", |run| {
        edit_events(run, |l| {
            let ends = l[at - 1]["end_us"].as_array_mut().unwrap();
            assert!(ends.len() >= 3);
            ends.swap(1, 2);
        })
    });
    assert!(e.contains(&format!("line {at}: iterations: end_us decreases at index 2")), "{e}");
}

#[test]
fn iteration_arrays_of_different_lengths_are_refused() {
    let at = line_of("iterations");
    let e = refused("job-0.events.jsonl", |run| {
        edit_events(run, |l| drop(l[at - 1]["images"].as_array_mut().unwrap().pop()))
    });
    assert!(e.contains(&format!("line {at}: iterations: end_us, images and data_wait_us differ in length")), "{e}");
}

#[test]
fn absurd_or_negative_image_counts_are_refused() {
    let at = line_of("iterations");
    let e = refused("job-0.events.jsonl", |run| {
        edit_events(run, |l| l[at - 1]["images"][0] = Value::from(2_000_000_000u64))
    });
    assert!(e.contains(&format!("line {at}: iterations: images[0] 2000000000 is more than 1000000000")), "{e}");
    let e = refused("job-0.events.jsonl", |run| edit_events(run, |l| l[at - 1]["images"][0] = Value::from(-128)));
    assert!(e.contains(&format!("line {at}: not an event: invalid value: integer `-128`")), "{e}");
}

#[test]
fn a_chunk_that_does_not_follow_the_previous_one_is_refused() {
    let e = refused("job-0.events.jsonl", |run| {
        edit_events(run, |l| {
            let chunks: Vec<usize> = (0..l.len()).filter(|i| l[*i]["event"] == "iterations").collect();
            assert!(chunks.len() >= 2, "the fixture writes a chunk a second");
            l[chunks[1]]["first_step"] = Value::from(l[chunks[1]]["first_step"].as_u64().unwrap() + 1);
        })
    });
    assert!(e.contains("iterations: first_step"), "{e}");
}

#[test]
fn an_event_of_another_job_is_refused() {
    let e = refused("job-0.events.jsonl", |run| edit_events(run, |l| l[1]["job"] = Value::from(1)));
    assert!(e.contains("job-0.events.jsonl: line 2: job is 1, but this is the log of job 0"), "{e}");
}

// ---- telemetry.csv.gz, processes.csv.gz ----

#[test]
fn a_truncated_gzip_file_is_refused_naming_it() {
    for file in [layout::TELEMETRY, layout::PROCESSES] {
        let e = refused(file, |run| {
            let bytes = std::fs::read(run.join(file)).unwrap();
            std::fs::write(run.join(file), &bytes[..bytes.len() * 2 / 3]).unwrap();
        });
        assert!(e.contains("not a readable gzip file"), "{e}");
    }
}

#[test]
fn a_row_with_the_wrong_number_of_fields_names_its_row() {
    let e = refused(layout::TELEMETRY, |run| {
        let p = run.join(layout::TELEMETRY);
        let text = gunzip(&p);
        let mut lines: Vec<&str> = text.lines().collect();
        lines[3] = "1.5,2.5,-1";
        gzip(&p, &(lines.join("\n") + "\n"));
    });
    assert!(e.contains("telemetry.csv.gz: line 4 (row 3): 3 fields, the header has 17"), "{e}");
    let e = refused(layout::PROCESSES, |run| {
        let p = run.join(layout::PROCESSES);
        let text = gunzip(&p);
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines[2].push_str(",7");
        gzip(&p, &(lines.join("\n") + "\n"));
    });
    assert!(e.contains("processes.csv.gz: line 3 (row 2): 8 fields, the header has 7"), "{e}");
}

#[test]
fn non_numeric_and_non_finite_values_are_refused() {
    let e = refused(layout::TELEMETRY, |run| edit_csv_field(&run.join(layout::TELEMETRY), 2, "power_w", "watts"));
    assert!(e.contains("telemetry.csv.gz: line 3 (row 2): `power_w` is \"watts\", not a number"), "{e}");
    let e = refused(layout::TELEMETRY, |run| edit_csv_field(&run.join(layout::TELEMETRY), 5, "sm_activity_pct", "NaN"));
    assert!(e.contains("line 6 (row 5): `sm_activity_pct` is \"NaN\", not a finite number"), "{e}");
    let e = refused(layout::PROCESSES, |run| edit_csv_field(&run.join(layout::PROCESSES), 1, "cpu_pct", "inf"));
    assert!(e.contains("processes.csv.gz: line 2 (row 1): `cpu_pct` is \"inf\", not a finite number"), "{e}");
    let e = refused(layout::PROCESSES, |run| edit_csv_field(&run.join(layout::PROCESSES), 1, "rss_bytes", "-1"));
    assert!(e.contains("processes.csv.gz: line 2 (row 1): `rss_bytes` is -1, below 0"), "{e}");
}

#[test]
fn time_going_backwards_in_telemetry_is_refused() {
    let e = refused(layout::TELEMETRY, |run| edit_csv_field(&run.join(layout::TELEMETRY), 4, "mono", "1.0"));
    assert!(e.contains("telemetry.csv.gz: line 5 (row 4): `mono` goes backwards (1 after"), "{e}");
    let e = refused(layout::TELEMETRY, |run| edit_csv_field(&run.join(layout::TELEMETRY), 4, "mono", ""));
    assert!(e.contains("telemetry.csv.gz: line 5 (row 4): `mono` is empty"), "{e}");
}

#[test]
fn a_process_row_of_a_job_the_workload_does_not_have_is_refused() {
    let e = refused(layout::PROCESSES, |run| edit_csv_field(&run.join(layout::PROCESSES), 1, "job", "9"));
    assert!(e.contains("processes.csv.gz: line 2 (row 1): `job` is 9, but the workload has"), "{e}");
    let e = refused(layout::PROCESSES, |run| edit_csv_field(&run.join(layout::PROCESSES), 1, "job", "0.5"));
    assert!(e.contains("`job` is 0.5, not a whole number"), "{e}");
}

// ---- a mutation fuzzer ----

/// A small deterministic generator (xorshift64*), so that a failure is replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of a text: a line deleted, duplicated or cut, a byte flipped, or a number
/// replaced by NaN, -1, 1e300 or a huge integer.
fn mutate_text(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let l = rng.below(lines.len());
    match rng.below(6) {
        0 => drop(lines.remove(l)),
        1 => {
            let d = lines[l].clone();
            lines.insert(l, d);
        }
        2 => {
            let cut = rng.below(lines[l].len() + 1);
            let mut end = cut;
            while !lines[l].is_char_boundary(end) {
                end -= 1;
            }
            lines[l].truncate(end);
        }
        3 => {
            let mut bytes = std::mem::take(&mut lines[l]).into_bytes();
            if !bytes.is_empty() {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(7);
            }
            lines[l] = String::from_utf8_lossy(&bytes).into_owned();
        }
        _ => {
            // A number of the line (digits, `.`, `-`, `e`) replaced.
            let s = &lines[l];
            let starts: Vec<usize> = s
                .char_indices()
                .filter(|(i, c)| c.is_ascii_digit() && (*i == 0 || !s.as_bytes()[i - 1].is_ascii_alphanumeric()))
                .map(|(i, _)| i)
                .collect();
            if let Some(&a) = starts.get(rng.below(starts.len())) {
                let b = s[a..].find(|c: char| !(c.is_ascii_digit() || ".-+eE".contains(c))).map_or(s.len(), |k| a + k);
                let with = ["NaN", "-1", "1e300", "18446744073709551615", "-0.5", "inf", ""][rng.below(7)];
                lines[l] = format!("{}{with}{}", &s[..a], &s[b..]);
            }
        }
    }
    lines.join("\n") + "\n"
}

/// Hundreds of damaged copies of the good run, each file mutated by a seeded generator:
/// the analysis either refuses the copy with an error naming a file of the run, or
/// analyses it; it never panics.
#[test]
fn mutated_runs_never_panic_the_analysis() {
    let files: Vec<String> = {
        let mut f: Vec<String> = std::fs::read_dir(&template().1)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n == layout::META || n.ends_with(".events.jsonl") || n.ends_with(".csv.gz"))
            .collect();
        f.sort();
        f
    };
    let iterations: u64 = std::env::var("COLLOC_FUZZ_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let (mut refused, mut analysed) = (0, 0);
    for seed in 1..=iterations {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let file = files[rng.below(files.len())].clone();
        let mutations = 1 + rng.below(3);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            analyse_damaged(|run| {
                let p = run.join(&file);
                if file.ends_with(".gz") {
                    let mut text = gunzip(&p);
                    for _ in 0..mutations {
                        text = mutate_text(&text, &mut rng);
                    }
                    gzip(&p, &text);
                    if rng.below(8) == 0 {
                        let bytes = std::fs::read(&p).unwrap();
                        let keep = rng.below(bytes.len());
                        std::fs::write(&p, &bytes[..keep]).unwrap();
                    }
                } else {
                    let mut text = std::fs::read_to_string(&p).unwrap();
                    for _ in 0..mutations {
                        text = mutate_text(&text, &mut rng);
                    }
                    std::fs::write(&p, text).unwrap();
                }
            })
            .1
            .map(|_| ())
            .map_err(|e| format!("{e:#}"))
        }));
        match outcome {
            Err(_) => panic!(
                "seed {seed}: the analysis panicked on a mutated {file} (COLLOC_FUZZ_ITERATIONS={seed} replays it)"
            ),
            Ok(Err(e)) => {
                assert!(
                    e.contains(&format!("runs/{}/", run_id())),
                    "seed {seed}, {file}: an error naming no file: {e}"
                );
                refused += 1;
            }
            Ok(Ok(())) => analysed += 1,
        }
    }
    assert!(refused > iterations / 4, "{refused} refused, {analysed} analysed: the mutations should mostly damage");
}

/// Not damage, but a run the runner saw disturbed: a foreign process on the GPU during the
/// window is named in a note and flags the run; one seen only after the window is not.
#[test]
fn a_foreign_process_in_the_window_marks_the_run_disturbed() {
    let foreign_named = |name: &'static str, from: f64, to: f64| {
        move |run: &Path| {
            edit_meta(run, |m| {
                let (start, end) = (m["release_mono"].as_f64().unwrap(), m["window_end_mono"].as_f64().unwrap());
                let (a, b) = (start + from * (end - start), start + to * (end - start));
                m["telemetry"]["foreign_processes"] = serde_json::json!([{
                    "pid": 4242, "name": name, "first_seen_mono": a, "last_seen_mono": b,
                    "gpu_memory_bytes": 3u64 << 30
                }]);
            })
        }
    };
    let foreign = |from: f64, to: f64| foreign_named("python3", from, to);
    let run_of = |r: &colloc_analysis::Results| r.runs.iter().find(|x| x.run_id == run_id()).unwrap().clone();
    let (_d, r) = analyse_damaged(foreign(0.5, 2.0));
    let r = r.unwrap();
    let run = run_of(&r);
    assert!(run.disturbed, "{:?}", run.notes);
    let w = r.workloads.iter().find(|w| w.id == run.workload_id).expect("its workload");
    assert_eq!(w.disturbed_runs, 1, "the workload counts its disturbed run (tables mark it ‡)");
    let note = run.notes.iter().find(|n| n.contains("foreign process")).expect("a note on the foreign process");
    assert!(note.contains("pid 4242 (python3, 3.00 GiB") && note.contains("disturbed"), "{note}");
    assert!(run.aggregate_throughput.is_some(), "its numbers are still computed");

    let (_d, r) = analyse_damaged(foreign(1.5, 2.0));
    let run = run_of(&r.unwrap());
    assert!(!run.disturbed && !run.notes.iter().any(|n| n.contains("foreign")), "{:?}", run.notes);
    let (_d, r) = analyse_damaged(|_| {});
    assert!(!run_of(&r.unwrap()).disturbed);
    // An MPS server, as a runner matching only its whole name recorded the run's own under
    // its 15-byte command name: not foreign.
    for name in ["nvidia-cuda-mps", "nvidia-cuda-mps-server"] {
        let (_d, r) = analyse_damaged(foreign_named(name, 0.5, 2.0));
        let run = run_of(&r.unwrap());
        assert!(!run.disturbed && !run.notes.iter().any(|n| n.contains("foreign")), "{name}: {:?}", run.notes);
    }
    let (_d, r) = analyse_damaged(foreign_named("nvidia-cuda", 0.5, 2.0));
    assert!(run_of(&r.unwrap()).disturbed, "a name that is no MPS server's");

    let e = refused("meta.json", foreign(0.8, 0.2));
    assert!(e.contains("last seen at") && e.contains("before it was first seen"), "{e}");
}
