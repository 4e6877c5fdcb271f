//! `write`: replace or create a whole file, atomically.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::atomic::write_atomic;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// File to write, relative to the workspace root. Parent folders are created.
    path: String,
    /// The complete new content.
    content: String,
}

pub(crate) struct WriteTool;

#[tools_core::async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Write a whole file inside the workspace (created if absent, replaced if present), atomically. \
         New diagnostics from the language server are appended to the result."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<WriteArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: WriteArgs = parse_args(args)?;
        let ws = ctx.run.workspace();
        let path = ws.resolve(&a.path)?;
        let shown = ws.display(&path);
        if path.is_dir() {
            return Err(ToolError::invalid(
                "path",
                format!("`{shown}` is a directory"),
            ));
        }
        let existed = path.exists();
        write_atomic(&path, a.content.as_bytes()).map_err(|e| {
            ToolError::internal(format!(
                "cannot write `{shown}`: {e}; the file is unchanged"
            ))
        })?;
        let lines = a.content.lines().count();
        let verb = if existed { "Replaced" } else { "Created" };
        Ok(ToolOutput::text(format!(
            "{verb} {shown} ({lines} lines, {} bytes).",
            a.content.len()
        ))
        .with_structured(
            json!({"path": shown, "created": !existed, "bytes": a.content.len(), "lines": lines}),
        )
        .with_touched([path]))
    }
}
