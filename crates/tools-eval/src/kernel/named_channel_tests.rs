//! The Python driver in the mode it runs in on Windows (its channel named in the
//! environment, its own pipes for fds 1 and 2, interrupts as bytes on a pipe), run here on
//! Linux with FIFOs standing in for Windows' named pipes: every line of that mode but the
//! one that asks a Windows pipe how much it holds runs, against a real interpreter.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::start::{PYTHON_BOOT, PYTHON_DRIVER};

/// How long any one message may take to come.
const WAIT: Duration = Duration::from_secs(30);

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Opened for reading and writing, so the open never waits for the other side (Linux);
/// the driver's own opens then do not wait either.
fn open_fifo(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open fifo")
}

struct Driver {
    child: std::process::Child,
    commands: File,
    interrupts: File,
    messages: mpsc::Receiver<Value>,
    _dir: tempfile::TempDir,
}

impl Driver {
    fn start(python: &Path) -> Driver {
        let dir = tempfile::tempdir().expect("tempdir");
        let names: Vec<PathBuf> = ["commands", "messages", "interrupts"]
            .iter()
            .map(|n| dir.path().join(n))
            .collect();
        for name in &names {
            mkfifo(name);
        }
        let (commands, message_end, interrupts) = (
            open_fifo(&names[0]),
            open_fifo(&names[1]),
            open_fifo(&names[2]),
        );
        let child = Command::new(python)
            .arg("-c")
            .arg(PYTHON_BOOT)
            .arg(PYTHON_DRIVER)
            .envs(tools_core::platform::CHANNEL_ENV.iter().zip(&names))
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONIOENCODING", "utf-8")
            .env("MPLBACKEND", "Agg")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start python");
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(message_end);
            while let Ok(Some(body)) = tools_core::framing::read_frame(&mut reader) {
                let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        Driver {
            child,
            commands,
            interrupts,
            messages,
            _dir: dir,
        }
    }

    fn next(&self) -> Value {
        self.messages.recv_timeout(WAIT).expect("a message in time")
    }

    fn send(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).expect("json");
        tools_core::framing::write_frame(&mut self.commands, &body).expect("send");
    }

    fn execute(&mut self, id: u64, code: &str) {
        self.send(
            &json!({"type": "execute", "id": id, "cell": id, "code": code,
            "head": 10_000, "tail": 10_000}),
        );
    }

    /// The cell's messages up to its `done`: (what it printed, the rest without heartbeats).
    fn until_done(&self, first: Vec<Value>) -> (String, Vec<Value>) {
        let mut printed = String::new();
        let mut rest = Vec::new();
        let mut pending = first.into_iter();
        loop {
            let msg = pending.next().unwrap_or_else(|| self.next());
            match msg["type"].as_str() {
                Some("stream") => printed.push_str(msg["text"].as_str().unwrap_or_default()),
                Some("done") => {
                    rest.push(msg);
                    return (printed, rest);
                }
                _ => rest.push(msg),
            }
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_python_driver_runs_over_named_pipes_with_its_own_output_pipes_and_byte_interrupts() {
    let Some(python) = tools_core::process::which("python3") else {
        eprintln!("SKIPPED: no python3 on PATH");
        return;
    };
    let mut driver = Driver::start(&python);
    let ready = driver.next();
    assert_eq!(
        (ready["type"].as_str(), ready["language"].as_str()),
        (Some("ready"), Some("python"))
    );

    // A print of the cell, a subprocess writing to the inherited fd 1 (the driver's own
    // pipe), and the value.
    driver.execute(
        1,
        "import subprocess, sys\nprint('from the cell')\n\
         subprocess.run([sys.executable, '-c', 'print(\"from a child\")'])\nanswer = 40 + 2\nanswer",
    );
    let (printed, rest) = driver.until_done(Vec::new());
    assert_eq!(printed, "from the cell\nfrom a child\n");
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(rest[0]["type"], "result");
    assert_eq!(rest[0]["data"]["text/plain"], "42");
    assert_eq!(
        (rest[1]["id"].as_u64(), rest[1]["status"].as_str()),
        (Some(1), Some("ok"))
    );

    // The channel's names are not handed on to what the cell starts.
    driver.execute(
        2,
        "import os\nsorted(k for k in os.environ if k.startswith('AGENT_TOOLS_CHANNEL'))",
    );
    let (_, rest) = driver.until_done(Vec::new());
    assert_eq!(rest[0]["data"]["text/plain"], "[]");

    // A busy loop stopped by a byte on the interrupts pipe.
    driver.execute(3, "sys.stdout.write('looping\\n')\nwhile True:\n    pass");
    let first = driver.next();
    assert_eq!(first["text"], "looping\n");
    driver.interrupts.write_all(b"!").expect("interrupt");
    let (_, rest) = driver.until_done(Vec::new());
    assert_eq!(rest[0]["type"], "error");
    assert_eq!(rest[0]["ename"], "KeyboardInterrupt");
    assert_eq!(
        (rest[1]["id"].as_u64(), rest[1]["status"].as_str()),
        (Some(3), Some("interrupted"))
    );

    // The kernel lives on, with its state.
    driver.execute(4, "answer * 2");
    let (_, rest) = driver.until_done(Vec::new());
    assert_eq!(rest[0]["data"]["text/plain"], "84");

    driver.send(&json!({"type": "shutdown"}));
    let status = driver.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
}
