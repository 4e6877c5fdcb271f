//! Preview diagnostics with real servers: an edit that breaks a caller in another file is
//! previewed — the caller's error is predicted, nothing on disk changes, and a following
//! `diagnostics` of both files shows the disk's state; accepting applies it and the write's
//! own diagnostics match the prediction; a file changed between preview and accept rejects
//! the change whole; a discard leaves the servers and the disk as they were.
//!
//! `test_preview` and `test_resolve` are a harness's own tools built on tools-core's
//! preview hook and staged-change store, exactly as the fs family's `preview: true` and the
//! ast family's `resolve` use them (those crates are not dependencies of this one).

use serde_json::{Value, json};
use tools_core::testing::require_binary;
use tools_core::{
    CallCtx, PathLocks, ProposedFile, StagedChanges, StagedFile, Tier, Tool, ToolError, ToolOutput,
};
use tools_core::{NoWriteFaults, content_hash};

use super::{Project, has};

/// Stages `text` for `path` and answers with the predicted diagnostics first.
pub struct TestPreview;

#[tools_core::async_trait]
impl Tool for TestPreview {
    fn name(&self) -> &str {
        "test_preview"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "previews a whole-file write".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let path = ctx
            .run
            .workspace()
            .resolve(args["path"].as_str().unwrap())?;
        let text = args["text"].as_str().unwrap().to_string();
        let hash = std::fs::read(&path).ok().map(|b| content_hash(&b));
        let id = StagedChanges::for_run(&ctx.run).stage(
            "test_preview",
            "change",
            vec![StagedFile {
                path: path.clone(),
                hash,
                new_text: Some(text.clone()),
                replacements: 0,
                mode: None,
            }],
        )?;
        let report = ctx
            .preview_diagnostics(&[ProposedFile { path, text }])
            .await;
        Ok(report.lead(
            ToolOutput::text(format!("staged {id}")).with_structured(json!({"change_id": id})),
        ))
    }
}

/// Accepts or discards a staged change; an accepted one reports its files as touched.
pub struct TestResolve;

#[tools_core::async_trait]
impl Tool for TestResolve {
    fn name(&self) -> &str {
        "test_resolve"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> String {
        "accepts or discards a staged change".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let id = args["change_id"].as_str().unwrap();
        let store = StagedChanges::for_run(&ctx.run);
        if args["action"] == "discard" {
            store.discard(id)?;
            return Ok(ToolOutput::text(format!("discarded {id}")));
        }
        let done = store.accept(
            id,
            ctx.run.workspace(),
            &PathLocks::for_run(&ctx.run),
            &NoWriteFaults,
        )?;
        Ok(ToolOutput::text(format!("accepted {id}")).with_touched(done.written))
    }
}

/// A preview's answer: its text and its change id.
pub struct Previewed {
    pub text: String,
    pub id: String,
}

impl Project {
    pub async fn preview(&self, rel: &str, text: &str) -> Previewed {
        let out = self
            .call("test_preview", json!({"path": rel, "text": text}))
            .await
            .unwrap();
        if std::env::var_os("LSP_TEST_ECHO").is_some() {
            eprintln!(">>> preview {rel}\n{}\n", out.full_text());
        }
        Previewed {
            id: out.structured.as_ref().unwrap()["change_id"]
                .as_str()
                .unwrap()
                .to_string(),
            text: out.text,
        }
    }

    /// Accepts `id`; the write's `diagnostics` section.
    pub async fn accept(&self, id: &str) -> Result<String, tools_core::CallError> {
        let out = self
            .call("test_resolve", json!({"change_id": id, "action": "accept"}))
            .await?;
        let s = out
            .sections
            .iter()
            .find(|s| s.title == "diagnostics")
            .map(|s| s.body.clone())
            .unwrap_or_default();
        if std::env::var_os("LSP_TEST_ECHO").is_some() {
            eprintln!(">>> accept {id}\n{s}\n");
        }
        Ok(s)
    }

    pub async fn discard(&self, id: &str) {
        self.call(
            "test_resolve",
            json!({"change_id": id, "action": "discard"}),
        )
        .await
        .unwrap();
    }

    /// What `lsp` action `diagnostics` answers for `file`.
    pub async fn diagnostics(&self, file: &str) -> String {
        self.ok(json!({"action": "diagnostics", "file": file}))
            .await
    }

    /// `lsp` action `diagnostics` says `file` has none.
    pub async fn assert_clean(&self, file: &str) {
        has(&self.diagnostics(file).await, "no diagnostics");
    }

    pub fn hash(&self, rel: &str) -> String {
        content_hash(&std::fs::read(self.root().join(rel)).unwrap())
    }
}

/// pyright over the `py_src` fixture, given time to settle.
const PYRIGHT: &str = "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

/// Servers that index for long on a loaded machine (tsserver, gopls, clangd).
const SLOW_START: &str = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n";

/// The diagnostic lines (`path:line:col …`) of a prediction or a write's section.
fn diagnostic_lines(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|n| n.parse::<u32>().is_ok())
                && !l.starts_with("predicted")
        })
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Whether the write's own diagnostics must be exactly the prediction, or may add to it
/// (a check that runs on save, which a preview names as not covered).
#[derive(Clone, Copy, PartialEq)]
enum Match {
    Exact,
    PlusSaveOnlyChecks,
}

/// The whole scenario on one server: `file` is changed to `broken`, which breaks each of
/// `callers` (every file starts clean).
async fn preview_scenario(p: &Project, file: &str, broken: &str, callers: &[&str], m: Match) {
    let ok = p.read(file);
    let disk = p.hash(file);

    // Preview: the callers' errors are predicted, nothing on disk changed.
    let pv = p.preview(file, broken).await;
    has(&pv.text, "predicted: ");
    has(&pv.text, "new diagnostic(s) if this change is written");
    for c in callers {
        has(&pv.text, &format!("{c}:"));
    }
    assert!(!pv.text.contains("prediction incomplete"), "{}", pv.text);
    assert_eq!(p.hash(file), disk);
    // The servers are back on the disk's state.
    for f in callers.iter().chain([&file]) {
        p.assert_clean(f).await;
    }

    // Accept: written, and the write's own diagnostics are the prediction.
    let predicted = diagnostic_lines(&pv.text);
    assert!(!predicted.is_empty(), "{}", pv.text);
    let written = p.accept(&pv.id).await.unwrap();
    assert_eq!(p.read(file), broken);
    has(&written, "new diagnostic(s) after this write");
    let actual = diagnostic_lines(&written);
    match m {
        Match::Exact => assert_eq!(
            actual, predicted,
            "prediction:\n{}\nwrite:\n{written}",
            pv.text
        ),
        Match::PlusSaveOnlyChecks => {
            for l in &predicted {
                assert!(
                    actual.contains(l),
                    "predicted {l} is not in the write's own result:\n{written}"
                );
            }
        }
    }

    // Back to the good version; a preview of the fix predicts the errors gone.
    let pv = p.preview(file, &ok).await;
    has(&pv.text, "predicted: no new diagnostics");
    has(&pv.text, "would be gone");
    p.accept(&pv.id).await.unwrap();
    assert_eq!(p.read(file), ok);

    // A file changed between preview and accept: the change is rejected whole.
    let pv = p.preview(file, broken).await;
    let touched = format!("{ok}\n");
    p.write(file, &touched);
    let e = p.accept(&pv.id).await.unwrap_err().to_string();
    has(&e, "changed since it was staged");
    assert_eq!(p.read(file), touched);
    p.write(file, &ok);

    // Discard: disk and servers as before.
    let pv = p.preview(file, broken).await;
    p.discard(&pv.id).await;
    assert_eq!(p.read(file), ok);
    for f in callers.iter().chain([&file]) {
        p.assert_clean(f).await;
    }
}

#[tokio::test]
async fn pyright_previews_a_break_in_unopened_callers() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", PYRIGHT);
    let file = "src/shapes/geometry.py";
    let broken = p.read(file).replace(
        "def area(r: Rect) -> int:",
        "def area(r: Rect, scale: int) -> int:",
    );
    p.assert_clean(file).await;
    preview_scenario(
        &p,
        file,
        &broken,
        &["src/shapes/report.py", "tests/test_geometry.py"],
        Match::Exact,
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn typescript_previews_a_break_in_importers() {
    if require_binary("typescript-language-server", "typescript-language-server").is_none() {
        return;
    }
    let p = Project::from_fixture("ts_lib", SLOW_START);
    let file = "src/geometry.ts";
    let broken = p.read(file).replace(
        "export function area(r: Rect): number {",
        "export function area(r: Rect, scale: number): number {",
    );
    p.assert_clean(file).await;
    preview_scenario(
        &p,
        file,
        &broken,
        &["src/report.ts", "test/geometry.test.ts"],
        Match::Exact,
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn gopls_previews_a_break_in_other_packages() {
    if require_binary("gopls", "gopls").is_none() || require_binary("go", "go").is_none() {
        return;
    }
    let p = Project::from_fixture("go_mod", SLOW_START);
    let file = "geometry/geometry.go";
    let broken = p.read(file).replace(
        "func Area(r Rect) int {",
        "func Area(r Rect, scale int) int {",
    );
    p.assert_clean(file).await;
    preview_scenario(
        &p,
        file,
        &broken,
        &["report/report.go", "main.go"],
        Match::Exact,
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn clangd_with_dirty_headers_previews_a_break_in_includers() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    // clangd reads included headers from the disk unless told to use the open ones.
    let p = Project::from_fixture(
        "c_lib",
        "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n\
         [lsp.servers.c]\ncommand = [\"clangd\", \"--use-dirty-headers\"]\n",
    );
    let file = "include/shapes.h";
    let broken = p.read(file).replace(
        "int rect_area(const struct rect *r);",
        "int rect_area(const struct rect *r, int scale);",
    );
    p.assert_clean(file).await;
    preview_scenario(
        &p,
        file,
        &broken,
        &["tests/test_shapes.c", "src/shapes.c"],
        Match::Exact,
    )
    .await;
    p.close_and_check().await;
}

#[tokio::test]
async fn clangd_without_dirty_headers_names_includers_as_not_covered() {
    if require_binary("clangd", "clangd").is_none() {
        return;
    }
    // The table starts clangd with --use-dirty-headers; a user's command without it is
    // the case this names.
    let p = Project::from_fixture(
        "c_lib",
        "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 60000\n\
         [lsp.servers.c]\ncommand = [\"clangd\"]\n",
    );
    let file = "include/shapes.h";
    let broken = p.read(file).replace(
        "int rect_area(const struct rect *r);",
        "int rect_area(const struct rect *r, int scale);",
    );
    p.assert_clean(file).await;
    let pv = p.preview(file, &broken).await;
    has(
        &pv.text,
        "not covered by this preview: clangd's view of files that include a previewed header",
    );
    has(&pv.text, "--use-dirty-headers");
    p.discard(&pv.id).await;
    p.close_and_check().await;
}

#[tokio::test]
async fn rust_analyzer_previews_its_own_analysis_and_names_cargo_check_as_not_covered() {
    if !(require_binary("rust-analyzer", "rust-analyzer").is_some()
        && std::process::Command::new("rust-analyzer")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()))
    {
        return;
    }
    let p = Project::from_fixture(
        "cargo_ws",
        "[lsp]\nindex_wait_ms = 180000\ndiagnostics_wait_ms = 180000\n",
    );
    let file = "crates/geometry/src/lib.rs";
    // rust-analyzer's own analysis covers the documents it has open (the callers are); it
    // names a wrong argument count (report) but not an unmet trait bound (cli's
    // `.map(area)`): that one is `cargo check`'s, after the save.
    let callers = ["crates/report/src/lib.rs"];
    for f in ["crates/report/src/lib.rs", "crates/cli/src/main.rs", file] {
        p.assert_clean(f).await;
    }
    let broken = p.read(file).replace(
        "pub fn area(r: &Rect) -> u32 {",
        "pub fn area(r: &Rect, scale: u32) -> u32 {",
    );
    let pv = p.preview(file, &broken).await;
    has(
        &pv.text,
        "not covered by this preview: rust-analyzer's `cargo check`",
    );
    p.discard(&pv.id).await;
    preview_scenario(&p, file, &broken, &callers, Match::PlusSaveOnlyChecks).await;
    p.close_and_check().await;
}

#[tokio::test]
async fn a_previewed_rename_is_staged_whole_and_accepted_whole() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", PYRIGHT);
    let files = [
        "src/shapes/geometry.py",
        "src/shapes/report.py",
        "src/shapes/units.py",
        "tests/test_geometry.py",
    ];
    let hashes: Vec<String> = files.iter().map(|f| p.hash(f)).collect();
    let out = p
        .call(
            "lsp_rename",
            json!({"file": files[0], "line": 14, "symbol": "area", "new_name": "compute_area", "preview": true}),
        )
        .await
        .unwrap();
    if std::env::var_os("LSP_TEST_ECHO").is_some() {
        eprintln!(">>> rename preview\n{}\n", out.full_text());
    }
    has(
        &out.text,
        "predicted: no new diagnostics if this change is written",
    );
    has(&out.text, "(preview) renaming `area`");
    has(&out.text, "tests/test_geometry.py: ");
    assert!(out.touched.is_empty());
    let now: Vec<String> = files.iter().map(|f| p.hash(f)).collect();
    assert_eq!(now, hashes, "a previewed rename changed files on disk");
    let id = out.structured.unwrap()["change_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The servers see the disk: the old name is still the one that resolves.
    p.assert_clean("tests/test_geometry.py").await;
    let written = p.accept(&id).await.unwrap();
    assert!(!written.contains("new diagnostic(s)"), "{written}");
    has(
        &p.read("src/shapes/units.py"),
        "import compute_area as surface_of",
    );
    has(&p.read("tests/test_geometry.py"), "compute_area");
    p.close_and_check().await;
}

#[tokio::test]
async fn a_preview_and_a_write_to_the_same_server_do_not_interleave() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let p = Project::from_fixture("py_src", PYRIGHT);
    let file = "src/shapes/geometry.py";
    let ok = p.read(file);
    let broken = ok.replace(
        "def area(r: Rect) -> int:",
        "def area(r: Rect, scale: int) -> int:",
    );
    let harmless = format!("{ok}\n# a harmless comment\n");
    p.assert_clean(file).await;
    for round in 0..3 {
        // Both at once: the breaking preview must not leak into the harmless write's
        // result, nor the write into the prediction.
        let (pv, written) = tokio::join!(
            p.preview(file, &broken),
            p.write_tool(file, if round % 2 == 0 { &harmless } else { &ok })
        );
        let written = written.unwrap_or_default();
        assert!(
            !written.contains("new diagnostic(s)"),
            "round {round}: {written}"
        );
        has(&pv.text, "src/shapes/report.py:");
        p.discard(&pv.id).await;
        p.assert_clean("src/shapes/report.py").await;
    }
    // A breaking write racing a harmless preview of the same file: the write's own result
    // names what it broke, whoever goes first.
    let (pv, written) = tokio::join!(p.preview(file, &harmless), p.write_tool(file, &broken));
    let written = written.unwrap_or_default();
    has(&written, "new diagnostic(s) after this write");
    has(&written, "src/shapes/report.py:");
    p.discard(&pv.id).await;
    has(&p.diagnostics("src/shapes/report.py").await, "scale");
    p.close_and_check().await;
}
