//! debugpy on Python scripts.

use serde_json::json;

use super::common::*;

const APP: &str = r#"import sys


def compute(a, b):
    total = a + b  # L_total
    doubled = total * 2  # L_doubled
    return doubled


def helper(n):
    data = {"name": "x", "items": [1, 2, 3], "nested": {"k": [4, 5]}}
    result = compute(n, 1)  # L_call
    return result, data  # L_return


def main():
    value = helper(20)  # L_main
    print("result", value[0])
    sys.exit(3)


main()
"#;

#[tokio::test(flavor = "multi_thread")]
async fn breakpoint_stack_variables_evaluate_steps_and_exit_code() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("pyproject.toml", "[project]\nname='x'\n");
    fx.write("app.py", APP);
    let call_line = line_of(APP, "L_call");
    let out = fx
        .ok(json!({"operation":"breakpoints","file":"app.py","lines":[call_line]}))
        .await;
    assert!(out.text.contains("kept"), "{}", out.text);
    let out = fx
        .ok(json!({"operation":"launch","program":"app.py"}))
        .await;
    let s = structured(&out);
    assert_eq!(s["state"], "stopped");
    assert_eq!(s["reason"], "breakpoint");
    assert_eq!(s["location"]["path"], "app.py");
    assert_eq!(s["location"]["line"], call_line);
    assert_eq!(s["location"]["function"], "helper");
    assert!(out.text.contains("result = compute(n, 1)"), "{}", out.text);
    assert!(
        out.text.contains(&format!("app.py:{call_line}")),
        "{}",
        out.text
    );
}
