//! `lsp_rename`: a project-wide rename through the language server, applied all or
//! nothing.
//!
//! `prepareRename` first where the server offers it (a refusal changes nothing), then
//! `textDocument/rename`. The `WorkspaceEdit` — `changes` or `documentChanges`, including
//! create / rename / delete file operations — is planned in memory against the files'
//! current content, checked again just before writing (any change since rejects the whole
//! rename), written atomically file by file, and restored if a write fails part-way.
//! References the server reports under the old name that its edit does not cover are
//! added to the same edit, or the rename is refused (the `references` module). Once
//! written, the files are synced to the server, the write's diagnostics are taken as for
//! any write, and the references under the new name are compared with those from before
//! (the `check` module): what the rename left behind is named in the answer.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use lsp_types::request::{PrepareRenameRequest, Rename};
use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, PrepareRenameResponse, RenameParams,
    TextDocumentIdentifier, TextDocumentPositionParams, WorkDoneProgressParams, WorkspaceEdit,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::{CallCtx, Run, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::client::LspClient;
use crate::diagnostics::observer::DiagnosticsOnWrite;
use crate::error::LspError;
use crate::queries::query;
use crate::rename::after::{AfterRename, CheckWait, MergedServer, late_findings};
use crate::rename::plan::{commit, plan_edit};
use crate::servers::supervisor::ServerSupervisor;

/// Arguments of `lsp_rename`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// Workspace-relative path of the file where the symbol is.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// Substring of that line identifying the symbol.
    pub symbol: String,
    /// The new name.
    pub new_name: String,
    /// Which occurrence (1-based) when `symbol` occurs more than once on the line.
    pub occurrence: Option<u32>,
    /// Write nothing: stage the rename, predict its diagnostics, and answer with a
    /// `change_id` for `resolve` (accept or discard).
    #[serde(default)]
    pub preview: bool,
}

/// The `lsp_rename` tool.
pub struct LspRenameTool {
    sup: Arc<ServerSupervisor>,
    observer: Option<Arc<DiagnosticsOnWrite>>,
}

impl LspRenameTool {
    /// A tool over `sup`.
    pub fn new(sup: Arc<ServerSupervisor>) -> Self {
        LspRenameTool {
            sup,
            observer: None,
        }
    }

    /// Takes the rename's diagnostics through `observer` before checking the renamed
    /// project (so they are computed from the state before the files reached the server);
    /// the registry's own pass over the same files then adds nothing.
    pub fn with_observer(mut self, observer: Arc<DiagnosticsOnWrite>) -> Self {
        self.observer = Some(observer);
        self
    }
}

/// Most workspace files opened before a rename.
pub const RENAME_OPEN_CAP: usize = 200;

/// The answer to a rename on a server whose `initialize` capabilities offer none and that
/// no stand-in answered for (`stand_in` says why, when one is named): that limit first,
/// then what to do instead.
fn no_rename_provider(c: &LspClient, stand_in: Option<String>) -> String {
    let stand_in = stand_in.map(|s| format!(" ({s})")).unwrap_or_default();
    format!(
        "{server} does not offer rename: its initialize capabilities have no renameProvider{why}{stand_in}; \
         nothing was changed — rename with `ast_edit` (pattern and rewrite, then `resolve`), or \
         give {language} a server that renames under [lsp.servers.{language}] in agent-tools.toml",
        server = c.server,
        why = no_rename_why(c),
        language = c.language,
    )
}

/// Why `c` offers no rename, when it is known.
fn no_rename_why(c: &LspClient) -> &'static str {
    // intelephense keeps rename for its licensed edition.
    if c.server.starts_with("intelephense") {
        " (intelephense renames only with a licence key)"
    } else {
        ""
    }
}

/// Whether `caps` offer a rename (`renameProvider: false` is a "no").
fn offers_rename(caps: &lsp_types::ServerCapabilities) -> bool {
    !matches!(caps.rename_provider, Some(OneOf::Left(false)) | None)
}

/// Opens the workspace's files of the server's language under its root (bounded): some
/// servers rename only in open documents or in the part of the project loaded so far.
/// Returns how many files it opened.
async fn open_language_files(client: &LspClient, run: &Run) -> usize {
    // A server that checks every file of its workspace (pyright and basedpyright in
    // workspace mode) has the whole project loaded already, once it has found its files:
    // opening it all would only make it analyse each file again before the rename is asked.
    // It misses the files its configuration leaves out of its program (their importers are
    // found after the rename: `outside_importers`) and the files whose names are not UTF-8
    // (it cannot spell them), which are opened: their references then reach the edit, which
    // the plan refuses rather than leave them behind.
    client.wait_project_files_found().await;
    let whole_workspace = crate::diagnostics::republish::loads_whole_workspace(client);
    let Some(spec) = crate::servers::discover::spec_for_language(&client.language, run) else {
        return 0;
    };
    let walker = ignore::WalkBuilder::new(&client.root)
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(n == "node_modules" || n == ".venv" || n == "venv" || n == "target" || n == ".git")
        })
        .build();
    let mut n = 0;
    for entry in walker.flatten() {
        if n >= RENAME_OPEN_CAP {
            break;
        }
        let path = entry.path();
        if whole_workspace && path.to_str().is_some() {
            continue;
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if entry.file_type().is_some_and(|t| t.is_file())
            && spec.iter().any(|e| e.eq_ignore_ascii_case(ext))
        {
            if client.sync_file(path).await.is_err() {
                continue;
            }
            n += 1;
        }
    }
    if !whole_workspace || n > 0 {
        client.wait_ready().await;
    }
    n
}

/// Whether `client`'s rename edits exactly the places its references request lists, found
/// by the same search: pyright and basedpyright checking their whole workspace, when every
/// file that may use the symbol is in their program — no file was opened for the rename
/// (a name they cannot spell) and no configuration narrows the program (their rename
/// leaves out open files outside it, which their references list). Its references from
/// before the rename are then the edit's own places, and are not asked for separately.
fn renames_its_references(client: &LspClient, opened_for_rename: usize) -> bool {
    client.answers_before_analysis()
        && crate::diagnostics::republish::loads_whole_workspace(client)
        && opened_for_rename == 0
        && crate::servers::python_program::PythonProgram::read(&client.root, &client.server)
            .is_none()
}

#[async_trait::async_trait]
impl Tool for LspRenameTool {
    fn name(&self) -> &str {
        "lsp_rename"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "Rename a symbol across the project through its language server. Give `file`, `line` \
         (1-based), `symbol` (a substring of that line; `occurrence` when it occurs more than \
         once) and `new_name`. All or nothing: every file is checked and written atomically, \
         restored on a failure part-way; a rename the server refuses changes nothing. With preview: true \
         nothing is written: the answer predicts the diagnostics the rename would bring and gives a \
         change_id for `resolve` (accept or discard)."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<RenameArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        // A check an earlier rename left running ends first, and leads this answer.
        let earlier = match &self.observer {
            Some(obs) => obs.deferred().take().await,
            None => None,
        };
        let answer = self.rename(ctx, args).await;
        let Some(found) = earlier else {
            return answer;
        };
        match answer {
            Ok(mut out) => {
                out.lead_with(Some(found.text));
                Ok(out)
            }
            Err(e) => Err(crate::queries::lsp_tool::led_by(&found.text, e)),
        }
    }
}

impl LspRenameTool {
    async fn rename(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        let a: RenameArgs = parse_args(args)?;
        crate::rename::new_name::check_new_name(&a.new_name)?;
        let run = &ctx.run;
        // Where a rename's seconds go, phase by phase (`AGENT_TOOLS_LOG=tools_lsp=debug`).
        let mut phase = Instant::now();
        let mut lap = |what: &str| {
            tracing::debug!(
                phase = what,
                ms = phase.elapsed().as_millis() as u64,
                "rename"
            );
            phase = Instant::now();
        };
        let p = query::prepare(
            run,
            &self.sup,
            Some(&a.file),
            Some(a.line),
            Some(&a.symbol),
            a.occurrence,
        )
        .await?;
        // `renameProvider: false` (intelephense without a licence key says so) is as much
        // a "no" as leaving it out: asking anyway only gets an empty answer that reads like
        // a wrong position. The server that stands in for it renames instead, if the table
        // names one (PHPantom for intelephense), and the answer says which renamed.
        let (p, stood_in_for) = match offers_rename(&p.client.caps) {
            true => (p, None),
            false => match crate::queries::stand_in::prepared(&self.sup, &p, offers_rename).await {
                Ok(Some(q)) => {
                    let licence = match no_rename_why(&p.client).is_empty() {
                        true => "",
                        false => " without a licence key",
                    };
                    (q, Some((p.client.server.clone(), licence)))
                }
                Ok(None) => {
                    return Err(ToolError::not_available(no_rename_provider(
                        &p.client, None,
                    )));
                }
                Err(why) => {
                    return Err(ToolError::not_available(no_rename_provider(
                        &p.client,
                        Some(why),
                    )));
                }
            },
        };
        let c = &p.client;
        let Some(provider) = &c.caps.rename_provider else {
            return Err(ToolError::not_available(no_rename_provider(c, None)));
        };
        lap("server ready, symbol found");
        let opened_for_rename = open_language_files(c, run).await;
        let from_edit = renames_its_references(c, opened_for_rename);
        // The projects beside its root that import the file are renamed too once loaded.
        let siblings = crate::queries::sibling_importers::load_for_symbol(&self.sup, &p).await;
        // Opening the project's files may have closed this one (the client keeps at most
        // `max_open_documents` open), and typescript-language-server answers nothing about
        // a closed file ("Unexpected resource"): it is opened again, last.
        c.sync_file(&p.path).await?;
        lap("language files opened, server ready again");

        let here = format!("`{}` at {}:{}", a.symbol, a.file, a.line);
        let tdpp = TextDocumentPositionParams {
            text_document: TextDocumentIdentifier {
                uri: p.doc.uri.clone(),
            },
            position: p.pos,
        };
        // A server still loading answers "content modified": it is asked again until the
        // indexing wait runs out.
        let busy_until = Instant::now() + self.sup.config().index_wait();
        let params = RenameParams {
            text_document_position: tdpp.clone(),
            new_name: a.new_name.clone(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        };
        // prepareRename, the rename and the references from before are asked at once: the
        // server answers them one after the other without a round trip in between, and a
        // refusal by prepareRename still changes nothing.
        let prepare_first = matches!(provider, OneOf::Right(o) if o.prepare_provider == Some(true));
        let (prepared, answer, refs) = futures::join!(
            async {
                match prepare_first {
                    true => Some(
                        ask_while_catching_up(c, busy_until, || {
                            c.request::<PrepareRenameRequest>(tdpp.clone())
                        })
                        .await,
                    ),
                    false => None,
                }
            },
            ask_while_catching_up(c, busy_until, || c.request::<Rename>(params.clone())),
            async {
                match from_edit {
                    true => None,
                    false => crate::rename::references::ask_references(c, &p).await,
                }
            },
        );
        match prepared {
            None
            | Some(Ok(Some(PrepareRenameResponse::Range(_))))
            | Some(Ok(Some(PrepareRenameResponse::RangeWithPlaceholder { .. })))
            | Some(Ok(Some(PrepareRenameResponse::DefaultBehavior {
                default_behavior: true,
            }))) => {}
            Some(Ok(None)) => {
                let why = if c.indexing() {
                    " (it is still indexing the project: try again shortly)"
                } else {
                    ""
                };
                return Err(ToolError::rejected(format!(
                    "{} says there is no symbol it can rename at {here}{why}; nothing was changed",
                    c.server
                )));
            }
            Some(Ok(Some(PrepareRenameResponse::DefaultBehavior {
                default_behavior: false,
            }))) => {
                return Err(ToolError::rejected(format!(
                    "{} cannot rename {here}; nothing was changed",
                    c.server
                )));
            }
            Some(Err(LspError::Server { message, .. })) => {
                return Err(ToolError::rejected(format!(
                    "{} refused to rename {here}: {message}; nothing was changed",
                    c.server
                )));
            }
            Some(Err(e)) => return Err(e.into()),
        }
        let mut edit = match answer {
            Ok(Some(e)) => e,
            Ok(None) => {
                return Err(ToolError::rejected(format!(
                    "{} returned no edit for renaming {here} (not a symbol it can rename?); nothing was changed",
                    c.server
                )));
            }
            Err(LspError::Server { message, .. }) => {
                return Err(ToolError::rejected(format!(
                    "{} refused to rename {here} to `{}`: {message}; nothing was changed",
                    c.server, a.new_name
                )));
            }
            Err(e) => return Err(e.into()),
        };
        lap("prepareRename, rename and references answered");
        // A server whose rename edits exactly its references has them in the edit already:
        // asking for them again would only double its search.
        let refs = match from_edit {
            true => crate::rename::references::locations_of(&edit),
            false => refs,
        };
        let extra =
            crate::rename::references::cover_references(run, c, &p, &a.new_name, &mut edit, refs)?;
        // Uses in files only another server reads (`.vue` components) join the same edit.
        let co = crate::queries::co_servers::union_rename(
            &self.sup,
            run,
            &p,
            &a.new_name,
            &here,
            &mut edit,
        )
        .await?;
        // Each of them is held to its references too, before and after writing.
        let mut co_before = Vec::new();
        for q in &co.prepared {
            let refs = crate::rename::references::ask_references(&q.client, q).await;
            let more = crate::rename::references::cover_references(
                run,
                &q.client,
                q,
                &a.new_name,
                &mut edit,
                refs,
            )?;
            co_before.push(more.before);
        }
        let template =
            crate::rename::template::template_edits(run, &p, &a.new_name, &here, &mut edit)?;
        // Importers in files the server's configuration leaves out of its program (the
        // tests beside `include = ["src/pkg"]`) are renamed with it.
        let old_name = extra
            .before
            .as_ref()
            .map(|b| b.old_name.clone())
            .or_else(|| {
                crate::queries::outside_importers::last_identifier(&a.symbol).map(str::to_string)
            })
            .unwrap_or_default();
        let outside = crate::rename::outside::rename_outside_importers(
            run,
            c,
            &old_name,
            &a.new_name,
            &mut edit,
        )
        .await;
        let plan = plan_edit(run, c, &edit).await?;
        if plan.finals.is_empty() {
            return Err(ToolError::rejected(format!(
                "{} returned an empty edit for renaming {here}; nothing was changed",
                c.server
            )));
        }
        if a.preview {
            return crate::rename::preview::stage(ctx, &plan, &here, &a.new_name, &extra.added)
                .await;
        }
        commit(run, &plan)?;
        lap("planned and written");
        let total: usize = plan.edits.values().sum();
        let lines_of = edit_lines(&edit);
        let mut head = format!(
            "renamed {here} to `{}`: {total} edit(s) in {} file(s)",
            a.new_name,
            plan.finals.len()
        );
        if let Some((own, licence)) = &stood_in_for {
            head.push_str(&format!(
                ", by {} standing in for {own}, which offers no rename{licence}",
                c.server
            ));
        }
        let mut files = Vec::new();
        let mut listing = Vec::new();
        for path in plan.finals.keys() {
            let disp = run.workspace().display(path);
            let what = if plan.deleted.contains(path) && !path.exists() {
                "deleted".to_string()
            } else if plan.created.contains(path) {
                "created".to_string()
            } else {
                format!("{} edit(s)", plan.edits.get(path).copied().unwrap_or(0))
            };
            // The lines go to the structured result: the text keeps one line per file.
            let lines = lines_of.get(path).cloned().unwrap_or_default();
            listing.push(format!("  {disp}: {what}"));
            files.push(json!({"path": disp, "change": what, "lines": lines}));
        }
        // Where edits came from besides the server's own rename: each source one line,
        // `count what: places`.
        let mut note_places = |places: &[String], what: String| {
            if !places.is_empty() {
                listing.push(format!("{} {what}: {}", places.len(), places.join(", ")));
            }
        };
        note_places(
            &extra.added,
            format!(
                "of those edit(s) are references {} reports under the old name that its rename left out, renamed in the same change",
                c.server
            ),
        );
        note_places(
            &outside.renamed,
            format!(
                "of those edit(s) are in files the configuration of {} leaves out of its program, found through their imports",
                c.server
            ),
        );
        note_places(
            &outside.aliased,
            format!(
                "import(s) outside its program keep the old name as an alias (`{} as {old_name}`), as {} gave no uses to rename there",
                a.new_name, c.server
            ),
        );
        note_places(
            &template.places,
            format!("of those edit(s) are {}", template.why),
        );
        note_places(
            &co.added,
            format!(
                "of those edit(s) come from {}, which reads files {} does not",
                co.servers.join(", "),
                c.server
            ),
        );
        let touched: Vec<PathBuf> = plan.finals.keys().cloned().collect();
        // The check (the write's diagnostics, the references under the new name) runs as
        // its own task: the answer waits for it only until it is due, and a check still
        // running then leads the run's next answer instead.
        let check = AfterRename {
            ctx: ctx.clone(),
            observer: self.observer.clone(),
            client: Arc::clone(c),
            touched: touched.clone(),
            edit,
            before: extra.before.clone(),
            origin_text: p.doc.text.clone(),
            new_name: a.new_name.clone(),
            merged: co
                .prepared
                .iter()
                .zip(co_before)
                .map(|(q, before)| MergedServer {
                    client: Arc::clone(&q.client),
                    before,
                    origin_text: q.doc.text.clone(),
                })
                .collect(),
            pre_images: run.workspace().pre_write_images().hold(&touched),
        };
        if let Some(obs) = &self.observer {
            obs.leave_to_tool(&touched);
        }
        let mut task = tokio::spawn(check.run());
        let bound = self.sup.config().rename_answer();
        let last_verdict = c.last_write_verdict();
        let wait = CheckWait::new(started, Instant::now(), bound, last_verdict);
        let waited = match &self.observer {
            Some(_) => tokio::time::timeout_at(wait.due.into(), &mut task)
                .await
                .ok(),
            None => Some((&mut task).await),
        };
        let mut structured = json!({"edits": total, "files": files,
            "added_references": extra.added, "merged_from": co.servers, "merged_edits": co.added,
            "renamed_by": c.server, "stood_in_for": stood_in_for.as_ref().map(|(own, _)| own)});
        structured["check_wait"] = json!({"bound_ms": bound.as_millis() as u64,
            "last_write_verdict_ms": last_verdict.map(|d| d.as_millis() as u64),
            "skipped": wait.skipped});
        if !template.places.is_empty() {
            structured["read_from_template"] = json!(template.places);
        }
        let mut sections = Vec::new();
        let in_background = waited.is_none() && self.observer.is_some();
        match (waited, &self.observer) {
            (Some(Ok(outcome)), _) => {
                listing.push(outcome.line);
                structured["checked_after_writing"] = outcome.json;
                sections = outcome.sections;
            }
            (Some(Err(e)), _) => {
                listing.push(format!("not checked after writing: the check failed ({e})"));
                structured["checked_after_writing"] = json!({"clean": null, "why": e.to_string()});
            }
            (None, Some(obs)) => {
                let label = format!("rename of {here} to `{}`", a.new_name);
                head.push_str(&format!(
                    "\nthe check goes on: what {} reports about the renamed files (new diagnostics, references left behind) comes with your next call's answer",
                    c.server
                ));
                structured["checked_after_writing"] = json!({"clean": null, "pending": true});
                let later = label.clone();
                obs.deferred().defer(
                    label,
                    tokio::spawn(async move {
                        match task.await {
                            Ok(outcome) => late_findings(&later, outcome),
                            Err(e) => late_findings(
                                &later,
                                crate::rename::after::CheckOutcome {
                                    line: format!(
                                        "not checked after writing: the check failed ({e})"
                                    ),
                                    json: json!({"clean": null, "why": e.to_string()}),
                                    sections: Vec::new(),
                                },
                            ),
                        }
                    }),
                );
            }
            (None, None) => {}
        }
        lap("answered");
        // Servers that could not be asked lead; then the edits.
        let mut lines = co.missing.clone();
        lines.extend(siblings.cut_line(
            &c.server,
            "`ast_grep` for the old name finds uses left there",
        ));
        lines.push(head);
        lines.extend(listing);
        let mut out = ToolOutput::text(lines.join("\n"))
            .with_structured(structured)
            .with_touched(touched);
        if in_background {
            out = out.checking_in_background();
        }
        out.sections = sections;
        Ok(out)
    }
}

/// The 1-based lines each file's text edits start on, sorted, once each.
fn edit_lines(edit: &WorkspaceEdit) -> BTreeMap<PathBuf, Vec<u32>> {
    let mut out: BTreeMap<PathBuf, Vec<u32>> = BTreeMap::new();
    let mut add = |uri: &lsp_types::Uri, line: u32| {
        if let Some(p) = crate::client::uri_to_path(uri) {
            out.entry(p).or_default().push(line + 1);
        }
    };
    let range_of = |e: &OneOf<lsp_types::TextEdit, lsp_types::AnnotatedTextEdit>| match e {
        OneOf::Left(t) => t.range,
        OneOf::Right(a) => a.text_edit.range,
    };
    match &edit.document_changes {
        Some(DocumentChanges::Edits(v)) => {
            for e in v {
                for t in &e.edits {
                    add(&e.text_document.uri, range_of(t).start.line);
                }
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                if let DocumentChangeOperation::Edit(e) = op {
                    for t in &e.edits {
                        add(&e.text_document.uri, range_of(t).start.line);
                    }
                }
            }
        }
        None => {
            for (uri, edits) in edit.changes.iter().flatten() {
                for t in edits {
                    add(uri, t.range.start.line);
                }
            }
        }
    }
    for lines in out.values_mut() {
        lines.sort_unstable();
        lines.dedup();
    }
    out
}

/// Asks `ask` until the server stops answering "ask again later" (it was catching up with a
/// change or still loading) or `busy_until` passes, waiting for its readiness in between.
async fn ask_while_catching_up<T, Ask, Answer>(
    client: &LspClient,
    busy_until: Instant,
    mut ask: Ask,
) -> Result<T, LspError>
where
    Ask: FnMut() -> Answer,
    Answer: std::future::Future<Output = Result<T, LspError>>,
{
    loop {
        let answer = ask().await;
        match &answer {
            Err(LspError::Server { code, .. })
                if crate::client::ask_again_later(*code) && Instant::now() < busy_until =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                client.wait_ready().await;
            }
            _ => return answer,
        }
    }
}
