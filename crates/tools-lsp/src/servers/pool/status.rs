//! What `lsp status` says of a shared server beside what it says of any server: which
//! sessions share it, the memory it holds (with what it started) and how long since a
//! session last asked for it.

use std::path::Path;

use serde_json::{Value, json};

use super::SharedServer;
use super::rss::mib;

/// Sessions named per server, at most (the rest are counted).
pub const SESSIONS_SHOWN: usize = 5;

/// The text to append inside a running server's parenthesis (`, shared by 2 sessions: a,
/// b, 412 MiB, idle 3s`) and the same facts for the structured result; empty for a server
/// that is not from a pool.
pub fn sharing(servers: Option<&[SharedServer]>, language: &str, root: &Path) -> (String, Value) {
    let Some(s) = servers
        .into_iter()
        .flatten()
        .find(|s| s.key.language == language && s.key.root == root)
    else {
        return (String::new(), json!({}));
    };
    let mut names: Vec<String> = s.sessions.iter().take(SESSIONS_SHOWN).cloned().collect();
    if s.sessions.len() > SESSIONS_SHOWN {
        names.push(format!("and {} more", s.sessions.len() - SESSIONS_SHOWN));
    }
    let who = match s.sessions.len() {
        0 => "shared, no session uses it now".to_string(),
        1 => format!("shared by 1 session: {}", names.join(", ")),
        n => format!("shared by {n} sessions: {}", names.join(", ")),
    };
    let memory = s.rss.map(|b| format!(", {}", mib(b))).unwrap_or_default();
    let text = format!(", {who}{memory}, idle {}s", s.idle.as_secs());
    let facts = json!({
        "shared": true,
        "sessions": s.sessions,
        "rss_bytes": s.rss,
        "idle_s": s.idle.as_secs(),
    });
    (text, facts)
}
