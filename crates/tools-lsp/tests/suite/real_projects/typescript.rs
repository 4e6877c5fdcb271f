//! zod 4.1.12 from npm (its tarball ships the TypeScript sources and tests) through
//! typescript-language-server: the v3 API's sources as their own TypeScript project, a
//! definition across modules, a breaking change of the error-map getter that two other
//! modules call, and a rename of it after which `tsc` over the sources is still clean and
//! zod's own v3 tests (545 of them, vitest, offline) still pass.
//!
//! The tarball has no `tsconfig.json` or vitest configuration (the repository keeps them
//! beside the package): the case writes the two settings the sources need, as the
//! repository's own do — module resolution `nodenext` with the `@zod/source` condition, so
//! the tests' `import * as z from "zod/v3"` reaches `src/v3/index.ts`.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{copy_of, definition, has_line, run_in};
use crate::suite::section;

const ZOD: &str = "npm:zod@4.1.12";

/// Waits sized for a whole project's first analysis on a busy two-core machine.
const CONFIG: &str =
    "[lsp]\ndiagnostics_wait_ms = 60000\nindex_wait_ms = 60000\nrequest_timeout_ms = 120000\n";

/// The v3 sources as one project; its tests and benchmarks need vitest's, Node's and the
/// benchmark package's types, which the tarball does not bring, and run through vitest.
const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "target": "es2020",
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "customConditions": ["@zod/source"],
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true,
    "types": []
  },
  "include": ["src/v3"],
  "exclude": ["src/v3/benchmarks", "src/v3/tests"]
}
"#;

const VITEST_CONFIG: &str = r#"export default {
  resolve: { conditions: ["@zod/source"] },
  ssr: { resolve: { conditions: ["@zod/source"], externalConditions: ["@zod/source"] } },
  test: { watch: false, include: ["src/v3/tests/**/*.test.ts"] },
};
"#;

const ERRORS: &str = "src/v3/errors.ts";
const GETTER: &str = "export function getErrorMap() {";

#[tokio::test]
async fn zod_definition_breaking_write_and_rename_keep_tsc_and_its_tests_green() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none()
        || require_binary("typescript", "tsc").is_none()
        || require_binary("vitest", "vitest").is_none()
    {
        return;
    }
    let p = copy_of(ZOD, CONFIG).unwrap_or_else(|e| panic!("{e}"));
    p.write("tsconfig.json", TSCONFIG);
    p.write("vitest.config.mjs", VITEST_CONFIG);
    // Navigation: the issue builder's call of the getter leads to its definition.
    let out = definition(&p, "src/v3/helpers/parseUtil.ts", 73, "getErrorMap").await;
    has_line(
        &out,
        "src/v3/errors.ts:11:17  export function getErrorMap() {",
    );

    // A breaking write: a required parameter; the callers in two other modules are named,
    // and writing the original back reports them gone.
    let original = p.read(ERRORS);
    assert!(original.contains(GETTER), "zod 4.1.12's {ERRORS} changed");
    let broken = original.replacen(GETTER, "export function getErrorMap(locale: string) {", 1);
    let s = section(p.write_tool(ERRORS, &broken).await);
    // What the write reports is exactly what tsc adds over the project (it had nothing).
    let expected = tsc_errors(&p);
    assert_eq!(
        expected,
        [
            "src/v3/helpers/parseUtil.ts:73:23 error [2554] Expected 1 arguments, but got 0.",
            "src/v3/types.ts:3837:72 error [2554] Expected 1 arguments, but got 0.",
            "src/v3/types.ts:3851:72 error [2554] Expected 1 arguments, but got 0.",
        ],
        "tsc over the broken tree"
    );
    let listed: Vec<&str> = s.lines().collect();
    assert_eq!(
        listed[..],
        ["3 new diagnostic(s) after this write:"]
            .into_iter()
            .chain(expected.iter().map(String::as_str))
            .collect::<Vec<_>>()[..],
        "the breaking write's diagnostics"
    );
    let s = section(p.write_tool(ERRORS, &original).await);
    has_line(&s, "3 earlier diagnostic(s) are gone after this write:");
    has_line(
        &s,
        "  src/v3/helpers/parseUtil.ts:73 error [2554] Expected 1 arguments, but got 0.",
    );

    // A rename across the three modules; then tsc and zod's own v3 tests on the result.
    // The check may go on after the answer: its findings come with the next call's.
    let (_, text) = p
        .rename_checked(json!({"file": ERRORS, "line": 11, "symbol": "getErrorMap", "new_name": "currentErrorMap"}))
        .await;
    has_line(
        &text,
        "renamed `getErrorMap` at src/v3/errors.ts:11 to `currentErrorMap`: 6 edit(s) in 3 file(s)",
    );
    for file in [
        "  src/v3/errors.ts: 1 edit(s)",
        "  src/v3/helpers/parseUtil.ts: 2 edit(s)",
        "  src/v3/types.ts: 3 edit(s)",
    ] {
        has_line(&text, file);
    }
    // (v4's compatibility layer has a getErrorMap of its own, which stays.)
    let left = super::files_mentioning(&p.root().join("src/v3"), "getErrorMap");
    assert!(left.is_empty(), "`getErrorMap` is left in {left:?}");
    let after = tsc_errors(&p);
    assert!(after.is_empty(), "tsc after the rename: {after:?}");
    let tests = run_in(
        &p,
        "vitest",
        &["run", "--reporter=dot"],
        &[("CI", "true"), ("NO_COLOR", "1")],
    )
    .unwrap_or_else(|e| panic!("zod's tests after the rename: {e}"));
    let counts: Vec<&str> = tests
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("Test Files ") || l.starts_with("Tests "))
        .collect();
    assert_eq!(
        counts,
        ["Test Files  59 passed (59)", "Tests  545 passed (545)"],
        "zod's tests after the rename: {tests}"
    );
    p.close_and_check().await;
}

/// The errors `tsc -p .` reports over the copy, each as the tool writes a diagnostic line
/// (`path:line:col error [code] message`), so the two can be compared whole.
fn tsc_errors(p: &super::Project) -> Vec<String> {
    // tsc exits non-zero when it reports errors: what it printed is the answer either way.
    let out = std::process::Command::new("tsc")
        .args(["-p", ".", "--pretty", "false"])
        .current_dir(p.root())
        .output()
        .unwrap_or_else(|e| panic!("cannot run tsc: {e}"));
    let out = String::from_utf8_lossy(&out.stdout);
    out.lines()
        .filter_map(|l| {
            let (place, rest) = l.split_once("): error TS")?;
            let (path, at) = place.split_once('(')?;
            let (code, message) = rest.split_once(": ")?;
            Some(format!(
                "{path}:{} error [{code}] {message}",
                at.replace(',', ":")
            ))
        })
        .collect()
}
