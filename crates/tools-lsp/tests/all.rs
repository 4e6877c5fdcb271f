//! The integration suite of tools-lsp: real language servers, really started.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]
mod suite;
