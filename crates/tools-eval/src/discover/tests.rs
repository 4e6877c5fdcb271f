//! Which interpreter a kernel runs, on Unix's project layouts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn exe(p: &Path, body: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
    tools_core::platform::make_executable(p).unwrap();
}

#[test]
fn prefers_the_project_venv_then_config() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv/bin/python");
    exe(&venv, "\x7fELF");
    let trusted = ProgramSearch::new(dir.path(), true);
    let found = find_python(&trusted, None).unwrap();
    assert_eq!(
        found.path.canonicalize().unwrap(),
        venv.canonicalize().unwrap()
    );
    assert!(found.why.contains("venv/"));
    let dotvenv = dir.path().join(".venv/bin/python");
    exe(&dotvenv, "\x7fELF");
    assert_eq!(
        find_python(&trusted, None)
            .unwrap()
            .path
            .canonicalize()
            .unwrap(),
        dotvenv.canonicalize().unwrap()
    );
    let custom = dir.path().join("tools/py");
    exe(&custom, "\x7fELF");
    let found = find_python(&trusted, Some(Path::new("tools/py"))).unwrap();
    assert_eq!(
        found.path.canonicalize().unwrap(),
        custom.canonicalize().unwrap()
    );
    assert!(found.why.contains("agent-tools.toml"));
    let err = find_python(&trusted, Some(Path::new("nope/py"))).unwrap_err();
    assert!(err.contains("not an executable"), "{err}");
    // Untrusted: neither the project's venv nor a path inside the workspace runs.
    let untrusted = ProgramSearch::new(dir.path(), false);
    if let Ok(found) = find_python(&untrusted, None) {
        assert!(!found.path.starts_with(untrusted.workspace()), "{found:?}");
        assert!(found.why.contains("--trust"), "{}", found.why);
    }
    let err = find_python(&untrusted, Some(Path::new("tools/py"))).unwrap_err();
    assert!(err.contains("untrusted workspace"), "{err}");
}

#[test]
fn detects_launcher_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let shim = dir.path().join("shim");
    exe(&shim, "#!/bin/sh\nexec true\n");
    assert!(is_script(&shim));
    let bin = dir.path().join("bin");
    exe(&bin, "\x7fELF....");
    assert!(!is_script(&bin));
    // A launcher is asked once for the interpreter it runs, in the workspace.
    let launcher = dir.path().join("python3");
    exe(&launcher, "#!/bin/sh\necho \"$PWD/real\"\n");
    let real = dir.path().join("real");
    exe(&real, "\x7fELF....");
    assert_eq!(
        resolve_python_launcher(&launcher, dir.path(), true),
        Some(real)
    );
    let broken = dir.path().join("broken");
    exe(&broken, "#!/bin/sh\nexit 1\n");
    assert_eq!(resolve_python_launcher(&broken, dir.path(), true), None);
}

#[test]
fn a_hung_probe_is_killed_with_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let hung = dir.path().join("hung");
    // A launcher that starts a child which hangs, and hangs itself.
    exe(
        &hung,
        &format!(
            "#!/bin/sh\nsleep 300 &\necho $! > {}\nsleep 300\n",
            pidfile.display()
        ),
    );
    let started = Instant::now();
    let cmd = std::process::Command::new(&hung);
    assert_eq!(run_probe(cmd, Duration::from_millis(500)), None);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    assert!(
        stat.is_empty() || state.starts_with('Z'),
        "the probe's child still runs: {stat}"
    );
    // One that answers in time is read.
    let quick = dir.path().join("quick");
    exe(&quick, "#!/bin/sh\necho /usr/bin/python3\n");
    assert_eq!(
        run_probe(std::process::Command::new(&quick), Duration::from_secs(5)).as_deref(),
        Some("/usr/bin/python3\n")
    );
}
