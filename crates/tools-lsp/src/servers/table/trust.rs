//! What an untrusted run changes in the server table, decided per entry by its
//! [`TrustNeed`]: entries whose server runs project code are restricted (rust-analyzer's
//! build scripts and proc macros off) or left out (a build tool's import), and servers that
//! would load the project's own TypeScript are pointed at one installed outside it.

use std::collections::BTreeMap;
use std::path::Path;

use super::{ServerSpec, TrustNeed, merge_json};

/// Entries whose server takes a TypeScript SDK folder (`typescript.tsdk`) in its
/// initialization options.
const TSDK_USERS: &[&str] = &["vue", "astro"];

/// Applies the trust rules to `table`.
pub(super) fn apply(table: &mut BTreeMap<String, ServerSpec>, trusted: bool) {
    let tsserver = super::sdk::global_tsserver();
    if !trusted {
        table.retain(|_, spec| spec.trust != TrustNeed::TrustedOnly);
        for spec in table.values_mut() {
            if let TrustNeed::Restricted {
                settings_section,
                off,
            } = spec.trust.clone()
            {
                restrict(spec, &settings_section, &off);
            }
        }
        if let Some(ts) = table.get_mut("typescript")
            && let Some(tsserver) = &tsserver
        {
            pin_tsserver(ts, tsserver);
        }
    }
    if let Some(eslint) = table.get_mut("eslint") {
        super::sdk::fill_eslint_node_path(eslint);
    }
    if let Some(angular) = table.get_mut("angular") {
        super::sdk::fill_angular_probes(angular);
    }
    // The Vue and Astro servers need a TypeScript to start at all; an untrusted run always
    // gets the one outside the project, a trusted run keeps what its configuration named.
    if let Some(lib) = tsserver.as_deref().and_then(Path::parent) {
        for name in TSDK_USERS {
            if let Some(spec) = table.get_mut(*name) {
                let named = spec
                    .initialization_options
                    .as_ref()
                    .is_some_and(|i| i["typescript"]["tsdk"].is_string());
                if !trusted || !named {
                    set_tsdk(spec, lib);
                }
            }
        }
    }
}

/// Merges `off` into the initialization options and the `section` of the settings.
pub(super) fn restrict(spec: &mut ServerSpec, section: &str, off: &serde_json::Value) {
    let mut init = spec
        .initialization_options
        .take()
        .unwrap_or_else(|| serde_json::json!({}));
    merge_json(&mut init, off);
    spec.initialization_options = Some(init);
    if !spec.settings.is_object() {
        spec.settings = serde_json::json!({});
    }
    let slot = &mut spec.settings[section];
    if !slot.is_object() {
        *slot = serde_json::json!({});
    }
    merge_json(slot, off);
}

/// typescript-language-server in an untrusted run: it would run the workspace's own
/// `node_modules/typescript/lib/tsserver.js` before anything else, so it is pointed at the
/// TypeScript installed outside the project.
pub(super) fn pin_tsserver(spec: &mut ServerSpec, tsserver: &Path) {
    let mut init = spec
        .initialization_options
        .take()
        .unwrap_or_else(|| serde_json::json!({}));
    merge_json(
        &mut init,
        &serde_json::json!({"tsserver": {"path": tsserver.display().to_string()}}),
    );
    spec.initialization_options = Some(init);
}

fn set_tsdk(spec: &mut ServerSpec, lib: &Path) {
    let mut init = spec
        .initialization_options
        .take()
        .unwrap_or_else(|| serde_json::json!({}));
    merge_json(
        &mut init,
        &serde_json::json!({"typescript": {"tsdk": lib.display().to_string()}}),
    );
    spec.initialization_options = Some(init);
}
