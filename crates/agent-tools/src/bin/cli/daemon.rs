//! `agent-tools daemon serve|status|stop`: the per-user daemon that keeps language servers
//! warm between conversations (see the `tools-daemon` crate). `serve` is what `mcp`
//! starts on its own; people use `status` and `stop`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use tools_core::ToolError;
use tools_core::trust::UserConfig;
use tools_daemon::{DaemonClient, DaemonOptions, DaemonPaths, DaemonStatus, ServeEnd};

#[derive(Subcommand, Clone)]
pub enum DaemonAction {
    /// Run the daemon in the foreground (what `mcp` starts when none runs).
    #[command(hide = true)]
    Serve,
    /// Show the daemon of this build: its servers, their roots and the conversations
    /// sharing each.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Stop the daemon of this build and every server it holds.
    Stop,
}

/// The longest socket path every Unix takes (`sun_path` holds 104 bytes on macOS).
const MAX_SOCKET_PATH: usize = 100;

/// The files of this build's daemon.
fn paths() -> Result<(String, DaemonPaths), ToolError> {
    let build = tools_daemon::build_id();
    let paths = DaemonPaths::for_user(&build).ok_or_else(|| {
        ToolError::not_available("no runtime folder for the daemon (no HOME or XDG_RUNTIME_DIR)")
    })?;
    Ok((build, paths))
}

/// The daemon a conversation reaches, when the user's configuration lets it use one.
pub fn client_for(user: &UserConfig, conversation: &str) -> Option<DaemonClient> {
    if !user.daemon.enabled || !tools_core::platform::LOCAL_SOCKETS {
        return None;
    }
    let (build, paths) = paths().ok()?;
    // A socket's name is bounded (about 100 bytes on Linux and macOS): a runtime folder
    // too deep for it serves in-process rather than wait for a daemon that cannot listen.
    if paths.socket.as_os_str().len() > MAX_SOCKET_PATH {
        tracing::warn!(
            "the daemon's socket path {} is too long for a socket; language servers start in this process",
            paths.socket.display()
        );
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    Some(DaemonClient::new(
        build,
        paths,
        exe,
        conversation.to_string(),
    ))
}

pub async fn daemon(action: DaemonAction) -> Result<ExitCode, ToolError> {
    let (build, paths) = paths()?;
    match action {
        DaemonAction::Serve => {
            let user = UserConfig::load()?;
            let opts = DaemonOptions {
                build,
                paths,
                idle: Duration::from_secs(user.daemon.idle_s),
                server_idle: Duration::from_secs(user.daemon.server_idle_s),
            };
            let end = tools_daemon::serve(opts)
                .await
                .map_err(|e| ToolError::not_available(format!("the daemon cannot serve: {e}")))?;
            if end == ServeEnd::AnotherServes {
                tracing::info!("another daemon of this build serves; leaving");
            }
            Ok(ExitCode::SUCCESS)
        }
        DaemonAction::Status { json } => {
            let client = DaemonClient::control(build, paths);
            let status = client
                .status()
                .await
                .map_err(|e| ToolError::not_available(e.to_string()))?;
            let text = match (&status, json) {
                (_, true) => serde_json::to_string_pretty(&status).unwrap_or_default(),
                (None, false) => format!(
                    "no daemon of this build runs (its socket would be {})",
                    client.paths().socket.display()
                ),
                (Some(s), false) => render_status(s),
            };
            crate::out(&text);
            Ok(ExitCode::SUCCESS)
        }
        DaemonAction::Stop => {
            let client = DaemonClient::control(build, paths);
            let stopped = client
                .stop()
                .await
                .map_err(|e| ToolError::not_available(e.to_string()))?;
            crate::out(if stopped {
                "stopped the daemon and every server it held"
            } else {
                "no daemon of this build runs"
            });
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The status as people read it: one line for the daemon, one per server.
fn render_status(s: &DaemonStatus) -> String {
    let mut out = format!(
        "daemon pid {} (build {}), up {:.0} s{}, {} server(s)\n",
        s.pid,
        s.build,
        s.age_s,
        if s.draining {
            ", draining (a newer build serves)"
        } else {
            ""
        },
        s.servers.len()
    );
    for h in &s.servers {
        let who = if h.conversations.is_empty() {
            format!(
                "no conversation (idle {:.0} s)",
                h.idle_s.unwrap_or_default()
            )
        } else {
            format!("conversations: {}", h.conversations.join(", "))
        };
        out.push_str(&format!(
            "  {} ({}) pid {} for {}{}, up {:.0} s; {who}\n",
            h.server,
            h.language,
            h.pid,
            h.root.display(),
            if h.trusted { "" } else { " (untrusted)" },
            h.age_s
        ));
    }
    out
}

/// `doctor`'s line on the daemon: whether `mcp` conversations take their servers from it,
/// and what it holds now.
pub async fn doctor_line() -> String {
    if !tools_core::platform::LOCAL_SOCKETS {
        return "daemon: not available on this OS; every conversation starts its own language servers".into();
    }
    match UserConfig::load() {
        Ok(u) if !u.daemon.enabled => {
            return "daemon: off ([daemon] enabled = false in the user's configuration); every conversation starts its own language servers".into();
        }
        Err(e) => return format!("daemon: the user's configuration cannot be read ({e})"),
        Ok(_) => {}
    }
    let Ok((build, paths)) = paths() else {
        return "daemon: no runtime folder (no HOME or XDG_RUNTIME_DIR); every conversation starts its own language servers".into();
    };
    let client = DaemonClient::control(build, paths);
    match client.status().await {
        Ok(Some(s)) => {
            let conversations: std::collections::BTreeSet<&String> = s
                .servers
                .iter()
                .flat_map(|h| h.conversations.iter())
                .collect();
            format!(
                "daemon: pid {} (build {}), up {:.0} s, holding {} language server(s) for {} conversation(s); `agent-tools daemon status` lists them",
                s.pid,
                s.build,
                s.age_s,
                s.servers.len(),
                conversations.len()
            )
        }
        Ok(None) => format!(
            "daemon: none runs now; the first `agent-tools mcp` conversation that needs a language server starts it (socket {})",
            client.paths().socket.display()
        ),
        Err(e) => format!("daemon: {e}"),
    }
}
