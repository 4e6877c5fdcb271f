//! How fast a server that counts the files it has left to analyze gets through them
//! (pyright and basedpyright report "2073 files to analyze" as the progress of their
//! analysis), so a write can tell an analysis about to end from one that will run for
//! minutes (Django's first analysis) and not wait for the latter.

use std::time::{Duration, Instant};

/// How long an analysis must have been seen going before its pace is told: its first
/// reports come in a burst, before any file is done.
const PACE_SEEN_FOR: Duration = Duration::from_secs(1);

/// What the server has said of the files it has left to analyze in its current pass.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AnalysisPace {
    /// When the pass was first seen, and how many files it had left then.
    first: Option<(Instant, u64)>,
    /// How many it has left, as last reported.
    left: u64,
}

/// How far an analysis under way is, and how long it will take at its pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AnalysisEta {
    /// The files it has left to analyze.
    pub left: u64,
    /// How long those take at the pace seen so far: at least that long when no file was
    /// seen done (as though one were about to be).
    pub eta: Duration,
}

impl AnalysisPace {
    /// Notes a report of `left` files to analyze, made at `at`. A count larger than the last
    /// one begins a new pass (the server was given more to analyze): its pace is its own.
    pub(crate) fn note(&mut self, left: u64, at: Instant) {
        if self.first.is_none() || left > self.left {
            self.first = Some((at, left));
        }
        self.left = left;
    }

    /// How far the pass under way is at `now` and how long it will take, once it has been
    /// seen for [`PACE_SEEN_FOR`]; `None` before that or with no pass under way.
    pub(crate) fn eta(&self, now: Instant) -> Option<AnalysisEta> {
        let (since, at_first) = self.first?;
        let seen = now.saturating_duration_since(since);
        if seen < PACE_SEEN_FOR {
            return None;
        }
        let done = at_first.saturating_sub(self.left).max(1);
        let eta = seen.mul_f64(self.left as f64 / done as f64);
        Some(AnalysisEta {
            left: self.left,
            eta,
        })
    }
}

/// The count of files left in a progress message of pyright's analysis ("2073 files to
/// analyze", "1 file to analyze"); `None` for any other message.
pub(crate) fn files_left(message: &str) -> Option<u64> {
    let (count, rest) = message.trim().split_once(' ')?;
    match rest {
        "files to analyze" | "file to analyze" => count.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pyrights_count_of_files_to_analyze_is_read() {
        assert_eq!(files_left("2073 files to analyze"), Some(2073));
        assert_eq!(files_left("1 file to analyze"), Some(1));
        assert_eq!(files_left("Finding references"), None);
        assert_eq!(files_left("12/30"), None);
        assert_eq!(files_left("many files to analyze"), None);
    }

    #[test]
    fn the_pace_is_told_once_the_pass_was_seen_long_enough() {
        let t0 = Instant::now();
        let mut pace = AnalysisPace::default();
        assert_eq!(pace.eta(t0), None);
        pace.note(2000, t0);
        pace.note(1990, t0 + Duration::from_millis(500));
        assert_eq!(pace.eta(t0 + Duration::from_millis(900)), None);
        // 20 files in 2 s: the 1980 left take 198 s.
        pace.note(1980, t0 + Duration::from_secs(2));
        assert_eq!(
            pace.eta(t0 + Duration::from_secs(2)),
            Some(AnalysisEta {
                left: 1980,
                eta: Duration::from_secs(198)
            })
        );
        // Time goes on without a file done: the pace slows.
        assert_eq!(
            pace.eta(t0 + Duration::from_secs(4)).map(|e| e.eta),
            Some(Duration::from_secs(396))
        );
    }

    #[test]
    fn no_file_done_yet_is_a_pace_of_one_file_so_far_and_a_larger_count_starts_a_new_pass() {
        let t0 = Instant::now();
        let mut pace = AnalysisPace::default();
        pace.note(30, t0);
        assert_eq!(
            pace.eta(t0 + Duration::from_secs(2)),
            Some(AnalysisEta {
                left: 30,
                eta: Duration::from_secs(60)
            })
        );
        pace.note(40, t0 + Duration::from_secs(2));
        assert_eq!(pace.eta(t0 + Duration::from_secs(2)), None);
        assert_eq!(
            pace.eta(t0 + Duration::from_secs(3)),
            Some(AnalysisEta {
                left: 40,
                eta: Duration::from_secs(40)
            })
        );
    }
}
