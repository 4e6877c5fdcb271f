//! Integration tests of the `eval` tool against real Python and Node.js interpreters.

// Test helpers outside #[test] functions may panic on setup failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
