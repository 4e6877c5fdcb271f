//! The `test` tool against the real runners on small fixture projects.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
