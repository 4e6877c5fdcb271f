//! Breakpoints that follow edits: when a tool of the run writes a file that has
//! breakpoints (edit, write, apply_patch, an accepted ast_edit, a rename, a symbol edit),
//! each breakpoint moves with the line it was on, or is dropped when that line was deleted;
//! the write's answer says which, and a live session gets the file's breakpoints again.
//!
//! The file's text when its breakpoints were last placed is kept beside them, so the old
//! and new texts can be paired line by line after the write (see [`crate::line_moves`]).
//! Code a live debuggee already loaded keeps the lines it was loaded with; the moved
//! breakpoints are right for code loaded from now on and for the next launch.

use std::path::{Path, PathBuf};

use serde_json::json;
use tools_core::{CallCtx, Section, WriteObserver};

use super::{DebugSupervisor, Inner};
use crate::line_moves::line_map;
use crate::protocol::Phase;
use crate::session::BreakpointSpec;

/// The largest file whose breakpoints follow its edits.
const MAX_FOLLOWED_BYTES: u64 = 4 * 1024 * 1024;

/// The text of `path` when it is a UTF-8 file small enough to follow.
pub(super) fn followed_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FOLLOWED_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// What happened to one file's breakpoints.
#[derive(Default)]
struct Followed {
    moved: Vec<String>,
    dropped: Vec<String>,
    resend: Vec<PathBuf>,
}

impl DebugSupervisor {
    /// Moves the breakpoints of the `touched` files with their lines; the section the write's
    /// answer gets (none when no breakpoint moved or went).
    pub async fn follow_edits(&self, touched: &[PathBuf]) -> Vec<Section> {
        let Some(run) = self.run.upgrade() else {
            return Vec::new();
        };
        let mut inner = self.inner.lock().await;
        let mut f = Followed::default();
        for path in touched {
            let shown = run.workspace().display(path);
            follow_one(&mut inner, path, &shown, &mut f);
        }
        if f.resend.is_empty() {
            return Vec::new();
        }
        let live = inner
            .session
            .as_ref()
            .is_some_and(|s| s.client.phase() != Phase::Terminated);
        let mut failures = Vec::new();
        for path in &f.resend {
            inner.results.remove(path);
            if !live {
                continue;
            }
            let specs = inner.breakpoints.get(path).cloned().unwrap_or_default();
            let sent = match inner.session.as_ref() {
                Some(s) => s.set_breakpoints(path, &specs).await,
                None => continue,
            };
            match sent {
                Ok(r) => {
                    inner.results.insert(path.clone(), r);
                }
                Err(e) => failures.push(format!("{}: {e}", run.workspace().display(path))),
            }
        }
        if f.moved.is_empty() && f.dropped.is_empty() && failures.is_empty() {
            return Vec::new();
        }
        let mut body = Vec::new();
        if !f.moved.is_empty() {
            body.push(format!("moved with their lines: {}", f.moved.join(", ")));
        }
        if !f.dropped.is_empty() {
            body.push(format!(
                "dropped (their lines were deleted): {}",
                f.dropped.join(", ")
            ));
        }
        if live && failures.is_empty() {
            body.push("sent again to the live debug session".into());
        }
        if !failures.is_empty() {
            body.push(format!(
                "not sent to the live debug session: {}",
                failures.join("; ")
            ));
        }
        vec![
            Section::new("breakpoints", body.join("\n")).with_structured(json!({
                "moved": f.moved, "dropped": f.dropped, "sent": live && failures.is_empty(),
            })),
        ]
    }
}

fn follow_one(inner: &mut Inner, path: &Path, shown: &str, f: &mut Followed) {
    let Some(specs) = inner.breakpoints.get(path).cloned() else {
        return;
    };
    let Some(old) = inner.snapshots.get(path).cloned() else {
        return;
    };
    let Some(new) = followed_text(path) else {
        // Gone, or no longer text we follow: its breakpoints cannot be placed.
        f.dropped.extend(
            specs
                .iter()
                .map(|b| format!("{shown}:{}{}", b.line, b.describe())),
        );
        inner.breakpoints.remove(path);
        inner.snapshots.remove(path);
        f.resend.push(path.to_path_buf());
        return;
    };
    if new == old {
        return;
    }
    let map = line_map(&old, &new);
    let mut kept: Vec<BreakpointSpec> = Vec::new();
    for spec in specs {
        let to = usize::try_from(spec.line)
            .ok()
            .and_then(|l| l.checked_sub(1))
            .and_then(|i| map.get(i).copied().flatten());
        match to {
            Some(i) => {
                let line = i as u64 + 1;
                if line != spec.line {
                    f.moved.push(format!("{shown}:{} → {line}", spec.line));
                }
                kept.push(BreakpointSpec { line, ..spec });
            }
            None => f
                .dropped
                .push(format!("{shown}:{}{}", spec.line, spec.describe())),
        }
    }
    if kept.is_empty() {
        inner.breakpoints.remove(path);
        inner.snapshots.remove(path);
    } else {
        inner.breakpoints.insert(path.to_path_buf(), kept);
        inner.snapshots.insert(path.to_path_buf(), new);
    }
    f.resend.push(path.to_path_buf());
}

/// The write observer that makes a run's breakpoints follow its tools' edits.
pub struct BreakpointsFollowEdits {
    supervisor: std::sync::Arc<DebugSupervisor>,
}

impl BreakpointsFollowEdits {
    /// The observer over `supervisor`'s breakpoints.
    pub fn new(supervisor: std::sync::Arc<DebugSupervisor>) -> Self {
        BreakpointsFollowEdits { supervisor }
    }
}

#[tools_core::async_trait]
impl WriteObserver for BreakpointsFollowEdits {
    async fn after_write(&self, _ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        self.supervisor.follow_edits(touched).await
    }
}
