//! `Content-Length` framing as language servers and debug adapters send it: any bytes are
//! read frame by frame until the end or an error, never a panic or a runaway allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = std::io::BufReader::new(data);
    for _ in 0..64 {
        match tools_core::framing::read_frame(&mut r) {
            Ok(Some(body)) => {
                let _ = serde_json::from_slice::<serde_json::Value>(&body);
            }
            Ok(None) | Err(_) => break,
        }
    }
});
