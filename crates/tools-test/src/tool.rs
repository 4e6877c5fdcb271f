//! The `test` tool (tier exec): arguments, dispatch, and the trust gate in front of `run`.

use std::sync::Arc;

use serde_json::Value;
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args};

use crate::TestShared;
use crate::args::{Action, TestArgs};

/// `test`: the project's own tests, listed and run with its own runner.
pub struct TestTool {
    pub(crate) shared: Arc<TestShared>,
}

#[tools_core::async_trait]
impl Tool for TestTool {
    fn name(&self) -> &str {
        "test"
    }
    fn tier(&self) -> Tier {
        Tier::Exec
    }
    fn description(&self) -> String {
        "The project's tests, with its own runner (pytest, cargo test, go test, vitest, jest) in \
         its own environment. `list` (file and/or symbol): its tests as `path:line id`. `run` \
         (ids, or a file, or `affected: true` for the tests the last write named, or \
         nothing for the whole suite): leads with `N passed, N failed, N \
         skipped in T s — runner`, then one line per failure `path:line id — message`; build \
         and collection errors count as failures; page with `offset`. `status`: the runner \
         per language, or why there is none. Runs project code: trusted workspaces only."
            .into()
    }
    fn input_schema(&self) -> Value {
        tools_core::schema_for::<TestArgs>()
    }
    fn parallel_safe(&self) -> bool {
        // Two runs of one suite at once fight over its build folder and fixtures.
        false
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let args: TestArgs = parse_args(args)?;
        match args.action {
            Action::List => crate::list::list(ctx, &args, &self.shared).await,
            Action::Status => {
                let config = &self.shared.config;
                Ok(crate::status::status(&ctx.run, config.cargo, config.record))
            }
            Action::Run => {
                if !ctx.run.trusted() {
                    return Err(ToolError::not_available(tools_core::trust::skipped_line(
                        "the tests were not run (running them runs the project's code)",
                    )));
                }
                crate::run::run(ctx, &self.shared, &args).await
            }
        }
    }
}
