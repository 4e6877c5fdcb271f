//! What a write changed: the difference between a server's settled diagnostics before the
//! write and after it, across every file the server reports.
//!
//! A file with a state before is compared key by key (severity, code, message — never the
//! position) and occurrence by occurrence, as the project's checker would count it: a
//! message that merely moved is not new, a second occurrence of a message the file already
//! had once is. A file first reported now is filtered through the run's ledger instead.
//!
//! A file the server reported nothing for before is either clean (a server that publishes
//! only files with something to say, like gopls, or that had nothing to say yet) or not yet
//! looked at. Which one is decided by whether the server had settled before the write: if
//! it had, no report means nothing to report, and what appears now is new; if it had not
//! (it started for this write, or was still busy), the file is a *baseline*: its
//! diagnostics are recorded, never reported as new. A file the write touched is never a
//! baseline: its own diagnostics are the point.
//!
//! A warning that disappears from a file the change did not touch while the change brings
//! new errors is *hidden*, not gone: checkers stop reporting some findings while the code does not
//! build (gopls drops its vet analyzers for a package with type errors, rustc skips its
//! lint passes — `dead_code` among them — for a crate that does not compile), so nothing
//! says they were fixed. The ledger keeps them, and when they come back they are old, not
//! new.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use lsp_types::Diagnostic;

use crate::client::Published;
use crate::client::diag_store::brief;
use crate::diagnostics::ledger::{DiagnosticsLedger, LedgerKey, counts, ledger_key};

/// One file's change.
#[derive(Debug, Clone, Default)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Diagnostics that appeared and were never reported to this run, in position order.
    pub new: Vec<Diagnostic>,
    /// Diagnostics the file had before and no longer has (positions as they were).
    pub gone: Vec<Diagnostic>,
    /// Diagnostics the file had before and the server no longer reports while the change's
    /// new errors stand, in a file the change did not touch (positions as they were).
    pub hidden: Vec<Diagnostic>,
}

/// A server's diagnostics by file, as published (or pulled).
pub type DiagnosticState = HashMap<PathBuf, Published>;

/// The two states of one server and what the write did between them.
#[derive(Debug, Clone, Copy)]
pub struct Transition<'a> {
    /// The state before.
    pub before: &'a DiagnosticState,
    /// The state after.
    pub after: &'a DiagnosticState,
    /// Files the write touched (never baseline).
    pub touched: &'a [PathBuf],
    /// Files the write deleted (no diagnostics after).
    pub deleted: &'a [PathBuf],
    /// Files opened only to observe this write (always baseline).
    pub baseline: &'a [PathBuf],
    /// Whether `before` was a settled state: if not, a file missing from it is a baseline.
    pub before_settled: bool,
}

/// The per-file changes of `t`. Updates `ledger`.
pub fn diff_states(ledger: &mut DiagnosticsLedger, t: Transition<'_>) -> Vec<FileChange> {
    let Transition {
        before,
        after,
        touched,
        deleted,
        baseline,
        before_settled,
    } = t;
    // Judge the whole write against the ledger as it was before it: the same new error in
    // two files is news in both.
    let known = ledger.known();
    let mut paths: BTreeSet<&Path> = after.keys().map(PathBuf::as_path).collect();
    paths.extend(deleted.iter().map(PathBuf::as_path));
    let mut out = Vec::new();
    for path in paths {
        let empty = Vec::new();
        let is_deleted = deleted.iter().any(|d| d == path);
        let now: &[Diagnostic] = if is_deleted {
            &empty
        } else {
            after
                .get(path)
                .map(|p| p.items.as_slice())
                .unwrap_or(&empty)
        };
        let was = before.get(path);
        let is_touched = touched.iter().any(|t| t == path);
        let observer = baseline.iter().any(|b| b == path);
        // Each file's two states as compared, beside what the server published (see
        // `record_publish`): a verdict can be traced to the publish it came from.
        tracing::debug!(
            "diff {}: touched {is_touched}, baseline {observer}, settled {before_settled}, before {}, after {}",
            path.display(),
            was.map_or("none".to_string(), |p| brief(&p.items)),
            brief(now)
        );
        if observer || (was.is_none() && !is_touched && !is_deleted && !before_settled) {
            // What the file had before this run's changes is unknown (`now` may already
            // be this change's doing): nothing that appears later is taken for an old
            // finding coming back.
            ledger.first_seen(path, &[]);
            ledger.baseline(path, now);
            continue;
        }
        ledger.first_seen(path, was.map(|p| p.items.as_slice()).unwrap_or(&[]));
        let unchanged = match (was, after.get(path)) {
            (Some(b), Some(a)) => b.seq == a.seq && !is_deleted,
            _ => false,
        };
        if unchanged {
            continue;
        }
        let before_items: &[Diagnostic] = was.map(|p| p.items.as_slice()).unwrap_or(&empty);
        ledger.update(path, now);
        let mut new: Vec<Diagnostic> = match was {
            // A file with a state before: what it has more of than before, key by key —
            // except, in a file this change did not touch, what the file had when the run
            // first saw it coming back (a checker that stops reporting a finding while the
            // file's package does not build, like gopls's vet analyzers, reports it again
            // once it builds: it is old).
            Some(_) if !is_touched => back_is_not_new(
                &mut *ledger,
                path,
                before_items,
                added_occurrences(before_items, now),
            ),
            Some(_) => added_occurrences(before_items, now),
            // A file first reported now by a settled server: every occurrence of a key
            // never told to this run (each is a place to fix).
            None => now
                .iter()
                .filter(|d| counts(d) && !known.contains(&ledger_key(d)))
                .cloned()
                .collect(),
        };
        new.sort_by_key(|d| (d.range.start.line, d.range.start.character));
        // What the file had more of before than now, key by key (positions as they were).
        let gone: Vec<Diagnostic> = added_occurrences(now, before_items);
        if !new.is_empty() || !gone.is_empty() {
            out.push(FileChange {
                path: path.to_path_buf(),
                new,
                gone,
                hidden: Vec::new(),
            });
        }
    }
    // New errors anywhere: the warnings that went from the files the change did not touch
    // are hidden. An error that goes is gone: checkers keep reporting errors.
    let breaks = out.iter().flat_map(|c| &c.new).any(is_error);
    if breaks {
        for ch in out
            .iter_mut()
            .filter(|c| !touched.contains(&c.path) && !deleted.contains(&c.path))
        {
            let (gone, hidden) = std::mem::take(&mut ch.gone).into_iter().partition(is_error);
            ch.gone = gone;
            ch.hidden = hidden;
            ledger.hide(&ch.path, &ch.hidden);
        }
    }
    out
}

fn is_error(d: &Diagnostic) -> bool {
    d.severity == Some(lsp_types::DiagnosticSeverity::ERROR)
}

/// `added` without the occurrences that only bring `path` back to what it had when the
/// run first saw it (of each key, as many as it had then beyond what it had `before`), or to
/// what an earlier change hid (those are taken back from the ledger's hidden ones).
fn back_is_not_new(
    ledger: &mut DiagnosticsLedger,
    path: &Path,
    before: &[Diagnostic],
    added: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let mut back: HashMap<LedgerKey, usize> = HashMap::new();
    for d in &added {
        let key = ledger_key(d);
        back.entry(key.clone()).or_insert_with(|| {
            let had = before
                .iter()
                .filter(|b| counts(b) && ledger_key(b) == key)
                .count();
            ledger
                .first_seen_count(path, &key)
                .saturating_sub(had)
                .max(ledger.hidden_count(path, &key))
        });
    }
    added
        .into_iter()
        .filter(|d| match back.get_mut(&ledger_key(d)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                ledger.unhide(path, &ledger_key(d));
                false
            }
            _ => true,
        })
        .collect()
}

/// The diagnostics of `now` beyond what `before` had of the same key (severity, code,
/// message): a key that occurs once before and twice now has one new occurrence, as the
/// checker would count it. An occurrence at a position it held before is the old one; of
/// the others, the first ones in position order are taken as the old ones that moved.
fn added_occurrences(before: &[Diagnostic], now: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut left: HashMap<LedgerKey, Vec<lsp_types::Position>> = HashMap::new();
    for d in before.iter().filter(|d| counts(d)) {
        left.entry(ledger_key(d)).or_default().push(d.range.start);
    }
    let mut sorted: Vec<&Diagnostic> = now.iter().filter(|d| counts(d)).collect();
    sorted.sort_by_key(|d| (d.range.start.line, d.range.start.character));
    // First the occurrences that stayed where they were, then the ones that moved.
    let mut old = vec![false; sorted.len()];
    for (i, d) in sorted.iter().enumerate() {
        if let Some(at) = left.get_mut(&ledger_key(d))
            && let Some(j) = at.iter().position(|p| *p == d.range.start)
        {
            at.swap_remove(j);
            old[i] = true;
        }
    }
    for (i, d) in sorted.iter().enumerate() {
        if !old[i]
            && let Some(at) = left.get_mut(&ledger_key(d))
            && at.pop().is_some()
        {
            old[i] = true;
        }
    }
    sorted
        .into_iter()
        .zip(old)
        .filter(|(_, old)| !old)
        .map(|(d, _)| d.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{DiagnosticSeverity, Position, Range};

    fn d(line: u32, msg: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 0), Position::new(line, 1)),
            severity: Some(DiagnosticSeverity::ERROR),
            message: msg.into(),
            ..Default::default()
        }
    }

    fn st(v: &[(&str, u64, Vec<Diagnostic>)]) -> DiagnosticState {
        v.iter()
            .map(|(p, seq, items)| {
                (
                    PathBuf::from(p),
                    Published {
                        version: None,
                        seq: *seq,
                        items: items.clone(),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn a_second_occurrence_of_a_message_is_new_and_a_moved_one_is_not() {
        let unknown = |line| d(line, "Return type is unknown");
        // One before (line 10); after, it moved to 12 and a second one came at 20.
        let new = added_occurrences(&[unknown(10)], &[unknown(12), unknown(20)]);
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].range.start.line, 20);
        // One stayed where it was: the other one is the new one, whatever its position.
        let new = added_occurrences(&[unknown(20)], &[unknown(3), unknown(20)]);
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].range.start.line, 3);
        // Gone is the same count the other way round: two before, one after (moved).
        let gone = added_occurrences(&[unknown(21)], &[unknown(3), unknown(20)]);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].range.start.line, 20);
        // Hints do not count.
        let mut hint = unknown(4);
        hint.severity = Some(DiagnosticSeverity::HINT);
        assert!(added_occurrences(&[], &[hint]).is_empty());
    }

    #[test]
    fn an_old_finding_hidden_by_a_break_is_not_new_when_it_comes_back() {
        let mut l = DiagnosticsLedger::default();
        let t = |before, after| Transition {
            before,
            after,
            touched: &[],
            deleted: &[],
            baseline: &[],
            before_settled: true,
        };
        let vet = || {
            let mut v = d(17, "format %d has arg of wrong type string");
            v.severity = Some(DiagnosticSeverity::WARNING);
            v
        };
        let start = st(&[("/w/report.go", 1, vec![vet()])]);
        // The break: report.go gets an error and its vet finding is no longer reported.
        let broken = st(&[("/w/report.go", 2, vec![d(11, "not enough arguments")])]);
        let ch = diff_states(&mut l, t(&start, &broken));
        assert_eq!(ch[0].new[0].message, "not enough arguments");
        // Hidden while the new error stands, not gone.
        assert!(ch[0].gone.is_empty(), "{:?}", ch[0].gone);
        assert_eq!(ch[0].hidden, vec![vet()]);
        // The fix: the error goes and the finding the file had from the start is back.
        let fixed = st(&[("/w/report.go", 3, vec![vet()])]);
        let ch = diff_states(&mut l, t(&broken, &fixed));
        assert!(ch[0].new.is_empty(), "{:?}", ch[0].new);
        // Without new errors, what goes is gone.
        assert_eq!(ch[0].gone[0].message, "not enough arguments");
        assert!(ch[0].hidden.is_empty());
        // A second break is news again; a second vet finding beyond the first is new.
        let ch = diff_states(&mut l, t(&fixed, &broken));
        assert_eq!(ch[0].new[0].message, "not enough arguments");
        let twice = st(&[(
            "/w/report.go",
            4,
            vec![vet(), d(30, "format %d has arg of wrong type string")],
        )]);
        let ch = diff_states(&mut l, t(&broken, &twice));
        assert_eq!(ch[0].new.len(), 1);
        // In a file the change touched, the same finding coming back is the change's.
        let ch = diff_states(
            &mut l,
            Transition {
                touched: &[PathBuf::from("/w/report.go")],
                ..t(&broken, &fixed)
            },
        );
        assert_eq!(
            ch[0].new[0].message,
            "format %d has arg of wrong type string"
        );
    }

    #[test]
    fn a_finding_a_write_brought_that_a_later_break_hides_is_old_when_it_comes_back() {
        let mut l = DiagnosticsLedger::default();
        let t = |before, after| Transition {
            before,
            after,
            touched: &[],
            deleted: &[],
            baseline: &[],
            before_settled: true,
        };
        let mut lint = d(3, "function `helper` is never used");
        lint.severity = Some(DiagnosticSeverity::WARNING);
        let clean = st(&[("/w/util.rs", 1, vec![])]);
        // An earlier write brought the lint (new then).
        let linted = st(&[("/w/util.rs", 2, vec![lint.clone()])]);
        assert_eq!(diff_states(&mut l, t(&clean, &linted))[0].new.len(), 1);
        // A break elsewhere stops the lint pass: an error in user.rs, the lint hidden.
        let broken = st(&[
            ("/w/util.rs", 3, vec![]),
            (
                "/w/user.rs",
                3,
                vec![d(1, "this function takes 2 arguments")],
            ),
        ]);
        let ch = diff_states(&mut l, t(&linted, &broken));
        let util = ch
            .iter()
            .find(|c| c.path == Path::new("/w/util.rs"))
            .unwrap();
        assert_eq!((util.gone.len(), util.hidden.len()), (0, 1));
        // The fix: the error is gone, the lint is back and not new.
        let fixed = st(&[("/w/util.rs", 4, vec![lint]), ("/w/user.rs", 4, vec![])]);
        let ch = diff_states(&mut l, t(&broken, &fixed));
        assert!(ch.iter().all(|c| c.new.is_empty()), "{ch:?}");
        let user = ch
            .iter()
            .find(|c| c.path == Path::new("/w/user.rs"))
            .unwrap();
        assert_eq!(user.gone.len(), 1);
        // An error that goes from a file the change did not touch is gone, even while the
        // change brings new errors elsewhere: checkers keep reporting errors.
        let old = st(&[("/w/a.rs", 5, vec![d(1, "expected 1 argument")])]);
        let moved = st(&[
            ("/w/a.rs", 6, vec![]),
            ("/w/b.rs", 6, vec![d(2, "expected 2 arguments")]),
        ]);
        let ch = diff_states(&mut l, t(&old, &moved));
        assert_eq!((ch[0].gone.len(), ch[0].hidden.len()), (1, 0), "{ch:?}");
    }

    #[test]
    fn baseline_files_are_never_new_and_gone_ones_are_named() {
        let mut l = DiagnosticsLedger::default();
        let before = st(&[("/w/app.ts", 1, vec![d(0, "old error")])]);
        // The write broke app.ts; test.ts was observed for the first time with an old error.
        let after = st(&[
            ("/w/app.ts", 3, vec![d(0, "old error"), d(4, "broken call")]),
            ("/w/test.ts", 2, vec![d(1, "pre-existing")]),
        ]);
        let lib = [PathBuf::from("/w/lib.ts")];
        let t = |before, after, touched, deleted, before_settled| Transition {
            before,
            after,
            touched,
            deleted,
            baseline: &[],
            before_settled,
        };
        let ch = diff_states(&mut l, t(&before, &after, &lib, &[], false));
        assert_eq!(ch.len(), 1);
        assert_eq!(ch[0].path, PathBuf::from("/w/app.ts"));
        assert_eq!(ch[0].new.len(), 1);
        assert_eq!(ch[0].new[0].message, "broken call");
        // The fix: nothing new, the broken call named as gone; test.ts unchanged.
        let fixed = st(&[
            ("/w/app.ts", 5, vec![d(0, "old error")]),
            ("/w/test.ts", 2, vec![d(1, "pre-existing")]),
        ]);
        let ch = diff_states(&mut l, t(&after, &fixed, &lib, &[], false));
        assert_eq!(ch.len(), 1);
        assert!(ch[0].new.is_empty());
        assert_eq!(ch[0].gone[0].message, "broken call");
        // A touched file seen for the first time reports its own errors.
        let after2 = st(&[("/w/new.ts", 6, vec![d(2, "typo")])]);
        let new = [PathBuf::from("/w/new.ts")];
        let ch = diff_states(&mut l, t(&fixed, &after2, &new, &[], false));
        assert_eq!(ch[0].new[0].message, "typo");
        // Deleting it: its error is gone.
        let ch = diff_states(&mut l, t(&after2, &after2, &[], &new, false));
        assert_eq!(ch[0].gone[0].message, "typo");
        // A settled server's first report for a file (gopls publishes only files with
        // something to say) is news.
        let later = st(&[("/w/other.go", 9, vec![d(3, "not enough arguments")])]);
        let ch = diff_states(&mut l, t(&after2, &later, &lib, &[], true));
        assert_eq!(ch[0].new[0].message, "not enough arguments");
    }
}
