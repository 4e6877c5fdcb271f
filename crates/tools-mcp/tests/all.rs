//! tools-mcp's integration tests: one test binary, the suites in `suite/`.

// Test helpers outside #[test] functions may panic on setup failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
