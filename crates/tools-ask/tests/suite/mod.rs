//! The suite's modules, one per gate or concern: approval, the channel gate, MCP elicitation,
//! the terminal card (on Unix, where pseudo-terminals exist), and their shared helpers.

mod approve;
mod channel;
mod elicitation;
#[cfg(unix)]
mod pty;
mod support;
#[cfg(unix)]
mod terminal;
