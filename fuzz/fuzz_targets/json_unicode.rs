//! The repair of JSON text with broken Unicode escapes (lone surrogates from servers and
//! kernels): any bytes are judged and repaired without a panic, and the repair is valid text
//! that is judged sound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tools_core::json_unicode::unicode_problem(data);
    let repaired = tools_core::json_unicode::repair(data);
    assert_eq!(
        tools_core::json_unicode::unicode_problem(repaired.as_bytes()),
        None,
        "the repair of {data:?} still has a problem: {repaired:?}"
    );
});
