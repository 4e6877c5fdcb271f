//! The suite's modules: the `tool()` bridge, Python and JavaScript cells, kernel lifecycle,
//! and their shared helpers.

mod bridge;
mod cancel;
mod common;
mod javascript;
mod lifecycle;
mod magics;
mod notebook;
mod python;
