"""The per-user daemon end to end: `agent-tools mcp` conversations driven by the official
MCP Python SDK take their language servers from one daemon (a real pyright and a real
rust-analyzer shared between conversations, a third conversation answered by the warm
servers), and its faults: the daemon killed mid-query, its socket left behind, two daemons
racing to start, another user's connection, another build's, an untrusted conversation
beside a trusted one, and the idle lifetimes."""

import asyncio
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import REPO, agent_tools_bin, mcp_session, running, text

pytestmark = pytest.mark.anyio

HOVER_LSP = REPO / "tests" / "e2e" / "fixtures" / "hover_lsp.py"


def require(binary):
    if shutil.which(binary) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{binary} is not on PATH under CI=true")
        pytest.skip(f"{binary} is not on PATH")


@pytest.fixture
def daemon_env():
    """A runtime folder of the test's own (a short path: a socket's name is bounded), so
    the test's daemon is nobody else's; the daemon is stopped at the end."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="d", dir="/tmp"))
    folder.chmod(0o700)
    env = {"XDG_RUNTIME_DIR": str(folder)}
    yield env
    status = daemon_status(env)
    subprocess.run([agent_tools_bin(), "daemon", "stop"], env={**os.environ, **env},
                   capture_output=True, timeout=30)
    if status is not None and running(status["pid"]):
        os.kill(status["pid"], signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)


def daemon_status(env):
    """`agent-tools daemon status --json` (None when no daemon runs)."""
    out = subprocess.run([agent_tools_bin(), "daemon", "status", "--json"],
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def socket_of(env):
    found = list((pathlib.Path(env["XDG_RUNTIME_DIR"]) / "agent-tools").glob("daemon-*.sock"))
    assert len(found) == 1, found
    return found[0]


def mixed_project(root):
    (root / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    (root / "util.py").write_text("def compute(x):\n    return x * 2\n")
    (root / "main.py").write_text("from util import compute\n\nprint(compute(2))\n")
    (root / "Cargo.toml").write_text('[package]\nname = "mixed"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src").mkdir()
    (root / "src" / "lib.rs").write_text(
        "pub fn helper(x: i32) -> i32 {\n    x + 1\n}\n\npub fn twice(x: i32) -> i32 {\n    helper(x) * 2\n}\n"
    )


def python_project(root):
    """The mixed project's Python half alone: one pyright and nothing else."""
    mixed_project(root)
    (root / "Cargo.toml").unlink()
    shutil.rmtree(root / "src")


PY_DEFINITION = "1 definition(s) of `compute` at main.py:3:\nutil.py:1:5  def compute(x):"
RS_DEFINITION = "1 definition(s) of `helper` at src/lib.rs:6:\nsrc/lib.rs:1:8  pub fn helper(x: i32) -> i32 {"


async def definitions(client):
    r = await client.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
    assert (r.is_error, text(r)) == (False, PY_DEFINITION)
    r = await client.call_tool("lsp", {"action": "definition", "file": "src/lib.rs", "line": 6, "symbol": "helper"})
    assert (r.is_error, text(r)) == (False, RS_DEFINITION)


def parent_of(pid):
    """The parent pid of `pid`, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def watchdogs_of(server_pid):
    """The server's child processes started as its watchdog: its own binary run again with
    `--watchdog-of-parent` as the only argument."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or not running(int(entry)) or parent_of(entry) != server_pid:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")[:-1]
        except OSError:
            continue
        if args[1:] == [b"--watchdog-of-parent"]:
            found.append(int(entry))
    return found


async def test_a_conversation_starts_its_watchdog_with_its_first_child_and_it_ends_what_is_left(tmp_path, daemon_env):
    """A conversation whose language server is the daemon's holds no watchdog; its first
    child of its own (a kernel) starts exactly one — its own binary run again, in a session
    of its own — and when the conversation is killed with SIGKILL, the watchdog ends the
    kernel and itself."""
    require("pyright-langserver")
    python_project(tmp_path)
    signalled = False
    try:
        async with mcp_session(tmp_path, daemon=True, env=daemon_env) as c:
            r = await c.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
            assert (r.is_error, text(r)) == (False, PY_DEFINITION)
            r = await c.call_tool("eval", {"code": "import os\n(os.getpid(), os.getppid())",
                                           "description": "name the kernel and its parent"})
            assert not r.is_error, text(r)
            kernel, conversation = (int(n) for n in re.findall(r"\d+", text(r)))
            assert parent_of(conversation) == os.getpid()
            watchdogs = watchdogs_of(conversation)
            assert len(watchdogs) == 1, watchdogs
            watchdog = watchdogs[0]
            with open(f"/proc/{watchdog}/cmdline", "rb") as f:
                shown = f.read().split(b"\0")[0].decode()
            assert os.path.realpath(shown) == os.path.realpath(agent_tools_bin()), shown
            deadline = time.monotonic() + 10
            while os.getsid(watchdog) != watchdog:
                assert time.monotonic() < deadline, "the watchdog never left the conversation's session"
                await asyncio.sleep(0.05)
            signalled = True
            os.kill(conversation, signal.SIGKILL)
            deadline = time.monotonic() + 20
            while running(kernel) or running(watchdog):
                assert time.monotonic() < deadline, f"left running: kernel {running(kernel)}, watchdog {running(watchdog)}"
                await asyncio.sleep(0.05)
    except BaseException:
        # The SDK may report the conversation's disappearance on the way out: expected once
        # the signal was sent, a failure before it.
        if not signalled:
            raise
    assert signalled


async def test_a_daemon_served_conversation_that_starts_nothing_holds_no_watchdog(tmp_path, daemon_env):
    """Its language server's questions go to the daemon (which it started: its one child):
    no process of its own runs beside it, not even a watchdog (a forked one would be a child
    under the conversation's own command line)."""
    require("pyright-langserver")
    python_project(tmp_path)
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as c:
        r = await c.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
        assert (r.is_error, text(r)) == (False, PY_DEFINITION)
        conversations = [int(e) for e in os.listdir("/proc") if e.isdigit() and parent_of(e) == os.getpid()]
        assert len(conversations) == 1, conversations
        children = [int(e) for e in os.listdir("/proc") if e.isdigit() and parent_of(e) == conversations[0]]
        assert children == [daemon_status(daemon_env)["pid"]]


async def status_lines(client):
    r = await client.call_tool("lsp", {"action": "status"})
    assert not r.is_error, text(r)
    return [line for line in text(r).splitlines() if ": running " in line]


async def test_conversations_share_one_server_per_language_and_a_later_one_starts_warm(tmp_path, daemon_env):
    require("pyright-langserver")
    require("rust-analyzer")
    mixed_project(tmp_path)
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as a, \
            mcp_session(tmp_path, daemon=True, env=daemon_env) as b:
        await definitions(a)
        await definitions(b)
        status = daemon_status(daemon_env)
        servers = {h["language"]: h for h in status["servers"]}
        assert sorted((h["language"], h["server"]) for h in status["servers"]) == [
            ("python", "pyright-langserver"), ("rust", "rust-analyzer")]
        assert [len(h["conversations"]) for h in status["servers"]] == [2, 2]
        shared = r"\(from the agent-tools daemon for \d+ s(, warm from an earlier conversation)?, shared with run-\d+-[0-9a-f]+\)"
        lines = await status_lines(b)
        assert len(lines) == 2, lines
        assert re.fullmatch(r"python: running pyright-langserver for root \. " + shared, lines[0]), lines
        assert re.fullmatch(r"rust: running rust-analyzer for root \. " + shared, lines[1]), lines
    # Both conversations ended: the servers stay, idle, with no conversation (past the few
    # seconds after which pyright would leave if it watched the first conversation's pid).
    await asyncio.sleep(6)
    status = daemon_status(daemon_env)
    assert [(h["language"], h["conversations"], h["idle_s"] is not None) for h in status["servers"]] == [
        ("python", [], True), ("rust", [], True)]
    started = time.monotonic()
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as c:
        await definitions(c)
        warm_answers = time.monotonic() - started
        lines = await status_lines(c)
        assert len(lines) == 2, lines
        warm = r" \(from the agent-tools daemon for \d+ s, warm from an earlier conversation\)"
        assert re.fullmatch(r"python: running pyright-langserver for root \." + warm, lines[0]), lines
        assert re.fullmatch(r"rust: running rust-analyzer for root \." + warm, lines[1]), lines
    after = daemon_status(daemon_env)
    assert {h["language"]: h["pid"] for h in after["servers"]} == {k: h["pid"] for k, h in servers.items()}
    print(f"third conversation's two first definitions answered {warm_answers:.2f} s after it started")


def fake_project(root):
    (root / "fake.toml").write_text("")
    (root / "a.fake").write_text("x\n")
    (root / "slow.fake").write_text("hang here\n")
    (root / "agent-tools.toml").write_text(
        f'[lsp.servers.fake]\ncommand = ["python3", {str(HOVER_LSP)!r}]\nmarkers = ["fake.toml"]\nextensions = ["fake"]\n'
    )


async def test_a_daemon_killed_mid_query_answers_an_error_and_the_conversation_goes_on_in_a_new_one(tmp_path, daemon_env):
    fake_project(tmp_path)
    async with mcp_session(tmp_path, daemon=True, env=daemon_env, args=["--trust"]) as c:
        r = await c.call_tool("lsp", {"action": "hover", "file": "a.fake", "line": 1, "symbol": "x"})
        first = daemon_status(daemon_env)
        [server] = first["servers"]
        assert (r.is_error, text(r)) == (False, f"hover from pid {server['pid']}")
        socket_path = socket_of(daemon_env)
        hanging = asyncio.create_task(
            c.call_tool("lsp", {"action": "hover", "file": "slow.fake", "line": 1, "symbol": "hang"}))
        await asyncio.sleep(1.0)
        assert not hanging.done()
        os.kill(first["pid"], signal.SIGKILL)
        r = await hanging
        assert (r.is_error, text(r)) == (True, (
            "not available here: python3 exited while answering `textDocument/hover` (served by the "
            f"agent-tools daemon, pid {first['pid']}, whose connection closed: the daemon or the server "
            "stopped); the next call restarts it"))
        # The killed daemon's socket is left behind; the next question replaces it.
        assert socket_path.exists()
        r = await c.call_tool("lsp", {"action": "hover", "file": "a.fake", "line": 1, "symbol": "x"})
        second = daemon_status(daemon_env)
        assert second["pid"] != first["pid"]
        [restarted] = second["servers"]
        assert (r.is_error, text(r)) == (False, (
            f"the agent-tools daemon (pid {first['pid']}) that served python3 for root . stopped; the server "
            f"was restarted in a new agent-tools daemon (pid {second['pid']}), so its first answers may be slower\n"
            f"hover from pid {restarted['pid']}"))
        r = await c.call_tool("lsp", {"action": "hover", "file": "a.fake", "line": 1, "symbol": "x"})
        assert (r.is_error, text(r)) == (False, f"hover from pid {restarted['pid']}"), "said once"
    assert not running(server["pid"]), "the server died with its daemon"


async def test_two_daemons_racing_to_start_leave_one_serving(daemon_env):
    env = {**os.environ, **daemon_env}
    procs = [subprocess.Popen([agent_tools_bin(), "daemon", "serve"], env=env) for _ in range(2)]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and all(p.poll() is None for p in procs):
        time.sleep(0.05)
    loser = [p for p in procs if p.poll() is not None]
    winner = [p for p in procs if p.poll() is None]
    assert [p.returncode for p in loser] == [0] and len(winner) == 1
    status = daemon_status(daemon_env)
    assert (status["pid"], status["servers"], status["draining"]) == (winner[0].pid, [], False)


def raw_exchange(path, line, as_user=None):
    """Sends one first line to the daemon's socket and returns its one-line answer (as
    another user when `as_user` is a uid: a child process that drops to it)."""
    script = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        f"s.connect({str(path)!r})\n"
        # A refused peer may find the connection already closed when it writes: the
        # refusal is still there to read.
        "try:\n"
        f"    s.sendall({line.encode()!r} + b'\\n')\n"
        "except BrokenPipeError:\n"
        "    pass\n"
        "sys.stdout.write(s.makefile('rb').readline().decode())\n"
    )
    preexec = (lambda: os.setuid(as_user)) if as_user is not None else None
    out = subprocess.run(["python3", "-c", script], capture_output=True, text=True, timeout=30,
                         preexec_fn=preexec)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


async def test_another_build_is_told_to_start_its_own_and_another_user_is_refused(tmp_path, daemon_env):
    env = {**os.environ, **daemon_env}
    daemon = subprocess.Popen([agent_tools_bin(), "daemon", "serve"], env=env)
    deadline = time.monotonic() + 20
    while daemon_status(daemon_env) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    status = daemon_status(daemon_env)
    path = socket_of(daemon_env)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    answer = raw_exchange(path, json.dumps({"ask": "status", "build": "0.0.0-other"}))
    assert answer == {"answer": "other_build", "build": status["build"]}
    answer = raw_exchange(path, "not json")
    assert answer["answer"] == "refused"
    assert answer["reason"].startswith("not a first line this daemon understands: ")
    if os.geteuid() != 0:
        return
    # Past the private folder (opened up here on purpose), the peer's uid is the second fence.
    path.parent.chmod(0o711)
    path.parent.parent.chmod(0o711)
    path.chmod(0o666)
    answer = raw_exchange(path, json.dumps({"ask": "status", "build": status["build"]}), as_user=65534)
    assert answer == {"answer": "refused", "reason": "this daemon serves its own user's conversations only"}
    daemon.terminate()
    daemon.wait(timeout=30)


async def test_a_trusted_and_an_untrusted_conversation_never_share_a_server(tmp_path, daemon_env):
    require("pyright-langserver")
    python_project(tmp_path)
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as untrusted, \
            mcp_session(tmp_path, daemon=True, env=daemon_env, args=["--trust"]) as trusted:
        for c in (untrusted, trusted):
            r = await c.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
            assert (r.is_error, text(r)) == (False, PY_DEFINITION)
        status = daemon_status(daemon_env)
        assert sorted((h["server"], h["trusted"], len(h["conversations"])) for h in status["servers"]) == [
            ("pyright-langserver", False, 1), ("pyright-langserver", True, 1)]


async def test_idle_servers_stop_and_the_idle_daemon_leaves(tmp_path, daemon_env):
    fake_project(tmp_path)
    config = tmp_path / "config"
    (config / "agent-tools").mkdir(parents=True)
    (config / "agent-tools" / "config.toml").write_text("[daemon]\nserver_idle_s = 1\nidle_s = 2\n")
    env = {**daemon_env, "XDG_CONFIG_HOME": str(config)}
    async with mcp_session(tmp_path, daemon=True, env=env, args=["--trust"]) as c:
        r = await c.call_tool("lsp", {"action": "hover", "file": "a.fake", "line": 1, "symbol": "x"})
        assert not r.is_error, text(r)
        status = daemon_status(env)
        [server] = status["servers"]
        path = socket_of(env)
        time.sleep(1.5)
        assert [len(h["conversations"]) for h in daemon_status(env)["servers"]] == [1]
        assert running(server["pid"]), "a conversation still uses it"
    deadline = time.monotonic() + 20
    while running(server["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(server["pid"]), "stopped about a second after its last conversation"
    while running(status["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(status["pid"]), "the daemon left once idle"
    assert not path.exists(), "and took its socket with it"


async def test_no_daemon_serves_the_conversation_in_process(tmp_path, daemon_env):
    require("pyright-langserver")
    python_project(tmp_path)
    async with mcp_session(tmp_path, daemon=False, env=daemon_env) as c:
        r = await c.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
        assert (r.is_error, text(r)) == (False, PY_DEFINITION)
        [line] = await status_lines(c)
        assert re.fullmatch(r"python: running pyright-langserver for root \.( \(indexing\))?", line), line
    assert daemon_status(daemon_env) is None


async def test_a_preview_in_one_conversation_is_never_seen_by_another_sharing_its_server(tmp_path, daemon_env):
    require("pyright-langserver")
    python_project(tmp_path)
    (tmp_path / "agent-tools.toml").write_text("[lsp]\ndiagnostics_wait_ms = 30000\n")
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as a, \
            mcp_session(tmp_path, daemon=True, env=daemon_env) as b:
        clean = {}
        for name, c in (("a", a), ("b", b)):
            r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
            clean[name] = (r.is_error, text(r))
        assert clean["a"] == clean["b"] and clean["a"][0] is False, clean

        async def ask_b_meanwhile(done):
            answers = []
            while not done.is_set():
                r = await b.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
                answers.append((r.is_error, text(r)))
                r = await b.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
                answers.append((r.is_error, text(r)))
                # An agent's pace: pyright postpones analysing a newly opened file while
                # requests come every 0.2 s (in one process as well), which would hold the
                # preview's "before" to its bound.
                await asyncio.sleep(1.0)
            return answers

        done = asyncio.Event()
        watcher = asyncio.create_task(ask_b_meanwhile(done))
        await asyncio.sleep(0.5)
        r = await a.call_tool("write", {"path": "util.py", "content": "def calc(x):\n    return x * 2\n", "preview": True})
        done.set()
        seen_by_b = await watcher
        answer = text(r)
        assert not r.is_error, answer
        assert answer.startswith("predicted: 1 new diagnostic(s)"), answer
        assert [line for line in answer.splitlines() if line.startswith("main.py:1:")], answer
        assert seen_by_b, "b asked while a previewed"
        assert set(seen_by_b) == {(False, PY_DEFINITION), clean["b"]}, seen_by_b
        # After the preview, both still see the disk.
        for c in (a, b):
            r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
            assert (r.is_error, text(r)) == clean["b"]
        assert (tmp_path / "util.py").read_text() == "def compute(x):\n    return x * 2\n"


async def test_writes_through_a_shared_server_name_what_they_broke_and_what_they_fixed(tmp_path, daemon_env):
    """A write reaches pyright as a closed and reopened document, through the daemon too: each
    write's answer is what it broke in the file using what it changed (opened for the write in
    one conversation, open in the other), and the undo's is that it is gone."""
    require("pyright-langserver")
    python_project(tmp_path)
    (tmp_path / "agent-tools.toml").write_text(
        "[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.ruff]\nenabled = false\n")
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as a, \
            mcp_session(tmp_path, daemon=True, env=daemon_env) as b:
        # b has main.py open; a has only util.py.
        r = await b.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
        assert (r.is_error, text(r)) == (False, PY_DEFINITION)
        r = await a.call_tool("lsp", {"action": "diagnostics", "file": "util.py"})
        assert not r.is_error, text(r)
        for round_ in range(2):
            r = await a.call_tool("write", {"path": "util.py", "content": "def compute(x, y):\n    return x * y\n"})
            assert not r.is_error, text(r)
            assert diagnostics_section(text(r)) == [
                "1 new diagnostic(s) after this write:",
                'main.py:3:7 error [reportCallIssue] Argument missing for parameter "y"',
            ], (round_, text(r))
            r = await a.call_tool("write", {"path": "util.py", "content": "def compute(x):\n    return x * 2\n"})
            assert not r.is_error, text(r)
            assert diagnostics_section(text(r)) == [
                "no new diagnostics after this write.",
                "1 earlier diagnostic(s) are gone after this write:",
                '  main.py:3 error [reportCallIssue] Argument missing for parameter "y"',
            ], (round_, text(r))


def diagnostics_section(answer):
    """The lines of an answer's `## diagnostics` section."""
    lines = answer.splitlines()
    start = lines.index("## diagnostics") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


async def test_a_binary_of_another_build_starts_its_own_daemon_and_the_old_one_drains(tmp_path, daemon_env):
    from mcp import Client, StdioServerParameters

    fake_project(tmp_path)
    builds = []
    for n in (1, 2):
        copy = tmp_path / f"agent-tools-{n}"
        shutil.copy(agent_tools_bin(), copy)
        os.utime(copy, ns=(n * 10**18, n * 10**18))
        builds.append(str(copy))
    env = {**os.environ, **daemon_env}

    def status_of(binary):
        out = subprocess.run([binary, "daemon", "status", "--json"], env=env, capture_output=True, text=True, timeout=30)
        return json.loads(out.stdout)

    def session(binary):
        return Client(StdioServerParameters(command=binary, args=["mcp", "--trust", "--root", str(tmp_path)], env=env))

    hover = {"action": "hover", "file": "a.fake", "line": 1, "symbol": "x"}
    try:
        await drain_round(builds, session, status_of, hover)
    finally:
        for binary in builds:
            subprocess.run([binary, "daemon", "stop"], env=env, capture_output=True, timeout=30)


async def drain_round(builds, session, status_of, hover):
    async with session(builds[0]) as old:
        r = await old.call_tool("lsp", hover)
        first = status_of(builds[0])
        assert (r.is_error, text(r)) == (False, f"hover from pid {first['servers'][0]['pid']}")
        async with session(builds[1]) as new:
            r = await new.call_tool("lsp", hover)
            second = status_of(builds[1])
            assert second["build"] != first["build"] and second["pid"] != first["pid"]
            assert (r.is_error, text(r)) == (False, f"hover from pid {second['servers'][0]['pid']}")
            drained = status_of(builds[0])
            assert (drained["pid"], drained["draining"], [len(h["conversations"]) for h in drained["servers"]]) == (
                first["pid"], True, [1])
            # The old daemon still serves its conversation to its end.
            r = await old.call_tool("lsp", hover)
            assert (r.is_error, text(r)) == (False, f"hover from pid {first['servers'][0]['pid']}")
    deadline = time.monotonic() + 20
    while running(first["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(first["pid"]), "the drained daemon left with its last conversation"
    assert status_of(builds[0]) is None


async def test_a_file_changed_while_no_conversation_runs_is_seen_by_the_next_one(tmp_path, daemon_env):
    require("pyright-langserver")
    python_project(tmp_path)
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        clean = (r.is_error, text(r))
        assert clean == (False, "no diagnostics in main.py (pyright-langserver)")
    # Outside the tools, with no conversation: the warm server must hear of it.
    (tmp_path / "util.py").write_text("def calc(x):\n    return x * 2\n")
    await asyncio.sleep(2)
    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        answer = text(r)
        assert not r.is_error, answer
        assert [line for line in answer.splitlines() if line.startswith("main.py:1:")] == [
            'main.py:1:18 error [reportAttributeAccessIssue] "compute" is unknown import symbol'], answer
    [server] = daemon_status(daemon_env)["servers"]
    assert server["conversations"] == []


async def test_a_file_changed_outside_is_seen_by_every_conversation_the_daemon_serves(tmp_path, daemon_env):
    """A served conversation walks no tree of its own: the daemon's one watch of the root
    keeps each connected conversation's changes until that conversation asks."""
    require("pyright-langserver")
    python_project(tmp_path)
    clean = (False, "no diagnostics in main.py (pyright-langserver)")
    broken = ['main.py:1:18 error [reportAttributeAccessIssue] "compute" is unknown import symbol']

    async def main_py_errors(client):
        r = await client.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        assert not r.is_error, text(r)
        return [line for line in text(r).splitlines() if line.startswith("main.py:")]

    async with mcp_session(tmp_path, daemon=True, env=daemon_env) as first:
        r = await first.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        assert (r.is_error, text(r)) == clean
        async with mcp_session(tmp_path, daemon=True, env=daemon_env) as second:
            r = await second.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
            assert (r.is_error, text(r)) == clean
            # Outside the tools, while both are connected: a file neither has open, then the
            # document both have open.
            (tmp_path / "util.py").write_text("def calc(x):\n    return x * 2\n")
            await asyncio.sleep(1)
            assert await main_py_errors(first) == broken
            assert await main_py_errors(second) == broken
            (tmp_path / "main.py").write_text("from util import calc\n\nprint(calc(2))\n")
            await asyncio.sleep(1)
            assert await main_py_errors(second) == []
            r = await first.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "calc"})
            assert (r.is_error, text(r)) == (
                False, "1 definition(s) of `calc` at main.py:3:\nutil.py:1:5  def calc(x):")
        [server] = daemon_status(daemon_env)["servers"]
        assert len(server["conversations"]) == 1
