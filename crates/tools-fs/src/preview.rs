//! `preview: true` on `write`, `edit` and `apply_patch`: the change is computed exactly as
//! it would be written (under the same path locks, from the same read), then *staged*
//! instead of written. The run's write observers predict what it would do (diagnostics on
//! write sends the proposed texts to the language servers as unsaved changes), and the
//! answer leads with that prediction and names a `change_id` that `resolve` accepts (all
//! files or none, each checked against the content it was computed from) or discards.

use serde_json::Value;
use tools_core::MAX_PREVIEW_FILE_BYTES;
use tools_core::{CallCtx, ProposedFile, StagedChanges, StagedFile, ToolError, ToolOutput};

/// Stages `files` on behalf of `tool` and answers with the prediction first, then
/// `summary` (what the change does), then how to resolve it. Nothing is written and
/// nothing is reported as touched.
pub(crate) async fn stage_and_predict(
    ctx: &CallCtx,
    tool: &str,
    files: Vec<StagedFile>,
    summary: String,
    structured: Value,
) -> Result<ToolOutput, ToolError> {
    for f in &files {
        if let Some(text) = &f.new_text
            && text.len() > MAX_PREVIEW_FILE_BYTES
        {
            return Err(ToolError::invalid(
                "preview",
                format!(
                    "the proposed `{}` is {} bytes, over the {MAX_PREVIEW_FILE_BYTES}-byte limit of a preview; \
                     nothing was staged — write it without `preview`, or in smaller pieces",
                    ctx.run.workspace().display(&f.path),
                    text.len()
                ),
            ));
        }
    }
    let proposed: Vec<ProposedFile> = files
        .iter()
        .filter_map(|f| {
            f.new_text.as_ref().map(|t| ProposedFile {
                path: f.path.clone(),
                text: t.clone(),
            })
        })
        .collect();
    let deletions = files.iter().filter(|f| f.new_text.is_none()).count();
    let id = StagedChanges::for_run(&ctx.run).stage(tool, "change", files)?;
    let report = ctx.preview_diagnostics(&proposed).await;
    let mut text = format!(
        "(preview) {summary}\nNothing was written: call resolve with change_id \"{id}\" and action \"accept\" \
         to write it (every file or none; refused if a file changed since), or \"discard\"."
    );
    if deletions > 0 {
        text.push_str(&format!(
            "\n{deletions} file deletion(s) are staged but not previewed by the language servers."
        ));
    }
    let mut structured = structured;
    if let Value::Object(m) = &mut structured {
        m.insert("change_id".into(), Value::String(id.clone()));
        m.insert("preview".into(), Value::Bool(true));
    }
    Ok(report.lead(ToolOutput::text(text).with_structured(structured)))
}
