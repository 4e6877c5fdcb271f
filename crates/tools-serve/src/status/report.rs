//! The typed answer of `/status.json`, which the page also renders: one struct per table.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ServerState;
use super::board::EndedCall;

/// Characters of a session id shown (enough to tell sessions apart, not enough to name one
/// to `/mcp`: ids are bound to their opener's credential anyway).
pub(crate) const SESSION_PREFIX: usize = 8;

/// Everything the page shows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StatusReport {
    /// The server process.
    pub server: ServerFacts,
    /// Open sessions, the oldest first.
    pub sessions: Vec<SessionRow>,
    /// Language servers shared by the sessions.
    pub language_servers: Vec<LanguageServerRow>,
    /// Calls running now, the longest running first.
    pub running: Vec<RunningRow>,
    /// How `recent` is ordered: `latest`, `slowest` or `failed`.
    pub order: String,
    /// The last calls that ended (at most 200).
    pub recent: Vec<EndedRow>,
    /// The ten tools slowest at the median, with their 95th percentile.
    pub slowest_tools: Vec<ToolTimes>,
}

/// The server process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerFacts {
    /// The agent-tools version.
    pub version: String,
    /// Seconds since the server started.
    pub uptime_s: u64,
    /// Resident memory of the server process, when readable.
    pub rss_bytes: Option<u64>,
    /// Child processes of every run, and the shared language servers.
    pub children: usize,
}

/// One open session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionRow {
    /// The first characters of its id.
    pub id: String,
    /// The client's name, as its `initialize` gave it.
    pub client: String,
    /// The client's version.
    pub client_version: String,
    /// The protocol version it speaks.
    pub protocol: String,
    /// The workspace root it works in.
    pub workspace: String,
    /// Whether that workspace is trusted.
    pub trusted: bool,
    /// Seconds since it opened.
    pub age_s: u64,
    /// Seconds since its last request ended (0 while one is answered).
    pub idle_s: u64,
    /// Its calls under way (sessions have no MCP tasks: those are the sessionless
    /// protocol's).
    pub open_calls: usize,
    /// Calls it made that ended.
    pub calls: u64,
}

/// One shared language server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LanguageServerRow {
    /// The project root it serves.
    pub workspace: String,
    /// Its language.
    pub language: String,
    /// Its program's name.
    pub server: String,
    /// Whether its runs trust their workspace.
    pub trusted: bool,
    /// Its process id while it runs.
    pub pid: Option<i32>,
    /// Resident memory of it and what it started.
    pub rss_bytes: Option<u64>,
    /// The sessions using it (id prefixes; `run:ID` for a run not of an open session).
    pub sessions: Vec<String>,
    /// `loading`, `indexing`, `ready`, `stopped` or `gave_up`.
    pub state: ServerState,
    /// Crashes since it was last (re)started.
    pub crashes: u32,
    /// The first line of why it last failed.
    pub last_failure: Option<String>,
    /// Seconds since its last restart (after a crash, or a reload).
    pub restarted_s_ago: Option<u64>,
    /// What that restart was.
    pub restart: Option<String>,
    /// Seconds since a session last asked for it.
    pub idle_s: u64,
}

/// A call under way.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunningRow {
    /// Its id on this page (what `POST /status/calls/ID/cancel` names).
    pub id: u64,
    /// The tool.
    pub tool: String,
    /// The session's id prefix (`-` for a sessionless request).
    pub session: String,
    /// Seconds it has been running.
    pub running_s: f64,
}

/// A call that ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EndedRow {
    /// The tool.
    pub tool: String,
    /// The session's id prefix.
    pub session: String,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// `ok`, `error`, `input_required`, `protocol_error` or `abandoned`.
    pub outcome: String,
    /// The first line of its error.
    pub error: Option<String>,
    /// Seconds since it ended.
    pub ended_s_ago: u64,
}

/// A tool's recent durations.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolTimes {
    /// The tool.
    pub tool: String,
    /// Calls the figures are taken over.
    pub calls: usize,
    /// The median, in milliseconds.
    pub p50_ms: f64,
    /// The 95th percentile, in milliseconds.
    pub p95_ms: f64,
}

/// How the recent calls are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    Latest,
    Slowest,
    Failed,
}

impl Order {
    /// From the `order` query parameter; anything unknown is `latest`.
    pub(crate) fn parse(query: Option<&str>) -> Order {
        let value = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .find_map(|pair| pair.strip_prefix("order="));
        match value {
            Some("slowest") => Order::Slowest,
            Some("failed") => Order::Failed,
            _ => Order::Latest,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Order::Latest => "latest",
            Order::Slowest => "slowest",
            Order::Failed => "failed",
        }
    }
}

/// The calls that ended (the latest first) as rows in `order`: the slowest first, or the
/// failed ones first (the latest first among them).
pub(crate) fn ended_rows(calls: Vec<EndedCall>, order: Order) -> Vec<EndedRow> {
    let mut calls = calls;
    match order {
        Order::Latest => {}
        Order::Slowest => calls.sort_by_key(|c| std::cmp::Reverse(c.took)),
        Order::Failed => calls.sort_by_key(|c| c.outcome == crate::metrics::Outcome::Ok),
    }
    calls
        .into_iter()
        .map(|c| EndedRow {
            tool: c.tool,
            session: prefix(&c.session),
            duration_ms: millis(c.took),
            outcome: c.outcome.as_str().to_string(),
            error: c.error,
            ended_s_ago: c.ended.elapsed().as_secs(),
        })
        .collect()
}

/// The ten tools slowest at the median.
pub(crate) fn slowest_tools(durations: Vec<(String, Vec<Duration>)>) -> Vec<ToolTimes> {
    let mut out: Vec<ToolTimes> = durations
        .into_iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(tool, mut d)| {
            d.sort();
            ToolTimes {
                tool,
                calls: d.len(),
                p50_ms: millis(percentile(&d, 50)),
                p95_ms: millis(percentile(&d, 95)),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.p50_ms
            .total_cmp(&a.p50_ms)
            .then(b.p95_ms.total_cmp(&a.p95_ms))
    });
    out.truncate(10);
    out
}

/// The nearest-rank percentile `p` of `sorted` (not empty).
fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// A duration in milliseconds, to a tenth.
fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

/// The shown part of a session id (`-` for none).
pub(crate) fn prefix(id: &str) -> String {
    if id.is_empty() || id == "-" {
        return "-".into();
    }
    id.chars().take(SESSION_PREFIX).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_and_the_slowest_median_leads() {
        let ms = Duration::from_millis;
        let tools = slowest_tools(vec![
            ("read".into(), (1..=100).map(ms).collect()),
            ("eval".into(), vec![ms(300), ms(100), ms(200)]),
            ("none".into(), vec![]),
        ]);
        let rows: Vec<(String, usize, f64, f64)> = tools
            .into_iter()
            .map(|t| (t.tool, t.calls, t.p50_ms, t.p95_ms))
            .collect();
        assert_eq!(
            rows,
            [
                ("eval".to_string(), 3, 200.0, 300.0),
                ("read".to_string(), 100, 50.0, 95.0)
            ]
        );
    }

    #[test]
    fn the_order_comes_from_the_query() {
        assert_eq!(Order::parse(Some("order=failed")), Order::Failed);
        assert_eq!(Order::parse(Some("x=1&order=slowest")), Order::Slowest);
        assert_eq!(Order::parse(Some("order=nonsense")), Order::Latest);
        assert_eq!(Order::parse(None), Order::Latest);
    }
}
