#![no_main]
//! `colloc_trace::readers::meta_json` on arbitrary bytes: an error, never a panic.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = colloc_trace::readers::meta_json(data);
});
