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
    let frame = s["location"]["frame_id"].as_u64().unwrap();

    let stack = fx.ok(json!({"operation":"stack"})).await;
    let names: Vec<&str> = structured(&stack)["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["helper", "main", "<module>"]);

    let vs = fx.locals(frame, |name| name == "Locals").await;
    let n = vs.iter().find(|v| v["name"] == "n").unwrap();
    assert_eq!(n["value"], "20");
    let data = vs.iter().find(|v| v["name"] == "data").unwrap();
    let data_ref = data["reference"].as_u64().unwrap();
    assert!(data_ref > 0);
    let children = fx
        .ok(json!({"operation":"variables","reference":data_ref}))
        .await;
    let cs = structured(&children)["variables"]
        .as_array()
        .unwrap()
        .clone();
    let items = cs.iter().find(|v| v["name"] == "'items'").unwrap();
    assert_eq!(items["value"], "[1, 2, 3]");
    let nested = cs.iter().find(|v| v["name"] == "'nested'").unwrap();
    let nested_children = fx
        .ok(json!({"operation":"variables","reference":nested["reference"]}))
        .await;
    assert!(
        nested_children.text.contains("'k'"),
        "{}",
        nested_children.text
    );
    assert!(
        nested_children.text.contains("[4, 5]"),
        "{}",
        nested_children.text
    );

    let ev = fx
        .ok(json!({"operation":"evaluate","expression":"n * 2 + len(data['items'])"}))
        .await;
    assert_eq!(structured(&ev)["result"], "43");
    let ev = fx
        .ok(json!({"operation":"evaluate","expression":"n","frame_id":frame}))
        .await;
    assert_eq!(structured(&ev)["result"], "20");
    let bad = fx
        .err(json!({"operation":"evaluate","expression":"no_such_name"}))
        .await;
    assert!(bad.to_string().contains("no_such_name"), "{bad}");

    let step = fx.ok(json!({"operation":"step_in"})).await;
    let st = structured(&step);
    assert_eq!(st["reason"], "step");
    assert_eq!(st["location"]["function"], "compute");
    assert_eq!(st["location"]["line"], line_of(APP, "L_total"));
    let step = fx.ok(json!({"operation":"step_over"})).await;
    assert_eq!(
        structured(&step)["location"]["line"],
        line_of(APP, "L_doubled")
    );
    let step = fx.ok(json!({"operation":"step_out"})).await;
    let st = structured(&step);
    assert_eq!(st["reason"], "step");
    assert_eq!(st["location"]["function"], "helper");

    let status = fx.status().await;
    assert_eq!(status["state"], "stopped");
    let (adapter, debuggee) = pids(&fx).await;

    // debugpy treats `sys.exit` with a non-zero code as an uncaught exception and stops.
    let exit = fx.ok(json!({"operation":"continue"})).await;
    let x = structured(&exit);
    assert_eq!(x["reason"], "exception");
    assert!(
        x["exception"].as_str().unwrap().contains("SystemExit"),
        "{x}"
    );
    let end = fx.ok(json!({"operation":"continue"})).await;
    let e = structured(&end);
    assert_eq!(e["state"], "terminated");
    assert_eq!(e["exit_code"], 3);
    assert!(end.text.contains("result 42"), "{}", end.text);
    let out = fx.ok(json!({"operation":"output"})).await;
    assert!(out.text.contains("result 42"), "{}", out.text);
    // An ended program: inspection is refused with a clear message.
    let err = fx.err(json!({"operation":"stack"})).await;
    assert!(err.to_string().contains("ended"), "{err}");
    fx.ok(json!({"operation":"terminate"})).await;
    assert!(gone(debuggee).await, "debuggee {debuggee} still alive");
    assert!(gone(adapter).await, "adapter {adapter} still alive");
    assert_eq!(fx.status().await["state"], "none");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_uncaught_exception_stops_with_its_message() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("requirements.txt", "");
    fx.write(
        "boom.py",
        "def f(x):\n    raise ValueError(f'boom {x}')  # L_raise\n\nf(7)\n",
    );
    let out = fx
        .ok(json!({"operation":"launch","program":"boom.py"}))
        .await;
    let s = structured(&out);
    assert_eq!(s["state"], "stopped");
    assert_eq!(s["reason"], "exception");
    assert_eq!(s["location"]["line"], 2);
    let exc = s["exception"].as_str().unwrap();
    assert!(
        exc.contains("ValueError") && exc.contains("boom 7"),
        "{exc}"
    );
    let end = fx.ok(json!({"operation":"continue"})).await;
    assert_eq!(structured(&end)["state"], "terminated");
    assert_eq!(structured(&end)["exit_code"], 1);
    assert!(end.text.contains("ValueError"), "{}", end.text);
}

/// A program that loops forever. It prints `spinning` from inside the loop, after its first
/// increment, so a test that has seen that line knows a pause lands in `spin` with
/// `counter > 0` (a pause before that, on a loaded machine, may stop it still in `<module>`).
pub const LOOP: &str = r#"import time
counter = 0


def spin():
    global counter
    while True:
        counter += 1  # L_loop
        if counter == 1:
            print("spinning", flush=True)
        if counter % 100000 == 0:
            time.sleep(0.001)


spin()
"#;

/// Polls `output` until the program has printed `needle` (the state a test needs before it
/// acts), within a generous bound for a loaded machine.
pub async fn wait_for_output(fx: &Fixture, needle: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let out = fx.ok(json!({"operation":"output"})).await;
        if out.text.contains(needle) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the program never printed {needle:?}: {}",
            out.text
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pause_stops_an_infinite_loop_after_still_running() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("setup.py", "");
    fx.write("spin.py", LOOP);
    let out = fx
        .ok(json!({"operation":"launch","program":"spin.py","timeout_seconds":1}))
        .await;
    assert_eq!(structured(&out)["state"], "running");
    assert!(out.text.contains("still running"), "{}", out.text);
    // Steps are refused while it runs; continue keeps waiting.
    let err = fx.err(json!({"operation":"step_over"})).await;
    assert!(err.to_string().contains("pause"), "{err}");
    let again = fx
        .ok(json!({"operation":"continue","timeout_seconds":1}))
        .await;
    assert_eq!(structured(&again)["state"], "running");
    // "still running" holds from the moment the process exists; the loop is entered later.
    wait_for_output(&fx, "spinning").await;
    let paused = fx.ok(json!({"operation":"pause"})).await;
    let p = structured(&paused);
    assert_eq!(p["state"], "stopped");
    assert_eq!(p["reason"], "pause");
    assert_eq!(p["location"]["function"], "spin");
    let ev = fx
        .ok(json!({"operation":"evaluate","expression":"counter > 0"}))
        .await;
    assert_eq!(structured(&ev)["result"], "True");
    let printed = fx.ok(json!({"operation":"output"})).await;
    assert!(printed.text.contains("spinning"), "{}", printed.text);
    let threads = fx.ok(json!({"operation":"threads"})).await;
    assert!(threads.text.contains("thread"), "{}", threads.text);
    let again = fx.ok(json!({"operation":"pause"})).await;
    assert!(again.text.contains("already stopped"), "{}", again.text);
    let (_, debuggee) = pids(&fx).await;
    // Running again at terminate time: both processes still end.
    fx.ok(json!({"operation":"continue","timeout_seconds":1}))
        .await;
    fx.ok(json!({"operation":"terminate"})).await;
    assert!(gone(debuggee).await, "debuggee {debuggee} left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn attach_to_a_listening_debuggee_and_suspend_it() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::new("");
    fx.write("pyproject.toml", "");
    let script = fx.write("served.py", &LOOP.replace("spinning", "ready"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let python = tools_core::testing::which("python3").unwrap();
    let mut child = std::process::Command::new(python)
        .args(["-m", "debugpy", "--listen", &format!("127.0.0.1:{port}")])
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut guard = KillOnDrop(child);
    // The script prints once debugpy listens (it listens before running the script).
    let line = tokio::task::spawn_blocking(move || {
        let mut l = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut l).map(|_| l)
    })
    .await
    .unwrap()
    .unwrap();
    assert!(line.contains("ready"), "{line}");
    let out = fx
        .ok(json!({"operation":"attach","port":port,"suspend":true}))
        .await;
    let s = structured(&out);
    assert_eq!(s["state"], "stopped");
    assert_eq!(s["reason"], "pause");
    let ev = fx
        .ok(json!({"operation":"evaluate","expression":"counter > 0"}))
        .await;
    assert_eq!(structured(&ev)["result"], "True");
    // A second attach or a launch is rejected while this session lives.
    let err = fx.err(json!({"operation":"attach","port":port})).await;
    assert!(matches!(err, tools_core::ToolError::Rejected(_)), "{err}");
    assert!(err.to_string().contains("terminate"), "{err}");
    let out = fx.ok(json!({"operation":"terminate"})).await;
    assert!(out.text.contains("detached"), "{}", out.text);
    // The debuggee was not ours: it keeps running after we detach.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        guard.0.try_wait().unwrap().is_none(),
        "the attached debuggee was killed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_launch_leads_with_the_python_it_runs_on() {
    if !has_debugpy() {
        return;
    }
    let fx = Fixture::with_trust("", false);
    fx.write("pyproject.toml", "");
    // The project's environment marks the programs it runs; an untrusted run never uses it.
    fx.project_venv_python();
    fx.write(
        "which.py",
        "import os\nprint('venv', os.environ.get('FROM_PROJECT_VENV'))\n",
    );
    let out = fx
        .ok(json!({"operation":"launch","program":"which.py"}))
        .await;
    assert_eq!(
        out.text.lines().next(),
        Some(
            "untrusted workspace: the program runs on the Python from PATH, not the project's \
             .venv/bin/python, so packages installed only there are missing; start with --trust \
             (or list this folder under [trust] roots in ~/.config/agent-tools/config.toml) to \
             enable it"
        ),
        "{}",
        out.text
    );
    assert!(out.text.lines().any(|l| l == "venv None"), "{}", out.text);
}
