//! The entry point for the fuzz targets of the repository's `fuzz/` folder, built only with
//! the `testing` feature; not part of the API. They run the client's own decoding of what a debug adapter sends, without one.

use dap_types::requests as rq;
use serde_json::Value;

use crate::protocol::{BreakpointState, decode_response, exit_status_in, failure_message};

/// Decodes one message from an adapter as the client does: a response into the typed
/// answer of the request it names (a failure into the adapter's own words), an event's
/// body into the typed event the client reads, console text for an exit status. Returns
/// whether it decoded; a message that does not is an error the client reports or an event
/// it ignores, never a panic.
pub fn decode_adapter_message(msg: &Value) -> bool {
    match msg.get("type").and_then(Value::as_str) {
        Some("response") => {
            let command = msg.get("command").and_then(Value::as_str).unwrap_or("");
            if msg.get("success").and_then(Value::as_bool) != Some(true) {
                return !failure_message(msg).is_empty();
            }
            let resp = msg.clone();
            match command {
                "initialize" => decode_response::<rq::Initialize>(resp).is_ok(),
                "launch" => decode_response::<rq::Launch>(resp).is_ok(),
                "attach" => decode_response::<rq::Attach>(resp).is_ok(),
                "configurationDone" => decode_response::<rq::ConfigurationDone>(resp).is_ok(),
                "setBreakpoints" => decode_response::<rq::SetBreakpoints>(resp)
                    .map(|r| r.breakpoints.iter().map(BreakpointState::from_dap).count())
                    .is_ok(),
                "setExceptionBreakpoints" => {
                    decode_response::<rq::SetExceptionBreakpoints>(resp).is_ok()
                }
                "threads" => decode_response::<rq::Threads>(resp).is_ok(),
                "stackTrace" => decode_response::<rq::StackTrace>(resp).is_ok(),
                "scopes" => decode_response::<rq::Scopes>(resp).is_ok(),
                "variables" => decode_response::<rq::Variables>(resp).is_ok(),
                "evaluate" => decode_response::<rq::Evaluate>(resp).is_ok(),
                "exceptionInfo" => decode_response::<rq::ExceptionInfo>(resp).is_ok(),
                "continue" => decode_response::<rq::Continue>(resp).is_ok(),
                "next" => decode_response::<rq::Next>(resp).is_ok(),
                "stepIn" => decode_response::<rq::StepIn>(resp).is_ok(),
                "stepOut" => decode_response::<rq::StepOut>(resp).is_ok(),
                "pause" => decode_response::<rq::Pause>(resp).is_ok(),
                "disconnect" => decode_response::<rq::Disconnect>(resp).is_ok(),
                _ => false,
            }
        }
        Some("event") => {
            let body = msg.get("body").cloned().unwrap_or(Value::Null);
            match msg.get("event").and_then(Value::as_str) {
                Some("output") => serde_json::from_value::<dap_types::OutputEvent>(body)
                    .map(|ev| exit_status_in(&ev.output))
                    .is_ok(),
                Some("breakpoint") => serde_json::from_value::<dap_types::BreakpointEvent>(body)
                    .map(|ev| BreakpointState::from_dap(&ev.breakpoint))
                    .is_ok(),
                _ => false,
            }
        }
        _ => false,
    }
}
