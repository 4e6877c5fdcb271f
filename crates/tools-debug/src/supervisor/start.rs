//! Starting a session: `launch` and `attach` turn their arguments into a start plan (the
//! adapter from the program or the attach target, resolved once by `resolve_adapter`), then
//! `start` runs it with the breakpoints and reports the first stop.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tools_core::{Run, ToolError, ToolOutput};

use super::{AttachTarget, DebugSupervisor, Inner};
use crate::adapters::{AdapterId, MarkerSearch, adapter_for_program, resolve_adapter};
use crate::report;
use crate::session::{Session, StartKind, StartPlan};

/// `out` with `line` (what the run's trust changed) as its first line.
fn lead_with(line: Option<String>, mut out: ToolOutput) -> ToolOutput {
    if let Some(line) = line {
        out.text = format!("{line}\n{}", out.text);
    }
    out
}

impl DebugSupervisor {
    /// Starts `program` under its adapter, stopping at the breakpoints.
    pub async fn launch(
        &self,
        program: &str,
        args: Vec<String>,
        adapter: Option<AdapterId>,
        timeout_seconds: Option<u64>,
    ) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let path = run.workspace().resolve(program)?;
        if !path.exists() {
            return Err(ToolError::invalid(
                "program",
                format!("`{program}` does not exist"),
            ));
        }
        let adapter = match adapter {
            Some(a) => a,
            None => adapter_for_program(&path)
                .map_err(|why| ToolError::invalid("program", format!("`{program}`: {why}")))?,
        };
        let mut inner = self.inner.lock().await;
        self.make_room(&mut inner).await?;
        let start_dir = if path.is_dir() {
            path.clone()
        } else {
            path.parent()
                .map(|p| p.to_path_buf())
                .unwrap_or_else(|| run.root().to_path_buf())
        };
        let shown = run.workspace().display(&path);
        let found = resolve_adapter(
            &run,
            &self.resolver,
            self.table.spec(adapter),
            MarkerSearch::UpFrom {
                start: &start_dir,
                program: &shown,
            },
        )
        .await?;
        let trust_limit = found.trust_limit;
        let plan = StartPlan {
            adapter,
            adapter_program: found.program,
            adapter_args: found.args,
            project_dir: found.project_dir,
            debuggee_python: found.debuggee_python,
            kind: StartKind::Launch {
                program: path.clone(),
                args: args.clone(),
            },
            scratch_dir: run.state_dir()?,
        };
        let target = if args.is_empty() {
            format!("launch {shown}")
        } else {
            format!("launch {shown} {}", args.join(" "))
        };
        self.start(&run, &mut inner, plan, target, timeout_seconds, false)
            .await
            .map(|out| lead_with(trust_limit, out))
    }

    /// Attaches to a running debuggee.
    pub async fn attach(
        &self,
        t: AttachTarget,
        timeout_seconds: Option<u64>,
    ) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let adapter = match (t.adapter, t.port, t.pid, &t.vm_service_uri) {
            (Some(a), ..) => a,
            (None, Some(_), _, _) => AdapterId::Debugpy,
            (None, None, _, Some(_)) => AdapterId::Dart,
            (None, None, Some(_), None) => {
                return Err(ToolError::invalid(
                    "adapter",
                    "attaching by `pid` needs `adapter` (delve or lldb)",
                ));
            }
            (None, None, None, None) => {
                return Err(ToolError::invalid_args(
                    "attach needs `port` (debugpy started with `python -m debugpy --listen PORT`), `pid` (delve, lldb) \
                     or `vm_service_uri` (dart)",
                ));
            }
        };
        match adapter {
            AdapterId::Debugpy if t.port.is_none() => {
                return Err(ToolError::invalid(
                    "port",
                    "debugpy attaches to the port given to `python -m debugpy --listen`",
                ));
            }
            AdapterId::Delve | AdapterId::Lldb if t.pid.is_none() => {
                return Err(ToolError::invalid(
                    "pid",
                    format!("{adapter} attaches to a process id"),
                ));
            }
            AdapterId::Dart if t.vm_service_uri.is_none() => {
                return Err(ToolError::invalid(
                    "vm_service_uri",
                    "dart attaches to the VM-service URI the program printed",
                ));
            }
            _ => {}
        }
        let mut inner = self.inner.lock().await;
        self.make_room(&mut inner).await?;
        let found = resolve_adapter(
            &run,
            &self.resolver,
            self.table.spec(adapter),
            MarkerSearch::InWorkspace,
        )
        .await?;
        let host = t.host.clone().unwrap_or_else(|| "127.0.0.1".into());
        let target = match (t.port, t.pid, &t.vm_service_uri) {
            (Some(p), _, _) => format!("attach {host}:{p}"),
            (_, Some(pid), _) => format!("attach pid {pid}"),
            (_, _, Some(u)) => format!("attach {u}"),
            _ => "attach".into(),
        };
        let trust_limit = found.trust_limit;
        let plan = StartPlan {
            adapter,
            adapter_program: found.program,
            adapter_args: found.args,
            project_dir: found.project_dir,
            debuggee_python: found.debuggee_python,
            kind: StartKind::Attach {
                port: t.port,
                host,
                pid: t.pid,
                vm_service_uri: t.vm_service_uri.clone(),
            },
            scratch_dir: run.state_dir()?,
        };
        self.start(&run, &mut inner, plan, target, timeout_seconds, t.suspend)
            .await
            .map(|out| lead_with(trust_limit, out))
    }

    async fn start(
        &self,
        run: &Arc<Run>,
        inner: &mut Inner,
        plan: StartPlan,
        target: String,
        timeout_seconds: Option<u64>,
        suspend: bool,
    ) -> Result<ToolOutput, ToolError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let attached = matches!(plan.kind, StartKind::Attach { .. });
        let ttl = Duration::from_secs(self.config.session_ttl_seconds);
        let breakpoints = inner.breakpoints.clone();
        let (session, results) =
            Session::start(run, id, plan, target, ttl, self.bounds(), &breakpoints).await?;
        inner.results = results;
        inner.last_end = None;
        inner.last_output = None;
        inner.session = Some(session);
        self.arm_ttl(id);
        let mut head = Vec::new();
        if let Some(s) = inner.session.as_ref() {
            head.push(format!(
                "started: {} ({}); hard TTL {}",
                s.target,
                s.adapter,
                report::human(ttl)
            ));
        }
        let bps = self.breakpoint_summary(inner);
        if !bps.is_empty() {
            head.push(format!(
                "breakpoints applied (set with `breakpoints`, kept until `terminate`):\n{bps}"
            ));
        }
        if attached {
            if suspend {
                return self.pause_inner(inner, None, head).await;
            }
            // debugpy does not suspend on attach; catch a breakpoint that hits at once.
            let bound = Duration::from_millis(500);
            return self.wait_and_report(inner, bound, head, true).await;
        }
        let bound = self.wait_bound(timeout_seconds);
        self.wait_and_report(inner, bound, head, false).await
    }
}
