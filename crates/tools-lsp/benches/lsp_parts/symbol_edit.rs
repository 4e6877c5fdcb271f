//! A symbol edit against a string edit of the same change, both through `edit` with
//! diagnostics on write, on one warm pyright, order alternating: the body of `area` is
//! broken and fixed by name (`symbol: "area", body: ...`, resolved through pyright's
//! document symbols and the Python grammar) and by quoting its text (`old_string`). Target:
//! the symbol edit ≤ 1.2× the string edit.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tools_core::{RegistryBuilder, Run, Surface};
use tools_lsp::ServerSupervisor;

use crate::{ms, p50, smoke, write};

const OK: &str = "return w * h";
const BROKEN: &str = "return str(w * h)";

/// Runs the comparison on `root` (a Python project already holding `pyproject.toml`).
pub async fn bench_symbol_edit(run: &Arc<Run>, sup: &Arc<ServerSupervisor>) {
    let root = run.root().to_path_buf();
    write(
        &root,
        "area.py",
        &format!("def area(w: int, h: int) -> int:\n    {OK}\n"),
    );
    write(
        &root,
        "use_area.py",
        "from area import area\n\nprint(area(2, 3))\n",
    );
    // The run's symbol sources: the server's document symbols first, the grammar for bodies.
    tools_core::SymbolSources::for_run(run)
        .register(Arc::new(tools_lsp::ServerSymbols::new(Arc::clone(sup))));
    tools_core::SymbolSources::for_run(run).register(Arc::new(tools_ast::GrammarSymbols));
    let observer = Arc::new(tools_lsp::observer::DiagnosticsOnWrite::new(Arc::clone(
        sup,
    )));
    let reg = match RegistryBuilder::new(Arc::clone(run))
        .family(tools_fs::family(run))
        .observer(observer)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lsp bench (symbol edit): {e}");
            return;
        }
    };
    let by_text =
        |from: &str, to: &str| json!({"path": "area.py", "old_string": from, "new_string": to});
    let by_name = |to: &str| json!({"path": "area.py", "symbol": "area", "body": to});
    // Warm: the file open and its symbols read once each way.
    let _ = reg.call(Surface::FULL, "edit", by_name(BROKEN)).await;
    let _ = reg.call(Surface::FULL, "edit", by_text(BROKEN, OK)).await;
    let n = if smoke() { 1 } else { 10 };
    let mut texts: Vec<Duration> = Vec::new();
    let mut names: Vec<Duration> = Vec::new();
    let mut sample = String::new();
    // Breaking writes whose answer named the new error, per side: both sides must do the
    // same work for the ratio to mean anything.
    let mut reported = [0usize; 2];
    for i in 0..n {
        // Each side breaks and fixes; which side goes first alternates.
        for side in [i % 2, 1 - i % 2] {
            for (from, to) in [(OK, BROKEN), (BROKEN, OK)] {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let args = if side == 0 {
                    by_text(from, to)
                } else {
                    by_name(to)
                };
                let t = Instant::now();
                let r = reg.call(Surface::FULL, "edit", args).await;
                let took = t.elapsed();
                match r {
                    Ok(out) => {
                        let text = out.full_text();
                        if to == BROKEN && text.contains("\n## diagnostics\n") {
                            reported[side] += 1;
                        }
                        if side == 1 && to == BROKEN && sample.is_empty() {
                            sample = text.replace('\n', " | ");
                        }
                    }
                    Err(e) => eprintln!("edit failed: {e}"),
                }
                if side == 0 {
                    texts.push(took);
                } else {
                    names.push(took);
                }
            }
        }
    }
    let (t, s) = (p50(texts.clone()), p50(names.clone()));
    let ratio = ms(s) / ms(t).max(0.001);
    println!(
        "symbol edit vs string edit of the same change, both with diagnostics on write (p50 of {}):",
        names.len()
    );
    println!("  (a symbol edit's answer: {sample})");
    println!(
        "  breaking edits whose answer named the new error: by text {} of {n}, by name {} of {n}",
        reported[0], reported[1]
    );
    println!(
        "  edit by text {:>8.2} ms   edit by name {:>8.2} ms   ratio {ratio:.2}x (target <= 1.2x): {}",
        ms(t),
        ms(s),
        if ratio <= 1.2 { "met" } else { "NOT met" }
    );
}
