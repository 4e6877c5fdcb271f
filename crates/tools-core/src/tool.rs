//! The `Tool` trait and what a call sees.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{Invoker, Run, Surface, Tier, ToolError, ToolOutput};

/// One tool of the surface. Implementations are constructed per run, so per-run state
/// (staged edits, a debug session, kernels) lives inside them.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls, e.g. `ast_grep`.
    fn name(&self) -> &str;
    /// The tier; decides which surfaces see the tool.
    fn tier(&self) -> Tier;
    /// What the tool does, written for the model.
    fn description(&self) -> String;
    /// The JSON Schema of the arguments object (see [`schema_for`]).
    fn input_schema(&self) -> Value;
    /// Whether two calls may run at once in the same run. `false` makes the registry
    /// serialise calls (debug and eval hold state across calls).
    fn parallel_safe(&self) -> bool {
        true
    }
    /// Runs the call. `args` is the raw arguments object; parse it with [`parse_args`].
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError>;
}

/// Receives progress reports for a long call (the MCP server turns them into progress
/// notifications so clients with their own timeouts keep waiting).
pub trait ProgressSink: Send + Sync {
    /// Reports progress; `total` is `None` when unknown.
    fn report(&self, progress: f64, total: Option<f64>, message: Option<String>);
}

/// A cheap handle to the call's progress sink; a no-op when the caller gave none.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<dyn ProgressSink>>);

impl Progress {
    /// Wraps a sink.
    pub fn new(sink: Arc<dyn ProgressSink>) -> Self {
        Progress(Some(sink))
    }
    /// A progress handle that drops every report.
    pub fn none() -> Self {
        Progress(None)
    }
    /// The progress handle of the tool call this task is running (set by the registry around
    /// every call), so code deep below a tool, such as a server install started on first
    /// need, can report without a handle threaded through every signature. A no-op handle
    /// outside a call.
    pub fn current() -> Progress {
        CURRENT_PROGRESS
            .try_with(Progress::clone)
            .unwrap_or_default()
    }

    /// Runs `fut` with `self` as [`Progress::current`].
    pub async fn scope<F: std::future::Future>(self, fut: F) -> F::Output {
        CURRENT_PROGRESS.scope(self, fut).await
    }

    /// Reports progress if anyone listens.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(s) = &self.0 {
            s.report(progress, total, message);
        }
    }
}

tokio::task_local! {
    static CURRENT_PROGRESS: Progress;
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(sink)"
        } else {
            "Progress(none)"
        })
    }
}

/// What a tool call sees: the run, the surface it was called on, an invoker for calling
/// other tools as that same surface, a progress sink and a cancellation token.
#[derive(Clone)]
pub struct CallCtx {
    /// The run this call belongs to.
    pub run: Arc<Run>,
    /// The surface the call came through.
    pub surface: Surface,
    /// Calls other tools of the same run as the same surface, through the whole guard chain.
    pub invoker: Invoker,
    /// Progress reports for long calls.
    pub progress: Progress,
    /// Cancelled when the run closes or the caller gives up.
    pub cancel: CancellationToken,
}

impl CallCtx {
    /// What the run's write observers predict for `proposed` (diagnostics on write predicts
    /// the diagnostics); nothing is written. See [`crate::WriteObserver::preview`].
    pub async fn preview_diagnostics(
        &self,
        proposed: &[crate::ProposedFile],
    ) -> crate::PreviewReport {
        self.invoker.preview(self, proposed).await
    }
}

/// Parses a tool's arguments into `T`, turning serde errors into
/// [`ToolError::InvalidArguments`] that name the field.
pub fn parse_args<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    if !args.is_object() {
        return Err(ToolError::invalid_args(format!(
            "the arguments must be a JSON object, got {}",
            json_kind(&args)
        )));
    }
    let parsed = serde_path_to_error::deserialize::<_, T>(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            ToolError::invalid_args(inner)
        } else {
            ToolError::invalid(path, inner)
        }
    })?;
    #[cfg(feature = "testing")]
    if crate::fuzzing::stopping_after_parsing() {
        return Err(ToolError::internal(crate::fuzzing::ARGUMENTS_PARSED));
    }
    Ok(parsed)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JSON Schema of `T` as a plain object schema (no `$schema` key), ready for `tools/list`.
pub fn schema_for<T: schemars::JsonSchema>() -> Value {
    let schema = schemars::SchemaGenerator::new(schemars::generate::SchemaSettings::draft07())
        .into_root_schema_for::<T>();
    let mut v = serde_json::to_value(schema).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.remove("$schema");
        m.entry("type").or_insert(Value::String("object".into()));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: String,
        limit: Option<u32>,
    }

    #[test]
    fn parse_args_names_the_field() {
        let err = parse_args::<Args>(serde_json::json!({"path": "a", "limit": "x"})).err();
        match err {
            Some(ToolError::InvalidArguments { field, .. }) => {
                assert_eq!(field.as_deref(), Some("limit"))
            }
            other => panic!("unexpected {other:?}"),
        }
        let err = parse_args::<Args>(serde_json::json!([1])).err();
        assert!(matches!(
            err,
            Some(ToolError::InvalidArguments { field: None, .. })
        ));
        let err = parse_args::<Args>(serde_json::json!({}))
            .err()
            .map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("path"));
    }

    #[tokio::test]
    async fn the_current_progress_is_the_calls_own_and_a_no_op_outside() {
        struct Seen(std::sync::Mutex<Vec<String>>);
        impl ProgressSink for Seen {
            fn report(&self, _: f64, _: Option<f64>, message: Option<String>) {
                self.0.lock().unwrap().push(message.unwrap_or_default());
            }
        }
        let seen = Arc::new(Seen(std::sync::Mutex::new(Vec::new())));
        Progress::current().report(1.0, None, Some("outside".into()));
        Progress::new(seen.clone())
            .scope(async {
                tokio::task::yield_now().await;
                Progress::current().report(1.0, None, Some("inside".into()));
            })
            .await;
        assert_eq!(*seen.0.lock().unwrap(), ["inside"]);
    }

    #[test]
    fn schema_is_an_object_schema() {
        let s = schema_for::<Args>();
        assert_eq!(s["type"], "object");
        assert!(s["properties"]["path"].is_object());
        assert!(s.get("$schema").is_none());
    }
}
