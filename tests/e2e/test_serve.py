"""`agent-tools serve --http`: many MCP clients over streamable HTTP, driven by the official
MCP Python SDK's streamable HTTP client — one run per session and nothing shared between
them, the session limit, idle sessions closed with their kernels, several workspaces, the
sessionless protocol, trust and approval, the child cap, and stopping (SIGTERM, --grace)."""

import contextlib
import os
import subprocess
import time

import anyio
import httpx2
import pytest

from conftest import agent_tools_bin, running, text
from serve_support import DESC, INIT, MCP_HEADERS, client, post_init, serve, workspace

pytestmark = pytest.mark.anyio


async def session_round(url, i):
    """One agent's work: read, ast_grep, eval state, a staged edit of its own, a write."""
    async with client(url) as c:
        r = await c.call_tool("read", {"path": f"lib/m{i}.py"})
        assert not r.is_error and f"dispose(x{i})" in text(r), text(r)
        r = await c.call_tool("ast_grep", {"pattern": f"dispose(x{i})", "language": "python"})
        assert not r.is_error and f"lib/m{i}.py:1:1" in text(r), text(r)
        r = await c.call_tool("eval", {"code": f"var_{i} = {i}\nimport os\nos.getpid()", "description": DESC})
        assert not r.is_error, text(r)
        kernel = int(text(r).splitlines()[-1])
        r = await c.call_tool(
            "eval", {"code": "sorted(k for k in globals() if k.startswith('var_'))", "description": DESC}
        )
        assert text(r) == repr([f"var_{i}"]), text(r)
        r = await c.call_tool(
            "ast_edit", {"pattern": "dispose($X)", "rewrite": "$X.dispose()", "path": f"lib/m{i}.py"}
        )
        assert not r.is_error, text(r)
        # Staging is per run: every session's first staged edit is its own edit_1.
        assert r.structured_content["edit_id"] == "edit_1", text(r)
        r = await c.call_tool("resolve", {"edit_id": "edit_1", "action": "accept"})
        assert not r.is_error, text(r)
        r = await c.call_tool("resolve", {"edit_id": "edit_2", "action": "accept"})
        assert r.is_error, text(r)
        r = await c.call_tool("write", {"path": f"out/{i}.txt", "content": f"session {i}\n"})
        assert not r.is_error, text(r)
        return kernel


async def test_twenty_concurrent_sessions_each_get_their_own_run(tmp_path):
    root = workspace(tmp_path, 20)
    with serve("--root", str(root), "--max-sessions", "25") as srv:
        kernels = {}

        async def one(i):
            kernels[i] = await session_round(srv.url(), i)

        with anyio.fail_after(240):
            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(one, i)
        assert len(set(kernels.values())) == 20, kernels
        for i in range(20):
            assert (root / "lib" / f"m{i}.py").read_text() == f"x{i}.dispose()\n"
            assert (root / "out" / f"{i}.txt").read_text() == f"session {i}\n"
        # Each client deleted its session on leaving: its kernel is gone with its run.
        deadline = time.monotonic() + 20
        while any(running(p) for p in kernels.values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(running(p) for p in kernels.values()), "kernels outlived their sessions"


async def test_a_session_over_the_limit_is_refused_with_a_reason(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--max-sessions", "2") as srv:
        async with client(srv.url()) as a, client(srv.url()) as b:
            assert (await a.call_tool("read", {"path": "lib"})) is not None
            assert (await b.call_tool("read", {"path": "lib"})) is not None
            async with httpx2.AsyncClient(timeout=10) as http:
                r = await http.post(srv.url(), json=INIT, headers=MCP_HEADERS)
            assert r.status_code == 503, r.text
            assert "maximum of 2 sessions" in r.json()["error"]["message"]
            with anyio.fail_after(30), pytest.raises(Exception):
                async with client(srv.url()) as c:
                    await c.list_tools()
        # Once they left, a new session fits again.
        async with client(srv.url()) as c:
            assert "read" in {t.name for t in (await c.list_tools()).tools}


async def test_an_idle_session_is_closed_with_its_kernel(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--idle-timeout", "2") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": DESC})
            kernel = int(text(r))
            assert running(kernel)
            deadline = time.monotonic() + 30
            while running(kernel) and time.monotonic() < deadline:
                await anyio.sleep(0.2)
            assert not running(kernel), "an idle session's kernel was left running"
            with anyio.fail_after(30), pytest.raises(Exception):
                await c.call_tool("eval", {"code": "1", "description": DESC})


async def test_a_long_call_is_not_idleness(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--idle-timeout", "1") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "import time\ntime.sleep(3)\nstate = 7", "description": DESC})
            assert not r.is_error, text(r)
            r = await c.call_tool("eval", {"code": "state", "description": DESC})
            assert text(r) == "7"


async def test_several_workspaces_each_at_their_own_path(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "which.txt").write_text("workspace a\n")
    (b / "which.txt").write_text("workspace b\n")
    with serve("--workspace", f"a={a}", "--workspace", f"b={b}") as srv:
        for name in ("a", "b"):
            async with client(srv.url(f"/w/{name}/mcp")) as c:
                r = await c.call_tool("read", {"path": "which.txt"})
                assert f"workspace {name}" in text(r)
        async with httpx2.AsyncClient(timeout=10) as http:
            r = await http.post(srv.url("/mcp"), json=INIT, headers=MCP_HEADERS)
        assert r.status_code == 404 and "/w/a/mcp" in r.text


def test_listening_beyond_loopback_needs_authorization(tmp_path):
    r = subprocess.run(
        [agent_tools_bin(), "serve", "--http", "0.0.0.0:0", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0
    assert "needs authorization" in r.stderr, r.stderr


async def test_probes_answer_without_credentials(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("a-static-token-of-enough-length\n")
    with serve("--root", str(workspace(tmp_path)), "--token-file", str(token_file)) as srv:
        async with httpx2.AsyncClient(timeout=10) as http:
            assert (await http.get(srv.url("/healthz"))).status_code == 200
            r = await http.get(srv.url("/readyz"))
            assert r.status_code == 200 and r.text.strip() == "ready"


async def test_the_sessionless_protocol_gets_a_run_per_request_only_when_asked(tmp_path):
    root = workspace(tmp_path, 1)
    with serve("--root", str(root), "--sessionless") as srv:
        async with client(srv.url(), mode="2026-07-28") as c:
            r = await c.call_tool("read", {"path": "lib/m0.py"})
            assert not r.is_error and "dispose(x0)" in text(r), text(r)
            r = await c.call_tool("eval", {"code": "kept = 1", "description": DESC})
            assert not r.is_error, text(r)
            # No session ties two requests together: the second runs in a fresh run.
            r = await c.call_tool("eval", {"code": "kept", "description": DESC})
            assert r.structured_content["status"] == "error" and "NameError" in text(r), text(r)
    with serve("--root", str(root)) as srv:
        with anyio.fail_after(30), pytest.raises(Exception):
            async with client(srv.url(), mode="2026-07-28") as c:
                await c.call_tool("read", {"path": "lib/m0.py"})
        # A client left to choose falls back to a session.
        async with client(srv.url()) as c:
            await c.call_tool("eval", {"code": "kept = 1", "description": DESC})
            assert text(await c.call_tool("eval", {"code": "kept", "description": DESC})) == "1"


async def test_sigterm_closes_every_run(tmp_path):
    with serve("--root", str(workspace(tmp_path))) as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": DESC})
            kernel = int(text(r))
            srv.proc.terminate()
            assert srv.proc.wait(30) == 0, "".join(srv.stderr_lines)
            assert not running(kernel), "a kernel outlived the server"


# --- trust and approval -----------------------------------------------------------------


def planted_interpreter(root, markers):
    """A workspace whose agent-tools.toml names its own `.venv/bin/python`, which leaves a
    marker (outside the workspace) when it runs."""
    import sys

    root.mkdir()
    venv_python = root / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text(f'#!/bin/sh\ntouch "{markers / root.name}"\nexec "{os.path.realpath(sys.executable)}" "$@"\n')
    venv_python.chmod(0o755)
    (root / "agent-tools.toml").write_text('[eval]\npython = ".venv/bin/python"\n')


async def test_trust_is_per_workspace_and_untrusted_sessions_run_no_repository_program(tmp_path, monkeypatch):
    # The user's own configuration must not trust these roots behind the test's back.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    markers = tmp_path / "markers"
    markers.mkdir()
    a, b = tmp_path / "a", tmp_path / "b"
    planted_interpreter(a, markers)
    planted_interpreter(b, markers)
    with serve("--workspace", f"a={a}", "--workspace", f"b={b}", "--trust-workspace", "a") as srv:
        for name in ("a", "b"):
            async with client(srv.url(f"/w/{name}/mcp")) as c:
                r = await c.call_tool("eval", {"code": "import sys\nsys.executable", "description": DESC})
                assert not r.is_error, text(r)
        assert sorted(p.name for p in markers.iterdir()) == ["a"]
    assert any("untrusted" in line and str(b) in line for line in srv.stderr_lines), srv.stderr_lines
    with serve("--root", str(b), "--trust") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "1", "description": DESC})
            assert not r.is_error, text(r)
    assert sorted(p.name for p in markers.iterdir()) == ["a", "b"]


def test_serve_help_says_what_an_untrusted_session_cannot_do():
    out = subprocess.run([agent_tools_bin(), "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "An untrusted workspace's sessions" in out.stdout and ".venv" in out.stdout, out.stdout
    r = subprocess.run(
        [agent_tools_bin(), "serve", "--http", "127.0.0.1:0", "--workspace", "a=/tmp", "--trust-workspace", "b"],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode != 0 and "no workspace is served as `b`" in r.stderr, r.stderr


async def test_approve_deny_refuses_writes_in_every_session(tmp_path):
    with serve("--root", str(workspace(tmp_path, 1)), "--approve", "deny") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("write", {"path": "w.txt", "content": "w\n"})
            assert r.is_error and "--approve deny" in text(r), text(r)
            r = await c.call_tool("read", {"path": "lib/m0.py"})
            assert not r.is_error, text(r)
    assert not (tmp_path / "w.txt").exists()


async def test_approve_ask_shows_each_sessions_own_client_a_card_warm_or_cold(tmp_path):
    from mcp import types

    class Human:
        def __init__(self, *replies):
            self.replies, self.forms = list(replies), []

        async def __call__(self, context, params):
            self.forms.append(params.message)
            action, content = self.replies.pop(0)
            return types.ElicitResult(action=action, content=content)

    root = workspace(tmp_path)
    for extra in ([], ["--warm", "1"]):
        with serve("--root", str(root), "--approve", "ask", *extra) as srv:
            yes, no = Human(("accept", {"allow": True})), Human(("decline", None))
            async with client(srv.url(), mode="legacy", elicitation_callback=yes) as a, \
                    client(srv.url(), mode="legacy", elicitation_callback=no) as b:
                r = await a.call_tool("write", {"path": f"yes{len(extra)}.txt", "content": "y\n"})
                assert not r.is_error, text(r)
                r = await b.call_tool("write", {"path": f"no{len(extra)}.txt", "content": "n\n"})
                assert r.is_error and "did not approve" in text(r), text(r)
            # Each card went to the client of the session that asked.
            assert len(yes.forms) == 1 and "`write`" in yes.forms[0], yes.forms
            assert len(no.forms) == 1, no.forms
            async with client(srv.url(), mode="legacy") as c:
                r = await c.call_tool("write", {"path": "nobody.txt", "content": "x\n"})
                assert r.is_error and "no human is attached" in text(r), text(r)
        assert (root / f"yes{len(extra)}.txt").exists() and not (root / f"no{len(extra)}.txt").exists()
    assert not (root / "nobody.txt").exists()


# --- limits and stopping ----------------------------------------------------------------


async def test_a_session_over_its_child_cap_is_refused_with_a_reason(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--max-children", "1") as srv:
        async with client(srv.url()) as c, client(srv.url()) as other:
            r = await c.call_tool("eval", {"code": "1 + 1", "description": DESC})
            assert text(r) == "2", text(r)
            r = await c.call_tool("eval", {"code": "1 + 1", "language": "javascript", "description": DESC})
            assert r.is_error and "child processes" in text(r) and "--max-children" in text(r), text(r)
            # The session's kernel still answers, and the cap is per session.
            r = await c.call_tool("eval", {"code": "3 * 3", "description": DESC})
            assert text(r) == "9", text(r)
            r = await other.call_tool("eval", {"code": "4 * 4", "description": DESC})
            assert text(r) == "16", text(r)


async def test_sigterm_lets_a_call_under_way_finish_and_refuses_new_requests(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--grace", "60") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": DESC})
            kernel = int(text(r))
            results = {}

            async def long_call():
                results["r"] = await c.call_tool(
                    "eval", {"code": "import time\ntime.sleep(4)\n'finished'", "description": DESC}
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(long_call)
                await anyio.sleep(1.5)
                srv.proc.terminate()
                await anyio.sleep(0.5)
                r = await post_init(srv)
                assert r.status_code == 503 and "stopping" in r.json()["error"]["message"], r.text
                async with httpx2.AsyncClient(timeout=10) as http:
                    assert (await http.get(srv.url("/readyz"))).status_code == 503
            assert text(results["r"]) == "'finished'", text(results["r"])
        assert srv.proc.wait(30) == 0, "".join(srv.stderr_lines)
        assert not running(kernel), "a kernel outlived the server"


async def test_the_grace_period_ends_a_call_that_runs_on(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--grace", "1") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": DESC})
            kernel = int(text(r))

            async def endless():
                with contextlib.suppress(Exception):
                    await c.call_tool("eval", {"code": "import time\ntime.sleep(600)", "description": DESC})

            async with anyio.create_task_group() as tg:
                tg.start_soon(endless)
                await anyio.sleep(1)
                srv.proc.terminate()
                assert await anyio.to_thread.run_sync(srv.proc.wait, 60) == 0, "".join(srv.stderr_lines)
                tg.cancel_scope.cancel()
        assert not running(kernel), "a kernel outlived the server"


async def test_a_second_sigterm_cuts_the_drain_short(tmp_path):
    import signal

    with serve("--root", str(workspace(tmp_path)), "--grace", "600") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": DESC})
            kernel = int(text(r))

            async def endless():
                with contextlib.suppress(Exception):
                    await c.call_tool("eval", {"code": "import time\ntime.sleep(600)", "description": DESC})

            async with anyio.create_task_group() as tg:
                tg.start_soon(endless)
                await anyio.sleep(1)
                srv.proc.send_signal(signal.SIGTERM)
                await anyio.sleep(1)
                assert srv.proc.poll() is None, "the first signal must drain, not stop"
                srv.proc.send_signal(signal.SIGTERM)
                assert await anyio.to_thread.run_sync(srv.proc.wait, 60) == 0, "".join(srv.stderr_lines)
                tg.cancel_scope.cancel()
        assert not running(kernel), "a kernel outlived the server"
