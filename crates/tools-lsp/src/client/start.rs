//! Starting a server: the process, `initialize` with the client's capabilities, the
//! agreed position encoding, `initialized` and the settings, and the watcher of the root.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lsp_types::notification::{DidChangeConfiguration, Initialized, Notification};
use lsp_types::request::{Initialize, Request};
use lsp_types::{
    ClientCapabilities, ClientInfo, CodeActionClientCapabilities, CodeActionKindLiteralSupport,
    CodeActionLiteralSupport, DiagnosticClientCapabilities, DiagnosticWorkspaceClientCapabilities,
    DidChangeConfigurationParams, DidChangeWatchedFilesClientCapabilities,
    DocumentSymbolClientCapabilities, DynamicRegistrationClientCapabilities, FailureHandlingKind,
    GeneralClientCapabilities, GotoCapability, HoverClientCapabilities, InitializeParams,
    InitializedParams, MarkupKind, PositionEncodingKind, PublishDiagnosticsClientCapabilities,
    RenameClientCapabilities, ResourceOperationKind, ServerCapabilities,
    ShowMessageRequestClientCapabilities, TextDocumentClientCapabilities,
    TextDocumentSyncClientCapabilities, Uri, WindowClientCapabilities, WorkspaceClientCapabilities,
    WorkspaceEditClientCapabilities, WorkspaceFolder, WorkspaceSymbolClientCapabilities,
};
use serde_json::{Value, json};
use tokio::sync::watch;
use tools_core::Run;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::transport::{JsonRpc, Transport, TransportError};

use super::server_messages::event_loop;
use super::server_process::ServerProcess;
use super::{Launch, LspClient, Shared, path_to_uri};
use crate::client::position::Encoding;
use crate::client::watcher::ExternalChanges;
use crate::error::{LspError, Result};

impl LspClient {
    /// Starts the server, `initialize`s it and starts answering it. Fails with a clear error
    /// when it cannot start, exits during startup or does not answer in time.
    pub async fn start(run: &Arc<Run>, launch: Launch) -> Result<Arc<LspClient>> {
        let server = launch
            .program
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| launch.program.display().to_string());
        let mut cmd = tools_core::child_command(run, &launch.program);
        cmd.args(&launch.args).current_dir(&launch.root).env(
            "PATH",
            tools_core::discovery::ProgramSearch::for_run(run).child_path(&launch.root),
        );
        let (transport, rx, mut child, pid) = match served_by_daemon(run, &launch, &cmd).await {
            Some(link) => {
                let pid = link.serving.server_pid;
                let (transport, rx) = Transport::start(link.reader, link.writer, JsonRpc);
                (transport, rx, ServerProcess::Daemon(link.serving), pid)
            }
            None => {
                let mut child = ChildProcess::spawn(run, cmd, Pipes::StdinStdout)
                    .map_err(|e| LspError::Other(e.to_string()))?;
                let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
                    return Err(LspError::Other(format!(
                        "{server}: no pipes to the process"
                    )));
                };
                let pid = child.pid();
                let (transport, rx) = Transport::start(stdout, stdin, JsonRpc);
                (transport, rx, ServerProcess::Own(Box::new(child)), pid)
            }
        };
        let served = child.serving().cloned();
        let root_uri = path_to_uri(&launch.root)?;
        let folder_name = launch
            .root
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "root".into());
        let init = initialize_params(&launch, root_uri, folder_name);
        let folders = serde_json::to_value(&init.workspace_folders).unwrap_or(Value::Null);
        let shared = Arc::new(Shared::new(
            server.clone(),
            launch.settings.clone(),
            folders.clone(),
        ));
        tokio::spawn(event_loop(transport.clone(), rx, Arc::clone(&shared)));

        let mut params = serde_json::to_value(&init).map_err(|e| LspError::Other(e.to_string()))?;
        // The protocol's key is `workspace.diagnostics`; lsp-types 0.97 spells it
        // `diagnostic`, which pyright and basedpyright do not read.
        if let Some(workspace) = params.pointer_mut("/capabilities/workspace")
            && let Some(obj) = workspace.as_object_mut()
            && let Some(pull) = obj.remove("diagnostic")
        {
            obj.insert("diagnostics".into(), pull);
        }
        let started = Instant::now();
        let resp = transport
            .request(
                json!({"method": Initialize::METHOD, "params": params}),
                launch.start_timeout,
            )
            .await;
        let fail = |what: String, child: &mut ServerProcess| {
            let tail = child.stderr_tail(8);
            let status = child.try_status();
            child.kill();
            let mut msg = format!("{server} (root {}) {what}", launch.root.display());
            if let Some(s) = status {
                msg.push_str(&format!("; it exited with {s}"));
            }
            if !tail.trim().is_empty() {
                msg.push_str(&format!("; its last stderr lines:\n{tail}"));
            }
            LspError::Other(msg)
        };
        let resp = match resp {
            Ok(r) => r,
            Err(TransportError::Timeout(d)) => {
                let what = format!(
                    "did not answer `initialize` within {}s (`start_timeout_ms`) and was stopped",
                    d.as_secs_f64()
                );
                return Err(match fail(what, &mut child) {
                    LspError::Other(m) => LspError::StartTimeout(m),
                    e => e,
                });
            }
            Err(TransportError::StreamClosed) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Err(fail("exited during startup".into(), &mut child));
            }
            Err(TransportError::Other(m)) => return Err(fail(m, &mut child)),
        };
        if let Some(err) = resp.get("error") {
            return Err(fail(format!("refused `initialize`: {err}"), &mut child));
        }
        let result = resp.get("result").cloned().unwrap_or(Value::Null);
        let type_hierarchy = result
            .pointer("/capabilities/typeHierarchyProvider")
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false));
        let caps: ServerCapabilities = result
            .get("capabilities")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| LspError::Decode {
                server: server.clone(),
                method: "initialize".into(),
                message: e.to_string(),
            })?
            .unwrap_or_default();
        let enc_name = caps
            .position_encoding
            .as_ref()
            .map(|k| k.as_str().to_string())
            .or_else(|| {
                result
                    .get("offsetEncoding")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let encoding = match enc_name.as_deref() {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        };
        let _ = transport
            .send(json!({"method": Initialized::METHOD, "params": InitializedParams {}}))
            .await;
        if !launch.settings.is_null() {
            let change = DidChangeConfigurationParams {
                settings: launch.settings.clone(),
            };
            let _ = transport
                .send(json!({"method": DidChangeConfiguration::METHOD, "params": change}))
                .await;
        }
        tracing::debug!(
            "{server} started in {:?} (pid {pid}, encoding {encoding:?})",
            started.elapsed()
        );
        // Watch the root for changes made outside the tools (a walk of the tree: off the
        // async threads), unless the daemon serving the server watches it already.
        let external = match served {
            Some(_) => Some(ExternalChanges::FromDaemon),
            None => {
                let watch_root = launch.root.clone();
                tokio::task::spawn_blocking(move || ExternalChanges::watch(&watch_root))
                    .await
                    .ok()
                    .flatten()
            }
        };
        Ok(Arc::new(LspClient {
            language: launch.language,
            server,
            root: launch.root,
            program: launch.program,
            args: launch.args,
            started,
            caps,
            type_hierarchy,
            encoding,
            transport,
            process: tokio::sync::Mutex::new(child),
            served,
            pid,
            shared,
            docs: tokio::sync::Mutex::new(HashMap::new()),
            closed_version_floor: std::sync::atomic::AtomicI32::new(0),
            request_timeout: launch.request_timeout,
            index_wait: launch.index_wait,
            max_open: launch.max_open_documents.max(1),
            language_ids: launch.language_ids,
            extensions: launch.extensions,
            opened_once: AtomicBool::new(false),
            external,
            check_after_save: AtomicBool::new(false),
            first_analysis_done: AtomicBool::new(false),
            started_with_the_run: AtomicBool::new(false),
            observation: Arc::new(tokio::sync::Mutex::new(())),
            previewing: watch::channel(false).0,
            view: Arc::new(tokio::sync::RwLock::new(())),
            preview_hold: Mutex::new(None),
            claims: launch.claims,
            last_verdict_ms: AtomicU64::new(u64::MAX),
        }))
    }
}

/// `initialize`'s parameters: this process, the root as the one workspace folder, the
/// client's capabilities and the entry's initialization options.
fn initialize_params(launch: &Launch, root_uri: Uri, folder_name: String) -> InitializeParams {
    // `rootUri` and `rootPath` are deprecated in favour of the folders, but servers of
    // every age still read them.
    #[allow(deprecated)]
    InitializeParams {
        process_id: Some(std::process::id()),
        client_info: Some(ClientInfo {
            name: "agent-tools".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        root_uri: Some(root_uri.clone()),
        root_path: Some(launch.root.display().to_string()),
        workspace_folders: Some(vec![WorkspaceFolder {
            uri: root_uri,
            name: folder_name,
        }]),
        capabilities: client_capabilities(),
        initialization_options: launch.initialization_options.clone(),
        ..Default::default()
    }
}

/// What this client does with what a server sends: UTF-8 or UTF-16 positions, work-done
/// progress, rust-analyzer's status, configuration and folders asked for, workspace edits
/// as document changes (applied only through the tools), watched-file registration, pulled
/// and pushed diagnostics with versions, markdown hovers, location links, hierarchical
/// symbols, code action literals, prepared renames and both hierarchies.
fn client_capabilities() -> ClientCapabilities {
    let static_only = Some(DynamicRegistrationClientCapabilities {
        dynamic_registration: Some(false),
    });
    let links = Some(GotoCapability {
        dynamic_registration: None,
        link_support: Some(true),
    });
    let action_kinds = [
        "",
        "quickfix",
        "refactor",
        "refactor.extract",
        "refactor.inline",
        "refactor.rewrite",
        "source",
        "source.organizeImports",
        "source.fixAll",
    ];
    ClientCapabilities {
        general: Some(GeneralClientCapabilities {
            position_encodings: Some(vec![
                PositionEncodingKind::UTF8,
                PositionEncodingKind::UTF16,
            ]),
            ..Default::default()
        }),
        window: Some(WindowClientCapabilities {
            work_done_progress: Some(true),
            show_message: Some(ShowMessageRequestClientCapabilities::default()),
            ..Default::default()
        }),
        experimental: Some(json!({"serverStatusNotification": true})),
        workspace: Some(WorkspaceClientCapabilities {
            configuration: Some(true),
            workspace_folders: Some(true),
            apply_edit: Some(true),
            workspace_edit: Some(WorkspaceEditClientCapabilities {
                document_changes: Some(true),
                resource_operations: Some(vec![
                    ResourceOperationKind::Create,
                    ResourceOperationKind::Rename,
                    ResourceOperationKind::Delete,
                ]),
                failure_handling: Some(FailureHandlingKind::Abort),
                ..Default::default()
            }),
            symbol: Some(WorkspaceSymbolClientCapabilities {
                dynamic_registration: Some(false),
                ..Default::default()
            }),
            did_change_watched_files: Some(DidChangeWatchedFilesClientCapabilities {
                dynamic_registration: Some(true),
                ..Default::default()
            }),
            diagnostic: Some(DiagnosticWorkspaceClientCapabilities {
                refresh_support: Some(true),
            }),
            ..Default::default()
        }),
        text_document: Some(TextDocumentClientCapabilities {
            synchronization: Some(TextDocumentSyncClientCapabilities {
                dynamic_registration: Some(false),
                will_save: Some(false),
                did_save: Some(true),
                ..Default::default()
            }),
            publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                related_information: Some(true),
                version_support: Some(true),
                code_description_support: Some(true),
                ..Default::default()
            }),
            diagnostic: Some(DiagnosticClientCapabilities {
                dynamic_registration: Some(false),
                related_document_support: Some(true),
            }),
            hover: Some(HoverClientCapabilities {
                content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
                ..Default::default()
            }),
            declaration: links,
            definition: links,
            type_definition: links,
            implementation: links,
            references: Some(DynamicRegistrationClientCapabilities::default()),
            document_symbol: Some(DocumentSymbolClientCapabilities {
                hierarchical_document_symbol_support: Some(true),
                ..Default::default()
            }),
            code_action: Some(CodeActionClientCapabilities {
                code_action_literal_support: Some(CodeActionLiteralSupport {
                    code_action_kind: CodeActionKindLiteralSupport {
                        value_set: action_kinds.iter().map(|k| k.to_string()).collect(),
                    },
                }),
                data_support: Some(true),
                ..Default::default()
            }),
            rename: Some(RenameClientCapabilities {
                prepare_support: Some(true),
                ..Default::default()
            }),
            call_hierarchy: static_only,
            type_hierarchy: static_only,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The daemon's link to this server, when the run's servers come from the per-user daemon
/// (`agent-tools mcp` installs it) and it serves: the server it holds for `cmd` (warm when
/// another conversation started it). `None` — and the server starts in-process — when no
/// daemon is chosen or it cannot serve (the reason goes to the log).
async fn served_by_daemon(
    run: &Arc<Run>,
    launch: &Launch,
    cmd: &tokio::process::Command,
) -> Option<tools_daemon::DaemonLink> {
    let choice = run.state(tools_daemon::DaemonChoice::default);
    let daemon = choice.0.as_ref()?;
    let spec = server_spec(launch, cmd, run.trusted())?;
    match daemon.serve(&spec).await {
        Ok(link) => {
            tracing::info!(
                server = %spec.program.display(),
                warm = link.serving.warm,
                shared_with = link.serving.shared_with.len(),
                "served by the agent-tools daemon"
            );
            Some(link)
        }
        Err(e) => {
            tracing::warn!("{e}; {} starts in this process", spec.program.display());
            None
        }
    }
}

/// What the daemon must start for `cmd`: exactly its program, arguments, folder and
/// environment (the run's policy already applied), with the server's settings and the
/// run's trust. `None` when a value is not text (such a server starts in-process).
fn server_spec(
    launch: &Launch,
    cmd: &tokio::process::Command,
    trusted: bool,
) -> Option<tools_daemon::ServerSpec> {
    let std = cmd.as_std();
    let mut env = Vec::new();
    for (k, v) in std.get_envs() {
        env.push((k.to_str()?.to_string(), v?.to_str()?.to_string()));
    }
    env.sort();
    let args = std
        .get_args()
        .map(|a| a.to_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()?;
    Some(tools_daemon::ServerSpec {
        language: launch.language.clone(),
        program: std::path::PathBuf::from(std.get_program()),
        args,
        cwd: std.get_current_dir()?.to_path_buf(),
        env,
        settings: launch.settings.to_string(),
        initialization_options: launch
            .initialization_options
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default(),
        trusted,
    })
}
