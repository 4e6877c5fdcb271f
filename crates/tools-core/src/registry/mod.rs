//! The registry: the registration rule, per-surface listing, per-run serialisation of tools
//! that are not parallel-safe, and the one guard chain every call passes through —
//! validate → approve → call → write observers. Approval policy is decided here, never by
//! `if`s inside tools.
//!
//! What plugs into it — families, write observers, the approver — is `contracts`; calls from
//! inside a tool back through it are `invoker`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::preview::{PreviewReport, ProposedFile};
use crate::tool::Progress;
use crate::{CallCtx, Run, Surface, Tier, Tool, ToolError, ToolOutput, WritePass};

mod contracts;
mod invoker;
#[cfg(test)]
mod pass_tests;

pub use contracts::{
    Approval, ApprovalRequest, Approver, AutoApprove, DoctorEntry, ToolFamily, ToolInfo,
    WriteObserver,
};
pub use invoker::Invoker;

/// Why [`Registry::call`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No such tool on this surface — also the answer for a tool hidden by the surface's tier.
    #[error("unknown tool `{name}` on the {surface} surface")]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The surface.
        surface: String,
    },
    /// The tool ran (or was refused by a guard) and failed.
    #[error(transparent)]
    Tool(#[from] ToolError),
}

/// Options for one call.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Progress sink.
    pub progress: Progress,
    /// Cancelled when the caller gives up; defaults to a child of the run's token.
    pub cancel: Option<CancellationToken>,
    /// Tools already on the call stack (bridged calls), to refuse re-entrance.
    pub stack: Vec<String>,
}

/// Builds a [`Registry`] from a run's wired resources.
pub struct RegistryBuilder {
    run: Arc<Run>,
    tools: Vec<Arc<dyn Tool>>,
    observers: Vec<Arc<dyn WriteObserver>>,
    families: Vec<Arc<dyn ToolFamily>>,
    approver: Arc<dyn Approver>,
}

impl RegistryBuilder {
    /// Starts a registry for `run`, approving everything until told otherwise.
    pub fn new(run: Arc<Run>) -> Self {
        RegistryBuilder {
            run,
            tools: Vec::new(),
            observers: Vec::new(),
            families: Vec::new(),
            approver: Arc::new(AutoApprove),
        }
    }
    /// Adds a family: its tools and observers.
    pub fn family(mut self, family: Arc<dyn ToolFamily>) -> Self {
        self.tools.extend(family.tools());
        self.observers.extend(family.observers());
        self.families.push(family);
        self
    }
    /// Adds one tool (a harness's own, say).
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }
    /// Adds a write observer.
    pub fn observer(mut self, observer: Arc<dyn WriteObserver>) -> Self {
        self.observers.push(observer);
        self
    }
    /// Sets the approver for write and exec calls.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }
    /// Builds the registry. Two tools with one name is an error.
    pub fn build(self) -> Result<Arc<Registry>, ToolError> {
        let mut by_name = BTreeMap::new();
        let mut locks = HashMap::new();
        for t in self.tools {
            let name = t.name().to_string();
            if !t.parallel_safe() {
                locks.insert(name.clone(), tokio::sync::Mutex::new(()));
            }
            if by_name.insert(name.clone(), t).is_some() {
                return Err(ToolError::internal(format!("two tools are named `{name}`")));
            }
        }
        Ok(Arc::new_cyclic(|me| Registry {
            me: me.clone(),
            run: self.run,
            tools: by_name,
            locks,
            observers: self.observers,
            families: self.families,
            approver: self.approver,
        }))
    }
}

/// One run's tools, serving any surface.
pub struct Registry {
    me: Weak<Registry>,
    run: Arc<Run>,
    tools: BTreeMap<String, Arc<dyn Tool>>,
    locks: HashMap<String, tokio::sync::Mutex<()>>,
    observers: Vec<Arc<dyn WriteObserver>>,
    families: Vec<Arc<dyn ToolFamily>>,
    approver: Arc<dyn Approver>,
}

impl Registry {
    /// The run.
    pub fn run(&self) -> &Arc<Run> {
        &self.run
    }

    /// The tools `surface` sees, by name.
    pub fn list(&self, surface: Surface) -> Vec<ToolInfo> {
        self.tools
            .values()
            .filter(|t| surface.allows(t.tier()))
            .map(|t| ToolInfo {
                name: t.name().to_string(),
                tier: t.tier(),
                description: t.description(),
                input_schema: t.input_schema(),
                parallel_safe: t.parallel_safe(),
            })
            .collect()
    }

    /// The wired families, in wiring order.
    pub fn families(&self) -> &[Arc<dyn ToolFamily>] {
        &self.families
    }

    /// Every family's doctor report.
    pub async fn doctor(&self) -> Vec<DoctorEntry> {
        let mut out = Vec::new();
        for f in &self.families {
            out.extend(f.doctor().await);
        }
        out
    }

    /// An invoker calling tools of this run as `surface`.
    pub fn invoker(&self, surface: Surface) -> Invoker {
        Invoker {
            registry: self.me.clone(),
            surface,
            stack: Vec::new(),
        }
    }

    /// Asks every write observer what writing `proposed` would report (see
    /// [`WriteObserver::preview`]); nothing is written.
    pub async fn preview(&self, ctx: &CallCtx, proposed: &[ProposedFile]) -> PreviewReport {
        let mut report = PreviewReport::default();
        for obs in &self.observers {
            match unless_panicked("preview", obs.preview(ctx, proposed)).await {
                Ok(r) => report.merge(r),
                Err(e) => report.not_covered.push(e.to_string()),
            }
        }
        report
    }

    /// Calls `name` as `surface` through the guard chain.
    pub async fn call(
        &self,
        surface: Surface,
        name: &str,
        args: Value,
    ) -> Result<ToolOutput, CallError> {
        self.call_with(surface, name, args, CallOptions::default())
            .await
    }

    /// [`Registry::call`] with a progress sink, cancellation and call stack.
    ///
    /// The first answer of the run to a caller (not a bridged call from inside a tool,
    /// whose answer the calling tool reads) leads with the line saying what opening the
    /// workspace recovered from a killed run, success or error alike. An unknown tool is
    /// not an answer of the run, so the line waits for the next one.
    pub async fn call_with(
        &self,
        surface: Surface,
        name: &str,
        args: Value,
        opts: CallOptions,
    ) -> Result<ToolOutput, CallError> {
        let outermost = opts.stack.is_empty();
        let answer = self.call_guarded(surface, name, args, opts).await;
        if !outermost {
            return answer;
        }
        match answer {
            Ok(mut out) => {
                out.lead_with(self.run.take_recovery_notice());
                Ok(out)
            }
            Err(CallError::Tool(e)) => Err(CallError::Tool(
                e.lead_with(self.run.take_recovery_notice()),
            )),
            Err(e @ CallError::UnknownTool { .. }) => Err(e),
        }
    }

    /// [`Registry::call_with`] without the recovery line: the guard chain, the call and the
    /// write observers.
    async fn call_guarded(
        &self,
        surface: Surface,
        name: &str,
        args: Value,
        opts: CallOptions,
    ) -> Result<ToolOutput, CallError> {
        let unknown = || CallError::UnknownTool {
            name: name.to_string(),
            surface: surface.name.to_string(),
        };
        let tool = self.tools.get(name).ok_or_else(unknown)?;
        if !surface.allows(tool.tier()) {
            return Err(unknown());
        }
        if self.run.is_closed() {
            return Err(ToolError::rejected("this run is closed; start a new one").into());
        }
        // Validate: the arguments are an object (each tool parses its own fields).
        let args = match args {
            Value::Null => Value::Object(Default::default()),
            Value::Object(m) => Value::Object(m),
            other => {
                return Err(ToolError::invalid_args(format!(
                    "the arguments of `{name}` must be a JSON object, got {other}"
                ))
                .into());
            }
        };
        if !tool.parallel_safe() && opts.stack.iter().any(|s| s == name) {
            return Err(ToolError::rejected(format!(
                "`{name}` is already running further up this call (a bridged call into itself would deadlock); \
                 call it directly instead"
            ))
            .into());
        }
        // Approve.
        if tool.tier() > Tier::Read {
            let req = ApprovalRequest {
                tool: name.to_string(),
                tier: tool.tier(),
                args: args.clone(),
                surface,
            };
            if let Approval::Denied(why) = self.approver.approve(&req).await {
                return Err(ToolError::rejected(format!(
                    "the operator did not approve `{name}`: {why}"
                ))
                .into());
            }
        }
        // Call, serialised per run for tools that are not parallel-safe.
        let mut stack = opts.stack.clone();
        stack.push(name.to_string());
        let ctx = CallCtx {
            run: Arc::clone(&self.run),
            surface,
            invoker: Invoker {
                registry: self.me.clone(),
                surface,
                stack,
            },
            progress: opts.progress.clone(),
            cancel: opts
                .cancel
                .clone()
                .unwrap_or_else(|| self.run.cancellation().child_token()),
        };
        // A call cancelled while it waits its turn never starts.
        let _guard = match self.locks.get(name) {
            Some(lock) => tokio::select! {
                g = lock.lock() => Some(g),
                _ = ctx.cancel.cancelled() => None,
            },
            None => None,
        };
        if ctx.cancel.is_cancelled() {
            return Err(
                ToolError::rejected(format!("`{name}` was cancelled before it started")).into(),
            );
        }
        let mut out =
            unless_panicked(name, ctx.progress.clone().scope(tool.call(&ctx, args))).await??;
        drop(_guard);
        // Write observers, side by side: the answer waits for the longest, not the sum.
        if !out.touched.is_empty() {
            let passes = WritePass::for_observers(
                &self
                    .observers
                    .iter()
                    .map(|o| o.syncs_servers())
                    .collect::<Vec<_>>(),
            );
            let at_once = out.checks_in_background;
            let passes = passes
                .into_iter()
                .map(|p| if at_once { p.answering_at_once() } else { p });
            let touched = &out.touched;
            let ctx = &ctx;
            let found =
                futures::future::join_all(self.observers.iter().zip(passes).map(|(obs, pass)| {
                    unless_panicked(name, async move {
                        obs.after_write_in(ctx, touched, &pass).await
                    })
                }))
                .await;
            // Every observer has read the texts from before this call's writes (a reader
            // that outlives this pass holds its own share of them).
            self.run.workspace().pre_write_images().release(touched);
            for sections in found {
                out.sections.extend(sections?);
            }
        }
        Ok(out)
    }
}

/// Runs `fut`, turning a panic inside it into an internal error for the model (logged with
/// its message), so one broken tool answers its call and the server keeps serving.
async fn unless_panicked<T>(
    tool: &str,
    fut: impl std::future::Future<Output = T>,
) -> Result<T, ToolError> {
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
        Ok(v) => Ok(v),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            tracing::error!(tool, "a tool call panicked: {why}");
            Err(ToolError::internal(format!(
                "`{tool}` failed with an internal error (it panicked: {why}); this is a bug in the tool, \
                 not in your arguments; other tools keep working"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    use crate::Section;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Echo {
        name: &'static str,
        tier: Tier,
        parallel: bool,
        inflight: AtomicUsize,
        max_inflight: AtomicUsize,
    }

    impl Echo {
        fn new(name: &'static str, tier: Tier, parallel: bool) -> Arc<Self> {
            Arc::new(Echo {
                name,
                tier,
                parallel,
                inflight: 0.into(),
                max_inflight: 0.into(),
            })
        }
    }

    #[async_trait::async_trait]
    impl Tool for Echo {
        fn name(&self) -> &str {
            self.name
        }
        fn tier(&self) -> Tier {
            self.tier
        }
        fn description(&self) -> String {
            "echo".into()
        }
        fn input_schema(&self) -> Value {
            json!({"type":"object"})
        }
        fn parallel_safe(&self) -> bool {
            self.parallel
        }
        async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
            let n = self.inflight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_inflight.fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            self.inflight.fetch_sub(1, Ordering::SeqCst);
            if let Some(inner) = args.get("bridge").and_then(Value::as_str) {
                return ctx.invoker.call(inner, json!({})).await;
            }
            let mut out = ToolOutput::text(format!("{} ok", self.name));
            if self.tier == Tier::Write {
                out.touched.push(ctx.run.root().join("f"));
            }
            Ok(out)
        }
    }

    struct Panics;
    #[async_trait::async_trait]
    impl Tool for Panics {
        fn name(&self) -> &str {
            "panics"
        }
        fn tier(&self) -> Tier {
            Tier::Exec
        }
        fn description(&self) -> String {
            "panics".into()
        }
        fn input_schema(&self) -> Value {
            json!({"type":"object"})
        }
        fn parallel_safe(&self) -> bool {
            false
        }
        async fn call(&self, _ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
            let v: Vec<u8> = Vec::new();
            Ok(ToolOutput::text(format!(
                "{}",
                v[usize::from(v.is_empty())]
            )))
        }
    }

    #[tokio::test]
    async fn a_panicking_tool_is_an_internal_error_and_the_next_call_works() {
        let (_d, run) = run();
        let reg = RegistryBuilder::new(run)
            .tool(Arc::new(Panics))
            .tool(Echo::new("r", Tier::Read, true))
            .build()
            .unwrap();
        for _ in 0..2 {
            // Twice: the per-tool lock was released by the unwinding call.
            match reg.call(Surface::FULL, "panics", json!({})).await {
                Err(CallError::Tool(ToolError::Internal(m))) => {
                    assert!(
                        m.contains("panicked") && m.contains("index out of bounds"),
                        "{m}"
                    )
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(
            reg.call(Surface::FULL, "r", json!({})).await.unwrap().text,
            "r ok"
        );
    }

    #[tokio::test]
    async fn a_call_cancelled_while_it_waits_its_turn_never_runs() {
        let (_d, run) = run();
        let x = Echo::new("x", Tier::Exec, false);
        let reg = RegistryBuilder::new(run).tool(x.clone()).build().unwrap();
        let cancel = CancellationToken::new();
        let first = reg.call(Surface::FULL, "x", json!({}));
        let second = reg.call_with(
            Surface::FULL,
            "x",
            json!({}),
            CallOptions {
                cancel: Some(cancel.clone()),
                ..Default::default()
            },
        );
        let canceller = async {
            tokio::task::yield_now().await;
            cancel.cancel();
        };
        let (a, b, ()) = tokio::join!(first, second, canceller);
        assert_eq!(a.unwrap().text, "x ok");
        match b {
            Err(CallError::Tool(ToolError::Rejected(m))) => {
                assert!(m.contains("before it started"))
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    struct Deny;
    #[async_trait::async_trait]
    impl Approver for Deny {
        async fn approve(&self, _r: &ApprovalRequest) -> Approval {
            Approval::Denied("no".into())
        }
    }

    struct Note;
    #[async_trait::async_trait]
    impl WriteObserver for Note {
        async fn after_write(&self, _ctx: &CallCtx, touched: &[PathBuf]) -> Vec<Section> {
            vec![Section::new("observed", format!("{} files", touched.len()))]
        }
    }

    fn run() -> (tempfile::TempDir, Arc<Run>) {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::for_test(dir.path(), "c");
        (dir, run)
    }

    #[tokio::test]
    async fn the_recovery_line_leads_the_first_answer_even_when_it_is_an_error() {
        let (_d, run) = run();
        run.set_recovery_notice("Recovered after a crash: one thing.");
        let reg = RegistryBuilder::new(run)
            .tool(Echo::new("r", Tier::Read, true))
            .build()
            .unwrap();
        // An unknown tool is no answer of the run: the line waits.
        assert!(matches!(
            reg.call(Surface::FULL, "nope", json!({})).await,
            Err(CallError::UnknownTool { .. })
        ));
        let err = match reg.call(Surface::FULL, "r", json!([1])).await {
            Err(CallError::Tool(e)) => e,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(err.kind(), "invalid_arguments");
        assert_eq!(
            err.to_string(),
            "Recovered after a crash: one thing.\n\
             invalid arguments: the arguments of `r` must be a JSON object, got [1]"
        );
        // Said once.
        assert_eq!(
            reg.call(Surface::FULL, "r", json!({})).await.unwrap().text,
            "r ok"
        );
    }

    #[tokio::test]
    async fn a_bridged_call_leaves_the_recovery_line_to_the_outer_answer() {
        let (_d, run) = run();
        run.set_recovery_notice("Recovered after a crash: one thing.");
        let reg = RegistryBuilder::new(run)
            .tool(Echo::new("r", Tier::Read, true))
            .build()
            .unwrap();
        let inner = reg
            .call_with(
                Surface::FULL,
                "r",
                json!({}),
                CallOptions {
                    stack: vec!["outer".into()],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(inner.text, "r ok");
        assert_eq!(
            reg.call(Surface::FULL, "r", json!({})).await.unwrap().text,
            "Recovered after a crash: one thing.\nr ok"
        );
    }

    #[tokio::test]
    async fn surfaces_hide_higher_tiers_entirely() {
        let (_d, run) = run();
        let reg = RegistryBuilder::new(run)
            .tool(Echo::new("r", Tier::Read, true))
            .tool(Echo::new("w", Tier::Write, true))
            .tool(Echo::new("x", Tier::Exec, false))
            .observer(Arc::new(Note))
            .build()
            .unwrap();
        let names = |s| reg.list(s).into_iter().map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(names(Surface::FULL), vec!["r", "w", "x"]);
        assert_eq!(names(Surface::PLAN), vec!["r"]);
        assert_eq!(names(Surface::READ_ONLY), vec!["r"]);
        let err = reg.call(Surface::PLAN, "w", json!({})).await.unwrap_err();
        assert_eq!(
            err,
            reg.call(Surface::PLAN, "nope", json!({}))
                .await
                .unwrap_err()
                .renamed("w")
        );
        let out = reg.call(Surface::FULL, "w", json!({})).await.unwrap();
        assert_eq!(out.sections[0].body, "1 files");
        assert!(matches!(
            reg.call(Surface::FULL, "r", json!([1])).await,
            Err(CallError::Tool(ToolError::InvalidArguments { .. }))
        ));
    }

    impl CallError {
        fn renamed(self, n: &str) -> CallError {
            match self {
                CallError::UnknownTool { surface, .. } => CallError::UnknownTool {
                    name: n.into(),
                    surface,
                },
                o => o,
            }
        }
    }

    #[tokio::test]
    async fn serialises_non_parallel_tools_and_refuses_reentrance() {
        let (_d, run) = run();
        let x = Echo::new("x", Tier::Exec, false);
        let r = Echo::new("r", Tier::Read, true);
        let reg = RegistryBuilder::new(run)
            .tool(x.clone())
            .tool(r.clone())
            .build()
            .unwrap();
        let calls = (0..4).map(|_| reg.call(Surface::FULL, "x", json!({})));
        futures::future::join_all(calls).await;
        assert_eq!(x.max_inflight.load(Ordering::SeqCst), 1);
        let calls = (0..4).map(|_| reg.call(Surface::FULL, "r", json!({})));
        futures::future::join_all(calls).await;
        assert!(r.max_inflight.load(Ordering::SeqCst) > 1);
        // x bridging into x is refused, not a deadlock; x bridging into r works.
        let err = reg
            .call(Surface::FULL, "x", json!({"bridge":"x"}))
            .await
            .unwrap_err();
        assert!(matches!(err, CallError::Tool(ToolError::Rejected(_))));
        let ok = reg
            .call(Surface::FULL, "x", json!({"bridge":"r"}))
            .await
            .unwrap();
        assert_eq!(ok.text, "r ok");
    }

    #[tokio::test]
    async fn approver_gates_write_and_exec_only() {
        let (_d, run) = run();
        let reg = RegistryBuilder::new(run)
            .tool(Echo::new("r", Tier::Read, true))
            .tool(Echo::new("w", Tier::Write, true))
            .approver(Arc::new(Deny))
            .build()
            .unwrap();
        assert!(reg.call(Surface::FULL, "r", json!({})).await.is_ok());
        assert!(matches!(
            reg.call(Surface::FULL, "w", json!({})).await,
            Err(CallError::Tool(ToolError::Rejected(_)))
        ));
        // A bridged call goes through the same approver.
        let err = reg
            .invoker(Surface::FULL)
            .call("w", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::Rejected(_)));
        // A bridged call to a hidden tool is refused.
        let err = reg
            .invoker(Surface::PLAN)
            .call("w", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::NotAvailable(_)));
    }
}
