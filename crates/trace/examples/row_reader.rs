//! The row reader alone: `n` rows (default 10^6) of each telemetry file, as the bench's
//! generated campaigns write them, held in memory and read by `read_text_rows` into a sink
//! that needs the analysis' columns, seven passes; prints each pass' time a row and a byte.
//! The second argument is the digits after the point of `wall` (default 3, as the bench
//! writes it; the runner writes 6).
//! `cargo run --release -p colloc-trace --example row_reader -- 1000000 | sort -k2 -n | head -1`
use colloc_trace::rows::{read_text_rows, Row, RowSink};
use colloc_trace::telemetry::{GPU_COLUMNS, GPU_NUMERIC, PROCESS_COLUMNS, PROCESS_NUMERIC};
use std::fmt::Write;
use std::time::Instant;

struct Sum {
    need: Vec<&'static str>,
    s: f64,
    n: usize,
}
impl RowSink for Sum {
    fn columns(&mut self, _: &[&str]) {}
    fn needs(&self, c: &str) -> bool {
        self.need.contains(&c)
    }
    fn row(&mut self, r: &Row<'_>) {
        self.n += 1;
        for v in r.numbers.iter().flatten() {
            self.s += v;
        }
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1_000_000);
    let mut procs = PROCESS_COLUMNS.join(",") + "\n";
    let mut tel = GPU_COLUMNS.join(",") + "\n";
    let places: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(3);
    let wall0 = 1_735_689_600.0;
    for k in 0..n {
        let t = 1000.0 + k as f64 / 10.0;
        let wall = t + wall0;
        let b = 0.5 + 0.3 * ((k * 7919 % 1000) as f64 / 1000.0);
        writeln!(procs, "{t:.3},{wall:.places$},{},{},{:.1},{},{:.0}", k % 3, 5, 380.0 * b, 18980864 + k, 2.5e10 * b)
            .unwrap();
        writeln!(
            tel,
            "{t:.3},{wall:.places$},-1,{:.1},{:.1},{:.0},{:.0},{:.0},{},1980,2619,45,0,{:.3},{:.3},{:.3},{:.3}",
            700.0 * b,
            5e6 + k as f64 * 70.0,
            b * 100.0,
            b * 60.0,
            5e10 * b,
            150754820096u64,
            b * 99.0,
            b * 45.0,
            b * 4.0,
            b * 55.0
        )
        .unwrap();
    }
    let pneed = vec!["mono", "job", "cpu_pct", "rss_bytes", "gpu_mem_bytes"];
    let tneed = vec![
        "mono",
        "instance",
        "mem_used_bytes",
        "mem_total_bytes",
        "energy_j",
        "power_w",
        "gpu_util_pct",
        "mem_util_pct",
        "sm_activity_pct",
        "sm_occupancy_pct",
        "tensor_activity_pct",
        "dram_bw_util_pct",
    ];
    for _ in 0..7 {
        let t = Instant::now();
        let mut s = Sum { need: pneed.clone(), s: 0.0, n: 0 };
        read_text_rows(&procs, PROCESS_NUMERIC, Some(3), &mut s).unwrap();
        let dp = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut s2 = Sum { need: tneed.clone(), s: 0.0, n: 0 };
        read_text_rows(&tel, GPU_NUMERIC, None, &mut s2).unwrap();
        let dt = t.elapsed().as_secs_f64();
        println!(
            "procs {:.1} ns/line {:.2} ns/B | tel {:.1} ns/line {:.2} ns/B  ({} {})",
            dp * 1e9 / n as f64,
            dp * 1e9 / procs.len() as f64,
            dt * 1e9 / n as f64,
            dt * 1e9 / tel.len() as f64,
            s.s + s2.s,
            s.n + s2.n
        );
    }
}
