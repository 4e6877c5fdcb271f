//! One adapter resolution for `launch`, `attach` and `adapters`: the root marker and the
//! binary looked up together, and the one error that says which half of the conjunction is
//! missing and where it looked.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tools_core::{Run, ToolError};

use super::{AdapterSpec, MarkerHit, Resolution, Resolver, find_marker, scan_marker};

/// Where to look for an adapter's root marker.
#[derive(Debug, Clone, Copy)]
pub enum MarkerSearch<'a> {
    /// From the program's folder up to the workspace root (`launch`: the program says which
    /// project it belongs to).
    UpFrom {
        /// The program's folder (or the program, when it is a folder).
        start: &'a Path,
        /// The program as the agent sees it, for messages.
        program: &'a str,
    },
    /// The workspace root and the folders up to two levels below (`attach`, `adapters`:
    /// there is no program to start from).
    InWorkspace,
}

/// Both halves of the conjunction as found, usable or not.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The root marker, when one was found.
    pub hit: Option<MarkerHit>,
    /// The project folder: the marker's folder, or the workspace root without one.
    pub project: PathBuf,
    /// Whether the binary resolved, and where.
    pub resolution: Resolution,
}

/// A usable adapter: the marker was found and the binary resolved.
#[derive(Debug, Clone)]
pub struct ResolvedAdapter {
    /// The adapter's program, resolved to a path.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// For debugpy: the interpreter that runs the debuggee.
    pub debuggee_python: Option<PathBuf>,
    /// The project folder (where the marker is).
    pub project_dir: PathBuf,
    /// What the run's trust changes about how the program runs, for the first line of the
    /// start's answer (see [`untrusted_python_line`]).
    pub trust_limit: Option<String>,
}

/// For debugpy in an untrusted run: the line saying the program runs on the Python from
/// `PATH` rather than the project's own virtual environment, which a trusted run would
/// use; `None` when the run is trusted, the adapter is configured, or the project has no
/// such environment.
fn untrusted_python_line(run: &Run, spec: &AdapterSpec, project: &Path) -> Option<String> {
    if run.trusted() || spec.configured || spec.id != super::AdapterId::Debugpy {
        return None;
    }
    let trusted_view =
        tools_core::discovery::ProgramSearch::new(run.root(), true).with_server_cache(None);
    let own = [project, run.root()]
        .into_iter()
        .flat_map(|d| trusted_view.project_pythons(d))
        .next()?;
    Some(tools_core::trust::skipped_line(&format!(
        "the program runs on the Python from PATH, not the project's {}, so packages installed only there are missing",
        own.shown
    )))
}

/// Looks up `spec`'s root marker as `search` says and resolves its binary for the project
/// that marker names.
pub async fn discover(
    run: &Arc<Run>,
    resolver: &Resolver,
    spec: &AdapterSpec,
    search: MarkerSearch<'_>,
) -> Discovery {
    let root = run.root();
    let hit = match search {
        MarkerSearch::UpFrom { start, .. } => find_marker(start, &spec.markers, root),
        MarkerSearch::InWorkspace => scan_marker(root, &spec.markers),
    };
    let project = hit
        .as_ref()
        .map(|h| h.dir.clone())
        .unwrap_or_else(|| root.to_path_buf());
    let resolution = resolver.resolve(run, spec, &project, root).await;
    Discovery {
        hit,
        project,
        resolution,
    }
}

/// The adapter `launch` or `attach` starts, or a `not_available` error naming the missing
/// half (marker, binary or both) and where it was looked for.
pub async fn resolve_adapter(
    run: &Arc<Run>,
    resolver: &Resolver,
    spec: &AdapterSpec,
    search: MarkerSearch<'_>,
) -> Result<ResolvedAdapter, ToolError> {
    let found = discover(run, resolver, spec, search).await;
    let ws = run.workspace();
    let adapter = spec.id;
    let for_program = match search {
        MarkerSearch::UpFrom { program, .. } => format!(" for {program}"),
        MarkerSearch::InWorkspace => String::new(),
    };
    match (found.hit, found.resolution) {
        (
            Some(_),
            Resolution::Found {
                program,
                args,
                debuggee_python,
                ..
            },
        ) => Ok(ResolvedAdapter {
            trust_limit: untrusted_python_line(run, spec, &found.project),
            program,
            args,
            debuggee_python,
            project_dir: found.project,
        }),
        (Some(hit), Resolution::Missing { looked }) => Err(ToolError::not_available(format!(
            "the {adapter} adapter cannot start{for_program}: missing binary — {looked} (root marker {} found at {})",
            hit.marker,
            ws.display(&hit.dir)
        ))),
        (None, resolution) => {
            let bin = match resolution {
                Resolution::Found { program, .. } => {
                    format!("the binary resolved at {}", program.display())
                }
                Resolution::Missing { looked } => format!("and missing binary — {looked}"),
            };
            let searched = match search {
                MarkerSearch::UpFrom { start, .. } => format!(
                    "no folder from {} up to the workspace root",
                    ws.display(start)
                ),
                MarkerSearch::InWorkspace => {
                    "no folder of the workspace (its root and two levels below)".to_string()
                }
            };
            Err(ToolError::not_available(format!(
                "the {adapter} adapter cannot start{for_program}: missing root marker — {searched} holds one of {} \
                 ({bin}); create one of those files at the project root, or set \
                 [debug.adapters.{adapter}].markers in agent-tools.toml",
                spec.markers.join(", ")
            )))
        }
    }
}
