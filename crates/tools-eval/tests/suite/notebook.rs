//! A notebook of the project's own, run cell by cell through `eval` and through ipykernel
//! (jupyter_client, the same interpreter), and compared output by output: every value's and
//! display's MIME types, plain text and HTML digest, every error's name and message, and
//! what the cell printed. Text must be equal, not similar: only the parts that differ
//! between any two runs (object addresses, measured durations, loop counts) are masked.

use std::path::Path;

use serde_json::{Value, json};

use super::common::{env, python};

/// One step of the notebook: a cell, or a file rewritten between cells (as an agent's edit
/// tool would rewrite a module the notebook imports).
enum Step {
    Cell(&'static str),
    Write(&'static str, &'static str),
}
use Step::{Cell, Write};

const NOTEBOOK: &[Step] = &[
    Cell("import numpy as np\nimport pandas as pd\nimport matplotlib.pyplot as plt"),
    // Series and DataFrames of several sizes.
    Cell("pd.Series([1.5, 2.5, 3.5], name='price')"),
    Cell("pd.Series(range(100))"),
    Cell(
        "sales = pd.Series(np.arange(12) * 1.5, index=pd.date_range('2024-01-01', periods=12, freq='MS'), name='sales')\nsales",
    ),
    Cell("df = pd.DataFrame({'a': range(5), 'b': list('vwxyz'), 'c': np.linspace(0, 1, 5)})\ndf"),
    Cell("pd.DataFrame(np.arange(600).reshape(100, 6), columns=list('abcdef'))"),
    Cell("pd.DataFrame(np.arange(60).reshape(2, 30))"),
    Cell("df.describe()"),
    // Values IPython's pretty printer shows differently from repr.
    Cell("(np.ndarray, int, pd.DataFrame)"),
    Cell("list(range(40))"),
    Cell("{'key_%d' % i: i * i for i in range(12)}"),
    Cell("{3, 1, 2}"),
    Cell("np.arange(12).reshape(3, 4)"),
    Cell("print('hello')\n6 * 7"),
    // Plots.
    Cell("fig, ax = plt.subplots()\nax.plot([1, 3, 2])\nax.set_title('line')"),
    Cell("plt.plot([1, 2, 3]);"),
    Cell("df.plot(x='a', y='c')"),
    Cell(
        "from IPython.display import display, HTML, Markdown\ndisplay(HTML('<b>bold</b>'))\ndisplay(Markdown('*it*'))\ndisplay(df.head(2))",
    ),
    // Errors on purpose.
    Cell("print('before')\n1 / 0"),
    Cell("undefined_name"),
    Cell("%nosuchmagic"),
    // Magics.
    Cell("%xmode Minimal"),
    Cell("int('x')"),
    Cell("%time total = sum(range(1000))\ntotal"),
    Cell("%timeit -n 10 -r 3 sum(range(100))"),
    Cell("files = !printf 'a\\nb\\n'\nfiles"),
    Cell("%%writefile shapes_mod.py\ndef area(w, h):\n    return w * h\n"),
    Cell("%load_ext autoreload\n%autoreload 2"),
    Cell("import shapes_mod\nshapes_mod.area(3, 4)"),
    Write("shapes_mod.py", "def area(w, h):\n    return w * h / 2\n"),
    Cell("shapes_mod.area(3, 4)"),
    Cell("%reload_ext autoreload\n%autoreload 2"),
    Write("shapes_mod.py", "def area(w, h):\n    return (w + h) * 2\n"),
    Cell("shapes_mod.area(3, 4)"),
];

/// The line `%timeit` prints first when its slowest run took over four times the fastest,
/// which only the machine's load decides.
const SLOW_RUN_WARNING: (&str, &str) = (
    "The slowest run took ",
    " times longer than the fastest. This could mean that an intermediate result is being cached.\n",
);

/// Masks what differs between any two runs of the same cell: object addresses, measured
/// durations (IPython's format: `1.23 ms`), the loop count `%timeit` picks, and its
/// slow-run warning.
fn mask(text: &str) -> String {
    let without_warning: String = text
        .split_inclusive('\n')
        .filter(|line| {
            line.strip_prefix(SLOW_RUN_WARNING.0)
                .and_then(|l| l.strip_suffix(SLOW_RUN_WARNING.1))
                .is_none_or(|ratio| ratio.parse::<f64>().is_err())
        })
        .collect();
    let text = without_warning.as_str();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let word_goes_on = out.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if let Some(hex) = rest.strip_prefix("0x")
            && !word_goes_on
        {
            let n = hex.chars().take_while(char::is_ascii_hexdigit).count();
            if n > 0 {
                out.push_str("0x…");
                rest = &hex[n..];
                continue;
            }
        }
        let digits = rest
            .char_indices()
            .take_while(|(_, c)| c.is_ascii_digit() || *c == '.')
            .last()
            .map(|(i, c)| i + c.len_utf8());
        if let Some(end) = digits
            && !word_goes_on
        {
            let after = &rest[end..];
            let unit = ["s", "ms", "\u{3bc}s", "ns"].iter().find(|u| {
                after
                    .strip_prefix(' ')
                    .and_then(|a| a.strip_prefix(**u))
                    .is_some_and(|a| !a.starts_with(char::is_alphanumeric))
            });
            if let Some(unit) = unit {
                out.push_str("<duration>");
                rest = &after[1 + unit.len()..];
                continue;
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A rich output as both sides are compared: its type, MIME types, masked text, HTML digest.
fn comparable(output: &Value) -> Value {
    json!({
        "output_type": output["output_type"],
        "mime_types": output["mime_types"],
        "text": output["text"].as_str().map(mask),
        "html_sha256": output["html_sha256"],
    })
}

fn run_peer(steps_dir: &Path) -> Vec<Value> {
    let steps: Vec<Value> = NOTEBOOK
        .iter()
        .map(|s| match s {
            Cell(code) => json!({"code": code}),
            Write(path, content) => json!({"write": path, "content": content}),
        })
        .collect();
    let file = steps_dir.join("steps.json");
    std::fs::write(&file, serde_json::to_string(&steps).unwrap()).unwrap();
    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/notebook/ipykernel_peer.py");
    let out = std::process::Command::new("python3")
        .arg(&peer)
        .arg(&file)
        .current_dir(steps_dir)
        .env_remove("MPLBACKEND")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the ipykernel side failed (ipykernel and jupyter_client come with xtask/components/eval.toml): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn every_cell_shows_what_ipykernel_shows() {
    if !python() {
        return;
    }
    let peer_dir = tempfile::tempdir().unwrap();
    let expected = run_peer(peer_dir.path());
    let e = env();
    let mut differences = Vec::new();
    for (step, want) in NOTEBOOK.iter().zip(&expected) {
        let code = match step {
            Write(path, content) => {
                let path = e.dir.path().join(path);
                tools_core::safe_write::write_file(e.run.workspace(), &path, content.as_bytes())
                    .unwrap();
                continue;
            }
            Cell(code) => *code,
        };
        let got = e.py(code).await;
        let s = got.structured.as_ref().unwrap();
        let ours_outputs: Vec<Value> = s["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(comparable)
            .collect();
        let want_outputs: Vec<Value> = want["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(comparable)
            .collect();
        if ours_outputs != want_outputs {
            differences.push(format!(
                "cell {code:?}: outputs differ\n  eval:      {}\n  ipykernel: {}",
                serde_json::to_string(&ours_outputs).unwrap(),
                serde_json::to_string(&want_outputs).unwrap()
            ));
        }
        if s["error"] != want["error"] {
            differences.push(format!(
                "cell {code:?}: error differs\n  eval:      {}\n  ipykernel: {}",
                s["error"], want["error"]
            ));
        }
        // What the cell printed leads the answer, exactly as the notebook shows it.
        let printed = want["streams"]["stdout"].as_str().unwrap_or_default();
        let answer = mask(&got.text);
        if !answer.starts_with(&mask(printed)) {
            differences.push(format!(
                "cell {code:?}: printed text differs\n  eval:      {:?}\n  ipykernel: {:?}",
                answer,
                mask(printed)
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} cells differ from ipykernel:\n{}",
        differences.len(),
        NOTEBOOK.len(),
        differences.join("\n")
    );
}

#[test]
fn masking_hides_only_addresses_and_durations() {
    assert_eq!(
        mask("[<matplotlib.lines.Line2D at 0x7f3a2c1b9d90>]"),
        "[<matplotlib.lines.Line2D at 0x…>]"
    );
    assert_eq!(
        mask("CPU times: user 12 \u{3bc}s, sys: 0 ns, total: 12 \u{3bc}s\nWall time: 1.5 ms\n"),
        "CPU times: user <duration>, sys: <duration>, total: <duration>\nWall time: <duration>\n"
    );
    assert_eq!(
        mask(
            "The slowest run took 7.19 times longer than the fastest. This could mean that an intermediate result is being cached.\n1.2 \u{3bc}s \u{b1} 3 ns per loop\n"
        ),
        "<duration> \u{b1} <duration> per loop\n"
    );
    assert_eq!(mask("x2 s and 10 seconds"), "x2 s and 10 seconds");
    assert_eq!(
        mask("<Figure size 640x480 with 1 Axes>"),
        "<Figure size 640x480 with 1 Axes>"
    );
}
