//! Properties of the text layer over generated files: `edit` and `apply_patch` keep the
//! file's line endings (LF or CRLF, also in the new text), its byte-order mark, a missing
//! final line break, and every byte outside the change.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::json;

use super::Ws;

/// A generated file: its lines (each starting with a unique `§n§` tag, so any one of them
/// names one place), its line ending, a BOM or not, a final line break or not.
#[derive(Debug, Clone)]
struct File {
    lines: Vec<String>,
    crlf: bool,
    bom: bool,
    final_break: bool,
}

impl File {
    fn eol(&self) -> &'static str {
        if self.crlf { "\r\n" } else { "\n" }
    }
    /// The bytes on disk with line `at` replaced by `new` (its `\n` in the file's ending;
    /// a file without any line break has no ending of its own, and gets `\n`).
    fn bytes_with(&self, at: Option<(usize, &str)>) -> Vec<u8> {
        let mut lines = self.lines.clone();
        if let Some((i, new)) = at {
            let has_break = self.lines.len() > 1 || self.final_break;
            lines[i] = new.replace('\n', if has_break { self.eol() } else { "\n" });
        }
        let mut s = String::new();
        if self.bom {
            s.push('\u{feff}');
        }
        s.push_str(&lines.join(self.eol()));
        if self.final_break {
            s.push_str(self.eol());
        }
        s.into_bytes()
    }
}

fn file() -> impl Strategy<Value = File> {
    (
        prop::collection::vec("[a-zA-Z0-9 é中\t(){};=+-]{0,14}", 1..10),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(bodies, crlf, bom, final_break)| File {
            lines: bodies
                .into_iter()
                .enumerate()
                .map(|(i, b)| format!("§{i}§{b}"))
                .collect(),
            crlf,
            bom,
            final_break,
        })
}

/// New text for one line: one or two lines of their own, never empty.
fn new_text() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z é中]{1,10}", 1..3)
}

/// One run for all cases of a property, a fresh file name per case.
struct Bench {
    rt: tokio::runtime::Runtime,
    ws: Ws,
    next: std::sync::atomic::AtomicUsize,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            rt: tokio::runtime::Runtime::new().unwrap(),
            ws: Ws::new(),
            next: 0.into(),
        }
    }
    fn fresh(&self, f: &File) -> String {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("f{n}.txt");
        std::fs::write(self.ws.path(&name), f.bytes_with(None)).unwrap();
        name
    }
}

fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[test]
fn edit_changes_exactly_the_chosen_text() {
    let b = Bench::new();
    let strategy = (file(), any::<prop::sample::Index>(), new_text());
    TestRunner::new(cases())
        .run(&strategy, |(f, pick, new)| {
            let name = b.fresh(&f);
            let i = pick.index(f.lines.len());
            let new = new.join("\n");
            b.rt.block_on(b.ws.ok(
                "edit",
                json!({"path": name, "old_string": f.lines[i], "new_string": new}),
            ));
            let on_disk = std::fs::read(b.ws.path(&name)).unwrap();
            let expected = f.bytes_with(Some((i, &new)));
            prop_assert_eq!(
                String::from_utf8_lossy(&on_disk),
                String::from_utf8_lossy(&expected)
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn apply_patch_changes_exactly_the_chosen_line() {
    let b = Bench::new();
    let strategy = (file(), any::<prop::sample::Index>(), new_text());
    TestRunner::new(cases())
        .run(&strategy, |(f, pick, new)| {
            let name = b.fresh(&f);
            let i = pick.index(f.lines.len());
            let added: String = new.iter().map(|l| format!("+{l}\n")).collect();
            let patch = format!(
                "*** Begin Patch\n*** Update File: {name}\n@@\n-{}\n{added}*** End Patch\n",
                f.lines[i]
            );
            b.rt.block_on(b.ws.ok("apply_patch", json!({"patch": patch})));
            let on_disk = std::fs::read(b.ws.path(&name)).unwrap();
            let expected = f.bytes_with(Some((i, &new.join("\n"))));
            prop_assert_eq!(
                String::from_utf8_lossy(&on_disk),
                String::from_utf8_lossy(&expected)
            );
            Ok(())
        })
        .unwrap();
}
