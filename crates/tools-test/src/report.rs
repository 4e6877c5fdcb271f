//! What a test run found, whatever the runner: counts and one record per failure. Every
//! runner's reader ([`crate::read`]) produces this, so the answer is written once.

/// One failed test, or one build or collection error (counted as a failure: the tests
/// behind it did not run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Where it failed, `path:line` relative to the workspace root (the assertion or panic
    /// when the runner says where it was, else the test's own line); empty when unknown.
    pub location: String,
    /// The id `test run` accepts for it (for a build error, what failed to build).
    pub id: String,
    /// The assertion or panic message, on one line.
    pub message: String,
}

/// The outcome of one run of the runner.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed, plus build and collection errors.
    pub failed: usize,
    /// Tests skipped or ignored.
    pub skipped: usize,
    /// The failures, in the runner's order.
    pub failures: Vec<Failure>,
}

impl Report {
    /// Records a failure and counts it.
    pub fn fail(&mut self, location: String, id: String, message: String) {
        self.failed += 1;
        self.failures.push(Failure {
            location,
            id,
            message: one_line(&message),
        });
    }

    /// Whether the runner reported nothing at all (no test ran, nothing failed to build).
    pub fn is_empty(&self) -> bool {
        self.passed + self.failed + self.skipped == 0
    }
}

/// `text` on one line: lines joined with ` / `, blank lines dropped, cut at 300 characters.
pub fn one_line(text: &str) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ");
    tools_core::text::shorten(&joined, 300)
}
