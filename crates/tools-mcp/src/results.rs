//! Our tools and their answers as MCP values: a tool entry with its tier as annotations, a
//! tool's output or error as a `CallToolResult`.

use std::sync::Arc;

use base64::Engine;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ToolAnnotations};
use serde_json::{Value, json};
use tools_core::{CallError, Tier, ToolError, ToolOutput};

/// Read-tier tools that start processes: `lsp` starts language servers (and `diagnostics
/// "*"` the project's checker), `vibe_spawn` and `vibe_send` start worker CLIs.
const READ_TOOLS_THAT_START_PROCESSES: &[&str] = &["lsp", "vibe_spawn", "vibe_send"];

/// The MCP tool entry for one of ours.
pub(crate) fn to_mcp_tool(info: &tools_core::ToolInfo) -> Option<rmcp::model::Tool> {
    let annotations = match info.tier {
        // A read tool that starts a process (a language server, a worker CLI) is not
        // read-only in MCP's sense: it reaches beyond the conversation.
        Tier::Read if READ_TOOLS_THAT_START_PROCESSES.contains(&info.name.as_str()) => {
            ToolAnnotations::new().destructive(false).open_world(true)
        }
        Tier::Read => ToolAnnotations::new().read_only(true).destructive(false),
        Tier::Write => ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false),
        Tier::Exec => ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .open_world(true),
    };
    let Value::Object(schema) = &info.input_schema else {
        tracing::error!(
            "tool {} has an input schema that is not an object",
            info.name
        );
        return None;
    };
    let mut meta = rmcp::model::JsonObject::new();
    meta.insert("agent-tools/tier".into(), info.tier.as_str().into());
    meta.insert("agent-tools/parallelSafe".into(), info.parallel_safe.into());
    Some(
        rmcp::model::Tool::new(
            info.name.clone(),
            info.description.clone(),
            Arc::new(schema.clone()),
        )
        .with_annotations(annotations)
        .with_meta(rmcp::model::MetaObject(meta)),
    )
}

/// Maps a tool result to MCP content.
pub fn to_call_result(result: Result<ToolOutput, ToolError>) -> CallToolResult {
    match result {
        Ok(out) => {
            let mut content = vec![ContentBlock::text(out.full_text())];
            content.extend(out.images.iter().map(|img| {
                ContentBlock::image(
                    base64::engine::general_purpose::STANDARD.encode(&img.png),
                    "image/png",
                )
            }));
            let mut result = CallToolResult::success(content);
            // structuredContent must be an object.
            result.structured_content = out.full_structured().map(|s| {
                if s.is_object() {
                    s
                } else {
                    json!({ "result": s })
                }
            });
            result
        }
        Err(e) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
            result.structured_content =
                Some(json!({"error": {"kind": e.kind(), "message": e.to_string()}}));
            result
        }
    }
}

/// The `tools/call` answer for a finished call: an unknown tool is a protocol error.
pub(crate) fn finish(result: Result<ToolOutput, CallError>) -> Result<CallToolResponse, McpError> {
    match result {
        Ok(out) => Ok(to_call_result(Ok(out)).into()),
        Err(CallError::Tool(e)) => Ok(to_call_result(Err(e)).into()),
        Err(e @ CallError::UnknownTool { .. }) => Err(McpError::new(
            ErrorCode::INVALID_PARAMS,
            e.to_string(),
            None,
        )),
    }
}

/// The tool error a call cancelled by the client ends with.
pub(crate) fn cancelled_error() -> ToolError {
    ToolError::rejected("the client cancelled the call")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_maps_to_text_images_and_structured_content() {
        let mut out = ToolOutput::text("two files").with_structured(json!(["a", "b"]));
        out.images.push(tools_core::Image { png: vec![1, 2, 3] });
        let encoded = serde_json::to_value(to_call_result(Ok(out))).unwrap();
        assert_eq!(
            encoded,
            json!({
                "resultType": "complete",
                "content": [
                    {"type": "text", "text": "two files"},
                    {"type": "image", "data": "AQID", "mimeType": "image/png"},
                ],
                "structuredContent": {"result": ["a", "b"]},
                "isError": false,
            })
        );
        let encoded =
            serde_json::to_value(to_call_result(Err(ToolError::timed_out("too slow")))).unwrap();
        let text = ToolError::timed_out("too slow").to_string();
        assert_eq!(
            encoded,
            json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"error": {"kind": "timed_out", "message": text}},
                "isError": true,
            })
        );
    }

    #[test]
    fn a_tool_entry_carries_its_tier_as_annotations_and_meta() {
        let info = |name: &str, tier| tools_core::ToolInfo {
            name: name.into(),
            tier,
            description: "does things".into(),
            input_schema: json!({"type": "object"}),
            parallel_safe: true,
        };
        let entry = |i| serde_json::to_value(to_mcp_tool(&i).unwrap()).unwrap();
        assert_eq!(
            entry(info("write", Tier::Write)),
            json!({
                "name": "write",
                "description": "does things",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false},
                "_meta": {"agent-tools/tier": "write", "agent-tools/parallelSafe": true},
            })
        );
        assert_eq!(
            entry(info("lsp", Tier::Read))["annotations"],
            json!({"destructiveHint": false, "openWorldHint": true})
        );
        assert_eq!(
            entry(info("ast_grep", Tier::Read))["annotations"],
            json!({"readOnlyHint": true, "destructiveHint": false})
        );
        let mut bad = info("odd", Tier::Read);
        bad.input_schema = json!(true);
        assert!(to_mcp_tool(&bad).is_none());
    }
}
