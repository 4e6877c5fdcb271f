//! What `/metrics` reports, in the Prometheus text format (version 0.0.4): sessions, calls by
//! tool and outcome, call latency, runs, warm runs, child processes and memory.
//!
//! Written by hand rather than with a metrics crate: a handful of counters and one histogram
//! family do not justify a registry, and the format is plain text. Tool names come from
//! clients, so a name that is not one of the run's tools is counted as `(unknown)`: a client
//! must not be able to grow the label set without bound.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds: from a cached read to a long `eval`.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Outcome {
    /// A result.
    Ok,
    /// A tool error (`isError: true`): the model reads why.
    Error,
    /// The call waits on an answer from the client (newest protocol's questions).
    InputRequired,
    /// A protocol error: unknown tool, or the run could not be opened.
    ProtocolError,
    /// The call was dropped before it answered (the client went away, the server stopped).
    Abandoned,
}

impl Outcome {
    /// The label value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::InputRequired => "input_required",
            Outcome::ProtocolError => "protocol_error",
            Outcome::Abandoned => "abandoned",
        }
    }
}

#[derive(Debug, Default)]
struct ToolStats {
    by_outcome: BTreeMap<Outcome, u64>,
    /// Calls per bucket (not cumulative; summed when rendered).
    buckets: [u64; BUCKETS.len()],
    sum_seconds: f64,
    count: u64,
}

/// Counters the server keeps for `/metrics`.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    sessions_total: AtomicU64,
    sessions_refused: AtomicU64,
    tools: Mutex<BTreeMap<String, ToolStats>>,
}

/// The gauges read when `/metrics` is asked.
#[derive(Debug, Default)]
pub(crate) struct Gauges {
    pub(crate) sessions_open: usize,
    pub(crate) runs_open: usize,
    pub(crate) warm_runs: usize,
    pub(crate) children: usize,
    pub(crate) requests_in_flight: usize,
    pub(crate) resident_bytes: Option<u64>,
}

impl Metrics {
    /// Notes a session opened.
    pub(crate) fn session_opened(&self) {
        self.sessions_total.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a session refused at the limit.
    pub(crate) fn session_refused(&self) {
        self.sessions_refused.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a finished call of `tool` (already `(unknown)` when it is not a tool).
    pub(crate) fn call(&self, tool: &str, outcome: Outcome, took: Duration) {
        let Ok(mut tools) = self.tools.lock() else {
            return;
        };
        let stats = tools.entry(tool.to_string()).or_default();
        *stats.by_outcome.entry(outcome).or_default() += 1;
        let secs = took.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            stats.buckets[i] += 1;
        }
        stats.sum_seconds += secs;
        stats.count += 1;
    }

    /// The text exposition of every metric.
    pub(crate) fn render(&self, g: &Gauges) -> String {
        let mut out = String::new();
        let mut gauge = |name: &str, help: &str, value: String| {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
            );
        };
        gauge(
            "agent_tools_sessions_open",
            "MCP sessions open now.",
            g.sessions_open.to_string(),
        );
        gauge(
            "agent_tools_runs_open",
            "Runs serving a session now.",
            g.runs_open.to_string(),
        );
        gauge(
            "agent_tools_warm_runs",
            "Runs opened ahead and waiting for a session.",
            g.warm_runs.to_string(),
        );
        gauge(
            "agent_tools_child_processes",
            "Child processes (servers, kernels, adapters, workers) of open and warm runs, and language servers shared by them.",
            g.children.to_string(),
        );
        gauge(
            "agent_tools_requests_in_flight",
            "MCP requests being answered now.",
            g.requests_in_flight.to_string(),
        );
        if let Some(rss) = g.resident_bytes {
            gauge(
                "agent_tools_resident_memory_bytes",
                "Resident memory of the server process (not of its children).",
                rss.to_string(),
            );
        }
        let _ = write!(
            out,
            "# HELP agent_tools_sessions_total MCP sessions opened since start.\n\
             # TYPE agent_tools_sessions_total counter\n\
             agent_tools_sessions_total {}\n\
             # HELP agent_tools_sessions_refused_total Sessions refused at the session limit.\n\
             # TYPE agent_tools_sessions_refused_total counter\n\
             agent_tools_sessions_refused_total {}\n",
            self.sessions_total.load(Ordering::Relaxed),
            self.sessions_refused.load(Ordering::Relaxed),
        );
        let Ok(tools) = self.tools.lock() else {
            return out;
        };
        out.push_str(
            "# HELP agent_tools_calls_total Tool calls answered, by tool and outcome.\n\
             # TYPE agent_tools_calls_total counter\n",
        );
        for (tool, stats) in tools.iter() {
            for (outcome, n) in &stats.by_outcome {
                let _ = writeln!(
                    out,
                    "agent_tools_calls_total{{tool=\"{}\",outcome=\"{}\"}} {n}",
                    label(tool),
                    outcome.as_str()
                );
            }
        }
        out.push_str(
            "# HELP agent_tools_call_duration_seconds How long tool calls took, by tool.\n\
             # TYPE agent_tools_call_duration_seconds histogram\n",
        );
        for (tool, stats) in tools.iter() {
            let tool = label(tool);
            let mut cumulative = 0;
            for (bound, n) in BUCKETS.iter().zip(stats.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "agent_tools_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "agent_tools_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"+Inf\"}} {}\n\
                 agent_tools_call_duration_seconds_sum{{tool=\"{tool}\"}} {}\n\
                 agent_tools_call_duration_seconds_count{{tool=\"{tool}\"}} {}",
                stats.count, stats.sum_seconds, stats.count
            );
        }
        out
    }
}

/// A label value with the exposition format's escapes.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The server's resident memory, as the platform layer measures it (`/proc/self/statm` on
/// Linux).
pub(crate) fn resident_bytes() -> Option<u64> {
    tools_core::platform::resident_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_tool_and_outcome_with_cumulative_buckets() {
        let m = Metrics::default();
        m.session_opened();
        m.call("read", Outcome::Ok, Duration::from_millis(3));
        m.call("read", Outcome::Ok, Duration::from_millis(40));
        m.call("read", Outcome::Error, Duration::from_secs(400));
        m.call("we\"ird", Outcome::ProtocolError, Duration::ZERO);
        let text = m.render(&Gauges {
            sessions_open: 2,
            ..Default::default()
        });
        assert!(text.contains("agent_tools_sessions_open 2\n"), "{text}");
        assert!(text.contains("agent_tools_sessions_total 1\n"), "{text}");
        assert!(text.contains("agent_tools_calls_total{tool=\"read\",outcome=\"ok\"} 2\n"));
        assert!(text.contains("agent_tools_calls_total{tool=\"read\",outcome=\"error\"} 1\n"));
        assert!(text.contains("{tool=\"read\",le=\"0.005\"} 1\n"), "{text}");
        assert!(text.contains("{tool=\"read\",le=\"0.05\"} 2\n"), "{text}");
        assert!(text.contains("{tool=\"read\",le=\"300\"} 2\n"), "{text}");
        assert!(text.contains("{tool=\"read\",le=\"+Inf\"} 3\n"), "{text}");
        assert!(text.contains("tool=\"we\\\"ird\""), "{text}");
        assert!(!text.contains("resident"), "{text}");
    }
}
