//! Diagnostics that are settled before they are reported: what a write changed
//! (`observer`), what a change would change before it is written (`preview`), and a file's
//! diagnostics on request (`file_diagnostics`). Beneath them, shared by a write and a
//! preview: which server each changed file goes to (`grouping`), the settled state before a
//! change (`baseline`), what was found (`findings`) and the one rendering of it for a write
//! and a preview (`report`: a big break summarised per file in the order of `file_order`,
//! its full list kept for paging by `pages`); and beneath
//! those, waiting for a server to settle (`settle`), following publishes that are still
//! coming (`republish`), opening the files that depend on a written one (`dependents`: its
//! importers, and the users of the items it changed, `changed_items`), the
//! per-run ledger of what was already reported (`ledger`), the difference between two
//! settled states (`state_diff`), the writes still pending when their results were given,
//! whose late arrivals the next change names as theirs (`late`), and a check a writing tool
//! left running, whose findings lead the next answer (`deferred`).
//!
//! It promises that what it calls new was added by the write (the settled state after minus
//! the settled state before), and that a half-settled state is said to be pending, never
//! presented as final. It may use `servers`, `client`, `answer` and `error`; it never calls
//! a query or the rename.

mod alike;
mod baseline;
pub(crate) mod changed_items;
pub(crate) mod deferred;
pub(crate) mod dependents;
pub(crate) mod file_diagnostics;
mod file_order;
mod findings;
mod grouping;
mod late;
pub(crate) mod ledger;
pub mod observer;
pub(crate) mod pages;
pub(crate) mod preview;
mod report;
pub(crate) mod republish;
pub(crate) mod settle;
pub(crate) mod state_diff;
