//! `serve --log-format json`: every log event as one JSON object on a line of stderr, for
//! log shippers. Fields are the event's own (session, call, tool, duration_ms, outcome …)
//! plus `time_unix_ms`, `level`, `target` and `message`; the events never carry a call's
//! arguments or a credential.

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Formats each event as one JSON line.
pub struct JsonLines;

/// Collects an event's fields into a JSON object.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .insert(field.name().into(), Value::String(value.into()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut object = Map::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        object.insert("time_unix_ms".into(), now.into());
        let meta = event.metadata();
        object.insert("level".into(), meta.level().as_str().into());
        object.insert("target".into(), meta.target().into());
        event.record(&mut Fields(&mut object));
        writeln!(writer, "{}", Value::Object(object))
    }
}

/// Installs the JSON-lines subscriber on stderr; `AGENT_TOOLS_LOG` filters as usual, and by
/// default the server's own session and call events (info) are kept.
pub fn init() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AGENT_TOOLS_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(
                    "warn,rmcp=error,tools_serve=info,agent_tools=info",
                )
            }),
        )
        .event_format(JsonLines)
        .init();
}
