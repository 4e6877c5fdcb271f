//! Breakpoints of one conversation: set per file (before or during a session), sent to a
//! live session at once and to every later launch, summarised with what the adapter said of
//! each, and cleared by `terminate` unless kept.

use serde_json::json;
use tools_core::text::{cap_list, cut_text};
use tools_core::{ToolError, ToolOutput};

use super::{DebugSupervisor, Inner};
use crate::protocol::{BreakpointState, Phase};

impl DebugSupervisor {
    /// `breakpoints`: sets (or with no lines clears) the breakpoints of one file; kept for
    /// later launches and sent at once to a live session.
    pub async fn breakpoints(&self, file: &str, lines: Vec<u64>) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let path = run.workspace().resolve(file)?;
        if !path.is_file() {
            return Err(ToolError::invalid(
                "file",
                format!("`{file}` is not a file in the workspace"),
            ));
        }
        if let Some(bad) = lines.iter().find(|l| **l == 0) {
            return Err(ToolError::invalid(
                "lines",
                format!("line numbers are 1-based; got {bad}"),
            ));
        }
        let mut lines = lines;
        lines.sort_unstable();
        lines.dedup();
        if lines.len() > 200 {
            return Err(ToolError::invalid(
                "lines",
                "at most 200 breakpoints per file",
            ));
        }
        let mut inner = self.inner.lock().await;
        let _ = self.check_session(&mut inner).await;
        if lines.is_empty() {
            inner.breakpoints.remove(&path);
        } else {
            inner.breakpoints.insert(path.clone(), lines.clone());
        }
        inner.results.remove(&path);
        let live = inner
            .session
            .as_ref()
            .is_some_and(|s| s.client.phase() != Phase::Terminated);
        let shown = run.workspace().display(&path);
        if live && let Some(s) = inner.session.as_ref() {
            match s.set_breakpoints(&path, &lines).await {
                Ok(r) => {
                    inner.results.insert(path.clone(), r);
                }
                Err(e) => return Err(self.fail(&mut inner, e).await),
            }
        }
        let text = if lines.is_empty() {
            format!("cleared the breakpoints of {shown}")
        } else {
            let summary = self.breakpoint_summary(&inner);
            let mine: Vec<&str> = summary
                .lines()
                .filter(|l| l.trim_start().starts_with(&format!("{shown}:")))
                .collect();
            format!(
                "breakpoints of {shown}{}:\n{}",
                if live {
                    ""
                } else {
                    " (no session yet: kept and sent at the next launch)"
                },
                mine.join("\n")
            )
        };
        let structured = json!({
            "file": shown,
            "lines": lines,
            "sent": live,
            "results": inner.results.get(&path).map(|r| r.iter().map(|b| json!({
                "line": b.requested_line,
                "verified": b.state.as_ref().map(|s| s.verified),
                "bound_line": b.state.as_ref().and_then(|s| s.line),
                "message": b.state.as_ref().and_then(|s| s.message.clone()),
            })).collect::<Vec<_>>()),
        });
        Ok(ToolOutput::text(text).with_structured(structured))
    }

    pub(super) fn breakpoint_summary(&self, inner: &Inner) -> String {
        let Some(run) = self.run.upgrade() else {
            return String::new();
        };
        let updates: Vec<BreakpointState> = inner
            .session
            .as_ref()
            .and_then(|s| s.client.with(|st| st.breakpoint_updates.clone()))
            .unwrap_or_default();
        let mut lines = Vec::new();
        for (file, wanted) in &inner.breakpoints {
            let shown = run.workspace().display(file);
            let results = inner.results.get(file);
            for line in wanted {
                let state = results
                    .and_then(|r| r.iter().find(|b| b.requested_line == *line))
                    .and_then(|b| b.state.clone())
                    .map(|st| {
                        match st
                            .id
                            .and_then(|id| updates.iter().rev().find(|u| u.id == Some(id)))
                        {
                            Some(u) => u.clone(),
                            None => st,
                        }
                    });
                lines.push(match state {
                    None => {
                        format!("  {shown}:{line} — kept; sent to the adapter at the next launch")
                    }
                    Some(st) if st.verified => match st.line {
                        Some(l) if l != *line => {
                            format!("  {shown}:{line} — verified, bound to line {l}")
                        }
                        _ => format!("  {shown}:{line} — verified"),
                    },
                    Some(st) => format!(
                        "  {shown}:{line} — not verified{}{}",
                        st.message
                            .map(|m| format!(": {}", cut_text(&m, 300)))
                            .unwrap_or_default(),
                        st.line
                            .filter(|l| l != line)
                            .map(|l| format!(" (would bind to line {l})"))
                            .unwrap_or_default()
                    ),
                });
            }
        }
        let capped = cap_list(lines, 50);
        let mut s = capped.shown.join("\n");
        if let Some(m) = capped.more_line() {
            s.push_str(&format!("\n  {m}"));
        }
        s
    }
}
