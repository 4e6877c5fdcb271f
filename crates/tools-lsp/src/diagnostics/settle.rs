//! When a server has finished reacting to a change: its *settled* state.
//!
//! A write's diagnostics are only true once every consequence of the write has been
//! published — the written file's own diagnostics, then the files that depend on it (pyright
//! re-checks importers, rust-analyzer runs `cargo check` after a save, tsserver re-checks the
//! open files). Taking the state any earlier reports a later write's result with this one's
//! errors in it. So a server counts as settled only when all of these hold:
//!
//! - every document we changed has a publish for its new version (push servers);
//! - no work-done progress report is under way or announced (indexing, `cargo check`,
//!   pyright's analysis of the files left after its first slice of time) — during a first
//!   analysis, announced and not begun yet however long ago;
//! - rust-analyzer's `experimental/serverStatus` says quiescent (when it sends one);
//! - after a save to a server that checks on save (rust-analyzer's flycheck), the check has
//!   had its moment to begin;
//! - nothing was published, reported or changed within the quiet window, nor sent to it;
//! - after files changed on disk were handed to it, it has shown some reaction, or had a
//!   moment to ([`DISK_NEWS_REACTION`]).
//!
//! The quiet window depends on what the server tells about its work. pyright, basedpyright,
//! rust-analyzer and gopls (as the table starts it) report every pass that outlives one burst
//! of notifications as progress
//! (pyright publishes what a slice of analysis found and announces progress in the same
//! breath when files are left; rust-analyzer publishes a check's results as it ends it):
//! for them the window only has to cover the rest of a burst ([`BURST_GAP`]), so a write
//! costs little more than the server's own time. So does a change whose publishes are all
//! known in advance (typescript-language-server, clangd: see the `republish` module). Any
//! other server may follow up unannounced: it gets at least three times as long as it took
//! to publish the changed documents, so a server slowed down by load gets time in
//! proportion to follow up with the files that depend on them.
//!
//! All of it bounded by a deadline: past it the caller says "pending" and names the server
//! and what it was still waiting for.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tools_core::platform::path_key;

use crate::client::LspClient;

/// How long after a save a server that checks on save may take to start that check.
pub const CHECK_ON_SAVE_GRACE: Duration = Duration::from_secs(3);

/// The quiet window after a check that runs on save (its results, and the clearing of the
/// previous ones, may follow the end of its progress report).
pub const AFTER_CHECK_QUIET: Duration = Duration::from_secs(1);

/// How long a likely (not certain) publish is waited for after the change, at least.
pub const LIKELY_PUBLISH_WAIT: Duration = Duration::from_millis(1000);

/// How long a server that reports all its work gets to show any reaction to files changed
/// on disk: it answers them in its own time (pyright after a back-off of about 250 ms) and
/// only by publishing what changed, so silence until then is no sign of being done.
pub const DISK_NEWS_REACTION: Duration = Duration::from_millis(1000);

/// The longest quiet window the server's own latency can stretch it to.
pub const MAX_QUIET: Duration = Duration::from_secs(3);

/// How long the rest of one burst of notifications (the publishes of one pass, the progress
/// announced with them) may take to arrive after the first, for a server that reports all
/// its work ([`reports_all_work`]).
pub const BURST_GAP: Duration = Duration::from_millis(50);

/// What one settle waits for.
#[derive(Debug, Clone)]
pub struct SettleGoal {
    /// Documents whose new version must be published: (path, version). Ignored for pull
    /// servers (they are pulled after settling instead).
    pub publishes: Vec<(PathBuf, i32)>,
    /// Documents a publish is likely but not certain for (opened with the text the server
    /// already read from disk): waited for up to [`LIKELY_PUBLISH_WAIT`] after the change.
    pub likely: Vec<(PathBuf, i32)>,
    /// The publish sequence number before the change: only later publishes count.
    pub since_seq: u64,
    /// When the change was sent: the time the server takes to publish it stretches the
    /// quiet window, and likely publishes are waited for from then.
    pub changed_at: Option<Instant>,
    /// The progress-begin count before a save: a server that checks on save is not
    /// settled until a check began after it (or the grace passed).
    pub saved: Option<u64>,
    /// Whether `publishes` lists every publish the change will bring (the server's rule
    /// for republishing was applied, see the `republish` module): then, as for a server
    /// that reports all its work, only the rest of a burst is waited for.
    pub complete: bool,
    /// The quiet window.
    pub quiet: Duration,
    /// Whether this settle ends a server's first analysis: then work the server announced
    /// (a progress token it created) counts as under way until it begins, however long
    /// that takes. pyright publishes an empty list for every file of the workspace and
    /// announces its analysis in the same breath, but begins it only once its first slice
    /// is done — seconds later on a loaded machine, long after an announcement otherwise
    /// stops counting: a state taken in between is a workspace of empty lists.
    pub first_analysis: bool,
    /// The bound.
    pub deadline: Instant,
}

/// Whether a server runs a project check after a save, reporting it as progress:
/// rust-analyzer, unless its settings turn `checkOnSave` off (an untrusted run does).
pub fn checks_on_save(client: &LspClient) -> bool {
    client.server.starts_with("rust-analyzer")
        && client.setting("rust-analyzer.checkOnSave") != serde_json::Value::Bool(false)
}

/// Whether every pass the server makes after a change either ends within one burst of
/// notifications or is reported as work-done progress, so the quiet window need only cover
/// a burst: pyright and basedpyright (a slice of analysis that leaves files to check
/// announces progress as it publishes), rust-analyzer (`serverStatus`, and its check
/// reported as progress), gopls with `verboseWorkDoneProgress` (each diagnosis reported
/// as progress), and servers whose diagnostics are pulled.
pub fn reports_all_work(client: &LspClient) -> bool {
    let s = client.server.as_str();
    s.starts_with("pyright")
        || s.starts_with("basedpyright")
        || s.starts_with("rust-analyzer")
        // gopls reports each diagnosis as progress when asked to (the table asks).
        || (s.starts_with("gopls")
            && client.setting("gopls.verboseWorkDoneProgress") == serde_json::Value::Bool(true))
        // A pull server's answer is computed on request (ruff): nothing follows unannounced.
        || client.pulls_diagnostics()
}

/// Whether the server checks the open files before any other, a slice of analysis at a time,
/// and publishes what each slice found together, in one order of files that is also the
/// order it checks them in: pyright and basedpyright. A slice that checks an open file
/// re-reads the changed files that one imports and publishes them with it — their new text
/// with their previous check's findings, at their old lines — and checks them only in a later
/// slice.
pub fn checks_open_files_in_slices(client: &LspClient) -> bool {
    let s = client.server.as_str();
    s.starts_with("pyright") || s.starts_with("basedpyright")
}

/// The first of `docs` whose last publish since `since_seq` may be a re-read rather than a
/// check (see [`checks_open_files_in_slices`]): another open file came before it in its
/// burst — the slice checked that one first, and may have stopped there — and the server has
/// not shown since that every open file is checked: no later burst of files that are not
/// open alone (it goes on to those only then), and its progress still says files are left
/// (it says none are, or says nothing, once none are: `progress_active` is what it says
/// now). `open` holds the open files by [`path_key`]. The bursts are read once for all of
/// `docs`.
fn reread_not_checked<'a>(
    client: &LspClient,
    since_seq: u64,
    docs: impl IntoIterator<Item = &'a (PathBuf, i32)>,
    open: &HashSet<PathBuf>,
    progress_active: bool,
    now: Instant,
) -> Option<PathBuf> {
    if !checks_open_files_in_slices(client) {
        return None;
    }
    let bursts = client.bursts_since(since_seq);
    let is_open = |p: &PathBuf| open.contains(&path_key(p));
    docs.into_iter()
        .find(|(path, _)| {
            let Some(published) = client.published(path).filter(|p| p.seq > since_seq) else {
                return false;
            };
            let Some(at) = bursts
                .iter()
                .position(|b| (b.first_seq..=b.last_seq).contains(&published.seq))
            else {
                return false;
            };
            let burst = &bursts[at];
            let key = path_key(path);
            let checked_before = burst
                .paths
                .iter()
                .take_while(|p| path_key(p) != key)
                .any(is_open);
            let open_files_done = bursts[at + 1..]
                .iter()
                .any(|b| !b.paths.iter().any(is_open))
                || (!progress_active && now >= burst.ended + BURST_GAP);
            checked_before && !open_files_done
        })
        .map(|(p, _)| p.clone())
}

/// Waits until `client` is settled for `goal`. `Err` names what it was still waiting for
/// when the deadline passed (or that the server exited).
pub async fn settle(client: &LspClient, goal: &SettleGoal) -> Result<(), String> {
    settle_until(client, goal, None).await.map(|_| ())
}

/// As [`settle`], but done early once the files a change can directly affect are checked:
/// `goal`'s publishes and a publish of each of `affected` (the open files the server named
/// as using what the change altered; it re-checks open dependents first), `goal`'s likely
/// publishes too unless the server has moved on to files that are not open (pyright checks
/// every open file before any other, so an open file it has not republished by then is no
/// dependent of the change in its eyes), then a quiet window. A publish pyright made of a
/// file it only re-read while checking another is not that file checked
/// ([`checks_open_files_in_slices`]). The server's other work —
/// pyright going on through every file that imports the written one — is not waited for:
/// `Ok(Some(what))` names it. `Ok(None)` is a settled server; `Err` as for [`settle`].
pub async fn settle_affected(
    client: &LspClient,
    goal: &SettleGoal,
    affected: &[(PathBuf, i32)],
) -> Result<Option<String>, String> {
    settle_until(client, goal, Some(affected)).await
}

async fn settle_until(
    client: &LspClient,
    goal: &SettleGoal,
    affected: Option<&[(PathBuf, i32)]>,
) -> Result<Option<String>, String> {
    let mut rx = client.events();
    // When every affected file was first seen checked.
    let mut affected_checked: Option<Instant> = None;
    let open: HashSet<PathBuf> = match affected {
        Some(_) => client
            .open_paths()
            .await
            .iter()
            .map(|p| path_key(p))
            .collect(),
        None => Default::default(),
    };
    let check_on_save = checks_on_save(client);
    let all_reported = reports_all_work(client) || goal.complete;
    let mut quiet = if all_reported { BURST_GAP } else { goal.quiet };
    let mut published_seen = goal.publishes.is_empty();
    let mut latency = Duration::ZERO;
    loop {
        if !client.is_alive() {
            return Err(format!("{} exited", client.server));
        }
        let now = Instant::now();
        let a = client.activity();
        let mut wake = goal.deadline;
        // Likely publishes get a fixed wait, or three times the server's latency when that
        // is longer (a loaded machine).
        let likely_until = goal
            .changed_at
            .map(|at| at + LIKELY_PUBLISH_WAIT.max(latency * 3));
        let missing = missing_publish(client, goal.since_seq, &goal.publishes).or_else(|| {
            likely_until
                .filter(|until| now < *until)
                .and_then(|_| missing_publish(client, goal.since_seq, &goal.likely))
        });
        if let Some(until) = likely_until
            && missing.is_some()
            && missing_publish(client, goal.since_seq, &goal.publishes).is_none()
        {
            wake = wake.min(until);
        }
        if missing.is_none() && !published_seen {
            published_seen = true;
            if let Some(at) = goal.changed_at {
                // The server's latency stretches the wait for likely publishes on a loaded
                // machine, whatever the server.
                latency = now.saturating_duration_since(at).min(MAX_QUIET);
                // Three times the server's own latency: the follow-up work (importers) takes
                // about as long as the first check, plus the server's scheduling in between,
                // and a loaded machine stretches both unevenly. Not for a server whose
                // follow-up work is announced or known.
                if !all_reported {
                    quiet = quiet.max((latency * 3).min(MAX_QUIET));
                }
            }
        }
        let waiting: Option<String> = if let Some(p) = &missing {
            Some(format!(
                "the diagnostics of {}",
                p.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            ))
        } else if a.progress_active {
            // A progress token announced and never begun stops counting after a while,
            // without an event to say so.
            wake = wake.min(now + crate::client::ANNOUNCED_PROGRESS_LIFETIME);
            Some("work it reports as in progress (indexing or checking)".into())
        } else if goal.first_analysis && client.announced_not_begun() {
            // Its `begin` wakes this wait.
            Some("the analysis it announced to begin".into())
        } else if a.quiescent == Some(false) {
            Some("its project to load (not quiescent)".into())
        } else if let (Some(begun), Some(at)) = (goal.saved, goal.changed_at)
            && check_on_save
            && a.progress_begun == begun
            && (client.checks_after_save() || now < at + CHECK_ON_SAVE_GRACE)
        {
            // Once the server has shown that it checks after a save, that check is part of
            // settling however long it takes to begin (a loaded machine); before that, it
            // gets a grace (the check may be turned off).
            if !client.checks_after_save() {
                wake = wake.min(at + CHECK_ON_SAVE_GRACE);
            }
            Some("the check it runs after a save".into())
        } else if let Some(news) = a.last_disk_news
            && all_reported
            // A pull server's reaction is what it answers when pulled.
            && !client.pulls_diagnostics()
            && a.last_event < news
            && now < news + DISK_NEWS_REACTION
        {
            wake = wake.min(news + DISK_NEWS_REACTION);
            Some("its reaction to files changed on disk".into())
        } else if now < a.last_event.max(a.last_told) + quiet {
            // Quiet since its last word and since ours: a change we just sent (an external
            // change handed over before the state is taken) must get its reaction.
            wake = wake.min(a.last_event.max(a.last_told) + quiet);
            Some("more diagnostics (it published a moment ago)".into())
        } else {
            None
        };
        if let Some(begun) = goal.saved
            && check_on_save
            && a.progress_begun > begun
        {
            client.note_check_after_save();
            // rust-analyzer clears the previous check's diagnostics, and may publish the
            // check's last files, only after reporting the check's end: give those publishes
            // their own window — the rest of the burst for a server that reports all its
            // work, stretched to the server's own latency on this write when that is longer
            // (a loaded machine delays its main loop's publishes past a fixed gap).
            quiet = quiet.max(if all_reported {
                BURST_GAP.max(latency).min(AFTER_CHECK_QUIET)
            } else {
                AFTER_CHECK_QUIET
            });
        }
        let Some(what) = waiting else {
            tracing::debug!(
                server = %client.server,
                since_change = ?goal.changed_at.map(|c| c.elapsed()),
                since_last_event = ?a.last_event.elapsed(),
                ?quiet,
                "settled"
            );
            return Ok(None);
        };
        if let Some(files) = affected
            && missing_publish(client, goal.since_seq, &goal.publishes).is_none()
            && missing_publish(client, goal.since_seq, files).is_none()
            && (missing.is_none()
                || client
                    .published_since(goal.since_seq)
                    .iter()
                    .any(|(p, _)| !open.contains(&path_key(p))))
            && reread_not_checked(
                client,
                goal.since_seq,
                goal.publishes.iter().chain(files),
                &open,
                a.progress_active,
                now,
            )
            .is_none()
        {
            let at = *affected_checked.get_or_insert(now);
            let done_at = (at + quiet).max(a.last_event + quiet);
            if now >= done_at {
                tracing::debug!(
                    server = %client.server,
                    since_change = ?goal.changed_at.map(|c| c.elapsed()),
                    still = %what,
                    "the files the change affects are checked"
                );
                return Ok(Some(what));
            }
            wake = wake.min(done_at);
        }
        if now >= goal.deadline {
            return Err(unchecked_users(client, goal.since_seq, affected).unwrap_or(what));
        }
        let left = wake.saturating_duration_since(now);
        // A changed event re-evaluates at once; a timeout re-evaluates at the wake time.
        if let Ok(Err(_)) = tokio::time::timeout(left, rx.changed()).await {
            return Err(format!("{} exited", client.server));
        }
    }
}

/// The files of `affected` the server has not published since the change, named (relative
/// to its root) so the answer can say exactly whose diagnostics are still to come.
fn unchecked_users(
    client: &LspClient,
    since_seq: u64,
    affected: Option<&[(PathBuf, i32)]>,
) -> Option<String> {
    let late: Vec<String> = affected?
        .iter()
        .filter(|d| missing_publish(client, since_seq, std::slice::from_ref(*d)).is_some())
        .map(|(p, _)| {
            p.strip_prefix(&client.root)
                .unwrap_or(p)
                .display()
                .to_string()
        })
        .collect();
    (!late.is_empty()).then(|| {
        format!(
            "the diagnostics of {} file(s) using what changed: {}",
            late.len(),
            late.join(", ")
        )
    })
}

/// The first of `docs` with no publish since `since_seq` for its version. A publish without
/// a version answers for any version, unless the server versions every publish of an open
/// document (`republish::versions_open_documents`): then it is of the file on disk, not of
/// the open text.
fn missing_publish(client: &LspClient, since_seq: u64, docs: &[(PathBuf, i32)]) -> Option<PathBuf> {
    if client.pulls_diagnostics() {
        return None;
    }
    let unversioned_counts = !crate::diagnostics::republish::versions_open_documents(client);
    docs.iter()
        .find(|(path, version)| {
            !client.published(path).is_some_and(|p| {
                p.seq > since_seq && p.version.map_or(unversioned_counts, |v| v >= *version)
            })
        })
        .map(|(p, _)| p.clone())
}
