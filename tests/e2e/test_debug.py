"""The debug tool end to end: a real debugpy session behind `agent-tools mcp`, driven by a
real MCP client — absent on the plan surface, breakpoints before launch, the stop report,
inspection, the one-session rule, and no adapter or debuggee left behind when the server
goes away."""

import os
import shutil
import time

import pytest

from conftest import mcp_session, run_cli, running, text

pytestmark = pytest.mark.anyio

APP = """def add(a, b):
    total = a + b
    return total


print("sum", add(2, 3))
"""



def has_debugpy() -> bool:
    return shutil.which("debugpy") is not None


async def test_debug_is_absent_on_the_plan_surface(tmp_path):
    async with mcp_session(tmp_path) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert "debug" in tools
    assert "operation" in tools["debug"].input_schema["properties"]
    async with mcp_session(tmp_path, "plan") as c:
        assert "debug" not in {t.name for t in (await c.list_tools()).tools}
        # Calling it anyway answers "unknown tool", exactly as for a name that never existed.
        with pytest.raises(Exception, match="unknown tool `debug`"):
            await c.call_tool("debug", {"operation": "status"})


async def test_adapters_explain_the_missing_half(tmp_path):
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("debug", {"operation": "adapters"})
    assert not r.is_error, text(r)
    out = text(r)
    assert "debugpy: not usable — missing root marker" in out, out
    assert "dart: not usable" in out, out


@pytest.mark.skipif(not has_debugpy() and os.environ.get("CI") != "true", reason="debugpy not installed")
async def test_a_debugpy_session_through_mcp(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "app.py").write_text(APP)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("debug", {"operation": "breakpoints", "file": "app.py", "lines": [2]})
        assert not r.is_error, text(r)
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        assert not r.is_error, text(r)
        s = r.structured_content
        assert s["state"] == "stopped" and s["reason"] == "breakpoint", s
        assert s["location"]["path"] == "app.py" and s["location"]["line"] == 2, s
        assert "total = a + b" in text(r)
        r = await c.call_tool("debug", {"operation": "evaluate", "expression": "a * 10 + b"})
        assert text(r).startswith("23"), text(r)
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        assert r.is_error and "terminate" in text(r), text(r)
        r = await c.call_tool("debug", {"operation": "status"})
        pid = r.structured_content["adapter_pid"]
        assert running(pid)
        r = await c.call_tool("debug", {"operation": "continue"})
        assert r.structured_content["state"] == "terminated", text(r)
        assert r.structured_content["exit_code"] == 0
        assert "sum 5" in text(r)
        # Start again and leave it stopped: closing the server must kill the adapter.
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        assert r.structured_content["state"] == "stopped", text(r)
        r = await c.call_tool("debug", {"operation": "status"})
        pid = r.structured_content["adapter_pid"]
    deadline = time.time() + 10
    while running(pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not running(pid), "the adapter outlived the server"


@pytest.mark.skipif(not has_debugpy() and os.environ.get("CI") != "true", reason="debugpy not installed")
async def test_terminate_clears_breakpoints_and_scopes_default_to_the_top_frame(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "app.py").write_text(APP)
    async with mcp_session(tmp_path) as c:
        await c.call_tool("debug", {"operation": "breakpoints", "file": "app.py", "lines": [2]})
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        assert "breakpoints applied" in text(r) and "app.py:2" in text(r), text(r)
        top = r.structured_content["location"]["frame_id"]
        r = await c.call_tool("debug", {"operation": "scopes"})
        assert not r.is_error, text(r)
        assert r.structured_content["frame_id"] == top
        r = await c.call_tool("debug", {"operation": "terminate"})
        assert "1 breakpoint(s) in 1 file(s) cleared" in text(r), text(r)
        # The next launch does not stop at the terminated session's breakpoint.
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        assert r.structured_content["state"] == "terminated", text(r)
        assert "sum 5" in text(r)


def test_doctor_lists_the_debug_adapters(tmp_path):
    p = run_cli("doctor", "--root", str(tmp_path), check=False)
    out = p.stdout + p.stderr
    assert "debugpy" in out and "lldb" in out and "delve" in out, out
