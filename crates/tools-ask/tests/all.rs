//! The tools-ask integration suite: the gates through a registry, a real pseudo-terminal,
//! and the permission gate.

mod suite;
