//! delve (`dlv dap`, over TCP) on a Go program.

use serde_json::json;

use super::common::*;

const MAIN: &str = r#"package main

import "fmt"

func add(a int, b int) int {
	sum := a + b // L_sum
	return sum
}

func main() {
	names := []string{"x", "y"}
	n := add(2, 3) // L_call
	fmt.Println("n =", n, len(names))
}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn breakpoint_locals_and_continue_to_the_end() {
    if tools_core::testing::require_binary("delve", "dlv").is_none()
        || tools_core::testing::require_binary("golang-go", "go").is_none()
    {
        return;
    }
    let fx = Fixture::new("");
    fx.write("svc/go.mod", "module example.com/svc\n\ngo 1.19\n");
    fx.write("svc/main.go", MAIN);
    let call = line_of(MAIN, "L_call");
    fx.ok(json!({"operation":"breakpoints","file":"svc/main.go","lines":[call]}))
        .await;
    // Cold builds take a few seconds; give the first stop room.
    let out = fx
        .ok(json!({"operation":"launch","program":"svc","timeout_seconds":120}))
        .await;
    let s = structured(&out);
    assert_eq!(s["state"], "stopped");
    assert_eq!(s["reason"], "breakpoint");
    assert_eq!(s["location"]["path"], "svc/main.go");
    assert_eq!(s["location"]["line"], call);
    assert_eq!(s["location"]["function"], "main.main");
    let frame = s["location"]["frame_id"].as_u64().unwrap();
    let names = fx
        .locals(frame, |name| name == "Locals")
        .await
        .iter()
        .find(|v| v["name"] == "names")
        .cloned()
        .unwrap();
    assert!(
        names["value"].as_str().unwrap().contains("\"x\""),
        "{names}"
    );
    let kids = fx
        .ok(json!({"operation":"variables","reference":names["reference"]}))
        .await;
    assert!(kids.text.contains("\"y\""), "{}", kids.text);
    let step = fx.ok(json!({"operation":"step_in"})).await;
    assert_eq!(structured(&step)["location"]["function"], "main.add");
    let status = fx.status().await;
    let adapter = status["adapter_pid"].as_i64().unwrap();
    let end = fx.ok(json!({"operation":"continue"})).await;
    let e = structured(&end);
    assert_eq!(e["state"], "terminated");
    assert!(end.text.contains("n = 5 2"), "{}", end.text);
    // delve reports the exit status only in a console message; it is read from there.
    assert_eq!(e["exit_code"], 0, "{e}");
    fx.ok(json!({"operation":"terminate"})).await;
    assert!(gone(adapter).await, "dlv {adapter} left behind");
    // The build output went to the run's scratch folder, not the module.
    let leftovers: Vec<_> = std::fs::read_dir(fx.root().join("svc"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("debug_bin") || n.contains("debug-bin"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
