//! The three tools: `ast_grep` (read), `ast_edit` and `resolve` (write).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::text::cap_list;
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, Workspace, parse_args};

use crate::AstShared;
use crate::lang::{Lang, unknown_language_message};
use crate::pattern::{CompiledPattern, compile};
use crate::render::{CallFacts, FileEdit, FileHits, Window, edit_answer, grep_answer};
use crate::rewrite::{Rewrite, RewriteStop};
use crate::search::{Scan, find_matches, scan};
use crate::walk::{Walked, languages_present};
use tools_core::content_hash;

/// Default `max_results`.
pub const DEFAULT_MAX_RESULTS: usize = 50;
/// Highest `max_results` accepted.
pub const MAX_MAX_RESULTS: usize = 1000;

fn language_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": Lang::ids(),
        "description": "bundled grammar id; inferred from the extension when `path` is a file, \
                        or from the files when the folder holds only one language"
    })
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    /// A code fragment with metavariables: `$NAME` one node, `$$$NAME` a sequence, `$_` any
    /// node without capturing. A name repeated in the pattern must match the same code.
    pattern: String,
    /// File or folder to search, relative to the workspace root; default the whole workspace.
    #[serde(default)]
    path: Option<String>,
    /// Language id.
    #[serde(default)]
    #[schemars(schema_with = "language_schema")]
    language: Option<String>,
    /// Matches covered (default 50, at most 1000); the total is always counted. The text
    /// shows as many of them as fit its size budget (about 4 KB) and says which `offset`
    /// comes next.
    #[serde(default)]
    max_results: Option<usize>,
    /// Matches to skip (in path order, then position), to page through a long result.
    #[serde(default)]
    offset: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// What to match (same syntax as `ast_grep`).
    pattern: String,
    /// What to put there; `$NAME` / `$$$NAME` are replaced by what the pattern captured.
    rewrite: String,
    /// Scope: file or folder; default the whole workspace.
    #[serde(default)]
    path: Option<String>,
    /// Language id.
    #[serde(default)]
    #[schemars(schema_with = "language_schema")]
    language: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Action {
    Accept,
    Discard,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResolveArgs {
    /// The `edit_id` from an `ast_edit` result (e.g. `edit_1`), or the `change_id` of a
    /// previewed write, edit, patch or rename (e.g. `change_2`).
    #[serde(alias = "change_id")]
    edit_id: String,
    /// `accept` writes the staged change (all files or none); `discard` drops it.
    action: Action,
}

/// Everything a search or edit needs, decided before the heavy work.
struct Prepared {
    scope: PathBuf,
    source: String,
    pattern: CompiledPattern,
    walked: Walked,
}

fn prepare(
    workspace: &Workspace,
    shared: &AstShared,
    pattern: &str,
    path: Option<&str>,
    language: Option<&str>,
) -> Result<Prepared, ToolError> {
    let scope = match path {
        None | Some("") | Some(".") => workspace.root().to_path_buf(),
        Some(p) => workspace.resolve(p)?,
    };
    if !scope.exists() {
        return Err(ToolError::invalid(
            "path",
            format!(
                "`{}` does not exist in the workspace",
                path.unwrap_or_default()
            ),
        ));
    }
    let max_bytes = shared.config.max_file_bytes;
    let lang = match language {
        Some(id) => {
            Lang::from_id(id).ok_or_else(|| ToolError::invalid("language", unknown_language_message(id)))?
        }
        None if scope.is_file() => Lang::from_path(&scope).ok_or_else(|| {
            ToolError::invalid(
                "language",
                format!(
                    "cannot tell the language of `{}` from its extension; pass `language` (one of: {})",
                    workspace.display(&scope),
                    Lang::ids().join(", ")
                ),
            )
        })?,
        None => {
            let present = languages_present(&scope, max_bytes);
            match present.as_slice() {
                [] => {
                    return Err(ToolError::invalid(
                        "path",
                        format!(
                            "`{}` holds no file of a supported language ({})",
                            workspace.display(&scope),
                            Lang::ids().join(", ")
                        ),
                    ));
                }
                [(only, _)] => *only,
                many => {
                    let listed: Vec<String> = many
                        .iter()
                        .take(10)
                        .map(|(l, n)| format!("{l} ({n} files)"))
                        .collect();
                    return Err(ToolError::invalid(
                        "language",
                        format!(
                            "`{}` holds several languages: {}; pass `language` to say which to search",
                            workspace.display(&scope),
                            listed.join(", ")
                        ),
                    ));
                }
            }
        }
    };
    let source_text = pattern;
    let pattern = compile(pattern, lang)?;
    let walked = shared.walks.walk(&scope, Some(lang), max_bytes);
    Ok(Prepared {
        scope,
        source: source_text.to_string(),
        pattern,
        walked,
    })
}

/// Runs a tool's file work (walks, parses, writes: all blocking) on a blocking thread, with
/// the run's workspace and the call's cancellation.
async fn off_the_runtime<F>(ctx: &CallCtx, what: &str, work: F) -> Result<ToolOutput, ToolError>
where
    F: FnOnce(&Workspace, &(dyn Fn() -> bool + Sync)) -> Result<ToolOutput, ToolError>
        + Send
        + 'static,
{
    let run = ctx.run.clone();
    let cancel = ctx.cancel.clone();
    tokio::task::spawn_blocking(move || work(run.workspace(), &|| cancel.is_cancelled()))
        .await
        .map_err(|e| ToolError::internal(format!("the {what} task failed: {e}")))?
}

/// `ast_grep`: structural search.
pub struct AstGrepTool {
    pub(crate) shared: Arc<AstShared>,
}

#[tools_core::async_trait]
impl Tool for AstGrepTool {
    fn name(&self) -> &str {
        "ast_grep"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        format!(
            "Find code by shape instead of text. The pattern is code of the chosen language with metavariables: \
             `$NAME` matches one node, `$$$NAME` a sequence of sibling nodes, `$_` any node without capturing; \
             a name used twice must match the same code both times (`if ($X != null) $X.dispose()`). \
             Snippets that are not a whole program (a Dart statement, a method) are fine. \
             Results are `path:line:col` with the matched code and captures, in path order, capped by \
             max_results (default {DEFAULT_MAX_RESULTS}); the text shows as many as fit about 4 KB (first line of \
             each match, captures shortened) and names the `offset` of the next ones. Languages: {}.",
            Lang::ids().join(", ")
        )
    }
    fn input_schema(&self) -> Value {
        tools_core::schema_for::<GrepArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let args: GrepArgs = parse_args(args)?;
        let max_results = match args.max_results {
            None => DEFAULT_MAX_RESULTS,
            Some(0) => {
                return Err(ToolError::invalid("max_results", "must be at least 1"));
            }
            Some(n) => n.min(MAX_MAX_RESULTS),
        };
        let window = Window {
            offset: args.offset.unwrap_or(0),
            max_results,
        };
        let shared = self.shared.clone();
        off_the_runtime(ctx, "search", move |ws, cancelled| {
            let (path, language) = (args.path.as_deref(), args.language.as_deref());
            let prep = prepare(ws, &shared, &args.pattern, path, language)?;
            let pattern = &prep.pattern;
            let root_kind = pattern.root_kind();
            let result = scan(&prep.walked, pattern, &shared.cache, cancelled, &|tree| {
                let matches = find_matches(pattern, tree);
                if !matches.is_empty() {
                    return Some(FileHits {
                        matches,
                        same_kind_nodes: 0,
                    });
                }
                // For the hint of a search that finds nothing: does the kind occur at all?
                let same_kind_nodes = root_kind.map_or(0, |k| {
                    tree.root().dfs().filter(|n| n.kind_id() == k).count()
                });
                (same_kind_nodes > 0).then_some(FileHits {
                    matches,
                    same_kind_nodes,
                })
            })?;
            let facts = prep.facts(ws, shared.config.grep_answer_bytes);
            Ok(grep_answer(&facts, &shared, &result, window))
        })
        .await
    }
}

impl Prepared {
    fn facts<'a>(&'a self, ws: &'a Workspace, budget: usize) -> CallFacts<'a> {
        CallFacts {
            ws,
            scope: &self.scope,
            source: &self.source,
            pattern: &self.pattern,
            walked: &self.walked,
            budget,
        }
    }
}

/// The edit scan's results once no file stopped it; a stopped file makes the whole edit an
/// error (nothing is staged).
fn first_stop(
    ws: &Workspace,
    scan: Scan<Result<FileEdit, RewriteStop>>,
) -> Result<Scan<FileEdit>, ToolError> {
    let mut per_file = Vec::with_capacity(scan.per_file.len());
    for (path, r) in scan.per_file {
        match r {
            Ok(edit) => per_file.push((path, edit)),
            Err(RewriteStop::Cancelled) => {
                return Err(ToolError::timed_out(
                    "the rewrite was cancelled before it finished; nothing was staged",
                ));
            }
            Err(RewriteStop::TooLarge { limit }) => {
                return Err(ToolError::invalid(
                    "rewrite",
                    format!(
                        "the rewrite would make `{}` larger than {limit} bytes (the `max_file_bytes` limit); \
                         nothing was staged. Check the template, or narrow `path`",
                        ws.display(&path)
                    ),
                ));
            }
        }
    }
    Ok(Scan {
        per_file,
        skipped: scan.skipped,
        searched: scan.searched,
        prefiltered: scan.prefiltered,
        parsed: scan.parsed,
        cached_trees: scan.cached_trees,
    })
}

/// `ast_edit`: structural rewrite, staged.
pub struct AstEditTool {
    pub(crate) shared: Arc<AstShared>,
}

#[tools_core::async_trait]
impl Tool for AstEditTool {
    fn name(&self) -> &str {
        "ast_edit"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Structural rewrite, staged: the same matching as ast_grep plus a `rewrite` template into which the \
         captured metavariables are substituted (a captured expression gets parentheses where precedence \
         would change its meaning; multi-line captures keep their indentation). Nothing is written: the \
         result is a diff preview (the files' diffs that fit about 4 KB; every replacement is staged all the \
         same) with an `edit_id`; call `resolve` with it to accept (all files or none) or discard. A rewrite \
         naming a metavariable the pattern does not bind is an error, and so is one that would make a file \
         larger than `max_file_bytes`."
            .to_string()
    }
    fn input_schema(&self) -> Value {
        tools_core::schema_for::<EditArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let args: EditArgs = parse_args(args)?;
        let shared = self.shared.clone();
        let out = off_the_runtime(ctx, "edit", move |ws, cancelled| {
            let (path, language) = (args.path.as_deref(), args.language.as_deref());
            let prep = prepare(ws, &shared, &args.pattern, path, language)?;
            let rewrite = Rewrite::new(&args.rewrite, &prep.pattern)?;
            let pattern = &prep.pattern;
            let max_bytes = usize::try_from(shared.config.max_file_bytes).unwrap_or(usize::MAX);
            let result = scan(&prep.walked, pattern, &shared.cache, cancelled, &|tree| {
                let applied = rewrite.apply(pattern, tree, cancelled, max_bytes);
                match applied {
                    Ok(None) => None,
                    Ok(Some((new, replacements))) => Some(Ok(FileEdit {
                        hash: content_hash(tree.text().as_bytes()),
                        old: tree.text().to_string(),
                        new,
                        replacements,
                    })),
                    Err(stop) => Some(Err(stop)),
                }
            })?;
            let result = first_stop(ws, result)?;
            let facts = prep.facts(ws, shared.config.edit_answer_bytes);
            edit_answer(&facts, &shared, result, &args.rewrite)
        })
        .await?;
        // The proposal carries what the change would do to the diagnostics.
        let staged = out
            .structured
            .as_ref()
            .and_then(|s| s.get("edit_id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let Some(id) = staged else {
            return Ok(out);
        };
        let proposed = self.shared.edits.proposed(&id);
        let report = ctx.preview_diagnostics(&proposed).await;
        if report.sections.is_empty() && report.not_covered.is_empty() {
            return Ok(out);
        }
        Ok(report.lead(out))
    }
}

/// `resolve`: accept or discard a staged edit.
pub struct ResolveTool {
    pub(crate) shared: Arc<AstShared>,
}

#[tools_core::async_trait]
impl Tool for ResolveTool {
    fn name(&self) -> &str {
        "resolve"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Accept or discard a staged change: an ast_edit proposal (`edit_id`), or a write, edit, apply_patch \
         or lsp_rename called with `preview: true` (its `change_id`, passed as `edit_id` or `change_id`). `accept` first checks every file against the content \
         recorded at staging time: any mismatch rejects the whole change and writes nothing. Otherwise every \
         file is written atomically; a failure part-way restores the files already written."
            .to_string()
    }
    fn input_schema(&self) -> Value {
        tools_core::schema_for::<ResolveArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let args: ResolveArgs = parse_args(args)?;
        let shared = self.shared.clone();
        let locks = tools_core::PathLocks::for_run(&ctx.run);
        off_the_runtime(ctx, "resolve", move |ws, _cancelled| match args.action {
            Action::Discard => {
                let discarded = shared.edits.discard(&args.edit_id)?;
                Ok(ToolOutput::text(format!(
                    "discarded {}: {} file(s) left as they are",
                    discarded.id,
                    discarded.files.len()
                ))
                .with_structured(
                    json!({"edit_id": discarded.id, "action": "discard", "files": discarded.files.len()}),
                ))
            }
            Action::Accept => {
                let done =
                    shared
                        .edits
                        .accept(&args.edit_id, ws, &locks, shared.faults.as_ref())?;
                let listed = cap_list(done.written.iter(), 50);
                let mut text = if done.origin == "ast_edit" {
                    format!(
                        "accepted {}: {} replacement(s) written to {} file(s)",
                        args.edit_id,
                        done.replacements,
                        done.written.len()
                    )
                } else {
                    format!(
                        "accepted {} (staged by {}): {} file(s) written",
                        args.edit_id,
                        done.origin,
                        done.written.len()
                    )
                };
                for p in &listed.shown {
                    text.push_str(&format!("\n  {}", ws.display(p)));
                }
                if let Some(more) = listed.more_line() {
                    text.push_str(&format!("\n  {more}"));
                }
                let files: Vec<String> = done.written.iter().map(|p| ws.display(p)).collect();
                // Deleted files are not reported as touched (as apply_patch does).
                let touched: Vec<PathBuf> = done
                    .written
                    .iter()
                    .filter(|p| !done.deleted.contains(p))
                    .cloned()
                    .collect();
                Ok(ToolOutput::text(text)
                    .with_structured(json!({
                        "edit_id": args.edit_id, "action": "accept", "staged_by": done.origin,
                        "replacements": done.replacements, "files": files,
                    }))
                    .with_touched(touched))
            }
        })
        .await
    }
}
