//! A component's template uses its servers could not link, joined to a rename of the
//! `<script setup>` binding they use (see [`crate::queries::vue_template`]): each becomes an
//! edit of the same change, listed apart; a template that declares the name too refuses the
//! rename, since renaming only the script would leave its uses behind.

use lsp_types::WorkspaceEdit;
use tools_core::{Run, ToolError};

use crate::queries::query::Prepared;

/// The template edits added to a rename.
#[derive(Default)]
pub(crate) struct TemplateEdits {
    /// `file:line` of each, in order.
    pub places: Vec<String>,
    /// What they are and why they were read from the text.
    pub why: String,
}

/// Adds to `edit` the renames of `p`'s symbol in its component's template that `edit` does
/// not already make.
pub(crate) fn template_edits(
    run: &Run,
    p: &Prepared,
    new_name: &str,
    here: &str,
    edit: &mut WorkspaceEdit,
) -> Result<TemplateEdits, ToolError> {
    let found = crate::rename::references::locations_of(edit).unwrap_or_default();
    let added = crate::queries::vue_template::for_query(run.root(), p, &found);
    let Some(uses) = added.uses else {
        return match added.lead {
            Some(lead) => Err(ToolError::rejected(format!(
                "{}; renaming {here} would leave them as they are, so nothing was changed",
                lead.trim_start_matches('(').trim_end_matches(')')
            ))),
            None => Ok(TemplateEdits::default()),
        };
    };
    let old = crate::queries::outside_importers::last_identifier(&p.symbol).unwrap_or_default();
    let mut out = TemplateEdits {
        why: format!(
            "uses in the component's template read from its text, not from the servers ({})",
            uses.why
        ),
        ..TemplateEdits::default()
    };
    let shown = run.workspace().display(&p.path);
    for te in uses.edits(old, new_name) {
        if found
            .iter()
            .any(|l| l.uri == p.doc.uri && l.range == te.range)
        {
            continue;
        }
        out.places
            .push(format!("{shown}:{}", te.range.start.line + 1));
        crate::rename::references::add_edit(edit, p.doc.uri.clone(), te);
    }
    Ok(out)
}
