"""ask_user and the permission gate, end to end: the built binary driven by the official MCP
Python client with an elicitation callback, and the terminal card on a real pseudo-terminal."""

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from conftest import agent_tools_bin, mcp_session, run_cli, text

pytestmark = pytest.mark.anyio

COLOURS = {
    "question": "Which colours?",
    "context": "The theme depends on it.",
    "options": [{"label": "Red", "description": "warm"}, {"label": "Blue"}, {"label": "Green"}],
}


class Human:
    """An elicitation callback playing the human: answers from a script, records the forms."""

    def __init__(self, *replies, delay=0.0):
        self.replies = list(replies)
        self.forms = []
        self.delay = delay

    async def __call__(self, context, params):
        self.forms.append(params)
        if self.delay:
            await anyio.sleep(self.delay)
        action, content = self.replies.pop(0)
        return types.ElicitResult(action=action, content=content)


def legacy(human=None):
    """Client options for the initialize handshake (2025-11-25), with or without elicitation."""
    kwargs = {"mode": "legacy"}
    if human is not None:
        kwargs["elicitation_callback"] = human
    return kwargs


async def tool_names(client):
    return {t.name for t in (await client.list_tools()).tools}


async def test_accept_one_several_and_free_text(tmp_path):
    human = Human(
        ("accept", {"choice": "Blue"}),
        ("accept", {"choices": ["Green", "Red"]}),
        ("accept", {"text": "  Lighthouse "}),
    )
    async with mcp_session(tmp_path, "plan", **legacy(human)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert tools["ask_user"].annotations.read_only_hint is True
        r = await c.call_tool("ask_user", COLOURS)
        assert not r.is_error, text(r)
        assert text(r) == "Card #1 answered.\nChosen: `Blue`"
        assert r.structured_content["card"] == 1 and r.structured_content["selected"] == ["Blue"]
        r = await c.call_tool("ask_user", {**COLOURS, "question": "Which colours, several?", "multi_select": True})
        assert r.structured_content["selected"] == ["Red", "Green"], text(r)
        assert r.structured_content["card"] == 2
        r = await c.call_tool("ask_user", {"question": "Name of the app?"})
        assert r.structured_content == {
            "card": 3, "outcome": "answered", "selected": [], "text": "Lighthouse",
            "gate": "mcp-elicitation", "multi_select_offered": False,
        }
    single, several, free = human.forms
    assert single.message.startswith("Question #1: Which colours?\n\nThe theme depends on it.\n")
    assert "  1. Red — warm" in single.message and "Decline to skip" in single.message
    schema = single.requested_schema
    assert schema["properties"]["choice"]["oneOf"][0] == {"const": "Red", "title": "Red — warm"}
    assert schema["required"] == ["choice"]
    choices = several.requested_schema["properties"]["choices"]
    assert choices["type"] == "array"
    assert [o["const"] for o in choices["items"]["anyOf"]] == ["Red", "Blue", "Green"]
    assert list(free.requested_schema["properties"]) == ["text"]


async def test_decline_and_cancel_are_skips(tmp_path):
    human = Human(("decline", None), ("cancel", None), ("accept", {}))
    async with mcp_session(tmp_path, **legacy(human)) as c:
        for question, how in [("Tabs?", "declined"), ("Spaces?", "cancelled"), ("Both?", "empty form")]:
            r = await c.call_tool("ask_user", {"question": question, "options": [{"label": "yes"}, {"label": "no"}]})
            assert not r.is_error, text(r)
            assert how in text(r) and "Do not ask this again" in text(r)
            assert r.structured_content["outcome"] == "skipped"
        # The skipped question is not asked a second time.
        r = await c.call_tool("ask_user", {"question": "tabs?", "allow_free_text": True})
        assert r.is_error and "already asked as card #1" in text(r)
    assert len(human.forms) == 3


async def test_invalid_questions_are_refused(tmp_path):
    human = Human()
    async with mcp_session(tmp_path, **legacy(human)) as c:
        for args, needle in [
            ({"question": " "}, "question"),
            ({"question": "q", "options": [{"label": "A"}, {"label": "a"}]}, "given twice"),
            ({"question": "q", "multi_select": True}, "multi_select"),
        ]:
            r = await c.call_tool("ask_user", args)
            assert r.is_error and needle in text(r), text(r)
    assert human.forms == []


async def test_without_elicitation_ask_user_is_not_listed(tmp_path):
    async with mcp_session(tmp_path, **legacy()) as c:
        assert "ask_user" not in await tool_names(c)
        assert "write" in await tool_names(c)


async def test_newest_protocol_asks_through_input_required_rounds(tmp_path):
    # In `auto` mode the SDK negotiates 2026-07-28: no server-to-client requests. The call
    # keeps running on the server, the question goes out as an `input_required` result, and
    # the SDK's retry with the answer resumes it.
    human = Human(("accept", {"choice": "Blue"}), ("accept", {"allow": True}), ("decline", None))
    async with mcp_session(tmp_path, args=["--approve", "ask"], mode="auto", elicitation_callback=human) as c:
        assert c.session.protocol_version >= "2026-07-28"
        assert "ask_user" in await tool_names(c)
        r = await c.call_tool("ask_user", COLOURS)
        assert not r.is_error, text(r)
        assert r.structured_content["selected"] == ["Blue"] and r.structured_content["card"] == 1
        r = await c.call_tool("write", {"path": "new.txt", "content": "x\n"})
        assert not r.is_error, text(r)
        r = await c.call_tool("write", {"path": "refused.txt", "content": "x\n"})
        assert r.is_error and r.structured_content["error"]["kind"] == "rejected", text(r)
    assert (tmp_path / "new.txt").read_text() == "x\n"
    assert not (tmp_path / "refused.txt").exists()
    assert len(human.forms) == 3
    assert "Which colours?" in human.forms[0].message


async def test_newest_protocol_without_elicitation_has_no_ask_user(tmp_path):
    async with mcp_session(tmp_path, args=["--approve", "ask"], mode="auto") as c:
        assert "ask_user" not in await tool_names(c)
        r = await c.call_tool("write", {"path": "new.txt", "content": "x\n"})
        assert r.is_error and "no human is attached" in text(r)
    assert not (tmp_path / "new.txt").exists()


async def test_old_protocol_offers_a_single_choice(tmp_path, monkeypatch):
    import mcp.client.session as session_module

    monkeypatch.setattr(session_module, "LATEST_HANDSHAKE_VERSION", "2025-06-18")
    human = Human(("accept", {"choice": "Green", "text": "and Red"}))
    async with mcp_session(tmp_path, **legacy(human)) as c:
        assert c.session.protocol_version == "2025-06-18"
        r = await c.call_tool("ask_user", {**COLOURS, "multi_select": True, "allow_free_text": True})
        assert not r.is_error, text(r)
        assert r.structured_content["selected"] == ["Green"]
        assert r.structured_content["multi_select_offered"] is False
        assert "single choice only" in text(r)
    (form,) = human.forms
    assert "can pick only one" in form.message
    assert form.requested_schema["properties"]["choice"]["enum"] == ["Red", "Blue", "Green"]
    assert "choices" not in form.requested_schema["properties"]


async def test_a_silent_human_times_out_with_an_error(tmp_path):
    (tmp_path / "agent-tools.toml").write_text("[ask]\ntimeout_secs = 1\n")
    human = Human(("accept", {"text": "too late"}), delay=3)
    async with mcp_session(tmp_path, **legacy(human)) as c:
        r = await c.call_tool("ask_user", {"question": "Anyone there?"})
        assert r.is_error, text(r)
        assert "card #1 got no answer within 1 s" in text(r)
        assert "Carry on under a stated assumption" in text(r)
        assert r.structured_content["error"]["kind"] == "timed_out"
        # The late reply is dropped and the session carries on.
        assert "up to 1 s" in {t.name: t for t in (await c.list_tools()).tools}["ask_user"].description
        await anyio.sleep(3)
        r = await c.call_tool("read", {"path": "agent-tools.toml"})
        assert not r.is_error, text(r)


async def test_approval_cards_in_ask_mode(tmp_path):
    human = Human(("accept", {"allow": True}), ("decline", None), ("accept", {"allow": False}))
    async with mcp_session(tmp_path, args=["--approve", "ask"], **legacy(human)) as c:
        r = await c.call_tool("write", {"path": "yes.txt", "content": "yes\n"})
        assert not r.is_error, text(r)
        r = await c.call_tool("write", {"path": "declined.txt", "content": "no\n"})
        assert r.is_error and "did not approve" in text(r) and "declined" in text(r)
        r = await c.call_tool("write", {"path": "refused.txt", "content": "no\n"})
        assert r.is_error and "refused it on permission card #3" in text(r)
        # Read tools never ask.
        r = await c.call_tool("read", {"path": "yes.txt"})
        assert not r.is_error
    assert (tmp_path / "yes.txt").read_text() == "yes\n"
    assert not (tmp_path / "declined.txt").exists() and not (tmp_path / "refused.txt").exists()
    first = human.forms[0]
    assert first.message.startswith("Permission #1: Allow the agent to run `write` (write tier: changes files)?")
    assert '"path": "yes.txt"' in first.message
    assert first.requested_schema["properties"]["allow"]["type"] == "boolean"
    assert first.requested_schema["required"] == ["allow"]


async def test_approval_without_a_gate_is_denied(tmp_path):
    async with mcp_session(tmp_path, args=["--approve", "ask"], **legacy()) as c:
        r = await c.call_tool("write", {"path": "a.txt", "content": "x\n"})
        assert r.is_error and "no human is attached" in text(r) and "fail-closed" in text(r)
    async with mcp_session(tmp_path, args=["--approve", "deny"], **legacy(Human())) as c:
        r = await c.call_tool("write", {"path": "a.txt", "content": "x\n"})
        assert r.is_error and "--approve deny" in text(r)
    assert not (tmp_path / "a.txt").exists()


class Screen:
    """The human's side of a pseudo-terminal: everything shown, and a keyboard."""

    def __init__(self, master_fd):
        self.fd = master_fd
        self.data = b""
        self.lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if not ready:
                    continue
                chunk = os.read(self.fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            with self.lock:
                self.data += chunk

    def text(self):
        with self.lock:
            return self.data.decode(errors="replace")

    def wait_for(self, needle, timeout=30):
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            assert time.monotonic() < deadline, f"the terminal never showed {needle!r}:\n{self.text()}"
            time.sleep(0.02)

    def type(self, line):
        os.write(self.fd, line.encode() + b"\n")


# Makes the pseudo-terminal named by argv[1] the controlling terminal, then runs argv[2:]:
# the MCP client keeps the server's stdin/stdout pipes, the card goes to /dev/tty.
ATTACH_TTY = """
import fcntl, os, sys, termios
try:
    os.setsid()
except OSError:
    pass
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
os.close(fd)
os.execv(sys.argv[2], sys.argv[2:])
"""


async def test_ask_tty_draws_the_card_on_the_terminal(tmp_path):
    master, slave = os.openpty()
    screen = Screen(master)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", ATTACH_TTY, os.ttyname(slave), agent_tools_bin(), "mcp", "--no-daemon", "--root", str(tmp_path),
              "--ask", "tty", "--approve", "ask"],
        env=dict(os.environ),
    )
    try:
        # No elicitation declared: the terminal is the gate.
        async with Client(params, mode="legacy") as c:
            assert "ask_user" in await tool_names(c)
            async with anyio.create_task_group() as tg:
                result = {}

                async def ask():
                    result["r"] = await c.call_tool("ask_user", {**COLOURS, "multi_select": True})

                tg.start_soon(ask)
                await anyio.to_thread.run_sync(screen.wait_for, "#1> ")
                screen.type("1 3")
            r = result["r"]
            assert not r.is_error, text(r)
            assert r.structured_content["selected"] == ["Red", "Green"]
            assert r.structured_content["gate"] == "terminal"
            shown = screen.text()
            assert "Question #1: Which colours?" in shown and "1. Red — warm" in shown
            assert "separated by commas or spaces" in shown and "empty line" in shown

            async with anyio.create_task_group() as tg:
                result = {}

                async def write():
                    result["r"] = await c.call_tool("write", {"path": "t.txt", "content": "t\n"})

                tg.start_soon(write)
                await anyio.to_thread.run_sync(screen.wait_for, "#2> ")
                screen.type("y")
            assert not result["r"].is_error, text(result["r"])
            assert "Permission #2: Allow the agent to run `write`" in screen.text()

            async with anyio.create_task_group() as tg:
                result = {}

                async def skip():
                    result["r"] = await c.call_tool("ask_user", {"question": "Tabs or spaces?"})

                tg.start_soon(skip)
                await anyio.to_thread.run_sync(screen.wait_for, "#3> ")
                screen.type("")
            assert not result["r"].is_error and result["r"].structured_content["outcome"] == "skipped"
        assert (tmp_path / "t.txt").read_text() == "t\n"
    finally:
        os.close(slave)
        os.close(master)


def test_call_asks_on_the_terminal_not_stdout(tmp_path):
    out_path = tmp_path / "stdout.txt"
    args = json.dumps({"question": "Pick one", "options": [{"label": "alpha"}, {"label": "beta"}]})
    pid, master = pty.fork()
    if pid == 0:
        # The child: the pseudo-terminal is its controlling terminal; stdout goes to a file.
        fd = os.open(str(out_path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.execv(agent_tools_bin(), [agent_tools_bin(), "call", "ask_user", "--args", args, "--root", str(tmp_path)])
    screen = Screen(master)
    try:
        screen.wait_for("#1> ")
        screen.type("2")
        deadline = time.monotonic() + 30
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            assert time.monotonic() < deadline, screen.text()
            time.sleep(0.05)
    finally:
        os.close(master)
    assert os.waitstatus_to_exitcode(status) == 0
    stdout = out_path.read_text()
    assert "Card #1 answered" in stdout and "`beta`" in stdout
    assert "Question #1" not in stdout
    assert "Question #1: Pick one" in screen.text()


def test_call_without_a_terminal_fails_at_once(tmp_path):
    proc = subprocess.run(
        [agent_tools_bin(), "call", "ask_user", "--args", '{"question": "anyone?"}', "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=60, start_new_session=True, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1, proc.stderr
    assert "no human is attached" in proc.stderr and "no terminal" in proc.stderr
    listed = json.loads(run_cli("tools", "--root", str(tmp_path)).stdout)
    assert "ask_user" in [t["name"] for t in listed]
