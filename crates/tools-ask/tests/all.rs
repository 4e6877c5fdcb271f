//! The tools-ask integration suite: the gates through a registry, a real pseudo-terminal,
//! and the permission gate.

// Test helpers outside #[test] functions may panic on setup failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
