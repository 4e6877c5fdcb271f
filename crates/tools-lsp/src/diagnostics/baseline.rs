//! The settled state before a change, taken the same way for a write and for a preview:
//! external changes and the importers of the changed files first, then one settled state
//! per server, workspace files only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use tools_core::PreImage;

use crate::client::LspClient;
use crate::diagnostics::dependents::{
    BeforeWrite, Importers, open_before_write, open_importers, open_users,
};
use crate::diagnostics::settle::{SettleGoal, checks_on_save, settle};
use crate::diagnostics::state_diff::DiagnosticState;
use crate::servers::supervisor::ServerSupervisor;

/// Most touched files looked at after one write.
pub const ON_WRITE_FILES: usize = 20;

/// One server's settled state before a change (a write or a preview), with the files that
/// were opened only to observe the change.
pub(crate) struct Before {
    /// Its diagnostics, workspace files only.
    pub state: DiagnosticState,
    /// Whether `state` is a settled state of a server that was up before this change.
    pub settled: bool,
    /// Whether the server's first analysis was still running when the bound was hit (or it
    /// read the written text before any state was known, or a check of the project read it
    /// before the state was taken): what it says about the files the change did not touch
    /// cannot be told apart from what they had before, so they are all baseline.
    pub first_analysis_unfinished: bool,
    /// Files opened now only to observe the change (baseline, never new).
    pub observers: Vec<PathBuf>,
    /// Every importer of the changed files that is open (the server re-checks them).
    pub open_importers: Vec<PathBuf>,
    /// Every file the server names as using what the change alters, all open, when it
    /// could tell them all (see `dependents::Importers::all_users`) and its state
    /// before is settled: once these and the changed files are checked, the rest of the
    /// server's work cannot be the change's direct doing.
    pub users: Option<Vec<PathBuf>>,
    /// With the first analysis unfinished, the files whose state before is known all the
    /// same (pyright checked them first: see `early_users`): they are judged, not baseline.
    pub judged: Vec<PathBuf>,
    /// Users opened for this change whose check after their opening was not waited for:
    /// the server had published them already, and that publish is their state before
    /// (`reopen_users`). The write hands them over again at a new version after the written
    /// files, so what the server publishes of them then is told apart by its version.
    pub unconfirmed: Vec<PathBuf>,
    /// What to tell the model about it.
    pub notes: Vec<String>,
}

/// Step 1 of the `observer` module doc: external changes and importers first, then the settled state
/// before a change to `paths` (which stay as the server has them).
///
/// `pre_images` holds what written files held before the write (a preview passes the
/// disk's texts): for servers that diagnose only open documents, and for any server still
/// on its first analysis, a written file not open yet is opened at that text first, so the
/// importers opened next, and that analysis, show the state before the write.
///
/// `earlier` names an earlier write of this server whose result was given before the server
/// had settled on it, and what its settle was still waiting for: the state before is then
/// that write's end — everything it waited for, waited for as long as a first analysis is
/// (`index_wait_ms`) — so every late arrival of that write lands in it and is that write's,
/// never this change's, even when this change undoes it. When that bound is hit too, the
/// answer's first line says so.
pub(crate) async fn state_before(
    sup: &ServerSupervisor,
    client: &LspClient,
    paths: &[PathBuf],
    pre_images: &HashMap<PathBuf, PreImage>,
    earlier: Option<(u64, &SettleGoal)>,
    reopen_users: bool,
) -> Before {
    let cfg = sup.config();
    let started = Instant::now();
    let mut notes = Vec::new();
    client.catch_up_diagnostics().await;
    let since = client.publish_seq();
    let mut expect = Vec::new();
    if let Ok(changed) = client.flush_external(paths).await {
        expect.extend(changed);
    }
    // A server that has not been seen settled since its start may still be on its first
    // analysis (pyright checks the whole workspace, a slice at a time): the state before
    // is its end, waited for as long as a query waits for indexing.
    let first_analysis = !client.first_analysis_done();
    // Importers not open yet are opened now, after the written files were opened at their
    // text from before the write where it is known; where it is not, what the importers
    // show may already be the write's doing: they are baseline, never new.
    let before_write = open_before_write(client, paths, pre_images, first_analysis).await;
    expect.extend(before_write.opened.iter().cloned());
    let mut importers = open_importers(sup, client, paths).await;
    for dep in &importers.opened {
        expect.push(dep.clone());
    }
    // Documents a query opened a moment ago that the server has not reported on yet: their
    // first report is on its way (tsserver checks open documents a moment after they open)
    // and belongs to the state before, not to this change. Likely, not sure: a server that
    // publishes nothing for a clean document holds the change up only briefly.
    let mut first_reports = Vec::new();
    for p in client.open_paths().await {
        if paths.contains(&p)
            || expect.iter().any(|(e, _)| *e == p)
            || client.published(&p).is_some()
        {
            continue;
        }
        if let Some(v) = client.open_version(&p).await {
            first_reports.push((p, v));
        }
    }
    let first_reports_from = (!first_reports.is_empty()).then(Instant::now);
    let wait = match first_analysis || earlier.is_some() {
        true => cfg.index_wait().max(cfg.diagnostics_wait() / 2),
        false => cfg.diagnostics_wait() / 2,
    };
    let pre = match earlier {
        // The earlier write's own goal, with what this change handed over added to it.
        Some((_, goal)) => {
            let mut publishes = goal.publishes.clone();
            publishes.extend(expect);
            let mut likely = goal.likely.clone();
            likely.extend(first_reports);
            SettleGoal {
                publishes,
                likely,
                since_seq: goal.since_seq.min(since),
                quiet: cfg.diagnostics_quiet(),
                first_analysis,
                deadline: Instant::now() + wait,
                ..goal.clone()
            }
        }
        None => SettleGoal {
            publishes: expect,
            likely: first_reports,
            since_seq: since,
            changed_at: first_reports_from,
            saved: None,
            complete: false,
            quiet: cfg.diagnostics_quiet(),
            first_analysis,
            deadline: Instant::now() + wait,
        },
    };
    // pyright answers references while its first analysis runs and checks the open files
    // before any other: on a large project whose analysis outlasts the bound, the files
    // using what the write changes are opened first, and each has its state before once
    // it is published, whatever the rest of the analysis is still doing (see
    // `early_users`).
    let users_first = first_analysis
        && earlier.is_none()
        && client.answers_before_analysis()
        && before_write.complete;
    let mut unconfirmed = Vec::new();
    let (mut pre_settled, early, judged) = match users_first {
        true => {
            let reopen_users = reopen_users.then_some(&mut unconfirmed);
            early_users(sup, client, paths, &before_write, &pre, reopen_users).await
        }
        false => (settle(client, &pre).await, None, None),
    };
    // The users of what the write changed are asked once the server has settled: the
    // progress a server reports for answering (pyright's "Finding references") would
    // otherwise hold the state before for a quiet window after our own question. Only the
    // files opened for them are waited for then, within the same bound.
    let users = match early {
        Some(users) => users,
        None => {
            let since_users = client.publish_seq();
            let users = open_users(sup, client, paths, &before_write).await;
            // A server that checks its whole workspace and is settled has published every
            // file it checks as it is now: that publish is a user's state before, and the
            // check its opening asks for (a quarter of a second later, pyright's back-off
            // after our outline question) need not be waited for — when the write hands the
            // user over again at a new version (`reopen_users`).
            let confirm = match reopen_users && pre_settled.is_ok() && !first_analysis {
                true => published_already(client, &users.opened, &mut unconfirmed),
                false => users.opened.clone(),
            };
            if pre_settled.is_ok() && !confirm.is_empty() {
                pre_settled = settle(
                    client,
                    &SettleGoal {
                        publishes: confirm,
                        likely: Vec::new(),
                        since_seq: since_users,
                        changed_at: None,
                        saved: None,
                        complete: false,
                        quiet: cfg.diagnostics_quiet(),
                        first_analysis,
                        deadline: pre.deadline,
                    },
                )
                .await;
            }
            users
        }
    };
    let all_users = users.all_users.clone();
    importers.extend(users);
    // A server whose first analysis did not end in time, or that could only be shown the
    // written text, has no state from before this change: what it reports about files
    // nobody changed is a baseline.
    // A server that checks the project from the disk once it has loaded it (rust-analyzer's
    // first `cargo check`) whose first check had not ended when the write reached the disk
    // — started for the write, with the run, or by a query a moment before — checked the
    // written text: the editor's old text does not reach that check.
    let started_for_it = started_after_write(client, paths, pre_images);
    let checked_written_disk = first_analysis
        && checks_on_save(client)
        && first_check_read_written(client, paths, pre_images);
    // Any other check that ran after the written text reached the disk and before the
    // write was handed over (the project loaded again for a manifest changed outside, an
    // earlier write's check begun late) read that text too.
    let rechecked_written_disk = !checked_written_disk
        && checks_on_save(client)
        && check_read_written(client, paths, pre_images);
    let first_analysis_unfinished = rechecked_written_disk
        || first_analysis
            && (pre_settled.is_err() || !before_write.complete || checked_written_disk);
    let settled = pre_settled.is_ok() && !first_analysis_unfinished;
    match &pre_settled {
        Ok(()) => client.note_first_analysis_done(),
        Err(what) if first_analysis => notes.push(match &judged {
            Some(files) => format!(
                "{FIRST_ANALYSIS_UNFINISHED} — {} was still on its first analysis of the project after {} ms \
                 ({}): the {} file(s) it names as using what this change altered{} were checked \
                 before and after it and are judged here; the diagnostics of other files this change did not \
                 touch were taken as they are, not judged; ask `lsp` action `diagnostics` for a file to see it \
                 once the analysis is over",
                client.server,
                started.elapsed().as_millis(),
                waited_for(what),
                files.len(),
                match all_users.is_some() {
                    true => "",
                    false => " (not every question about them was answered in time)",
                }
            ),
            None => format!(
                "{FIRST_ANALYSIS_UNFINISHED} — {} was still on its first analysis of the project after {} ms \
                 ({}): the diagnostics of files this change did not touch were taken as they are, \
                 not judged; ask `lsp` action `diagnostics` for a file to see it once the analysis is over",
                client.server,
                wait.as_millis(),
                waited_for(what)
            ),
        }),
        Err(what) => match earlier {
            Some((number, _)) => notes.push(format!(
                "{EARLIER_WRITE_UNFINISHED} — {} was still checking the earlier write #{number} after {} ms \
                 (waiting for {what}): a diagnostic listed below in a file this change did not touch may be that \
                 write's; ask `lsp` action `diagnostics` for a file to see it once the server is done",
                client.server,
                wait.as_millis()
            )),
            None => notes.push(format!(
                "{} was still busy before this change (waiting for {what}); a diagnostic listed below may predate it",
                client.server
            )),
        },
    }
    if rechecked_written_disk {
        notes.push(format!(
            "{NO_STATE_BEFORE} — {} checked the project again after the written text reached the disk, \
             before the write was handed to it, and that check read it: the diagnostics of files this \
             change did not touch were taken as they are, not judged; ask `lsp` action `diagnostics` for a caller",
            client.server
        ));
    } else if pre_settled.is_ok() && first_analysis_unfinished {
        let how = no_state_before_why(
            client.started_with_the_run(),
            started_for_it,
            checked_written_disk,
        );
        notes.push(format!(
            "{NO_STATE_BEFORE} — {} {how}: the diagnostics \
             of files this change did not touch were taken as they are, not judged; ask `lsp` action `diagnostics` for a caller",
            client.server
        ));
    }
    if client.pulls_diagnostics() {
        pull_open(client, paths).await;
    }
    let state = within_workspace(sup, client.snapshot());
    // An importer with no settled report from before the write has no state to compare
    // with either.
    let observers: Vec<PathBuf> = importers
        .opened
        .iter()
        .map(|(p, _)| p.clone())
        .filter(|p| !before_write.complete || !state.contains_key(p))
        .collect();
    Before {
        state,
        settled,
        first_analysis_unfinished,
        observers,
        open_importers: importers.open,
        users: all_users.filter(|_| settled || judged.is_some()),
        judged: judged.unwrap_or_default(),
        unconfirmed,
        notes,
    }
}

/// For a server that answers references during its first analysis and checks open files
/// first (pyright): waits for the whole analysis for half of what a write waits for its
/// diagnostics (`diagnostics_wait_ms`) — not at all when, at the pace it reports, it cannot
/// end in that time (a large project: see [`settle_unless_out_of_reach`]). One that goes on
/// is not waited for to the end of the bound if it can be done without: the files using
/// what the write changes are opened — checked before any other — and once each is
/// published and every open file checked, those users (and the ones open before) are the
/// files whose state before is known (the third `Some`) — unless the analysis ends first
/// (the server settles, the users published): then that is the state before, as for any
/// server, to the end of the bound.
///
/// With `unconfirmed` (the write reopens users: see `Before::unconfirmed`), a server seen
/// quiet whose first analysis was seen to begin and end (its progress reports) has its
/// users' earlier publishes as their state before: those are put in `unconfirmed` and not
/// waited for.
///
/// A server seen quiet in that first wait (a write right after its start, its analysis not
/// begun) has its users opened and waited for as for any server (`Ok`), as long again; if
/// its analysis goes on past that and it has checked the users and moved on to files that
/// are not open, the users are judged as above rather than their wait running into the
/// bound.
async fn early_users(
    sup: &ServerSupervisor,
    client: &LspClient,
    paths: &[PathBuf],
    before_write: &BeforeWrite,
    pre: &SettleGoal,
    unconfirmed: Option<&mut Vec<PathBuf>>,
) -> (Result<(), String>, Option<Importers>, Option<Vec<PathBuf>>) {
    let first = SettleGoal {
        deadline: pre
            .deadline
            .min(Instant::now() + sup.config().diagnostics_wait() / 2),
        ..pre.clone()
    };
    let first_done = settle_unless_out_of_reach(client, &first).await;
    let since = client.publish_seq();
    let users = open_users(sup, client, paths, before_write).await;
    let confirm = match unconfirmed {
        Some(known) if first_done.is_ok() && client.first_load_seen_over() => {
            published_already(client, &users.opened, known)
        }
        _ => users.opened.clone(),
    };
    let what = match first_done {
        Ok(()) if confirm.is_empty() => return (Ok(()), Some(users), None),
        Ok(()) => {
            // As long again as the first wait: an analysis that had not begun when the
            // server was quiet, over by then, is the state before as always.
            let half = pre
                .deadline
                .min(Instant::now() + sup.config().diagnostics_wait() / 2);
            let published = SettleGoal {
                publishes: confirm,
                likely: Vec::new(),
                since_seq: since,
                changed_at: None,
                saved: None,
                complete: false,
                quiet: sup.config().diagnostics_quiet(),
                first_analysis: true,
                deadline: half,
            };
            // Meanwhile: whether the users were checked and the server moved on to files
            // that are not open (an analysis under way), should it not end in time.
            let (result, moved_on) = {
                let settled = settle(client, &published);
                let checked = users_checked(client, &users, since, half);
                tokio::pin!(settled, checked);
                let mut moved_on = None;
                loop {
                    tokio::select! {
                        result = &mut settled => break (result, moved_on.unwrap_or(false)),
                        c = &mut checked, if moved_on.is_none() => moved_on = Some(c),
                    }
                }
            };
            match (result, moved_on) {
                (Ok(()), _) => return (Ok(()), Some(users), None),
                (Err(what), true) => {
                    let judged = users.open.clone();
                    return (Err(what), Some(users), Some(judged));
                }
                (Err(_), false) => {
                    let rest = SettleGoal {
                        deadline: pre.deadline,
                        ..published
                    };
                    return (settle(client, &rest).await, Some(users), None);
                }
            }
        }
        Err(what) => what,
    };
    if users.open.is_empty() {
        return (settle(client, pre).await, Some(users), None);
    }
    // The analysis may end at any moment (or just has, a moment after the first wait gave
    // up: then no file that is not open is published again, and the users could never be
    // seen to be checked "before the rest"): whichever comes first decides — the whole
    // server settled, the users opened just now published too, or the users checked while
    // the analysis goes on.
    let mut publishes = pre.publishes.clone();
    publishes.extend(users.opened.iter().cloned());
    let whole = SettleGoal {
        publishes,
        ..pre.clone()
    };
    // `Ok` holds the settled server's result; `Err` says the users were checked first.
    let outcome: Result<Result<(), String>, ()> = {
        let settled = settle(client, &whole);
        let checked = users_checked(client, &users, since, pre.deadline);
        tokio::pin!(settled, checked);
        let mut checked_done = false;
        loop {
            tokio::select! {
                result = &mut settled => break Ok(result),
                c = &mut checked, if !checked_done => {
                    if c {
                        break Err(());
                    }
                    checked_done = true;
                }
            }
        }
    };
    match outcome {
        Ok(result) => (result, Some(users), None),
        Err(()) => {
            let judged = users.open.clone();
            (Err(what), Some(users), Some(judged))
        }
    }
}

/// How many times longer than what is left of its wait an analysis must be expected to take
/// for the wait to give up on it at once: a count of files makes a rough pace (a few large
/// modules may be all that is left), so only an analysis far out of reach is not waited for.
const OUT_OF_REACH: u32 = 4;

/// [`settle`] on `goal`, given up as soon as the analysis the server reports under way
/// cannot end by the goal's deadline at its pace (see `AnalysisPace`: Django's first
/// analysis runs for minutes, and waiting for part of it gains nothing): `Err` then says
/// how far that analysis is.
async fn settle_unless_out_of_reach(client: &LspClient, goal: &SettleGoal) -> Result<(), String> {
    let settled = settle(client, goal);
    let hopeless = out_of_reach(client, goal.deadline);
    tokio::pin!(settled, hopeless);
    tokio::select! {
        biased;
        result = &mut settled => result,
        what = &mut hopeless => Err(what),
    }
}

/// How the reason of a wait given up at once begins (see [`out_of_reach`]).
const NOT_WAITED_FOR: &str = "not waited for";

/// The words in parentheses after a bound that was hit: what the wait was for, or why
/// there was none.
fn waited_for(what: &str) -> String {
    match what.starts_with(NOT_WAITED_FOR) {
        true => what.to_string(),
        false => format!("waiting for {what}"),
    }
}

/// Resolves when the analysis under way is expected to take more than [`OUT_OF_REACH`]
/// times what is left until `deadline`, with what it has left in words; looked at on each
/// event of the server and at least every quarter of a second (a pace slows while no file
/// is done). Never resolves otherwise.
async fn out_of_reach(client: &LspClient, deadline: Instant) -> String {
    let mut rx = client.events();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if let Some(pace) = client.analysis_eta()
            && pace.eta > left * OUT_OF_REACH
        {
            return format!(
                "{NOT_WAITED_FOR}: {} file(s) still to analyze, about {} s more at its pace",
                pace.left,
                pace.eta.as_secs().max(1)
            );
        }
        if let Ok(Err(_)) =
            tokio::time::timeout(std::time::Duration::from_millis(250), rx.changed()).await
        {
            // The server is gone: the settle says so.
            std::future::pending::<()>().await;
        }
    }
}

/// The files of `opened` the server has never published, to be waited for; the others,
/// whose last publish is their state before, are added to `known`.
fn published_already(
    client: &LspClient,
    opened: &[(PathBuf, i32)],
    known: &mut Vec<PathBuf>,
) -> Vec<(PathBuf, i32)> {
    let mut confirm = Vec::new();
    for (path, version) in opened {
        match client.published(path) {
            Some(_) => known.push(path.clone()),
            None => confirm.push((path.clone(), *version)),
        }
    }
    confirm
}

/// Whether every file of `users` opened just now is published after publish number `since`
/// and, after those, every open file checked (see `open_files_checked`), by `deadline`.
async fn users_checked(
    client: &LspClient,
    users: &Importers,
    since: u64,
    deadline: Instant,
) -> bool {
    let mut from = since;
    for (path, version) in &users.opened {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.wait_publish(path, *version, since, left).await {
            Some(p) => from = from.max(p.seq),
            None => return false,
        }
    }
    open_files_checked(client, from, deadline).await
}

/// Whether pyright has checked every open file, waited for until `deadline`: a file it
/// has just been handed is published at once with what parsing it found (its unresolved
/// imports), and only its check finds the rest; the check of the open files comes before
/// any other, so a publish for a file that is not open, after publish number `from` (the
/// opened files' own), says they are all checked. The rest of that burst is waited for too.
async fn open_files_checked(client: &LspClient, from: u64, deadline: Instant) -> bool {
    let open: std::collections::HashSet<PathBuf> = client.open_paths().await.into_iter().collect();
    let mut rx = client.events();
    let moved_on = tokio::time::timeout_at(deadline.into(), async {
        loop {
            if client
                .published_since(from)
                .iter()
                .any(|(p, _)| !open.contains(p))
            {
                return true;
            }
            if !client.is_alive() || rx.changed().await.is_err() {
                return false;
            }
        }
    })
    .await
    .unwrap_or(false);
    if !moved_on {
        return false;
    }
    loop {
        let quiet_from = client.activity().last_event + crate::diagnostics::settle::BURST_GAP;
        if Instant::now() >= quiet_from || Instant::now() >= deadline {
            return true;
        }
        tokio::time::sleep_until(quiet_from.into()).await;
    }
}

/// Whether `client` was started after one of `paths` was written: the file's text differs
/// from its pre-image and was on the disk before the server's process began.
fn started_after_write(
    client: &LspClient,
    paths: &[PathBuf],
    pre_images: &HashMap<PathBuf, PreImage>,
) -> bool {
    // The server's own start: a warm server of the daemon's read the disk long before this
    // conversation connected to it.
    let Some(started) = SystemTime::now().checked_sub(client.server_age()) else {
        return false;
    };
    paths.iter().any(|p| {
        written(p, pre_images.get(p))
            && std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|at| at <= started)
    })
}

/// Why a server on its first analysis has no state from before a change, after
/// [`NO_STATE_BEFORE`] and its name: how it was started (with the run, for this change, or
/// earlier by a query) and how it came to read the written text — its first check of the
/// project, still to end when the text reached the disk, or the written file itself, whose
/// text from before was not known to show it first.
fn no_state_before_why(with_the_run: bool, for_it: bool, by_its_check: bool) -> &'static str {
    match (with_the_run, for_it, by_its_check) {
        (true, _, true) => {
            "started with the run, and its first check, not over when the written text reached the disk, read that text"
        }
        (true, _, false) => {
            "started with the run, and still on its first analysis read the written text from the disk"
        }
        (false, true, _) => "started for it and read the written text from the disk",
        (false, false, true) => {
            "was still on its first check of the project when the written text reached the disk, and that check read it"
        }
        (false, false, false) => {
            "was still on its first analysis and read the written text from the disk"
        }
    }
}

/// Whether the first check of `client` (a server that checks the project from the disk)
/// may have read one of `paths` at its written text: the file differs from its pre-image
/// and reached the disk before that check ended, or the check has not ended yet.
fn first_check_read_written(
    client: &LspClient,
    paths: &[PathBuf],
    pre_images: &HashMap<PathBuf, PreImage>,
) -> bool {
    let ended = client.first_check_ended();
    paths.iter().any(|p| {
        written(p, pre_images.get(p))
            && std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|at| ended.is_none_or(|end| at <= end))
    })
}

/// Whether a check of `client` may have read one of `paths` at its written text: the file
/// differs from its pre-image and a check was under way when it reached the disk, or began
/// since.
fn check_read_written(
    client: &LspClient,
    paths: &[PathBuf],
    pre_images: &HashMap<PathBuf, PreImage>,
) -> bool {
    paths.iter().any(|p| {
        written(p, pre_images.get(p))
            && std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|at| client.checked_since(at))
    })
}

/// Whether the disk's `path` differs from its pre-image (a preview passes the disk's own).
fn written(path: &Path, pre_image: Option<&PreImage>) -> bool {
    let on_disk = std::fs::read(path).ok();
    match pre_image {
        Some(PreImage::Content(old)) => on_disk.as_ref() != Some(old),
        Some(PreImage::Absent) => on_disk.is_some(),
        None => false,
    }
}

/// Whether a note says a bound was hit (the first analysis, the settle) or that there was
/// no state before: such notes lead the answer, with what to call for the rest.
pub(crate) fn is_bound_note(note: &str) -> bool {
    [
        FIRST_ANALYSIS_UNFINISHED,
        NO_STATE_BEFORE,
        EARLIER_WRITE_UNFINISHED,
        "diagnostics pending",
        "prediction incomplete",
    ]
    .iter()
    .any(|p| note.starts_with(p))
}

/// How the note of a first analysis cut short by its bound begins.
const FIRST_ANALYSIS_UNFINISHED: &str = "first analysis unfinished";

/// How the note of an earlier write still being checked when the bound was hit begins.
const EARLIER_WRITE_UNFINISHED: &str = "earlier write unfinished";

/// How the note of a server with no state from before a change begins.
const NO_STATE_BEFORE: &str = "no state before this change";

/// Only the workspace's files: servers also publish for library sources (related
/// information in the standard library), which are nobody's to fix here.
pub(crate) fn within_workspace(
    sup: &ServerSupervisor,
    mut state: DiagnosticState,
) -> DiagnosticState {
    state.retain(|p, _| p.starts_with(sup.workspace()));
    state
}

/// Pulls the diagnostics of the open documents (capped), for pull servers. `unsynced`
/// documents are pulled as the server has them, without reading the disk: before a write,
/// the written files must stay at their old text until the write is synced (and during a
/// preview, at their proposed text).
pub(crate) async fn pull_open(client: &LspClient, unsynced: &[PathBuf]) {
    for p in client.open_paths().await.into_iter().take(ON_WRITE_FILES) {
        let doc = if unsynced.contains(&p) || client.is_proposed(&p).await {
            client.open_doc_state(&p).await
        } else {
            client.sync_file_now(&p).await.ok()
        };
        if let Some(doc) = doc {
            let _ = client.pull_diagnostics(&doc).await;
        }
    }
}
