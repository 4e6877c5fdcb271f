//! A server that writes its file URIs its own way (every letter percent-encoded, as
//! `%61` for `a`) still names the right workspace file in every answer and in the
//! diagnostics ledger; a path written the Windows way on another system is a clear error.

use serde_json::json;

use super::Project;

fn encoded_uris_project() -> Project {
    Project::new(
        &[
            ("fake.toml", ""),
            ("a.fake", "use alpha\nbad call\n"),
            ("def.fake", "alpha\n"),
        ],
        &super::fake_server_config(
            "encoded-uris",
            "start_timeout_ms = 5000\nrequest_timeout_ms = 3000\n",
        ),
    )
}

#[tokio::test]
async fn definition_references_and_diagnostics_name_the_file_an_encoded_uri_names() {
    let p = encoded_uris_project();
    let def = p
        .ok(json!({"action": "definition", "file": "a.fake", "line": 1, "symbol": "alpha"}))
        .await;
    assert_eq!(
        def,
        "1 definition(s) of `alpha` at a.fake:1:\ndef.fake:1:1  alpha"
    );
    let refs = p
        .ok(json!({"action": "references", "file": "a.fake", "line": 1, "symbol": "alpha"}))
        .await;
    assert_eq!(
        refs,
        "2 reference(s) of `alpha` at a.fake:1:\na.fake:1:1  use alpha\ndef.fake:1:1  alpha"
    );
    let diags = p
        .ok(json!({"action": "diagnostics", "file": "a.fake"}))
        .await;
    // Published under the encoded URI, recorded for the file the agent asked about.
    assert_eq!(
        diags,
        "1 diagnostic(s) in a.fake:\na.fake:2:1 error error: bad call"
    );
}

/// (On Windows these are its own paths.)
#[cfg(not(windows))]
#[tokio::test]
async fn a_windows_path_on_this_system_is_a_clear_error() {
    use tools_core::{CallError, ToolError};
    let p = encoded_uris_project();
    let windows = "is a Windows path (a drive letter or a share); on this system name the file \
                   relative to the workspace, with `/` between names";
    for (given, why) in [
        (r"C:\w\a.fake", format!(r"`C:\w\a.fake` {windows}")),
        ("c:/w/a.fake", format!("`c:/w/a.fake` {windows}")),
        (r"\\server\share\a.fake", format!(r"`\\server\share\a.fake` {windows}")),
        (
            r"sub\a.fake",
            r"`sub\a.fake` has backslashes, which separate names only on Windows; on this system write `sub/a.fake`"
                .to_string(),
        ),
    ] {
        let e = p
            .err(json!({"action": "definition", "file": given, "line": 1, "symbol": "alpha"}))
            .await;
        let CallError::Tool(e) = e else {
            panic!("expected a tool error, got {e}")
        };
        assert!(matches!(e, ToolError::InvalidArguments { .. }), "{e:?}");
        assert_eq!(e.to_string(), format!("invalid arguments (`path`): {why}"));
    }
}
