"""Background workers (the vibe_* tools), end to end through a real MCP client.

The workers are the suite's own stand-in CLI (crates/tools-vibe/tests/fixtures/worker.py),
configured as both tiers in the workspace's agent-tools.toml: `fast` takes the brief as an
argument and reads JSON events, `good` reads the brief on stdin and keeps the stdout tail.
The workspace's own file names the worker programs, so these runs are trusted (`--trust`).
"""

import json
import os
import sys
import time

import pytest

from conftest import REPO, mcp_session, run_cli, text

pytestmark = pytest.mark.anyio

WORKER = REPO / "crates" / "tools-vibe" / "tests" / "fixtures" / "worker.py"
VIBE_TOOLS = {"vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"}
TRUST = ["--trust"]


def write_config(root, extra=""):
    py = json.dumps(sys.executable)
    w = json.dumps(str(WORKER))
    (root / "agent-tools.toml").write_text(
        f"""
[vibe.fast]
command = [{py}, {w}, "{{brief}}"]
result = "json-events"
linger_seconds = 0.5

[vibe.good]
command = [{py}, {w}]
{extra}
"""
    )


def live_group_members(pgid):
    """Live (not zombie) processes of process group `pgid`, from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(entry))
    return out


def wait_for(predicate, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def read_pidfile(path):
    wait_for(path.exists, f"{path} to be written")
    pid, child = path.read_text().split()
    return int(pid), int(child)


async def test_no_vibe_table_no_tools(tmp_path):
    async with mcp_session(tmp_path, args=TRUST) as c:
        names = {t.name for t in (await c.list_tools()).tools}
    assert not names & VIBE_TOOLS, names


async def test_tools_are_read_tier_on_every_surface(tmp_path):
    write_config(tmp_path)
    for surface in ["full", "plan", "read-only"]:
        async with mcp_session(tmp_path, surface, args=TRUST) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
        assert VIBE_TOOLS <= set(tools), (surface, set(tools))
        # Reading tier, but it starts a process: not read-only in MCP's sense.
        assert tools["vibe_spawn"].annotations.open_world_hint is True
        assert not tools["vibe_spawn"].annotations.read_only_hint
        assert tools["vibe_list"].annotations.read_only_hint is True


async def test_spawn_list_wait_send_round_trip(tmp_path):
    write_config(tmp_path)
    gate = tmp_path / "gate"
    async with mcp_session(tmp_path, args=TRUST) as c:
        r = await c.call_tool("vibe_spawn", {"brief": f"first gate={gate}", "label": "e2e"})
        assert not r.is_error, text(r)
        assert r.structured_content["id"] == "w1"
        assert r.structured_content["status"] == "running"
        log = r.structured_content["log_path"]
        assert log in text(r)

        r = await c.call_tool("vibe_list", {})
        assert 'w1 "e2e" [fast] running, round 1' in text(r), text(r)

        r = await c.call_tool("vibe_wait", {"worker_id": "w1", "timeout_seconds": 0.3})
        assert not r.is_error
        assert text(r).startswith("still running"), text(r)
        assert r.structured_content["still_running"] is True

        gate.write_text("")
        r = await c.call_tool("vibe_wait", {"worker_id": "w1", "timeout_seconds": 60})
        assert r.structured_content["status"] == "done", text(r)
        assert r.structured_content["result"] == f"echo: first gate={gate}"

        r = await c.call_tool("vibe_send", {"worker_id": "w1", "message": "second"})
        assert not r.is_error and "round 2 is running" in text(r), text(r)
        r = await c.call_tool("vibe_wait", {"worker_id": "w1", "timeout_seconds": 60})
        s = r.structured_content
        assert s["status"] == "done" and s["round"] == 2, text(r)
        assert s["result"].startswith("echo: first") and "second" in s["result"]

        # The stdin tier: the brief arrives on stdin, the result is the stdout tail.
        r = await c.call_tool("vibe_spawn", {"brief": "tail me final=none", "label": "t", "tier": "good"})
        r = await c.call_tool("vibe_wait", {"worker_id": "w2", "timeout_seconds": 60})
        assert r.structured_content["status"] == "done", text(r)
        assert r.structured_content["result"].endswith("brief: tail me final=none")
    content = open(log).read()
    assert "--- round 1 ended: done" in content and "progress: round 2 starting" in content


async def test_kill_failure_and_bad_input(tmp_path):
    write_config(tmp_path)
    pids = tmp_path / "pids"
    async with mcp_session(tmp_path, args=TRUST) as c:
        await c.call_tool("vibe_spawn", {"brief": f"child=1 sleep=600 pidfile={pids}", "label": "k"})
        pid, child = read_pidfile(pids)
        assert live_group_members(pid)
        r = await c.call_tool("vibe_kill", {"worker_id": "w1"})
        assert not r.is_error and text(r).startswith("killed"), text(r)
        wait_for(lambda: not live_group_members(pid), "the killed worker's group to go")

        r = await c.call_tool("vibe_spawn", {"brief": "final=none exit=4", "label": "bad"})
        r = await c.call_tool("vibe_wait", {"worker_id": "w2", "timeout_seconds": 60})
        s = r.structured_content
        assert s["status"] == "failed" and s["exit_code"] == 4, text(r)
        assert "last output:" in text(r) and "stderr: hello from the worker" in text(r)

        r = await c.call_tool("vibe_wait", {"worker_id": "w9"})
        assert r.is_error and "no worker `w9`" in text(r), text(r)
        r = await c.call_tool("vibe_spawn", {"brief": "x", "label": "l", "tier": "turbo"})
        assert r.is_error and "unknown tier `turbo`" in text(r), text(r)
        r = await c.call_tool("vibe_spawn", {"brief": "   ", "label": "l"})
        assert r.is_error and "brief" in text(r), text(r)
        r = await c.call_tool("vibe_list", {})
        assert r.structured_content["total"] == 2


async def test_closing_the_session_leaves_no_worker(tmp_path):
    write_config(tmp_path)
    groups = []
    async with mcp_session(tmp_path, args=TRUST) as c:
        for i, tier in enumerate(["fast", "good", "fast"]):
            pidfile = tmp_path / f"pids{i}"
            r = await c.call_tool(
                "vibe_spawn", {"brief": f"child=1 sleep=600 pidfile={pidfile}", "label": f"j{i}", "tier": tier}
            )
            assert not r.is_error, text(r)
            groups.append(read_pidfile(pidfile))
        r = await c.call_tool("vibe_list", {})
        assert text(r).count("running, round 1") == 3, text(r)
    for pid, child in groups:
        wait_for(lambda: not live_group_members(pid), f"worker group {pid} to go")


def test_doctor_reports_each_tier(tmp_path):
    write_config(tmp_path, '[vibe.broken]\ncommand = ["no-such-worker-cli-xyz"]\n')
    out = run_cli("doctor", "--trust", "--root", str(tmp_path)).stdout
    lines = [l for l in out.splitlines() if l.startswith("[vibe]")]
    assert any("tier fast" in l and "brief in arguments" in l for l in lines), out
    assert any("tier good" in l and "brief on stdin" in l for l in lines), out
    assert any("tier broken" in l and "not on the worker's PATH" in l for l in lines), out
