//! Which server serves a file, and keeping it running: the built-in server table and the
//! `[lsp]` configuration that overrides and extends it (`table`, `config`), install recipes
//! and their acquisition into the user's cache (`recipe`, `acquire`, `first_need`), finding
//! a file's language and its project root (`discover`, `roots`), opening one file of every
//! project before a workspace-wide question (`projects`), the TypeScript projects beside a
//! server's root that import its files (`sibling_projects`, read through `js_specifiers`), and
//! the Python files a narrowed pyright program leaves out (`python_program`), whether a
//! diagnostics-only companion is wanted (`companion_config`), what an untrusted run keeps a
//! server from seeing (`trust_limits`), the tsserver that reads single-file components
//! (`framework_tsserver`), the server that stands in for a file's own when that one lacks a
//! request (`stand_in`), per-server state folders (`state_dir`), the servers that start with
//! a trusted run (`run_start`), and the supervisor that starts one client per (language,
//! root), restarts it after a crash and shuts it down with the run (`supervisor`), or takes
//! it from a pool of servers shared by the runs of one process (`pool`).
//!
//! It promises that a server runs only where a root marker exists and its binary resolves,
//! and that nothing a repository says can make it install a package.
//!
//! It may use `client` (to start servers), `answer` and `error`; nothing that answers a
//! query or observes a write.

pub mod acquire;
pub(crate) mod companion_config;
pub mod config;
pub(crate) mod discover;
mod first_need;
pub(crate) mod framework_tsserver;
pub(crate) mod java_runtime;
pub(crate) mod js_specifiers;
pub mod pool;
pub(crate) mod projects;
pub(crate) mod python_imports;
pub(crate) mod python_program;
pub mod recipe;
pub(crate) mod roots;
pub(crate) mod run_start;
pub(crate) mod sibling_projects;
pub(crate) mod stand_in;
pub(crate) mod state_dir;
pub(crate) mod supervisor;
pub(crate) mod table;
pub(crate) mod trust_limits;
