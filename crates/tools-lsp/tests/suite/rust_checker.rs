//! `diagnostics "*"` on a Cargo workspace: the checker goes past the first crate that
//! fails, so a break in two crates is reported for both. One build job (the project's own
//! `.cargo/config.toml`) makes the order fixed: without `--keep-going`, cargo would stop
//! at whichever failing crate it checks first and never start the other.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

#[tokio::test]
async fn a_break_in_two_crates_is_reported_for_both() {
    if require_binary("cargo", "cargo").is_none() {
        return;
    }
    let p = Project::from_fixture("cargo_ws", "");
    p.write(".cargo/config.toml", "[build]\njobs = 1\n");
    p.write(
        "crates/report/src/lib.rs",
        &p.read("crates/report/src/lib.rs").replace(
            "    out\n}",
            "    let _broken: u32 = \"report\";\n    out\n}",
        ),
    );
    p.write(
        "crates/units/Cargo.toml",
        "[package]\nname = \"units\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    p.write(
        "crates/units/src/lib.rs",
        "/// Broken on purpose.\npub fn unit() -> u32 {\n    \"units\"\n}\n",
    );
    let out = p.ok(json!({"action": "diagnostics", "file": "*"})).await;
    has(&out, "--keep-going");
    has(&out, "crates/report/src/lib.rs:11:");
    has(&out, "crates/units/src/lib.rs:3:");
    p.close_and_check().await;
}
