//! A prepared query handed to the server that stands in for the file's own when that one
//! does not offer the request ([`crate::servers::stand_in`]): the same file synced into the
//! stand-in and the same place in its encoding. The answer then names the server that gave
//! it, since it is not the one the file's other answers come from.

use lsp_types::ServerCapabilities;

use crate::queries::co_servers::prepared_for;
use crate::queries::query::Prepared;
use crate::servers::supervisor::ServerSupervisor;

/// `p` as the stand-in for its server sees it, when that stand-in offers what `offers`
/// asks for: `Ok(None)` when the table names no stand-in, `Err` with why one named cannot
/// answer (not installed, did not start, does not offer it either).
pub(crate) async fn prepared(
    sup: &ServerSupervisor,
    p: &Prepared,
    offers: fn(&ServerCapabilities) -> bool,
) -> Result<Option<Prepared>, String> {
    let Some(loc) = crate::servers::stand_in::locate(sup, &p.client.language, &p.path)? else {
        return Ok(None);
    };
    let program = loc.candidate.program().to_string();
    let client = sup
        .client_at(&loc)
        .await
        .map_err(|e| format!("{program} would stand in but did not start: {e}"))?;
    if !offers(&client.caps) {
        return Err(format!("{} does not offer it either", client.server));
    }
    prepared_for(sup, p, client).await.map(Some).map_err(|e| {
        format!(
            "{program} would stand in but could not open {}: {e}",
            tools_core::display_relative(sup.workspace(), &p.path)
        )
    })
}
