//! What every answer shares, whichever tool gives it: how a path, a range, a diagnostic, a
//! hover or a symbol is printed (`format`), and the byte budget a list is cut to with the
//! line that says how to get the rest (`budget`).
//!
//! Below everything that answers (servers' status, checkers, diagnostics on write, queries,
//! rename), above the client: it may use `client` (positions, URIs) and `error`, nothing else
//! of this crate.

pub(crate) mod budget;
pub(crate) mod format;
