"""Cancellation, shutdown and bad input through the binary, driven by the MCP Python SDK.

- A client cancel (`notifications/cancelled`, sent by the SDK when the caller's task is
  cancelled) stops the cell; the next cell returns its own output, promptly, with the
  kernel's state; a cancel while the cell waits in `tool()` answers that call as cancelled
  inside the cell.
- SIGTERM, SIGINT and SIGHUP close the run and exit; SIGKILL leaves nothing either. Every
  process the run started is found by its working folder, command line or environment
  naming the workspace (a fresh folder per test), scanning /proc.
- A cell's detached grandchildren (a double fork, with and without `setsid`) end with the
  run; the run folder is private (0700) and gone after the server exits.
- A request whose arguments hold a lone surrogate is answered with invalid params.
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time

import anyio
import pytest

from conftest import REPO, agent_tools_bin, mcp_session, running, text

pytestmark = pytest.mark.anyio

DESC = "run a cell from the lifecycle suite"
WORKER = REPO / "crates" / "tools-vibe" / "tests" / "fixtures" / "worker.py"
LOOP = "import time\nwhile True:\n    time.sleep(0.05)\n"



def processes_of(root):
    """Live processes whose cwd, command line or environment names `root`."""
    mark = str(root).encode()
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me or not running(int(entry)):
            continue
        hit = False
        try:
            hit = os.readlink(f"/proc/{entry}/cwd").encode().startswith(mark)
        except OSError:
            pass
        for part in ("cmdline", "environ"):
            if hit:
                break
            try:
                with open(f"/proc/{entry}/{part}", "rb") as f:
                    hit = mark in f.read()
            except OSError:
                pass
        if hit:
            found.append(int(entry))
    return found


def describe(pids):
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{pid}: {line}")
        except OSError:
            out.append(f"{pid}: (gone)")
    return "\n".join(out)


async def wait_until(predicate, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.05)


async def cancel_after_marker(c, marker, arguments):
    """Calls eval with `arguments` and cancels the call once the cell created `marker`."""
    async with anyio.create_task_group() as tg:

        async def call():
            await c.call_tool("eval", arguments)

        tg.start_soon(call)
        await wait_until(marker.exists, "the cell to start")
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_cancel_mid_cell_then_the_next_cell_returns_its_own_output(tmp_path, mode):
    async with mcp_session(tmp_path, mode=mode) as c:
        r = await c.call_tool("eval", {"code": "kept = 41", "description": DESC})
        assert not r.is_error, text(r)
        marker = tmp_path / "started"
        code = "open('started', 'w').close()\nimport time\nfor i in range(1200):\n    print('first cell', i)\n    time.sleep(0.05)\n"
        await cancel_after_marker(c, marker, {"code": code, "description": DESC})
        started = time.monotonic()
        r = await c.call_tool("eval", {"code": "print('second')\nkept + 1", "description": DESC})
        took = time.monotonic() - started
        assert not r.is_error, text(r)
        assert text(r) == "second\n42", text(r)
        assert took < 15, f"the next cell took {took:.1f} s"


async def test_cancel_mid_bridge_then_the_next_call_is_prompt_and_correct(tmp_path):
    async def never_answer(context, params):
        await anyio.sleep(3600)

    async with mcp_session(tmp_path, mode="legacy", elicitation_callback=never_answer) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert "ask_user" in names, names
        marker = tmp_path / "started"
        code = (
            "open('started', 'w').close()\n"
            "try:\n"
            "    tool('ask_user', {'question': 'Which one?', 'options': [{'label': 'a'}, {'label': 'b'}]})\n"
            "except ToolError as err:\n"
            "    seen = err.kind\n"
            "    import time\n"
            "    time.sleep(600)\n"
        )
        await cancel_after_marker(c, marker, {"code": code, "description": DESC})
        started = time.monotonic()
        r = await c.call_tool("eval", {"code": "seen", "description": DESC})
        took = time.monotonic() - started
        assert not r.is_error, text(r)
        assert text(r) == "'cancelled'", text(r)
        assert took < 15, f"the next call took {took:.1f} s"


def test_a_lone_surrogate_argument_is_answered_with_invalid_params(tmp_path):
    # The SDK refuses to encode a lone surrogate, so this client writes JSON-RPC by hand.
    (tmp_path / "a.txt").write_text("hello\n")
    proc = subprocess.Popen(
        [agent_tools_bin(), "mcp", "--no-daemon", "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout], daemon=True).start()

    def send(raw):
        proc.stdin.write(raw.encode() + b"\n")
        proc.stdin.flush()

    def answer(id_):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                msg = json.loads(lines.get(timeout=1))
            except queue.Empty:
                continue
            if msg.get("id") == id_:
                return msg
        raise AssertionError(f"no answer to request {id_}")

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        assert "result" in answer(1)
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        # `\ud800` as the escape JSON allows, unpaired.
        send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"\\ud800.txt"}}}')
        bad = answer(2)
        assert bad["error"]["code"] == -32602, bad
        assert "not valid Unicode" in bad["error"]["message"], bad
        # The server keeps serving.
        send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "a.txt"}}}))
        good = answer(3)
        assert "hello" in json.dumps(good["result"]), good
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)


def project(root):
    """A workspace with a Python language server, a debug target, a worker CLI and a cell."""
    (root / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    (root / "util.py").write_text("def compute(x):\n    return x * 2\n")
    (root / "loop.py").write_text("import time\n\nwhile True:\n    time.sleep(0.05)\n")
    server = "pyright-langserver" if shutil.which("pyright-langserver") else "pylsp"
    command = ["pyright-langserver", "--stdio"] if server == "pyright-langserver" else ["pylsp"]
    py = json.dumps(sys.executable)
    w = json.dumps(str(WORKER))
    (root / "agent-tools.toml").write_text(
        f"[lsp.servers.python]\ncommand = {json.dumps(command)}\n\n"
        f'[vibe.fast]\ncommand = [{py}, {w}, "{{brief}}"]\nresult = "json-events"\n'
    )
    return server


async def start_everything(c, root):
    """Starts a language server, a debug session, a worker and a looping kernel; returns the
    server's pid (the kernel's parent)."""
    r = await c.call_tool("lsp", {"action": "hover", "file": "util.py", "line": 1, "symbol": "compute"})
    assert not r.is_error, text(r)
    r = await c.call_tool("debug", {"operation": "breakpoints", "file": "loop.py", "lines": [4]})
    assert not r.is_error, text(r)
    r = await c.call_tool("debug", {"operation": "launch", "program": "loop.py"})
    assert not r.is_error and r.structured_content["state"] == "stopped", text(r)
    r = await c.call_tool("vibe_spawn", {"brief": "sleep=600 child=1", "label": "long worker"})
    assert not r.is_error, text(r)
    r = await c.call_tool("eval", {"code": "import os\nos.getppid()", "description": DESC})
    assert not r.is_error, text(r)
    return int(text(r))


def require_components():
    missing = [b for b in ("debugpy",) if shutil.which(b) is None]
    if not (shutil.which("pyright-langserver") or shutil.which("pylsp")):
        missing.append("pyright-langserver or pylsp")
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"missing under CI: {missing}")
        pytest.skip(f"missing: {missing}")


def run_folders(server_pid):
    import tempfile

    tmp = tempfile.gettempdir()
    prefix = f"agent-tools-run-{server_pid}-"
    return [os.path.join(tmp, p) for p in os.listdir(tmp) if p.startswith(prefix)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
async def test_a_signal_leaves_no_process_of_the_run(tmp_path, sig):
    require_components()
    root = tmp_path / f"ws-{sig.name}"
    root.mkdir()
    project(root)
    server_pid = None
    signalled = False
    try:
        # The worker and server commands come from the workspace's own file: trusted.
        async with mcp_session(root, args=["--trust"], mode="legacy") as c:
            server_pid = await start_everything(c, root)
            folders = run_folders(server_pid)
            assert len(folders) == 1, folders
            assert os.stat(folders[0]).st_mode & 0o777 == 0o700
            async with anyio.create_task_group() as tg:

                async def loop_cell():
                    try:
                        await c.call_tool("eval", {"code": "open('looping', 'w').close()\n" + LOOP, "description": DESC})
                    except Exception:
                        pass

                tg.start_soon(loop_cell)
                await wait_until((root / "looping").exists, "the looping cell")
                before = processes_of(root)
                # Server, language server, adapter, debuggee, worker and its child, kernel.
                assert len(before) >= 6, describe(before)
                signalled = True
                os.kill(server_pid, sig)
                await wait_until(lambda: not running(server_pid), "the server to exit", 20)
                tg.cancel_scope.cancel()
    except BaseException:
        # The SDK may report the server's disappearance on the way out; that is expected
        # once the signal was sent, and a failure before it.
        if not signalled:
            raise
    deadline = time.monotonic() + 10
    left = processes_of(root)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = processes_of(root)
    assert not left, f"left running after {sig.name}:\n{describe(left)}"
    if sig != signal.SIGKILL:
        # Nothing runs after SIGKILL to remove the folder; every other way out removes it.
        assert not run_folders(server_pid)


DETACH = """import os, posix, time
def detach(new_session, path):
    pid = os.fork()
    if pid == 0:
        if new_session:
            os.setsid()
        else:
            os.setpgid(0, 0)
        if os.fork() == 0:
            with open(path + '.tmp', 'w') as f:
                f.write(str(os.getpid()))
            os.rename(path + '.tmp', path)
            time.sleep(600)
        posix._exit(0)
    os.waitpid(pid, 0)
detach(True, 'setsid.pid')
detach(False, 'group.pid')
os.getppid()
"""


async def test_detached_grandchildren_of_a_cell_end_with_the_run(tmp_path):
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("eval", {"code": DETACH, "description": DESC})
        assert not r.is_error, text(r)
        server_pid = int(text(r))
        await wait_until(lambda: (tmp_path / "setsid.pid").exists() and (tmp_path / "group.pid").exists(), "the grandchildren")
        pids = [int((tmp_path / n).read_text()) for n in ("setsid.pid", "group.pid")]
        assert all(running(p) for p in pids)
    deadline = time.monotonic() + 10
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    assert not [p for p in pids if running(p)], "detached grandchildren outlived the run"
    assert not running(server_pid)


async def test_a_language_server_that_stops_reading_makes_the_call_fail_not_hang(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    # Far more than a pipe holds, so opening it in the server blocks the writer.
    (tmp_path / "big.py").write_text("def compute(x):\n    return x * 2\n" + "# filler line\n" * 40000)
    deaf = REPO / "tests" / "e2e" / "fixtures" / "deaf_lsp.py"
    (tmp_path / "agent-tools.toml").write_text(
        f"[lsp.servers.python]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(deaf))}]\n"
    )
    # The command comes from the workspace's own file: trusted.
    async with mcp_session(tmp_path, args=["--trust"], mode="legacy") as c:
        # A bound against a hang only; the answer comes after the write timeout.
        with anyio.fail_after(120):
            r = await c.call_tool("lsp", {"action": "hover", "file": "big.py", "line": 1, "symbol": "compute"})
        assert r.is_error, text(r)
        assert "stopped reading its input" in text(r), text(r)
        # The server keeps serving other calls.
        r = await c.call_tool("read", {"path": "pyproject.toml"})
        assert not r.is_error and "name" in text(r), text(r)


async def test_the_checker_output_cap_stops_the_checker(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    # Prints past the cap, then would run for ten minutes.
    noisy = "import sys, time\nsys.stdout.write('a.py:1:1: error: noise\\n' * 400000)\nsys.stdout.flush()\ntime.sleep(600)\n"
    (tmp_path / "agent-tools.toml").write_text(
        f"[lsp.checkers.python]\ncommand = [{json.dumps(sys.executable)}, \"-c\", {json.dumps(noisy)}]\n"
    )
    # The command comes from the workspace's own file: trusted.
    async with mcp_session(tmp_path, args=["--trust"], mode="legacy") as c:
        # A bound against a hang only (the checker would otherwise run its whole timeout).
        with anyio.fail_after(120):
            r = await c.call_tool("lsp", {"action": "diagnostics", "file": "*"})
        assert not r.is_error, text(r)
        assert "(killed)" in text(r), text(r)
    assert not processes_of(tmp_path), describe(processes_of(tmp_path))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_during_a_one_shot_call_closes_its_run(tmp_path, sig):
    code = "open('looping', 'w').close()\n" + LOOP
    args = json.dumps({"code": code, "description": DESC})
    proc = subprocess.Popen(
        [agent_tools_bin(), "call", "eval", "--args", args, "--root", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "looping").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the cell never started"
            time.sleep(0.05)
        kernels = [p for p in processes_of(tmp_path) if p != proc.pid]
        assert kernels, "no kernel found"
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, (proc.returncode, proc.stderr.read())
    deadline = time.monotonic() + 10
    while processes_of(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_of(tmp_path), describe(processes_of(tmp_path))
