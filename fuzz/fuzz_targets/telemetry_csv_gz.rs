#![no_main]
//! `colloc_trace::readers::telemetry_csv_gz` on arbitrary bytes: an error, never a panic.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = colloc_trace::readers::telemetry_csv_gz(data);
});
