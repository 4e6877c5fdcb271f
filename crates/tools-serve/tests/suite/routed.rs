//! Serving behind a router that drops `Authorization` (agent-sandbox's sandbox-router), on a
//! pod that holds one session: the credential header, readiness at the session limit, and
//! the checkout of the first session's repository into an empty root.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

use tools_serve::{AuthSettings, CheckoutSettings, ServeOptions, ServedWorkspace};

use super::front::{INIT, empty_runs, exchange, mcp_post, start_with as start};

const TOKEN: &str = "the-static-token-0123";

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

async fn init(addr: SocketAddr, extra: &[(&str, &str)]) -> (u16, String, String) {
    let mut headers = mcp_post();
    headers.extend_from_slice(extra);
    exchange(addr, "POST", "/mcp", &headers, INIT).await
}

#[tokio::test]
async fn a_credential_header_stands_in_for_the_authorization_a_router_drops() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, _stop) = start(dir.path(), |o| {
        o.auth = AuthSettings {
            static_token: Some(TOKEN.into()),
            oauth: None,
        };
        o.credential_header = Some("X-Agent-Tools-Authorization".into());
    })
    .await;
    let (status, head, body) = init(addr, &[]).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        json(&body)["error_description"],
        "no access token: send `x-agent-tools-authorization: Bearer <token>` (or \
         `Authorization: Bearer <token>` where nothing in between drops it)"
    );
    assert!(
        head.contains("www-authenticate: bearer error=\"invalid_request\""),
        "{head}"
    );
    let (status, _, body) = init(
        addr,
        &[("X-Agent-Tools-Authorization", "Bearer not-the-token-at-all")],
    )
    .await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        json(&body)["error_description"],
        "the bearer token does not match this server's token"
    );
    let bearer = format!("Bearer {TOKEN}");
    for value in [bearer.as_str(), TOKEN] {
        let (status, head, body) = init(addr, &[("X-Agent-Tools-Authorization", value)]).await;
        assert_eq!(status, 200, "{value}: {body}");
        assert!(head.contains("mcp-session-id:"), "{head}");
    }
    // A scraper that reaches the pod directly still sends Authorization.
    let (status, _, body) =
        exchange(addr, "GET", "/metrics", &[("Authorization", &bearer)], "").await;
    assert_eq!(status, 200, "{body}");
    let (status, _, _) = exchange(
        addr,
        "GET",
        "/metrics",
        &[("X-Agent-Tools-Authorization", TOKEN)],
        "",
    )
    .await;
    assert_eq!(status, 200);
    let (status, _, _) = exchange(addr, "GET", "/metrics", &[], "").await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_bad_credential_header_name_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    for (name, why) in [
        ("Authorization", "is read anyway"),
        ("bad header", "is not a valid HTTP header name"),
    ] {
        let mut opts = ServeOptions::new(
            "127.0.0.1:0".parse().unwrap(),
            vec![ServedWorkspace {
                name: None,
                root: dir.path().into(),
                trusted: false,
            }],
            empty_runs(),
        );
        opts.credential_header = Some(name.into());
        let err = tools_serve::bind(opts).await.err().unwrap().to_string();
        assert!(err.contains(why), "{name}: {err}");
    }
}

#[tokio::test]
async fn a_checkout_needs_the_one_workspace_of_root() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ServeOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        vec![ServedWorkspace {
            name: Some("app".into()),
            root: dir.path().into(),
            trusted: false,
        }],
        empty_runs(),
    );
    opts.checkout = Some(CheckoutSettings {
        allowed_prefixes: vec!["https://git.example.com/team/".into()],
        credential_file: None,
    });
    let err = tools_serve::bind(opts).await.err().unwrap().to_string();
    assert!(
        err.contains("checks out into the one workspace served with --root"),
        "{err}"
    );
}

#[tokio::test]
async fn a_pod_holding_its_one_session_stays_ready_and_stops_accepting() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, _stop) = start(dir.path(), |o| o.max_sessions = 1).await;
    let probe = |path: &'static str| async move {
        let (status, _, body) = exchange(addr, "GET", path, &[], "").await;
        (status, body.trim().to_string())
    };
    assert_eq!(probe("/readyz").await, (200, "ready".into()));
    assert_eq!(
        probe("/accepting").await,
        (200, "accepting sessions".into())
    );
    let (status, _, body) = init(addr, &[]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(probe("/readyz").await, (200, "ready".into()));
    assert_eq!(
        probe("/accepting").await,
        (503, "at the session limit".into())
    );
    assert_eq!(probe("/healthz").await, (200, "ok".into()));
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.test")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.test")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository with `main` (app.py: v1) and `feature` (app.py: v2).
fn source_repository(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "--quiet", "-b", "main"]);
    std::fs::write(dir.join("app.py"), "VERSION = 1\n").unwrap();
    git(dir, &["add", "app.py"]);
    git(dir, &["commit", "--quiet", "-m", "v1"]);
    git(dir, &["checkout", "--quiet", "-b", "feature"]);
    std::fs::write(dir.join("app.py"), "VERSION = 2\n").unwrap();
    git(dir, &["commit", "--quiet", "-am", "v2"]);
    git(dir, &["checkout", "--quiet", "main"]);
}

#[tokio::test]
async fn the_first_session_checks_out_its_repository_and_ref_before_it_is_served() {
    let sources = tempfile::tempdir().unwrap();
    source_repository(&sources.path().join("app"));
    let workspace = tempfile::tempdir().unwrap();
    let prefix = format!("file://{}/", sources.path().display());
    let app = format!("{prefix}app");
    let (addr, _stop) = start(workspace.path(), |o| {
        o.checkout = Some(CheckoutSettings {
            allowed_prefixes: vec![prefix.clone()],
            credential_file: None,
        });
    })
    .await;
    let message = |body: &str| json(body)["error"]["message"].as_str().unwrap().to_string();

    let (status, _, body) = init(addr, &[]).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        message(&body),
        "this server checks out the session's repository before serving it: send \
         `X-Agent-Tools-Repository: URL` and `X-Agent-Tools-Ref: BRANCH, TAG or COMMIT` with \
         the initialize request"
    );
    let (status, _, body) = init(
        addr,
        &[("X-Agent-Tools-Repository", "file:///elsewhere/app")],
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        message(&body),
        format!(
            "X-Agent-Tools-Repository `file:///elsewhere/app` is not under a prefix this \
             server may fetch from ({prefix})"
        )
    );
    // A fetch that fails leaves the root empty for the next attempt.
    let missing = format!("{prefix}missing");
    let (status, _, body) = init(
        addr,
        &[
            ("X-Agent-Tools-Repository", &missing),
            ("X-Agent-Tools-Ref", "main"),
        ],
    )
    .await;
    assert_eq!(status, 502, "{body}");
    assert!(
        message(&body).starts_with(&format!(
            "could not fetch main from {missing}: git fetch failed"
        )),
        "{body}"
    );
    assert_eq!(std::fs::read_dir(workspace.path()).unwrap().count(), 0);

    let (status, head, body) = init(
        addr,
        &[
            ("X-Agent-Tools-Repository", &app),
            ("X-Agent-Tools-Ref", "feature"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("mcp-session-id:"), "{head}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("app.py")).unwrap(),
        "VERSION = 2\n"
    );
    assert_eq!(
        git(workspace.path(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "feature"
    );
    assert_eq!(
        git(workspace.path(), &["config", "--get", "remote.origin.url"]),
        app
    );

    // Later sessions of the same pod: the same repository (or none named) is served as it
    // is; another is refused.
    let (status, _, body) = init(addr, &[]).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = init(addr, &[("X-Agent-Tools-Repository", &app)]).await;
    assert_eq!(status, 200, "{body}");
    let other = format!("{prefix}other");
    let (status, _, body) = init(addr, &[("X-Agent-Tools-Repository", &other)]).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        message(&body),
        format!(
            "this server's workspace is a checkout of {app} at feature; a session for {other} needs a server of its own"
        )
    );
}

#[tokio::test]
async fn a_root_holding_the_same_checkout_is_served_as_it_is() {
    // A persistent volume after a restart: the edits the agent had not committed stay.
    let sources = tempfile::tempdir().unwrap();
    source_repository(&sources.path().join("app"));
    let prefix = format!("file://{}/", sources.path().display());
    let app = format!("{prefix}app");
    let workspace = tempfile::tempdir().unwrap();
    git(workspace.path(), &["init", "--quiet"]);
    git(workspace.path(), &["remote", "add", "origin", &app]);
    std::fs::write(workspace.path().join("wip.py"), "unsaved = True\n").unwrap();
    let (addr, _stop) = start(workspace.path(), |o| {
        o.checkout = Some(CheckoutSettings {
            allowed_prefixes: vec![prefix.clone()],
            credential_file: None,
        });
    })
    .await;
    let (status, _, body) = init(
        addr,
        &[
            ("X-Agent-Tools-Repository", &app),
            ("X-Agent-Tools-Ref", "main"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("wip.py")).unwrap(),
        "unsaved = True\n"
    );
    assert!(!workspace.path().join("app.py").exists());

    // Anything else in the root is not overwritten.
    let foreign = tempfile::tempdir().unwrap();
    std::fs::write(foreign.path().join("notes.txt"), "mine\n").unwrap();
    let (addr, _stop2) = start(foreign.path(), |o| {
        o.checkout = Some(CheckoutSettings {
            allowed_prefixes: vec![prefix.clone()],
            credential_file: None,
        });
    })
    .await;
    let (status, _, body) = init(addr, &[("X-Agent-Tools-Repository", &app)]).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        std::fs::read_to_string(foreign.path().join("notes.txt")).unwrap(),
        "mine\n"
    );
}
