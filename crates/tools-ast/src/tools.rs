//! The three tools: `ast_grep` (read), `ast_edit` and `resolve` (write).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::text::{cap_list, cut_text};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, Workspace, parse_args};

use crate::AstShared;
use crate::lang::{Lang, unknown_language_message};
use crate::pattern::{CompiledPattern, compile};
use crate::rewrite::Rewrite;
use crate::search::{MatchRecord, Scan, find_matches, scan};
use crate::staged::{StagedFile, content_hash};
use crate::walk::{SkipReason, Walked, languages_present};

/// Default `max_results`.
pub const DEFAULT_MAX_RESULTS: usize = 50;
/// Highest `max_results` accepted.
pub const MAX_MAX_RESULTS: usize = 1000;
/// Lines of matched code shown per match in the text result.
const SHOWN_MATCH_LINES: usize = 3;
/// Characters per shown line.
const SHOWN_LINE_CHARS: usize = 200;
/// Skipped files listed by path.
const SHOWN_SKIPPED: usize = 20;

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
    /// Matches shown (default 50, at most 1000); the total is always counted.
    #[serde(default)]
    max_results: Option<usize>,
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
    /// The `edit_id` from an `ast_edit` result, e.g. `edit_1`.
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

fn skipped_all<T>(walked: &Walked, scan: &Scan<T>) -> Vec<(PathBuf, SkipReason)> {
    let mut skipped: Vec<_> = walked
        .skipped
        .iter()
        .cloned()
        .chain(scan.skipped.iter().cloned())
        .collect();
    skipped.sort();
    skipped
}

fn skipped_text(ws: &Workspace, skipped: &[(PathBuf, SkipReason)]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let mut counts: BTreeMap<SkipReason, usize> = BTreeMap::new();
    for (_, r) in skipped {
        *counts.entry(*r).or_default() += 1;
    }
    let summary: Vec<String> = counts
        .iter()
        .map(|(r, n)| format!("{n} {}", r.as_str()))
        .collect();
    let listed = cap_list(skipped.iter(), SHOWN_SKIPPED);
    let mut s = format!("skipped {} file(s): {}", skipped.len(), summary.join(", "));
    for (p, r) in &listed.shown {
        s.push_str(&format!("\n  {} ({})", ws.display(p), r.as_str()));
    }
    if let Some(more) = listed.more_line() {
        s.push_str(&format!("\n  {more}"));
    }
    Some(s)
}

fn skipped_json(ws: &Workspace, skipped: &[(PathBuf, SkipReason)]) -> Value {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (_, r) in skipped {
        *counts.entry(r.as_str()).or_default() += 1;
    }
    let listed = cap_list(skipped.iter(), 100);
    json!({
        "total": skipped.len(),
        "by_reason": counts,
        "files": listed.shown.iter().map(|(p, r)| json!({"path": ws.display(p), "reason": r})).collect::<Vec<_>>(),
        "more_not_shown": listed.more(),
    })
}

fn context_note(p: &CompiledPattern) -> String {
    match &p.context {
        Some(c) => format!(" (pattern read inside `{c}`)"),
        None => String::new(),
    }
}

fn shown_code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(SHOWN_MATCH_LINES)
        .map(|l| cut_text(l, SHOWN_LINE_CHARS))
        .collect();
    if lines.len() > SHOWN_MATCH_LINES {
        out.push(format!(
            "… [cut: {} more lines]",
            lines.len() - SHOWN_MATCH_LINES
        ));
    }
    out.join("\n    ")
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
             max_results (default {DEFAULT_MAX_RESULTS}). Languages: {}.",
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
        let shared = self.shared.clone();
        off_the_runtime(ctx, "search", move |ws, cancelled| {
            let (path, language) = (args.path.as_deref(), args.language.as_deref());
            let prep = prepare(ws, &shared, &args.pattern, path, language)?;
            let pattern = &prep.pattern;
            let result = scan(&prep.walked, pattern, &shared.cache, cancelled, &|tree| {
                let matches = find_matches(pattern, tree);
                (!matches.is_empty()).then_some(matches)
            })?;
            Ok(render_grep(ws, &shared, &prep, &result, max_results))
        })
        .await
    }
}

fn render_grep(
    ws: &Workspace,
    shared: &AstShared,
    prep: &Prepared,
    result: &Scan<Vec<MatchRecord>>,
    max_results: usize,
) -> ToolOutput {
    let pattern = &prep.pattern;
    let total: usize = result.per_file.iter().map(|(_, m)| m.len()).sum();
    let files_with = result.per_file.len();
    let all = result
        .per_file
        .iter()
        .flat_map(|(p, ms)| ms.iter().map(move |m| (p, m)));
    let capped = cap_list(all, max_results);
    let skipped = skipped_all(&prep.walked, result);
    let lang = pattern.lang;
    let mut text = if total == 0 {
        format!(
            "no matches for `{}` ({lang}) in {} file(s) under {}{}",
            cut_text(prep.pattern_source(), 200),
            result.searched,
            ws.display(&prep.scope),
            context_note(pattern)
        )
    } else {
        format!(
            "{total} match(es) in {files_with} file(s) for `{}` ({lang}){}",
            cut_text(prep.pattern_source(), 200),
            context_note(pattern)
        )
    };
    text.push_str(&format!(
        "\nsearched {} file(s): {} ruled out by their text without parsing, {} parsed, {} from the parse cache",
        result.searched, result.prefiltered, result.parsed, result.cached_trees
    ));
    let mut matches_json = Vec::new();
    for (path, m) in &capped.shown {
        let rel = ws.display(path);
        text.push_str(&format!(
            "\n\n{rel}:{}:{}\n    {}",
            m.line,
            m.col,
            shown_code(&m.text)
        ));
        for (name, value) in &m.captures {
            text.push_str(&format!("\n    ${name} = {}", shown_code(value)));
        }
        for (name, values) in &m.multi_captures {
            let joined = values.join(", ");
            text.push_str(&format!(
                "\n    $$${name} = [{}]",
                cut_text(&joined, SHOWN_LINE_CHARS)
            ));
        }
        let captures: serde_json::Map<String, Value> = m
            .captures
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let multi: serde_json::Map<String, Value> = m
            .multi_captures
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        matches_json.push(json!({
            "path": rel,
            "location": format!("{rel}:{}:{}", m.line, m.col),
            "line": m.line, "col": m.col, "end_line": m.end_line, "end_col": m.end_col,
            "text": m.text,
            "captures": captures,
            "multi_captures": multi,
        }));
    }
    if let Some(more) = capped.more_line() {
        text.push_str(&format!(
            "\n\n{more}; raise max_results (at most {MAX_MAX_RESULTS}) or narrow `path`"
        ));
    }
    if let Some(s) = skipped_text(ws, &skipped) {
        text.push_str(&format!("\n\n{s}"));
    }
    let structured = json!({
        "pattern": prep.pattern_source(),
        "language": lang.id(),
        "context": pattern.context,
        "total_matches": total,
        "files_with_matches": files_with,
        "shown": capped.shown.len(),
        "more_not_shown": capped.more(),
        "matches": matches_json,
        "searched_files": result.searched,
        "prefiltered_files": result.prefiltered,
        "parsed_files": result.parsed,
        "cached_files": result.cached_trees,
        "skipped": skipped_json(ws, &skipped),
        "cache": shared.cache.stats(),
    });
    ToolOutput::text(text).with_structured(structured)
}

impl Prepared {
    fn pattern_source(&self) -> &str {
        &self.source
    }
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
         result is a diff preview with an `edit_id`; call `resolve` with it to accept (all files or none) \
         or discard. A rewrite naming a metavariable the pattern does not bind is an error."
            .to_string()
    }
    fn input_schema(&self) -> Value {
        tools_core::schema_for::<EditArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let args: EditArgs = parse_args(args)?;
        let shared = self.shared.clone();
        off_the_runtime(ctx, "edit", move |ws, cancelled| {
            let (path, language) = (args.path.as_deref(), args.language.as_deref());
            let prep = prepare(ws, &shared, &args.pattern, path, language)?;
            let rewrite = Rewrite::new(&args.rewrite, &prep.pattern)?;
            let pattern = &prep.pattern;
            let result = scan(&prep.walked, pattern, &shared.cache, cancelled, &|tree| {
                rewrite.apply(pattern, tree).map(|(new_text, n)| {
                    (
                        content_hash(tree.text().as_bytes()),
                        tree.text().to_string(),
                        new_text,
                        n,
                    )
                })
            })?;
            render_edit(ws, &shared, &prep, result, &args.rewrite)
        })
        .await
    }
}

type EditResult = (String, String, String, usize);

fn render_edit(
    ws: &Workspace,
    shared: &AstShared,
    prep: &Prepared,
    result: Scan<EditResult>,
    rewrite: &str,
) -> Result<ToolOutput, ToolError> {
    let skipped = skipped_all(&prep.walked, &result);
    let lang = prep.pattern.lang;
    if result.per_file.is_empty() {
        let mut text = format!(
            "no change: `{}` ({lang}) matched nothing to rewrite in {} file(s) under {}{}; nothing was staged",
            cut_text(prep.pattern_source(), 200),
            result.searched,
            ws.display(&prep.scope),
            context_note(&prep.pattern)
        );
        if let Some(s) = skipped_text(ws, &skipped) {
            text.push_str(&format!("\n\n{s}"));
        }
        return Ok(ToolOutput::text(text).with_structured(json!({
            "edit_id": Value::Null, "replacements": 0, "files": [],
            "searched_files": result.searched, "skipped": skipped_json(ws, &skipped),
        })));
    }
    let mut diff_lines_left = shared.config.max_diff_lines;
    let mut diff = String::new();
    let mut cut_files = 0;
    let mut files_json = Vec::new();
    let mut staged = Vec::new();
    let mut total = 0;
    for (path, (hash, old, new, n)) in result.per_file {
        let rel = ws.display(&path);
        total += n;
        let file_diff = similar::TextDiff::from_lines(&old, &new)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{rel}"), &format!("b/{rel}"))
            .to_string();
        let lines: Vec<&str> = file_diff.lines().collect();
        if diff_lines_left == 0 {
            cut_files += 1;
        } else if lines.len() <= diff_lines_left {
            diff.push_str(&file_diff);
            if !file_diff.ends_with('\n') {
                diff.push('\n');
            }
            diff_lines_left -= lines.len();
        } else {
            diff.push_str(&lines[..diff_lines_left].join("\n"));
            diff.push_str(&format!(
                "\n… [cut: {} more diff lines of {rel}]\n",
                lines.len() - diff_lines_left
            ));
            diff_lines_left = 0;
        }
        files_json.push(json!({"path": rel, "replacements": n, "sha256": hash}));
        staged.push(StagedFile {
            path,
            hash,
            new_text: new,
            replacements: n,
        });
    }
    if cut_files > 0 {
        diff.push_str(&format!(
            "… [cut: the diffs of {cut_files} more file(s) are not shown]\n"
        ));
    }
    let nfiles = staged.len();
    let id = shared.edits.stage(staged)?;
    let mut text = format!(
        "(proposed) {total} replacement(s) in {nfiles} file(s) for `{}` → `{}` ({lang}){}. Nothing was written: \
         call resolve with edit_id \"{id}\" and action \"accept\" to write every file (or none), or \"discard\".\n\n{diff}",
        cut_text(prep.pattern_source(), 200),
        cut_text(rewrite, 200),
        context_note(&prep.pattern)
    );
    if let Some(s) = skipped_text(ws, &skipped) {
        text.push_str(&format!("\n{s}"));
    }
    Ok(ToolOutput::text(text).with_structured(json!({
        "edit_id": id,
        "replacements": total,
        "file_count": nfiles,
        "files": files_json,
        "diff": diff,
        "searched_files": result.searched,
        "skipped": skipped_json(ws, &skipped),
    })))
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
        "Accept or discard a change staged by ast_edit. `accept` first checks every file against the content \
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
                let mut text = format!(
                    "accepted {}: {} replacement(s) written to {} file(s)",
                    args.edit_id,
                    done.replacements,
                    done.written.len()
                );
                for p in &listed.shown {
                    text.push_str(&format!("\n  {}", ws.display(p)));
                }
                if let Some(more) = listed.more_line() {
                    text.push_str(&format!("\n  {more}"));
                }
                let files: Vec<String> = done.written.iter().map(|p| ws.display(p)).collect();
                Ok(ToolOutput::text(text)
                    .with_structured(json!({
                        "edit_id": args.edit_id, "action": "accept",
                        "replacements": done.replacements, "files": files,
                    }))
                    .with_touched(done.written))
            }
        })
        .await
    }
}
