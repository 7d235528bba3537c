#![no_main]
//! `colloc_trace::readers::sha256sums` on arbitrary bytes: an error, never a panic.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = colloc_trace::readers::sha256sums(data);
});
