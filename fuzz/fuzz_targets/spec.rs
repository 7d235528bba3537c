#![no_main]
//! `colloc_spec::validate::check_text` on arbitrary bytes: a spec resolved or diagnostics
//! printed, never a panic.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = colloc_spec::validate::check_text(data);
});
