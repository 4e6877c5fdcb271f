//! What a server says of the work it has under way (`$/progress` begin and report: title,
//! message, percentage), so an answer given while it indexes can say how far it is.

use std::collections::HashMap;
use std::sync::Mutex;

use lsp_types::WorkDoneProgress;

impl super::LspClient {
    /// The work the server reports under way, in words (`indexing 45% (12/30)`), `None`
    /// when it reports none.
    pub fn indexing_progress(&self) -> Option<String> {
        self.shared.board.describe()
    }
}

/// One piece of work under way, as last reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Work {
    title: String,
    message: Option<String>,
    percentage: Option<u32>,
}

/// The work under way, by progress token.
#[derive(Debug, Default)]
pub(crate) struct ProgressBoard {
    works: Mutex<HashMap<String, Work>>,
}

impl ProgressBoard {
    /// Records one `$/progress` notification of `token`.
    pub(crate) fn record(&self, token: &str, progress: &WorkDoneProgress) {
        let Ok(mut works) = self.works.lock() else {
            return;
        };
        match progress {
            WorkDoneProgress::Begin(b) => {
                works.insert(
                    token.to_string(),
                    Work {
                        title: b.title.clone(),
                        message: b.message.clone(),
                        percentage: b.percentage,
                    },
                );
            }
            WorkDoneProgress::Report(r) => {
                let w = works.entry(token.to_string()).or_default();
                if r.message.is_some() {
                    w.message = r.message.clone();
                }
                if r.percentage.is_some() {
                    w.percentage = r.percentage;
                }
            }
            WorkDoneProgress::End(_) => {
                works.remove(token);
            }
        }
    }

    /// The work under way in words (`indexing 45% (12/30)`; several joined by `; `), `None`
    /// when nothing is reported under way.
    pub(crate) fn describe(&self) -> Option<String> {
        let works = self.works.lock().ok()?;
        let mut parts: Vec<String> = works
            .values()
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
}
