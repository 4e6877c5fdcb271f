//! The five `vibe_*` tools over one run's [`WorkerList`]. All are tier `read`: the approval
//! gate belongs to the workers' own tools, where the editing happens.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tools_core::text::{cap_list, cut_text};
use tools_core::{CallCtx, Tier, Tool, ToolError, ToolOutput, parse_args, schema_for};

use crate::config::VibeConfig;
use crate::worker::{Status, WorkerList, WorkerSnapshot};

/// Default `vibe_wait` timeout.
const DEFAULT_WAIT: f64 = 300.0;
/// Longest `vibe_wait` timeout accepted.
const MAX_WAIT: f64 = 3600.0;
/// Workers shown by `vibe_list`.
const LIST_CAP: usize = 50;
/// Result characters per worker in `vibe_list`.
const LIST_RESULT_CAP: usize = 600;
/// Output lines shown for a worker that is running or failed.
const TAIL_LINES: usize = 20;

/// What the five tools share: the configuration and the run's worker list.
pub(crate) struct Shared {
    pub config: VibeConfig,
    pub list: Arc<WorkerList>,
}

fn elapsed(secs: f64) -> String {
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else {
        let s = secs.round() as u64;
        if s < 3600 {
            format!("{} min {} s", s / 60, s % 60)
        } else {
            format!("{} h {} min", s / 3600, (s % 3600) / 60)
        }
    }
}

/// One line: `w1 "label" [fast] done, round 2, 12.3 s, exit code 0`.
fn headline(w: &WorkerSnapshot) -> String {
    let mut s = format!(
        "{} \"{}\" [{}] {}",
        w.id,
        w.label,
        w.tier,
        w.status.as_str()
    );
    s.push_str(&format!(", round {}", w.round));
    if w.status.is_finished() {
        s.push_str(&format!(", {}", elapsed(w.elapsed_seconds)));
    } else {
        s.push_str(&format!(", {} so far", elapsed(w.elapsed_seconds)));
    }
    if w.status == Status::Stalled {
        s.push_str(&format!(", no output for {}", elapsed(w.quiet_seconds)));
    }
    if let Some(c) = w.exit_code {
        s.push_str(&format!(", exit code {c}"));
    }
    if let Some(n) = &w.note {
        s.push_str(&format!(" ({n})"));
    }
    s
}

/// The full report of one worker: headline, log path, result, and the output tail when the
/// result alone does not explain things.
fn report(w: &WorkerSnapshot, result_cap: usize) -> String {
    let mut out = headline(w);
    out.push_str(&format!("\nlog: {}", w.log_path.display()));
    if let Some(r) = &w.result {
        out.push_str(&format!("\nresult:\n{}", cut_text(r, result_cap)));
    }
    let show_tail = !w.tail.is_empty() && (w.result.is_none() || !matches!(w.status, Status::Done));
    if show_tail {
        out.push_str(&format!("\nlast output:\n{}", w.tail));
    }
    out
}

fn structured(w: &WorkerSnapshot) -> Value {
    let mut v = serde_json::to_value(w).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("status".into(), Value::String(w.status.as_str().into()));
    }
    v
}

fn require_text(field: &str, value: &str, what: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        return Err(ToolError::invalid(
            field,
            format!("the {what} is empty; say what the worker should do"),
        ));
    }
    Ok(())
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SpawnArgs {
    /// The complete task for the worker: it sees nothing of this conversation, so say what to
    /// do, where, and what to report back.
    brief: String,
    /// A short name for the worker, shown in vibe_list.
    label: String,
    /// `fast` (mechanical work with a clear spec) or `good` (design, judgement, or reviewing a
    /// fast worker's output). Default `fast`.
    #[serde(default)]
    tier: Option<String>,
}

/// `vibe_spawn`: starts a worker and returns at once.
pub(crate) struct VibeSpawn(pub Arc<Shared>);

#[tools_core::async_trait]
impl Tool for VibeSpawn {
    fn name(&self) -> &str {
        "vibe_spawn"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        let tiers = self
            .0
            .config
            .tiers
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "Start a background worker (another coding agent CLI) on a brief; returns at once with \
             its id (w1, w2, …). The worker works in this workspace with its own tools and \
             approvals and sees nothing of this conversation, so the brief must be complete. \
             Follow it with vibe_wait, vibe_list, vibe_send or vibe_kill. Tiers here: {tiers}."
        )
    }
    fn input_schema(&self) -> Value {
        schema_for::<SpawnArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: SpawnArgs = parse_args(args)?;
        require_text("brief", &a.brief, "brief")?;
        let tier = match a.tier.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => t.to_string(),
            _ => self.0.config.default_tier()?.to_string(),
        };
        // From a read-capped surface the tier runs its read-only command, or not at all.
        let tier_config = &self.0.config.tier(&tier)?.for_surface(&tier, ctx.surface)?;
        let label = match a.label.trim() {
            "" => cut_text(a.brief.trim().lines().next().unwrap_or("worker"), 40),
            l => cut_text(&l.replace('\n', " "), 80),
        };
        let worker = self.0.list.spawn(
            &ctx.run,
            &tier,
            tier_config,
            &a.brief,
            &label,
            self.0.config.max_running(),
        )?;
        let snap = worker.snapshot(0);
        let text = format!(
            "started {} \"{}\" on tier {} (round 1, pid {}); it keeps running in the background.\n\
             log: {}\nnext: vibe_wait {{\"worker_id\": \"{}\"}} or vibe_list",
            snap.id,
            snap.label,
            snap.tier,
            snap.pid,
            snap.log_path.display(),
            snap.id
        );
        Ok(ToolOutput::text(text).with_structured(structured(&snap)))
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    /// The worker id from vibe_spawn, e.g. `w1`.
    worker_id: String,
    /// Appended to the worker's brief; the worker then runs again from the start with the
    /// whole brief (a running round is stopped first).
    message: String,
}

/// `vibe_send`: appends to the brief and reruns.
pub(crate) struct VibeSend(pub Arc<Shared>);

#[tools_core::async_trait]
impl Tool for VibeSend {
    fn name(&self) -> &str {
        "vibe_send"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Append a message to a worker's brief and run it again (the next round). A round still \
         running is stopped first. Returns at once; use vibe_wait for the new result."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<SendArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: SendArgs = parse_args(args)?;
        let worker = self.0.list.get(&a.worker_id)?;
        require_text("message", &a.message, "message")?;
        let round = worker.send(&ctx.run, &a.message).await?;
        let snap = worker.snapshot(0);
        Ok(ToolOutput::text(format!(
            "{} \"{}\" restarted with the appended brief: round {round} is running.\nlog: {}",
            snap.id,
            snap.label,
            snap.log_path.display()
        ))
        .with_structured(structured(&snap)))
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WaitArgs {
    /// The worker id from vibe_spawn, e.g. `w1`.
    worker_id: String,
    /// How long to wait at most, in seconds (default 300, at most 3600). On timeout the
    /// current status comes back with "still running"; that is not an error.
    #[serde(default)]
    timeout_seconds: Option<f64>,
}

/// `vibe_wait`: blocks until the worker finishes, stalls, or the timeout passes.
pub(crate) struct VibeWait(pub Arc<Shared>);

#[tools_core::async_trait]
impl Tool for VibeWait {
    fn name(&self) -> &str {
        "vibe_wait"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Wait until a worker finishes (done, failed, killed, timed out) and return its result. \
         Returns early if the worker stalls while you wait (no output for a while); on timeout \
         returns the current status marked \"still running\"."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<WaitArgs>()
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: WaitArgs = parse_args(args)?;
        let timeout = a.timeout_seconds.unwrap_or(DEFAULT_WAIT);
        if !timeout.is_finite() || timeout < 0.0 {
            return Err(ToolError::invalid(
                "timeout_seconds",
                format!("must be a number of seconds from 0 to {MAX_WAIT}, got {timeout}"),
            ));
        }
        let timeout = Duration::from_secs_f64(timeout.min(MAX_WAIT));
        let worker = self.0.list.get(&a.worker_id)?;
        let mut changes = worker.subscribe();
        let start = tokio::time::Instant::now();
        let deadline = start + timeout;
        let mut progress = tokio::time::interval(Duration::from_secs(5));
        progress.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // A worker already stalled when the wait began is waited on normally, so that waiting
        // again on a stalled worker does not return at once every time.
        let mut stall_seen = worker.status() == Status::Stalled;
        let why = loop {
            let status = worker.status();
            if status.is_finished() {
                break None;
            }
            if status != Status::Stalled {
                stall_seen = false;
            } else if !stall_seen {
                break Some(
                    "still running, but stalled: it has printed nothing for a while; \
                            vibe_kill it, vibe_send it a nudge, or wait again",
                );
            }
            tokio::select! {
                r = changes.changed() => {
                    if r.is_err() {
                        break None;
                    }
                }
                _ = tokio::time::sleep_until(deadline) => {
                    break Some("still running: the wait timed out; call vibe_wait again or check vibe_list");
                }
                _ = ctx.cancel.cancelled() => {
                    break Some("still running when this wait was cancelled (the run is closing)");
                }
                _ = progress.tick() => {
                    let secs = start.elapsed().as_secs_f64();
                    ctx.progress.report(
                        secs,
                        Some(timeout.as_secs_f64()),
                        Some(format!("waiting for {} ({})", worker.id, worker.status().as_str())),
                    );
                }
            }
        };
        let snap = worker.snapshot(TAIL_LINES);
        let mut text = report(&snap, crate::worker::RESULT_CAP);
        let mut v = structured(&snap);
        if let Some(why) = why {
            text = format!("{why}\n{text}");
            if let Value::Object(m) = &mut v {
                m.insert(
                    "still_running".into(),
                    Value::Bool(!snap.status.is_finished()),
                );
            }
        } else if let Value::Object(m) = &mut v {
            m.insert("still_running".into(), Value::Bool(false));
        }
        Ok(ToolOutput::text(text).with_structured(v))
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct KillArgs {
    /// The worker id from vibe_spawn, e.g. `w1`.
    worker_id: String,
}

/// `vibe_kill`: ends the worker's process group.
pub(crate) struct VibeKill(pub Arc<Shared>);

#[tools_core::async_trait]
impl Tool for VibeKill {
    fn name(&self) -> &str {
        "vibe_kill"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "Stop a worker: its whole process group is ended (SIGTERM, then SIGKILL). Its log and \
         output so far stay readable; vibe_send can start it again."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<KillArgs>()
    }
    async fn call(&self, _ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let a: KillArgs = parse_args(args)?;
        let worker = self.0.list.get(&a.worker_id)?;
        let was_running = worker.kill().await;
        let snap = worker.snapshot(TAIL_LINES);
        let lead = if was_running {
            "killed"
        } else {
            "it had already finished; nothing to kill"
        };
        Ok(ToolOutput::text(format!("{lead}\n{}", report(&snap, 1000)))
            .with_structured(json!({"was_running": was_running, "worker": structured(&snap)})))
    }
}

#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields)]
struct ListArgs {}

/// `vibe_list`: every worker of the run.
pub(crate) struct VibeList(pub Arc<Shared>);

#[tools_core::async_trait]
impl Tool for VibeList {
    fn name(&self) -> &str {
        "vibe_list"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "List this run's workers: id, label, tier, status (running, stalled, done, failed, \
         killed, timed out), round, elapsed time and the final result (capped)."
            .into()
    }
    fn input_schema(&self) -> Value {
        schema_for::<ListArgs>()
    }
    async fn call(&self, _ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let _: ListArgs = parse_args(args)?;
        let all = self.0.list.all();
        if all.is_empty() {
            return Ok(
                ToolOutput::text("no workers yet; start one with vibe_spawn")
                    .with_structured(json!({"workers": [], "total": 0})),
            );
        }
        let capped = cap_list(all.iter().rev().map(|w| w.snapshot(3)), LIST_CAP);
        let mut shown: Vec<WorkerSnapshot> = capped.shown.clone();
        shown.reverse();
        let mut text = String::new();
        for w in &shown {
            text.push_str(&headline(w));
            text.push('\n');
            match &w.result {
                Some(r) => {
                    text.push_str("  result: ");
                    text.push_str(&cut_text(r, LIST_RESULT_CAP).replace('\n', "\n  "));
                    text.push('\n');
                }
                None if !w.tail.is_empty() => {
                    text.push_str("  last output: ");
                    text.push_str(&w.tail.replace('\n', "\n  "));
                    text.push('\n');
                }
                None => {}
            }
        }
        if let Some(more) = capped.more_line() {
            text.push_str(&format!("{more} (the oldest are left out)\n"));
        }
        Ok(
            ToolOutput::text(text.trim_end().to_string()).with_structured(json!({
                "workers": shown.iter().map(structured).collect::<Vec<_>>(),
                "total": capped.total,
            })),
        )
    }
}
