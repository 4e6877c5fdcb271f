//! Magics beyond the shell ones: `%%writefile` through the run's `write` tool (and its
//! workspace jail), `%autoreload` after a module file is rewritten between cells, and a
//! kernel whose interpreter cannot import IPython (its own magics, and a refusal that names
//! the package for the rest).

use serde_json::json;

use super::common::{env, env_with, python, status};

#[tokio::test]
async fn writefile_goes_through_the_write_tool_and_its_jail() {
    if !python() {
        return;
    }
    let e = env();
    let o = e.py("%%writefile notes.txt\nhello\n").await;
    assert_eq!(o.text, "Writing notes.txt\n");
    let o = e.py("%%writefile notes.txt\nhello again\n").await;
    assert_eq!(o.text, "Overwriting notes.txt\n");
    let o = e.py("%%writefile -a notes.txt\nmore\n").await;
    assert_eq!(o.text, "Appending to notes.txt\n");
    let notes = std::fs::read_to_string(e.dir.path().join("notes.txt")).unwrap();
    assert_eq!(notes, "hello again\nmore\n");
    let o = e.py("%%file sub_module.py\nX = 3\n").await;
    assert_eq!(o.text, "Writing sub_module.py\n");
    assert_eq!(e.py("import sub_module\nsub_module.X").await.text, "3");
    // A write outside the workspace is refused by the write tool's jail, and nothing is written.
    let outside = e
        .dir
        .path()
        .parent()
        .unwrap()
        .join("eval-writefile-escape.txt");
    let o = e
        .py(&format!("%%writefile {}\nescaped\n", outside.display()))
        .await;
    assert_eq!(status(&o), "error", "{}", o.text);
    let err = &o.structured.as_ref().unwrap()["error"];
    assert_eq!(err["ename"], "ToolError");
    let evalue = err["evalue"].as_str().unwrap();
    assert!(
        evalue.starts_with("%%writefile writes through the run's `write` tool: ")
            && evalue.contains("outside"),
        "{}",
        o.text
    );
    assert!(!outside.exists());
}

#[tokio::test]
async fn packages_imported_under_watch_keep_their_own_loader() {
    if !python() {
        return;
    }
    // The kernel sets up IPython and pandas right after their first import; their modules
    // must still answer what their real loader answers (sources, resources).
    let e = env();
    let o = e
        .py("import pandas, IPython, inspect
(inspect.getsource(pandas).startswith('from __future__'), pandas.__loader__.is_package('pandas'), pandas.get_option('display.max_columns'))")
        .await;
    assert_eq!(o.text, "(True, True, 20)");
}

#[tokio::test]
async fn autoreload_picks_up_a_module_rewritten_between_cells() {
    if !python() {
        return;
    }
    let e = env();
    let module = e.dir.path().join("shapes.py");
    let ws = e.run.workspace();
    tools_core::safe_write::write_file(ws, &module, b"def area(w, h):\n    return w * h\n")
        .unwrap();
    let o = e.py("%load_ext autoreload\n%autoreload 2").await;
    assert_eq!(o.text, "(no output)");
    assert_eq!(e.py("import shapes\nshapes.area(3, 4)").await.text, "12");
    // The file is replaced as the edit tool replaces it (a new file renamed over the old).
    tools_core::safe_write::write_file(ws, &module, b"def area(w, h):\n    return w * h / 2\n")
        .unwrap();
    assert_eq!(e.py("shapes.area(3, 4)").await.text, "6.0");
}

#[tokio::test]
async fn without_ipython_the_kernels_own_magics_run_and_the_rest_name_their_package() {
    if !python() {
        return;
    }
    // A virtual environment without site packages: an interpreter that cannot import IPython.
    let venv = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(venv.path())
        .status()
        .unwrap();
    assert!(made.success());
    let python = venv.path().join("bin/python");
    let e = env_with(&format!(
        "[eval]\npython = {:?}\n",
        python.display().to_string()
    ));
    let o = e.py("(int, str)").await;
    assert_eq!(o.text, "(<class 'int'>, <class 'str'>)");
    assert_eq!(o.structured.as_ref().unwrap()["kernel"]["ipython"], false);
    let err = e.py_err("x = 1\n%load_ext autoreload").await;
    assert!(err.contains("`code`") && err.contains("line 2"), "{err}");
    assert!(
        err.contains(
            "`%load_ext` is not a magic of this kernel: its interpreter cannot import IPython, which provides it; it needs IPython (`%pip install ipython`, then run the cell again)"
        ),
        "{err}"
    );
    let err = e.py_err("%memit sum(range(10))").await;
    assert!(
        err.contains("it needs IPython and memory_profiler (`%pip install ipython memory_profiler`, then `%load_ext memory_profiler`)"),
        "{err}"
    );
    let o = e.py("%%writefile plain.txt\nno ipython here\n").await;
    assert_eq!(o.text, "Writing plain.txt\n");
    assert_eq!(
        std::fs::read_to_string(e.dir.path().join("plain.txt")).unwrap(),
        "no ipython here\n"
    );
    let o = e.py("%timeit -n 3 -r 2 sum(range(10))").await;
    let line = o.text.strip_suffix('\n').unwrap();
    assert!(
        line.ends_with(" per loop (mean ± std. dev. of 2 runs, 3 loops each)"),
        "{line}"
    );
    let o = e
        .call(json!({"code": "%time 6 * 7", "description": "time a product without ipython"}))
        .await
        .unwrap();
    let lines: Vec<&str> = o.text.lines().collect();
    assert!(lines[0].starts_with("CPU times: user "), "{}", o.text);
    assert!(lines[1].starts_with("Wall time: "), "{}", o.text);
    assert_eq!(lines[2], "42");
}
