//! Workspace symbol search (`symbols` with `query`): asks every server that may know the
//! name — the one of `file`, or those the workspace's roots allow, started on demand — side
//! by side, and shows one page of the matches. A server that cannot search (tsserver with no
//! project loaded, a timeout, a crash) does not sink the others' answer: it is named, with
//! why, in the answer's first line, and each server's outcome is in the structured result.
//! Only when no server could answer is the answer an error.
//!
//! A server that has not answered within `[lsp] declaration_scan_after_ms` (still indexing,
//! or on its first search of a large tree) does not hold the first answer either: its part
//! is then the declarations a scan of its files' syntax finds (`declaration_scan`), labelled
//! so in the first line, while its own search goes on for the next ask.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::FutureExt;
use lsp_types::request::WorkspaceSymbolRequest;
use lsp_types::{
    PartialResultParams, WorkDoneProgressParams, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};
use serde_json::{Value, json};
use tools_core::{CallCtx, SymbolSources, ToolError, ToolOutput};

use crate::answer::budget::{self, Window};
use crate::answer::format::{self, Renderer};
use crate::client::{LspClient, uri_to_path};
use crate::error::LspError;
use crate::queries::declaration_scan::{self, ScanLimits};
use crate::queries::search_in_flight::{SEARCH_BOUND, SearchesInFlight, Waited};
use crate::queries::{outline_confirm, query};
use crate::servers::projects::Loaded;
use crate::servers::run_start::incidental;
use crate::servers::supervisor::ServerSupervisor;

/// Opens one file of every project of `client`'s language under its root (see
/// `servers::projects`).
pub(crate) async fn load_projects(sup: &ServerSupervisor, client: &LspClient) -> Loaded {
    crate::servers::projects::load_projects(client, &sup.extensions_of(&client.language)).await
}

/// Searches the workspace's symbols with every relevant server (the one of `file`, or those
/// the workspace's roots allow), and shows a page of the matches within the budget, led by
/// a line for each server that could not search.
pub async fn workspace_symbols(
    sup: &ServerSupervisor,
    ctx: &CallCtx,
    q: &str,
    file: Option<&str>,
    window: Window,
    budget_bytes: usize,
) -> Result<ToolOutput, ToolError> {
    let clients = match file {
        Some(_) => {
            let path = query::resolve_file(&ctx.run, file)?;
            (vec![sup.client_for(&path).await?], Vec::new())
        }
        None => workspace_clients(sup).await?,
    };
    let (mut clients, left_out) = clients;
    // The same order on every ask, whatever order the servers started in.
    clients.sort_by(|a, b| (&a.language, &a.root).cmp(&(&b.language, &b.root)));
    // Side by side: a slow or loading server holds the answer no longer than its own bound,
    // and never adds its wait to another's.
    let searches =
        futures::future::join_all(clients.iter().map(|c| search_or_scan(sup, ctx, c, q))).await;
    let answered = searches
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Answered(_) | Outcome::Scanned { .. }))
        .count();
    if answered == 0 {
        return Err(no_answer(searches));
    }
    let mut lines = Vec::new();
    let mut items = Vec::new();
    let mut first = Vec::new();
    let mut notes = Vec::new();
    let mut servers = Vec::new();
    for s in searches {
        servers.push(s.json());
        match s.outcome {
            Outcome::Answered(_) | Outcome::Scanned { .. } => {
                lines.extend(s.lines);
                items.extend(s.items);
            }
            Outcome::Unsupported => notes.push(unsupported(&s.server)),
            Outcome::CouldNotSearch { .. } | Outcome::StillSearching(_) => {
                first.push(s.why_none());
            }
        }
        // They limit every line below, so they lead the answer, after what could not search.
        first.extend(s.caveats);
    }
    // The symbol asked for before those whose name merely contains it: pyright lists
    // Django's 356 matches of `ModelAdmin` with `variable modeladmin (in delete_selected)`
    // first and the class itself far below. Stable: each server's order within a rank.
    let mut ranked: Vec<(u8, String, Value)> = lines
        .into_iter()
        .zip(items)
        .map(|(l, i)| (name_rank(i["name"].as_str().unwrap_or(""), q), l, i))
        .collect();
    ranked.sort_by_key(|(rank, _, _)| *rank);
    let (lines, items): (Vec<String>, Vec<Value>) =
        ranked.into_iter().map(|(_, l, i)| (l, i)).unzip();
    let mut items = items;
    let total = lines.len();
    let mut text = if total == 0 {
        format!("no workspace symbols match `{q}`")
    } else {
        let head = format!("{total} workspace symbol(s) match `{q}`:");
        let page = budget::page(&head, &lines, window, budget_bytes, ", or a longer `query`");
        items = items
            .into_iter()
            .skip(page.first)
            .take(page.shown)
            .collect();
        page.text
    };
    for n in &notes {
        text.push_str(&format!("\n(note: {n})"));
    }
    for n in &left_out {
        text.push_str(&format!("\n(note: {n})"));
    }
    if !first.is_empty() {
        text = format!("{}\n{text}", first.join("\n"));
    }
    Ok(ToolOutput::text(text)
        .with_structured(json!({"symbols": items, "total": total, "servers": servers})))
}

/// The servers a search without `file` asks: those running or starting (the run's start
/// may still be starting one while another is up), or else the ones the conjunction rule
/// allows for the workspace's roots, started now — except those of a language incidental to
/// the workspace (a few scripts under `static/` beside a large package, see
/// `run_start::incidental`), which are named in a note instead (a question about one of
/// their files starts them). Django's admin JavaScript would otherwise start
/// typescript-language-server, hundreds of MiB, for a search no one asked of it.
async fn workspace_clients(
    sup: &ServerSupervisor,
) -> Result<(Vec<Arc<LspClient>>, Vec<String>), ToolError> {
    let mut v = sup.running_or_starting().await;
    if !v.is_empty() {
        return Ok((v, Vec::new()));
    }
    let scan = crate::servers::discover::scan_workspace(sup.table(), sup.workspace());
    let count = |language: &str| scan.files.get(language).copied().unwrap_or(0);
    let leading = sup
        .table()
        .iter()
        .filter(|spec| !spec.companion && !spec.offers_no_workspace_symbols())
        .map(|spec| count(&spec.language))
        .max()
        .unwrap_or(0);
    let mut errors = Vec::new();
    let mut left_out = Vec::new();
    for spec in sup.table() {
        let files = count(&spec.language);
        if files == 0 {
            continue;
        }
        let assets = scan.asset_files.get(&spec.language).copied().unwrap_or(0);
        if !spec.companion && incidental(files, assets, leading) {
            if !left_out
                .iter()
                .any(|l: &String| l.starts_with(&format!("{} ", spec.language)))
            {
                left_out.push(format!(
                    "{} not searched: its {files} file(s) are mostly under asset folders; pass `file` to search from one of them",
                    spec.language
                ));
            }
            continue;
        }
        if spec.offers_no_workspace_symbols() {
            errors.push(format!(
                "{} ({} files) offers no workspace symbol search",
                spec.candidates
                    .first()
                    .map(|c| c.program())
                    .unwrap_or_default(),
                spec.language
            ));
            continue;
        }
        for root in scan.roots.get(&spec.language).into_iter().flatten().take(2) {
            match sup
                .client_for(&root.join(format!(
                    "_.{}",
                    spec.extensions.first().map(String::as_str).unwrap_or("x")
                )))
                .await
            {
                // Several marker folders may share one workspace server.
                Ok(c) if v.iter().any(|o| Arc::ptr_eq(o, &c)) => {}
                Ok(c) => v.push(c),
                Err(e) => errors.push(e.to_string()),
            }
        }
    }
    if v.is_empty() {
        errors.extend(left_out);
        return Err(ToolError::not_available(format!(
            "no language server can run for a workspace symbol search{}",
            if errors.is_empty() {
                String::new()
            } else {
                format!(": {}", errors.join("; "))
            }
        )));
    }
    Ok((v, left_out))
}

/// What one server's search came to.
enum Outcome {
    /// It answered, with this many matches.
    Answered(usize),
    /// It offers no workspace symbol search.
    Unsupported,
    /// It could not search: why, in a few words, and its error.
    CouldNotSearch { why: String, error: LspError },
    /// Its search was still under way at the call's bound (seconds); it goes on.
    StillSearching(f64),
    /// It had not answered in time; its part is what a scan of its files' declarations
    /// found.
    Scanned {
        /// Why the server's own answer is not here, in a few words.
        why: String,
        /// Matches found.
        matches: usize,
        /// Files of its language looked at, and of those parsed.
        files_seen: usize,
        files_parsed: usize,
        /// Whether the server's outline of each match's file lists it (`outline_confirm`).
        confirmed: bool,
    },
}

/// One server's part of the answer.
struct ServerSearch {
    server: String,
    language: String,
    outcome: Outcome,
    lines: Vec<String>,
    items: Vec<Value>,
    /// Lines that limit its matches (still indexing, projects left unloaded).
    caveats: Vec<String>,
}

impl ServerSearch {
    fn new(c: &LspClient, outcome: Outcome) -> ServerSearch {
        ServerSearch {
            server: c.server.clone(),
            language: c.language.clone(),
            outcome,
            lines: Vec::new(),
            items: Vec::new(),
            caveats: Vec::new(),
        }
    }

    /// Its entry in the structured result.
    fn json(&self) -> Value {
        let mut v = json!({"server": self.server, "language": self.language});
        match &self.outcome {
            Outcome::Answered(n) => {
                v["outcome"] = json!("answered");
                v["matches"] = json!(n);
            }
            Outcome::Unsupported => v["outcome"] = json!("unsupported"),
            Outcome::CouldNotSearch { why, error } => {
                v["outcome"] = json!("could_not_search");
                v["why"] = json!(why);
                // Its first lines: tsserver's refusal carries its whole stack trace.
                let error = error.to_string();
                let head: Vec<&str> = error.lines().take(2).collect();
                v["error"] = json!(budget::shorten(&head.join("\n"), 400));
            }
            Outcome::StillSearching(after) => {
                v["outcome"] = json!("still_searching");
                v["after_s"] = json!(after);
            }
            Outcome::Scanned {
                why,
                matches,
                files_seen,
                files_parsed,
                confirmed,
            } => {
                v["outcome"] = json!("scanned");
                v["confirmed_by_outline"] = json!(confirmed);
                v["why"] = json!(why);
                v["matches"] = json!(matches);
                v["files_seen"] = json!(files_seen);
                v["files_parsed"] = json!(files_parsed);
            }
        }
        v
    }

    /// The line that says why this server gave no matches.
    fn why_none(&self) -> String {
        match &self.outcome {
            Outcome::CouldNotSearch { why, .. } => {
                format!("{} could not search: {why}", self.server)
            }
            Outcome::StillSearching(after) => format!(
                "{} is still searching after {after}s (a first search of a large workspace reads every file); the search goes on, and asking again takes its answer",
                self.server
            ),
            _ => unsupported(&self.server),
        }
    }
}

/// The error of a search no server could answer: one server's own error as it was, or,
/// with several, each one's outcome in a line.
fn no_answer(mut searches: Vec<ServerSearch>) -> ToolError {
    if searches.len() == 1
        && let Some(s) = searches.pop()
    {
        return match s.outcome {
            Outcome::CouldNotSearch { error, .. } => error.into(),
            Outcome::StillSearching(_) => ToolError::timed_out(s.why_none()),
            _ => ToolError::not_available(unsupported(&s.server)),
        };
    }
    let each: Vec<String> = searches.iter().map(ServerSearch::why_none).collect();
    ToolError::not_available(each.join("; "))
}

/// How closely a symbol's `name` matches the query `q` (its last `.`/`::` part): 0 the
/// same name, 1 the same but for case, 2 a name that starts with it, 3 any other.
fn name_rank(name: &str, q: &str) -> u8 {
    let want = q.rsplit(['.', ':']).next().unwrap_or(q).trim();
    // Servers may print a callable with its parameters (`greet()`).
    let name = name.split('(').next().unwrap_or(name).trim();
    if name == want {
        0
    } else if name.eq_ignore_ascii_case(want) {
        1
    } else if name
        .to_ascii_lowercase()
        .starts_with(&want.to_ascii_lowercase())
    {
        2
    } else {
        3
    }
}

fn unsupported(server: &str) -> String {
    format!("{server} does not support workspace symbol search")
}

/// Why `e` kept a server from searching, in a few words for the answer's first line.
fn why_not(e: &LspError) -> String {
    match e {
        LspError::Server { message, .. } => {
            // tsserver's answer while no project holds the workspace's files: it loads one
            // for a `tsconfig.json`/`jsconfig.json`, or for an opened file.
            if message.lines().any(|l| l.trim() == "No Project.") {
                return "No Project (no tsconfig/jsconfig project is loaded)".into();
            }
            let line = message.lines().map(str::trim).find(|l| !l.is_empty());
            budget::shorten(line.unwrap_or("an error without a message"), 160)
        }
        LspError::Timeout { after, .. } => {
            format!("no answer within {}s", after.as_secs_f64())
        }
        LspError::Died { .. } => "it exited while searching; the next call restarts it".into(),
        LspError::Decode { message, .. } => {
            format!(
                "its answer could not be read: {}",
                budget::shorten(message, 160)
            )
        }
        LspError::StartTimeout(m) | LspError::Other(m) => budget::shorten(m, 160),
    }
}

/// [`search_with`], unless `c` has not answered within the declaration-scan wait and a scan
/// of its files' declarations (begun with the call) found matches first: then those, with a
/// first line that says they are not the server's answer. The server's search, once sent,
/// goes on for the next ask (see `search_in_flight`).
async fn search_or_scan(
    sup: &ServerSupervisor,
    ctx: &CallCtx,
    c: &Arc<LspClient>,
    q: &str,
) -> ServerSearch {
    let source = crate::grammar_symbols::grammar_source(&SymbolSources::for_run(&ctx.run));
    let (Some(after), Some(source)) = (sup.config().declaration_scan_after(), source) else {
        return search_with(sup, ctx, c, q).await;
    };
    if c.caps.workspace_symbol_provider.is_none() {
        return ServerSearch::new(c, Outcome::Unsupported);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let scan = tokio::spawn({
        let root = c.root.clone();
        let extensions = sup.extensions_of(&c.language);
        let q = q.to_string();
        let stop = Arc::clone(&stop);
        async move {
            let limits = ScanLimits::default();
            declaration_scan::scan(&source, &root, &extensions, &q, limits, &stop).await
        }
    });
    let search = search_with(sup, ctx, c, q);
    tokio::pin!(search);
    // A server that says it is still loading or indexing will not answer within the wait:
    // the scan's answer is taken as soon as it is there.
    let first_wait = if c.loading() || c.still_indexing() {
        std::time::Duration::ZERO
    } else {
        after
    };
    if let Ok(answered) = tokio::time::timeout(first_wait, &mut search).await {
        stop.store(true, Ordering::SeqCst);
        return answered;
    }
    let scanned = tokio::select! {
        answered = &mut search => {
            stop.store(true, Ordering::SeqCst);
            return answered;
        }
        scanned = scan => scanned,
    };
    match scanned {
        Ok(scanned) if !scanned.found.is_empty() => {
            let why = match query::indexing_caveat(c) {
                Some(_) => {
                    let so_far = c
                        .indexing_progress()
                        .map(|p| format!(" ({})", budget::shorten(&p, 80)))
                        .unwrap_or_default();
                    format!("{} is still indexing{so_far}", c.server)
                }
                None => format!(
                    "{} had not answered within {} s",
                    c.server,
                    after.as_secs_f64()
                ),
            };
            // The server's outline of the files, which it gives long before its first
            // workspace search (rust-analyzer), may confirm each match; its own answer is
            // still taken if it comes first.
            let confirmed = scanned.cut.is_none()
                && tokio::select! {
                    answered = &mut search => {
                        return answered;
                    }
                    confirmed = outline_confirm::all_confirmed(c, &scanned.found) => confirmed,
                };
            let renderer = Renderer::new(ctx.run.root(), c.encoding);
            let (lines, items) = scanned.lines(|p| renderer.display(p));
            let read_with = scanned.source.as_deref().unwrap_or("the bundled grammars");
            let mut caveats = vec![match confirmed {
                true => format!(
                    "({why}; the {} match(es) below are declarations read from the files with {read_with}, each confirmed by {}'s outline of its file — its workspace search goes on: ask again for what only it finds, such as items a macro makes)",
                    lines.len(),
                    c.server
                ),
                false => format!(
                    "(not final: {why}; its {} match(es) below are declarations read from the files with {read_with}, not {}'s answer — ask again shortly for it)",
                    lines.len(),
                    c.server
                ),
            }];
            if let Some(cut) = &scanned.cut {
                caveats.push(format!("(the scan was cut: {cut})"));
            }
            let mut s = ServerSearch::new(
                c,
                Outcome::Scanned {
                    why,
                    matches: lines.len(),
                    files_seen: scanned.files_seen,
                    files_parsed: scanned.files_parsed,
                    confirmed,
                },
            );
            s.lines = lines;
            s.items = items;
            s.caveats = caveats;
            s
        }
        // Nothing found by the scan: only the server can answer.
        _ => search.await,
    }
}

/// Asks `c` for the symbols matching `q`, after loading its projects and waiting (bounded)
/// until it can answer; never fails: what went wrong is the outcome. A search still under
/// way at the request timeout goes on (see `search_in_flight`), and this ask says so.
async fn search_with(
    sup: &ServerSupervisor,
    ctx: &CallCtx,
    c: &Arc<LspClient>,
    q: &str,
) -> ServerSearch {
    if c.caps.workspace_symbol_provider.is_none() {
        return ServerSearch::new(c, Outcome::Unsupported);
    }
    let mut caveats = Vec::new();
    // tsserver answers "No Project" and clangd nothing until a file of each project is
    // open; pyright is waited for until it knows its files.
    let loaded = load_projects(sup, c).await;
    caveats.extend(loaded.left_out_line(&c.server, "pass `file` to search from one of them"));
    // pyright and basedpyright search every file of their program once they know them:
    // their analysis of the workspace (minutes on a large one) holds nothing back.
    let ready = c.answers_before_analysis() || c.wait_ready().await;
    if !ready && let Some(note) = query::indexing_caveat(c) {
        caveats.push(note);
    }
    let _ = c.flush_external(&[]).await;
    let params = WorkspaceSymbolParams {
        query: q.to_string(),
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let searches = ctx.run.state(SearchesInFlight::default);
    let server = Arc::clone(c);
    let ask = move || {
        async move {
            query::with_warmup(
                &server,
                |v: &Option<WorkspaceSymbolResponse>| match v {
                    None => true,
                    Some(WorkspaceSymbolResponse::Flat(f)) => f.is_empty(),
                    Some(WorkspaceSymbolResponse::Nested(n)) => n.is_empty(),
                },
                || server.request_with::<WorkspaceSymbolRequest>(params.clone(), SEARCH_BOUND),
            )
            .await
        }
        .boxed()
    };
    let wait = sup.config().request_timeout();
    let resp = match searches.wait_for(c, q, wait, ask).await {
        Waited::Done(r) => r,
        Waited::StillSearching => {
            let mut s = ServerSearch::new(c, Outcome::StillSearching(wait.as_secs_f64()));
            s.caveats = caveats;
            return s;
        }
    };
    let resp = match resp {
        Ok(r) => r,
        Err(LspError::Server { code: -32601, .. }) => {
            return ServerSearch::new(c, Outcome::Unsupported);
        }
        Err(error) => {
            let why = why_not(&error);
            let mut s = ServerSearch::new(c, Outcome::CouldNotSearch { why, error });
            s.caveats = caveats;
            return s;
        }
    };
    let (lines, items) = symbol_lines(&mut Renderer::new(ctx.run.root(), c.encoding), resp);
    let mut s = ServerSearch::new(c, Outcome::Answered(lines.len()));
    s.lines = lines;
    s.items = items;
    s.caveats = caveats;
    s
}

/// One line and one structured entry per symbol of a server's answer.
fn symbol_lines(
    r: &mut Renderer,
    resp: Option<WorkspaceSymbolResponse>,
) -> (Vec<String>, Vec<Value>) {
    let mut lines = Vec::new();
    let mut items = Vec::new();
    match resp {
        None => {}
        Some(WorkspaceSymbolResponse::Flat(v)) => {
            for s in &v {
                let (l, j) = format::symbol_info_line(r, s);
                lines.push(l);
                items.push(j);
            }
        }
        Some(WorkspaceSymbolResponse::Nested(v)) => {
            for s in &v {
                let (loc, pj) = match &s.location {
                    lsp_types::OneOf::Left(l) => {
                        let p = r.location(l);
                        (
                            p.as_ref().map(|p| p.loc()).unwrap_or_default(),
                            p.map(|p| p.json()),
                        )
                    }
                    lsp_types::OneOf::Right(w) => (
                        uri_to_path(&w.uri)
                            .map(|p| r.display(&p))
                            .unwrap_or_default(),
                        None,
                    ),
                };
                let container = s
                    .container_name
                    .as_ref()
                    .map(|c| format!(" (in {c})"))
                    .unwrap_or_default();
                lines.push(format!(
                    "{} {}{container}  {loc}",
                    format::kind_name(s.kind),
                    s.name
                ));
                items.push(json!({"name": s.name, "kind": format::kind_name(s.kind), "container": s.container_name, "location": pj}));
            }
        }
    }
    (lines, items)
}
