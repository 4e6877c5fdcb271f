//! Suite modules.

mod front;
mod routed;
