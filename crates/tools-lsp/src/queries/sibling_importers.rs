//! Loading the TypeScript projects beside a server's root that import the symbol asked
//! about, before its references or a rename are asked (see `servers::sibling_projects`).
//!
//! The files whose importers count are the one asked about and the one declaring the
//! symbol (its definition, asked of the server): asked at a use in `checkout/cart.ts`, the
//! projects that import `pricing/rates.ts`, where it is declared, hold uses as well.

use std::path::PathBuf;

use lsp_types::request::GotoDefinition;

use crate::client::uri_to_path;
use crate::queries::locate::goto;
use crate::queries::query::Prepared;
use crate::servers::sibling_projects::{SiblingsLoaded, load_sibling_importers};
use crate::servers::supervisor::ServerSupervisor;

/// Opens one file of each project beside `p`'s server's root that imports `p`'s file or
/// the file declaring its symbol, and waits for the server to load them (bounded). Nothing
/// for servers other than tsserver.
pub(crate) async fn load_for_symbol(sup: &ServerSupervisor, p: &Prepared) -> SiblingsLoaded {
    let c = &p.client;
    if c.language != "typescript" {
        return SiblingsLoaded::default();
    }
    let workspace = sup.workspace();
    let mut targets: Vec<PathBuf> = vec![p.path.clone()];
    // A server that cannot answer leaves the declaring file out: the file asked about is
    // still searched.
    let declared = goto::<GotoDefinition>(p, workspace)
        .await
        .unwrap_or_default();
    for file in declared.iter().filter_map(|l| uri_to_path(&l.uri)) {
        if file.starts_with(workspace) && !targets.contains(&file) {
            targets.push(file);
        }
    }
    load_sibling_importers(c, workspace, &targets, &sup.extensions_of(&c.language)).await
}
