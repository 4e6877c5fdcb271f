//! A Vue component's template uses of its own `<script setup>` bindings, when the servers
//! cannot give them. The Vue servers see a template expression as a property of the
//! component's instance type, which they build from the `vue` package's own types: in a
//! project where `vue` is not installed (no `node_modules/vue`, before `npm install`) that
//! type is unknown, so the template uses of `handleDigit` are linked to nothing and neither
//! server lists or renames them.
//!
//! There, and only for a name declared at the top level of the same component's
//! `<script setup>` (the declaration the servers answered for), the template is read as
//! text ([`scan`]); what it adds is labelled, in the first line and in the structured
//! result. Where `vue` is installed the servers answer and nothing is read.

mod scan;

use std::path::Path;

use lsp_types::{Location, Position, Range, TextEdit, Uri};

use crate::client::position::{Encoding, to_lsp_character};
use crate::queries::query::Prepared;

/// What reading a component's template added, and why it was read.
pub(crate) struct TemplateUses {
    /// The uses, as ranges of the component in the server's encoding; each with whether
    /// it is a shorthand property (`{ name }`).
    pub ranges: Vec<(Range, bool)>,
    /// The line that leads the answer, saying where these came from.
    pub lead: String,
    /// Why they were read from the text.
    pub why: String,
}

/// The template uses of `name` in the component `path` (its text `text`), when the servers
/// cannot link them and `found` (the servers' locations in that component) holds the
/// top-level `<script setup>` declaration of `name`. `Ok(None)` when there is nothing to
/// read (not a component, `vue` installed, not such a binding, no template use); `Err` with
/// the lead line when the template declares the name too and was left alone.
pub(crate) fn uses(
    path: &Path,
    text: &str,
    name: &str,
    found: &[Range],
    enc: Encoding,
    shown_dir: &str,
) -> Result<Option<TemplateUses>, String> {
    if path.extension().and_then(|e| e.to_str()) != Some("vue")
        || name.is_empty()
        || path
            .parent()
            .is_none_or(|d| crate::servers::framework_tsserver::installed(d, "vue"))
    {
        return Ok(None);
    }
    let Some(decl) = scan::setup_declaration(text, name) else {
        return Ok(None);
    };
    let decl = position(text, decl, enc);
    if !found.iter().any(|r| r.start == decl) {
        return Ok(None);
    }
    let why = format!(
        "`vue` is not installed here (no node_modules/vue from {shown_dir} up), so the Vue servers cannot link a template to its script; `npm install` in the project lets them"
    );
    let uses = match scan::template_uses(text, name) {
        None => return Ok(None),
        Some(scan::Found::Shadowed(at)) => {
            let p = position(text, at, Encoding::Utf8);
            return Err(format!(
                "(the template's uses of `{name}` are missing: {why}, and the template declares `{name}` too (line {}), so they were not read from it)",
                p.line + 1
            ));
        }
        Some(scan::Found::Uses(u)) if u.is_empty() => return Ok(None),
        Some(scan::Found::Uses(u)) => u,
    };
    let ranges: Vec<(Range, bool)> = uses
        .iter()
        .map(|u| {
            let start = position(text, u.start, enc);
            let end = position(text, u.start + name.len(), enc);
            (Range { start, end }, u.shorthand)
        })
        .collect();
    let lead = format!(
        "({} use(s) of `{name}` in the component's template were read from its text, not from the servers: {why})",
        ranges.len()
    );
    Ok(Some(TemplateUses { ranges, lead, why }))
}

impl TemplateUses {
    /// The uses as locations of the document `uri`.
    pub fn locations(&self, uri: &Uri) -> Vec<Location> {
        self.ranges
            .iter()
            .map(|(range, _)| Location {
                uri: uri.clone(),
                range: *range,
            })
            .collect()
    }

    /// The edits renaming `old` to `new` at each use (a shorthand property keeps its key).
    pub fn edits(&self, old: &str, new: &str) -> Vec<TextEdit> {
        self.ranges
            .iter()
            .map(|(range, shorthand)| TextEdit {
                range: *range,
                new_text: match shorthand {
                    true => format!("{old}: {new}"),
                    false => new.to_string(),
                },
            })
            .collect()
    }
}

/// The position of byte `at` of `text` in encoding `enc`.
fn position(text: &str, at: usize, enc: Encoding) -> Position {
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |p| at + p);
    let line = text[line_start..line_end]
        .strip_suffix('\r')
        .unwrap_or(&text[line_start..line_end]);
    Position {
        line: text[..line_start].matches('\n').count() as u32,
        character: to_lsp_character(line, at - line_start, enc),
    }
}

#[cfg(test)]
mod tests;

/// What reading the template of a query's component gave: the line leading the answer,
/// and the uses it added (none when the template was left alone).
pub(crate) struct Added {
    pub lead: Option<String>,
    pub uses: Option<TemplateUses>,
}

/// The template uses of `p`'s symbol, when `p`'s file is a component whose servers cannot
/// link them, given `found` (the servers' locations, across files).
pub(crate) fn for_query(workspace: &Path, p: &Prepared, found: &[Location]) -> Added {
    let here: Vec<Range> = found
        .iter()
        .filter(|l| l.uri == p.doc.uri)
        .map(|l| l.range)
        .collect();
    let name = crate::queries::outside_importers::last_identifier(&p.symbol).unwrap_or("");
    let shown_dir = p
        .path
        .parent()
        .map(|d| tools_core::display_relative(workspace, d))
        .unwrap_or_default();
    match uses(
        &p.path,
        &p.doc.text,
        name,
        &here,
        p.client.encoding,
        &shown_dir,
    ) {
        Ok(None) => Added {
            lead: None,
            uses: None,
        },
        Ok(Some(u)) => Added {
            lead: Some(u.lead.clone()),
            uses: Some(u),
        },
        Err(lead) => Added {
            lead: Some(lead),
            uses: None,
        },
    }
}
