//! `edit`: exact string replacement that refuses to guess, or a symbol's text replaced or
//! extended by its name path (see [`crate::symbol_edit`]).
//!
//! The file's own conventions are kept: a CRLF file stays CRLF (lines the model inserts
//! included, and its `old_string` written with `\n` matches), a BOM stays, the mode stays,
//! a hard-linked file stays linked. A read-only file is refused.

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::safe_write;
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::locked::{sha256_hex, with_path_locks, write_failed};
use crate::symbol_edit::SymbolPart;
use crate::text_style::TextStyle;

/// The largest file `edit` changes.
const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// File to edit, relative to the workspace root.
    path: String,
    /// The exact text to replace (whitespace included). Not with `symbol`.
    #[serde(default)]
    old_string: Option<String>,
    /// The replacement of `old_string`.
    #[serde(default)]
    new_string: Option<String>,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    replace_all: bool,
    /// Instead of old_string/new_string: the symbol to change, by name path (`Greeter.greet`,
    /// `module.function`, `impl Point.norm`, `Server.Start`), with exactly one of `replace`,
    /// `body`, `insert_before`, `insert_after`.
    #[serde(default)]
    symbol: Option<String>,
    /// With `symbol`: its new whole text (signature included); "" deletes it.
    #[serde(default)]
    replace: Option<String>,
    /// With `symbol`: its new body, without the signature (and without the braces, in
    /// languages that have them). A text that opens with the symbol's own signature is
    /// taken as its whole new text, as `replace` takes it.
    #[serde(default)]
    body: Option<String>,
    /// With `symbol`: lines to insert above it (above its decorators or attributes).
    #[serde(default)]
    insert_before: Option<String>,
    /// With `symbol`: lines to insert below its last line.
    #[serde(default)]
    insert_after: Option<String>,
    /// Write nothing: stage the change, predict its diagnostics, and answer with a
    /// `change_id` for `resolve` (accept or discard).
    #[serde(default)]
    preview: bool,
}

pub(crate) struct EditTool;

/// The symbol edit `a` asks for, or `None` for a string edit; refuses a mix of both.
fn symbol_part(a: &mut EditArgs) -> Result<Option<(String, SymbolPart)>, ToolError> {
    let parts: Vec<SymbolPart> = [
        a.replace.take().map(SymbolPart::Whole),
        a.body.take().map(SymbolPart::Body),
        a.insert_before.take().map(SymbolPart::Before),
        a.insert_after.take().map(SymbolPart::After),
    ]
    .into_iter()
    .flatten()
    .collect();
    let Some(symbol) = a.symbol.take() else {
        if !parts.is_empty() {
            return Err(ToolError::invalid(
                "symbol",
                "replace, body, insert_before and insert_after need `symbol`: the name path of the symbol to change",
            ));
        }
        return Ok(None);
    };
    if a.old_string.is_some() || a.new_string.is_some() || a.replace_all {
        return Err(ToolError::invalid(
            "symbol",
            "give either `symbol` (with one of replace, body, insert_before, insert_after) or old_string and \
             new_string, not both",
        ));
    }
    match <[SymbolPart; 1]>::try_from(parts) {
        Ok([part]) => Ok(Some((symbol, part))),
        Err(parts) => Err(ToolError::invalid(
            "symbol",
            format!(
                "`symbol` needs exactly one of replace, body, insert_before, insert_after ({} given)",
                parts.len()
            ),
        )),
    }
}

/// 1-based line numbers where `needle` starts in `hay` (at most `cap` of them).
fn occurrence_lines(hay: &str, needle: &str, cap: usize) -> Vec<usize> {
    hay.match_indices(needle)
        .take(cap)
        .map(|(i, _)| hay[..i].matches('\n').count() + 1)
        .collect()
}

/// How often `old` occurs in `body` and the line of the first occurrence, or the error
/// that says why the edit cannot be made.
fn locate(
    body: &str,
    old: &str,
    replace_all: bool,
    shown: &str,
) -> Result<(usize, usize), ToolError> {
    let count = body.matches(old).count();
    if count == 0 {
        return Err(ToolError::invalid(
            "old_string",
            format!(
                "old_string does not occur in `{shown}`; read the file and copy the text exactly"
            ),
        ));
    }
    if count > 1 && !replace_all {
        let lines: Vec<String> = occurrence_lines(body, old, 10)
            .iter()
            .map(|l| l.to_string())
            .collect();
        return Err(ToolError::invalid(
            "old_string",
            format!(
                "old_string occurs {count} times in `{shown}` (lines {}); add surrounding lines to make it unique, \
                 or set replace_all",
                lines.join(", ")
            ),
        ));
    }
    let first_line = occurrence_lines(body, old, 1).first().copied().unwrap_or(1);
    Ok((count, first_line))
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
         unless replace_all is true (the error says how often and on which lines). Line endings (CRLF), \
         a BOM and the file's permissions are kept; write old_string with plain \\n line breaks. With \
         preview: true nothing is written: the answer predicts the diagnostics the edit would bring and gives \
         a change_id for `resolve` (accept or discard). To change code by name instead, give `symbol` (a name \
         path: `Greeter.greet`, `module.function`, `impl Point.norm`) and one of `replace` (its whole new text), \
         `body` (its new body, no signature, no braces), `insert_before` or `insert_after`; the text is \
         re-indented to the symbol's own, and an ambiguous or unknown name is refused with candidates."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<EditArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let mut a: EditArgs = parse_args(args)?;
        if let Some((symbol, part)) = symbol_part(&mut a)? {
            return crate::symbol_edit::call(ctx, &a.path, &symbol, part, a.preview).await;
        }
        let missing = if a.old_string.is_none() {
            "old_string"
        } else {
            "new_string"
        };
        let (Some(old_string), Some(new_string)) = (a.old_string.take(), a.new_string.take())
        else {
            return Err(ToolError::invalid(
                missing,
                "give old_string and new_string (or `symbol` with one of replace, body, insert_before, insert_after)",
            ));
        };
        if old_string.is_empty() {
            return Err(ToolError::invalid(
                "old_string",
                "old_string is empty; use `write` to create a file",
            ));
        }
        if old_string == new_string {
            return Err(ToolError::invalid(
                "new_string",
                "new_string is the same as old_string; nothing to change",
            ));
        }
        let path = ctx.run.workspace().resolve(&a.path)?;
        let shown = ctx.run.workspace().display(&path);
        // Read, plan and write under the path's lock: a concurrent edit of the same file
        // waits, then plans from the content this one wrote, so neither is lost.
        let preview = a.preview;
        let (count, first_line, staged) = {
            let (path, shown) = (path.clone(), shown.clone());
            with_path_locks(ctx, vec![path.clone()], move |ws, _guard| {
                let current = safe_write::read_file(ws, &path, MAX_EDIT_BYTES)
                    .map_err(|e| e.for_file(&shown))?;
                let text = String::from_utf8(current.bytes).map_err(|_| {
                    ToolError::invalid("path", format!("`{shown}` is not UTF-8 text"))
                })?;
                let (style, body) = TextStyle::detect(&text);
                let (mut old, mut new) =
                    (style.model_text(&old_string), style.model_text(&new_string));
                // A file that mixes both line endings is edited byte for byte; when the
                // model's `\n` text is only there with `\r\n`, the CRLF spelling is used.
                if !body.contains(&old) && old.contains('\n') && !old.contains('\r') {
                    let crlf = old.replace('\n', "\r\n");
                    if body.contains(&crlf) {
                        old = crlf;
                        new = new.replace("\r\n", "\n").replace('\n', "\r\n");
                    }
                }
                let (count, first_line) = locate(&body, &old, a.replace_all, &shown)?;
                let updated = style.render(&body.replace(&old, &new));
                if preview {
                    // The rendered text is the model's text in the file's own conventions;
                    // a BOM or CRLF survives as bytes in a UTF-8 string.
                    let staged = tools_core::StagedFile {
                        path: path.clone(),
                        hash: Some(sha256_hex(text.as_bytes())),
                        new_text: Some(
                            String::from_utf8(updated)
                                .map_err(|_| ToolError::internal("the edited text is not UTF-8"))?,
                        ),
                        replacements: count,
                        mode: None,
                    };
                    return Ok((count, first_line, Some(staged)));
                }
                safe_write::write_file(ws, &path, &updated).map_err(|e| write_failed(e, &shown))?;
                Ok((count, first_line, None))
            })
            .await?
        };
        let what = if count == 1 {
            "1 replacement".to_string()
        } else {
            format!("{count} replacements")
        };
        if let Some(staged) = staged {
            return crate::preview::stage_and_predict(
                ctx,
                "edit",
                vec![staged],
                format!("would edit {shown}:{first_line} ({what})."),
                json!({"path": shown, "replacements": count, "first_line": first_line}),
            )
            .await;
        }
        Ok(
            ToolOutput::text(format!("Edited {shown}:{first_line} ({what})."))
                .with_structured(json!({
                    "path": shown, "replacements": count, "first_line": first_line,
                }))
                .with_touched([path]),
        )
    }
}
