//! Renaming the importers a narrowed pyright program leaves out: the `from MODULE import
//! NAME` statements (and their uses) in files outside `include` whose module the rename
//! edits (see `queries::outside_importers`). Without this, renaming a re-exported name in
//! a src-layout project leaves its tests importing a name that no longer exists.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use lsp_types::{TextEdit, WorkspaceEdit};
use tools_core::Run;

use crate::client::{LspClient, uri_to_path};
use crate::queries::outside_importers;
use crate::rename::references::{add_edit, edits_by_uri};

/// What renaming the importers outside the program added to the edit.
#[derive(Debug, Default)]
pub(crate) struct OutsideRenamed {
    /// `file:line` of each place renamed.
    pub renamed: Vec<String>,
    /// `file:line` of each import that keeps the old name as an alias of the new one (the
    /// server gave no uses of it to rename).
    pub aliased: Vec<String>,
}

/// Adds to `edit` the renames of `old_name` to `new_name` in the importers outside
/// `client`'s program of the files `edit` changes.
pub(crate) async fn rename_outside_importers(
    run: &Run,
    client: &LspClient,
    old_name: &str,
    new_name: &str,
    edit: &mut WorkspaceEdit,
) -> OutsideRenamed {
    let mut out = OutsideRenamed::default();
    let Some(edited) = edits_by_uri(edit) else {
        return out;
    };
    let modules: Vec<PathBuf> = edited
        .keys()
        .filter_map(|u| u.parse().ok())
        .filter_map(|u| uri_to_path(&u))
        .collect();
    let Some(extensions) = crate::servers::discover::spec_for_language(&client.language, run)
    else {
        return out;
    };
    let importers = outside_importers::find(client, &extensions, old_name, &modules).await;
    let mut places: BTreeMap<(String, u32), bool> = BTreeMap::new();
    // Two imports of the name in one file highlight the same uses: each place is edited once.
    let mut done: HashSet<(String, u32, u32)> = HashSet::new();
    for i in importers {
        let file = run.workspace().display(&i.path);
        if edited.contains_key(i.uri.as_str()) {
            // The server's own edit reached this file after all.
            continue;
        }
        let (ranges, text, kept) = if i.aliased {
            (vec![i.import], new_name.to_string(), false)
        } else if !i.uses.is_empty() {
            (i.uses.clone(), new_name.to_string(), false)
        } else {
            (vec![i.import], format!("{new_name} as {old_name}"), true)
        };
        for range in ranges {
            if !done.insert((
                i.uri.as_str().to_string(),
                range.start.line,
                range.start.character,
            )) {
                continue;
            }
            places.insert((file.clone(), range.start.line + 1), kept);
            add_edit(
                edit,
                i.uri.clone(),
                TextEdit {
                    range,
                    new_text: text.clone(),
                },
            );
        }
    }
    for ((file, line), kept) in places {
        let place = format!("{file}:{line}");
        if kept {
            out.aliased.push(place);
        } else {
            out.renamed.push(place);
        }
    }
    out
}
