//! A minimal harness: its own registry wiring two families (file tools and structural
//! search), a write, a search and a staged rewrite accepted — the way an agent runtime that
//! vendors agent-tools would do it. Run with `cargo run -p agent-tools --example minimal_harness`.

use std::sync::Arc;

use serde_json::json;
use tools_core::{RegistryBuilder, Run, RunOptions, Surface};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("agent-tools-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let run = Run::new(RunOptions::at(&dir)?)?;
    let mut builder = RegistryBuilder::new(Arc::clone(&run)).family(tools_fs::family(&run));
    if let Some(ast) = tools_ast::family(&run)? {
        builder = builder.family(ast);
    }
    let registry = builder.build()?;

    let tools: Vec<String> = registry
        .list(Surface::FULL)
        .into_iter()
        .map(|t| format!("{} ({})", t.name, t.tier))
        .collect();
    println!("tools: {}", tools.join(", "));

    let code = "def close(a, b):\n    dispose(a)\n    dispose(b)\n";
    registry
        .call(
            Surface::FULL,
            "write",
            json!({"path": "app.py", "content": code}),
        )
        .await?;
    let found = registry
        .call(
            Surface::FULL,
            "ast_grep",
            json!({"pattern": "dispose($X)", "path": "app.py"}),
        )
        .await?;
    println!("{}", found.text);
    let staged = registry
        .call(
            Surface::FULL,
            "ast_edit",
            json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()", "path": "app.py"}),
        )
        .await?;
    println!("{}", staged.text);
    let edit_id = staged
        .structured
        .as_ref()
        .and_then(|s| s.get("edit_id"))
        .and_then(|v| v.as_str())
        .ok_or("ast_edit returned no edit_id")?
        .to_string();
    let accepted = registry
        .call(
            Surface::FULL,
            "resolve",
            json!({"edit_id": edit_id, "action": "accept"}),
        )
        .await?;
    println!("{}", accepted.text);
    println!("{}", std::fs::read_to_string(dir.join("app.py"))?);

    run.close().await;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
