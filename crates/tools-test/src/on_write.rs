//! The tests a write reaches, named in the write's own answer (opt-in: `[test] on_write =
//! true`): the functions changed in the written files since the last commit (`git diff
//! HEAD`), followed to the tests that reach them, within a time budget. A workspace that is
//! not a git checkout, or a write that changed no function, adds nothing.

use std::path::PathBuf;
use std::time::Duration;

use tools_core::{CallCtx, Section, WriteObserver};

/// Appends a `tests` section to every write's answer.
pub struct ReachingOnWrite {
    /// Time the walk may take per write.
    pub budget: Duration,
}

#[tools_core::async_trait]
impl WriteObserver for ReachingOnWrite {
    async fn after_write(&self, ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
        if touched.is_empty() || !ctx.run.root().join(".git").exists() {
            return Vec::new();
        }
        let work = async {
            let changed = crate::changes::changed_in(&ctx.run, "HEAD", touched).await?;
            let reach = crate::reach::reaching_all(&ctx.run, &changed).await?;
            Ok::<_, tools_core::ToolError>((changed, reach))
        };
        let (changed, reach) = match tokio::time::timeout(self.budget, work).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => return vec![Section::new("tests", format!("not searched: {e}"))],
            Err(_) => {
                return vec![Section::new(
                    "tests",
                    format!(
                        "not searched: following the change to its tests took more than {} s ([test] on_write_ms); ask `test list` with `changed_since: \"HEAD\"`",
                        self.budget.as_secs_f64()
                    ),
                )];
            }
        };
        if changed.is_empty() {
            return Vec::new();
        }
        let ws = ctx.run.workspace();
        let names: Vec<String> = changed.iter().map(|c| format!("`{}`", c.name)).collect();
        let n = reach.tests.len();
        let mut lines = vec![format!(
            "{n} test{} reach the uncommitted changes to {} in the written files; run them with `test run` and `changed_since: \"HEAD\"`",
            if n == 1 { "" } else { "s" },
            names.join(", ")
        )];
        lines.extend(crate::answer::grouped_lines(&reach.tests, ws, 20));
        if !reach.gaps.is_empty() {
            lines.push(format!("not complete: {}", reach.gaps.join("; ")));
        }
        vec![Section::new("tests", lines.join("\n"))]
    }
}
