//! The per-run diagnostics ledger: what the agent has already been told.
//!
//! Keyed by (severity, code, message) as the spec says — position is deliberately left out,
//! so a diagnostic that merely moved down a few lines is not reported again. Only errors and
//! warnings take part; hints and infos are noise after a write.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use lsp_types::{Diagnostic, DiagnosticSeverity};

use crate::answer::format::{diagnostic_code, severity_name};

/// The ledger's key: severity, code and message — never the position.
pub type LedgerKey = (String, String, String);

/// The key of a diagnostic.
pub fn ledger_key(d: &Diagnostic) -> LedgerKey {
    (
        severity_name(d.severity).to_string(),
        diagnostic_code(d).unwrap_or_default(),
        d.message.trim().to_string(),
    )
}

/// Whether a diagnostic takes part (errors, warnings and unspecified severity).
pub fn counts(d: &Diagnostic) -> bool {
    matches!(
        d.severity,
        None | Some(DiagnosticSeverity::ERROR) | Some(DiagnosticSeverity::WARNING)
    )
}

/// What a run has already been told, and what each file currently has.
#[derive(Debug, Default, Clone)]
pub struct DiagnosticsLedger {
    reported: HashSet<LedgerKey>,
    current: HashMap<PathBuf, HashSet<LedgerKey>>,
    /// What each file had when the run first saw it, occurrences per key: what the project
    /// already had wrong before any change of this run.
    first_seen: HashMap<PathBuf, HashMap<LedgerKey, usize>>,
    /// What a change hid (no longer reported while its new errors stood), occurrences per
    /// key: old, not new, when it comes back.
    hidden: HashMap<PathBuf, HashMap<LedgerKey, usize>>,
}

/// The ledger's verdict on one file's fresh diagnostics.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LedgerUpdate {
    /// Indexes (into the given list) of the diagnostics to report.
    pub new: Vec<usize>,
    /// How many keys this file had before and no longer has.
    pub gone: usize,
}

impl DiagnosticsLedger {
    /// Records what `path` had before a write without reporting it (the state the agent
    /// started from).
    #[cfg(test)]
    pub fn seed(&mut self, path: &Path, diags: &[Diagnostic]) {
        if self.current.contains_key(path) {
            return;
        }
        let keys: HashSet<LedgerKey> = diags.iter().filter(|d| counts(d)).map(ledger_key).collect();
        self.reported.extend(keys.iter().cloned());
        self.current.insert(path.to_path_buf(), keys);
    }

    /// Records `path`'s diagnostics as what it has now, without reporting any of them: a
    /// file observed for the first time (its existing diagnostics are not news).
    pub fn baseline(&mut self, path: &Path, diags: &[Diagnostic]) {
        let keys: HashSet<LedgerKey> = diags.iter().filter(|d| counts(d)).map(ledger_key).collect();
        self.reported.extend(keys.iter().cloned());
        self.current.insert(path.to_path_buf(), keys);
    }

    /// The keys reported and still present, as of now (to judge one write's changes
    /// against the ledger as it was before that write).
    pub fn known(&self) -> HashSet<LedgerKey> {
        self.reported.clone()
    }

    /// Records `diags` as what `path` had when the run first saw it, unless it saw it
    /// before.
    pub fn first_seen(&mut self, path: &Path, diags: &[Diagnostic]) {
        if self.first_seen.contains_key(path) {
            return;
        }
        let mut keys: HashMap<LedgerKey, usize> = HashMap::new();
        for d in diags.iter().filter(|d| counts(d)) {
            *keys.entry(ledger_key(d)).or_default() += 1;
        }
        self.first_seen.insert(path.to_path_buf(), keys);
    }

    /// How many occurrences of `key` `path` had when the run first saw it.
    pub fn first_seen_count(&self, path: &Path, key: &LedgerKey) -> usize {
        self.first_seen
            .get(path)
            .and_then(|k| k.get(key))
            .copied()
            .unwrap_or(0)
    }

    /// Records `diags` as hidden in `path`: no longer reported while a change's new errors
    /// stand, not fixed.
    pub fn hide(&mut self, path: &Path, diags: &[Diagnostic]) {
        let keys = self.hidden.entry(path.to_path_buf()).or_default();
        for d in diags.iter().filter(|d| counts(d)) {
            *keys.entry(ledger_key(d)).or_default() += 1;
        }
    }

    /// How many occurrences of `key` are hidden in `path`.
    pub fn hidden_count(&self, path: &Path, key: &LedgerKey) -> usize {
        self.hidden
            .get(path)
            .and_then(|k| k.get(key))
            .copied()
            .unwrap_or(0)
    }

    /// One hidden occurrence of `key` in `path` came back.
    pub fn unhide(&mut self, path: &Path, key: &LedgerKey) {
        if let Some(n) = self.hidden.get_mut(path).and_then(|k| k.get_mut(key)) {
            *n = n.saturating_sub(1);
        }
    }

    /// Takes `path`'s fresh diagnostics: returns those whose key was never reported (and
    /// records them) and how many earlier keys of this file are gone. A key that is gone
    /// from every file is forgotten, so if it comes back it is news again.
    pub fn update(&mut self, path: &Path, diags: &[Diagnostic]) -> LedgerUpdate {
        let mut new = Vec::new();
        let mut keys = HashSet::new();
        for (i, d) in diags.iter().enumerate() {
            if !counts(d) {
                continue;
            }
            let k = ledger_key(d);
            if !self.reported.contains(&k) && !keys.contains(&k) {
                new.push(i);
            }
            keys.insert(k);
        }
        let before = self
            .current
            .insert(path.to_path_buf(), keys.clone())
            .unwrap_or_default();
        let gone_keys: Vec<LedgerKey> = before.difference(&keys).cloned().collect();
        self.reported.extend(keys);
        for k in &gone_keys {
            if !self.current.values().any(|s| s.contains(k)) {
                self.reported.remove(k);
            }
        }
        LedgerUpdate {
            new,
            gone: gone_keys.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{NumberOrString, Position, Range};

    fn diag(line: u32, sev: DiagnosticSeverity, code: &str, msg: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 0), Position::new(line, 1)),
            severity: Some(sev),
            code: Some(NumberOrString::String(code.into())),
            message: msg.into(),
            ..Default::default()
        }
    }

    #[test]
    fn moved_diagnostics_are_not_new_and_gone_ones_are_counted() {
        let mut l = DiagnosticsLedger::default();
        let p = Path::new("/w/a.py");
        let e = |line| diag(line, DiagnosticSeverity::ERROR, "undef", "x is not defined");
        assert_eq!(l.update(p, &[e(2)]).new, vec![0]);
        // moved four lines down: not new
        assert_eq!(
            l.update(p, &[e(6)]),
            LedgerUpdate {
                new: vec![],
                gone: 0
            }
        );
        // a different error: only that one
        let other = diag(1, DiagnosticSeverity::ERROR, "undef", "y is not defined");
        assert_eq!(l.update(p, &[e(6), other.clone()]).new, vec![1]);
        // hints do not count
        let hint = diag(1, DiagnosticSeverity::HINT, "unused", "z unused");
        assert_eq!(
            l.update(p, &[e(6), other.clone(), hint]).new,
            Vec::<usize>::new()
        );
        // fixed: nothing new, two gone
        assert_eq!(
            l.update(p, &[]),
            LedgerUpdate {
                new: vec![],
                gone: 2
            }
        );
        // it comes back: news again
        assert_eq!(l.update(p, &[e(3)]).new, vec![0]);
        // seeding records without reporting
        let q = Path::new("/w/b.py");
        l.seed(
            q,
            &[diag(0, DiagnosticSeverity::WARNING, "w", "old warning")],
        );
        assert!(
            l.update(
                q,
                &[diag(5, DiagnosticSeverity::WARNING, "w", "old warning")]
            )
            .new
            .is_empty()
        );
    }
}
