//! Breakpoints of one conversation: set per file (before or during a session), by line or
//! by a symbol's name path, plain or with a condition, a hit condition or a log message;
//! sent to a live session at once and to every later launch, summarised with what the
//! adapter said of each, and cleared by `terminate` unless kept.

use serde_json::json;
use tools_core::safe_write;
use tools_core::text::{cap_list, cut_text};
use tools_core::{NamePath, ResolvedSymbol, resolve_symbol};
use tools_core::{SymbolSources, line_number};
use tools_core::{ToolError, ToolOutput};

use super::{DebugSupervisor, Inner};
use crate::protocol::{BreakpointState, Phase};
use crate::session::BreakpointSpec;

/// The largest file whose symbols are read to place a breakpoint by name.
const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// What one `breakpoints` call asks for.
#[derive(Debug, Clone, Default)]
pub struct BreakpointRequest {
    /// The file, relative to the workspace.
    pub file: String,
    /// The lines: the file's breakpoints become exactly these (empty clears the file).
    pub lines: Option<Vec<u64>>,
    /// Or a name path: one breakpoint on the symbol's first executable line, added to the
    /// file's others.
    pub symbol: Option<String>,
    /// Stop only when this expression is true.
    pub condition: Option<String>,
    /// Stop only when the hit count satisfies this.
    pub hit_condition: Option<String>,
    /// Print this instead of stopping (a logpoint).
    pub log_message: Option<String>,
}

/// The line a breakpoint on `sym` goes to: its body's first line of code (past the opening
/// brace where there is one), else its own first line.
fn first_executable_line(text: &str, sym: &ResolvedSymbol) -> u64 {
    let Some(body) = &sym.body else {
        return line_number(text, sym.range.start) as u64;
    };
    let inner = &text[body.clone()];
    let skip = usize::from(inner.starts_with('{'));
    let rest = &inner[skip..];
    let code = rest.len() - rest.trim_start().len();
    let at = body.start + skip + code;
    if at >= body.end.saturating_sub(usize::from(inner.ends_with('}'))) {
        // An empty body: its opening line.
        return line_number(text, body.start) as u64;
    }
    line_number(text, at) as u64
}

impl DebugSupervisor {
    /// `breakpoints`: sets (or with no lines clears) the breakpoints of one file, or adds one
    /// by a symbol's name path; kept for later launches and sent at once to a live session.
    pub async fn breakpoints(&self, req: BreakpointRequest) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let file = req.file.as_str();
        let path = run.workspace().resolve(file)?;
        if !path.is_file() {
            return Err(ToolError::invalid(
                "file",
                format!("`{file}` is not a file in the workspace"),
            ));
        }
        let shown = run.workspace().display(&path);
        let options = |line: u64, symbol: Option<String>| BreakpointSpec {
            line,
            condition: req.condition.clone().filter(|c| !c.trim().is_empty()),
            hit_condition: req.hit_condition.clone().filter(|c| !c.trim().is_empty()),
            log_message: req.log_message.clone().filter(|c| !c.is_empty()),
            symbol,
        };
        let by_symbol = match (&req.lines, &req.symbol) {
            (Some(_), Some(_)) => {
                return Err(ToolError::invalid(
                    "symbol",
                    "give `lines` or `symbol`, not both",
                ));
            }
            (None, None) => {
                return Err(ToolError::invalid(
                    "lines",
                    "`breakpoints` needs `lines` (an empty list clears the file) or `symbol` (a name path)",
                ));
            }
            (None, Some(symbol)) => {
                let query = NamePath::parse(symbol, "symbol")?;
                let read = safe_write::read_file(run.workspace(), &path, MAX_SOURCE_BYTES)
                    .map_err(|e| e.for_file(&shown))?;
                let text = String::from_utf8(read.bytes).map_err(|_| {
                    ToolError::invalid("file", format!("`{shown}` is not UTF-8 text"))
                })?;
                let sources = SymbolSources::for_run(&run);
                let sym = resolve_symbol(&sources, &path, &shown, &text, &query, "symbol").await?;
                Some(options(first_executable_line(&text, &sym), Some(sym.name)))
            }
            (Some(_), None) => None,
        };
        let mut inner = self.inner.lock().await;
        let _ = self.check_session(&mut inner).await;
        let specs: Vec<BreakpointSpec> = match &by_symbol {
            Some(spec) => {
                let mut all: Vec<BreakpointSpec> = inner
                    .breakpoints
                    .get(&path)
                    .map(|v| v.iter().filter(|b| b.line != spec.line).cloned().collect())
                    .unwrap_or_default();
                all.push(spec.clone());
                all.sort_by_key(|b| b.line);
                all
            }
            None => {
                let lines = req.lines.clone().unwrap_or_default();
                if let Some(bad) = lines.iter().find(|l| **l == 0) {
                    return Err(ToolError::invalid(
                        "lines",
                        format!("line numbers are 1-based; got {bad}"),
                    ));
                }
                let mut lines = lines;
                lines.sort_unstable();
                lines.dedup();
                lines.into_iter().map(|l| options(l, None)).collect()
            }
        };
        if specs.len() > 200 {
            return Err(ToolError::invalid(
                "lines",
                "at most 200 breakpoints per file",
            ));
        }
        let live = inner
            .session
            .as_ref()
            .is_some_and(|s| s.client.phase() != Phase::Terminated);
        if live
            && let Some(s) = inner.session.as_ref()
            && let Some(why) = s.unsupported(std::path::Path::new(&shown), &specs)
        {
            return Err(ToolError::rejected(format!("{why}; nothing was changed")));
        }
        if specs.is_empty() {
            inner.breakpoints.remove(&path);
            inner.snapshots.remove(&path);
        } else {
            inner.breakpoints.insert(path.clone(), specs.clone());
            // The text the lines refer to, for moving them when a tool edits the file.
            match super::follow_edits::followed_text(&path) {
                Some(text) => inner.snapshots.insert(path.clone(), text),
                None => inner.snapshots.remove(&path),
            };
        }
        inner.results.remove(&path);
        if live && let Some(s) = inner.session.as_ref() {
            match s.set_breakpoints(&path, &specs).await {
                Ok(r) => {
                    inner.results.insert(path.clone(), r);
                }
                Err(e) => return Err(self.fail(&mut inner, e).await),
            }
        }
        let lines: Vec<u64> = specs.iter().map(|b| b.line).collect();
        let text = if specs.is_empty() {
            format!("cleared the breakpoints of {shown}")
        } else {
            let summary = self.breakpoint_summary(&inner);
            let mine: Vec<&str> = summary
                .lines()
                .filter(|l| l.trim_start().starts_with(&format!("{shown}:")))
                .collect();
            let placed = by_symbol
                .as_ref()
                .and_then(|b| {
                    b.symbol
                        .as_ref()
                        .map(|s| format!("`{s}` starts its code at {shown}:{}; ", b.line))
                })
                .unwrap_or_default();
            format!(
                "{placed}breakpoints of {shown}{}:\n{}",
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
            "symbol": by_symbol.as_ref().and_then(|b| b.symbol.clone()),
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
            for spec in wanted {
                let line = &spec.line;
                let extra = spec.describe();
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
                        format!(
                            "  {shown}:{line}{extra} — kept; sent to the adapter at the next launch"
                        )
                    }
                    Some(st) if st.verified => match st.line {
                        Some(l) if l != *line => {
                            format!("  {shown}:{line}{extra} — verified, bound to line {l}")
                        }
                        _ => format!("  {shown}:{line}{extra} — verified"),
                    },
                    Some(st) => format!(
                        "  {shown}:{line}{extra} — not verified{}{}",
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
