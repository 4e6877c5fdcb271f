//! Wiring of each enabled family into a run's registry: one block per feature.

use std::sync::Arc;

use tools_core::{RegistryBuilder, Run, ToolError};

use crate::ToolboxOptions;

/// The families compiled in.
pub(crate) const COMPILED: &[&str] = &[
    // One line per family feature, in wiring order.
    #[cfg(feature = "fs")]
    "fs",
    #[cfg(feature = "vibe")]
    "vibe",
];

/// Adds every enabled family to `builder`. A family whose registration rule says no (no
/// worker CLIs configured, no question gate) adds nothing.
#[allow(unused_mut, unused_variables)]
pub(crate) fn wire(
    mut builder: RegistryBuilder,
    run: &Arc<Run>,
    opts: &ToolboxOptions,
) -> Result<RegistryBuilder, ToolError> {
    // One block per family feature (and a line in COMPILED above).
    #[cfg(feature = "fs")]
    {
        builder = builder.family(tools_fs::family(run));
    }
    #[cfg(feature = "vibe")]
    {
        if let Some(family) = tools_vibe::family(run)? {
            builder = builder.family(family);
        }
    }
    Ok(builder)
}
