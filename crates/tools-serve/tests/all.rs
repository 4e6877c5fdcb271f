//! The tools-serve integration suite: a bound server on a loopback port, spoken to over
//! plain HTTP/1.1 as any client would, with runs that wire no tool family (the HTTP front
//! is what is under test; the end-to-end suite drives full runs through the MCP SDK).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
