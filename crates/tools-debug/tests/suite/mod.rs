//! The integration suite: every test drives a real debug adapter through the `debug` tool,
//! via the registry as a harness would.

mod breakpoint_life;
mod budget;
mod common;
mod delve;
mod lldb;
mod python;
mod rules;
