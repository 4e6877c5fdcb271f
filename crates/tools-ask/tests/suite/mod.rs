//! The suite's modules, one per gate or concern: approval, the channel gate, MCP elicitation,
//! the terminal card, and their shared helpers.

mod approve;
mod channel;
mod elicitation;
mod support;
mod terminal;
