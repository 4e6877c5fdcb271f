//! The `[debug]` section of `agent-tools.toml`. Every field has a default, so no file at all
//! is a working configuration.
//!
//! ```toml
//! [debug]
//! session_ttl_seconds = 1800   # hard TTL of one session
//! wait_seconds = 30            # how long launch / continue / steps wait for the next stop
//!
//! [debug.adapters.lldb]
//! command = ["lldb-dap-19"]    # replaces the candidate list
//! markers = ["Makefile"]       # replaces the root markers
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

/// The `[debug]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DebugConfig {
    /// `false` leaves the `debug` tool unregistered.
    pub enabled: bool,
    /// Hard TTL of a session in seconds (default 1800, 30 minutes).
    pub session_ttl_seconds: u64,
    /// Default bound, in seconds, on waiting for the next stop after launch, continue or a
    /// step (default 30); a call's `timeout_seconds` overrides it.
    pub wait_seconds: u64,
    /// Bound on one ordinary request (default 10 s). An adapter that does not answer in time
    /// is treated as hung: the session is cleared.
    pub request_timeout_seconds: u64,
    /// Bound on starting an adapter up to its `initialized` event (default 120 s: delve
    /// compiles the program first).
    pub startup_timeout_seconds: u64,
    /// Overrides of the adapter table, by adapter id (`debugpy`, `lldb`, `delve`, `dart`).
    pub adapters: BTreeMap<String, AdapterOverride>,
}

impl Default for DebugConfig {
    fn default() -> Self {
        DebugConfig {
            enabled: true,
            session_ttl_seconds: 30 * 60,
            wait_seconds: 30,
            request_timeout_seconds: 10,
            startup_timeout_seconds: 120,
            adapters: BTreeMap::new(),
        }
    }
}

/// An override of one adapter's entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdapterOverride {
    /// The command: program and arguments. For `debugpy` the program is the Python
    /// interpreter (`-m debugpy.adapter` is implied when no arguments are given); for `delve`
    /// the `--listen` flag is appended.
    pub command: Option<Vec<String>>,
    /// Root markers that make the adapter applicable.
    pub markers: Option<Vec<String>>,
}
