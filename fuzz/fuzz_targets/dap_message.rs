//! What a debug adapter sends (responses to each request the client makes, events),
//! framed as adapters frame it and decoded into typed values as the client decodes them:
//! any bytes decode or are refused, never a panic or a runaway allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = std::io::BufReader::new(data);
    for _ in 0..64 {
        match tools_core::framing::read_frame(&mut r) {
            Ok(Some(body)) => {
                if let Ok(msg) = serde_json::from_slice::<serde_json::Value>(&body) {
                    let _ = tools_debug::decode_adapter_message(&msg);
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
});
