//! `edit`: exact string replacement that refuses to guess.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::atomic::write_atomic;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// File to edit, relative to the workspace root.
    path: String,
    /// The exact text to replace (whitespace included).
    old_string: String,
    /// The replacement.
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    replace_all: bool,
}

pub(crate) struct EditTool;

/// 1-based line numbers where `needle` starts in `hay` (at most `cap` of them).
fn occurrence_lines(hay: &str, needle: &str, cap: usize) -> Vec<usize> {
    hay.match_indices(needle)
        .take(cap)
        .map(|(i, _)| hay[..i].matches('\n').count() + 1)
        .collect()
}

#[tools_core::async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Replace an exact string in a file. Fails if old_string is absent, or occurs more than once \
         unless replace_all is true (the error says how often and on which lines)."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<EditArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: EditArgs = parse_args(args)?;
        if a.old_string.is_empty() {
            return Err(ToolError::invalid(
                "old_string",
                "old_string is empty; use `write` to create a file",
            ));
        }
        if a.old_string == a.new_string {
            return Err(ToolError::invalid(
                "new_string",
                "new_string is the same as old_string; nothing to change",
            ));
        }
        let ws = ctx.run.workspace();
        let path = ws.resolve(&a.path)?;
        let shown = ws.display(&path);
        let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                ToolError::invalid("path", format!("`{shown}` does not exist"))
            }
            _ => ToolError::invalid("path", format!("cannot read `{shown}` as text: {e}")),
        })?;
        let count = text.matches(&a.old_string).count();
        if count == 0 {
            return Err(ToolError::invalid(
                "old_string",
                format!(
                    "old_string does not occur in `{shown}`; read the file and copy the text exactly"
                ),
            ));
        }
        if count > 1 && !a.replace_all {
            let lines = occurrence_lines(&text, &a.old_string, 10);
            let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            return Err(ToolError::invalid(
                "old_string",
                format!(
                    "old_string occurs {count} times in `{shown}` (lines {}); add surrounding lines to make it unique, \
                     or set replace_all",
                    lines.join(", ")
                ),
            ));
        }
        let first_line = occurrence_lines(&text, &a.old_string, 1)
            .first()
            .copied()
            .unwrap_or(1);
        let new = text.replace(&a.old_string, &a.new_string);
        write_atomic(&path, new.as_bytes()).map_err(|e| {
            ToolError::internal(format!(
                "cannot write `{shown}`: {e}; the file is unchanged"
            ))
        })?;
        let what = if count == 1 {
            "1 replacement".to_string()
        } else {
            format!("{count} replacements")
        };
        Ok(
            ToolOutput::text(format!("Edited {shown}:{first_line} ({what})."))
                .with_structured(json!({
                    "path": shown, "replacements": count, "first_line": first_line,
                }))
                .with_touched([path]),
        )
    }
}
