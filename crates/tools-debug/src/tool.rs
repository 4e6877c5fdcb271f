//! The `debug` tool: one tool with an `operation` parameter over the run's
//! [`DebugSupervisor`]. Tier `exec`, not parallel-safe (a session is state across calls).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::adapters::AdapterId;
use crate::session::Resume;
use crate::supervisor::{AttachTarget, BreakpointRequest, DebugSupervisor};

/// The operations of the `debug` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Which adapters are usable here, and why not.
    Adapters,
    /// Whether a session runs, and where it stopped.
    Status,
    /// Set the breakpoints of `file` to `lines` (empty clears); may be set before launch.
    Breakpoints,
    /// Start `program` with `args`, stop at the breakpoints.
    Launch,
    /// Connect to a running debuggee (`port`, `pid` or `vm_service_uri`).
    Attach,
    /// Run to the next stop.
    Continue,
    /// Stop the program where it is.
    Pause,
    /// Step over one line.
    StepOver,
    /// Step into a call.
    StepIn,
    /// Step out of the current function.
    StepOut,
    /// Thread ids and names.
    Threads,
    /// Frames of a thread (cap 30 per answer; `offset` pages on).
    Stack,
    /// Scopes of `frame_id` (default: the top frame of the stopped thread).
    Scopes,
    /// Children of `reference` (cap 50 per answer; values cut at 400 characters; `offset`
    /// pages on).
    Variables,
    /// Evaluate `expression` in `frame_id` (default: the top frame of the stopped thread).
    Evaluate,
    /// The debuggee's stdout/stderr so far (bounded).
    Output,
    /// End the session, kill the adapter and the debuggee; clears the breakpoints unless
    /// `keep_breakpoints` is true.
    Terminate,
}

/// Arguments of `debug`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    /// What to do.
    pub operation: Operation,
    /// `breakpoints`: the source file (workspace-relative).
    pub file: Option<String>,
    /// `breakpoints`: 1-based lines; empty clears the file.
    pub lines: Option<Vec<u64>>,
    /// `launch`: a script (.py, .dart), a Go package folder or .go file, or an ELF executable.
    pub program: Option<String>,
    /// `launch`: the program's arguments.
    pub args: Option<Vec<String>>,
    /// `launch`/`attach`: force an adapter (`debugpy`, `lldb`, `delve`, `dart`) instead of
    /// choosing from the program.
    pub adapter: Option<String>,
    /// `attach` (debugpy): the port of `python -m debugpy --listen PORT`.
    pub port: Option<u16>,
    /// `attach`: host of `port` (default 127.0.0.1).
    pub host: Option<String>,
    /// `attach` (delve, lldb): the process id.
    pub pid: Option<u32>,
    /// `attach` (dart): the VM-service URI the program printed.
    pub vm_service_uri: Option<String>,
    /// `attach`: pause right after attaching (debugpy does not suspend on attach by itself).
    pub suspend: Option<bool>,
    /// `continue`, steps, `pause`, `stack`: the thread (default: the last stopped thread).
    pub thread_id: Option<u64>,
    /// `scopes`, `evaluate`: the frame (from `stack` or a stop report); default the top
    /// frame of the stopped thread.
    pub frame_id: Option<u64>,
    /// `variables`: a reference from `scopes`, `variables` or `evaluate`.
    pub reference: Option<u64>,
    /// `evaluate`: the expression.
    pub expression: Option<String>,
    /// `stack`, `variables`: skip this many frames or children; `output`: start at this
    /// character. Each answer holds to about 4 KB and names the `offset` of what follows.
    pub offset: Option<usize>,
    /// `breakpoints`: instead of `lines`, a symbol's name path (`Greeter.greet`,
    /// `impl Point.norm`, `Server.Start`): one breakpoint on its first line of code, added to
    /// the file's others.
    pub symbol: Option<String>,
    /// `breakpoints`: stop only when this expression (the program's language) is true.
    pub condition: Option<String>,
    /// `breakpoints`: stop only when the hit count satisfies this (`3`, `>= 5`; the
    /// adapter's syntax).
    pub hit_condition: Option<String>,
    /// `breakpoints`: a logpoint — print this message (`{expr}` parts interpolated) to the
    /// output instead of stopping.
    pub log_message: Option<String>,
    /// `terminate`: keep the breakpoints for the next launch (default false: they are
    /// cleared with the session).
    pub keep_breakpoints: Option<bool>,
    /// `launch`, `attach`, `continue`, steps: how long to wait for the next stop (default 30 s)
    /// before answering "still running".
    pub timeout_seconds: Option<u64>,
}

/// The `debug` tool of one run.
pub struct DebugTool {
    supervisor: Arc<DebugSupervisor>,
}

impl DebugTool {
    /// A tool over `supervisor`.
    pub fn new(supervisor: Arc<DebugSupervisor>) -> Self {
        DebugTool { supervisor }
    }

    /// The supervisor behind it.
    pub fn supervisor(&self) -> &Arc<DebugSupervisor> {
        &self.supervisor
    }

    /// Runs one call with parsed arguments.
    pub async fn run(&self, request: DebugArgs) -> Result<ToolOutput, ToolError> {
        let supervisor = &self.supervisor;
        let adapter = match &request.adapter {
            None => None,
            Some(name) => Some(AdapterId::parse(name).ok_or_else(|| {
                ToolError::invalid(
                    "adapter",
                    format!("unknown adapter `{name}`; use debugpy, lldb, delve or dart"),
                )
            })?),
        };
        match request.operation {
            Operation::Adapters => supervisor.adapters().await,
            Operation::Status => supervisor.status().await,
            Operation::Breakpoints => {
                let file = request
                    .file
                    .ok_or_else(|| ToolError::invalid("file", "`breakpoints` needs `file`"))?;
                supervisor
                    .breakpoints(BreakpointRequest {
                        file,
                        lines: request.lines,
                        symbol: request.symbol,
                        condition: request.condition,
                        hit_condition: request.hit_condition,
                        log_message: request.log_message,
                    })
                    .await
            }
            Operation::Launch => {
                let program = request
                    .program
                    .ok_or_else(|| ToolError::invalid("program", "`launch` needs `program`"))?;
                supervisor
                    .launch(
                        &program,
                        request.args.unwrap_or_default(),
                        adapter,
                        request.timeout_seconds,
                    )
                    .await
            }
            Operation::Attach => {
                let target = AttachTarget {
                    adapter,
                    port: request.port,
                    host: request.host,
                    pid: request.pid,
                    vm_service_uri: request.vm_service_uri,
                    suspend: request.suspend.unwrap_or(false),
                };
                supervisor.attach(target, request.timeout_seconds).await
            }
            Operation::Continue => {
                supervisor
                    .resume(Resume::Continue, request.thread_id, request.timeout_seconds)
                    .await
            }
            Operation::StepOver => {
                supervisor
                    .resume(Resume::StepOver, request.thread_id, request.timeout_seconds)
                    .await
            }
            Operation::StepIn => {
                supervisor
                    .resume(Resume::StepIn, request.thread_id, request.timeout_seconds)
                    .await
            }
            Operation::StepOut => {
                supervisor
                    .resume(Resume::StepOut, request.thread_id, request.timeout_seconds)
                    .await
            }
            Operation::Pause => supervisor.pause(request.thread_id).await,
            Operation::Threads => supervisor.threads().await,
            Operation::Stack => {
                supervisor
                    .stack(request.thread_id, request.offset.unwrap_or(0))
                    .await
            }
            Operation::Scopes => supervisor.scopes(request.frame_id).await,
            Operation::Variables => {
                let reference = request.reference.ok_or_else(|| {
                    ToolError::invalid(
                        "reference",
                        "`variables` needs `reference` (from `scopes` or `variables`)",
                    )
                })?;
                supervisor
                    .variables(reference, request.offset.unwrap_or(0))
                    .await
            }
            Operation::Evaluate => {
                let expression = request
                    .expression
                    .filter(|text| !text.trim().is_empty())
                    .ok_or_else(|| {
                        ToolError::invalid(
                            "expression",
                            "`evaluate` needs a non-empty `expression`",
                        )
                    })?;
                supervisor.evaluate(&expression, request.frame_id).await
            }
            Operation::Output => supervisor.output(request.offset).await,
            Operation::Terminate => {
                supervisor
                    .terminate(request.keep_breakpoints.unwrap_or(false))
                    .await
            }
        }
    }
}

#[tools_core::async_trait]
impl Tool for DebugTool {
    fn name(&self) -> &str {
        "debug"
    }
    fn tier(&self) -> Tier {
        Tier::Exec
    }
    fn parallel_safe(&self) -> bool {
        false
    }
    fn description(&self) -> String {
        "Debugger control over the Debug Adapter Protocol: breakpoints, launch, step, inspect. \
One session per conversation (hard TTL 30 min); a second launch/attach is rejected until you `terminate`. \
Typical flow: `breakpoints` (file, lines) → `launch` (program) → the stop report (reason, path:line, source line, \
frames with frame_id) → `scopes` (frame_id; default the top frame) → `variables` (reference) / `evaluate` (expression) → \
`step_over` / `step_in` / `step_out` / `continue` → `terminate`. \
Breakpoints belong to the conversation until `terminate`: set before or during a session, they are kept when the program \
ends or the adapter fails, listed in every `launch` answer that applies them, and cleared by `terminate` \
(pass `keep_breakpoints: true` to keep them for the next launch). A breakpoint can also be set by name: `breakpoints` \
with file and `symbol` (a name path such as `Greeter.greet`) adds one on that symbol's first line of code; `condition`, \
`hit_condition` and `log_message` (a logpoint: prints into `output`, does not stop) apply to the breakpoints of that call, \
and are refused where the adapter does not support them. `continue`, the steps and `launch` wait up to `timeout_seconds` \
(default 30) and then answer \"still running\" so that `pause` can stop a loop. \
`stack`, `variables` and `output` answer about 4 KB at a time and name the `offset` that shows the rest. \
Adapters (`adapters` says which are usable here and why not): debugpy for .py, delve for Go packages, lldb for ELF \
executables (build C with `gcc -g`), dart for .dart. \
Attach: debugpy attaches to `port` of `python -m debugpy --listen PORT` and does not suspend (pass `suspend: true` \
for a stopped state); delve and lldb attach to `pid`; dart to `vm_service_uri`."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<DebugArgs>()
    }
    async fn call(&self, _ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let request: DebugArgs = parse_args(args)?;
        self.run(request).await
    }
}
