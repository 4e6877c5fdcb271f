//! The `lsp` tool: language-server queries by file, line and symbol.

use std::sync::Arc;

use std::path::Path;

use lsp_types::request::{
    CodeActionRequest, GotoDeclaration, GotoDefinition, GotoImplementation, GotoTypeDefinition,
    HoverRequest,
};
use lsp_types::{
    CodeActionContext, CodeActionParams, HoverParams, Location, PartialResultParams, Range,
    TextDocumentIdentifier, WorkDoneProgressParams,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::answer::budget::{self, LIST_CAP, Window};
use crate::answer::format::{self, Renderer};
use crate::error::LspError;
use crate::queries::hierarchy::{self, Direction};
use crate::queries::locate::{GotoRequest, goto, references, tdpp, unsupported};
use crate::queries::outline::OutlineFilter;
use crate::queries::query::{self, Prepared};
use crate::servers::supervisor::ServerSupervisor;

/// Most references listed.
pub const REFERENCES_CAP: usize = 50;
/// Most workspace symbols listed.
pub const WORKSPACE_SYMBOLS_CAP: usize = 100;
/// Most document symbols listed.
pub const DOCUMENT_SYMBOLS_CAP: usize = 200;

/// The `lsp` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LspAction {
    /// Errors and warnings of `file`; `"*"` runs the project's own checker.
    Diagnostics,
    /// Where the symbol is declared.
    Definition,
    /// Where it is declared, as opposed to defined (C and C++ headers, Go, Rust).
    Declaration,
    /// Where its type is declared.
    TypeDefinition,
    /// Concrete implementations.
    Implementation,
    /// Every use (capped at 50).
    References,
    /// Signature and doc comment.
    Hover,
    /// Workspace search with `query` (cap 100) or document symbols of `file` (cap 200).
    Symbols,
    /// Quick fixes offered at the symbol.
    CodeActions,
    /// The functions that call the symbol's function, to `depth` levels.
    IncomingCalls,
    /// The functions the symbol's function calls, to `depth` levels.
    OutgoingCalls,
    /// The types the symbol's type extends or implements, to `depth` levels.
    Supertypes,
    /// The types that extend or implement the symbol's type, to `depth` levels.
    Subtypes,
    /// Which servers run, for which roots, and why others do not.
    Status,
    /// Restart the server for `file`'s root (every started server without `file`).
    Reload,
}

/// Arguments of `lsp`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    /// The action.
    pub action: LspAction,
    /// Workspace-relative path of the file (`"*"` for project-wide diagnostics).
    pub file: Option<String>,
    /// 1-based line number.
    pub line: Option<u32>,
    /// The symbol: a substring of that line naming what you ask about. Required for
    /// navigation actions; a column is never guessed. `symbols` with `file`: a name, to
    /// list only that symbol and its members.
    pub symbol: Option<String>,
    /// Which occurrence (1-based) when `symbol` occurs more than once on the line.
    pub occurrence: Option<u32>,
    /// Workspace symbol search text (action `symbols`).
    pub query: Option<String>,
    /// Hierarchies: how many levels to follow (1 to 3, default 1); a node already shown is
    /// marked and not followed again. `symbols` with `file`: the deepest nesting listed
    /// (1 = top level only).
    pub depth: Option<u32>,
    /// Lists: index of the first entry to show (0-based), to page through a long answer;
    /// `hover`: the first line to show.
    pub offset: Option<usize>,
    /// `diagnostics`: the number of a write whose result was cut (it names it), to page
    /// through its new diagnostics with `offset`.
    pub write: Option<u64>,
    /// `symbols` with `file`: the kinds to list (`class`, `function`, `method`, `field`,
    /// `variable`, …, or `"all"`). By default the declarations a reader navigates by, not
    /// the locals inside functions.
    pub kinds: Option<Vec<String>>,
    /// Lists: most entries to show (references and hierarchies default to 50); the text
    /// also stops at its size budget and names the `offset` of the rest.
    pub max_results: Option<usize>,
}

/// The `lsp` tool.
pub struct LspTool {
    sup: Arc<ServerSupervisor>,
    observer: Option<Arc<crate::diagnostics::observer::DiagnosticsOnWrite>>,
}

impl LspTool {
    /// A tool over `sup`.
    pub fn new(sup: Arc<ServerSupervisor>) -> Self {
        LspTool {
            sup,
            observer: None,
        }
    }

    /// Pages the cut results of the writes `observer` saw (`diagnostics` with `write`).
    pub fn with_observer(
        mut self,
        observer: Arc<crate::diagnostics::observer::DiagnosticsOnWrite>,
    ) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The text budget of one answer.
    fn budget(&self) -> usize {
        self.sup.config().answer_bytes
    }
}

#[async_trait::async_trait]
impl Tool for LspTool {
    fn name(&self) -> &str {
        "lsp"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Ask the project's language server. Positions are `line` (1-based) plus `symbol`, a \
         substring of that line naming what you ask about (pass `occurrence` when it occurs \
         more than once); never a column. Actions: diagnostics (file, or \"*\" to run the \
         project's own checker; `write` with `offset` pages a write's cut result), definition, declaration, type_definition, implementation, \
         references, \
         incoming_calls / outgoing_calls (who calls the function, what it calls) and \
         supertypes / subtypes (of a type) with `depth` 1-3 (default 1; a node met again is \
         marked and not followed), hover (`offset` pages a long one), symbols (`query` for a \
         workspace search; `file` for its outline: declarations, not locals, unless `kinds` \
         asks; `depth` limits nesting; a big one shows every top-level symbol first with its \
         member count, and `symbol` lists one symbol's members), code_actions, status (which servers run and why others do not), \
         reload (restart the server for `file`'s root). Lists show what fits about 4 KB \
         (references and hierarchies at most 50 entries) and end with the `offset` of the \
         rest; `max_results` asks for more at once. Files are synced from disk before every \
         query."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<LspArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        // A check an earlier rename left running ends first, and leads this answer.
        let earlier = match &self.observer {
            Some(obs) => obs.deferred().take().await,
            None => None,
        };
        let answer = self.answer(ctx, args).await;
        // A shared server restarted under this session leads its next answer, once.
        let mut notices = self.sup.take_notices();
        notices.extend(earlier.map(|found| found.text));
        if notices.is_empty() {
            return answer;
        }
        let lead = notices.join("\n");
        match answer {
            Ok(mut out) => {
                out.text = format!("{lead}\n{}", out.text);
                Ok(out)
            }
            Err(e) => Err(led_by(&lead, e)),
        }
    }
}

/// `e` with `lead` before its message.
pub(crate) fn led_by(lead: &str, e: ToolError) -> ToolError {
    match e {
        ToolError::InvalidArguments { field, message } => ToolError::InvalidArguments {
            field,
            message: format!("{lead}\n{message}"),
        },
        ToolError::NotAvailable(m) => ToolError::NotAvailable(format!("{lead}\n{m}")),
        ToolError::TimedOut(m) => ToolError::TimedOut(format!("{lead}\n{m}")),
        ToolError::Rejected(m) => ToolError::Rejected(format!("{lead}\n{m}")),
        ToolError::Internal(m) => ToolError::Internal(format!("{lead}\n{m}")),
        ToolError::AfterRecovery { notice, error } => ToolError::AfterRecovery {
            notice,
            error: Box::new(led_by(lead, *error)),
        },
    }
}

impl LspTool {
    async fn answer(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: LspArgs = parse_args(args)?;
        let run = &ctx.run;
        let sup = &self.sup;
        // Everything about one file is answered from the disk's texts: held for the whole
        // answer, this keeps a preview (of another session sharing the server) from
        // putting its unsaved text in the server meanwhile. A server that is missing is
        // left to the action itself, so an install on first need is tried (and reported)
        // once, by the action. A server that fails to start here is the answer: the action
        // would only start it again and wait its whole start bound a second time.
        let _view = match (&a.action, a.file.as_deref()) {
            (LspAction::Status | LspAction::Reload, _) | (_, None | Some("*")) => None,
            (LspAction::Diagnostics, _) if a.write.is_some() => None,
            (_, Some(file)) => match query::resolve_file(run, Some(file)) {
                Ok(path) => match sup.locate(&path) {
                    Ok(loc) => sup.client_at(&loc).await?.disk_view().await,
                    Err(_) => None,
                },
                Err(_) => None,
            },
        };
        match a.action {
            LspAction::Status => {
                let (text, s) = crate::queries::status_view::status(sup).await;
                Ok(ToolOutput::text(text).with_structured(s))
            }
            LspAction::Reload => {
                let path = match &a.file {
                    Some(_) => Some(query::resolve_file(run, a.file.as_deref())?),
                    None => None,
                };
                let lines = sup.reload(path.as_deref()).await?;
                Ok(ToolOutput::text(lines.join("\n")).with_structured(json!({"reloaded": lines})))
            }
            LspAction::Diagnostics => {
                if let Some(number) = a.write {
                    let observer = self.observer.as_ref().ok_or_else(|| {
                        ToolError::not_available("diagnostics on write are not observed here")
                    })?;
                    let (text, s) = observer.page(number, a.offset.unwrap_or(0))?;
                    return Ok(ToolOutput::text(text).with_structured(s));
                }
                if a.file.as_deref() == Some("*") {
                    let (text, s) = crate::checkers::checker::run_checkers(sup, run).await?;
                    return Ok(ToolOutput::text(text).with_structured(s));
                }
                let path = query::resolve_file(run, a.file.as_deref())?;
                crate::diagnostics::file_diagnostics::file_diagnostics(sup, &path, ctx).await
            }
            LspAction::Symbols => {
                if let Some(q) = &a.query {
                    let window = Window::new(a.offset, a.max_results, WORKSPACE_SYMBOLS_CAP);
                    return crate::queries::workspace_symbols::workspace_symbols(
                        sup,
                        ctx,
                        q,
                        a.file.as_deref(),
                        window,
                        self.budget(),
                    )
                    .await;
                }
                if a.file.is_none() {
                    return Err(ToolError::invalid(
                        "query",
                        "`symbols` needs `query` (workspace search) or `file` (its outline)",
                    ));
                }
                let path = query::resolve_file(run, a.file.as_deref())?;
                let filter = OutlineFilter::new(a.kinds.as_deref(), a.depth)?;
                let window = Window::new(a.offset, a.max_results, DOCUMENT_SYMBOLS_CAP);
                let view = crate::queries::outline::OutlineView {
                    symbol: a.symbol.as_deref(),
                    shape_first: a.offset.is_none() && a.depth.is_none() && a.max_results.is_none(),
                };
                crate::queries::outline::document_symbols(
                    sup,
                    ctx,
                    &path,
                    &filter,
                    view,
                    window,
                    self.budget(),
                )
                .await
            }
            LspAction::IncomingCalls
            | LspAction::OutgoingCalls
            | LspAction::Supertypes
            | LspAction::Subtypes => {
                let direction = match a.action {
                    LspAction::IncomingCalls => Direction::IncomingCalls,
                    LspAction::OutgoingCalls => Direction::OutgoingCalls,
                    LspAction::Supertypes => Direction::Supertypes,
                    _ => Direction::Subtypes,
                };
                let depth = match a.depth {
                    None => 1,
                    Some(d) if (1..=hierarchy::MAX_DEPTH as u32).contains(&d) => d as usize,
                    Some(d) => {
                        return Err(ToolError::invalid(
                            "depth",
                            format!("`depth` is 1 to {} (got {d})", hierarchy::MAX_DEPTH),
                        ));
                    }
                };
                let p = query::prepare(
                    run,
                    sup,
                    a.file.as_deref(),
                    a.line,
                    a.symbol.as_deref(),
                    a.occurrence,
                )
                .await?;
                let window = Window::new(a.offset, a.max_results, REFERENCES_CAP);
                let answer =
                    hierarchy_answer(direction, &p, depth, window, self.budget(), ctx).await;
                query::unless_still_indexing(&p.client, answer)
            }
            LspAction::Definition
            | LspAction::Declaration
            | LspAction::TypeDefinition
            | LspAction::Implementation
            | LspAction::References
            | LspAction::Hover
            | LspAction::CodeActions => {
                let p = query::prepare(
                    run,
                    sup,
                    a.file.as_deref(),
                    a.line,
                    a.symbol.as_deref(),
                    a.occurrence,
                )
                .await?;
                let answer = match a.action {
                    LspAction::Hover => hover_answer(&p, a.offset, self.budget(), ctx).await,
                    LspAction::CodeActions => {
                        let window = Window::new(a.offset, a.max_results, LIST_CAP);
                        code_actions_answer(&p, window, self.budget(), ctx).await
                    }
                    action => {
                        let mut left_out = None;
                        if action == LspAction::References || action == LspAction::Implementation {
                            // Uses in a sibling project count only once it is loaded.
                            let loaded =
                                crate::queries::workspace_symbols::load_projects(sup, &p.client)
                                    .await;
                            left_out = loaded.left_out_line(
                                &p.client.server,
                                "`ast_grep` for the name finds uses there",
                            );
                            // And the projects beside its root that import the file.
                            let siblings =
                                crate::queries::sibling_importers::load_for_symbol(sup, &p).await;
                            let cut = siblings.cut_line(
                                &p.client.server,
                                "`ast_grep` for the name finds uses there",
                            );
                            left_out = match (left_out, cut) {
                                (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
                                (a, b) => a.or(b),
                            };
                        }
                        let mut out = locations_answer(
                            action,
                            &p,
                            sup,
                            (a.offset, a.max_results),
                            self.budget(),
                            ctx,
                        )
                        .await?;
                        if let Some(line) = left_out {
                            out.text = format!("{line}\n{}", out.text);
                        }
                        Ok(out)
                    }
                };
                query::unless_still_indexing(&p.client, answer)
            }
        }
    }
}

/// `symbol` at `file:line`, as answers name the place asked about.
fn here(r: &Renderer, p: &Prepared) -> String {
    format!(
        "`{}` at {}:{}",
        p.symbol,
        r.display(&p.path),
        p.pos.line + 1
    )
}

/// The locations `action` asks `p`'s server for, and what they are, in words.
async fn ask_locations(
    action: LspAction,
    p: &Prepared,
    root: &Path,
) -> Result<(&'static str, Vec<Location>), ToolError> {
    Ok(match action {
        LspAction::Definition => (GotoDefinition::WHAT, goto::<GotoDefinition>(p, root).await?),
        LspAction::Declaration => (
            GotoDeclaration::WHAT,
            goto::<GotoDeclaration>(p, root).await?,
        ),
        LspAction::TypeDefinition => (
            GotoTypeDefinition::WHAT,
            goto::<GotoTypeDefinition>(p, root).await?,
        ),
        LspAction::Implementation => (
            GotoImplementation::WHAT,
            goto::<GotoImplementation>(p, root).await?,
        ),
        _ => ("reference", references(p).await?),
    })
}

/// Answers a location query (definition-like or references) with a page of locations,
/// merged from every server that reads the file's project (a `.ts` file's uses in `.vue`
/// components come from the tsserver that carries the Vue plugin).
async fn locations_answer(
    action: LspAction,
    p: &Prepared,
    sup: &ServerSupervisor,
    (offset, max_results): (Option<usize>, Option<usize>),
    budget_bytes: usize,
    ctx: &CallCtx,
) -> Result<ToolOutput, ToolError> {
    let root = ctx.run.root();
    let (what, locs) = ask_locations(action, p, root).await?;
    let owned_root = root.to_path_buf();
    let (locs, asked, mut leads) = crate::queries::co_servers::merged(sup, p, locs, |q| {
        let root = owned_root.clone();
        Box::pin(async move { ask_locations(action, q, &root).await.map(|(_, l)| l) })
    })
    .await;
    let mut from_template = Vec::new();
    let locs = match action {
        LspAction::References => {
            let locs = crate::queries::outside_importers::with_uses_outside(sup, p, locs).await;
            // A component's template uses its servers could not link (no `vue` installed).
            let added = crate::queries::vue_template::for_query(sup.workspace(), p, &locs);
            leads.extend(added.lead);
            match added.uses {
                Some(u) => {
                    from_template = u.locations(&p.doc.uri);
                    crate::queries::co_servers::merge_locations(locs, from_template.clone())
                }
                None => locs,
            }
        }
        _ => locs,
    };
    let c = &p.client;
    let mut r = Renderer::new(root, c.encoding);
    let here = here(&r, p);
    // Any answer given while the server still indexes may be partial: the first line says so.
    leads.splice(0..0, query::indexing_caveat(c).filter(|_| !p.ready));
    let first: String = leads.iter().map(|l| format!("{l}\n")).collect();
    if locs.is_empty() {
        return Ok(
            ToolOutput::text(format!("{first}no {what} found for {here}")).with_structured(
                json!({"locations": [], "total": 0, "final": first.is_empty(), "servers": asked}),
            ),
        );
    }
    let default_max = if action == LspAction::References {
        REFERENCES_CAP
    } else {
        LIST_CAP
    };
    let window = Window::new(offset, max_results, default_max);
    let total = locs.len();
    let points: Vec<_> = locs.iter().filter_map(|l| r.location(l)).collect();
    let lines: Vec<String> = points
        .iter()
        .map(|pt| format!("{}  {}", pt.loc(), pt.text))
        .collect();
    let head = format!("{first}{total} {what}(s) of {here}:");
    let page = budget::page(&head, &lines, window, budget_bytes, "");
    let items: Vec<Value> = points
        .iter()
        .skip(page.first)
        .take(page.shown)
        .map(|p| p.json())
        .collect();
    let paging = page.json();
    let mut structured =
        json!({"locations": items, "total": total, "page": paging, "servers": asked});
    if !from_template.is_empty() {
        let read: Vec<String> = from_template
            .iter()
            .filter_map(|l| r.location(l).map(|pt| pt.loc()))
            .collect();
        structured["read_from_template"] = json!(read);
    }
    Ok(ToolOutput::text(page.text).with_structured(structured))
}

/// Signature and documentation at the symbol.
async fn hover_answer(
    p: &Prepared,
    offset: Option<usize>,
    budget_bytes: usize,
    ctx: &CallCtx,
) -> Result<ToolOutput, ToolError> {
    let c = &p.client;
    if c.caps.hover_provider.is_none() {
        return Err(unsupported(c, "hover"));
    }
    let params = HoverParams {
        text_document_position_params: tdpp(p),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    let resp = query::with_warmup(
        c,
        |v: &Option<lsp_types::Hover>| v.is_none(),
        || c.request::<HoverRequest>(params.clone()),
    )
    .await?;
    let r = Renderer::new(ctx.run.root(), c.encoding);
    let normal = resp
        .map(|h| crate::queries::hover::normalise(&crate::queries::hover::markdown(&h.contents)))
        .unwrap_or_default();
    if normal.text.is_empty() {
        return Ok(
            ToolOutput::text(format!("no hover information for {}", here(&r, p)))
                .with_structured(json!({"hover": null})),
        );
    }
    let (text, next_offset) =
        crate::queries::hover::page(&normal.text, offset.unwrap_or(0), budget_bytes);
    Ok(ToolOutput::text(text).with_structured(json!({
        "hover": normal.text,
        "next_offset": next_offset,
        "dropped_noise": normal.dropped,
        "decoded_entities": normal.decoded,
    })))
}

/// The quick fixes the server offers at the symbol, with the files each would edit.
async fn code_actions_answer(
    p: &Prepared,
    window: Window,
    budget_bytes: usize,
    ctx: &CallCtx,
) -> Result<ToolOutput, ToolError> {
    let c = &p.client;
    if c.caps.code_action_provider.is_none() {
        return Err(unsupported(c, "code actions"));
    }
    let r = Renderer::new(ctx.run.root(), c.encoding);
    let here = here(&r, p);
    let end = lsp_types::Position {
        line: p.pos.line,
        character: p.pos.character
            + crate::client::position::to_lsp_character(&p.symbol, p.symbol.len(), c.encoding),
    };
    c.catch_up_diagnostics().await;
    let diagnostics: Vec<lsp_types::Diagnostic> = c
        .published(&p.path)
        .map(|pb| {
            pb.items
                .into_iter()
                .filter(|d| format::overlaps_line(&d.range, p.pos.line))
                .collect()
        })
        .unwrap_or_default();
    let params = CodeActionParams {
        text_document: TextDocumentIdentifier {
            uri: p.doc.uri.clone(),
        },
        range: Range { start: p.pos, end },
        context: CodeActionContext {
            diagnostics,
            only: None,
            trigger_kind: None,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let resp = c.request::<CodeActionRequest>(params).await?;
    let actions = resp.unwrap_or_default();
    if actions.is_empty() {
        return Ok(
            ToolOutput::text(format!("no code actions offered for {here}"))
                .with_structured(json!({"actions": []})),
        );
    }
    let mut lines = Vec::new();
    let mut items = Vec::new();
    for a in &actions {
        let (l, j) = format::code_action_line(&r, a);
        lines.push(format!("- {l}"));
        items.push(j);
    }
    let total = lines.len();
    let head = format!("{total} code action(s) for {here}:");
    let page = budget::page(&head, &lines, window, budget_bytes, "");
    let items: Vec<Value> = items
        .into_iter()
        .skip(page.first)
        .take(page.shown)
        .collect();
    let paging = page.json();
    Ok(ToolOutput::text(page.text).with_structured(json!({"actions": items, "page": paging})))
}

/// Follows a call or type hierarchy from the symbol and shows the walk as a tree, within
/// the answer budget.
async fn hierarchy_answer(
    direction: Direction,
    p: &Prepared,
    depth: usize,
    window: Window,
    budget_bytes: usize,
    ctx: &CallCtx,
) -> Result<ToolOutput, ToolError> {
    let c = &p.client;
    if !direction.supported_by(c) {
        return Err(unsupported(c, direction.capability()));
    }
    // A server that announced the capability but has no handler says so with -32601.
    let not_handled = |e: LspError| match e {
        LspError::Server { code: -32601, .. } => unsupported(c, direction.capability()),
        e => e.into(),
    };
    let mut r = Renderer::new(ctx.run.root(), c.encoding);
    let here = here(&r, p);
    let roots = hierarchy::prepare(c, direction, &tdpp(p))
        .await
        .map_err(not_handled)?;
    if roots.is_empty() {
        let what = if direction.is_call() {
            "a function or method"
        } else {
            "a type"
        };
        return Ok(ToolOutput::text(format!(
            "no {} item at {here}: {} finds no {what} there",
            direction.capability(),
            c.server
        ))
        .with_structured(json!({"entries": [], "total": 0})));
    }
    let walk = hierarchy::walk(c, direction, roots, depth)
        .await
        .map_err(not_handled)?;
    let caveat = if p.ready {
        None
    } else {
        query::indexing_caveat(c)
    };
    let first = caveat.map(|c| format!("{c}\n")).unwrap_or_default();
    let (lines, items): (Vec<String>, Vec<Value>) = walk
        .entries
        .iter()
        .map(|e| hierarchy::entry_line(&mut r, direction, e))
        .unzip();
    let found = walk.entries.iter().filter(|e| e.depth > 0).count();
    if found == 0 {
        let text = format!(
            "{first}no {} found for {here}\n{}",
            direction.what(),
            lines.join("\n")
        );
        return Ok(
            ToolOutput::text(text).with_structured(json!({"entries": items, "total": items.len()}))
        );
    }
    let bound = if walk.stopped_early {
        format!(
            " — the walk stopped at its bound after {} requests; ask a smaller `depth` or start further down",
            walk.requests
        )
    } else {
        String::new()
    };
    let head = format!(
        "{first}{} of {here}, depth {depth}: {found} found{bound}",
        direction.what()
    );
    let page = budget::page(
        &head,
        &lines,
        window,
        budget_bytes,
        if depth > 1 {
            ", or a smaller `depth`"
        } else {
            ""
        },
    );
    let shown: Vec<Value> = items
        .into_iter()
        .skip(page.first)
        .take(page.shown)
        .collect();
    let paging = page.json();
    Ok(ToolOutput::text(page.text).with_structured(json!({
        "entries": shown,
        "page": paging,
        "depth": depth,
        "requests": walk.requests,
        "stopped_early": walk.stopped_early,
    })))
}
