//! Drives one case through the public tool API and judges each check: the server started
//! (`status` lists it running, its process alive), its hover and definition answers hold
//! the expected lines, a breaking write names the expected diagnostic tagged with that
//! server, and writing the original back reports that diagnostic gone.

use serde_json::{Value, json};
use tools_core::testing::CheckOutcome;

use super::cases::{Breaking, Case, Check, Query};
use crate::suite::Project;

/// Waits sized for many servers starting at once on a small machine.
const CONFIG: &str = "[lsp]\nindex_wait_ms = 60000\nstart_timeout_ms = 90000\n\
                      request_timeout_ms = 60000\ndiagnostics_wait_ms = 30000\n";

/// The same for a server that publishes nothing: a write waits for it only briefly.
const CONFIG_SILENT: &str = "[lsp]\nindex_wait_ms = 60000\nstart_timeout_ms = 90000\n\
                             request_timeout_ms = 60000\ndiagnostics_wait_ms = 3000\n";

/// The same for a server whose indexing report can stall short of its end (ccls 0.20220729
/// stops at "1/2" on this tree now and then, and ends it only at shutdown): queries wait for
/// the index briefly and then answer, saying it is not final.
const CONFIG_STALLING_INDEX: &str = "[lsp]\nindex_wait_ms = 5000\nstart_timeout_ms = 90000\n\
                                     request_timeout_ms = 60000\ndiagnostics_wait_ms = 30000\n";

/// The same for a JVM server: jdtls starts an OSGi runtime and builds its project before it
/// answers, 50-80 s on a busy two-core machine.
const CONFIG_JVM: &str = "[lsp]\nindex_wait_ms = 120000\nstart_timeout_ms = 180000\n\
                          request_timeout_ms = 120000\ndiagnostics_wait_ms = 60000\n";

/// What one case's checks gave: each check's outcome by name, and what went wrong.
pub struct Verdict {
    /// `start`, `hover`, `definition`, `diagnostic`, `fix`, in that order.
    pub checks: Vec<(&'static str, CheckOutcome)>,
    /// One line per failed check, saying what was answered instead.
    pub problems: Vec<String>,
}

impl Verdict {
    fn judge(&mut self, name: &'static str, result: Option<Result<(), String>>) {
        let outcome = match result {
            None => CheckOutcome::NotApplicable,
            Some(Ok(())) => CheckOutcome::Passed,
            Some(Err(why)) => {
                self.problems.push(format!("{name}: {why}"));
                CheckOutcome::Failed
            }
        };
        self.checks.push((name, outcome));
    }
}

/// Drives `case` on its own copy of the fixture tree.
pub async fn drive(case: &Case) -> Verdict {
    let base = match (case.component, &case.diagnostic) {
        ("ccls", _) => CONFIG_STALLING_INDEX,
        ("jdtls", _) => CONFIG_JVM,
        (_, Check::NotApplicable(_)) => CONFIG_SILENT,
        (_, Check::Expect(_)) => CONFIG,
    };
    let p = Project::from_fixture("polyglot", &format!("{base}{}", case.config));
    if case.binaries.contains(&"ngserver") {
        link_angular_core(&p);
    }
    let mut verdict = Verdict {
        checks: Vec::new(),
        problems: Vec::new(),
    };
    let hover = match &case.hover {
        Check::Expect(q) => Some(query(&p, case, "hover", q).await),
        Check::NotApplicable(_) => None,
    };
    let definition = match &case.definition {
        Check::Expect(q) => Some(query(&p, case, "definition", q).await),
        Check::NotApplicable(_) => None,
    };
    let (diagnostic, fix) = write_and_fix(&p, case).await;
    // After the write, so a server that answers no query has been started by it.
    verdict.judge("start", Some(started(&p, case.servers).await));
    verdict.judge("hover", hover);
    verdict.judge("definition", definition);
    verdict.judge("diagnostic", diagnostic);
    verdict.judge("fix", fix);
    p.close_and_check().await;
    verdict
}

/// The Angular project's own `@angular/core`: the one installed beside `ngserver`, linked
/// into the project's `node_modules` as its dependency (the templates' types come from it).
fn link_angular_core(p: &Project) {
    let program = tools_core::testing::which("ngserver").expect("ngserver on PATH");
    let core = tools_core::testing::node_modules_of(&program).join("@angular/core");
    assert!(
        core.join("package.json").is_file(),
        "no @angular/core beside {program:?}"
    );
    let dest = p.root().join("web/angular/node_modules/@angular");
    std::fs::create_dir_all(&dest).unwrap();
    crate::suite::link_dir(&core, dest.join("core")).unwrap();
}

/// Asks `action` about `q`; the answer must hold `q.answer_line` as a whole line.
async fn query(p: &Project, case: &Case, action: &str, q: &Query) -> Result<(), String> {
    let args = json!({"action": action, "file": case.file, "line": q.line, "symbol": q.symbol});
    let text = match p.lsp(args.clone()).await {
        Ok(o) => o.full_text(),
        // A server that crashed on the question (ccls aborts now and then) is restarted by
        // the next call, as the answer says: ask once more, as an agent would.
        Err(e) if e.to_string().contains("the next call restarts it") => match p.lsp(args).await {
            Ok(o) => o.full_text(),
            Err(again) => {
                return Err(format!(
                    "the call failed twice: {e}; then, restarted: {again}"
                ));
            }
        },
        Err(e) => return Err(format!("the call failed: {e}")),
    };
    if std::env::var_os("LSP_TEST_ECHO").is_some() {
        eprintln!("{} {action}: {text:?}", case.component);
    }
    if text.lines().any(|l| l == q.answer_line) {
        Ok(())
    } else {
        Err(format!("no line {:?} in {text:?}", q.answer_line))
    }
}

/// `status` must list each of `servers` as running, with a live process.
async fn started(p: &Project, servers: &[&str]) -> Result<(), String> {
    let status = match p.lsp(json!({"action": "status"})).await {
        Ok(o) => o.structured.unwrap_or_default(),
        Err(e) => return Err(format!("status failed: {e}")),
    };
    let listed = status["servers"].as_array().cloned().unwrap_or_default();
    for server in servers {
        let running = listed.iter().any(|s| {
            s["state"] == "running"
                && s["server"] == *server
                && s["pid"]
                    .as_i64()
                    .is_some_and(|pid| tools_core::process::group_alive(pid as i32))
        });
        if !running {
            return Err(format!("{server} is not running: {status}"));
        }
    }
    Ok(())
}

/// The breaking write and the fix; each `None` when the case has no diagnostic check.
async fn write_and_fix(
    p: &Project,
    case: &Case,
) -> (Option<Result<(), String>>, Option<Result<(), String>>) {
    let original = p.read(case.file);
    match &case.diagnostic {
        Check::Expect(b) => {
            let Some(broken) = breaking_text(&original, b) else {
                let why = format!("the breaking edit's {:?} is not in {}", b.find, case.file);
                return (Some(Err(why.clone())), Some(Err(why)));
            };
            let written = write(p, case, &broken).await;
            let diagnostic = reported(p, case, b, &written).await;
            let fixed = write(p, case, &original).await;
            let fix = match &diagnostic {
                Ok(reported) => gone(case, reported, &fixed),
                Err(_) => Err("nothing to fix: the diagnostic was never reported".into()),
            };
            (Some(diagnostic.map(|_| ())), Some(fix))
        }
        Check::NotApplicable(_) => {
            // A server said to publish nothing must not publish on a write either: a
            // change of its file still ends in a result without new diagnostics.
            let text = format!("{original}\n");
            let written = write(p, case, &text).await;
            if written.body.contains("new diagnostic(s)") {
                let why = format!(
                    "a server said to publish nothing reported {:?}",
                    written.body
                );
                (Some(Err(why)), None)
            } else {
                (None, None)
            }
        }
    }
}

fn breaking_text(original: &str, b: &Breaking) -> Option<String> {
    original
        .contains(b.find)
        .then(|| original.replacen(b.find, b.replace, 1))
}

/// A write's `diagnostics` section: its text and its structured form.
struct Written {
    body: String,
    structured: Value,
}

async fn write(p: &Project, case: &Case, text: &str) -> Written {
    let out = p
        .call("test_write", json!({"path": case.file, "text": text}))
        .await;
    let written = match out {
        Ok(o) => {
            let section = o.sections.into_iter().find(|s| s.title == "diagnostics");
            Written {
                body: section.as_ref().map(|s| s.body.clone()).unwrap_or_default(),
                structured: section.and_then(|s| s.structured).unwrap_or_default(),
            }
        }
        // Shown in the failure, so a write that failed is told from one that said nothing.
        Err(e) => Written {
            body: format!("(the write failed: {e})"),
            structured: Value::Null,
        },
    };
    if std::env::var_os("LSP_TEST_ECHO").is_some() {
        eprintln!("{} write: {:?}", case.component, written.body);
    }
    written
}

/// The write's result must hold `b.line`, and its structured form a new diagnostic of the
/// case's first server at that place; returns that diagnostic.
async fn reported(
    p: &Project,
    case: &Case,
    b: &Breaking,
    written: &Written,
) -> Result<Value, String> {
    let server = case.servers[0];
    let found = written.body.lines().any(|l| l == b.line);
    let entry = written.structured["new"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| {
            d["source"] == server
                && b.line.starts_with(&format!(
                    "{}:{}:",
                    d["path"].as_str().unwrap_or_default(),
                    d["line"]
                ))
        });
    match (found, entry) {
        (true, Some(d)) => Ok(d.clone()),
        _ => {
            // What the server says now, to tell a slow server from a silent one.
            let now = match p
                .lsp(json!({"action": "diagnostics", "file": case.file}))
                .await
            {
                Ok(o) => o.full_text(),
                Err(e) => e.to_string(),
            };
            Err(format!(
                "no line {:?} from {server} in {:?}; `diagnostics` now says {now:?}",
                b.line, written.body
            ))
        }
    }
}

/// Writing the original back must report `reported` gone, and nothing new.
fn gone(case: &Case, reported: &Value, fixed: &Written) -> Result<(), String> {
    let listed = fixed.structured["gone_list"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|d| {
            d["source"] == case.servers[0]
                && d["message"] == reported["message"]
                && d["line"] == reported["line"]
        });
    let nothing_new = fixed.structured["total_new"] == 0;
    if listed && nothing_new {
        Ok(())
    } else {
        Err(format!(
            "the fix did not report {:?} gone (and nothing new): {:?}",
            reported["message"], fixed.body
        ))
    }
}
