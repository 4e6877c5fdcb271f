//! The integration suite of tools-vibe: real worker processes (the suite's own stand-in CLI,
//! `tests/fixtures/worker.py`) driven through a real registry.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
