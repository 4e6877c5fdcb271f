//! The MCP request layer with every tool's arguments: a tool named in the real `tools/list`
//! of a toolbox wired as the binary wires it (every family, `ask_user` and the vibe tools
//! included), called through the registry — guard chain, the tool's own call, its argument
//! parsing — with an argument object built from the input (keys from the tool's schema or
//! not, values of any JSON type) or with the input's raw bytes read as JSON. No call goes
//! past parsing (`tools_core::fuzzing`), so nothing is written or started.
//!
//! Every request gets exactly one answer, and it is one of two: the arguments parsed, or an
//! invalid-arguments error that names what is wrong — the field (a key the request holds),
//! or, for a field that is missing or one the tool does not know, that field's name. A
//! panic (which the registry would answer as an internal error) or any other answer fails.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use tools_core::{CallError, Surface, ToolError};

struct Bench {
    rt: tokio::runtime::Runtime,
    toolbox: agent_tools::Toolbox,
    /// Each tool's name and the property names of its schema.
    tools: Vec<(String, Vec<String>)>,
}

fn bench() -> &'static Bench {
    static BENCH: OnceLock<Bench> = OnceLock::new();
    BENCH.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("agent-tools-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&root).expect("a workspace folder");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let mut opts = agent_tools::ToolboxOptions::new(&root);
        // A worker tier, so the vibe tools are listed; trusted, so its command is kept.
        opts.config = Some(tools_core::Config::parse("[vibe.fast]\ncommand = [\"true\"]\n").expect("config"));
        opts.trusted = true;
        opts.user_config = Some(agent_tools::UserConfig::default());
        opts.question_gate = Some(Arc::new(tools_ask::ChannelGate::from_fn(|_| async {
            Ok(tools_ask::Reply::Skipped { how: "fuzzing".into() })
        })));
        let toolbox = rt.block_on(agent_tools::Toolbox::open(opts)).expect("a toolbox");
        let tools = toolbox
            .tools(Surface::FULL)
            .into_iter()
            .map(|t| {
                let props = t.input_schema["properties"]
                    .as_object()
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                (t.name, props)
            })
            .collect();
        Bench { rt, toolbox, tools }
    })
}

/// Reads bytes off the front of the input.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn text(&mut self) -> String {
        let n = (self.byte() % 24) as usize;
        let n = n.min(self.0.len());
        let (t, rest) = self.0.split_at(n);
        self.0 = rest;
        String::from_utf8_lossy(t).into_owned()
    }
    /// Any JSON value, nested at most `depth` deep.
    fn value(&mut self, keys: &[String], depth: u8) -> Value {
        match self.byte() % 12 {
            0 => Value::Null,
            1 => Value::Bool(self.byte() & 1 == 1),
            2 => json!(self.byte() as i64 - 128),
            3 => json!(u64::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte(), self.byte(), self.byte(), self.byte(), self.byte()])),
            4 => json!(f64::from(self.byte()) / 7.0),
            5 | 6 | 7 => Value::String(self.text()),
            8 if depth > 0 => {
                let n = self.byte() % 4;
                Value::Array((0..n).map(|_| self.value(keys, depth - 1)).collect())
            }
            9 if depth > 0 => self.object(keys, depth - 1),
            // A value that is the name of a field (tagged enums take names as values).
            _ => keys
                .get(self.byte() as usize % keys.len().max(1))
                .map_or(Value::Null, |k| Value::String(k.clone())),
        }
    }
    fn object(&mut self, keys: &[String], depth: u8) -> Value {
        let mut m = Map::new();
        for _ in 0..self.byte() % 6 {
            let pick = self.byte() as usize;
            let key = match keys.get(pick % (keys.len() + 1)) {
                Some(k) => k.clone(),
                None => self.text(),
            };
            let v = self.value(keys, depth);
            m.insert(key, v);
        }
        Value::Object(m)
    }
}

/// Whether a field error's path starts at a key the request holds: the key itself, or a
/// path into it (`key.inner`, `key[0]`) — a key may itself hold `.` or `[`.
fn names_a_given_key(path: &str, given: &[&str]) -> bool {
    given.iter().any(|k| {
        path.strip_prefix(k)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// The backquoted name in a serde message such as "missing field `x`".
fn quoted_after<'a>(message: &'a str, lead: &str) -> Option<&'a str> {
    let rest = &message[message.find(lead)? + lead.len()..];
    rest.split('`').next()
}

fuzz_target!(|data: &[u8]| {
    let b = bench();
    let mut input = Bytes(data);
    let (name, keys) = &b.tools[input.byte() as usize % b.tools.len()];
    let args = if input.byte() & 1 == 0 {
        input.object(keys, 2)
    } else {
        match serde_json::from_slice::<Value>(input.0) {
            Ok(v) => v,
            Err(_) => return,
        }
    };
    let answer = b.rt.block_on(tools_core::fuzzing::stop_after_parsing(
        b.toolbox.call(Surface::FULL, name, args.clone()),
    ));
    let given: Vec<&str> = args
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    match answer {
        Err(CallError::Tool(ToolError::Internal(m))) if m == tools_core::fuzzing::ARGUMENTS_PARSED => {}
        Err(CallError::Tool(ToolError::InvalidArguments { field: Some(f), message })) => {
            assert!(
                names_a_given_key(&f, &given),
                "`{name}` named `{f}`, which the request does not hold ({message}): {args}"
            );
        }
        Err(CallError::Tool(ToolError::InvalidArguments { field: None, message })) => {
            let named = if !args.is_object() && !args.is_null() {
                message.starts_with(&format!("the arguments of `{name}` must be a JSON object"))
            } else if let Some(k) = quoted_after(&message, "missing field `") {
                keys.iter().any(|p| p == k)
            } else if let Some(k) = quoted_after(&message, "unknown field `") {
                given.contains(&k)
            } else {
                false
            };
            assert!(named, "`{name}` answered without naming the argument: {message}: {args}");
        }
        other => panic!("`{name}` answered {other:?} to {args}"),
    }
});
