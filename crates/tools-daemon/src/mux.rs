//! One language server shared by several conversations: the daemon's side of each
//! conversation's LSP stream, multiplexed onto the server's one stream.
//!
//! - Requests get the mux's own ids and their answers go back to the asker with its id;
//!   a conversation that leaves has its requests cancelled.
//! - `initialize` reaches the server once, naming the daemon as the process whose end ends
//!   the server; a later conversation is answered the first answer, then the history of
//!   what the server said unasked ([`crate::history`]), so its client knows the server is
//!   loaded, and the latest diagnostics once it first reads diagnostics
//!   ([`crate::replay`]). `initialized` and the
//!   settings go once; `shutdown` and `exit` end the conversation's use, not the server.
//! - Documents: each conversation's own view ([`crate::views`]); a request is sent only
//!   while the server holds the asker's view (else it waits until the others' requests
//!   are answered, and the server is switched); diagnostics go to the conversations whose
//!   view the server holds, with their own version numbers.
//! - What the server asks (`workspace/configuration`, progress tokens) goes to every
//!   conversation; the first answer is the server's. With none connected the mux answers
//!   itself, as the tools' client would.
//!
//! One task owns all of it; the server's and the conversations' readers feed it events.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Instant;

use lsp_types::notification::Notification;
use lsp_types::request::Request;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tools_core::{FileChange, FolderWatch};

use crate::changes::{ChangeSets, FileChangesTaken, TakeFileChanges, TakeFileChangesParams};
use crate::history::History;
use crate::outgoing::{Outgoing, encode_publication};
use crate::replay::{DiagnosticsReplayed, ReplayDiagnostics};
use crate::views::{ConnId, DocEvent, Views};
use crate::wire::setting_at;

/// What the mux's task is told.
pub(crate) enum Event {
    Join {
        conn: ConnId,
        label: String,
        out: mpsc::UnboundedSender<Outgoing>,
    },
    FromConn {
        conn: ConnId,
        msg: Value,
    },
    Leave {
        conn: ConnId,
    },
    FromServer(Value),
    ServerClosed,
    Stop,
    /// The watch of the server's root is ready (`None`: it could not start).
    Watching(Option<FolderWatch>),
}

/// Where the server's `initialize` stands.
enum Init {
    NotSent,
    /// Sent with the mux's id; these conversations wait for its answer (with their ids).
    InFlight(i64, Vec<(ConnId, Value)>),
    /// Answered: every later `initialize` gets this.
    Done(Value),
}

/// One connected conversation.
struct Conn {
    out: mpsc::UnboundedSender<Outgoing>,
    /// Whether its `initialize` was answered (before that it gets nothing unasked).
    ready: bool,
    /// Its requests the server is answering now.
    in_flight: usize,
    /// Whether it has had the latest diagnostics of the documents published before it joined.
    replay: Replay,
}

/// Where a conversation stands with the diagnostics the server published before it joined:
/// sent when it first reads diagnostics, not when it joins (a navigation query's answer would
/// wait behind them).
enum Replay {
    /// Not sent yet; the documents published to it since it joined (the replay would repeat
    /// them: its client would count a second publish of a file).
    Due(HashSet<String>),
    Sent,
}

pub(crate) struct Mux {
    settings: Value,
    views: Views,
    conns: HashMap<ConnId, Conn>,
    to_server: mpsc::UnboundedSender<Value>,
    next_id: i64,
    /// The mux's request id → the asker and its own id (`None`: the asker left).
    pending: HashMap<i64, (Option<ConnId>, Value)>,
    /// The id the mux gave a server request's copy → the server's id, and who owes an
    /// answer: only requests not answered yet (the first answer removes every copy).
    asked: HashMap<String, (Value, ConnId)>,
    init: Init,
    initialized_sent: bool,
    settings_sent: Option<Value>,
    history: History,
    /// The latest publication per document.
    published: HashMap<String, Value>,
    /// Requests waiting for the server to hold their conversation's view.
    queued: VecDeque<(ConnId, Value)>,
    /// The conversation that last changed a document (the view the server returns to).
    last_changer: Option<ConnId>,
    /// A conversation previewing (its view has unsaved texts), and since when: the server
    /// keeps its view until it has put the disk's texts back (or [`PREVIEW_HOLD_LIMIT`]),
    /// so the preview's diagnostics come; other conversations' requests wait meanwhile,
    /// as they do behind a preview in one process.
    previewer: Option<(ConnId, Instant)>,
    /// Files changed under the server's root: each conversation's client asks for its own
    /// ([`TakeFileChanges`]) and tells the server; told to the server by the mux while no
    /// conversation is connected, so a warm server is not stale when the next one comes.
    changes: ChangeSets,
}

/// Most changed files told to the server in one `workspace/didChangeWatchedFiles`.
const MAX_WATCHED_EVENTS: usize = 2_000;

/// The longest a preview keeps the server's view from the other conversations.
const PREVIEW_HOLD_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Mux {
    /// A mux for a server just started: `settings` answer `workspace/configuration` while
    /// no conversation is connected; what goes to the server goes to `to_server`.
    pub(crate) fn new(settings: Value, to_server: mpsc::UnboundedSender<Value>) -> Mux {
        Mux {
            settings,
            views: Views::default(),
            conns: HashMap::new(),
            to_server,
            next_id: 1,
            pending: HashMap::new(),
            asked: HashMap::new(),
            init: Init::NotSent,
            initialized_sent: false,
            settings_sent: None,
            history: History::default(),
            published: HashMap::new(),
            queued: VecDeque::new(),
            last_changer: None,
            previewer: None,
            changes: ChangeSets::default(),
        }
    }

    /// Runs the mux until the server is gone or stopped; `left` hears of each conversation
    /// that leaves.
    pub(crate) async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Event>,
        left: impl Fn(ConnId),
    ) {
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(500));
        loop {
            let event = tokio::select! {
                event = rx.recv() => match event {
                    Some(e) => e,
                    None => break,
                },
                // A preview's hold ends by time too; an idle server hears of changed files.
                _ = tick.tick() => {
                    self.advance();
                    self.tell_changes_while_idle();
                    continue;
                }
            };
            match event {
                Event::Join { conn, label, out } => self.join(conn, &label, out),
                Event::FromConn { conn, msg } => self.take_from_conn(conn, msg),
                Event::Leave { conn } => {
                    self.leave(conn);
                    left(conn);
                }
                Event::FromServer(msg) => self.take_from_server(msg),
                Event::Watching(watch) => self.changes.watching(watch),
                Event::ServerClosed => break,
                Event::Stop => {
                    self.send(json!({"jsonrpc": "2.0", "id": "daemon-shutdown",
                        "method": "shutdown"}));
                    self.send(json!({"jsonrpc": "2.0", "method": "exit"}));
                    break;
                }
            }
            self.advance();
        }
        // Every conversation's stream ends: its client sees the server gone.
        self.conns.clear();
    }

    /// A conversation connected: it is served once it has sent `initialize`.
    fn join(&mut self, conn: ConnId, label: &str, out: mpsc::UnboundedSender<Outgoing>) {
        tracing::debug!(conn, %label, "joined");
        self.changes.join(conn);
        self.conns.insert(
            conn,
            Conn {
                out,
                ready: false,
                in_flight: 0,
                replay: Replay::Due(HashSet::new()),
            },
        );
    }

    /// With no conversation connected, tells the server of the files changed under its
    /// root since the last one left (and while conversations were connected: their own
    /// clients told it of what they saw, a repeat does no harm once none is waiting).
    fn tell_changes_while_idle(&mut self) {
        if !self.initialized_sent {
            return;
        }
        let changes: Vec<Value> = self
            .changes
            .take_idle()
            .into_iter()
            .filter_map(|(path, change)| {
                let uri = tools_core::platform::path_to_file_uri(&path).ok()?;
                let kind = match change {
                    FileChange::Created => 1,
                    FileChange::Changed => 2,
                    FileChange::Deleted => 3,
                };
                Some(json!({"uri": uri.as_str(), "type": kind}))
            })
            .take(MAX_WATCHED_EVENTS)
            .collect();
        if !changes.is_empty() {
            tracing::debug!(
                files = changes.len(),
                "told an idle server of changed files"
            );
            self.send(
                json!({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles",
                "params": {"changes": changes}}),
            );
        }
    }

    fn send(&self, msg: Value) {
        let method = msg
            .get("method")
            .and_then(|m| m.as_str())
            .unwrap_or("(answer)");
        tracing::trace!(target: "tools_daemon::wire", "-> {method}");
        let _ = self.to_server.send(msg);
    }

    fn reply(&self, conn: ConnId, msg: Value) {
        let method = msg
            .get("method")
            .and_then(|m| m.as_str())
            .unwrap_or("(answer)");
        tracing::trace!(target: "tools_daemon::wire", conn, "<- {method} {}", msg.pointer("/params/version").map(|v| v.to_string()).unwrap_or_default());
        if let Some(c) = self.conns.get(&conn) {
            let _ = c.out.send(Outgoing::Message(msg));
        }
    }

    fn take_from_conn(&mut self, conn: ConnId, mut msg: Value) {
        let (method, id) = method_and_id(&msg);
        match (method.as_deref(), id) {
            (Some("initialize"), Some(id)) => self.initialize(conn, id, msg),
            (Some("shutdown"), Some(id)) => {
                self.reply(conn, json!({"jsonrpc": "2.0", "id": id, "result": null}))
            }
            (Some(TakeFileChanges::METHOD), Some(id)) => self.answer_file_changes(conn, id, &msg),
            (Some(_), Some(_)) => self.queued.push_back((conn, msg)),
            (Some(method), None) => self.conn_notification(conn, method, msg),
            (None, Some(id)) => {
                // An answer to a server request's copy.
                let key = id_text(&id);
                // The first answer is the server's; the other copies are forgotten, so a
                // later answer to one of them finds nothing.
                if let Some((server_id, _)) = self.asked.remove(&key) {
                    self.asked.retain(|_, (sid, _)| *sid != server_id);
                    if let Some(m) = msg.as_object_mut() {
                        m.insert("id".into(), server_id);
                        self.send(msg);
                    }
                }
            }
            (None, None) => {}
        }
    }

    fn initialize(&mut self, conn: ConnId, id: Value, msg: Value) {
        match &mut self.init {
            Init::NotSent => {
                let own = self.fresh_id();
                let mut msg = msg;
                msg["id"] = own.into();
                // Servers exit when the process named here is gone (pyright checks it every
                // few seconds): that is the daemon, not the conversation that came first.
                if let Some(params) = msg.get_mut("params").and_then(Value::as_object_mut) {
                    params.insert("processId".into(), std::process::id().into());
                }
                self.send(msg);
                self.init = Init::InFlight(own, vec![(conn, id)]);
            }
            Init::InFlight(_, waiters) => waiters.push((conn, id)),
            Init::Done(result) => {
                let result = result.clone();
                self.welcome(conn, id, result);
            }
        }
    }

    /// Answers `conn`'s `initialize` and brings it up to date.
    fn welcome(&mut self, conn: ConnId, id: Value, result: Value) {
        self.reply(conn, json!({"jsonrpc": "2.0", "id": id, "result": result}));
        for msg in self.history.replay() {
            self.reply(conn, msg);
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            c.ready = true;
        }
    }

    /// Sends `conn` the latest diagnostics of the documents published before it joined (once),
    /// then [`DiagnosticsReplayed`]. Left out, as when it joined before: all of them while the
    /// server holds another conversation's unsaved texts.
    fn replay_diagnostics(&mut self, conn: ConnId) {
        let Some(Replay::Due(had)) = self
            .conns
            .get_mut(&conn)
            .map(|c| std::mem::replace(&mut c.replay, Replay::Sent))
        else {
            return;
        };
        if self.views.matches(conn) {
            let replay = self.encoded_publications(conn, &had);
            tracing::trace!(target: "tools_daemon::wire", conn, documents = self.published.len(), bytes = replay.len(), "<- the latest diagnostics");
            if let Some(c) = self.conns.get(&conn) {
                let _ = c.out.send(Outgoing::Frames(replay));
            }
        }
        self.reply(
            conn,
            json!({"jsonrpc": "2.0", "method": DiagnosticsReplayed::METHOD}),
        );
    }

    /// The latest publication of every document but those in `had` as `conn` should get
    /// them, encoded in one piece: a warm server of a large project has thousands (one per
    /// file it checked; 12 MB on Django).
    fn encoded_publications(&self, conn: ConnId, had: &HashSet<String>) -> Vec<u8> {
        let mut frames = Vec::new();
        for (uri, params) in self.published.iter().filter(|(uri, _)| !had.contains(*uri)) {
            self.encode_publication_for(conn, uri, params, &mut frames);
        }
        frames
    }

    /// Answers a conversation's [`TakeFileChanges`] from its own set of changes.
    fn answer_file_changes(&mut self, conn: ConnId, id: Value, msg: &Value) {
        let params: TakeFileChangesParams = msg
            .get("params")
            .cloned()
            .and_then(|p| serde_json::from_value(p).ok())
            .unwrap_or_default();
        let taken = match self.changes.take(conn, &params.except) {
            Some(changes) => FileChangesTaken {
                watching: true,
                changes,
            },
            None => FileChangesTaken::default(),
        };
        let result = serde_json::to_value(taken).unwrap_or(Value::Null);
        self.reply(conn, json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn conn_notification(&mut self, conn: ConnId, method: &str, msg: Value) {
        if method == ReplayDiagnostics::METHOD {
            self.replay_diagnostics(conn);
            return;
        }
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        if let Some(event) = DocEvent::parse(method, &params) {
            let differs = match &event {
                DocEvent::Open { uri, text, .. } | DocEvent::Change { uri, text, .. } => {
                    disk_text(uri).as_deref() != Some(text.as_str())
                }
                DocEvent::Close { .. } => false,
            };
            if !matches!(event, DocEvent::Close { .. }) {
                self.last_changer = Some(conn);
            }
            for m in self.views.take(conn, event, differs) {
                self.send(m);
            }
            if self.views.has_unsaved(conn) {
                if self.previewer.map(|(c, _)| c) != Some(conn) {
                    tracing::debug!(conn, "previewing: the server keeps its view");
                    self.previewer = Some((conn, Instant::now()));
                }
            } else if self.previewer.map(|(c, _)| c) == Some(conn) {
                tracing::debug!(conn, "preview over");
                self.previewer = None;
            }
            return;
        }
        match method {
            "initialized" => {
                if !std::mem::replace(&mut self.initialized_sent, true) {
                    self.send(msg);
                }
            }
            "workspace/didChangeConfiguration" => {
                if self.settings_sent.as_ref() != Some(&params) {
                    self.settings_sent = Some(params);
                    self.send(msg);
                }
            }
            "exit" => self.leave(conn),
            "$/cancelRequest" => {
                let theirs = params.get("id").cloned().unwrap_or(Value::Null);
                let own = self
                    .pending
                    .iter()
                    .find(|(_, (c, id))| *c == Some(conn) && *id == theirs)
                    .map(|(own, _)| *own);
                if let Some(own) = own {
                    self.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest",
                        "params": {"id": own}}));
                } else {
                    self.queued
                        .retain(|(c, m)| !(*c == conn && m.get("id") == Some(&theirs)));
                    self.reply(
                        conn,
                        json!({"jsonrpc": "2.0", "id": theirs,
                        "error": {"code": -32800, "message": "cancelled before it was sent"}}),
                    );
                }
            }
            _ => self.send(msg),
        }
    }

    fn take_from_server(&mut self, mut msg: Value) {
        let (method, id) = method_and_id(&msg);
        match (method.as_deref(), id) {
            (None, Some(id)) => {
                let Some(own) = id.as_i64() else { return };
                if let Init::InFlight(init_id, _) = &self.init
                    && *init_id == own
                {
                    let Init::InFlight(_, waiters) =
                        std::mem::replace(&mut self.init, Init::NotSent)
                    else {
                        return;
                    };
                    let result = msg.get("result").cloned();
                    match result {
                        Some(result) => {
                            self.init = Init::Done(result.clone());
                            for (conn, id) in waiters {
                                self.welcome(conn, id, result.clone());
                            }
                        }
                        None => {
                            // Refused: each waiter gets the refusal; the next asks again.
                            for (conn, id) in waiters {
                                let mut m = msg.clone();
                                m["id"] = id;
                                self.reply(conn, m);
                            }
                        }
                    }
                    return;
                }
                let Some((asker, theirs)) = self.pending.remove(&own) else {
                    return;
                };
                let Some(conn) = asker else { return };
                msg["id"] = theirs;
                self.reply(conn, msg);
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.in_flight = c.in_flight.saturating_sub(1);
                }
            }
            (Some(method), Some(id)) => self.server_request(method, id, msg),
            (Some("textDocument/publishDiagnostics"), None) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                    return;
                };
                self.published.insert(uri.to_string(), params.clone());
                tracing::trace!(target: "tools_daemon::wire", uri, version = ?params.get("version"), matching = ?self.conns.keys().filter(|c| self.views.matches(**c)).collect::<Vec<_>>(), "published");
                let to: Vec<ConnId> = self
                    .conns
                    .iter()
                    .filter(|(c, conn)| conn.ready && self.views.matches(**c))
                    .map(|(c, _)| *c)
                    .collect();
                for conn in to {
                    let mut frame = Vec::new();
                    if !self.encode_publication_for(conn, uri, &params, &mut frame) {
                        continue;
                    }
                    tracing::trace!(target: "tools_daemon::wire", conn, "<- textDocument/publishDiagnostics");
                    if let Some(c) = self.conns.get_mut(&conn) {
                        let _ = c.out.send(Outgoing::Frames(frame));
                        if let Replay::Due(had) = &mut c.replay {
                            had.insert(uri.to_string());
                        }
                    }
                }
            }
            (Some(_), None) => {
                self.history.record(&msg);
                for c in self.conns.values().filter(|c| c.ready) {
                    let _ = c.out.send(Outgoing::Message(msg.clone()));
                }
            }
            (None, None) => {}
        }
    }

    /// Appends to `frames` the publication `params` of document `uri` as `conn` should get
    /// it (at its own version); `false` when it is not for a text `conn` has.
    fn encode_publication_for(
        &self,
        conn: ConnId,
        uri: &str,
        params: &Value,
        frames: &mut Vec<u8>,
    ) -> bool {
        let version = params.get("version").and_then(Value::as_i64);
        let Some(own) = self.views.version_for(conn, uri, version) else {
            return false;
        };
        let empty = Value::Array(Vec::new());
        let diagnostics = params.get("diagnostics").unwrap_or(&empty);
        encode_publication(frames, uri, own, diagnostics);
        true
    }

    fn server_request(&mut self, method: &str, id: Value, msg: Value) {
        let ready: Vec<ConnId> = self
            .conns
            .iter()
            .filter(|(_, c)| c.ready)
            .map(|(c, _)| *c)
            .collect();
        if ready.is_empty() {
            let answer = self.own_answer(method, msg.get("params"));
            self.send(json!({"jsonrpc": "2.0", "id": id, "result": answer}));
            return;
        }
        for conn in ready {
            let copy_id = format!("daemon-{}", self.fresh_id());
            self.asked.insert(copy_id.clone(), (id.clone(), conn));
            let mut copy = msg.clone();
            copy["id"] = copy_id.into();
            self.reply(conn, copy);
        }
    }

    /// What the tools' client answers to a server's request, for when no conversation is
    /// connected to answer it.
    fn own_answer(&self, method: &str, params: Option<&Value>) -> Value {
        match method {
            "workspace/configuration" => {
                let items = params
                    .and_then(|p| p.get("items"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                Value::Array(
                    items
                        .iter()
                        .map(|i| {
                            setting_at(&self.settings, i.get("section").and_then(Value::as_str))
                        })
                        .collect(),
                )
            }
            "workspace/applyEdit" => json!({"applied": false,
                "failureReason": "edits are applied only through the tools"}),
            _ => Value::Null,
        }
    }

    fn leave(&mut self, conn: ConnId) {
        if self.conns.remove(&conn).is_none() {
            return;
        }
        self.changes.leave(conn);
        for m in self.views.leave(conn) {
            self.send(m);
        }
        let mine: Vec<i64> = self
            .pending
            .iter()
            .filter(|(_, (c, _))| *c == Some(conn))
            .map(|(own, _)| *own)
            .collect();
        for own in mine {
            if let Some(p) = self.pending.get_mut(&own) {
                p.0 = None;
            }
            self.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest",
                "params": {"id": own}}));
        }
        self.queued.retain(|(c, _)| *c != conn);
        if let Init::InFlight(_, waiters) = &mut self.init {
            waiters.retain(|(c, _)| *c != conn);
        }
        // Server requests only this conversation still owed: answered by the mux.
        let owed: Vec<(String, Value)> = self
            .asked
            .iter()
            .filter(|(_, (_, c))| *c == conn)
            .map(|(k, (sid, _))| (k.clone(), sid.clone()))
            .collect();
        for (key, sid) in owed {
            self.asked.remove(&key);
            let others = self.asked.values().any(|(s, _)| *s == sid);
            if !others {
                self.send(json!({"jsonrpc": "2.0", "id": sid, "result": null}));
            }
        }
        if self.last_changer == Some(conn) {
            self.last_changer = None;
        }
    }

    /// Sends what can be sent: queued requests whose conversation's view the server holds
    /// (switching the server to a waiting conversation's view once nobody else's requests
    /// are in flight and no other conversation previews), and otherwise keeps the server in
    /// the previewer's view, or returns it to the last changer's.
    fn advance(&mut self) {
        if let Some((conn, since)) = self.previewer
            && (!self.conns.contains_key(&conn) || since.elapsed() >= PREVIEW_HOLD_LIMIT)
        {
            self.previewer = None;
        }
        if let Some((conn, _)) = self.previewer
            && !self.views.matches(conn)
            && !self.others_in_flight(conn)
        {
            for m in self.views.switch_to(conn, disk_text) {
                self.send(m);
            }
        }
        let mut i = 0;
        while i < self.queued.len() {
            let conn = self.queued[i].0;
            if !self.conns.contains_key(&conn) {
                self.queued.remove(i);
                continue;
            }
            if !self.views.matches(conn) {
                // Behind a preview of another conversation: wait for its disk texts.
                if self.previewer.is_some_and(|(p, _)| p != conn) || self.others_in_flight(conn) {
                    i += 1;
                    continue;
                }
                for m in self.views.switch_to(conn, disk_text) {
                    self.send(m);
                }
            }
            let Some((_, msg)) = self.queued.remove(i) else {
                return;
            };
            self.forward_request(conn, msg);
        }
        if self.previewer.is_none()
            && let Some(conn) = self.last_changer
            && !self.views.matches(conn)
            && !self.others_in_flight(conn)
        {
            for m in self.views.switch_to(conn, disk_text) {
                self.send(m);
            }
        }
    }

    fn forward_request(&mut self, conn: ConnId, mut msg: Value) {
        let own = self.fresh_id();
        let theirs = msg.get("id").cloned().unwrap_or(Value::Null);
        self.pending.insert(own, (Some(conn), theirs));
        msg["id"] = own.into();
        if let Some(c) = self.conns.get_mut(&conn) {
            c.in_flight += 1;
        }
        self.send(msg);
    }

    fn others_in_flight(&self, conn: ConnId) -> bool {
        self.conns
            .iter()
            .any(|(c, s)| *c != conn && s.in_flight > 0)
    }

    fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }
}

/// A message's method (a request or notification) and id (a request or answer).
fn method_and_id(msg: &Value) -> (Option<String>, Option<Value>) {
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    (method, msg.get("id").cloned())
}

fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text of the file a `file://` URI names, if it can be read.
fn disk_text(uri: &str) -> Option<String> {
    let path: PathBuf = tools_core::platform::file_uri_to_path(uri).ok()?;
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
#[path = "mux_tests.rs"]
mod tests;
