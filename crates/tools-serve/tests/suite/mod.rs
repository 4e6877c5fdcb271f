//! Suite modules.

mod front;
mod routed;
mod status;
