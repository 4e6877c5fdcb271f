//! The daemon process: it listens on the user's socket, answers each connection's first
//! line ([`crate::wire`]), starts or finds the server a conversation asks for and hands
//! the connection to that server's mux, and keeps the lifetimes: a server no conversation
//! has used for `server_idle` is stopped, and the daemon leaves when it has held neither
//! servers nor conversations for `idle`, when asked to stop, or — once a daemon of a newer
//! build drained it — when its last conversation has gone.
//!
//! One daemon per build: the first to take the build's lock serves its socket (a socket
//! left by a killed daemon is replaced); a second one started at the same moment finds the
//! lock taken and leaves at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;
use tools_core::platform::{LocalListener, LocalStream};

use crate::hosted::Hosted;
use crate::lock;
use crate::paths::DaemonPaths;
use crate::wire::{DaemonStatus, Hello, MAX_LINE_BYTES, Serving, Welcome, line_of};

/// How a daemon is run.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// Its build (see [`crate::wire::build_id`]).
    pub build: String,
    /// Its files.
    pub paths: DaemonPaths,
    /// It leaves after this long with neither servers nor conversations.
    pub idle: Duration,
    /// A server no conversation uses is stopped after this long.
    pub server_idle: Duration,
}

/// Why [`serve`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeEnd {
    /// Another daemon of this build holds the lock (it won the race to start).
    AnotherServes,
    /// Idle past its time.
    Idle,
    /// Asked to stop.
    Stopped,
    /// Drained by a newer build, and its last conversation has gone.
    Drained,
}

/// How long a connection may take to send its first line.
const FIRST_LINE_WITHIN: Duration = Duration::from_secs(10);

struct Daemon {
    opts: DaemonOptions,
    started: Instant,
    servers: Mutex<HashMap<String, Arc<Hosted>>>,
    next_conn: AtomicU64,
    draining: AtomicBool,
    stop: CancellationToken,
    /// When the daemon last had a server or a conversation.
    last_busy: Mutex<Instant>,
}

/// Runs the daemon until it leaves (see [`ServeEnd`]).
pub async fn serve(opts: DaemonOptions) -> std::io::Result<ServeEnd> {
    opts.paths.make_folder()?;
    let lock_file = tools_core::platform::private_file_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&opts.paths.lock)?;
    match lock_file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(ServeEnd::AnotherServes),
        Err(std::fs::TryLockError::Error(e)) => return Err(e),
    }
    // A socket here was left by a daemon that died (its lock is ours now).
    let _ = std::fs::remove_file(&opts.paths.socket);
    let listener = LocalListener::bind(&opts.paths.socket)?;
    drain_other_builds(&opts.paths).await;
    tracing::info!(build = %opts.build, socket = %opts.paths.socket.display(), "daemon serving");
    let daemon = Arc::new(Daemon {
        opts,
        started: Instant::now(),
        servers: Mutex::new(HashMap::new()),
        next_conn: AtomicU64::new(1),
        draining: AtomicBool::new(false),
        stop: CancellationToken::new(),
        last_busy: Mutex::new(Instant::now()),
    });
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let end = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, same_user)) => {
                    let d = Arc::clone(&daemon);
                    tokio::spawn(async move { d.connection(stream, same_user).await });
                }
                Err(e) => tracing::warn!("accept failed: {e}"),
            },
            _ = daemon.stop.cancelled() => break ServeEnd::Stopped,
            _ = tick.tick() => {
                if let Some(end) = daemon.look_after_lifetimes() {
                    break end;
                }
            }
        }
    };
    let _ = std::fs::remove_file(&daemon.opts.paths.socket);
    let servers: Vec<Arc<Hosted>> = lock(&daemon.servers).drain().map(|(_, h)| h).collect();
    for h in &servers {
        h.stop();
    }
    for h in &servers {
        let _ = tokio::time::timeout(Duration::from_secs(3), h.gone.cancelled()).await;
    }
    drop(lock_file);
    tracing::info!(?end, "daemon leaving");
    Ok(end)
}

/// Tells the daemons of other builds to drain, and removes the files of those that died.
async fn drain_other_builds(paths: &DaemonPaths) {
    for socket in paths.other_builds() {
        match tools_core::platform::connect_local(&socket).await {
            Ok(mut stream) => {
                let _ = stream.write_all(&line_of(&Hello::Drain)).await;
                let _ = stream.shutdown().await;
            }
            Err(_) => {
                // Nobody listens: a killed daemon's socket (its lock is free).
                let lock = socket.with_extension("lock");
                let free = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&lock)
                    .map(|f| f.try_lock().is_ok())
                    .unwrap_or(true);
                if free {
                    let _ = std::fs::remove_file(&socket);
                    let _ = std::fs::remove_file(&lock);
                }
            }
        }
    }
}

/// Reads one line of at most [`MAX_LINE_BYTES`].
async fn read_line<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> std::io::Result<String> {
    let mut line = Vec::new();
    let mut limited = r.take(MAX_LINE_BYTES as u64);
    limited.read_until(b'\n', &mut line).await?;
    String::from_utf8(line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

impl Daemon {
    async fn connection(self: Arc<Self>, stream: LocalStream, same_user: bool) {
        let mut stream = BufReader::new(stream);
        if !same_user {
            let refusal = Welcome::Refused {
                reason: "this daemon serves its own user's conversations only".into(),
            };
            let _ = stream.get_mut().write_all(&line_of(&refusal)).await;
            return;
        }
        let line = match tokio::time::timeout(FIRST_LINE_WITHIN, read_line(&mut stream)).await {
            Ok(Ok(l)) => l,
            _ => return,
        };
        let hello: Hello = match serde_json::from_str(line.trim_end()) {
            Ok(h) => h,
            Err(e) => {
                let refusal = Welcome::Refused {
                    reason: format!("not a first line this daemon understands: {e}"),
                };
                let _ = stream.get_mut().write_all(&line_of(&refusal)).await;
                return;
            }
        };
        let welcome = match hello {
            Hello::Drain => {
                tracing::info!("a daemon of a newer build started: draining");
                self.draining.store(true, Ordering::SeqCst);
                Welcome::Stopping
            }
            Hello::Status { build } | Hello::Stop { build } if build != self.opts.build => {
                Welcome::OtherBuild {
                    build: self.opts.build.clone(),
                }
            }
            Hello::Server { build, .. } if build != self.opts.build => Welcome::OtherBuild {
                build: self.opts.build.clone(),
            },
            Hello::Status { .. } => Welcome::Status(self.status()),
            Hello::Stop { .. } => {
                self.stop.cancel();
                Welcome::Stopping
            }
            Hello::Server { .. } if self.draining.load(Ordering::SeqCst) => Welcome::Refused {
                reason: "this daemon is draining: a newer build's daemon serves".into(),
            },
            Hello::Server {
                conversation, spec, ..
            } => {
                let conn = self.next_conn.fetch_add(1, Ordering::SeqCst);
                match self.server_for(*spec) {
                    Ok((hosted, warm)) => {
                        let serving = Serving {
                            daemon_pid: std::process::id(),
                            server_pid: hosted.pid,
                            warm,
                            server_age_s: hosted.started.elapsed().as_secs_f64(),
                            shared_with: hosted.conversations(),
                        };
                        if stream
                            .get_mut()
                            .write_all(&line_of(&Welcome::Serving(serving)))
                            .await
                            .is_err()
                        {
                            return;
                        }
                        tracing::info!(conn, %conversation, server = %hosted.spec.program.display(), warm, "serving");
                        hosted.join(conn, conversation, stream);
                        return;
                    }
                    Err(reason) => Welcome::Refused { reason },
                }
            }
        };
        let _ = stream.get_mut().write_all(&line_of(&welcome)).await;
        let _ = stream.get_mut().shutdown().await;
    }

    /// The server for `spec`: the one running (warm) or a new one.
    fn server_for(&self, spec: crate::wire::ServerSpec) -> Result<(Arc<Hosted>, bool), String> {
        let key = spec.key();
        let mut servers = lock(&self.servers);
        if let Some(h) = servers.get(&key)
            && !h.gone.is_cancelled()
        {
            return Ok((Arc::clone(h), true));
        }
        let hosted = Hosted::start(spec)?;
        servers.insert(key, Arc::clone(&hosted));
        *lock(&self.last_busy) = Instant::now();
        Ok((hosted, false))
    }

    fn status(&self) -> DaemonStatus {
        let mut servers: Vec<_> = lock(&self.servers)
            .values()
            .filter(|h| !h.gone.is_cancelled())
            .map(|h| h.status())
            .collect();
        servers.sort_by(|a, b| (&a.root, &a.language).cmp(&(&b.root, &b.language)));
        DaemonStatus {
            build: self.opts.build.clone(),
            pid: std::process::id(),
            age_s: self.started.elapsed().as_secs_f64(),
            draining: self.draining.load(Ordering::SeqCst),
            servers,
        }
    }

    /// Stops servers idle past their time; says when the daemon should leave.
    fn look_after_lifetimes(&self) -> Option<ServeEnd> {
        let mut servers = lock(&self.servers);
        servers.retain(|_, h| {
            if h.gone.is_cancelled() {
                return false;
            }
            let idle = h.idle_for();
            if idle.is_some_and(|d| d >= self.opts.server_idle)
                || (idle.is_some() && self.draining.load(Ordering::SeqCst))
            {
                tracing::info!(server = %h.spec.program.display(), "stopping an idle server");
                h.stop();
                return false;
            }
            true
        });
        let busy = servers.values().any(|h| h.idle_for().is_none()) || !servers.is_empty();
        drop(servers);
        if busy {
            *lock(&self.last_busy) = Instant::now();
            return None;
        }
        if self.draining.load(Ordering::SeqCst) {
            return Some(ServeEnd::Drained);
        }
        (lock(&self.last_busy).elapsed() >= self.opts.idle).then_some(ServeEnd::Idle)
    }
}
