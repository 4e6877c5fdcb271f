//! The outline of a big real module (CPython's `argparse.py`, copied from the Python that
//! runs the tests): within the default budget it shows every top-level symbol, members
//! counted, and `symbol` lists one class's members.

use serde_json::json;
use tools_core::testing::require_binary;

use super::{Project, has};

/// A big module takes pyright a while on a loaded machine.
const PYRIGHT: &str = "[lsp]\nrequest_timeout_ms = 120000\nindex_wait_ms = 60000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";

/// The text of CPython's `argparse.py` from the `python3` on `PATH`.
fn argparse_source() -> Option<String> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import argparse; print(argparse.__file__)"])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    std::fs::read_to_string(path.trim()).ok()
}

/// The 1-based line of the first line starting with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

#[tokio::test]
async fn a_big_module_shows_every_top_level_symbol_first() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    let Some(source) = argparse_source() else {
        eprintln!("[skip] no python3 with argparse");
        return;
    };
    let p = Project::new(&[("pyproject.toml", ""), ("argparse.py", &source)], PYRIGHT);
    let out = p
        .lsp(json!({"action": "symbols", "file": "argparse.py"}))
        .await
        .unwrap();
    let text = out.text.clone();
    if std::env::var_os("LSP_TEST_ECHO").is_some() {
        eprintln!("{text}");
    }
    assert!(text.len() <= 4096, "{} bytes:\n{text}", text.len());
    let s = out.structured.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Every class of the module is listed, in file order, the parser among them.
    let classes: Vec<&str> = source
        .lines()
        .filter(|l| l.starts_with("class "))
        .map(|l| l["class ".len()..].split(['(', ':']).next().unwrap())
        .collect();
    let shown_classes: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("class "))
        .map(|l| l["class ".len()..].split(' ').next().unwrap())
        .collect();
    assert_eq!(shown_classes, classes, "{text}");
    let parser = line_of(&source, "class ArgumentParser(");
    let members = s["collapsed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ArgumentParser")
        .map(|c| c["members"].as_u64().unwrap());
    let parser_line = match members {
        Some(n) => format!("class ArgumentParser  line {parser}  (+{n} member(s))"),
        None => format!("class ArgumentParser  line {parser}"),
    };
    assert!(
        lines.contains(&parser_line.as_str()),
        "{parser_line:?} in:\n{text}"
    );
    assert!(members.is_some_and(|n| n > 20), "{text}");
    has(lines.last().unwrap(), "member(s) of");
    has(lines.last().unwrap(), "pass `symbol: ");

    // One class's members by name.
    let out = p
        .ok(json!({"action": "symbols", "file": "argparse.py", "symbol": "ArgumentParser"}))
        .await;
    let parse_args = line_of(&source, "    def parse_args(");
    let head = out.lines().next().unwrap();
    assert!(
        head.ends_with("symbol(s) in argparse.py, `ArgumentParser` and its members:"),
        "{out}"
    );
    assert_eq!(
        out.lines().nth(1).unwrap(),
        format!("class ArgumentParser  line {parser}")
    );
    assert!(
        out.lines()
            .any(|l| l == format!("  method parse_args  line {parse_args}")),
        "{out}"
    );
    let err = p
        .err(json!({"action": "symbols", "file": "argparse.py", "symbol": "NoSuchParser"}))
        .await
        .to_string();
    has(
        &err,
        "no symbol named `NoSuchParser` in the outline of argparse.py; its top-level symbols: ",
    );
    p.close_and_check().await;
}
