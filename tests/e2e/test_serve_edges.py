"""`agent-tools serve --http` at the edges real clients hit: the Origin check (own origin
served, a foreign one refused with 403 before anything changes, --allow-origin honoured), a
handshake-era request without its session refused with 400, a 2025-11-25 session that lists
the tasks extension getting each cell's output in place (official Python SDK), and `ask_user` over the
sessionless protocol — a round trip with the official Python SDK that succeeds, and raw
retries whose `requestState` is forged, replayed, sent by another caller or for another call,
each refused with a JSON-RPC error while the real answer still goes through."""

import json

import anyio
import httpx2
import pytest

from conftest import text
from serve_support import DESC, INIT, MCP_HEADERS, client, serve, workspace

pytestmark = pytest.mark.anyio

NEWEST = "2026-07-28"
COLOURS = {
    "question": "Which colours?",
    "options": [{"label": "Red"}, {"label": "Blue"}, {"label": "Green"}],
}


def port_of(srv):
    return srv.base.rsplit(":", 1)[1]


def rpc_message(response):
    """The JSON-RPC message of an answer sent as JSON or as an SSE stream."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:])
        raise AssertionError(f"no message in the stream: {response.text!r}")
    return response.json()


async def post(url, body, **headers):
    async with httpx2.AsyncClient(timeout=60) as http:
        return await http.post(url, json=body, headers={**MCP_HEADERS, **headers})


# --- Origin ------------------------------------------------------------------------------


async def test_the_own_origin_is_served_under_both_loopback_names(tmp_path):
    with serve("--root", str(workspace(tmp_path))) as srv:
        for host in ("localhost", "127.0.0.1"):
            r = await post(srv.url(), INIT, Origin=f"http://{host}:{port_of(srv)}")
            assert r.status_code == 200, r.text
            assert r.headers["mcp-session-id"], r.headers


async def test_a_foreign_origin_is_refused_with_403_and_changes_nothing(tmp_path):
    root = workspace(tmp_path)
    with serve("--root", str(root), "--metrics-public") as srv:
        r = await post(srv.url(), INIT, Origin="http://evil.example")
        assert r.status_code == 403, r.text
        assert r.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32000,
                "message": f'Forbidden: origin "http://evil.example" is not this server\'s own '
                f"(http://localhost:{port_of(srv)}) and is not allowed with --allow-origin",
            },
        }
        # Another port of this machine is another origin.
        r = await post(srv.url(), INIT, Origin=f"http://localhost:{int(port_of(srv)) + 1}")
        assert r.status_code == 403, r.text
        # A session opened by a program (no Origin) is not reachable from a foreign page.
        opened = await post(srv.url(), INIT)
        session = opened.headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
        await post(srv.url(), {"jsonrpc": "2.0", "method": "notifications/initialized"}, **headers)
        write = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "write", "arguments": {"path": "planted.txt", "content": "x\n"}},
        }
        r = await post(srv.url(), write, Origin="http://evil.example", **headers)
        assert r.status_code == 403, r.text
        assert not (root / "planted.txt").exists()
        async with httpx2.AsyncClient(timeout=10) as http:
            metrics = (await http.get(srv.url("/metrics"))).text
            assert "\nagent_tools_sessions_total 1\n" in metrics, metrics
            probe = await http.get(srv.url("/healthz"), headers={"Origin": "http://evil.example"})
            assert probe.status_code == 403, probe.text


async def test_allow_origin_is_honoured_exactly(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--allow-origin", "http://app.example:5173") as srv:
        r = await post(srv.url(), INIT, Origin="http://app.example:5173")
        assert r.status_code == 200, r.text
        for other in ("http://app.example:5174", "https://app.example:5173", "http://app.example"):
            r = await post(srv.url(), INIT, Origin=other)
            assert r.status_code == 403, (other, r.text)


# --- sessions ----------------------------------------------------------------------------


async def test_a_handshake_era_request_without_its_session_is_refused_with_400(tmp_path):
    root = workspace(tmp_path)
    expected = (
        "Bad Request: missing Mcp-Session-Id header; a request of protocol 2025-11-25 belongs to "
        "a session: send initialize first, then send the Mcp-Session-Id its answer carries with "
        "every request"
    )
    write = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "write", "arguments": {"path": "lost.txt", "content": "x\n"}},
    }
    for flags in ([], ["--sessionless"]):
        with serve("--root", str(root), *flags) as srv:
            r = await post(srv.url(), write, **{"MCP-Protocol-Version": "2025-11-25"})
            assert r.status_code == 400, (flags, r.text)
            assert r.json() == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32000, "message": expected}}
            assert not (root / "lost.txt").exists()
            # The same version named the newest protocol's way, in the request's own _meta
            # (which the transport would otherwise serve without a session, in a run thrown
            # away with the answer).
            inline = {
                **write,
                "params": {
                    **write["params"],
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2025-11-25",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            }
            r = await post(srv.url(), inline)
            assert r.status_code == 400, (flags, r.text)
            assert r.json() == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32000, "message": expected}}
            assert not (root / "lost.txt").exists()
            # Without a version at all, the transport's default (2025-03-26) is handshake-era.
            r = await post(srv.url(), {"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
            assert r.status_code == 400 and "protocol 2025-03-26" in r.json()["error"]["message"], r.text


async def test_a_2025_11_25_session_listing_tasks_gets_each_cells_output_in_place(tmp_path):
    from mcp.client import advertise

    root = workspace(tmp_path)
    (root / "agent-tools.toml").write_text("[eval]\nprogress_interval_secs = 0.2\n")
    seen = []

    async def progress(value, total, message):
        seen.append(message)

    with serve("--root", str(root)) as srv:
        async with client(
            srv.url(), mode="legacy", extensions=[advertise("io.modelcontextprotocol/tasks")]
        ) as c:
            assert c.session.protocol_version == "2025-11-25"
            with anyio.fail_after(60):
                r = await c.call_tool(
                    "eval",
                    {"code": "import time\ntime.sleep(1.5)\nkept = 6 * 7\nkept", "description": DESC},
                    progress_callback=progress,
                )
                assert not r.is_error and text(r) == "42", text(r)
                r = await c.call_tool("eval", {"code": "kept + 1", "description": DESC})
                assert text(r) == "43", text(r)
    assert seen and all(m.startswith("python cell running for ") for m in seen), seen


# --- ask_user without sessions -----------------------------------------------------------


class Human:
    """An elicitation callback playing the human: answers from a script, records the forms."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.forms = []

    async def __call__(self, context, params):
        from mcp import types

        self.forms.append(params)
        action, content = self.replies.pop(0)
        return types.ElicitResult(action=action, content=content)


async def test_a_sessionless_ask_user_round_trip_succeeds_with_the_python_sdk(tmp_path):
    with serve("--root", str(workspace(tmp_path)), "--sessionless") as srv:
        human = Human(("accept", {"choice": "Blue"}), ("accept", {"choice": "Green"}))
        async with client(srv.url(), mode=NEWEST, elicitation_callback=human) as c:
            with anyio.fail_after(60):
                r = await c.call_tool("ask_user", COLOURS)
                assert not r.is_error, text(r)
                assert r.structured_content["selected"] == ["Blue"], r.structured_content
                # Each request is its own run: the next question is card 1 of a new run.
                r = await c.call_tool("ask_user", COLOURS)
                assert r.structured_content["selected"] == ["Green"], r.structured_content
        assert [f.message.splitlines()[0] for f in human.forms] == ["Question #1: Which colours?"] * 2, human.forms


def newest_call(tool, arguments, state=None, answer=None):
    params = {
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": NEWEST,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        },
    }
    if state is not None:
        params["requestState"] = state
        params["inputResponses"] = {"question": answer}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


async def call_newest(url, tool, arguments, state=None, answer=None):
    headers = {"MCP-Protocol-Version": NEWEST, "Mcp-Method": "tools/call", "Mcp-Name": tool}
    r = await post(url, newest_call(tool, arguments, state, answer), **headers)
    return r.status_code, rpc_message(r)


async def test_a_forged_replayed_or_foreign_request_state_is_refused_and_changes_nothing(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    blue = {"action": "accept", "content": {"choice": "Blue"}}
    unknown = (
        "unknown requestState: no question of yours waits under it (it was never issued to this "
        "caller, or was already answered); call the tool again without requestState"
    )
    with serve("--workspace", f"a={a}", "--workspace", f"b={b}", "--sessionless") as srv:
        url_a, url_b = srv.url("/w/a/mcp"), srv.url("/w/b/mcp")
        status, asked = await call_newest(url_a, "ask_user", COLOURS)
        assert status == 200, asked
        result = asked["result"]
        assert result["resultType"] == "input_required", result
        state = result["requestState"]
        assert len(state) == 32 and int(state, 16) >= 0, state
        assert result["_meta"]["agent-tools/answerWithinSeconds"] > 0, result
        assert result["inputRequests"]["question"]["params"]["message"].startswith("Question #1: Which colours?\n")

        forged = await call_newest(url_a, "ask_user", COLOURS, "0" * 32, blue)
        assert forged[1]["error"] == {"code": -32602, "message": unknown}, forged
        # The same handle from another endpoint is another caller's.
        foreign = await call_newest(url_b, "ask_user", COLOURS, state, blue)
        assert foreign[1]["error"] == {"code": -32602, "message": unknown}, foreign
        other_call = await call_newest(url_a, "ask_user", {**COLOURS, "question": "Which size?"}, state, blue)
        assert other_call[1]["error"]["message"] == (
            "this requestState belongs to another call (of `ask_user`): retry with the tool name "
            "and arguments of the call that asked"
        ), other_call

        # None of that touched the waiting question: the real answer completes the call.
        status, done = await call_newest(url_a, "ask_user", COLOURS, state, blue)
        assert status == 200 and "result" in done, done
        assert done["result"]["structuredContent"]["selected"] == ["Blue"], done
        replayed = await call_newest(url_a, "ask_user", COLOURS, state, blue)
        assert replayed[1]["error"] == {"code": -32602, "message": unknown}, replayed


async def newest_request(url, method, params, name, caps):
    params = {
        **params,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": NEWEST,
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        },
    }
    headers = {"MCP-Protocol-Version": NEWEST, "Mcp-Method": method, "Mcp-Name": name}
    r = await post(url, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, **headers)
    return rpc_message(r)


async def test_a_sessionless_task_is_polled_by_its_caller_and_no_one_else(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    caps = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    with serve("--workspace", f"a={a}", "--workspace", f"b={b}", "--sessionless") as srv:
        url_a, url_b = srv.url("/w/a/mcp"), srv.url("/w/b/mcp")
        cell = {"name": "eval", "arguments": {"code": "import time\ntime.sleep(1)\n6 * 7", "description": DESC}}
        started = await newest_request(url_a, "tools/call", cell, "eval", caps)
        assert started["result"]["resultType"] == "task", started
        task = started["result"]["taskId"]
        for method in ("tasks/get", "tasks/cancel"):
            refused = await newest_request(url_b, method, {"taskId": task}, task, caps)
            assert refused["error"] == {
                "code": -32602,
                "message": f"unknown task {task}: no task of yours has this id",
            }, refused
        # The task outlived the request that started it, in its run, for its own caller.
        with anyio.fail_after(60):
            while True:
                got = (await newest_request(url_a, "tasks/get", {"taskId": task}, task, caps))["result"]
                if got["status"] != "working":
                    break
                await anyio.sleep(0.2)
        assert got["status"] == "completed", got
        assert got["result"]["content"] == [{"type": "text", "text": "42"}], got
