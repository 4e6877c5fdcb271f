//! Python cells on the real interpreter: notebook semantics, display, magics, failures.

use serde_json::json;

use super::common::*;

/// The default answer budget of a cell: 4000 characters (`[eval] max_output_chars`), about
/// 4 KB of ASCII text once the cut markers' ellipses (3 bytes each) are counted.
const ANSWER_BUDGET: usize = 4096;

#[tokio::test]
async fn state_persists_and_the_last_expression_is_displayed() {
    if !python() {
        return;
    }
    let e = env();
    let o = e.py("x = 40\nimport math").await;
    assert_eq!(o.text, "(no output)");
    assert_eq!(status(&o), "ok");
    let o = e.py("print('hello')\nx + 2").await;
    assert_eq!(o.text, "hello\n42");
    assert_eq!(o.structured.as_ref().unwrap()["result"], "42");
    // A trailing semicolon suppresses the display, as in a notebook.
    let o = e.py("x + 1;").await;
    assert_eq!(o.text, "(no output)");
    let o = e.py("math.sqrt(x + 9)").await;
    assert_eq!(o.text, "7.0");
    // Top-level await works and keeps state too.
    let o = e.py("import asyncio\nasync def f():\n    await asyncio.sleep(0)\n    return 5\ny = await f()\ny * 2").await;
    assert_eq!(o.text, "10");
}

#[tokio::test]
async fn display_pandas_and_rich_reprs() {
    if !python() {
        return;
    }
    let e = env();
    let o = e
        .py("display('first', 3)\nclass Md:\n    def _repr_markdown_(self):\n        return '**bold**'\nMd()")
        .await;
    assert_eq!(o.text, "'first'\n3\n**bold**");
    let o = e
        .py("import pandas as pd\ndf = pd.DataFrame({'a': range(100), 'b': [i * 2 for i in range(100)]})\ndf")
        .await;
    assert!(o.text.contains("a    b"), "{}", o.text);
    assert!(o.text.contains("99  198"), "{}", o.text);
    assert!(o.text.contains("[100 rows x 2 columns]"), "{}", o.text);
    assert!(o.text.contains(".."), "a long frame is capped: {}", o.text);
    assert!(o.text.lines().count() < 70);
    let o = e.py("df['b'].head(3)").await;
    assert!(o.text.contains("Name: b"), "{}", o.text);
}

#[tokio::test]
async fn matplotlib_figures_come_back_as_bounded_png_images() {
    if !python() {
        return;
    }
    let e = env();
    let o = e
        .py("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('t')\nprint('plotted')")
        .await;
    assert_eq!(o.images.len(), 1, "{}", o.text);
    let (w, h) = tools_eval::png_size(&o.images[0].png).expect("a real PNG");
    assert_eq!((w, h), (640, 480));
    assert!(
        o.text.starts_with("plotted\n[image 1: 640x480 PNG]"),
        "{}",
        o.text
    );
    // The figure was closed: the next cell shows nothing.
    let o = e.py("1").await;
    assert!(o.images.is_empty());
    // A huge figure is downscaled, two figures give two images.
    let o = e
        .py("fig = plt.figure(figsize=(40, 20), dpi=100)\nplt.plot([1, 2])\nplt.figure()\nplt.plot([2, 1]);")
        .await;
    assert_eq!(o.images.len(), 2, "{}", o.text);
    let sizes: Vec<_> = o
        .images
        .iter()
        .map(|i| tools_eval::png_size(&i.png).unwrap())
        .collect();
    assert!(
        sizes.iter().all(|(w, h)| *w <= 1024 && *h <= 1024),
        "{sizes:?}"
    );
    assert_eq!(sizes[0], (1024, 512));
    // _repr_png_ is honoured.
    let o = e
        .py("class P:\n    def _repr_png_(self):\n        import io\n        f = plt.figure(figsize=(1, 1))\n        b = io.BytesIO()\n        f.savefig(b, format='png')\n        plt.close(f)\n        return b.getvalue()\nP()")
        .await;
    assert_eq!(o.images.len(), 1, "{}", o.text);
    assert_eq!(tools_eval::png_size(&o.images[0].png), Some((100, 100)));
}

#[tokio::test]
async fn tracebacks_are_trimmed_with_cell_line_numbers() {
    if !python() {
        return;
    }
    let e = env();
    let o = e
        .py("print('before')\ndef f(n):\n    return 1 / n\n\nf(0)")
        .await;
    assert_eq!(status(&o), "error");
    assert!(
        o.text
            .starts_with("before\nTraceback (most recent call last):"),
        "{}",
        o.text
    );
    assert!(
        o.text.contains("File \"<cell 1>\", line 5, in <module>"),
        "{}",
        o.text
    );
    assert!(
        o.text.contains("File \"<cell 1>\", line 3, in f"),
        "{}",
        o.text
    );
    assert!(o.text.contains("    return 1 / n"), "{}", o.text);
    assert!(
        o.text.contains("ZeroDivisionError: division by zero"),
        "{}",
        o.text
    );
    assert!(
        !o.text.contains("eval-kernel"),
        "driver frames are trimmed: {}",
        o.text
    );
    assert_eq!(
        o.structured.as_ref().unwrap()["error"]["ename"],
        "ZeroDivisionError"
    );
    // Line numbers stay right below a rewritten magic.
    let o = e.py("!true\nx = 1\nraise ValueError('boom')").await;
    assert!(o.text.contains("line 3"), "{}", o.text);
    let o = e.py("def broken(:\n  pass").await;
    assert!(o.text.contains("SyntaxError"), "{}", o.text);
    // The kernel survives all of that.
    assert_eq!(e.py("x").await.text, "1");
}

#[tokio::test]
async fn shell_magics_and_subprocess_output_are_captured() {
    if !python() {
        return;
    }
    let e = env();
    let o = e
        .py("import subprocess, os\nsubprocess.run(['echo', 'from-child'])\nos.system('echo from-system >&2')\nprint('py')")
        .await;
    assert_eq!(o.text, "from-child\nfrom-system\npy\n");
    // Each child's output lands before the print that follows its wait, every time.
    let o = e
        .py("for i in range(20):\n    os.system(f'echo c{i}')\n    print(f'p{i}')")
        .await;
    let expected: String = (0..20).map(|i| format!("c{i}\np{i}\n")).collect();
    assert_eq!(o.text, expected);
    let o = e.py("!echo bang\nfiles = !printf 'a\\nb\\n'\nfiles").await;
    assert_eq!(o.text, "bang\n['a', 'b']");
    let o = e.py("!exit 3").await;
    assert!(o.text.contains("(exit code 3)"), "{}", o.text);
    let o = e.py("%%bash\necho one\necho two >&2\n").await;
    assert_eq!(o.text, "one\ntwo\n");
    std::fs::create_dir(e.dir.path().join("sub")).unwrap();
    let o = e
        .py("%cd sub\nimport os\nos.path.basename(os.getcwd())")
        .await;
    assert!(o.text.ends_with("'sub'"), "{}", o.text);
    let o = e.py("%pwd").await;
    assert!(o.text.ends_with("/sub'"), "{}", o.text);
    let o = e
        .py("%env EVAL_TEST_VAR=hello\nos.environ['EVAL_TEST_VAR']")
        .await;
    assert_eq!(o.text, "env: EVAL_TEST_VAR=hello\n'hello'");
    let o = e.py("%env EVAL_TEST_VAR").await;
    assert_eq!(o.text, "'hello'");
    let o = e.py("%time z = sum(range(1000))\nz").await;
    assert_time_report(&o.text, "499500");
    let o = e.py("%timeit -n 5 -r 2 sum(range(10))").await;
    assert_timeit_report(&o.text, "2 runs, 5 loops each");
    let o = e.py("%%timeit data = list(range(50))\nsorted(data)").await;
    assert!(o.text.ends_with(" loops each)\n"), "{}", o.text);
    assert!(
        o.text.contains("(mean ± std. dev. of 7 runs, "),
        "{}",
        o.text
    );
    let o = e.py("%matplotlib inline\n'ok'").await;
    assert_eq!(o.text, "'ok'");
}

/// A duration as IPython prints it: three significant digits and a unit (μ is U+03BC).
fn is_ipython_duration(s: &str) -> bool {
    let Some((number, unit)) = s.split_once(' ') else {
        return false;
    };
    number.parse::<f64>().is_ok() && ["s", "ms", "\u{3bc}s", "ns"].contains(&unit)
}

/// `%time`'s two lines in IPython's format, then the value.
fn assert_time_report(text: &str, value: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let cpu = lines[0].strip_prefix("CPU times: user ").expect(text);
    let (user, rest) = cpu.split_once(", sys: ").expect(text);
    let (sys, total) = rest.split_once(", total: ").expect(text);
    for d in [user, sys, total] {
        assert!(is_ipython_duration(d), "{d:?} in {text}");
    }
    let wall = lines[1].strip_prefix("Wall time: ").expect(text);
    assert!(is_ipython_duration(wall), "{wall:?} in {text}");
    assert_eq!(lines[2], value, "{text}");
}

/// `%timeit`'s line in IPython's format, after the warning IPython prints first when the
/// slowest run took more than four times the fastest (a loaded machine does that to a
/// nanosecond-scale statement).
fn assert_timeit_report(text: &str, runs: &str) {
    let mut line = text.strip_suffix('\n').expect(text);
    if let Some((warning, report)) = line.split_once('\n') {
        let ratio = warning
            .strip_prefix("The slowest run took ")
            .and_then(|w| w.strip_suffix(" times longer than the fastest. This could mean that an intermediate result is being cached."))
            .expect(text);
        assert!(ratio.parse::<f64>().is_ok_and(|r| r > 4.0), "{text}");
        line = report;
    }
    let (mean, rest) = line.split_once(" ± ").expect(text);
    let (std, rest) = rest
        .split_once(" per loop (mean ± std. dev. of ")
        .expect(text);
    assert!(
        is_ipython_duration(mean) && is_ipython_duration(std),
        "{text}"
    );
    assert_eq!(rest, format!("{runs})"), "{text}");
}

#[tokio::test]
async fn ipython_magics_run_and_an_unknown_one_is_a_usage_error() {
    if !python() {
        return;
    }
    let e = env();
    let o = e.py("x = 1\n%nosuchmagic 3").await;
    assert_eq!(status(&o), "error");
    assert_eq!(
        o.text,
        "UsageError: Line magic function `%nosuchmagic` not found."
    );
    assert_eq!(e.py("x").await.text, "1");
    let o = e.py("%xmode Minimal").await;
    assert_eq!(o.text, "Exception reporting mode: Minimal\n");
    let o = e
        .py("def f(n):\n    return sum(i * i for i in range(n))\n%prun -l 3 f(1000)")
        .await;
    assert_eq!(status(&o), "ok", "{}", o.text);
    assert!(o.text.contains(" function calls in "), "{}", o.text);
    assert!(o.text.contains("Ordered by: internal time"), "{}", o.text);
}

#[tokio::test]
async fn unknown_magics_and_bad_arguments_are_refused_before_running() {
    if !python() {
        return;
    }
    let e = env();
    let err = e.call(json!({"code": "1"})).await.unwrap_err().to_string();
    assert!(err.contains("description"), "{err}");
    let err = e
        .call(json!({"code": "1", "description": "a b c d e", "language": "ruby"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("language"), "{err}");
    // Nothing ran: the kernel was never started for the refused cells.
    assert_eq!(e.py("'x' in dir()").await.text, "False");
}

#[tokio::test]
async fn a_description_outside_five_to_ten_words_runs_with_a_note() {
    if !python() {
        return;
    }
    let e = env();
    let out = e
        .call(json!({"code": "x = 20\nx * 2", "description": "double it"}))
        .await
        .unwrap();
    assert_eq!(
        out.text,
        "40\n[note: the description has 2 words (5–10 are asked); the label is \"double it (python cell 1)\"]"
    );
    let s = out.structured.unwrap();
    assert_eq!(s["label"], "double it (python cell 1)");
    assert_eq!(s["status"], "ok");
    let long = "compute the answer to the question of life the universe and everything";
    let out = e
        .call(json!({"code": "x + 2", "description": long}))
        .await
        .unwrap();
    assert_eq!(
        out.text,
        "22\n[note: the description has 12 words (5–10 are asked); the label keeps the first 10: \"compute the answer to the question of life the universe …\"]"
    );
    // A description of the asked length gets no note.
    let out = e.py("x").await;
    assert_eq!(out.text, "20");
    assert_eq!(
        out.structured.unwrap()["label"],
        "run a small python test cell"
    );
}

#[tokio::test]
async fn pip_install_of_a_local_wheel_is_importable_at_once() {
    if !python() {
        return;
    }
    let e = env();
    // Build a tiny wheel with no network: a setuptools project, `pip wheel --no-build-isolation`.
    let pkg = e.dir.path().join("pkgsrc");
    std::fs::create_dir_all(pkg.join("evaltestpkg")).unwrap();
    std::fs::write(
        pkg.join("setup.py"),
        "from setuptools import setup\nsetup(name='evaltestpkg', version='1.0', packages=['evaltestpkg'])\n",
    )
    .unwrap();
    std::fs::write(pkg.join("evaltestpkg/__init__.py"), "VALUE = 'v1'\n").unwrap();
    let target = e.dir.path().join("site");
    // Install into a private target dir so the shared environment is left alone.
    let o = e
        .py(&format!(
            "import sys\nsys.path.insert(0, {t:?})\n%pip wheel --no-deps --no-build-isolation --no-index -w {w:?} {p:?}\nimport os\nsorted(f for f in os.listdir({w:?}) if f.endswith('.whl'))",
            t = target.display().to_string(),
            w = e.dir.path().join("wheels").display().to_string(),
            p = pkg.display().to_string(),
        ))
        .await;
    assert!(
        o.text.contains("evaltestpkg-1.0-py3-none-any.whl"),
        "{}",
        o.text
    );
    let wheel = e.dir.path().join("wheels/evaltestpkg-1.0-py3-none-any.whl");
    let o = e
        .py("try:\n    import evaltestpkg\nexcept ImportError as err:\n    print('missing:', err.name)")
        .await;
    assert_eq!(o.text, "missing: evaltestpkg\n");
    let o = e
        .py(&format!(
            "%pip install --no-deps --no-index --target {t:?} {w:?}\nimport evaltestpkg\nevaltestpkg.VALUE",
            t = target.display().to_string(),
            w = wheel.display().to_string(),
        ))
        .await;
    assert!(o.text.ends_with("'v1'"), "{}", o.text);
    // A new version of the same package replaces the imported one after %pip.
    std::fs::write(pkg.join("evaltestpkg/__init__.py"), "VALUE = 'v2'\n").unwrap();
    std::fs::write(
        pkg.join("setup.py"),
        "from setuptools import setup\nsetup(name='evaltestpkg', version='2.0', packages=['evaltestpkg'])\n",
    )
    .unwrap();
    let o = e
        .py(&format!(
            "%pip install --no-deps --no-index --no-build-isolation --upgrade --target {t:?} {p:?}\nimport evaltestpkg\nevaltestpkg.VALUE",
            t = target.display().to_string(),
            p = pkg.display().to_string(),
        ))
        .await;
    assert!(o.text.ends_with("'v2'"), "{}", o.text);
    // A failing %pip raises in the cell, with pip's own message above.
    let o = e
        .py("%pip install --no-index no-such-package-evaltest")
        .await;
    assert_eq!(status(&o), "error");
    assert!(o.text.contains("pip exited with code"), "{}", o.text);
}

#[tokio::test]
async fn a_gigabyte_print_stays_bounded() {
    if !python() {
        return;
    }
    let e = env();
    let o = e
        .py("import sys\nprint('START')\nfor _ in range(1024):\n    sys.stdout.write('x' * (1 << 20))\nprint()\nprint('END')")
        .await;
    assert!(o.text.starts_with("START\nxxxx"), "{}", &o.text[..100]);
    assert!(o.text.trim_end().ends_with("END"), "tail kept");
    assert!(
        o.text.len() <= ANSWER_BUDGET,
        "bounded: {} bytes",
        o.text.len()
    );
    let s = o.structured.as_ref().unwrap();
    let cut = s["cut_chars"].as_u64().unwrap();
    assert!(cut > 1_073_000_000, "{cut}");
    assert!(
        o.text.contains(&format!(
            "[cut: {cut} characters of output not shown; print a slice of it, or write it to a file"
        )),
        "{}",
        o.text
    );
    // fd-level output is bounded the same way.
    let o = e.py("!yes | head -c 50000000").await;
    assert!(o.text.len() <= ANSWER_BUDGET);
    assert!(
        o.structured.as_ref().unwrap()["cut_chars"]
            .as_u64()
            .unwrap()
            > 49_000_000
    );
}

#[tokio::test]
async fn reset_starts_a_clean_kernel() {
    if !python() {
        return;
    }
    let e = env();
    e.py("kept = 1").await;
    let o = e
        .call(json!({"code": "'kept' in dir()", "description": "check that the state was discarded", "reset": true}))
        .await
        .unwrap();
    assert_eq!(o.text, "[reset: a clean python kernel was started]\nFalse");
    let o = e
        .call(json!({"code": "", "description": "just reset the python kernel now", "reset": true}))
        .await
        .unwrap();
    assert!(o.text.contains("nothing ran"), "{}", o.text);
}

#[tokio::test]
async fn os_exit_and_segfault_give_a_clear_error_and_a_fresh_kernel() {
    if !python() {
        return;
    }
    let e = env();
    e.py("state = 'here'").await;
    let err = e
        .py_err("print('about to exit')\nimport os\nos._exit(3)")
        .await;
    assert!(err.contains("exited with code 3"), "{err}");
    assert!(err.contains("variables are lost"), "{err}");
    assert!(
        err.contains("about to exit"),
        "partial output is kept: {err}"
    );
    let o = e.py("'state' in dir()").await;
    assert_eq!(
        o.text,
        "[a fresh python kernel was started: the previous one exited with code 3 during a cell; its variables and imports are gone]\nFalse"
    );
    let err = e.py_err("import ctypes\nctypes.string_at(0)").await;
    assert!(err.contains("signal 11 (SIGSEGV"), "{err}");
    assert!(
        err.contains("Segmentation fault"),
        "the fault handler's report is quoted: {err}"
    );
    assert_eq!(e.py("1 + 1").await.text.lines().last(), Some("2"));
}

#[tokio::test]
async fn idle_budget_interrupts_a_busy_loop_and_keeps_state() {
    if !python() {
        return;
    }
    let e = env_with("[eval]\nidle_timeout_secs = 0.5\ninterrupt_grace_secs = 3\n");
    e.py("counter = 0").await;
    let o = e
        .py("print('working')\nwhile True:\n    counter += 1")
        .await;
    assert_eq!(status(&o), "interrupted");
    assert!(o.text.starts_with("working\n"), "{}", o.text);
    assert!(
        o.text
            .contains("[interrupted: no output and no tool call for"),
        "{}",
        o.text
    );
    assert!(o.text.contains("state survived"), "{}", o.text);
    assert_eq!(o.structured.as_ref().unwrap()["kernel"]["state_kept"], true);
    let o = e.py("counter > 0").await;
    assert_eq!(o.text, "True");
    // A cell that keeps printing is not idle.
    let o = e
        .py("import time\nfor i in range(6):\n    print(i)\n    time.sleep(0.1)")
        .await;
    assert_eq!(status(&o), "ok");
    assert_eq!(o.text, "0\n1\n2\n3\n4\n5\n");
}

#[tokio::test]
async fn idle_budget_kills_a_block_the_interrupt_cannot_reach() {
    if !python() {
        return;
    }
    let e = env_with("[eval]\nidle_timeout_secs = 0.5\ninterrupt_grace_secs = 0.5\n");
    e.py("lost = 1").await;
    // With SIGINT blocked the interpreter never sees the interrupt: the same as native code
    // that never returns to it.
    let o = e
        .py("import signal, time\nprint('blocking')\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\ntime.sleep(60)")
        .await;
    assert_eq!(status(&o), "killed");
    assert!(o.text.starts_with("blocking\n"), "{}", o.text);
    assert!(o.text.contains("[killed:"), "{}", o.text);
    assert!(o.text.contains("state is lost"), "{}", o.text);
    let o = e.py("'lost' in dir()").await;
    assert!(o.text.ends_with("False"), "{}", o.text);
    assert!(
        o.text
            .contains("was killed when a cell outlasted its idle budget"),
        "{}",
        o.text
    );
}

#[tokio::test]
async fn input_and_exit_do_not_hang_or_kill_the_kernel() {
    if !python() {
        return;
    }
    let e = env();
    let o = e.py("x = 5\ninput('name? ')").await;
    assert!(o.text.contains("input() is not available"), "{}", o.text);
    let o = e.py("import sys\nsys.exit(2)").await;
    assert_eq!(status(&o), "error");
    assert!(o.text.contains("SystemExit: 2"), "{}", o.text);
    assert_eq!(e.py("x").await.text, "5");
}

#[tokio::test]
async fn every_part_of_the_default_answer_stays_within_its_budget() {
    if !python() {
        return;
    }
    let e = env();
    // Output, a large value and a long traceback in one cell: a log line per record, then a
    // frame as the last value, then an error with a long message.
    let o = e
        .py("for i in range(5000):\n    print(f'record {i}: status=ok latency_ms={i % 97}')\nbig = {f'key_{i}': list(range(20)) for i in range(2000)}\nbig")
        .await;
    assert!(o.text.len() <= ANSWER_BUDGET, "{} bytes", o.text.len());
    assert!(o.text.starts_with("record 0: status=ok"), "{}", o.text);
    assert!(
        o.text
            .contains("characters of output not shown; print a slice"),
        "{}",
        o.text
    );
    assert!(
        o.text
            .contains("characters of the value not shown; print a slice"),
        "{}",
        o.text
    );
    // IPython's pretty printer shows the first 1000 items of a long dict, as a notebook does.
    assert!(
        o.text.trim_end().ends_with("19],\n ...}"),
        "the value's tail is kept: {}",
        o.text
    );
    let s = o.structured.as_ref().unwrap();
    assert!(serde_json::to_string(s).unwrap().len() <= 2 * ANSWER_BUDGET);
    assert!(s["output_chars"].as_u64().unwrap() > 150_000);
    let o = e
        .py("raise ValueError('bad record: ' + 'y' * 50_000)")
        .await;
    assert_eq!(status(&o), "error");
    assert!(o.text.len() <= ANSWER_BUDGET, "{} bytes", o.text.len());
    assert!(o.text.contains("ValueError: bad record"), "{}", o.text);
    assert!(o.text.contains("of the traceback not shown"), "{}", o.text);
    // The budget is the configuration's.
    let e = env_with("[eval]\nmax_output_chars = 12000\n");
    let o = e.py("print('z' * 50_000)").await;
    assert!(
        (10_000..=12_300).contains(&o.text.len()),
        "{} bytes",
        o.text.len()
    );
}
