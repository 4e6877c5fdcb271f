//! The project's own checkers, the ground truth `diagnostics "*"` reports: the configured
//! or built-in checker command per language (`checker`), parsed into findings, and for C and
//! C++ a `-fsyntax-only` pass over the compile commands the project declares (`c_checker`,
//! `compile_db`), configured through CMake into a private folder when none exist
//! (`cmake_configure`). Beneath them: a checker's output read back into findings
//! (`findings`) and a compile run for its stderr (`capture`).
//!
//! It promises bounded runs (a timeout, capped output and findings) in trusted runs only.
//! It may use `servers` (which languages and roots the workspace has), `answer` and `error`;
//! nothing that answers a query or observes a write.

pub(crate) mod c_checker;
mod capture;
pub(crate) mod checker;
pub(crate) mod cmake_configure;
pub(crate) mod compile_db;
pub(crate) mod findings;
