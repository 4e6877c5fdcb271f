//! Suite modules.

mod front;
