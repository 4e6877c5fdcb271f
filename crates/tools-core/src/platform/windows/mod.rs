//! The Windows side of the platform layer.

pub(crate) mod child_channel;
pub(crate) mod fs;
pub(crate) mod jail;
pub(crate) mod local_socket;
pub(crate) mod memory;
pub(crate) mod process;
pub(crate) mod procs;
pub(crate) mod stop;
pub(crate) mod terminal;
pub(crate) mod tree_memory;
