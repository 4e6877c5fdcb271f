"""`agent-tools serve` operations: warm runs (handed out, refilled, bound to their own client;
language servers and kernels started ahead), /metrics, JSON logs, and progress for long
calls."""

import json
import os

import anyio
import httpx2
import pytest

from conftest import text
from serve_support import DESC, client, metric, serve, wait_ready, workspace

pytestmark = pytest.mark.anyio


# --- warm runs ----------------------------------------------------------------------------



async def test_warm_runs_are_handed_out_bound_to_their_own_client(tmp_path):
    from mcp import types

    async def human(context, params):
        return types.ElicitResult(action="accept", content={"choice": "Blue"})

    question = {"question": "Which colour?", "context": "A test asks.", "options": [{"label": "Red"}, {"label": "Blue"}]}
    with serve("--root", str(workspace(tmp_path, 1)), "--warm", "1") as srv:
        await wait_ready(srv)
        for _ in range(3):
            # A client that can show forms gets a run with ask_user, asking that client.
            async with client(srv.url(), mode="legacy", elicitation_callback=human) as c:
                r = await c.call_tool("ask_user", question)
                assert not r.is_error and "Blue" in text(r), text(r)
                r = await c.call_tool("eval", {"code": "seen = 1", "description": DESC})
                assert not r.is_error, text(r)
            # One that cannot gets a run without it, and none of the other's state.
            async with client(srv.url(), mode="legacy") as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert "ask_user" not in names and "read" in names, names
                r = await c.call_tool("eval", {"code": "'seen' in globals()", "description": DESC})
                assert text(r) == "False", text(r)


async def test_warm_lsp_starts_a_warm_runs_language_server_ahead(tmp_path):
    import shutil

    if shutil.which("pyright-langserver") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pyright-langserver is not on PATH")
        pytest.skip("pyright-langserver is not on PATH")
    root = workspace(tmp_path)
    (root / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0"\n')
    (root / "lib" / "area.py").write_text('def area(r: float) -> float:\n    """Disc area."""\n    return 3.14 * r * r\n')
    with serve("--root", str(root), "--warm", "1", "--warm-lsp", "lib/area.py") as srv:
        await wait_ready(srv)
        async with httpx2.AsyncClient(timeout=10) as http:
            with anyio.fail_after(120):
                while metric((await http.get(srv.url("/metrics"))).text, "agent_tools_warm_runs") != 2:
                    await anyio.sleep(0.2)
            # The two warm runs (one per kind of client) share one language server.
            assert metric((await http.get(srv.url("/metrics"))).text, "agent_tools_child_processes") == 1
        async with client(srv.url()) as c:
            # Before this session asked anything of it, its run's server is up.
            r = await c.call_tool("lsp", {"action": "status"})
            assert "python: running" in text(r), text(r)
            r = await c.call_tool("lsp", {"action": "hover", "file": "lib/area.py", "line": 1, "symbol": "area"})
            assert "Disc area" in text(r), text(r)
    with serve("--root", str(root), "--warm", "1") as srv:
        await wait_ready(srv)
        async with client(srv.url()) as c:
            r = await c.call_tool("lsp", {"action": "status"})
            assert "python: not started yet" in text(r), text(r)



async def test_sessions_share_one_language_server_unless_told_not_to(tmp_path):
    import re
    import shutil

    if shutil.which("pyright-langserver") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pyright-langserver is not on PATH")
        pytest.skip("pyright-langserver is not on PATH")
    root = workspace(tmp_path)
    (root / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0"\n')
    (root / "lib" / "area.py").write_text('def area(r: float) -> float:\n    """Disc area."""\n    return 3.14 * r * r\n')
    hover = {"action": "hover", "file": "lib/area.py", "line": 1, "symbol": "area"}
    for flags, servers in (((), 1), (("--no-shared-servers",), 2)):
        with serve("--root", str(root), *flags) as srv:
            async with client(srv.url()) as a, client(srv.url()) as b:
                for c in (a, b):
                    r = await c.call_tool("lsp", hover)
                    assert "Disc area" in text(r), text(r)
                async with httpx2.AsyncClient(timeout=10) as http:
                    body = (await http.get(srv.url("/metrics"))).text
                assert metric(body, "agent_tools_child_processes") == servers, body
                status = text(await b.call_tool("lsp", {"action": "status"}))
                line = next(l for l in status.splitlines() if l.startswith("python: running"))
                if servers == 1:
                    assert re.fullmatch(r"python: running pyright-langserver for root \. \(shared by 2 sessions: run-\S+, run-\S+, \d+ MiB, idle \d+s\)", line), line
                else:
                    assert line.startswith("python: running pyright-langserver for root .") and "shared" not in line, line


def children_of(pid):
    """The pids whose parent is `pid`."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.add(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


async def test_warm_kernel_starts_a_warm_runs_kernel_ahead(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--warm", "1", "--warm-kernel", "python") as srv:
        await wait_ready(srv)
        async with httpx2.AsyncClient(timeout=10) as http:
            with anyio.fail_after(60):
                while metric((await http.get(srv.url("/metrics"))).text, "agent_tools_child_processes") != 2:
                    await anyio.sleep(0.2)
        before = children_of(srv.proc.pid)
        async with client(srv.url()) as c:
            r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": DESC})
            kernel = int(text(r))
        # The session's first cell ran in a kernel started before the session existed.
        assert kernel in before, (kernel, before)


# --- metrics and logs -----------------------------------------------------------------------



async def test_metrics_count_sessions_calls_children_and_need_credentials(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("a-static-token-of-enough-length\n")
    token = "a-static-token-of-enough-length"
    with serve("--root", str(workspace(tmp_path, 1)), "--token-file", str(token_file), "--warm", "1") as srv:
        await wait_ready(srv)
        async with httpx2.AsyncClient(timeout=10) as http:
            r = await http.get(srv.url("/metrics"))
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer "), r.text
            auth = {"Authorization": f"Bearer {token}"}
            before = (await http.get(srv.url("/metrics"), headers=auth)).text
            assert metric(before, "agent_tools_warm_runs") == 2, before
            async with client(srv.url(), token) as c:
                assert not (await c.call_tool("read", {"path": "lib/m0.py"})).is_error
                assert (await c.call_tool("read", {"path": "missing.txt"})).is_error
                r = await c.call_tool("eval", {"code": "1", "description": DESC})
                assert not r.is_error, text(r)
                with pytest.raises(Exception):
                    await c.call_tool("no such tool", {})
                during = (await http.get(srv.url("/metrics"), headers=auth)).text
                assert metric(during, "agent_tools_sessions_open") == 1, during
                assert metric(during, "agent_tools_runs_open") == 1, during
                assert metric(during, "agent_tools_child_processes") == 1, during
                assert metric(during, "agent_tools_resident_memory_bytes") > 0, during
            # The session took a warm run and a replacement was opened.
            with anyio.fail_after(30):
                while True:
                    after = (await http.get(srv.url("/metrics"), headers=auth)).text
                    if metric(after, "agent_tools_warm_runs") == 2 and metric(after, "agent_tools_runs_open") == 0:
                        break
                    await anyio.sleep(0.1)
        assert metric(after, "agent_tools_sessions_total") == 1, after
        assert metric(after, "agent_tools_calls_total", tool="read", outcome="ok") == 1, after
        assert metric(after, "agent_tools_calls_total", tool="read", outcome="error") == 1, after
        assert metric(after, "agent_tools_calls_total", tool="eval", outcome="ok") == 1, after
        assert metric(after, "agent_tools_calls_total", tool="(unknown)", outcome="protocol_error") == 1, after
        assert metric(after, "agent_tools_call_duration_seconds_count", tool="read") == 2, after
        assert metric(after, "agent_tools_call_duration_seconds_bucket", tool="read", le="+Inf") == 2, after
        assert metric(after, "agent_tools_child_processes") == 0, after
    with serve("--root", str(workspace(tmp_path)), "--token-file", str(token_file), "--metrics-public") as srv:
        async with httpx2.AsyncClient(timeout=10) as http:
            r = await http.get(srv.url("/metrics"))
            assert r.status_code == 200 and "agent_tools_sessions_open 0" in r.text, r.text


async def test_json_logs_have_one_object_per_event_and_no_arguments(tmp_path):
    secret = "an-argument-the-log-must-not-hold"
    with serve("--root", str(workspace(tmp_path, 1)), "--log-format", "json") as srv:
        async with client(srv.url()) as c:
            r = await c.call_tool("write", {"path": "w.txt", "content": secret})
            assert not r.is_error, text(r)
            r = await c.call_tool("read", {"path": "w.txt"})
            assert secret in text(r)
        with anyio.fail_after(30):
            while not any("session closed" in line for line in srv.stderr_lines):
                await anyio.sleep(0.1)
    lines = [line for line in srv.stderr_lines if line.strip()]
    events = [json.loads(line) for line in lines]  # every line is one JSON object
    assert not any(secret in line for line in lines), lines
    messages = [e.get("message") for e in events]
    assert "session opened" in messages and "session closed" in messages, messages
    ended = [e for e in events if e.get("message") == "call ended"]
    assert [(e["tool"], e["outcome"]) for e in ended] == [("write", "ok"), ("read", "ok")], ended
    assert all(e["duration_ms"] >= 0 and e["session"] != "-" and e["call"] for e in ended), ended
    started = [e for e in events if e.get("message") == "call started"]
    assert len(started) == 2 and started[0]["session"] == ended[0]["session"], started


# --- long calls ---------------------------------------------------------------------------


async def test_a_quiet_long_call_reports_that_it_is_still_running(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--progress-interval", "1") as srv:
        async with client(srv.url()) as c:
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, message))

            r = await c.call_tool(
                "eval",
                {"code": "import time\ntime.sleep(3.5)\n'done'", "description": DESC},
                progress_callback=on_progress,
            )
            assert text(r) == "'done'", text(r)
            assert len(seen) >= 2, seen
            assert all("eval still running after" in m for _, m in seen), seen
            values = [p for p, _ in seen]
            assert values == sorted(values) and len(set(values)) == len(values), seen
            # Without a progress token nothing is sent.
            seen.clear()
            r = await c.call_tool("eval", {"code": "import time\ntime.sleep(2.5)", "description": DESC})
            assert not r.is_error and seen == [], seen
