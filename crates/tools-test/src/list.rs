//! `list`, and the choice of tests behind `run file`: a test file's own tests; for a source
//! file, the tests of the test files that name its module; for a symbol, the tests whose
//! body names it. All read from the files' text (nothing runs).

use std::path::{Path, PathBuf};

use tools_core::{CallCtx, ToolError, ToolOutput};

use crate::TestShared;
use crate::answer::paged;
use crate::args::TestArgs;
use crate::changes::ChangedSymbol;
use crate::listing::{
    MAX_FILES_SEARCHED, TestItem, is_test_file, mentioning, names, test_files, tests_in,
};
use crate::recorded::recorded_for;
use crate::runner::{Language, project_of};

/// The tests `file` stands for: its own when it holds tests (a test file, or any Rust
/// file), a Go package's test files for its other files, else those of the test files
/// that name its module (`calc` for `calc.py`).
/// Also says whether the search was cut.
pub fn tests_of_file(path: &Path, workspace: &Path) -> Result<(Vec<TestItem>, bool), ToolError> {
    let (lang, detected) = project_of(path, workspace)?;
    let own = |p: &Path| -> Vec<TestItem> {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        tests_in(p, &text, &detected)
    };
    if is_test_file(path) {
        return Ok((own(path), false));
    }
    if lang == Language::Go {
        // A Go package's tests are its folder's `_test.go` files, whatever they name.
        let dir = path.parent().unwrap_or(workspace);
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| is_test_file(p))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        return Ok((files.iter().flat_map(|f| own(f)).collect(), false));
    }
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let (files, cut) = test_files(&detected.root, Some(lang));
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        if names(&text, &stem) {
            out.extend(tests_in(&f, &text, &detected));
        }
    }
    Ok((out, cut))
}

/// `list`.
pub async fn list(
    ctx: &CallCtx,
    args: &TestArgs,
    shared: &TestShared,
) -> Result<ToolOutput, ToolError> {
    let budget = shared.config.answer_bytes;
    let ws = ctx.run.workspace().clone();
    let file = args.file.as_deref().map(|f| ws.resolve(f)).transpose()?;
    if let Some(f) = &file
        && !f.is_file()
    {
        return Err(ToolError::invalid(
            "file",
            format!("`{}` is not a file in the workspace", ws.display(f)),
        ));
    }
    if let Some(rev) = &args.changed_since {
        let changed = crate::changes::changed_since(&ctx.run, rev).await?;
        let mut reach = crate::reach::reaching_all(&ctx.run, &changed).await?;
        crate::recorded::add_recorded(ctx, shared, &mut reach, &changed);
        let names: Vec<String> = changed.iter().map(|c| format!("`{}`", c.name)).collect();
        let what = format!(
            "the change since {rev} ({} function{} changed: {})",
            changed.len(),
            if changed.len() == 1 { "" } else { "s" },
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        return Ok(reach_text(
            ctx,
            &reach,
            &what,
            args.offset.unwrap_or(0),
            budget,
        ));
    }
    if let (Some(f), Some(line), Some(s)) = (&file, args.line, args.symbol.as_deref()) {
        return reaching_answer(ctx, shared, f, line, s, args.offset.unwrap_or(0)).await;
    }
    let symbol = args.symbol.clone();
    let root = ws.root().to_path_buf();
    let (items, cut, what) = tokio::task::spawn_blocking(move || match (file, symbol) {
        (Some(f), symbol) => {
            let (items, cut) = tests_of_file(&f, &root)?;
            let shown = tools_core::display_relative(&root, &f);
            Ok(match symbol {
                Some(s) => {
                    let text_of = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
                    let items = filter_by_symbol(items, &s, text_of);
                    (items, cut, format!("in {shown} that name `{s}`"))
                }
                None => (items, cut, format!("for {shown}")),
            })
        }
        (None, Some(s)) => {
            let (files, cut) = test_files(&root, None);
            let mut items = Vec::new();
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap_or_default();
                if !names(&text, &s) {
                    continue;
                }
                let Ok((_, detected)) = project_of(&f, &root) else {
                    continue;
                };
                items.extend(mentioning(tests_in(&f, &text, &detected), &text, &s));
            }
            Ok((items, cut, format!("that name `{s}`")))
        }
        (None, None) => Err(ToolError::invalid_args(
            "`list` needs a `file`, a `symbol` or both",
        )),
    })
    .await
    .map_err(|e| ToolError::internal(format!("the listing task failed: {e}")))??;
    let lines: Vec<String> = items
        .iter()
        .map(|t| format!("{}:{} {}", ws.display(&t.path), t.line, t.id))
        .collect();
    let mut head = format!(
        "{} test{} {what}",
        items.len(),
        if items.len() == 1 { "" } else { "s" }
    );
    if cut {
        head.push_str(&format!(
            " (searched the first {MAX_FILES_SEARCHED} test files only)"
        ));
    }
    Ok(ToolOutput::text(paged(
        &head,
        &lines,
        args.offset.unwrap_or(0),
        budget,
        "tests",
    )))
}

fn filter_by_symbol(
    items: Vec<TestItem>,
    symbol: &str,
    text_of: impl Fn(&Path) -> String,
) -> Vec<TestItem> {
    let mut out = Vec::new();
    let mut by_file: Vec<(PathBuf, Vec<TestItem>)> = Vec::new();
    for t in items {
        match by_file.iter_mut().find(|(p, _)| *p == t.path) {
            Some((_, v)) => v.push(t),
            None => by_file.push((t.path.clone(), vec![t])),
        }
    }
    for (p, group) in by_file {
        out.extend(mentioning(group, &text_of(&p), symbol));
    }
    out
}

/// `list` with `file`, `line` and `symbol`: the reaching tests.
async fn reaching_answer(
    ctx: &CallCtx,
    shared: &TestShared,
    path: &Path,
    line: usize,
    symbol: &str,
    offset: usize,
) -> Result<ToolOutput, ToolError> {
    let mut reach = crate::reach::reaching(&ctx.run, path, line, symbol).await?;
    let changed = ChangedSymbol {
        path: path.to_path_buf(),
        line,
        name: symbol.to_string(),
        value: false,
    };
    reach.add_recorded(recorded_for(ctx, shared, std::slice::from_ref(&changed)));
    let budget = shared.config.answer_bytes;
    let what = format!("`{symbol}` at {}:{line}", ctx.run.workspace().display(path));
    Ok(reach_text(ctx, &reach, &what, offset, budget))
}

/// The answer naming the tests of `reach`, which reach `what`.
fn reach_text(
    ctx: &CallCtx,
    reach: &crate::reach::Reach,
    what: &str,
    offset: usize,
    budget: usize,
) -> ToolOutput {
    let ws = ctx.run.workspace();
    let lines: Vec<String> = reach
        .tests
        .iter()
        .map(|t| format!("{}:{} {}", ws.display(&t.path), t.line, t.id))
        .collect();
    let n = reach.tests.len();
    let mut head = format!(
        "{n} {} {what}",
        if n == 1 {
            "test reaches"
        } else {
            "tests reach"
        }
    );
    head.push_str(&reach.how());
    let mut text = paged(&head, &lines, offset, budget, "tests");
    if reach.gaps.is_empty() {
        if n == 0 {
            text.push_str(
                "\nno test reaches it through its uses: the search was complete (calls made dynamically are not seen)",
            );
        }
    } else {
        text.push_str("\nnot complete: ");
        text.push_str(&reach.gaps.join("; "));
    }
    ToolOutput::text(text)
}
