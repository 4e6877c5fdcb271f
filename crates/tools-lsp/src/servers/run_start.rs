//! Servers that start when the run starts: the workspace's own code languages — a root
//! marker at the workspace root and files of the language, not data, configuration or
//! markup formats (JSON, YAML, TOML, Markdown, Dockerfile, CMake, CSS, HTML, …) — side by
//! side, in the background, so the project loads while the agent reads and thinks, and the
//! first query finds the server up or loading rather than starting it. A start still under
//! way when the run closes is shut down as it ends (see `ServerSupervisor::client_at`).
//!
//! Only the workspace's main languages: one whose files are a small minority beside the
//! leading language's and lie mostly under asset folders (`static/`, `vendor/`, …) — the
//! admin's JavaScript in a Django checkout — waits for a question or a write about one of
//! its files, as every other server does (its server can cost more memory than the main
//! one, for files no question may ever be about).
//!
//! Bounded: at most [`MAX_STARTED_AT_RUN_START`] languages, most files first; never a
//! companion (they start with the first write that needs them) nor a stand-in (it starts
//! with the first request the file's own server does not offer), never an install, only in a
//! run the user trusts — an untrusted checkout has its servers started by the first call
//! that needs one, never unasked — and never on a pool shared by sessions (`serve`), whose
//! caps a start nobody asked for must not spend. `[lsp] start_at_run_start = false` turns
//! it off.

use std::sync::Arc;

use crate::servers::discover::{self, Resolution};
use crate::servers::supervisor::{Located, ServerSupervisor};

/// Languages whose servers start with the run, at most.
pub const MAX_STARTED_AT_RUN_START: usize = 3;

/// Configuration, infrastructure and document languages: a project has their files beside
/// its code (a `.dockerignore` and a `Dockerfile`, a `CMakeLists.txt`, a `docs/conf.py`),
/// and their servers are started by a call about one of their files, never with the run.
const NOT_AT_RUN_START: &[&str] = &[
    "yaml",
    "toml",
    "json",
    "markdown",
    "dockerfile",
    "sql",
    "terraform",
    "nix",
    "cmake",
    "latex",
    "nginx",
    "systemd",
    "rst",
    "css",
    "sass",
    "html",
];

/// A language's files are "a small minority" beside the leading language's at most one in
/// this many.
const MINORITY: usize = 10;

/// Whether a language with `files` files, `under_assets` of them in asset folders, is
/// incidental to a workspace whose leading code language has `leading` files: a small
/// minority (see [`MINORITY`]), three in four of them or more under asset folders. "Mostly",
/// not "only": Django's checkout has 98 of its 112 JavaScript files under `static/`, the rest
/// its tests of them.
pub(crate) fn incidental(files: usize, under_assets: usize, leading: usize) -> bool {
    files * MINORITY <= leading && under_assets * 4 >= files * 3
}

impl ServerSupervisor {
    /// The servers to start with the run: per language with a root marker at the
    /// workspace root (not `.git`, which every checkout has), files of its own in the
    /// workspace, not [`incidental`] to it, and a binary that resolves, most files first,
    /// at most [`MAX_STARTED_AT_RUN_START`]. Companions, stand-ins and the servers of data
    /// and markup formats are never among them.
    pub(crate) fn run_start_servers(&self) -> Vec<Located> {
        let workspace = self.workspace();
        let scan = discover::scan_workspace(self.table(), workspace);
        let search = self.config().program_search(workspace);
        let code = |spec: &&crate::servers::table::ServerSpec| {
            !spec.companion
                && spec.stands_in.is_none()
                && !spec.offers_no_workspace_symbols()
                && !NOT_AT_RUN_START.contains(&spec.language.as_str())
        };
        let count = |language: &str| scan.files.get(language).copied().unwrap_or(0);
        let leading = self
            .table()
            .iter()
            .filter(code)
            .map(|spec| count(&spec.language))
            .max()
            .unwrap_or(0);
        let mut wanted: Vec<(usize, Located)> = self
            .table()
            .iter()
            .filter(code)
            .filter(|spec| {
                let assets = scan.asset_files.get(&spec.language).copied().unwrap_or(0);
                !incidental(count(&spec.language), assets, leading)
            })
            .filter(|spec| {
                spec.markers
                    .iter()
                    .any(|m| m != ".git" && !m.contains('*') && workspace.join(m).is_file())
            })
            .filter_map(|spec| {
                let files = count(&spec.language);
                let Resolution::Found { candidate, path } =
                    discover::resolve(&spec.candidates, workspace, &search)
                else {
                    return None;
                };
                (files > 0).then(|| {
                    (
                        files,
                        Located {
                            spec: spec.clone(),
                            root: workspace.to_path_buf(),
                            candidate,
                            program: path,
                        },
                    )
                })
            })
            .collect();
        // Most files first; the table's order between equals.
        wanted.sort_by_key(|(files, _)| std::cmp::Reverse(*files));
        wanted
            .into_iter()
            .take(MAX_STARTED_AT_RUN_START)
            .map(|(_, loc)| loc)
            .collect()
    }

    /// Starts the servers `run_start_servers` picks side by side in the background, when
    /// the run is trusted, its servers are its own (not a shared pool's) and
    /// `start_at_run_start` is on. A start that fails is left for
    /// the first query to report (it tries again and says why).
    pub fn start_at_run_start(self: &Arc<Self>) {
        // A run on a shared pool starts none: its servers are shared by the sessions and
        // bounded by the pool's caps, which a start nobody asked for must not spend.
        if !self.config().start_at_run_start || !self.config().trusted || self.pool().is_some() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let sup = Arc::clone(self);
        runtime.spawn(async move {
            // The scan walks the workspace: off the runtime's threads.
            let finder = Arc::clone(&sup);
            let Ok(servers) = tokio::task::spawn_blocking(move || finder.run_start_servers()).await
            else {
                return;
            };
            let starts = servers.iter().map(|loc| {
                let sup = Arc::clone(&sup);
                async move {
                    match sup.client_at_run_start(loc).await {
                        Ok(c) => tracing::info!(
                            "{} started with the run for {} (pid {})",
                            c.server,
                            loc.spec.language,
                            c.pid()
                        ),
                        Err(e) => tracing::info!(
                            "the {} server did not start with the run: {e}",
                            loc.spec.language
                        ),
                    }
                }
            });
            futures::future::join_all(starts).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::incidental;

    #[test]
    fn a_small_minority_mostly_under_asset_folders_is_incidental() {
        // Django: 2,818 Python files, 112 JavaScript files, 98 of them under `static/`.
        assert!(incidental(112, 98, 2818));
        // The same scripts outside asset folders are the workspace's own code.
        assert!(!incidental(112, 14, 2818));
        // A language with a tenth of the leading one's files or more is a main language.
        assert!(!incidental(300, 300, 2818));
        // The leading language itself, wherever its files are.
        assert!(!incidental(2818, 2818, 2818));
    }
}
