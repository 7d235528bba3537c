//! Prints the per-run results of a verified campaign directory as JSON (one object per run:
//! its protocol version, window, and each job's throughput and measured interval), for
//! checking the analysis against an independent recomputation from the traces.
//!
//! `cargo run -q -p colloc-analysis --example runs_json -- CAMPAIGN_DIR`

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: runs_json CAMPAIGN_DIR");
        std::process::exit(2);
    };
    match colloc_analysis::analyse(std::path::Path::new(&dir), None) {
        Ok(r) => match serde_json::to_string_pretty(&r.runs) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("runs_json: {e}");
                std::process::exit(1);
            }
        },
        Err(e) => {
            eprintln!("runs_json: {e:#}");
            std::process::exit(1);
        }
    }
}
