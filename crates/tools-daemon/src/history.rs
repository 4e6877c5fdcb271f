//! What a server said unasked before a conversation joined it, kept for that conversation:
//! a late client needs the server's state (work under way, its status, what it logged
//! about loading the project) to know it is ready, without the whole stream since start.
//!
//! Kept: every progress report still under way (its begin and latest report), the last
//! [`ENDED_KEPT`] finished ones (begin and end), the first and last log messages, the latest
//! `experimental/serverStatus`, and the last few of anything else. Diagnostics are kept
//! apart (the latest per document, see the mux).

use std::collections::VecDeque;

use serde_json::Value;

/// Finished progress reports kept.
pub(crate) const ENDED_KEPT: usize = 16;
/// Log messages kept from the start (what the server said about loading the project).
const FIRST_LOGS: usize = 60;
/// Log messages kept from the end.
const LAST_LOGS: usize = 60;
/// Other notifications kept.
const OTHERS_KEPT: usize = 30;

#[derive(Debug, Clone)]
enum Kept {
    /// A progress token's messages: begin, then the latest report or the end.
    Progress {
        token: String,
        begin: Value,
        latest: Option<Value>,
        ended: bool,
    },
    Log {
        early: bool,
        msg: Value,
    },
    Status(Value),
    Other(Value),
}

/// The kept notifications, in the order they came.
#[derive(Debug, Default)]
pub(crate) struct History {
    kept: VecDeque<Kept>,
    logs_seen: usize,
}

impl History {
    /// Takes in one notification the server sent.
    pub(crate) fn record(&mut self, msg: &Value) {
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        match method {
            "$/progress" => self.record_progress(msg),
            "window/logMessage" => {
                self.logs_seen += 1;
                let early = self.logs_seen <= FIRST_LOGS;
                self.kept.push_back(Kept::Log {
                    early,
                    msg: msg.clone(),
                });
                self.keep_newest(LAST_LOGS, |k| matches!(k, Kept::Log { early: false, .. }));
            }
            "experimental/serverStatus" => {
                self.kept.retain(|k| !matches!(k, Kept::Status(_)));
                self.kept.push_back(Kept::Status(msg.clone()));
            }
            _ => {
                self.kept.push_back(Kept::Other(msg.clone()));
                self.keep_newest(OTHERS_KEPT, |k| matches!(k, Kept::Other(_)));
            }
        }
    }

    /// Drops the oldest kept entry of the kind `of` says when more than `limit` are kept
    /// (called after each one added, so at most one is over).
    fn keep_newest(&mut self, limit: usize, of: impl Fn(&Kept) -> bool) {
        if self.kept.iter().filter(|k| of(k)).count() > limit
            && let Some(i) = self.kept.iter().position(&of)
        {
            self.kept.remove(i);
        }
    }

    fn record_progress(&mut self, msg: &Value) {
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let token = params
            .get("token")
            .map(Value::to_string)
            .unwrap_or_default();
        let kind = params
            .pointer("/value/kind")
            .and_then(Value::as_str)
            .unwrap_or("");
        if kind == "begin" {
            self.kept.push_back(Kept::Progress {
                token,
                begin: msg.clone(),
                latest: None,
                ended: false,
            });
            return;
        }
        let Some(Kept::Progress { latest, ended, .. }) =
            self.kept.iter_mut().rev().find(
                |k| matches!(k, Kept::Progress { token: t, ended: false, .. } if *t == token),
            )
        else {
            return;
        };
        *latest = Some(msg.clone());
        if kind == "end" {
            *ended = true;
            self.keep_newest(ENDED_KEPT, |k| {
                matches!(k, Kept::Progress { ended: true, .. })
            });
        }
    }

    /// The notifications to replay to a conversation that joins now, in order.
    pub(crate) fn replay(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for k in &self.kept {
            match k {
                Kept::Progress { begin, latest, .. } => {
                    out.push(begin.clone());
                    out.extend(latest.iter().cloned());
                }
                Kept::Log { msg, .. } | Kept::Status(msg) | Kept::Other(msg) => {
                    out.push(msg.clone())
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn progress(token: &str, kind: &str) -> Value {
        json!({"method": "$/progress", "params": {"token": token, "value": {"kind": kind}}})
    }

    #[test]
    fn a_joiner_gets_work_under_way_and_what_finished_but_not_every_report() {
        let mut h = History::default();
        h.record(&progress("load", "begin"));
        h.record(&progress("load", "report"));
        h.record(&progress("load", "report"));
        h.record(&progress("load", "end"));
        h.record(&progress("index", "begin"));
        h.record(&progress("index", "report"));
        let kinds: Vec<(String, String)> = h
            .replay()
            .iter()
            .map(|m| {
                (
                    m["params"]["token"].as_str().unwrap_or("").to_string(),
                    m["params"]["value"]["kind"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("load".into(), "begin".into()),
                ("load".into(), "end".into()),
                ("index".into(), "begin".into()),
                ("index".into(), "report".into()),
            ]
        );
    }

    #[test]
    fn only_the_latest_status_and_the_first_and_last_logs_are_kept() {
        let mut h = History::default();
        for i in 0..500 {
            h.record(&json!({"method": "window/logMessage", "params": {"type": 4, "message": i.to_string()}}));
        }
        h.record(&json!({"method": "experimental/serverStatus", "params": {"quiescent": false}}));
        h.record(&json!({"method": "experimental/serverStatus", "params": {"quiescent": true}}));
        let replay = h.replay();
        let logs: Vec<&str> = replay
            .iter()
            .filter_map(|m| m["params"]["message"].as_str())
            .collect();
        assert_eq!(logs.len(), FIRST_LOGS + LAST_LOGS);
        assert_eq!(logs[0], "0");
        assert_eq!(logs[FIRST_LOGS - 1], "59");
        assert_eq!(logs[FIRST_LOGS], "440");
        assert_eq!(logs.last(), Some(&"499"));
        let statuses: Vec<&Value> = replay
            .iter()
            .filter(|m| m["method"] == "experimental/serverStatus")
            .collect();
        assert_eq!(
            statuses,
            vec![&json!({"method": "experimental/serverStatus", "params": {"quiescent": true}})]
        );
    }
}
