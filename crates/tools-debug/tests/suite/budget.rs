//! The answer budget of `debug` listings: on a deep stack, a large variable and a long
//! output, each default answer stays within about 4 KB, says how to get more, and `offset`
//! returns the rest.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::common::*;

/// Text budget of a listing answer, and of its structured result (twice: JSON repeats
/// field names).
const TEXT_BUDGET: usize = 4096;
const STRUCTURED_BUDGET: usize = 8192;

const DEEP: &str = r#"import sys

def descend_through_the_configuration_resolver(level, registry):
    if level == 0:
        return registry  # L_bottom
    return descend_through_the_configuration_resolver(level - 1, registry)


def main():
    for i in range(400):
        print(f"worker {i}: processed batch {i * 7} with status ok and latency {i % 13} ms")
    sys.stdout.flush()
    registry = {f"service_{i:03}": "endpoint-" + "x" * 150 + str(i) for i in range(120)}
    descend_through_the_configuration_resolver(60, registry)


main()
"#;

fn structured_len(out: &tools_core::ToolOutput) -> usize {
    serde_json::to_string(structured(out)).unwrap().len()
}

fn assert_in_budget(out: &tools_core::ToolOutput) {
    assert!(
        out.text.len() <= TEXT_BUDGET,
        "text {} bytes:\n{}",
        out.text.len(),
        out.text
    );
    assert!(
        structured_len(out) <= STRUCTURED_BUDGET,
        "structured {} bytes",
        structured_len(out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_stacks_big_variables_and_long_output_page_within_the_budget() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("pyproject.toml", "[project]\nname='x'\n");
    fx.write("deep.py", DEEP);
    let bottom = line_of(DEEP, "L_bottom");
    fx.ok(json!({"operation":"breakpoints","file":"deep.py","lines":[bottom]}))
        .await;
    let out = fx
        .ok(json!({"operation":"launch","program":"deep.py"}))
        .await;
    assert_eq!(structured(&out)["state"], "stopped", "{}", out.text);

    // The stack: 63 frames, 30 per answer at most, as many as fit; `offset` pages on.
    let stack = fx.ok(json!({"operation":"stack"})).await;
    assert_in_budget(&stack);
    let total = structured(&stack)["total"].as_u64().unwrap() as usize;
    assert!(total > 60, "{total}");
    let mut functions = Vec::new();
    let mut page = stack;
    loop {
        let s = structured(&page).clone();
        let frames = s["frames"].as_array().unwrap();
        assert!(!frames.is_empty());
        assert!(frames.len() <= 30);
        functions.extend(
            frames
                .iter()
                .map(|f| f["function"].as_str().unwrap().to_string()),
        );
        let Some(next) = s["next_offset"].as_u64() else {
            break;
        };
        assert!(
            page.text
                .contains(&format!("pass `offset: {next}` for the next ones")),
            "{}",
            page.text
        );
        page = fx.ok(json!({"operation":"stack","offset":next})).await;
        assert_in_budget(&page);
    }
    assert!(functions.len() >= 62, "{}", functions.len());
    assert_eq!(functions.last().map(String::as_str), Some("<module>"));
    assert_eq!(functions[functions.len() - 2], "main");

    // The big variable: 120 children with long values; each page within budget.
    let registry = fx
        .ok(json!({"operation":"evaluate","expression":"registry"}))
        .await;
    let reference = structured(&registry)["reference"].as_u64().unwrap();
    let mut seen = BTreeSet::new();
    let mut offset: Option<u64> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"operation":"variables","reference":reference});
        if let Some(o) = offset {
            args["offset"] = json!(o);
        }
        let page = fx.ok(args).await;
        assert_in_budget(&page);
        pages += 1;
        let s = structured(&page);
        for v in s["variables"].as_array().unwrap() {
            seen.insert(v["name"].as_str().unwrap().to_string());
        }
        match s["next_offset"].as_u64() {
            Some(next) => {
                assert!(
                    page.text.contains(&format!("pass `offset: {next}`")),
                    "{}",
                    page.text
                );
                offset = Some(next);
            }
            None => break,
        }
        assert!(pages < 100);
    }
    let services = seen.iter().filter(|n| n.contains("service_")).count();
    assert_eq!(services, 120, "{seen:?}");
    assert!(pages > 3, "{pages} pages");

    // The output: its latest part by default, the rest by `offset`.
    let output = fx.ok(json!({"operation":"output"})).await;
    assert_in_budget(&output);
    assert!(
        output.text.contains("worker 399: processed batch 2793"),
        "{}",
        output.text
    );
    assert!(
        output
            .text
            .contains("earlier characters not shown: pass `offset: "),
        "{}",
        output.text
    );
    let first = fx.ok(json!({"operation":"output","offset":0})).await;
    assert_in_budget(&first);
    assert!(
        first.text.contains("worker 0: processed batch 0"),
        "{}",
        first.text
    );
    let next: Value = structured(&first)["next_offset"].clone();
    assert!(next.as_u64().unwrap() > 3000, "{next}");
    fx.ok(json!({"operation":"terminate"})).await;
}
