//! The server that stands in for a file's own when that one does not offer a request:
//! PHPantom renames PHP where intelephense, without a licence key, announces no rename.
//! The table names the stand-in ([`ServerSpec::stands_in`]); this finds where it would run
//! for a file, by the same conjunction rule as a primary server (a root marker above the
//! file, or the workspace for an entry that serves anywhere, and its program resolved).

use std::path::Path;

use crate::servers::discover::{self, Resolution};
use crate::servers::supervisor::{Located, ServerSupervisor};
use crate::servers::table::ServerSpec;

/// Where a stand-in for `language`'s server would run for `file`: `Ok(None)` when the table
/// names none (or the run left it out), `Err` with why when one is named but cannot run
/// here (its program missing: the line says how to install it).
pub(crate) fn locate(
    sup: &ServerSupervisor,
    language: &str,
    file: &Path,
) -> Result<Option<Located>, String> {
    let ws = sup.workspace();
    let Some(spec) = sup
        .table()
        .iter()
        .find(|s| s.stands_in.as_deref() == Some(language) && s.matches_file(file, ws))
    else {
        return Ok(None);
    };
    let Some(root) = crate::servers::roots::server_root(&spec.language, &spec.markers, file, ws)
        .or_else(|| spec.workspace_fallback.then(|| ws.to_path_buf()))
    else {
        return Err(format!(
            "{} could stand in, but no folder from the file up to the workspace root holds one of {}",
            program_of(spec),
            spec.markers.join(", ")
        ));
    };
    match discover::resolve(&spec.candidates, &root, &sup.config().program_search(ws)) {
        Resolution::Found { candidate, path } => Ok(Some(Located {
            spec: spec.clone(),
            root,
            candidate,
            program: path,
        })),
        Resolution::Missing { .. } => Err(format!(
            "{} would stand in but is not installed{}",
            program_of(spec),
            crate::servers::acquire::install_hint(spec)
                .map(|h| format!(": {h}"))
                .unwrap_or_default()
        )),
    }
}

fn program_of(spec: &ServerSpec) -> &str {
    spec.candidates.first().map(|c| c.program()).unwrap_or("")
}
