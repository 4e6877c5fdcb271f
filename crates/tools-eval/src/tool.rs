//! The `eval` tool itself: argument checks, one kernel per language per run (started on
//! first use, restarted after a crash or a kill), and the cell's result as the model reads
//! it.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tools_core::discovery::ProgramSearch;
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::cell::CellEnd;
use crate::kernel::KernelProcess;
use crate::label::cell_label;
use crate::{EvalConfig, Language, answer, discover, magics};

/// The arguments of `eval`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvalArgs {
    /// The cell to run. Python (default): the last expression is displayed; `display()`,
    /// pandas tables, matplotlib figures, IPython magics (`%pip`, `%cd`, `!cmd`, `%%bash`,
    /// `%%timeit`, `%%writefile`, `%load_ext autoreload`, …) work;
    /// `tool(name, args)` calls another tool. JavaScript: top-level `await`, `import`
    /// (ES modules and the workspace's packages), `require`, and `await tool(name, args)`.
    code: String,
    /// Required: 5–10 words saying what the cell does (its label in the transcript). Outside
    /// that range the cell still runs: the label is trimmed or padded and the answer says so.
    description: String,
    /// `python` (default) or `javascript`.
    #[serde(default)]
    language: Language,
    /// Discard the current kernel of this language and start a clean one first.
    #[serde(default)]
    reset: bool,
}

#[derive(Default)]
struct Slot {
    kernel: Option<KernelProcess>,
    /// Why the previous kernel is gone, told with the next cell.
    lost: Option<String>,
}

/// The run's kernels.
#[derive(Default)]
pub(crate) struct KernelSet {
    python: Slot,
    javascript: Slot,
    cells: u64,
}

impl KernelSet {
    fn slot(&mut self, lang: Language) -> &mut Slot {
        match lang {
            Language::Python => &mut self.python,
            Language::Javascript => &mut self.javascript,
        }
    }
}

/// Shuts every kernel down (the run is closing).
pub(crate) async fn shutdown_all(kernels: &Mutex<KernelSet>) {
    let mut set = kernels.lock().await;
    for lang in Language::ALL {
        if let Some(k) = set.slot(lang).kernel.take() {
            k.shutdown(std::time::Duration::from_millis(500)).await;
        }
    }
}

/// The `eval` tool of one run.
pub struct EvalTool {
    config: EvalConfig,
    kernels: Arc<Mutex<KernelSet>>,
}

impl EvalTool {
    /// A tool with no kernel started yet.
    pub fn new(config: EvalConfig) -> Self {
        EvalTool {
            config,
            kernels: Arc::new(Mutex::new(KernelSet::default())),
        }
    }

    pub(crate) fn kernels(&self) -> Arc<Mutex<KernelSet>> {
        Arc::clone(&self.kernels)
    }

    /// The process id of the running kernel of `language`, if one runs (for tests and
    /// diagnostics).
    pub async fn kernel_pid(&self, language: Language) -> Option<i32> {
        let mut set = self.kernels.lock().await;
        set.slot(language).kernel.as_ref().map(|k| k.pid())
    }
}

impl EvalTool {
    async fn ensure_kernel<'a>(
        &self,
        ctx: &CallCtx,
        slot: &'a mut Slot,
        lang: Language,
        notes: &mut Vec<String>,
    ) -> Result<&'a mut KernelProcess, ToolError> {
        if let Some(k) = slot.kernel.as_mut()
            && !k.is_alive()
        {
            slot.kernel = None;
            slot.lost
                .get_or_insert_with(|| "exited between cells".to_string());
        }
        // A cell whose call was dropped before it finished may still run: end it first, so
        // none of its output or its completion is taken for this cell's.
        if let Some(k) = slot.kernel.as_mut()
            && k.cell_in_flight()
            && let Err(why) = k.settle(self.config.cell_settings()?.grace).await
        {
            slot.kernel = None;
            slot.lost = Some(why);
        }
        if slot.kernel.is_none() {
            // Discovery may run a launcher script once (blocking): keep it off the runtime.
            let (root, config) = (ProgramSearch::for_run(&ctx.run), self.config.clone());
            let found = tokio::task::spawn_blocking(move || discover::find(lang, &root, &config))
                .await
                .map_err(|e| ToolError::internal(format!("interpreter discovery failed: {e}")))?;
            let interp = found.map_err(|why| {
                ToolError::not_available(format!("no {} interpreter for eval: {why}", lang.name()))
            })?;
            let kernel =
                KernelProcess::start(&ctx.run, lang, interp, self.config.start_timeout()?).await?;
            if let Some(lost) = slot.lost.take() {
                notes.push(format!(
                    "[a fresh {} kernel was started: the previous one {lost}; its variables and imports are gone]",
                    lang.name()
                ));
            }
            slot.kernel = Some(kernel);
        }
        slot.kernel
            .as_mut()
            .ok_or_else(|| ToolError::internal("the kernel vanished while starting"))
    }
}

#[tools_core::async_trait]
impl Tool for EvalTool {
    fn name(&self) -> &str {
        "eval"
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn description(&self) -> String {
        "Run a Python (default) or JavaScript cell in a persistent kernel: variables, imports and loaded data \
         survive between calls. The last expression is displayed as in a notebook; display(), pandas tables and \
         matplotlib figures (returned as images) work. Where IPython is importable in the kernel's interpreter, values \
         are shown as IPython shows them and every IPython magic works (%load_ext autoreload, %prun, %xmode, \
         %time, %timeit, …); without it, %pip, %cd, !cmd, x = !cmd, %%bash, %%timeit, %time and %env do. \
         %%writefile/%%file write through the `write` tool. Call the other tools from a cell with tool(name, args) \
         (`await tool(...)` in JavaScript); errors raise ToolError. A cell that neither prints nor calls a tool \
         for the idle budget (5 minutes by default; paused while a tool call is pending) is interrupted. \
         An answer holds about 4000 characters (the head and tail of long output); to see more, print a slice \
         or write the data to a file and read the part you need. JavaScript cells may `import` ES modules and the \
         workspace's packages, and use `require`. `reset: true` starts a clean kernel."
            .into()
    }

    fn input_schema(&self) -> Value {
        schema_for::<EvalArgs>()
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let args: EvalArgs = parse_args(args)?;
        let lang = args.language;
        // Without IPython in the kernel's interpreter, magics become plain Python here; the
        // rewrite is only used then, but a cell it refuses is refused before anything runs.
        let rewritten = match lang {
            Language::Python => Some(magics::rewrite_python(&args.code)),
            Language::Javascript => None,
        };
        let settings = self.config.cell_settings()?;
        let mut set = self.kernels.lock().await;
        set.cells += 1;
        let cell_no = set.cells;
        let label = cell_label(&args.description, lang, cell_no);
        let slot = set.slot(lang);
        let mut notes = Vec::new();
        if args.reset {
            if let Some(k) = slot.kernel.take() {
                k.shutdown(std::time::Duration::from_millis(500)).await;
            }
            slot.lost = None;
            notes.push(format!(
                "[reset: a clean {} kernel was started]",
                lang.name()
            ));
        }
        let kernel = self.ensure_kernel(ctx, slot, lang, &mut notes).await?;
        let pid = kernel.pid();
        let version = kernel.version.clone();
        let ipython = kernel.ipython;
        let (code, ipython_syntax) = match rewritten {
            Some(_) if ipython => (args.code, true),
            Some(Ok(code)) => (code, false),
            Some(Err(e)) => {
                return Err(ToolError::invalid(
                    "code",
                    format!("line {}: {}", e.line, e.message),
                ));
            }
            None => (args.code, false),
        };
        if code.trim().is_empty() {
            let mut text = notes.join("\n");
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str("(empty cell: nothing ran)");
            if let Some(note) = &label.note {
                text.push('\n');
                text.push_str(note);
            }
            return Ok(ToolOutput::text(text).with_structured(json!({
                "language": lang.name(), "status": "ok", "label": label.text,
                "kernel": {"pid": pid, "version": version, "ipython": ipython},
            })));
        }
        let run = kernel
            .execute(code, ipython_syntax, cell_no, ctx, &settings)
            .await;
        if run.end.kernel_lost() {
            slot.kernel = None;
            slot.lost = Some(match &run.end {
                CellEnd::Killed { .. } => {
                    "was killed when a cell outlasted its idle budget".to_string()
                }
                CellEnd::Crashed { how, .. } => format!("{how} during a cell"),
                _ => "was killed when a cell was cancelled".to_string(),
            });
        }
        drop(set);
        Ok(answer::render(
            &answer::CellFacts {
                lang,
                cell_no,
                pid,
                version: &version,
                ipython,
                budget: settings.answer_chars,
                label: &label,
            },
            notes,
            run,
        )?)
    }
}
