//! Whose texts the shared server sees. Every conversation keeps its own view of the
//! documents it opened (their texts and its own version numbers); the server holds one set.
//! A conversation's request is answered only while the server's set equals that
//! conversation's view, so what one conversation proposes (a preview's unsaved text) or
//! has not yet synced never shapes another's answer or its "before". Views differ only
//! briefly (a preview, a write not yet seen by the others); the mux then switches the
//! server from one view to the other between requests.
//!
//! Only full-text document sync is carried (what the tools' own client sends); the server
//! gets its own version numbers, and its publications are handed to each conversation with
//! that conversation's version of the same text.

use std::collections::HashMap;

use serde_json::{Value, json};

/// One connection (one conversation's client of this server).
pub(crate) type ConnId = u64;

/// A document as the server has it.
#[derive(Debug, Clone)]
struct ServerDoc {
    text: String,
    version: i32,
    /// Whether its text differs from the file on disk (a preview's unsaved text).
    differs_from_disk: bool,
}

/// A document as one conversation has it.
#[derive(Debug, Clone)]
struct ConnDoc {
    text: String,
    version: i32,
    language_id: String,
    differs_from_disk: bool,
}

/// How many server→conversation version pairs are kept per document: publications come
/// for the last few texts at most.
const VERSIONS_KEPT: usize = 16;

/// The documents of one shared server and of each conversation using it.
#[derive(Debug, Default)]
pub(crate) struct Views {
    server: HashMap<String, ServerDoc>,
    conns: HashMap<ConnId, HashMap<String, ConnDoc>>,
    /// (conversation, uri) → (server version, the conversation's version) of equal texts.
    versions: HashMap<(ConnId, String), Vec<(i32, i32)>>,
    /// The last server version of each document closed in the server: opened again, it
    /// goes on from there, so a publication of the text before the close (on its way when
    /// the document was closed and opened again: a write handed over as a reopen) never
    /// carries the new text's version.
    closed_at: HashMap<String, i32>,
}

/// A document sync notification from a conversation, as the views need it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DocEvent {
    /// `didOpen`.
    Open {
        uri: String,
        language_id: String,
        version: i32,
        text: String,
    },
    /// `didChange` with the whole new text.
    Change {
        uri: String,
        version: i32,
        text: String,
    },
    /// `didClose`.
    Close { uri: String },
}

impl DocEvent {
    /// The sync event `method`/`params` carry; `None` for any other message, and for a
    /// change that is not a whole new text (a ranged change cannot be kept per view).
    pub(crate) fn parse(method: &str, params: &Value) -> Option<DocEvent> {
        let doc = params.get("textDocument")?;
        let uri = doc.get("uri")?.as_str()?.to_string();
        match method {
            "textDocument/didOpen" => Some(DocEvent::Open {
                uri,
                language_id: doc.get("languageId")?.as_str()?.to_string(),
                version: i32::try_from(doc.get("version")?.as_i64()?).ok()?,
                text: doc.get("text")?.as_str()?.to_string(),
            }),
            "textDocument/didChange" => {
                let changes = params.get("contentChanges")?.as_array()?;
                let last = changes.last()?;
                if last.get("range").is_some() {
                    return None;
                }
                Some(DocEvent::Change {
                    uri,
                    version: i32::try_from(doc.get("version")?.as_i64()?).ok()?,
                    text: last.get("text")?.as_str()?.to_string(),
                })
            }
            "textDocument/didClose" => Some(DocEvent::Close { uri }),
            _ => None,
        }
    }
}

impl Views {
    /// Takes in `conn`'s sync `event`; `differs_from_disk` says whether an opened or changed
    /// text differs from the file. Returns what must go to the server now (only a close
    /// of a document no conversation holds any more: other changes wait for
    /// [`Views::switch_to`]).
    pub(crate) fn take(
        &mut self,
        conn: ConnId,
        event: DocEvent,
        differs_from_disk: bool,
    ) -> Vec<Value> {
        // A text the server already has is `conn`'s from now on: what the server publishes
        // for it (after a change to a file nobody has open) is `conn`'s too, with no switch.
        if let DocEvent::Open {
            uri, version, text, ..
        }
        | DocEvent::Change { uri, version, text } = &event
            && let Some(s) = self.server.get(uri)
            && s.text == *text
        {
            let server_version = s.version;
            self.pair(conn, uri, server_version, *version);
        }
        let docs = self.conns.entry(conn).or_default();
        match event {
            DocEvent::Open {
                uri,
                language_id,
                version,
                text,
            } => {
                docs.insert(
                    uri,
                    ConnDoc {
                        text,
                        version,
                        language_id,
                        differs_from_disk,
                    },
                );
                Vec::new()
            }
            DocEvent::Change { uri, version, text } => {
                if let Some(d) = docs.get_mut(&uri) {
                    d.text = text;
                    d.version = version;
                    d.differs_from_disk = differs_from_disk;
                }
                Vec::new()
            }
            DocEvent::Close { uri } => {
                docs.remove(&uri);
                self.versions.remove(&(conn, uri.clone()));
                self.close_if_unheld(&uri)
            }
        }
    }

    /// Whether the server's documents are `conn`'s view: each of its documents with its
    /// text, and no other document with a text the disk does not have.
    pub(crate) fn matches(&self, conn: ConnId) -> bool {
        let empty = HashMap::new();
        let docs = self.conns.get(&conn).unwrap_or(&empty);
        let own_match = docs
            .iter()
            .all(|(uri, d)| self.server.get(uri).is_some_and(|s| s.text == d.text));
        let others_clean = self
            .server
            .iter()
            .filter(|(uri, _)| !docs.contains_key(*uri))
            .all(|(_, s)| !s.differs_from_disk);
        own_match && others_clean
    }

    /// The notifications that make the server's documents `conn`'s view. `disk_text` reads
    /// a document's file (for a document another conversation left with an unsaved text).
    pub(crate) fn switch_to(
        &mut self,
        conn: ConnId,
        disk_text: impl Fn(&str) -> Option<String>,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        let docs = self.conns.get(&conn).cloned().unwrap_or_default();
        for (uri, d) in &docs {
            let version = match self.server.get_mut(uri) {
                None => {
                    let version = self.closed_at.remove(uri).map_or(1, |v| v + 1);
                    out.push(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                        "params": {"textDocument": {"uri": uri, "languageId": d.language_id,
                            "version": version, "text": d.text}}}));
                    self.server.insert(
                        uri.clone(),
                        ServerDoc {
                            text: d.text.clone(),
                            version,
                            differs_from_disk: d.differs_from_disk,
                        },
                    );
                    version
                }
                Some(s) if s.text != d.text => {
                    s.version += 1;
                    s.text = d.text.clone();
                    s.differs_from_disk = d.differs_from_disk;
                    out.push(change(uri, s.version, &s.text));
                    s.version
                }
                Some(s) => s.version,
            };
            self.pair(conn, uri, version, d.version);
        }
        let stale: Vec<String> = self
            .server
            .iter()
            .filter(|(uri, s)| !docs.contains_key(*uri) && s.differs_from_disk)
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in stale {
            let held = self
                .conns
                .iter()
                .any(|(c, d)| *c != conn && d.contains_key(&uri));
            if !held {
                if let Some(s) = self.server.remove(&uri) {
                    self.closed_at.insert(uri.clone(), s.version);
                }
                out.push(close(&uri));
                continue;
            }
            let text = disk_text(&uri).unwrap_or_default();
            if let Some(s) = self.server.get_mut(&uri) {
                s.version += 1;
                s.text = text;
                s.differs_from_disk = false;
                out.push(change(&uri, s.version, &s.text));
            }
        }
        out
    }

    /// Records that the server's `server_version` of `uri` is `conn`'s `own` version.
    fn pair(&mut self, conn: ConnId, uri: &str, server_version: i32, own: i32) {
        let pairs = self.versions.entry((conn, uri.to_string())).or_default();
        if pairs.last().map(|p| p.0) != Some(server_version) {
            pairs.push((server_version, own));
            if pairs.len() > VERSIONS_KEPT {
                pairs.remove(0);
            }
        } else if let Some(last) = pairs.last_mut() {
            last.1 = own;
        }
    }

    /// Whether `conn` shows the server a text the disk does not have (a preview's).
    pub(crate) fn has_unsaved(&self, conn: ConnId) -> bool {
        self.conns
            .get(&conn)
            .is_some_and(|d| d.values().any(|doc| doc.differs_from_disk))
    }

    /// `conn` has gone: its documents no other conversation holds are closed.
    pub(crate) fn leave(&mut self, conn: ConnId) -> Vec<Value> {
        let uris: Vec<String> = self
            .conns
            .remove(&conn)
            .map(|d| d.into_keys().collect())
            .unwrap_or_default();
        self.versions.retain(|(c, _), _| *c != conn);
        uris.iter().flat_map(|u| self.close_if_unheld(u)).collect()
    }

    /// The version `conn` should see on a publication for `uri` at the server's `version`:
    /// `None` when the publication is not for a text `conn` has (it is not handed over),
    /// `Some(None)` for a document `conn` has not opened or a publication without version.
    pub(crate) fn version_for(
        &self,
        conn: ConnId,
        uri: &str,
        version: Option<i64>,
    ) -> Option<Option<i64>> {
        let opened = self.conns.get(&conn).is_some_and(|d| d.contains_key(uri));
        if !opened {
            return Some(None);
        }
        let Some(v) = version else {
            return Some(None);
        };
        self.versions
            .get(&(conn, uri.to_string()))?
            .iter()
            .rev()
            .find(|(server, _)| i64::from(*server) == v)
            .map(|(_, own)| Some(i64::from(*own)))
    }

    /// How many documents the server has open.
    #[cfg(test)]
    pub(crate) fn server_documents(&self) -> usize {
        self.server.len()
    }

    fn close_if_unheld(&mut self, uri: &str) -> Vec<Value> {
        if self.conns.values().any(|d| d.contains_key(uri)) {
            return Vec::new();
        }
        let Some(closed) = self.server.remove(uri) else {
            return Vec::new();
        };
        self.closed_at.insert(uri.to_string(), closed.version);
        vec![close(uri)]
    }
}

fn change(uri: &str, version: i32, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}]}})
}

fn close(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "textDocument/didClose",
        "params": {"textDocument": {"uri": uri}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(uri: &str, version: i32, text: &str) -> DocEvent {
        DocEvent::Open {
            uri: uri.into(),
            language_id: "python".into(),
            version,
            text: text.into(),
        }
    }

    fn methods(out: &[Value]) -> Vec<(String, i64)> {
        out.iter()
            .map(|m| {
                (
                    m["method"].as_str().unwrap_or("").to_string(),
                    m["params"]["textDocument"]["version"].as_i64().unwrap_or(0),
                )
            })
            .collect()
    }

    #[test]
    fn two_conversations_with_the_same_text_share_one_open_document() {
        let mut v = Views::default();
        v.take(1, open("file:///a.py", 1, "x = 1\n"), false);
        assert!(!v.matches(1));
        let out = v.switch_to(1, |_| None);
        assert_eq!(methods(&out), vec![("textDocument/didOpen".into(), 1)]);
        v.take(2, open("file:///a.py", 7, "x = 1\n"), false);
        assert!(v.matches(2), "same text: nothing to switch");
        // A publication comes before any request of 2's (a file nobody has open changed).
        assert_eq!(v.version_for(2, "file:///a.py", Some(1)), Some(Some(7)));
        assert!(v.switch_to(2, |_| None).is_empty());
        assert_eq!(v.version_for(2, "file:///a.py", Some(1)), Some(Some(7)));
        assert_eq!(v.version_for(1, "file:///a.py", Some(1)), Some(Some(1)));
    }

    #[test]
    fn a_preview_of_one_conversation_is_never_the_view_of_another() {
        let mut v = Views::default();
        v.take(1, open("file:///a.py", 1, "x = 1\n"), false);
        v.switch_to(1, |_| None);
        v.take(
            1,
            DocEvent::Change {
                uri: "file:///a.py".into(),
                version: 2,
                text: "x = (\n".into(),
            },
            true,
        );
        let out = v.switch_to(1, |_| None);
        assert_eq!(methods(&out), vec![("textDocument/didChange".into(), 2)]);
        // Conversation 2 never opened a.py: the server's unsaved text is not its view.
        assert!(!v.matches(2));
        let out = v.switch_to(2, |_| Some("x = 1\n".into()));
        assert_eq!(
            methods(&out),
            vec![("textDocument/didChange".into(), 3)],
            "a.py is still held by 1: back to the disk's text, not closed"
        );
        assert!(v.matches(2));
        assert!(!v.matches(1));
        // A publication for server version 2 (the preview) is 1's alone.
        assert_eq!(v.version_for(1, "file:///a.py", Some(2)), Some(Some(2)));
        assert_eq!(v.version_for(1, "file:///a.py", Some(3)), None);
    }

    #[test]
    fn a_document_is_closed_when_its_last_conversation_closes_or_leaves_it() {
        let mut v = Views::default();
        v.take(1, open("file:///a.py", 1, "a\n"), false);
        v.take(2, open("file:///a.py", 1, "a\n"), false);
        v.switch_to(1, |_| None);
        assert!(
            v.take(
                1,
                DocEvent::Close {
                    uri: "file:///a.py".into()
                },
                false
            )
            .is_empty()
        );
        assert_eq!(
            methods(&v.leave(2)),
            vec![("textDocument/didClose".into(), 0)]
        );
        assert_eq!(v.server_documents(), 0);
    }

    #[test]
    fn a_document_opened_again_goes_on_from_its_last_server_version() {
        let uri = "file:///a.py";
        let mut v = Views::default();
        v.take(1, open(uri, 1, "x = 1\n"), false);
        v.switch_to(1, |_| None);
        // Handed over again as a close and an open at the conversation's next version.
        let closed = v.take(1, DocEvent::Close { uri: uri.into() }, false);
        assert_eq!(methods(&closed), vec![("textDocument/didClose".into(), 0)]);
        v.take(1, open(uri, 2, "x = 2\n"), false);
        let out = v.switch_to(1, |_| None);
        assert_eq!(methods(&out), vec![("textDocument/didOpen".into(), 2)]);
        // A publication of the text before the close is not the new one's.
        assert_eq!(v.version_for(1, uri, Some(1)), None);
        assert_eq!(v.version_for(1, uri, Some(2)), Some(Some(2)));
    }

    #[test]
    fn only_whole_text_changes_are_taken() {
        let ranged = json!({"textDocument": {"uri": "file:///a", "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                "end": {"line": 0, "character": 1}}, "text": "y"}]});
        assert_eq!(DocEvent::parse("textDocument/didChange", &ranged), None);
        let whole = json!({"textDocument": {"uri": "file:///a", "version": 2},
            "contentChanges": [{"text": "y"}]});
        assert_eq!(
            DocEvent::parse("textDocument/didChange", &whole),
            Some(DocEvent::Change {
                uri: "file:///a".into(),
                version: 2,
                text: "y".into()
            })
        );
    }
}
