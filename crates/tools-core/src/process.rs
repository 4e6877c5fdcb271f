//! The child-process lifecycle, written down once: every external process runs in a session
//! (and so a process group) of its own, with stdin/stdout piped, stderr drained into a
//! bounded log (a full pipe nobody reads would block the child), registered with its [`Run`]
//! so closing the run kills it and everything left in its session ([`crate::sweep`]), and
//! killed with its whole group when its owner drops. On Windows the "group" is a Job Object
//! with kill-on-close holding the child's whole tree ([`crate::platform`] says how each OS
//! does it).
//!
//! On Linux every child also gets `PR_SET_PDEATHSIG(SIGKILL)`: if this server dies without closing
//! its runs (SIGKILL, a crash), the kernel kills its direct children. Linux sends that
//! signal when the *thread* that forked exits, not the process, and a call may run on a
//! short-lived thread (a `spawn_blocking` thread, a Python thread calling through the
//! bindings). So every child is forked by one spawner thread that lives as long as the
//! process.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub use crate::process_group::{ask_group_to_stop, group_alive, kill_group, signal_group};
use crate::text::BoundedBuffer;
use crate::{Run, ToolError};

/// Finds `name` on `$PATH` as an executable file, or checks it as given when it is a path
/// (contains a `/`; on Windows also a `\` or a drive's `:`). On Windows a bare name is also
/// tried with each extension of `PATHEXT` (`node` finds `node.exe`, `pyright` its
/// `pyright.cmd` launcher). The one lookup every family's discovery uses.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    if crate::platform::is_path_like(name) {
        let p = std::path::PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    let names = crate::platform::program_file_names(name);
    std::env::split_paths(&path)
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| is_executable(p))
}

/// Whether `p` is a program this OS would run: a regular file with an execute bit (on
/// Windows, a file whose extension is one of `PATHEXT`).
pub fn is_executable(p: &std::path::Path) -> bool {
    std::fs::metadata(p)
        .map(|m| crate::platform::is_executable_file(p, &m))
        .unwrap_or(false)
}

type SpawnJob = (
    tokio::runtime::Handle,
    Command,
    std::sync::mpsc::Sender<std::io::Result<Child>>,
);

/// The spawner thread's queue, started on first use.
static SPAWNER: std::sync::OnceLock<Option<Mutex<std::sync::mpsc::Sender<SpawnJob>>>> =
    std::sync::OnceLock::new();

/// Spawns `cmd` from the process-long spawner thread, inside the caller's runtime (so the
/// child's pipes and exit are driven by it), so the child's `PDEATHSIG` fires only when the
/// whole process dies. Falls back to spawning here if that thread cannot be started.
fn spawn_from_spawner(mut cmd: Command) -> std::io::Result<Child> {
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("agent-tools-spawner".into())
            .spawn(move || {
                for (handle, mut cmd, reply) in rx {
                    let _runtime = handle.enter();
                    let _ = reply.send(cmd.spawn());
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let (Some(spawner), Ok(handle)) = (spawner, tokio::runtime::Handle::try_current()) else {
        return cmd.spawn();
    };
    let (reply_tx, reply_rx) = std::sync::mpsc::channel();
    let sent = spawner
        .lock()
        .map_err(|_| std::io::Error::other("the spawner queue is poisoned"))?
        .send((handle, cmd, reply_tx));
    if let Err(std::sync::mpsc::SendError((_, mut cmd, _))) = sent {
        return cmd.spawn();
    }
    // Only fork and exec happen there: the answer comes in milliseconds.
    reply_rx
        .recv()
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?
}

/// The last bytes a child wrote to stderr (bounded).
#[derive(Clone)]
pub struct StderrLog(Arc<Mutex<BoundedBuffer>>);

impl Default for StderrLog {
    /// An empty log (for a server whose stderr another process keeps).
    fn default() -> Self {
        Self::new()
    }
}

impl StderrLog {
    fn new() -> Self {
        StderrLog(Arc::new(Mutex::new(BoundedBuffer::new(
            4 * 1024,
            32 * 1024,
        ))))
    }
    /// The kept text.
    pub fn text(&self) -> String {
        self.0.lock().map(|b| b.to_text()).unwrap_or_default()
    }
    /// The last `n` lines.
    pub fn last_lines(&self, n: usize) -> String {
        self.0.lock().map(|b| b.last_lines(n)).unwrap_or_default()
    }
}

/// How stdin and stdout of a child are connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipes {
    /// stdin and stdout piped (protocol servers).
    StdinStdout,
    /// stdin from `/dev/null`, stdout piped.
    StdoutOnly,
    /// stdin from `/dev/null`, stdout to `/dev/null` (only stderr kept).
    None,
}

/// A child process in its own group, killed with its group on drop.
pub struct ChildProcess {
    child: Child,
    pgid: i32,
    run: std::sync::Weak<Run>,
    stderr: StderrLog,
    /// Becomes `true` once everything the child wrote to stderr has been read (the pipe's
    /// other end closed): a child's exit does not mean its last words were read yet.
    stderr_done: tokio::sync::watch::Receiver<bool>,
    /// The program as started, for messages.
    pub program: String,
}

impl std::fmt::Debug for ChildProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildProcess")
            .field("program", &self.program)
            .field("pgid", &self.pgid)
            .finish()
    }
}

impl ChildProcess {
    /// Spawns `cmd` in a new process group, registered with `run`. Stderr is always drained
    /// into a bounded [`StderrLog`].
    pub fn spawn(run: &Arc<Run>, cmd: Command, pipes: Pipes) -> Result<Self, ToolError> {
        Self::spawn_with_stderr_tee(run, cmd, pipes, |_| {})
    }

    /// [`ChildProcess::spawn`], also handing every chunk of stderr to `tee` as it is drained
    /// (for owners that keep a full log, such as background workers). The bounded
    /// [`StderrLog`] is kept as well.
    pub fn spawn_with_stderr_tee(
        run: &Arc<Run>,
        cmd: Command,
        pipes: Pipes,
        tee: impl FnMut(&[u8]) + Send + 'static,
    ) -> Result<Self, ToolError> {
        Self::spawn_inner(Some(run), cmd, pipes, tee)
    }

    /// [`ChildProcess::spawn`] for a process no run owns: a language server the per-user
    /// daemon holds for every conversation that shares it. Its tree still dies with this
    /// process and is killed with its group on drop; no run's child cap applies.
    pub fn spawn_unowned(cmd: Command, pipes: Pipes) -> Result<Self, ToolError> {
        Self::spawn_inner(None, cmd, pipes, |_| {})
    }

    fn spawn_inner(
        run: Option<&Arc<Run>>,
        mut cmd: Command,
        pipes: Pipes,
        mut tee: impl FnMut(&[u8]) + Send + 'static,
    ) -> Result<Self, ToolError> {
        let program = format!("{:?}", cmd.as_std().get_program());
        match pipes {
            Pipes::StdinStdout => {
                cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
            }
            Pipes::StdoutOnly => {
                cmd.stdin(Stdio::null()).stdout(Stdio::piped());
            }
            Pipes::None => {
                cmd.stdin(Stdio::null()).stdout(Stdio::null());
            }
        }
        cmd.stderr(Stdio::piped()).kill_on_drop(true);
        crate::platform::own_tree_dying_with_us(&mut cmd);
        let spawning = crate::sweep::spawning();
        // Checked under the spawn lock, so two calls of one run cannot both pass the cap.
        if let Some(run) = run {
            run.check_child_cap(&program)?;
        }
        let mut child = spawn_from_spawner(cmd)
            .map_err(|e| ToolError::not_available(format!("cannot start {program}: {e}")))?;
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        if let Err(e) = crate::platform::tree_started(&child) {
            drop(spawning);
            let _ = child.start_kill();
            return Err(ToolError::not_available(format!(
                "cannot tie {program}'s process tree to this server: {e}"
            )));
        }
        if let Some(run) = run {
            run.register_process_group(pgid);
        }
        crate::watchdog::watch_session(pgid);
        crate::sweep::session_started(pgid);
        drop(spawning);
        let stderr = StderrLog::new();
        let (stderr_read_all, stderr_done) = tokio::sync::watch::channel(false);
        if let Some(mut err) = child.stderr.take() {
            let log = stderr.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                loop {
                    match err.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if let Ok(mut b) = log.0.lock() {
                                b.push(&buf[..n]);
                            }
                            tee(&buf[..n]);
                        }
                    }
                }
                let _ = stderr_read_all.send(true);
            });
        } else {
            let _ = stderr_read_all.send(true);
        }
        Ok(ChildProcess {
            child,
            pgid,
            run: run.map(Arc::downgrade).unwrap_or_default(),
            stderr,
            stderr_done,
            program,
        })
    }

    /// The process id (and its group and session id).
    pub fn pid(&self) -> i32 {
        self.pgid
    }
    /// Takes the piped stdin.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }
    /// Takes the piped stdout.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }
    /// The stderr log.
    pub fn stderr(&self) -> &StderrLog {
        &self.stderr
    }
    /// Waits, at most `within`, until everything the child wrote to stderr is in
    /// [`ChildProcess::stderr`]: after its exit, for a caller that reports its whole output
    /// (a checker's findings on stderr), since the exit can come before the reader has
    /// drained the pipe. Bounded, because a grandchild may keep the pipe open.
    pub async fn stderr_read_to_end(&self, within: std::time::Duration) {
        let mut done = self.stderr_done.clone();
        let _ = tokio::time::timeout(within, done.wait_for(|all| *all)).await;
    }
    /// The exit status if the child has exited, without waiting.
    pub fn try_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
    /// Waits for the child to exit.
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }
    /// Waits up to `grace` for a clean exit, then kills the whole group. Idempotent.
    pub async fn shutdown(
        &mut self,
        grace: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => None,
        };
        self.kill();
        match status {
            Some(s) => Some(s),
            None => self.child.wait().await.ok(),
        }
    }
    /// Kills the whole group now, and whatever is left in the child's session or below it
    /// (double-forked grandchildren).
    pub fn kill(&mut self) {
        kill_group(self.pgid);
        let _ = self.child.start_kill();
        if self.pgid > 1 {
            crate::sweep::kill_all(&[self.pgid].into_iter().collect());
        }
        if let Some(run) = self.run.upgrade() {
            run.forget_process_group(self.pgid);
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.kill();
        // Only now: while its owner holds it, the child (or its zombie, which the owner may
        // still wait for) must never look like a stray.
        if self.pgid > 1 {
            crate::watchdog::forget_session(self.pgid);
            crate::sweep::session_ended(self.pgid);
            crate::platform::tree_forgotten(self.pgid);
        }
    }
}

#[cfg(test)]
mod tests {
    // `sleep`, `sh` and the process listing are Unix's; on Windows the tree of a child in
    // its Job Object is tested in the platform layer (`platform/windows/process.rs`).
    #[cfg(unix)]
    use super::*;

    /// Whether `pid` runs (exists and is not a zombie).
    #[cfg(unix)]
    fn running(pid: i32) -> bool {
        crate::platform::process(pid).is_some_and(|p| !p.zombie)
    }

    #[cfg(unix)]
    #[test]
    fn a_child_outlives_the_short_lived_thread_that_started_it() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let run = Run::for_test(dir.path(), "spawner");
        let handle = rt.handle().clone();
        let asking = Arc::clone(&run);
        // A thread that asks for the child and exits, as a caller's pool thread does.
        let child = std::thread::spawn(move || {
            handle.block_on(async move {
                let mut cmd = Command::new("sleep");
                cmd.arg("30");
                ChildProcess::spawn(&asking, cmd, Pipes::None).unwrap()
            })
        })
        .join()
        .unwrap();
        let pid = child.pid();
        // Were its death signal tied to that thread, it would be dead (or dying) by now.
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(running(pid));
        // Its own session, so nothing it leaves behind escapes the sweep.
        let parsed = crate::platform::process(pid).unwrap();
        assert_eq!((parsed.session, parsed.pgrp), (pid, pid));
        rt.block_on(async move {
            drop(child);
            run.close().await;
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!running(pid));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_run_at_its_child_cap_refuses_one_more_until_one_ends() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::for_test(dir.path(), "cap");
        run.limit_children(1);
        let sleeper = || {
            let mut cmd = Command::new("sleep");
            cmd.arg("30");
            cmd
        };
        let mut first = ChildProcess::spawn(&run, sleeper(), Pipes::None).unwrap();
        let err = ChildProcess::spawn(&run, sleeper(), Pipes::None).unwrap_err();
        assert!(
            err.to_string().contains("already has 1 child processes"),
            "{err}"
        );
        first.kill();
        assert_eq!(run.child_count(), 0);
        let second = ChildProcess::spawn(&run, sleeper(), Pipes::None).unwrap();
        drop(second);
        run.close().await;
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn every_line_written_to_stderr_is_read_once_the_child_has_exited() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::for_test(dir.path(), "stderr");
        // More than a pipe holds at once, the last line written just before the exit.
        let report = || {
            let mut cmd = Command::new("sh");
            cmd.args([
                "-c",
                "i=0; while [ $i -lt 400 ]; do echo \"line $i of the checker's report\" >&2; i=$((i+1)); done; echo last >&2; exit 3",
            ]);
            cmd
        };
        for _ in 0..5 {
            let mut child = ChildProcess::spawn(&run, report(), Pipes::None).unwrap();
            let status = child.wait().await.unwrap();
            assert_eq!(status.code(), Some(3));
            child
                .stderr_read_to_end(std::time::Duration::from_secs(5))
                .await;
            assert!(
                child.stderr().text().ends_with("last\n"),
                "{}",
                child.stderr().last_lines(2)
            );
        }
        run.close().await;
    }
}
