//! Install stamps: an installer of `cargo xtask setup` runs again only when what it installs
//! changed. Setup's installers and the real-projects fetch share it, so it sits below both.

use crate::{Result, tools_dir};

/// Runs `step` unless its inputs are unchanged since it last succeeded (its stamp file in
/// `.tools` says so); answers whether it was up to date.
pub fn stamped(name: &str, inputs: &[String], step: impl FnOnce() -> Result) -> Result<bool> {
    let stamp = tools_dir().join(format!("stamp-{name}"));
    let want = inputs.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        eprintln!("xtask: {name} is up to date");
        return Ok(true);
    }
    step()?;
    std::fs::write(&stamp, want).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(false)
}
