//! The `*** Begin Patch` envelope a model sends to `apply_patch`: any text parses or is
//! refused with an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tools_fs::parse_patch(text);
    }
});
