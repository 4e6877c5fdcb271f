//! The tools-ast integration suite: the three tools driven through a real registry over real
//! files, and the ast-grep CLI as the cross-check peer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
