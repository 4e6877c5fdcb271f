//! What a server says of the work it has under way (`$/progress` begin and report: title,
//! message, percentage), so an answer given while it indexes can say how far it is, and of
//! what kind each piece of work is: loading the project (queries cannot be answered yet),
//! indexing in the background (they can, perhaps incompletely) or checking the project
//! (rust-analyzer's `cargo check`: answers are complete meanwhile).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use lsp_types::WorkDoneProgress;

use super::analysis_pace::{AnalysisEta, AnalysisPace, files_left};

impl super::LspClient {
    /// The work the server reports under way, in words (`indexing 45% (12/30)`), `None`
    /// when it reports none.
    pub fn indexing_progress(&self) -> Option<String> {
        self.shared.board.describe()
    }

    /// When the server's first project check (rust-analyzer's `cargo check`) reported its
    /// end, `None` before that: a check reads the disk, so a file written before then may
    /// have been read by it at its written text.
    pub fn first_check_ended(&self) -> Option<SystemTime> {
        self.shared.board.first_check_ended()
    }

    /// Whether a project check of the server (rust-analyzer's `cargo check`) was under way
    /// at `at` or began since: a check reads the disk, so it read a file as written then.
    pub fn checked_since(&self, at: SystemTime) -> bool {
        self.shared.board.checked_since(at)
    }

    /// How far the analysis the server reports under way is, in files left, and how long
    /// it will take at its pace so far (pyright's "2073 files to analyze"); `None` when no
    /// such count is under way, or it has not been seen long enough to tell.
    pub(crate) fn analysis_eta(&self) -> Option<AnalysisEta> {
        self.shared.board.analysis_eta(Instant::now())
    }

    /// Whether a progress token the server created (in the last
    /// [`super::ANNOUNCED_TOKEN_KEPT`]) has not begun yet, however long ago it was created:
    /// a server busy with a long first slice of analysis begins the work it announced
    /// seconds later on a loaded machine.
    pub fn announced_not_begun(&self) -> bool {
        self.shared.announced.lock().is_ok_and(|a| {
            a.values()
                .any(|at| at.elapsed() < super::ANNOUNCED_TOKEN_KEPT)
        })
    }
}

/// What a piece of work under way keeps from answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkKind {
    /// Loading the project (rust-analyzer's `Fetching`, `Roots Scanned`, tsserver's project
    /// load, any work a server does not name otherwise): answers before its end are empty
    /// or wrong.
    Loading,
    /// Indexing in the background (rust-analyzer's cache priming): the server answers
    /// meanwhile, perhaps incompletely. clangd's background index is loading: its
    /// definitions across files come from it.
    Indexing,
    /// Checking the project (rust-analyzer's `cargo check` after a save): answers are
    /// complete meanwhile.
    Checking,
}

impl WorkKind {
    /// The kind of the work reported under `token` with `title`.
    pub(crate) fn of(token: &str, title: &str) -> WorkKind {
        let title = title.trim().to_ascii_lowercase();
        if token.starts_with("rust-analyzer/flycheck") || title.starts_with("cargo ") {
            WorkKind::Checking
        } else if token == "rustAnalyzer/cachePriming" {
            WorkKind::Indexing
        } else {
            WorkKind::Loading
        }
    }
}

/// One piece of work under way, as last reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Work {
    kind: Option<WorkKind>,
    title: String,
    message: Option<String>,
    percentage: Option<u32>,
    /// Its pace, when its messages count the files it has left to analyze.
    pace: AnalysisPace,
}

/// The work under way, by progress token.
#[derive(Debug, Default)]
pub(crate) struct ProgressBoard {
    works: Mutex<HashMap<String, Work>>,
    /// When the first check reported its end.
    first_check_ended: Mutex<Option<SystemTime>>,
    /// When the server last began reading the project's manifests (rust-analyzer's
    /// `Fetching`: `cargo metadata`).
    fetch_begun: Mutex<Option<SystemTime>>,
    /// When the last checks began, and ended (`None` while under way), oldest first.
    checks: Mutex<VecDeque<(SystemTime, Option<SystemTime>)>>,
}

/// How many of the last checks are remembered.
const CHECKS_KEPT: usize = 32;

/// How much earlier than its report of a check's beginning the check itself may have begun
/// (the report reaches us after the check's process started, later on a loaded machine).
const CHECK_BEGIN_SLACK: Duration = Duration::from_secs(1);

impl ProgressBoard {
    /// Records one `$/progress` notification of `token`.
    pub(crate) fn record(&self, token: &str, progress: &WorkDoneProgress) {
        let Ok(mut works) = self.works.lock() else {
            return;
        };
        match progress {
            WorkDoneProgress::Begin(b) => {
                tracing::debug!("progress begins: {token} `{}`", b.title);
                if token == "rustAnalyzer/Fetching"
                    && let Ok(mut at) = self.fetch_begun.lock()
                {
                    *at = Some(SystemTime::now());
                }
                let kind = WorkKind::of(token, &b.title);
                if kind == WorkKind::Checking
                    && let Ok(mut checks) = self.checks.lock()
                {
                    if checks.len() == CHECKS_KEPT {
                        checks.pop_front();
                    }
                    checks.push_back((SystemTime::now(), None));
                }
                let mut pace = AnalysisPace::default();
                if let Some(left) = b.message.as_deref().and_then(files_left) {
                    pace.note(left, Instant::now());
                }
                works.insert(
                    token.to_string(),
                    Work {
                        kind: Some(kind),
                        title: b.title.clone(),
                        message: b.message.clone(),
                        percentage: b.percentage,
                        pace,
                    },
                );
            }
            WorkDoneProgress::Report(r) => {
                let w = works.entry(token.to_string()).or_default();
                if w.kind.is_none() {
                    w.kind = Some(WorkKind::of(token, &w.title));
                }
                if let Some(left) = r.message.as_deref().and_then(files_left) {
                    w.pace.note(left, Instant::now());
                }
                if r.message.is_some() {
                    w.message = r.message.clone();
                }
                if r.percentage.is_some() {
                    w.percentage = r.percentage;
                }
            }
            WorkDoneProgress::End(_) => {
                tracing::debug!("progress ends: {token}");
                let ended = works.remove(token);
                if ended.is_some_and(|w| w.kind == Some(WorkKind::Checking)) {
                    let now = SystemTime::now();
                    if let Ok(mut first) = self.first_check_ended.lock() {
                        first.get_or_insert(now);
                    }
                    if let Ok(mut checks) = self.checks.lock()
                        && let Some((_, end)) = checks.back_mut()
                    {
                        end.get_or_insert(now);
                    }
                }
            }
        }
    }

    /// When the first check reported its end, if one has.
    pub(crate) fn first_check_ended(&self) -> Option<SystemTime> {
        self.first_check_ended.lock().ok().and_then(|f| *f)
    }

    /// Whether a lock file last changed at `changed_at` is known to the server as it is
    /// now: one of its last checks was under way then (`cargo check` writes a missing
    /// `Cargo.lock`), or it began reading the project's manifests after that (its
    /// `cargo metadata` reads the lock file, and writes a missing one in older cargos).
    pub(crate) fn knows_lock_changed_at(&self, changed_at: SystemTime) -> bool {
        let fetched_since = self
            .fetch_begun
            .lock()
            .ok()
            .and_then(|f| *f)
            .is_some_and(|begun| changed_at < begun);
        let during_check = self.checks.lock().is_ok_and(|checks| {
            checks.iter().any(|(begun, ended)| {
                begun
                    .checked_sub(CHECK_BEGIN_SLACK)
                    .is_some_and(|from| from <= changed_at)
                    && ended.is_none_or(|end| changed_at <= end)
            })
        });
        fetched_since || during_check
    }

    /// Whether one of the last checks was under way at `at` or began since.
    pub(crate) fn checked_since(&self, at: SystemTime) -> bool {
        self.checks.lock().is_ok_and(|checks| {
            checks
                .iter()
                .any(|(_, ended)| ended.is_none_or(|end| at <= end))
        })
    }

    /// The analysis under way that will take longest at its pace (see
    /// [`AnalysisPace::eta`]), at `now`.
    pub(crate) fn analysis_eta(&self, now: Instant) -> Option<AnalysisEta> {
        let works = self.works.lock().ok()?;
        works
            .values()
            .filter_map(|w| w.pace.eta(now))
            .max_by_key(|e| e.eta)
    }

    /// Whether work of `kind` is under way.
    pub(crate) fn any(&self, kind: WorkKind) -> bool {
        self.works
            .lock()
            .is_ok_and(|w| w.values().any(|w| w.kind == Some(kind)))
    }

    /// The work under way that keeps answers from being final (loading and indexing, not
    /// checks) in words (`indexing 45% (12/30)`; several joined by `; `), `None` when
    /// nothing of that is reported under way.
    pub(crate) fn describe(&self) -> Option<String> {
        let works = self.works.lock().ok()?;
        let mut parts: Vec<String> = works
            .values()
            .filter(|w| w.kind != Some(WorkKind::Checking))
            .map(|w| {
                let mut s = w.title.trim().to_string();
                if let Some(p) = w.percentage {
                    s.push_str(&format!(" {}%", p.min(100)));
                }
                if let Some(m) = w
                    .message
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                {
                    s.push_str(&format!(" ({m})"));
                }
                s.trim().to_string()
            })
            .filter(|s| !s.is_empty())
            .collect();
        parts.sort();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport};

    #[test]
    fn the_last_report_of_each_work_is_described_until_it_ends() {
        let board = ProgressBoard::default();
        assert_eq!(board.describe(), None);
        board.record(
            "backgroundIndexProgress",
            &WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "indexing".into(),
                percentage: Some(0),
                ..Default::default()
            }),
        );
        assert_eq!(board.describe().as_deref(), Some("indexing 0%"));
        board.record(
            "backgroundIndexProgress",
            &WorkDoneProgress::Report(WorkDoneProgressReport {
                message: Some("12/30".into()),
                percentage: Some(40),
                ..Default::default()
            }),
        );
        board.record(
            "rustAnalyzer/Fetching",
            &WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "Fetching".into(),
                ..Default::default()
            }),
        );
        assert_eq!(
            board.describe().as_deref(),
            Some("Fetching; indexing 40% (12/30)")
        );
        // A report that names no percentage keeps the last one.
        board.record(
            "backgroundIndexProgress",
            &WorkDoneProgress::Report(WorkDoneProgressReport {
                message: Some("13/30".into()),
                ..Default::default()
            }),
        );
        board.record(
            "rustAnalyzer/Fetching",
            &WorkDoneProgress::End(WorkDoneProgressEnd::default()),
        );
        assert_eq!(board.describe().as_deref(), Some("indexing 40% (13/30)"));
        board.record(
            "backgroundIndexProgress",
            &WorkDoneProgress::End(WorkDoneProgressEnd::default()),
        );
        assert_eq!(board.describe(), None);
    }

    #[test]
    fn pyrights_count_of_files_to_analyze_gives_its_pace_until_it_ends() {
        let board = ProgressBoard::default();
        let token = "analysis";
        board.record(
            token,
            &WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: String::new(),
                message: Some("30 files to analyze".into()),
                ..Default::default()
            }),
        );
        board.record(
            token,
            &WorkDoneProgress::Report(WorkDoneProgressReport {
                message: Some("20 files to analyze".into()),
                ..Default::default()
            }),
        );
        // Ten files done in (a little more than) two seconds: the twenty left take four.
        let later = Instant::now() + Duration::from_secs(2);
        let eta = board.analysis_eta(later).expect("a pace");
        assert_eq!(eta.left, 20);
        assert!(
            eta.eta >= Duration::from_secs(4) && eta.eta < Duration::from_secs(5),
            "{eta:?}"
        );
        board.record(
            token,
            &WorkDoneProgress::End(WorkDoneProgressEnd::default()),
        );
        assert_eq!(board.analysis_eta(later), None);
    }

    #[test]
    fn work_is_loading_unless_the_server_names_it_indexing_or_a_check() {
        assert_eq!(
            WorkKind::of("rustAnalyzer/Fetching", "Fetching"),
            WorkKind::Loading
        );
        assert_eq!(
            WorkKind::of("rustAnalyzer/Roots Scanned", "Roots Scanned"),
            WorkKind::Loading
        );
        assert_eq!(
            WorkKind::of("rustAnalyzer/cachePriming", "Indexing"),
            WorkKind::Indexing
        );
        assert_eq!(
            WorkKind::of("backgroundIndexProgress", "indexing"),
            WorkKind::Loading
        );
        assert_eq!(
            WorkKind::of("rust-analyzer/flycheck/0", "cargo check"),
            WorkKind::Checking
        );
        let board = ProgressBoard::default();
        board.record(
            "rust-analyzer/flycheck/0",
            &WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "cargo check".into(),
                ..Default::default()
            }),
        );
        // A check is under way, but it keeps no answer from being final.
        assert!(board.any(WorkKind::Checking));
        assert!(!board.any(WorkKind::Loading));
        assert_eq!(board.describe(), None);
        board.record(
            "rustAnalyzer/Roots Scanned",
            &WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "Roots Scanned".into(),
                message: Some("7/17".into()),
                percentage: Some(41),
                ..Default::default()
            }),
        );
        assert!(board.any(WorkKind::Loading));
        assert_eq!(
            board.describe().as_deref(),
            Some("Roots Scanned 41% (7/17)")
        );
    }

    /// A `begin` report of `token` titled `title` on `board`.
    fn begin_on(board: &ProgressBoard, token: &str, title: &str) {
        board.record(
            token,
            &WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: title.into(),
                ..Default::default()
            }),
        );
    }

    /// The `end` report of `token` on `board`.
    fn end_on(board: &ProgressBoard, token: &str) {
        board.record(
            token,
            &WorkDoneProgress::End(WorkDoneProgressEnd::default()),
        );
    }

    #[test]
    fn the_first_check_to_end_is_remembered_and_loading_is_not_a_check() {
        let board = ProgressBoard::default();
        let begin = |token: &str, title: &str| begin_on(&board, token, title);
        let end = |token: &str| end_on(&board, token);
        begin("rustAnalyzer/Fetching", "Fetching");
        end("rustAnalyzer/Fetching");
        begin("rust-analyzer/flycheck/0", "cargo check");
        assert_eq!(board.first_check_ended(), None);
        end("rust-analyzer/flycheck/0");
        let first = board.first_check_ended().expect("the check ended");
        begin("rust-analyzer/flycheck/0", "cargo check");
        end("rust-analyzer/flycheck/0");
        assert_eq!(board.first_check_ended(), Some(first));
    }

    #[test]
    fn a_lock_file_written_during_a_check_or_read_by_a_later_fetch_is_known() {
        let board = ProgressBoard::default();
        let begin = |token: &str, title: &str| begin_on(&board, token, title);
        let end = |token: &str| end_on(&board, token);
        let before_all = SystemTime::now() - Duration::from_secs(60);
        assert!(!board.knows_lock_changed_at(before_all));
        begin("rust-analyzer/flycheck/0", "cargo check");
        let during = SystemTime::now();
        assert!(
            board.knows_lock_changed_at(during),
            "the check is under way"
        );
        end("rust-analyzer/flycheck/0");
        // A second check does not make the first one forgotten.
        begin("rust-analyzer/flycheck/0", "cargo check");
        end("rust-analyzer/flycheck/0");
        assert!(board.knows_lock_changed_at(during));
        let after = SystemTime::now() + Duration::from_secs(5);
        assert!(
            !board.knows_lock_changed_at(after),
            "changed after every check"
        );
        assert!(!board.knows_lock_changed_at(before_all));
        assert!(board.checked_since(during));
        assert!(!board.checked_since(after));
        // Read by a fetch begun after it changed.
        begin("rustAnalyzer/Fetching", "Fetching");
        assert!(board.knows_lock_changed_at(before_all));
        assert!(!board.knows_lock_changed_at(after));
    }
}
