//! `agent-tools serve --http ADDR`: many MCP clients over streamable HTTP, one run per
//! session (see the `tools-serve` crate).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agent_tools::{ApproveMode, ToolboxOptions};
use tools_core::{Surface, ToolError};
use tools_serve::{AuthSettings, JwksSource, OAuthSettings, ServeOptions, ServedWorkspace};

/// What `serve --help` says about sessions of untrusted workspaces.
pub const UNTRUSTED_HELP: &str = "An untrusted workspace's sessions (the default) cannot run \
the programs, arguments or environment its agent-tools.toml names, its own binaries and \
interpreters (.venv, node_modules/.bin), or its build scripts and proc macros; servers, \
kernels and adapters come from this machine instead. --trust or --trust-workspace NAME lifts \
that, as does listing the root under [trust] roots in the user's configuration \
(~/.config/agent-tools/config.toml; %APPDATA%\\agent-tools\\config.toml on Windows).";

/// The flags of `serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on, e.g. 127.0.0.1:8080 (port 0 picks a free one; the address
    /// is printed on stderr). Beyond loopback, authorization is required.
    #[arg(long = "http", value_name = "ADDR")]
    addr: SocketAddr,
    /// The one workspace, served at /mcp (default: the current directory).
    #[arg(long, conflicts_with = "workspace")]
    root: Option<PathBuf>,
    /// A workspace served at /w/NAME/mcp (repeatable).
    #[arg(long, value_name = "NAME=DIR", value_parser = parse_workspace)]
    workspace: Vec<ServedWorkspace>,
    /// Configuration file for every run (default: agent-tools.toml at each workspace root).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Trust every served workspace: let its agent-tools.toml name programs and let its own
    /// binaries, interpreters and build scripts run (what an untrusted session cannot do is
    /// listed at the end of this help).
    #[arg(long)]
    trust: bool,
    /// Trust only the workspace served as NAME (repeatable; see --trust).
    #[arg(long, value_name = "NAME", conflicts_with = "trust")]
    trust_workspace: Vec<String>,
    /// Write and exec calls: `auto` runs them, `deny` refuses them, `ask` shows a yes/no
    /// card through the client's elicitation (refused when the client cannot show it).
    #[arg(long, default_value = "auto", value_parser = super::parse_approve)]
    approve: ApproveMode,
    /// The strongest surface a session gets: full, plan or read-only (a token's scopes can
    /// only lower it).
    #[arg(long, default_value = "full", value_parser = parse_surface)]
    surface: Surface,
    /// Sessions open at once, at most; one more is refused with HTTP 503.
    #[arg(long, default_value_t = 32)]
    max_sessions: usize,
    /// Seconds without a message after which a session and its run are closed.
    #[arg(long, default_value_t = 1800)]
    idle_timeout: u64,
    /// Child processes (language servers, kernels, debug adapters, checkers, workers) one
    /// session may have at once; one more is refused with an error saying so. 0: no cap.
    #[arg(long, default_value_t = 16)]
    max_children: usize,
    /// On SIGTERM or SIGINT, seconds the calls under way may take to finish before every
    /// session is closed (new requests get HTTP 503 meanwhile); a second signal closes
    /// them at once.
    #[arg(long, default_value_t = 30)]
    grace: u64,
    /// Runs kept opened ahead per workspace (for clients with and without elicitation
    /// each), so a new session's first call does not wait for one to open; /readyz answers
    /// 503 until they are. Language servers and kernels still start on first use.
    #[arg(long, default_value_t = 0)]
    warm: usize,
    /// A workspace file whose language server every warm run starts ahead (repeatable; one
    /// per language is enough), so a session's first lsp answer costs what a warm query
    /// costs. Each warm run then holds its own servers' memory.
    #[arg(long, value_name = "FILE", requires = "warm")]
    warm_lsp: Vec<String>,
    /// An eval language (python, javascript) whose kernel every warm run starts ahead
    /// (repeatable), so a session's first eval does not wait for an interpreter.
    #[arg(long, value_name = "LANGUAGE", requires = "warm", value_parser = ["python", "javascript"])]
    warm_kernel: Vec<String>,
    /// Give every session its own language servers instead of sharing one per (language,
    /// server, root, trust, environment policy) among the sessions that match.
    #[arg(long)]
    no_shared_servers: bool,
    /// Shared language servers alive at once, at most; starting one more first stops the
    /// least recently used one that is not answering anything.
    #[arg(long, default_value_t = 16)]
    max_servers: usize,
    /// MiB of resident memory all shared language servers (and what they start) may hold;
    /// past it the least recently used idle one is stopped first. 0: no cap by memory.
    #[arg(long, default_value_t = 0)]
    max_server_memory: u64,
    /// Seconds a shared language server no session uses is kept before it is stopped.
    #[arg(long, default_value_t = 600)]
    server_idle_timeout: u64,
    /// Seconds a call may stay quiet before its client (when it sent a progress token) is
    /// told it is still running; keeps clients and proxies from timing long calls out.
    #[arg(long, default_value_t = 10)]
    progress_interval: u64,
    /// /metrics answers without credentials (else it asks for those of /mcp).
    #[arg(long)]
    metrics_public: bool,
    /// Serve the operator's status page at /status (and /status.json): sessions, shared
    /// language servers, running and recent calls; behind the credentials of /mcp, even
    /// with --metrics-public.
    #[arg(long)]
    status: bool,
    /// An origin (http://host:port) whose browser pages may call this server besides its
    /// own (repeatable). A request carrying any other Origin header gets HTTP 403; requests
    /// without one (MCP clients that are programs) are not affected.
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// `json`: every log event as one JSON object on a line of stderr (session opened and
    /// closed, call started and ended with tool, duration and outcome; never arguments or
    /// credentials).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    /// Also offer the newest MCP protocol (no sessions): each of its requests gets a run of
    /// its own, so kernels, debug sessions and staged edits do not persist between calls.
    #[arg(long)]
    sessionless: bool,
    /// A file whose first line is the bearer token clients must send.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// JSON Web Key Set of the authorization server, to accept OAuth 2.1 access tokens
    /// (JWT); re-read when it changes. Needs --issuer and --resource.
    #[arg(long, requires_all = ["issuer", "resource"], conflicts_with = "jwks_url")]
    jwks_file: Option<PathBuf>,
    /// The authorization server's JSON Web Key Set at an https URL: cached as its
    /// Cache-Control allows, fetched again when a token names an unknown key. Needs
    /// --issuer and --resource.
    #[arg(long, value_name = "URL", requires_all = ["issuer", "resource"])]
    jwks_url: Option<String>,
    /// PEM certificates to trust for --jwks-url besides the public roots (a private CA).
    #[arg(long, requires = "jwks_url")]
    jwks_ca_file: Option<PathBuf>,
    /// The shortest time, in seconds, between two fetches of --jwks-url.
    #[arg(long, default_value_t = 60, requires = "jwks_url")]
    jwks_min_refresh: u64,
    /// A header to read the client's credential from before Authorization (`Bearer TOKEN`
    /// or the bare token), for a router in front that consumes Authorization and drops it
    /// (agent-sandbox's sandbox-router does), e.g. X-Agent-Tools-Authorization.
    #[arg(long, value_name = "NAME")]
    auth_header: Option<String>,
    /// Check out the first session's repository into the empty --root before serving it:
    /// its initialize names it in the X-Agent-Tools-Repository (a URL starting with one of
    /// these prefixes, each ending in `/`) and X-Agent-Tools-Ref headers. Repeatable.
    #[arg(long, value_name = "URL_PREFIX")]
    checkout_allow: Vec<String>,
    /// A file whose first line is the credential for that fetch: USER:TOKEN (HTTP basic)
    /// or a bare token (bearer); re-read at each checkout.
    #[arg(long, value_name = "FILE", requires = "checkout_allow")]
    checkout_credential_file: Option<PathBuf>,
    /// The issuer (`iss`) access tokens must name.
    #[arg(long)]
    issuer: Option<String>,
    /// This server's resource URI, the audience (`aud`) access tokens must name.
    #[arg(long)]
    resource: Option<String>,
}

fn parse_surface(s: &str) -> Result<Surface, String> {
    Surface::parse(s).ok_or_else(|| format!("unknown surface `{s}`; use full, plan or read-only"))
}

fn parse_workspace(s: &str) -> Result<ServedWorkspace, String> {
    let (name, dir) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=DIR"))?;
    Ok(ServedWorkspace {
        name: Some(name.to_string()),
        root: PathBuf::from(dir),
        trusted: false,
    })
}

impl ServeArgs {
    /// Whether logs are JSON lines (`--log-format json`).
    pub fn json_logs(&self) -> bool {
        self.log_format == "json"
    }
}

/// Serves until SIGINT or SIGTERM, then closes every session's run.
pub async fn serve(args: ServeArgs) -> Result<ExitCode, ToolError> {
    let json_logs = args.json_logs();
    let workspaces = if args.workspace.is_empty() {
        let root = match args.root {
            Some(r) => r,
            None => std::env::current_dir()
                .map_err(|e| ToolError::internal(format!("no current directory: {e}")))?,
        };
        if !args.trust_workspace.is_empty() {
            return Err(ToolError::invalid(
                "--trust-workspace",
                "names a workspace served with --workspace NAME=DIR; with --root use --trust",
            ));
        }
        vec![ServedWorkspace {
            name: None,
            root,
            trusted: args.trust,
        }]
    } else {
        let mut workspaces = args.workspace;
        for name in &args.trust_workspace {
            let Some(w) = workspaces
                .iter_mut()
                .find(|w| w.name.as_deref() == Some(name))
            else {
                return Err(ToolError::invalid(
                    "--trust-workspace",
                    format!("no workspace is served as `{name}`"),
                ));
            };
            w.trusted = true;
        }
        for w in &mut workspaces {
            w.trusted |= args.trust;
        }
        workspaces
    };
    for w in &workspaces {
        // Fail fast on a bad configuration, before any client connects.
        tools_core::Config::load(&w.root, args.config.as_deref())?;
    }
    let mut base = ToolboxOptions::new(".");
    base.config_path = args.config;
    base.approve = args.approve;
    base.max_children = (args.max_children > 0).then_some(args.max_children);
    // One pool of language servers for every session (unless each is to have its own).
    #[cfg(feature = "lsp")]
    let pool = {
        base.lsp_pool = (!args.no_shared_servers).then(|| {
            tools_lsp::LspPool::new(tools_lsp::PoolLimits {
                max_servers: args.max_servers.max(1),
                max_rss: (args.max_server_memory > 0).then(|| args.max_server_memory * 1024 * 1024),
                idle_timeout: Duration::from_secs(args.server_idle_timeout),
            })
        });
        base.lsp_pool.clone()
    };
    #[cfg(not(feature = "lsp"))]
    let _ = (
        args.no_shared_servers,
        args.max_servers,
        args.max_server_memory,
        args.server_idle_timeout,
    );
    let jwks = match (args.jwks_file, args.jwks_url) {
        (Some(file), _) => Some(JwksSource::File(file)),
        (None, Some(url)) => Some(JwksSource::Url {
            url,
            ca_file: args.jwks_ca_file,
            min_refresh: Duration::from_secs(args.jwks_min_refresh),
        }),
        (None, None) => None,
    };
    let auth = AuthSettings {
        static_token: args
            .token_file
            .as_deref()
            .map(tools_serve::read_token_file)
            .transpose()?,
        oauth: match (jwks, args.issuer, args.resource) {
            (Some(jwks), Some(issuer), Some(resource)) => Some(OAuthSettings {
                jwks,
                issuer,
                resource,
            }),
            (None, None, None) => None,
            _ => {
                return Err(ToolError::invalid(
                    "--issuer",
                    "--issuer and --resource go with --jwks-file or --jwks-url",
                ));
            }
        },
    };
    let mut opts = ServeOptions::new(
        args.addr,
        workspaces.clone(),
        agent_tools::serve_run_factory(base),
    );
    opts.surface = args.surface;
    opts.max_sessions = args.max_sessions;
    opts.idle_timeout = Duration::from_secs(args.idle_timeout.max(1));
    opts.sessionless = args.sessionless;
    opts.auth = auth;
    opts.credential_header = args.auth_header;
    opts.checkout = (!args.checkout_allow.is_empty()).then_some(tools_serve::CheckoutSettings {
        allowed_prefixes: args.checkout_allow,
        credential_file: args.checkout_credential_file,
    });
    opts.grace = Duration::from_secs(args.grace);
    opts.warm = args.warm;
    opts.warm_ahead = tools_serve::WarmAhead {
        lsp_files: args.warm_lsp,
        kernels: args.warm_kernel,
    };
    opts.metrics_public = args.metrics_public;
    opts.status = args.status;
    opts.allow_origins = args.allow_origin;
    opts.heartbeat = Duration::from_secs(args.progress_interval.max(1));
    #[cfg(feature = "lsp")]
    if let Some(pool) = pool.clone() {
        let listed = pool.clone();
        opts.shared_children = Some(std::sync::Arc::new(move || pool.live_count()));
        opts.language_servers = Some(std::sync::Arc::new(move || {
            listed.servers().iter().map(pooled_server).collect()
        }));
    }
    let server = tools_serve::bind(opts).await?;
    let (stop, stop_now) = stop_signals();
    let addr = server.local_addr()?;
    for w in &workspaces {
        let trust = if w.trusted {
            "trusted"
        } else {
            "untrusted unless your own config trusts it"
        };
        let line = format!(
            "serving {} at http://{addr}{} ({trust})",
            w.root.display(),
            w.path()
        );
        if json_logs {
            tracing::info!(root = %w.root.display(), trusted = w.trusted, "{line}");
        } else {
            eprintln!("agent-tools: {line}");
        }
    }
    let cut = server.drain_cutter();
    tokio::spawn(async move {
        stop_now.await;
        cut.cancel();
    });
    server.run(stop).await?;
    #[cfg(feature = "lsp")]
    if let Some(pool) = pool {
        pool.shutdown().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// Two futures over SIGINT and SIGTERM (the console's Ctrl-C and Ctrl-Break on Windows):
/// the first resolves on the first signal, the second
/// on the one after. The handlers are installed when this is called, not when a future is
/// first polled: a signal right after the "serving" line must drain the server, not kill
/// it with the default action.
fn stop_signals() -> (
    impl std::future::Future<Output = ()> + Send + 'static,
    impl std::future::Future<Output = ()> + Send + 'static,
) {
    let mut requests = tools_core::platform::StopRequests::install(false);
    let (count, seen) = tokio::sync::watch::channel(0u32);
    tokio::spawn(async move {
        loop {
            requests.recv().await;
            count.send_modify(|n| *n += 1);
        }
    });
    let wait_for = |n: u32| {
        let mut seen = seen.clone();
        async move {
            let _ = seen.wait_for(|c| *c >= n).await;
        }
    };
    (wait_for(1), wait_for(2))
}

/// A shared language server as the status page shows it.
#[cfg(feature = "lsp")]
fn pooled_server(s: &tools_lsp::SharedServer) -> tools_serve::PooledServer {
    use tools_serve::ServerState;
    let running = s.client.as_ref().filter(|c| c.is_alive());
    let state = match running {
        _ if s.gave_up => ServerState::GaveUp,
        None => ServerState::Stopped,
        Some(c) if c.loading() => ServerState::Loading,
        Some(c) if c.indexing() => ServerState::Indexing,
        Some(_) => ServerState::Ready,
    };
    tools_serve::PooledServer {
        root: s.key.root.clone(),
        language: s.key.language.clone(),
        server: s
            .key
            .program
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        trusted: s.key.trusted,
        pid: running.map(|c| c.pid()),
        rss_bytes: s.rss,
        runs: s.sessions.clone(),
        state,
        crashes: s.crashes,
        last_failure: s.last_failure.clone(),
        last_restart: s.last_restart.clone(),
        idle: s.idle,
    }
}
