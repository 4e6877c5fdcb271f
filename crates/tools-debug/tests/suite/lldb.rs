//! lldb-dap on a C program built with `gcc -g`.

use serde_json::json;

use super::common::*;

const PROG: &str = r#"#include <stdio.h>

static int square(int x) {
    int result = x * x; /* L_square */
    return result;
}

int main(void) {
    int base = 7;
    int total = square(base); /* L_call */
    printf("total=%d\n", total);
    return total - 40; /* L_ret */
}
"#;

/// The lldb-dap binary the adapter table would pick, or a recorded skip.
fn lldb_available() -> bool {
    let found = [
        "lldb-dap",
        "lldb-dap-22",
        "lldb-dap-21",
        "lldb-dap-20",
        "lldb-dap-19",
    ]
    .iter()
    .find_map(|b| tools_core::testing::which(b));
    match found {
        Some(_) => {
            tools_core::testing::exercised("lldb-dap");
            true
        }
        None => {
            tools_core::testing::skipped(
                "lldb-dap",
                "no lldb-dap or lldb-dap-NN on PATH (apt-get install lldb-22)",
            );
            false
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn breakpoint_locals_step_and_exit_code() {
    if !lldb_available() || tools_core::testing::require_binary("gcc", "gcc").is_none() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("CMakeLists.txt", "project(x C)\n");
    let src = fx.write("main.c", PROG);
    let bin = fx.root().join("prog");
    let st = std::process::Command::new("gcc")
        .args(["-g", "-O0", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let call = line_of(PROG, "L_call");
    fx.ok(json!({"operation":"breakpoints","file":"main.c","lines":[call]}))
        .await;
    let out = fx.ok(json!({"operation":"launch","program":"prog"})).await;
    let s = structured(&out);
    assert_eq!(s["state"], "stopped");
    assert_eq!(s["reason"], "breakpoint");
    assert_eq!(s["location"]["path"], "main.c");
    assert_eq!(s["location"]["line"], call);
    assert_eq!(s["location"]["function"], "main");
    assert!(out.text.contains("square(base)"), "{}", out.text);
    assert!(out.text.contains("verified"), "{}", out.text);
    let frame = s["location"]["frame_id"].as_u64().unwrap();
    let vs = fx
        .locals(frame, |name| name.to_lowercase().contains("local"))
        .await;
    let base = vs.iter().find(|v| v["name"] == "base").unwrap();
    assert_eq!(base["value"], "7");
    let ev = fx
        .ok(json!({"operation":"evaluate","expression":"base * 3"}))
        .await;
    assert_eq!(structured(&ev)["result"], "21");

    let step = fx.ok(json!({"operation":"step_in"})).await;
    let st = structured(&step);
    assert_eq!(st["reason"], "step");
    assert_eq!(
        st["location"]["function"]
            .as_str()
            .map(|f| f.contains("square")),
        Some(true)
    );
    let step = fx.ok(json!({"operation":"step_out"})).await;
    assert_eq!(structured(&step)["location"]["function"], "main");
    let step = fx.ok(json!({"operation":"step_over"})).await;
    assert_eq!(structured(&step)["reason"], "step");

    let status = fx.status().await;
    let adapter = status["adapter_pid"].as_i64().unwrap();
    let end = fx.ok(json!({"operation":"continue"})).await;
    let e = structured(&end);
    assert_eq!(e["state"], "terminated");
    assert_eq!(e["exit_code"], 9);
    let out = fx.ok(json!({"operation":"output"})).await;
    assert!(out.text.contains("total=49"), "{}", out.text);
    fx.ok(json!({"operation":"terminate"})).await;
    assert!(gone(adapter).await, "lldb-dap {adapter} left behind");
}
