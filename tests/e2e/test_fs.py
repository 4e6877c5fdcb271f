"""The file tools and the surfaces, end to end through a real MCP client."""

import json
import os
import subprocess

import pytest
from mcp import MCPError

from conftest import agent_tools_bin, mcp_session, run_cli, text

pytestmark = pytest.mark.anyio

WRITE_TOOLS = {"write", "edit", "apply_patch", "lsp_rename", "ast_edit", "resolve"}
EXEC_TOOLS = {"debug", "eval", "test"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_surfaces_list_only_their_tiers(tmp_path, mode):
    async with mcp_session(tmp_path, "full", mode=mode) as c:
        full = {t.name: t for t in (await c.list_tools()).tools}
    assert {"read", "write", "edit", "apply_patch"} <= set(full)
    assert full["read"].annotations.read_only_hint is True
    assert full["write"].annotations.read_only_hint is False
    for surface in ["plan", "read-only"]:
        async with mcp_session(tmp_path, surface, mode=mode) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert "read" in names
            assert not names & (WRITE_TOOLS | EXEC_TOOLS), names
            # Calling a hidden tool is refused exactly like an unknown one.
            with pytest.raises(MCPError) as hidden:
                await c.call_tool("write", {"path": "x.txt", "content": "x"})
            with pytest.raises(MCPError) as unknown:
                await c.call_tool("no_such_tool", {})
            assert "unknown tool" in str(hidden.value) and "unknown tool" in str(unknown.value)
    assert not (tmp_path / "x.txt").exists()


async def test_read_write_edit_round_trip(tmp_path):
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("write", {"path": "src/a.txt", "content": "alpha\nbeta\nalpha\n"})
        assert not r.is_error, text(r)
        assert "Created src/a.txt" in text(r)
        assert r.structured_content["created"] is True
        r = await c.call_tool("read", {"path": "src/a.txt"})
        assert text(r) == "     1\talpha\n     2\tbeta\n     3\talpha\n"
        r = await c.call_tool("edit", {"path": "src/a.txt", "old_string": "alpha", "new_string": "gamma"})
        assert r.is_error and "occurs 2 times" in text(r) and "lines 1, 3" in text(r)
        assert (tmp_path / "src/a.txt").read_text() == "alpha\nbeta\nalpha\n"
        r = await c.call_tool("edit", {"path": "src/a.txt", "old_string": "beta", "new_string": "delta"})
        assert not r.is_error and "Edited src/a.txt:2" in text(r)
        assert (tmp_path / "src/a.txt").read_text() == "alpha\ndelta\nalpha\n"
        r = await c.call_tool("edit", {"path": "src/a.txt", "old_string": "zeta", "new_string": "x"})
        assert r.is_error and "does not occur" in text(r)
        r = await c.call_tool("read", {"path": "src/a.txt", "offset": "x"})
        assert r.is_error and "offset" in text(r)


async def test_paths_outside_the_root_are_refused(tmp_path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    os.symlink(outside, root / "link")
    async with mcp_session(root) as c:
        for path in ["../outside/secret.txt", str(outside / "secret.txt"), "link/secret.txt"]:
            r = await c.call_tool("read", {"path": path})
            assert r.is_error, path
            assert "outside the workspace" in text(r), text(r)
        r = await c.call_tool("write", {"path": "link/new.txt", "content": "x"})
        assert r.is_error and "symlink" in text(r)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_apply_patch_third_hunk_failure_changes_nothing(tmp_path):
    files = {"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 2\n", "c.py": "def c():\n    return 3\n"}
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    bad = (
        "*** Begin Patch\n"
        "*** Update File: a.py\n@@\n-    return 1\n+    return 10\n"
        "*** Update File: b.py\n@@\n-    return 2\n+    return 20\n"
        "*** Update File: c.py\n@@\n-    return 999\n+    return 30\n"
        "*** End Patch\n"
    )
    before = {n: (tmp_path / n).stat().st_mtime_ns for n in files}
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("apply_patch", {"patch": bad})
        assert r.is_error and "hunk 1 of `c.py`" in text(r) and "no file was changed" in text(r), text(r)
        for name, body in files.items():
            assert (tmp_path / name).read_text() == body
            assert (tmp_path / name).stat().st_mtime_ns == before[name]
        good = bad.replace("return 999", "return 3")
        r = await c.call_tool("apply_patch", {"patch": good})
        assert not r.is_error, text(r)
    assert (tmp_path / "c.py").read_text() == "def c():\n    return 30\n"


async def test_apply_patch_rolls_back_a_failed_write(tmp_path):
    """A write that fails half-way (injected on the second file) restores the first."""
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
        "*** Add File: c.txt\n+c\n*** End Patch\n"
    )
    async with mcp_session(tmp_path, env={"AGENT_TOOLS_TEST_FAIL_WRITE_AT": "1"}) as c:
        r = await c.call_tool("apply_patch", {"patch": patch})
        assert r.is_error and "no file was changed" in text(r), text(r)
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert (tmp_path / "b.txt").read_text() == "b\n"
    assert not (tmp_path / "c.txt").exists()


def raw_exchange(root, protocol_version):
    """Speaks the handshake by hand with a given protocol version (the SDK always offers its newest)."""
    proc = subprocess.Popen(
        [agent_tools_bin(), "mcp", "--no-daemon", "--root", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    def send(msg):
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
    def recv():
        return json.loads(proc.stdout.readline())
    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": protocol_version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        init = recv()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = recv()
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "f.txt"}}})
        call = recv()
        return init, tools, call
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_handshake_protocol_versions(tmp_path, version):
    (tmp_path / "f.txt").write_text("hello\n")
    init, tools, call = raw_exchange(tmp_path, version)
    assert init["result"]["protocolVersion"] == version
    assert "read" in {t["name"] for t in tools["result"]["tools"]}
    assert call["result"]["isError"] is False
    assert "resultType" not in call["result"], "older protocols do not carry resultType"
    assert call["result"]["content"][0]["text"] == "     1\thello\n"


def test_cli_tools_call_and_doctor(tmp_path):
    listed = json.loads(run_cli("tools", "--surface", "plan", "--root", str(tmp_path)).stdout)
    assert "read" in [t["name"] for t in listed] and "write" not in [t["name"] for t in listed]
    assert all(t["tier"] == "read" for t in listed)
    r = run_cli("call", "write", "--args", '{"path":"n.txt","content":"x\\n"}', "--root", str(tmp_path))
    assert "Created n.txt" in r.stdout
    r = run_cli("call", "read", "--args", '{"path":"missing"}', "--root", str(tmp_path), check=False)
    assert r.returncode == 1 and "does not exist" in r.stderr
    r = run_cli("call", "read", "--args", "not json", "--root", str(tmp_path), check=False)
    assert r.returncode != 0 and "not valid JSON" in r.stderr
    r = run_cli("doctor", "--root", str(tmp_path))
    assert "[fs] ok" in r.stdout
    (tmp_path / "agent-tools.toml").write_text("[broken\n")
    r = run_cli("doctor", "--root", str(tmp_path), check=False)
    assert r.returncode != 0 and "agent-tools.toml" in r.stderr
