//! What a session leaves behind, with real debugpy: breakpoints end with `terminate` unless
//! the caller keeps them, every launch lists the ones it applies, and `scopes` without a
//! frame answers for the top frame of the stopped thread.

use serde_json::json;
use tools_core::ToolOutput;

use super::common::*;

const SCRIPT: &str = r#"def area(width, height):
    size = width * height  # L_size
    return size


def main():
    total = 0
    for w in range(3):
        total += area(w, 2)  # L_loop
    print("total", total)


main()
"#;

fn fixture() -> Fixture {
    let fx = Fixture::new("");
    fx.write("pyproject.toml", "[project]\nname='shapes'\n");
    fx.write("shapes.py", SCRIPT);
    fx
}

/// The fixture with a breakpoint at `L_size`, launched: the line and the launch's answer,
/// checked to have stopped at that breakpoint.
async fn launched_to_the_breakpoint() -> (Fixture, u64, ToolOutput) {
    let fx = fixture();
    let line = line_of(SCRIPT, "L_size");
    fx.ok(json!({"operation":"breakpoints","file":"shapes.py","lines":[line]}))
        .await;
    let out = fx
        .ok(json!({"operation":"launch","program":"shapes.py"}))
        .await;
    assert_eq!(structured(&out)["reason"], "breakpoint", "{}", out.text);
    (fx, line, out)
}

#[tokio::test(flavor = "multi_thread")]
async fn terminate_clears_the_breakpoints_unless_asked_to_keep_them() {
    if !has_debugpy() {
        return;
    }
    let (fx, line, out) = launched_to_the_breakpoint().await;
    assert!(
        out.text.contains("breakpoints applied") && out.text.contains(&format!("shapes.py:{line}")),
        "{}",
        out.text
    );
    let end = fx.ok(json!({"operation":"terminate"})).await;
    assert!(
        end.text.contains("1 breakpoint(s) in 1 file(s) cleared"),
        "{}",
        end.text
    );
    assert_eq!(structured(&end)["breakpoints_cleared"], 1);

    // The next launch has no breakpoint from the terminated session: it runs to the end.
    let out = fx
        .ok(json!({"operation":"launch","program":"shapes.py"}))
        .await;
    let s = structured(&out);
    assert_eq!(s["state"], "terminated", "{}", out.text);
    assert_eq!(s["exit_code"], 0);
    assert!(out.text.contains("total 6"), "{}", out.text);
    assert!(!out.text.contains("breakpoints applied"), "{}", out.text);
    fx.ok(json!({"operation":"terminate"})).await;

    // Kept on request: the next launch stops there again and says why.
    fx.ok(json!({"operation":"breakpoints","file":"shapes.py","lines":[line]}))
        .await;
    fx.ok(json!({"operation":"launch","program":"shapes.py"}))
        .await;
    let end = fx
        .ok(json!({"operation":"terminate","keep_breakpoints":true}))
        .await;
    assert!(
        end.text.contains("kept for the next launch"),
        "{}",
        end.text
    );
    let out = fx
        .ok(json!({"operation":"launch","program":"shapes.py"}))
        .await;
    assert_eq!(structured(&out)["reason"], "breakpoint", "{}", out.text);
    assert_eq!(structured(&out)["location"]["line"], line);
    assert!(out.text.contains("breakpoints applied"), "{}", out.text);
    fx.ok(json!({"operation":"terminate"})).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn scopes_without_a_frame_are_the_top_frames_scopes() {
    if !has_debugpy() {
        return;
    }
    let (fx, _, out) = launched_to_the_breakpoint().await;
    let top = structured(&out)["location"]["frame_id"].as_u64().unwrap();
    let scopes = fx.ok(json!({"operation":"scopes"})).await;
    let s = structured(&scopes);
    assert_eq!(s["frame_id"], top, "{s}");
    let locals = s["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|sc| sc["name"] == "Locals")
        .unwrap_or_else(|| panic!("no Locals in {s}"))["reference"]
        .clone();
    let vars = fx
        .ok(json!({"operation":"variables","reference":locals}))
        .await;
    let names: Vec<&str> = structured(&vars)["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"width") && names.contains(&"height"),
        "{names:?}"
    );
    // After stepping out, the top frame is `main`'s: its scopes, not the old frame's.
    let out = fx.ok(json!({"operation":"step_out"})).await;
    assert_eq!(structured(&out)["location"]["function"], "main");
    let scopes = fx.ok(json!({"operation":"scopes"})).await;
    let main_frame = structured(&out)["location"]["frame_id"].clone();
    assert_eq!(structured(&scopes)["frame_id"], main_frame);
    assert_ne!(structured(&scopes)["frame_id"], top);
    fx.ok(json!({"operation":"terminate"})).await;
}
