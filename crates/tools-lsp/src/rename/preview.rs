//! `lsp_rename` with `preview: true`: the rename is planned exactly as it would be applied
//! (the server's edit, plus the references it still reports under the old name), then
//! staged in the run's store of staged changes instead of written. The diagnostics it
//! would bring are predicted by the run's write observers (diagnostics on write sends the
//! renamed texts to the servers as unsaved changes), and `resolve` accepts the change —
//! every file checked against the content the rename was planned from — or discards it.

use serde_json::json;
use tools_core::content_hash;
use tools_core::{CallCtx, ProposedFile, StagedChanges, StagedFile, ToolError, ToolOutput};

use crate::rename::plan::{Final, Plan};

/// Stages `plan` and answers with the predicted diagnostics first.
pub(crate) async fn stage(
    ctx: &CallCtx,
    plan: &Plan,
    here: &str,
    new_name: &str,
    added_references: &[String],
) -> Result<ToolOutput, ToolError> {
    let ws = ctx.run.workspace();
    let mut files = Vec::new();
    let mut listed = Vec::new();
    for (path, end) in &plan.finals {
        let original = plan.original.get(path).cloned().flatten();
        let new_text = match end {
            Final::Text(t) => Some(t.clone()),
            Final::Absent => None,
        };
        if original == new_text {
            continue;
        }
        let what = match (&original, &new_text) {
            (None, _) => "created".to_string(),
            (_, None) => "deleted".to_string(),
            _ => format!("{} edit(s)", plan.edits.get(path).copied().unwrap_or(0)),
        };
        listed.push(json!({"path": ws.display(path), "change": what}));
        files.push(StagedFile {
            path: path.clone(),
            hash: original.as_deref().map(|t| content_hash(t.as_bytes())),
            new_text,
            replacements: plan.edits.get(path).copied().unwrap_or(0),
            mode: None,
        });
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
    let total: usize = plan.edits.values().sum();
    let nfiles = files.len();
    let id = StagedChanges::for_run(&ctx.run).stage("lsp_rename", "change", files)?;
    let report = ctx.preview_diagnostics(&proposed).await;
    let mut lines = vec![format!(
        "(preview) renaming {here} to `{new_name}` would make {total} edit(s) in {nfiles} file(s):"
    )];
    for f in &listed {
        lines.push(format!(
            "  {}: {}",
            f["path"].as_str().unwrap_or_default(),
            f["change"].as_str().unwrap_or_default()
        ));
    }
    if !added_references.is_empty() {
        lines.push(format!(
            "{} of those edit(s) are references the server reports under the old name that its rename left out: {}",
            added_references.len(),
            added_references.join(", ")
        ));
    }
    lines.push(format!(
        "Nothing was written: call resolve with change_id \"{id}\" and action \"accept\" to write it \
         (every file or none; refused if a file changed since), or \"discard\"."
    ));
    Ok(
        report.lead(ToolOutput::text(lines.join("\n")).with_structured(json!({
            "change_id": id, "preview": true, "edits": total, "files": listed,
            "added_references": added_references,
        }))),
    )
}
