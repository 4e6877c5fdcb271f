//! Shared language servers: ten sessions over HTTP on one Cargo workspace of nine crates
//! (rust-analyzer) and one TypeScript project (typescript-language-server), with the
//! servers shared (the default) and with `--no-shared-servers` (one per session), side by
//! side in one run, the order alternating between rounds.
//!
//! Per mode it prints: the resident memory of every language server (and what they
//! started) once the first session has asked both languages, and once all sessions have;
//! the first hover of each later session against a warm hover; and the ratios the goal is
//! stated in (total memory ≤ 1.2× one session's, a later session's first hover ≤ 2× a warm
//! one). Nothing is asserted.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Server, Session, ms, percentile};

/// A Cargo workspace of nine crates, each using the one before it, and a TypeScript project
/// under `web/`.
pub fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let members: Vec<String> = (0..9).map(|i| format!("\"crates/c{i}\"")).collect();
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[workspace]\nmembers = [{}]\nresolver = \"2\"\n",
            members.join(", ")
        ),
    )
    .unwrap();
    for i in 0..9 {
        let dir = root.join(format!("crates/c{i}/src"));
        std::fs::create_dir_all(&dir).unwrap();
        let dep = if i > 0 {
            format!("c{} = {{ path = \"../c{}\" }}\n", i - 1, i - 1)
        } else {
            String::new()
        };
        std::fs::write(
            root.join(format!("crates/c{i}/Cargo.toml")),
            format!("[package]\nname = \"c{i}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{dep}"),
        )
        .unwrap();
        let mut lib = String::new();
        if i > 0 {
            lib.push_str(&format!(
                "/// Step {i}: the step before, plus {i}.\npub fn step_{i}(x: u64) -> u64 {{\n    c{}::step_{}(x) + {i}\n}}\n",
                i - 1,
                i - 1
            ));
        } else {
            lib.push_str("/// Step 0: the identity.\npub fn step_0(x: u64) -> u64 {\n    x\n}\n");
        }
        for f in 0..40 {
            lib.push_str(&format!(
                "\n/// A record of crate {i}, number {f}.\n#[derive(Debug, Clone, Default)]\npub struct Record{f} {{\n    pub id: u64,\n    pub name: String,\n}}\n\nimpl Record{f} {{\n    /// Its weight.\n    pub fn weight(&self) -> u64 {{\n        self.id * {f} + self.name.len() as u64\n    }}\n}}\n"
            ));
        }
        std::fs::write(dir.join("lib.rs"), lib).unwrap();
    }
    let web = root.join("web/src");
    std::fs::create_dir_all(&web).unwrap();
    std::fs::write(
        root.join("web/package.json"),
        "{\"name\": \"web\", \"version\": \"0.0.0\", \"private\": true}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("web/tsconfig.json"),
        "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}, \"include\": [\"src\"]}\n",
    )
    .unwrap();
    for f in 0..20 {
        std::fs::write(
            web.join(format!("m{f}.ts")),
            format!(
                "/** Doubles x ({f}). */\nexport function double{f}(x: number): number {{\n  return 2 * x;\n}}\n"
            ),
        )
        .unwrap();
    }
    dir
}

/// The resident memory of every process below `pid` (not `pid` itself): the language
/// servers a serve process started and what they started in turn.
fn descendants_rss(pid: u32) -> u64 {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|v| v.parse().ok()) {
            parent_of.push((p, ppid));
        }
    }
    let mut below = vec![pid];
    let mut i = 0;
    while i < below.len() {
        let p = below[i];
        below.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    below[1..].iter().map(|p| rss_of(*p)).sum()
}

fn rss_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024
}

/// What the languages' hovers ask.
struct Probe {
    file: String,
    line: u32,
    symbol: String,
}

fn probes(session: usize, with_rust: bool) -> Vec<Probe> {
    let mut out = Vec::new();
    if with_rust {
        let c = 1 + session % 8;
        out.push(Probe {
            file: format!("crates/c{c}/src/lib.rs"),
            line: 3,
            symbol: format!("step_{}", c - 1),
        });
    }
    out.push(Probe {
        file: format!("web/src/m{}.ts", session % 20),
        line: 2,
        symbol: format!("double{}", session % 20),
    });
    out
}

/// One mode's figures.
struct Figures {
    one_session_rss: u64,
    all_sessions_rss: u64,
    warm: Vec<Duration>,
    later_first: Vec<Duration>,
    failed: usize,
}

async fn hover(s: &mut Session, p: &Probe) -> (Duration, bool) {
    let t = Instant::now();
    let ok = s
        .call(
            "lsp",
            json!({"action": "hover", "file": p.file, "line": p.line, "symbol": p.symbol}),
        )
        .await;
    (t.elapsed(), ok)
}

async fn one_mode(root: &Path, sessions: usize, shared: bool, with_rust: bool) -> Figures {
    let extra: &[&str] = if shared {
        &[]
    } else {
        &["--no-shared-servers"]
    };
    let server = Server::start(root, extra);
    server.wait_ready().await;
    let mut held = Vec::new();
    let mut figures = Figures {
        one_session_rss: 0,
        all_sessions_rss: 0,
        warm: Vec::new(),
        later_first: Vec::new(),
        failed: 0,
    };
    // The first session starts the servers and warms them.
    let mut first = Session::open(server.port).await;
    for p in probes(0, with_rust) {
        let (_, ok) = hover(&mut first, &p).await;
        figures.failed += usize::from(!ok);
    }
    for round in 1..=3 {
        for p in probes(round, with_rust) {
            let (took, ok) = hover(&mut first, &p).await;
            figures.failed += usize::from(!ok);
            figures.warm.push(took);
        }
    }
    figures.one_session_rss = descendants_rss(server.child.id());
    held.push(first);
    for i in 1..sessions {
        let mut s = Session::open(server.port).await;
        for p in probes(i + 3, with_rust) {
            let (took, ok) = hover(&mut s, &p).await;
            figures.failed += usize::from(!ok);
            figures.later_first.push(took);
        }
        held.push(s);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    figures.all_sessions_rss = descendants_rss(server.child.id());
    for s in held {
        s.close().await;
    }
    figures.warm.sort();
    figures.later_first.sort();
    figures
}

fn mib(b: u64) -> f64 {
    b as f64 / 1048576.0
}

/// Runs both modes and prints their figures and ratios.
pub async fn run(quick: bool) {
    let ws = fixture();
    let with_rust = !quick && tools_core::process::which("rust-analyzer").is_some();
    let sessions = if quick { 2 } else { 10 };
    println!(
        "shared language servers: {sessions} sessions, {} (one serve process per mode):",
        if with_rust {
            "a Cargo workspace of 9 crates and a TypeScript project"
        } else {
            "a TypeScript project"
        }
    );
    let modes: Vec<bool> = if quick { vec![true] } else { vec![true, false] };
    for shared in modes {
        let f = one_mode(ws.path(), sessions, shared, with_rust).await;
        let warm = percentile(&f.warm, 0.5);
        let later_p50 = percentile(&f.later_first, 0.5);
        let later_max = *f.later_first.last().unwrap();
        println!(
            "  {}: servers {:.0} MiB after one session, {:.0} MiB after {sessions} ({:.2}x); warm hover p50 {:.0} ms; later sessions' first hover p50 {:.0} ms ({:.2}x), max {:.0} ms ({:.2}x){}",
            if shared {
                "shared"
            } else {
                "--no-shared-servers"
            },
            mib(f.one_session_rss),
            mib(f.all_sessions_rss),
            f.all_sessions_rss as f64 / f.one_session_rss.max(1) as f64,
            ms(warm),
            ms(later_p50),
            ms(later_p50) / ms(warm).max(0.001),
            ms(later_max),
            ms(later_max) / ms(warm).max(0.001),
            if f.failed > 0 {
                format!("; {} hover(s) failed", f.failed)
            } else {
                String::new()
            }
        );
    }
}
