//! The tools-debug integration suite against real debug adapters (debugpy, lldb-dap,
//! delve), driven through a registry as a harness would.

// Test helpers outside #[test] functions may panic on setup failures; not every suite
// module uses every helper.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

mod suite;
