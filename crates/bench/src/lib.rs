//! The pipeline's benchmarks, which `cargo xtask bench` runs: each figure beside a baseline
//! measured in the same run, with the ratio, printed as it is measured.
//!
//! - `measure`: verification of a campaign against `sha256sum -c` of the same files, the
//!   whole verify + analyse of scaled copies of the campaign (time, ms per run, peak memory,
//!   each in a child process: `cargo xtask bench-analyse-child`, [`child_main`]), and ours
//!   against its peers on generated campaigns;
//! - `scale`: the generated campaigns (the analysis testkit's fixture writer at a given
//!   number of samples), the peers (pandas, DuckDB and polars scripts in `benchmarks/tools/`) and
//!   the check that every engine gives the same numbers.
//!
//! It asserts no speed: the figures go to `BENCHMARKS.md`.

#![warn(unreachable_pub)]

mod measure;
mod scale;

pub use measure::{child_main, run, Options};
