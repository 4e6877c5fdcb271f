//! Servers shared by the runs of one process ([`LspPool`]), with real pyright servers: runs
//! of one root share one process and `status` names them; trust splits them; the cap
//! evicts the least recently used; an idle server no run uses is stopped; a killed server
//! is restarted once for both runs and each is told; a preview of one run is never seen by
//! the other's hover; a write of one is seen by the other's next query; two writes at once
//! each name only their own break.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tools_core::testing::require_binary;
use tools_core::{CallError, Config, Registry, RegistryBuilder, Run, RunOptions, Surface};
use tools_lsp::{LspPool, PoolLimits};

use super::{TestWrite, has, preview};

const UTIL: &str =
    "def add(a: int, b: int) -> int:\n    \"\"\"Add two numbers.\"\"\"\n    return a + b\n";
const MAIN: &str = "from util import add\n\ntotal = add(1, 2)\n";

/// One session: a run of its own at `root` on `pool`.
struct Session {
    run: Arc<Run>,
    reg: Arc<Registry>,
}

impl Session {
    fn open(pool: &Arc<LspPool>, root: &Path, name: &str, trusted: bool) -> Session {
        super::print_the_log_if_asked();
        let run = Run::new(RunOptions {
            root: root.into(),
            conversation_id: name.into(),
            config: Config::empty(),
            trusted,
        })
        .unwrap();
        let fam = tools_lsp::family_with_pool(&run, Arc::clone(pool))
            .unwrap()
            .unwrap();
        let reg = RegistryBuilder::new(Arc::clone(&run))
            .family(fam)
            .tool(Arc::new(TestWrite))
            .tool(Arc::new(preview::TestPreview))
            .build()
            .unwrap();
        Session { run, reg }
    }

    async fn lsp(&self, args: Value) -> Result<tools_core::ToolOutput, CallError> {
        self.reg.call(Surface::FULL, "lsp", args).await
    }

    async fn hover(&self, file: &str, line: u32, symbol: &str) -> String {
        self.lsp(json!({"action": "hover", "file": file, "line": line, "symbol": symbol}))
            .await
            .unwrap()
            .full_text()
    }

    async fn status(&self) -> (String, Value) {
        let out = self.lsp(json!({"action": "status"})).await.unwrap();
        (out.text.clone(), out.structured.unwrap())
    }

    /// Writes through the registry; the `diagnostics` section's body.
    async fn write(&self, rel: &str, text: &str) -> String {
        let out = self
            .reg
            .call(
                Surface::FULL,
                "test_write",
                json!({"path": rel, "text": text}),
            )
            .await
            .unwrap();
        if std::env::var_os("LSP_TEST_ECHO").is_some() {
            eprintln!(">>> write {rel}\n{}\n", out.full_text());
        }
        out.sections
            .iter()
            .find(|s| s.title == "diagnostics")
            .map(|s| s.body.clone())
            .unwrap_or_default()
    }
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    for (p, text) in files {
        std::fs::write(dir.path().join(p), text).unwrap();
    }
    dir
}

/// The pids of the servers the pool runs now.
fn live_pids(pool: &LspPool) -> Vec<i32> {
    let mut pids: Vec<i32> = pool
        .servers()
        .into_iter()
        .filter_map(|s| s.client.filter(|c| c.is_alive()).map(|c| c.pid()))
        .collect();
    pids.sort();
    pids
}

fn pyright() -> bool {
    require_binary("pyright", "pyright-langserver").is_some()
}

#[tokio::test]
async fn two_runs_on_one_pool_share_one_server_and_status_names_both() {
    if !pyright() {
        return;
    }
    let dir = project(&[("util.py", UTIL), ("main.py", MAIN)]);
    let pool = LspPool::new(PoolLimits::default());
    let a = Session::open(&pool, dir.path(), "session-a", true);
    let b = Session::open(&pool, dir.path(), "session-b", true);
    has(&a.hover("main.py", 3, "add").await, "Add two numbers.");
    has(&b.hover("main.py", 3, "add").await, "Add two numbers.");
    let pids = live_pids(&pool);
    assert_eq!(pids.len(), 1, "one server for both runs: {pids:?}");
    let (text, s) = a.status().await;
    let line = text
        .lines()
        .find(|l| l.starts_with("python: running pyright-langserver for root ."))
        .unwrap_or_else(|| panic!("no running line in:\n{text}"));
    has(line, "shared by 2 sessions: session-a, session-b, ");
    has(line, " MiB, idle ");
    let server = &s["servers"].as_array().unwrap()[0];
    assert_eq!(server["pid"], json!(pids[0]));
    assert_eq!(server["sessions"], json!(["session-a", "session-b"]));
    assert!(server["rss_bytes"].as_u64().unwrap() > 1024 * 1024);
    // One run closing leaves the server to the other.
    a.run.close().await;
    has(&b.hover("main.py", 3, "add").await, "Add two numbers.");
    assert_eq!(live_pids(&pool), pids);
    let (text, _) = b.status().await;
    has(&text, "shared by 1 session: session-b, ");
    // The last run gone, an idle server is stopped once the idle timeout has passed.
    b.run.close().await;
    pool.stop_idle().await;
    assert_eq!(live_pids(&pool), pids, "the idle timeout has not passed");
    pool.shutdown().await;
    assert!(live_pids(&pool).is_empty());
    assert!(!tools_core::process::group_alive(pids[0]) || wait_gone(pids[0]).await);
}

async fn wait_gone(pid: i32) -> bool {
    for _ in 0..50 {
        if !tools_core::process::group_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn a_server_no_run_uses_is_stopped_after_the_idle_timeout() {
    if !pyright() {
        return;
    }
    let dir = project(&[("util.py", UTIL), ("main.py", MAIN)]);
    let pool = LspPool::new(PoolLimits {
        idle_timeout: Duration::ZERO,
        ..PoolLimits::default()
    });
    let a = Session::open(&pool, dir.path(), "session-a", true);
    has(&a.hover("main.py", 3, "add").await, "Add two numbers.");
    let pids = live_pids(&pool);
    // In use by an open run: kept, however idle.
    pool.stop_idle().await;
    assert_eq!(live_pids(&pool), pids);
    a.run.close().await;
    pool.stop_idle().await;
    assert!(live_pids(&pool).is_empty());
    assert!(wait_gone(pids[0]).await, "server {} survived", pids[0]);
}

#[tokio::test]
async fn an_untrusted_and_a_trusted_run_on_one_root_get_two_servers() {
    if !pyright() {
        return;
    }
    let dir = project(&[("util.py", UTIL), ("main.py", MAIN)]);
    let pool = LspPool::new(PoolLimits::default());
    let trusted = Session::open(&pool, dir.path(), "trusted", true);
    let untrusted = Session::open(&pool, dir.path(), "untrusted", false);
    has(
        &trusted.hover("main.py", 3, "add").await,
        "Add two numbers.",
    );
    has(
        &untrusted.hover("main.py", 3, "add").await,
        "Add two numbers.",
    );
    let servers = pool.servers();
    assert_eq!(live_pids(&pool).len(), 2, "trust splits the server");
    let mut by_trust: Vec<(bool, Vec<String>)> = servers
        .iter()
        .map(|s| (s.key.trusted, s.sessions.clone()))
        .collect();
    by_trust.sort();
    assert_eq!(
        by_trust,
        vec![
            (false, vec!["untrusted".to_string()]),
            (true, vec!["trusted".to_string()])
        ]
    );
    // Each run's status lists only its own.
    let (text, _) = untrusted.status().await;
    has(&text, "shared by 1 session: untrusted, ");
    pool.shutdown().await;
}

#[tokio::test]
async fn the_least_recently_used_idle_server_is_evicted_under_the_cap() {
    if !pyright() {
        return;
    }
    let one = project(&[("util.py", UTIL), ("main.py", MAIN)]);
    let two = project(&[("util.py", UTIL), ("main.py", MAIN)]);
    let pool = LspPool::new(PoolLimits {
        max_servers: 1,
        ..PoolLimits::default()
    });
    let a = Session::open(&pool, one.path(), "session-a", true);
    let b = Session::open(&pool, two.path(), "session-b", true);
    has(&a.hover("main.py", 3, "add").await, "Add two numbers.");
    let first = live_pids(&pool);
    has(&b.hover("main.py", 3, "add").await, "Add two numbers.");
    let second = live_pids(&pool);
    assert_eq!(second.len(), 1, "the cap is one server");
    assert_ne!(first, second, "the first root's server made room");
    assert!(
        wait_gone(first[0]).await,
        "evicted server {} survived",
        first[0]
    );
    // The evicted root starts again when asked, evicting the other in turn.
    has(&a.hover("main.py", 3, "add").await, "Add two numbers.");
    assert!(wait_gone(second[0]).await);
    assert_eq!(live_pids(&pool).len(), 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_shared_server_killed_is_restarted_once_for_both_runs_and_each_is_told() {
    if !pyright() {
        return;
    }
    let dir = project(&[("util.py", UTIL), ("main.py", MAIN)]);
    let pool = LspPool::new(PoolLimits::default());
    let a = Session::open(&pool, dir.path(), "session-a", true);
    let b = Session::open(&pool, dir.path(), "session-b", true);
    has(&a.hover("main.py", 3, "add").await, "Add two numbers.");
    has(&b.hover("main.py", 3, "add").await, "Add two numbers.");
    let old = live_pids(&pool)[0];
    let client = pool.servers()[0].client.clone().unwrap();
    client.kill().await;
    // The crash is seen once the server's output closes.
    for _ in 0..100 {
        if !client.is_alive() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!client.is_alive());
    drop(client);
    let told = format!(
        "the python server (pyright-langserver) for root ., shared by 2 session(s), exited (pid {old}) and was restarted once for all of them (pid "
    );
    let out = a.hover("main.py", 3, "add").await;
    let first_line = out.lines().next().unwrap();
    assert!(first_line.starts_with(&told), "{out}");
    has(&out, "Add two numbers.");
    let new = live_pids(&pool);
    assert_eq!(new.len(), 1);
    assert!(first_line.ends_with(&format!(
        "(pid {}); open files were sent to it again",
        new[0]
    )));
    let out = b.hover("main.py", 3, "add").await;
    assert_eq!(
        out.lines().next().unwrap(),
        first_line,
        "b is told the same"
    );
    assert_eq!(live_pids(&pool), new, "restarted once, not once per run");
    assert!(
        wait_gone(old).await,
        "the killed server {old} is still there"
    );
    // Told once.
    let out = a.hover("main.py", 3, "add").await;
    assert!(!out.contains("restarted once"), "{out}");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_preview_in_one_run_is_never_seen_by_another_runs_hover_and_a_write_is() {
    if !pyright() {
        return;
    }
    let dir = project(&[("util.py", UTIL), ("main.py", MAIN)]);
    let pool = LspPool::new(PoolLimits::default());
    let a = Session::open(&pool, dir.path(), "session-a", true);
    let b = Session::open(&pool, dir.path(), "session-b", true);
    has(
        &b.hover("util.py", 1, "add").await,
        "    a: int,\n    b: int\n) -> int",
    );
    let breaking = "def add(a: str) -> str:\n    \"\"\"Add two numbers.\"\"\"\n    return a\n";
    let preview = a.reg.call(
        Surface::FULL,
        "test_preview",
        json!({"path": "util.py", "text": breaking}),
    );
    let hovers = async {
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(b.hover("util.py", 1, "add").await);
        }
        seen
    };
    let (previewed, seen) = tokio::join!(preview, hovers);
    let previewed = previewed.unwrap().full_text();
    // The preview predicted the caller's break from the proposed text…
    has(&previewed, "main.py:3:");
    // …and no hover of the other run saw that text.
    for h in &seen {
        has(h, "    a: int,\n    b: int\n) -> int");
        assert!(!h.contains("a: str"), "a preview leaked into:\n{h}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("util.py")).unwrap(),
        UTIL
    );
    // A write of one run is seen by the other's next query.
    let renamed = UTIL.replace("a: int, b: int", "first: int, second: int");
    a.write("util.py", &renamed).await;
    has(
        &b.hover("util.py", 1, "add").await,
        "    first: int,\n    second: int\n) -> int",
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn two_runs_writing_at_once_each_get_only_their_own_break() {
    if !pyright() {
        return;
    }
    let dir = project(&[("one.py", "x: int = 1\n"), ("two.py", "y: int = 2\n")]);
    let pool = LspPool::new(PoolLimits::default());
    let a = Session::open(&pool, dir.path(), "session-a", true);
    let b = Session::open(&pool, dir.path(), "session-b", true);
    // Both runs have the server up and its state settled.
    has(&a.hover("one.py", 1, "x").await, "(variable) x: ");
    has(&b.hover("two.py", 1, "y").await, "(variable) y: ");
    let (mine, theirs) = tokio::join!(
        a.write("one.py", "x: int = \"one\"\n"),
        b.write("two.py", "y: int = \"two\"\n"),
    );
    has(&mine, "one.py:1:10");
    assert!(
        !mine.contains("two.py:"),
        "b's break reported to a:\n{mine}"
    );
    has(&theirs, "two.py:1:10");
    assert!(
        !theirs.contains("one.py:"),
        "a's break reported to b:\n{theirs}"
    );
    pool.shutdown().await;
}
