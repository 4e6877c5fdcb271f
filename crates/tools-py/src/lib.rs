//! # tools-py
//!
//! Python bindings of the agent-tools facade, so a Python harness can vendor the tools:
//! `agent_tools.Toolbox(root, surface="full", config=None, approver=None, trusted=False)` opens
//! one run (`trusted=True` lets the repository's own programs run, as `--trust` does) with
//! every family compiled into the facade; `.tools()` lists names, tiers and schemas; `.call(name,
//! args)` returns a `ToolResult` (text, structured data, PNG images as bytes, `is_error`);
//! `.close()` ends the run (also on leaving a `with` block). Calls release the GIL while the
//! Rust side works, so other Python threads keep running. A Python callable can be the
//! approver for write and exec calls, and another the question gate behind `ask_user`:
//! `question_gate(card) -> {"selected": [...], "text": "..."} | None`, where `card` is a dict
//! (`number`, `kind`, `question`, `context`, `options` with `label`/`description`,
//! `allow_free_text`, `multi_select`) and `None` (or an empty answer) skips the question.
//!
//! Built by maturin as an abi3 wheel (`cargo xtask setup` builds it and installs it into the
//! test virtualenv); the Python tests live in `crates/tools-py/tests`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_tools::{Toolbox, ToolboxOptions};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tools_core::{Approval, ApprovalRequest, Approver, CallError, Surface, ToolOutput};

/// The result of one call.
#[pyclass(name = "ToolResult", frozen, module = "agent_tools")]
pub struct PyToolResult {
    /// Text for the model, with observer sections (diagnostics on write) appended.
    #[pyo3(get)]
    text: String,
    /// Whether the call failed (the text says why and what to do).
    #[pyo3(get)]
    is_error: bool,
    /// The error kind (`invalid_arguments`, `not_available`, `timed_out`, `rejected`,
    /// `internal`) when `is_error`.
    #[pyo3(get)]
    error_kind: Option<String>,
    structured: Option<String>,
    images: Vec<Vec<u8>>,
}

#[pymethods]
impl PyToolResult {
    /// The structured result (a dict), or None.
    #[getter]
    fn structured(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.structured {
            None => Ok(py.None()),
            Some(s) => Ok(py.import("json")?.call_method1("loads", (s,))?.unbind()),
        }
    }
    /// PNG images, as bytes.
    #[getter]
    fn images<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        self.images.iter().map(|b| PyBytes::new(py, b)).collect()
    }
    fn __repr__(&self) -> String {
        let head: String = self.text.chars().take(60).collect();
        format!(
            "ToolResult(is_error={}, text={head:?})",
            if self.is_error { "True" } else { "False" }
        )
    }
}

impl PyToolResult {
    fn from_output(out: ToolOutput) -> Self {
        PyToolResult {
            text: out.full_text(),
            is_error: false,
            error_kind: None,
            structured: out.full_structured().map(|v| v.to_string()),
            images: out.images.into_iter().map(|i| i.png).collect(),
        }
    }
    fn from_error(e: tools_core::ToolError) -> Self {
        PyToolResult {
            text: e.to_string(),
            is_error: true,
            error_kind: Some(e.kind().to_string()),
            structured: None,
            images: Vec::new(),
        }
    }
}

/// Asks a Python callable `approver(tool, tier, args) -> bool`.
struct PyApprover(Arc<Py<PyAny>>);

#[tools_core::async_trait]
impl Approver for PyApprover {
    async fn approve(&self, request: &ApprovalRequest) -> Approval {
        let callable = Arc::clone(&self.0);
        let tool = request.tool.clone();
        let tier = request.tier.as_str().to_string();
        let args = request.args.to_string();
        let answer = tokio::task::spawn_blocking(move || {
            Python::attach(|py| -> PyResult<bool> {
                let args = py.import("json")?.call_method1("loads", (args,))?;
                callable.bind(py).call1((tool, tier, args))?.is_truthy()
            })
        })
        .await;
        match answer {
            Ok(Ok(true)) => Approval::Approved,
            Ok(Ok(false)) => Approval::Denied("the approver declined".into()),
            Ok(Err(e)) => Approval::Denied(format!("the approver raised {e}")),
            Err(e) => Approval::Denied(format!("the approver could not run: {e}")),
        }
    }
}

/// The harness's question gate: a Python callable that draws the card and returns the answer.
fn python_gate(callable: Py<PyAny>) -> tools_ask::ChannelGate {
    let callable = Arc::new(callable);
    tools_ask::ChannelGate::from_fn(move |card: tools_ask::Card| {
        let callable = Arc::clone(&callable);
        async move {
            let card_json = serde_json::to_string(&card).unwrap_or_else(|_| "{}".into());
            let answer = tokio::task::spawn_blocking(move || {
                Python::attach(|py| -> PyResult<Option<String>> {
                    let json = py.import("json")?;
                    let card = json.call_method1("loads", (card_json,))?;
                    let reply = callable.bind(py).call1((card,))?;
                    if reply.is_none() {
                        return Ok(None);
                    }
                    Ok(Some(json.call_method1("dumps", (reply,))?.extract()?))
                })
            })
            .await
            .map_err(|e| {
                tools_ask::GateError::Unavailable(format!("the question gate could not run: {e}"))
            })?
            .map_err(|e| {
                tools_ask::GateError::Unavailable(format!("the question gate raised {e}"))
            })?;
            let Some(answer) = answer else {
                return Ok(tools_ask::Reply::Skipped {
                    how: "skipped by the harness".into(),
                });
            };
            let v: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
            let selected = v
                .get("selected")
                .and_then(|s| s.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let text = v.get("text").and_then(|t| t.as_str()).map(str::to_string);
            Ok(tools_ask::Reply::answer(
                selected,
                text,
                "an empty answer from the harness",
            ))
        }
    })
}

/// One run with every compiled-in family.
#[pyclass(name = "Toolbox", module = "agent_tools")]
pub struct PyToolbox {
    runtime: Arc<tokio::runtime::Runtime>,
    toolbox: Mutex<Option<Toolbox>>,
    surface: Surface,
}

impl PyToolbox {
    fn current(&self) -> PyResult<Toolbox> {
        self.toolbox
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the toolbox lock is poisoned"))?
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("this Toolbox is closed; open a new one"))
    }
}

#[pymethods]
impl PyToolbox {
    #[new]
    #[pyo3(signature = (root, surface = "full", config = None, approver = None, question_gate = None, trusted = false))]
    fn new(
        py: Python<'_>,
        root: PathBuf,
        surface: &str,
        config: Option<PathBuf>,
        approver: Option<Py<PyAny>>,
        question_gate: Option<Py<PyAny>>,
        trusted: bool,
    ) -> PyResult<Self> {
        let surface = Surface::parse(surface).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown surface {surface:?}; use full, plan or read-only"
            ))
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the runtime: {e}")))?;
        let mut opts = ToolboxOptions::new(root);
        opts.config_path = config;
        opts.trusted = trusted;
        if let Some(a) = approver {
            opts.approver = Some(Arc::new(PyApprover(Arc::new(a))));
        }
        if let Some(g) = question_gate {
            opts.question_gate = Some(Arc::new(python_gate(g)));
        }
        let runtime = Arc::new(runtime);
        let rt = Arc::clone(&runtime);
        let toolbox = py
            .detach(move || rt.block_on(Toolbox::open(opts)))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyToolbox {
            runtime,
            toolbox: Mutex::new(Some(toolbox)),
            surface,
        })
    }

    /// The tools this surface sees: a list of dicts with `name`, `tier`, `description`,
    /// `input_schema`.
    fn tools(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let tb = self.current()?;
        let list: Vec<serde_json::Value> = tb
            .tools(self.surface)
            .into_iter()
            .map(|t| {
                serde_json::json!({"name": t.name, "tier": t.tier, "description": t.description,
                                   "input_schema": t.input_schema, "parallel_safe": t.parallel_safe})
            })
            .collect();
        let text = serde_json::Value::Array(list).to_string();
        Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
    }

    /// Calls a tool. `args` is a dict (JSON-compatible). Raises KeyError for a tool this
    /// surface does not have.
    #[pyo3(signature = (name, args = None))]
    fn call(
        &self,
        py: Python<'_>,
        name: String,
        args: Option<Bound<'_, PyAny>>,
    ) -> PyResult<PyToolResult> {
        let tb = self.current()?;
        let args: serde_json::Value = match args {
            None => serde_json::Value::Object(Default::default()),
            Some(a) => {
                let text: String = py.import("json")?.call_method1("dumps", (a,))?.extract()?;
                serde_json::from_str(&text)
                    .map_err(|e| PyValueError::new_err(format!("args are not JSON: {e}")))?
            }
        };
        let surface = self.surface;
        let rt = Arc::clone(&self.runtime);
        let result = py.detach(move || rt.block_on(tb.call(surface, &name, args)));
        match result {
            Ok(out) => Ok(PyToolResult::from_output(out)),
            Err(CallError::Tool(e)) => Ok(PyToolResult::from_error(e)),
            Err(e @ CallError::UnknownTool { .. }) => Err(PyKeyError::new_err(e.to_string())),
        }
    }

    /// Every family's doctor report as a list of dicts.
    fn doctor(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let tb = self.current()?;
        let rt = Arc::clone(&self.runtime);
        let entries = py.detach(move || rt.block_on(tb.doctor()));
        let list: Vec<serde_json::Value> = entries
            .into_iter()
            .map(|e| serde_json::json!({"family": e.family, "resource": e.resource, "ok": e.ok, "detail": e.detail}))
            .collect();
        Ok(py
            .import("json")?
            .call_method1("loads", (serde_json::Value::Array(list).to_string(),))?
            .unbind())
    }

    /// Ends the run: language servers shut down, every child process killed. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let tb = self
            .toolbox
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the toolbox lock is poisoned"))?
            .take();
        if let Some(tb) = tb {
            let rt = Arc::clone(&self.runtime);
            py.detach(move || rt.block_on(tb.close()));
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

impl Drop for PyToolbox {
    fn drop(&mut self) {
        if let Ok(mut g) = self.toolbox.lock()
            && let Some(tb) = g.take()
        {
            self.runtime.block_on(tb.close());
        }
    }
}

/// The native module behind `agent_tools`.
#[pymodule]
fn _agent_tools(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyToolbox>()?;
    m.add_class::<PyToolResult>()?;
    Ok(())
}
