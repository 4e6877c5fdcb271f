//! Libraries some servers load at run time, found where they were installed beside the
//! servers rather than in the project: TypeScript (tsserver, the Vue and Astro servers),
//! eslint's library (the eslint server) and Angular's language service (ngserver).

use std::path::PathBuf;

use super::ServerSpec;

/// `name` on `PATH` or in the server cache, links resolved.
fn real(name: &str) -> Option<PathBuf> {
    tools_core::process::which(name)
        .or_else(|| tools_core::discovery::find_in_server_cache(name))
        .and_then(|p| p.canonicalize().ok())
}

/// The `tsserver.js` of a TypeScript installed outside any project: next to `tsc` on `PATH`
/// or in the server cache, or beside `typescript-language-server` in its `node_modules`.
pub(super) fn global_tsserver() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    // `…/typescript/bin/tsc` → `…/typescript/lib/tsserver.js`
    if let Some(tsc) = real("tsc")
        && let Some(pkg) = tsc.parent().and_then(|b| b.parent())
    {
        candidates.push(pkg.join("lib/tsserver.js"));
    }
    // `…/node_modules/typescript-language-server/lib/cli.mjs` → its own or a sibling typescript
    for server in [
        "typescript-language-server",
        "vue-language-server",
        "astro-ls",
    ] {
        if let Some(cli) = real(server)
            && let Some(pkg) = cli.parent().and_then(|l| l.parent())
        {
            candidates.push(pkg.join("node_modules/typescript/lib/tsserver.js"));
            if let Some(modules) = pkg.parent() {
                candidates.push(modules.join("typescript/lib/tsserver.js"));
            }
        }
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// The eslint server with no `nodePath` of its own is pointed at the `node_modules` it was
/// installed in when eslint's library is there too: with no eslint in the project, it would
/// otherwise report nothing at all.
pub(super) fn fill_eslint_node_path(spec: &mut ServerSpec) {
    if !spec.settings["nodePath"].is_null() {
        return;
    }
    let Some(program) = spec.candidates.first().and_then(|c| real(c.program())) else {
        return;
    };
    // `…/node_modules/vscode-langservers-extracted/bin/vscode-eslint-language-server`
    let modules = program
        .ancestors()
        .find(|d| d.file_name().is_some_and(|n| n == "node_modules"));
    if let Some(modules) = modules
        && modules.join("eslint/package.json").is_file()
        && spec.settings.is_object()
    {
        spec.settings["nodePath"] = serde_json::json!(modules.display().to_string());
    }
}

/// Angular's server with no probe locations of its own is pointed at the folder it was
/// installed in, where npm put the TypeScript and `@angular/language-service` it loads
/// (`--tsProbeLocations`, `--ngProbeLocations`: folders the packages are resolved from).
pub(super) fn fill_angular_probes(spec: &mut ServerSpec) {
    let Some(candidate) = spec.candidates.first_mut() else {
        return;
    };
    if candidate.program() != "ngserver"
        || candidate
            .command
            .iter()
            .any(|a| a == "--tsProbeLocations" || a == "--ngProbeLocations")
    {
        return;
    }
    // `…/node_modules/@angular/language-server/bin/ngserver` → `…/@angular/language-server`
    let Some(pkg) = real("ngserver").and_then(|p| p.parent()?.parent().map(PathBuf::from)) else {
        return;
    };
    let dir = pkg.display().to_string();
    for flag in ["--tsProbeLocations", "--ngProbeLocations"] {
        candidate.command.push(flag.to_string());
        candidate.command.push(dir.clone());
    }
}
