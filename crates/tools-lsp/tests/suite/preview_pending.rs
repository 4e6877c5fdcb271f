//! A preview made while an earlier write's late diagnostics are still coming: it first
//! waits for what that write was waiting for, so nothing the write caused enters the
//! prediction; it shows those late arrivals as that write's, and leaves them to it — the
//! next write names them again.

use std::collections::BTreeSet;

use serde_json::json;
use tools_core::testing::require_binary;

use super::noisy_python::{
    CORE, TOTAL_BROKEN, TOTAL_OK, late_block, listed, noisy_project_with, pyright_cli,
};
use super::section;

#[tokio::test]
async fn a_preview_waits_for_a_pending_write_and_leaves_its_late_arrivals_to_it() {
    if require_binary("pyright", "pyright-langserver").is_none() {
        return;
    }
    // Every settle after a change is cut after 1 ms: the break's result is given before
    // pyright has re-checked the callers, and they arrive while the fix is previewed.
    let config = "[lsp]\nindex_wait_ms = 60000\ndiagnostics_wait_ms = 1\nstart_timeout_ms = 60000\n[lsp.servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\n";
    let p = noisy_project_with(config);
    let before = pyright_cli(&p.root());
    let ok = p.read(CORE);
    let broken = ok.replace(TOTAL_OK, TOTAL_BROKEN);
    p.write(CORE, &broken);
    let expected: BTreeSet<String> = pyright_cli(&p.root())
        .difference(&before)
        .cloned()
        .collect();
    p.write(CORE, &ok);
    assert_eq!(expected.len(), 21, "{expected:#?}");
    // A query starts the server; the writes come once its first analysis is over (a write
    // during it is judged otherwise: `noisy_python`, `long_first_analysis`).
    p.ok(json!({"action": "hover", "file": "src/ledgerkit/use.py", "line": 6, "symbol": "total"}))
        .await;
    p.wait_for_the_first_analysis().await;

    let b = section(p.write_tool(CORE, &broken).await);
    assert!(
        b.starts_with("diagnostics pending — pyright-langserver had not settled after 1 ms"),
        "{b}"
    );
    let own = listed(&b);
    assert!(own.is_subset(&expected), "{b}");

    // The fix, previewed: it predicts nothing new — none of the break's late arrivals —
    // and names them as write #1's.
    let pv = p.preview(CORE, &ok).await;
    assert_eq!(listed(&pv.text), BTreeSet::new(), "{}", pv.text);
    let late: BTreeSet<String> = expected.difference(&own).cloned().collect();
    let shown = late_block(&pv.text).map(|(n, lines, _)| (n, lines));
    if late.is_empty() {
        assert_eq!(shown, None, "{}", pv.text);
    } else {
        assert_eq!(shown, Some((1, late.clone())), "{}", pv.text);
    }
    p.discard(&pv.id).await;

    // The write of the fix still names them as write #1's, and nothing as its own.
    let f = section(p.write_tool(CORE, &ok).await);
    assert_eq!(listed(&f), BTreeSet::new(), "{f}");
    let named = late_block(&f).map(|(n, lines, _)| (n, lines));
    if late.is_empty() {
        assert_eq!(named, None, "{f}");
    } else {
        assert_eq!(named, Some((1, late)), "{f}");
    }
    p.close_and_check().await;
}
