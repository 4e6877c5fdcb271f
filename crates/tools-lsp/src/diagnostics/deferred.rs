//! A check a writing tool left running after it answered (`lsp_rename` answers with its
//! edits and lets its check go on): what it finds leads the run's next answer — an `lsp`
//! query, a rename, or any write this observer sees — attributed to the change that caused
//! it, the way late diagnostics are attributed to their write.
//!
//! One check at a time per run: the next one is registered only after the earlier one was
//! handed over (every tool that can leave one takes the earlier one first). The next answer
//! waits for the check to finish; the check's own waits are bounded, so this wait is too.

use std::sync::Mutex;

use serde_json::Value;
use tokio::task::JoinHandle;

/// What a check found, ready to lead an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckFindings {
    /// The block of text, its first line naming the change it belongs to.
    pub text: String,
    /// The same facts for programs.
    pub structured: Value,
}

/// A check still running, with the name of the change it checks.
struct Running {
    /// Names the change in the block's first line (`the rename of … to …`).
    label: String,
    handle: JoinHandle<CheckFindings>,
}

/// The run's check left running, if any.
#[derive(Default)]
pub struct DeferredCheck {
    running: Mutex<Option<Running>>,
}

impl DeferredCheck {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        match self.running.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        }
    }

    /// Leaves `handle` running for the change named `label`; its findings lead the next
    /// answer. A check registered earlier and never taken is stopped (its caller took the
    /// earlier one first, so this happens only when a call was abandoned midway).
    pub fn defer(&self, label: String, handle: JoinHandle<CheckFindings>) {
        if let Some(old) = self.slot().replace(Running { label, handle }) {
            old.handle.abort();
        }
    }

    /// Whether a check is left running.
    pub fn is_pending(&self) -> bool {
        self.slot().is_some()
    }

    /// Waits for the check left running, if any, and gives its findings once.
    pub async fn take(&self) -> Option<CheckFindings> {
        let Running { label, handle } = self.slot().take()?;
        Some(match handle.await {
            Ok(found) => found,
            Err(e) => CheckFindings {
                text: format!(
                    "The check of {label}, still running when its answer was given, did not finish: {e}"
                ),
                structured: serde_json::json!({"change": label, "error": e.to_string()}),
            },
        })
    }
}

impl Drop for DeferredCheck {
    fn drop(&mut self) {
        if let Some(r) = self.slot().take() {
            r.handle.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_deferred_check_is_handed_over_once_and_a_dead_one_says_so() {
        let d = DeferredCheck::default();
        assert_eq!(d.take().await, None);
        let found = CheckFindings {
            text: "x".into(),
            structured: Value::Null,
        };
        let f = found.clone();
        d.defer("the rename".into(), tokio::spawn(async move { f }));
        assert!(d.is_pending());
        assert_eq!(d.take().await, Some(found));
        assert_eq!(d.take().await, None);
        d.defer(
            "the rename of `a` to `b`".into(),
            tokio::spawn(async { std::future::pending::<CheckFindings>().await }),
        );
        // A later registration stops the earlier one.
        d.defer(
            "the rename of `b` to `c`".into(),
            tokio::spawn(async { panic!("boom") }),
        );
        let t = d.take().await.unwrap().text;
        assert!(
            t.starts_with("The check of the rename of `b` to `c`, still running when its answer was given, did not finish: task "),
            "{t}"
        );
    }
}
