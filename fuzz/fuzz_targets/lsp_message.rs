//! What a language server sends unasked (its requests: configuration, progress tokens,
//! capability registration, edits; its notifications: diagnostics, progress, status), taken
//! in frame by frame as the client's reader does: any bytes are answered or recorded or
//! ignored, never a panic; every request with an id gets exactly one reply carrying that id.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let mut r = std::io::BufReader::new(data);
    let mut messages = Vec::new();
    for _ in 0..64 {
        match tools_core::framing::read_frame(&mut r) {
            Ok(Some(body)) => {
                if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                    messages.push(v);
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
    let settings = serde_json::json!({"python": {"analysis": {"typeCheckingMode": "basic"}}});
    let (replies, _files) = tools_lsp::client::take_in_server_messages(&messages, settings);
    let asked: Vec<&Value> = messages
        .iter()
        .filter(|m| m.get("method").and_then(Value::as_str).is_some())
        .filter_map(|m| m.get("id"))
        .collect();
    assert_eq!(replies.len(), asked.len(), "one reply per request");
    for (reply, id) in replies.iter().zip(asked) {
        assert_eq!(reply.get("id"), Some(id), "a reply to another request: {reply}");
        assert!(
            reply.get("result").is_some() != reply.get("error").is_some(),
            "a reply is a result or an error: {reply}"
        );
    }
});
