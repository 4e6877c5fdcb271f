//! `cargo xtask setup | test | bench`.
fn main() {}
