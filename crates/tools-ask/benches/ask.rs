//! Benchmark of the question machinery against the floor it is built on.
//!
//! - channel round trip: `ask_user` through a registry and the channel gate, answered at
//!   once by a harness task, against a bare mpsc + oneshot round trip.
//! - terminal round trip: `ask_user` through the terminal gate on a real pseudo-terminal,
//!   answered by a thread that types `1` when the prompt appears, against writing a line
//!   into the same kind of pseudo-terminal and reading it back on the other side.
//!
//! Prints medians and the ratio ours / floor; never a pass/fail. `-- --smoke` runs a few
//! rounds of each.

#[cfg(unix)]
use std::fs::File;
#[cfg(unix)]
use std::io::{BufRead, BufReader, Read, Write};
#[cfg(unix)]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tools_ask::{ChannelGate, Reply};
use tools_core::{Config, Registry, RegistryBuilder, Run, RunOptions, Surface};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn row(name: &str, ours: Duration, floor: Duration) {
    println!(
        "{name:<28} ours {:>9.3} ms   floor {:>9.3} ms   ratio {:>6.2}",
        ours.as_secs_f64() * 1e3,
        floor.as_secs_f64() * 1e3,
        ours.as_secs_f64() / floor.as_secs_f64().max(1e-9)
    );
}

fn registry(gate: Arc<dyn tools_ask::QuestionGate>) -> Res<(tempfile::TempDir, Arc<Registry>)> {
    let dir = tempfile::tempdir()?;
    let run = Run::new(RunOptions {
        root: dir.path().into(),
        conversation_id: format!("ask-bench-{}", std::process::id()),
        config: Config::empty(),
        trusted: false,
    })?;
    let family = tools_ask::family(&run, Some(gate))?.ok_or("no gate")?;
    Ok((dir, RegistryBuilder::new(run).family(family).build()?))
}

fn question(i: usize) -> serde_json::Value {
    // Distinct questions: a repeated skipped question would be refused, not asked.
    json!({"question": format!("Which one? ({i})"), "options": [{"label": "a"}, {"label": "b"}]})
}

async fn channel(rounds: usize) -> Res<(Duration, Duration)> {
    let (gate, mut cards) = ChannelGate::channel(1);
    tokio::spawn(async move {
        while let Some(p) = cards.recv().await {
            p.reply(Reply::Answered {
                selected: vec!["a".into()],
                text: None,
            });
        }
    });
    let (_d, reg) = registry(Arc::new(gate))?;
    let mut ours = Vec::new();
    for i in 0..rounds {
        let t = Instant::now();
        reg.call(Surface::FULL, "ask_user", question(i)).await?;
        ours.push(t.elapsed());
    }
    let (tx, mut rx) = tokio::sync::mpsc::channel::<tokio::sync::oneshot::Sender<u32>>(1);
    tokio::spawn(async move {
        while let Some(r) = rx.recv().await {
            let _ = r.send(1);
        }
    });
    let mut floor = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let (otx, orx) = tokio::sync::oneshot::channel();
        tx.send(otx).await?;
        orx.await?;
        floor.push(t.elapsed());
    }
    Ok((median(ours), median(floor)))
}

#[cfg(unix)]
fn openpty() -> Res<(File, File, std::path::PathBuf)> {
    let (mut m, mut s): (libc::c_int, libc::c_int) = (-1, -1);
    // SAFETY: openpty fills the two out-parameters; the optional ones are null.
    let rc = unsafe {
        libc::openpty(
            &mut m,
            &mut s,
            std::ptr::null_mut(),
            // Mutable on macOS, `const` on Linux: a null of either kind fits both.
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: both descriptors were just returned by openpty and are owned here.
    let (m, s) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
    let path = std::fs::read_link(format!("/proc/self/fd/{}", s.as_raw_fd()))?;
    Ok((File::from(m), File::from(s), path))
}

#[cfg(unix)]
async fn terminal(rounds: usize) -> Res<(Duration, Duration)> {
    let (master, _slave, path) = openpty()?;
    let mut reader = master.try_clone()?;
    let mut writer = master;
    // The human: types `1` whenever a prompt appears.
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut tail = String::new();
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.push_str(&String::from_utf8_lossy(&buf[..n]));
            if tail.ends_with("> ") {
                tail.clear();
                let _ = writer.write_all(b"1\n");
            }
            if tail.len() > 8192 {
                tail.drain(..4096);
            }
        }
    });
    let (_d, reg) = registry(Arc::new(tools_ask::TerminalGate::with_device(&path)))?;
    let mut ours = Vec::new();
    for i in 0..rounds {
        let t = Instant::now();
        reg.call(Surface::FULL, "ask_user", question(i)).await?;
        ours.push(t.elapsed());
    }
    // Floor: one line through a pseudo-terminal's line discipline.
    let (mut master, slave, _) = openpty()?;
    let mut lines = BufReader::new(slave);
    let mut floor = Vec::new();
    let mut line = String::new();
    for _ in 0..rounds {
        let t = Instant::now();
        master.write_all(b"1\n")?;
        line.clear();
        lines.read_line(&mut line)?;
        floor.push(t.elapsed());
    }
    Ok((median(ours), median(floor)))
}

/// `-- --smoke`: one short trial of every measure, to show the bench runs.
fn smoke() -> bool {
    std::env::args().any(|a| a == "--smoke")
}

fn main() -> Res<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let (channel_rounds, terminal_rounds) = if smoke() { (3, 3) } else { (2000, 200) };
        let (o, f) = channel(channel_rounds).await?;
        row("channel round trip", o, f);
        #[cfg(unix)]
        {
            let (o, f) = terminal(terminal_rounds).await?;
            row("terminal round trip (pty)", o, f);
        }
        #[cfg(not(unix))]
        println!(
            "terminal round trip (pty): not measured, this OS has no pseudo-terminals ({terminal_rounds} rounds asked)"
        );
        Ok(())
    })
}
