//! rust-analyzer's own answer to "which tests relate to this item": its
//! `rust-analyzer/relatedTests` extension, each test a runnable with its location and the
//! arguments cargo takes to run it alone.

use lsp_types::request::Request;
use lsp_types::{LocationLink, TextDocumentPositionParams};
use serde::{Deserialize, Serialize};
use tools_core::{RelatedTest, ToolError};

use crate::client::uri_to_path;
use crate::queries::locate::tdpp;
use crate::queries::query::Prepared;

/// `rust-analyzer/relatedTests`.
#[derive(Debug)]
pub enum RelatedTests {}
impl Request for RelatedTests {
    type Params = TextDocumentPositionParams;
    type Result = Vec<TestInfo>;
    const METHOD: &'static str = "rust-analyzer/relatedTests";
}

/// One related test.
#[derive(Debug, Serialize, Deserialize)]
pub struct TestInfo {
    /// How to run it.
    pub runnable: Runnable,
}

/// A runnable as rust-analyzer describes it (the parts read here).
#[derive(Debug, Serialize, Deserialize)]
pub struct Runnable {
    /// `test tests::adds`.
    #[serde(default)]
    pub label: String,
    /// Where the test is.
    pub location: Option<LocationLink>,
    /// Cargo's arguments, for a `cargo` runnable.
    #[serde(default)]
    pub args: CargoArgs,
}

/// The arguments of a `cargo` runnable (a `shell` one has none of these).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CargoArgs {
    /// `["test", "--package", "calc", "--lib"]`.
    #[serde(default)]
    pub cargo_args: Vec<String>,
    /// `["tests::adds", "--exact", …]`: the test's libtest name first.
    #[serde(default)]
    pub executable_args: Vec<String>,
}

/// The tests rust-analyzer relates to the item at `p`, each with its location and libtest
/// name; a runnable that is not a single test (a module, a doctest) is left out.
pub(crate) async fn related_tests(p: &Prepared) -> Result<Vec<RelatedTest>, ToolError> {
    let found = p.client.request::<RelatedTests>(tdpp(p)).await?;
    let mut out: Vec<RelatedTest> = found
        .into_iter()
        .filter_map(|t| {
            let r = t.runnable;
            if !r.label.starts_with("test ")
                || r.args.cargo_args.first().map(String::as_str) != Some("test")
            {
                return None;
            }
            let name = r.args.executable_args.first()?.clone();
            let at = r.location?;
            Some(RelatedTest {
                path: uri_to_path(&at.target_uri)?,
                line: at.target_selection_range.start.line as usize + 1,
                name,
            })
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cargo_test_runnable_reads_as_its_libtest_name_and_place() {
        let answer = serde_json::json!([
            {"runnable": {"label": "test tests::adds", "kind": "cargo",
              "location": {"targetUri": "file:///w/src/lib.rs",
                "targetRange": {"start": {"line": 9, "character": 4}, "end": {"line": 12, "character": 5}},
                "targetSelectionRange": {"start": {"line": 10, "character": 7}, "end": {"line": 10, "character": 11}}},
              "args": {"workspaceRoot": "/w", "cwd": "/w", "cargoArgs": ["test", "--package", "calc", "--lib"],
                "executableArgs": ["tests::adds", "--exact", "--show-output"]}}},
            {"runnable": {"label": "doctest add", "kind": "cargo", "location": null,
              "args": {"cwd": "/w", "cargoArgs": ["test", "--doc"], "executableArgs": ["add"]}}}
        ]);
        let parsed: Vec<TestInfo> = serde_json::from_value(answer).unwrap();
        assert_eq!(parsed.len(), 2);
        let first = &parsed[0].runnable;
        assert_eq!(first.args.executable_args[0], "tests::adds");
        assert_eq!(
            first
                .location
                .as_ref()
                .unwrap()
                .target_selection_range
                .start
                .line,
            10
        );
        assert_eq!(parsed[1].runnable.label, "doctest add");
    }
}
