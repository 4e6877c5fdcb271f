//! The HTML of `/status`: one template (`page.html`) whose tables the server fills, so the
//! page reads without scripting; its small inline script then re-renders the same tables
//! from `/status.json` every two seconds. No build step, nothing fetched from elsewhere.

use std::fmt::Write as _;

use super::report::StatusReport;

const TEMPLATE: &str = include_str!("page.html");

/// The page for `report`.
pub(crate) fn render(report: &StatusReport) -> String {
    let s = &report.server;
    let mut server = String::new();
    for (name, value) in [
        ("version", s.version.clone()),
        ("uptime", ago(s.uptime_s)),
        ("memory", mib(s.rss_bytes)),
        ("child processes", s.children.to_string()),
    ] {
        let _ = write!(server, "<tr><th>{name}</th><td>{}</td></tr>", esc(&value));
    }
    let sessions = rows(
        report.sessions.iter().map(|r| {
            vec![
                td(&r.id),
                td(&format!("{} {}", r.client, r.client_version)),
                td(&r.protocol),
                td(&r.workspace),
                td(trust(r.trusted)),
                td(&ago(r.age_s)),
                td(&ago(r.idle_s)),
                num(&r.open_calls.to_string()),
                num(&r.calls.to_string()),
            ]
        }),
        9,
        "no session is open",
    );
    let servers = rows(
        report.language_servers.iter().map(|r| {
            let sessions = if r.sessions.is_empty() {
                "-".to_string()
            } else {
                r.sessions.join(", ")
            };
            vec![
                td(&r.workspace),
                td(&format!("{} ({})", r.server, r.language)),
                td(trust(r.trusted)),
                td(&r.pid.map_or("-".into(), |p| p.to_string())),
                num(&mib(r.rss_bytes)),
                td(&sessions),
                td(&state_text(r.state)),
                num(&r.crashes.to_string()),
                td(r.last_failure.as_deref().unwrap_or("-")),
                td(&restart_text(r.restarted_s_ago, r.restart.as_deref())),
                td(&ago(r.idle_s)),
            ]
        }),
        11,
        "no shared language server runs",
    );
    let running = rows(
        report.running.iter().map(|r| {
            vec![
                td(&r.id.to_string()),
                td(&r.tool),
                td(&r.session),
                num(&format!("{:.1} s", r.running_s)),
                format!(
                    "<td><form method=\"post\" action=\"status/calls/{id}/cancel\" data-call=\"{id}\">\
                     <button data-call=\"{id}\">cancel</button></form></td>",
                    id = r.id
                ),
            ]
        }),
        5,
        "no call is running",
    );
    let recent = rows(
        report.recent.iter().map(|r| {
            vec![
                td(&r.tool),
                td(&r.session),
                num(&ms(r.duration_ms)),
                format!("<td class=\"{0}\">{0}</td>", esc(&r.outcome)),
                td(r.error.as_deref().unwrap_or("-")),
                td(&format!("{} ago", ago(r.ended_s_ago))),
            ]
        }),
        6,
        "no call has ended yet",
    );
    let tools = rows(
        report.slowest_tools.iter().map(|r| {
            vec![
                td(&r.tool),
                num(&r.calls.to_string()),
                num(&ms(r.p50_ms)),
                num(&ms(r.p95_ms)),
            ]
        }),
        4,
        "no call has ended yet",
    );
    TEMPLATE
        .replace("{{SERVER}}", &server)
        .replace("{{SESSIONS}}", &sessions)
        .replace("{{SERVERS}}", &servers)
        .replace("{{RUNNING}}", &running)
        .replace("{{ORDER}}", &esc(&report.order))
        .replace("{{RECENT}}", &recent)
        .replace("{{TOOLS}}", &tools)
}

fn rows(cells: impl Iterator<Item = Vec<String>>, columns: usize, empty: &str) -> String {
    let mut out = String::new();
    for row in cells {
        let _ = write!(out, "<tr>{}</tr>", row.concat());
    }
    if out.is_empty() {
        let _ = write!(
            out,
            "<tr><td class=\"empty\" colspan=\"{columns}\">{empty}</td></tr>"
        );
    }
    out
}

fn td(text: &str) -> String {
    format!("<td>{}</td>", esc(text))
}

fn num(text: &str) -> String {
    format!("<td class=\"n\">{}</td>", esc(text))
}

/// A server's last restart, as the script shows it (`12s ago: the python server … exited`).
fn restart_text(ago_s: Option<u64>, why: Option<&str>) -> String {
    match (ago_s, why) {
        (Some(s), Some(why)) => format!("{} ago: {why}", ago(s)),
        _ => "-".into(),
    }
}

fn trust(trusted: bool) -> &'static str {
    if trusted { "trusted" } else { "untrusted" }
}

fn state_text(state: super::ServerState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_default()
}

/// Text made safe inside HTML elements and attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Bytes as MiB, rounded up, as the script shows them.
fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| format!("{} MiB", b.div_ceil(1024 * 1024)))
}

/// Seconds for a reader (`42s`, `3m 4s`, `2h 5m`), as the script shows them.
fn ago(s: u64) -> String {
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

/// Milliseconds for a reader, as the script shows them.
fn ms(v: f64) -> String {
    if v < 1000.0 {
        format!("{v:.1} ms")
    } else {
        format!("{:.2} s", v / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_figures_read_as_the_script_writes_them() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(ago(42), "42s");
        assert_eq!(ago(184), "3m 4s");
        assert_eq!(ago(7500), "2h 5m");
        assert_eq!(mib(Some(1)), "1 MiB");
        assert_eq!(mib(None), "-");
        assert_eq!(ms(12.34), "12.3 ms");
        assert_eq!(ms(2500.0), "2.50 s");
    }
}
