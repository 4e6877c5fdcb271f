"""`agent-tools serve --http`: many MCP clients over streamable HTTP, driven by the official
MCP Python SDK's streamable HTTP client — one run per session and nothing shared between
them, the session limit, idle sessions closed with their kernels, several workspaces,
authorization (static token; OAuth 2.1 access tokens checked against a JWKS), probes."""

import base64
import contextlib
import json
import os
import re
import subprocess
import threading
import time

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import agent_tools_bin, text

pytestmark = pytest.mark.anyio

DESC = "a cell from the HTTP serving suite"
ISSUER = "https://auth.example.test"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


class Server:
    """A running `agent-tools serve` process and the base URL it printed."""

    def __init__(self, proc, base):
        self.proc = proc
        self.base = base
        self.stderr_lines = []

    def url(self, path="/mcp"):
        return self.base + path


@contextlib.contextmanager
def serve(*args):
    """Starts `agent-tools serve --http 127.0.0.1:0 ARGS...` and waits for its address."""
    proc = subprocess.Popen(
        [agent_tools_bin(), "serve", "--http", "127.0.0.1:0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    found = threading.Event()

    def drain():
        for line in proc.stderr:
            lines.append(line)
            if "serving" in line:
                found.set()
        found.set()

    threading.Thread(target=drain, daemon=True).start()
    found.wait(60)
    match = next((re.search(r"at (http://[0-9.:]+)/", ln) for ln in lines if "serving" in ln), None)
    try:
        assert match, f"the server did not start: {''.join(lines)}"
        server = Server(proc, match.group(1))
        server.stderr_lines = lines
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def client(url, token=None, **kwargs):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)), **kwargs)


def workspace(tmp_path, n_files=0):
    (tmp_path / "lib").mkdir(exist_ok=True)
    for i in range(n_files):
        (tmp_path / "lib" / f"m{i}.py").write_text(f"dispose(x{i})\n")
    return tmp_path


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


# --- authorization ----------------------------------------------------------------------


def b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class Issuer:
    """A signing key of a test authorization server and its JWKS file."""

    def __init__(self, tmp_path):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pub = self.key.public_key().public_numbers()
        self.jwks = tmp_path / "jwks.json"
        self.jwks.write_text(
            json.dumps({"keys": [{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig", "n": b64(pub.n), "e": b64(pub.e)}]})
        )

    def token(self, resource, scope="agent-tools:full", exp_in=300, aud=None, key=None, **extra):
        claims = {"iss": ISSUER, "sub": "agent-1", "aud": aud or resource, "exp": int(time.time()) + exp_in, **extra}
        if scope is not None:
            claims["scope"] = scope
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": "k1"})


@contextlib.contextmanager
def oauth_server(tmp_path):
    issuer = Issuer(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text("a-static-token-of-enough-length\n")
    root = workspace(tmp_path)
    with serve(
        "--root", str(root), "--token-file", str(token_file),
        "--jwks-file", str(issuer.jwks), "--issuer", ISSUER, "--resource", "http://127.0.0.1/mcp",
    ) as srv:
        yield srv, issuer, "http://127.0.0.1/mcp"


async def post_init(srv, token=None):
    headers = dict(MCP_HEADERS)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(srv.url(), json=INIT, headers=headers)


async def test_bad_tokens_are_refused_with_401_and_a_reason(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        cases = {
            None: "no access token",
            "not-a-jwt": "neither this server's token nor a JWT",
            issuer.token(resource, exp_in=-3600): "expired",
            issuer.token(resource, aud="https://elsewhere.test/mcp"): "audience must be http://127.0.0.1/mcp",
            issuer.token(resource, key=issuer.other): "signature",
            issuer.token(resource, iss="https://rogue.test"): "another authorization server",
        }
        for token, reason in cases.items():
            r = await post_init(srv, token)
            assert r.status_code == 401, (token, r.status_code, r.text)
            assert reason in r.json()["error_description"], (token, r.text)
            challenge = r.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert 'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"' in challenge
        r = await post_init(srv, issuer.token(resource, scope="email"))
        assert r.status_code == 403 and "insufficient_scope" in r.headers["www-authenticate"]
        async with httpx2.AsyncClient(timeout=10) as http:
            meta = (await http.get(srv.url("/.well-known/oauth-protected-resource/mcp"))).json()
        assert meta["resource"] == resource
        assert meta["authorization_servers"] == [ISSUER]
        assert "agent-tools:read-only" in meta["scopes_supported"]


async def test_scopes_choose_the_surface(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        async with client(srv.url(), issuer.token(resource, scope="openid agent-tools:read-only")) as c:
            names = {t.name for t in (await c.list_tools()).tools}
        assert "read" in names and "ast_grep" in names
        assert not names & {"write", "edit", "ast_edit", "eval", "debug"}, names
        async with client(srv.url(), issuer.token(resource, scope="agent-tools:full")) as c:
            names = {t.name for t in (await c.list_tools()).tools}
        assert {"write", "eval"} <= names
        async with client(srv.url(), "a-static-token-of-enough-length") as c:
            r = await c.call_tool("write", {"path": "w.txt", "content": "w\n"})
            assert not r.is_error, text(r)


async def test_a_session_answers_only_to_the_credential_that_opened_it(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        r = await post_init(srv, "a-static-token-of-enough-length")
        assert r.status_code == 200, r.text
        session = r.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        other = issuer.token(resource)
        async with httpx2.AsyncClient(timeout=10) as http:
            headers = {**MCP_HEADERS, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
            r = await http.post(srv.url(), json=listing, headers={**headers, "Authorization": f"Bearer {other}"})
            assert r.status_code == 404, r.text
            r = await http.post(srv.url(), json=listing, headers=headers)
            assert r.status_code == 401, r.text
            owner = {**headers, "Authorization": "Bearer a-static-token-of-enough-length"}
            r = await http.delete(srv.url(), headers=owner)
            assert r.status_code == 204, r.text
            r = await http.post(srv.url(), json=listing, headers=owner)
            assert r.status_code == 404, r.text


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


async def test_a_rotated_jwks_file_is_picked_up_without_a_restart(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pub = new_key.public_key().public_numbers()
        token = jwt.encode(
            {"iss": ISSUER, "sub": "agent-2", "aud": resource, "exp": int(time.time()) + 300, "scope": "agent-tools:plan"},
            new_key,
            algorithm="RS256",
            headers={"kid": "k2"},
        )
        r = await post_init(srv, token)
        assert r.status_code == 401 and "`k2`" in r.json()["error_description"], r.text
        issuer.jwks.write_text(
            json.dumps({"keys": [{"kty": "RSA", "kid": "k2", "alg": "RS256", "n": b64(pub.n), "e": b64(pub.e)}]})
        )
        os.utime(issuer.jwks, (time.time() + 5, time.time() + 5))
        r = await post_init(srv, token)
        assert r.status_code == 200, r.text
        # The retired key no longer verifies.
        r = await post_init(srv, issuer.token(resource))
        assert r.status_code == 401 and "`k1`" in r.json()["error_description"], r.text


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


# --- warm runs ----------------------------------------------------------------------------


async def wait_ready(srv):
    async with httpx2.AsyncClient(timeout=10) as http:
        with anyio.fail_after(60):
            while (await http.get(srv.url("/readyz"))).status_code != 200:
                await anyio.sleep(0.1)


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


# --- metrics and logs -----------------------------------------------------------------------


def metric(body, name, **labels):
    """The value of one sample in a Prometheus text exposition (None when absent)."""
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in body.splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        if key == (f"{name}{{{want}}}" if labels else name):
            return float(value)
    return None


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


# --- JWKS by URL ------------------------------------------------------------------------------


def tls_files(tmp_path):
    """A private CA and a certificate for 127.0.0.1 it signed, as PEM files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent-tools test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    pem = lambda c: c.public_bytes(serialization.Encoding.PEM)
    (tmp_path / "ca.pem").write_bytes(pem(ca))
    (tmp_path / "server.pem").write_bytes(pem(cert))
    (tmp_path / "server.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key"


@contextlib.contextmanager
def jwks_https_server(tmp_path, jwks):
    """Serves `jwks["body"]` over HTTPS with `Cache-Control: max-age=3600`, counting GETs."""
    import http.server
    import ssl

    ca, cert, key = tls_files(tmp_path)
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            body = json.dumps(jwks["body"]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "public, max-age=3600")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}/keys/jwks.json", ca, hits
    finally:
        httpd.shutdown()


def rsa_jwk(key, kid):
    pub = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "alg": "RS256", "n": b64(pub.n), "e": b64(pub.e)}


async def test_a_jwks_url_is_cached_refetched_for_a_new_key_and_its_ca_trusted(tmp_path):
    resource = "http://127.0.0.1/mcp"
    k1 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    k2 = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def token(key, kid):
        claims = {"iss": ISSUER, "sub": "agent", "aud": resource, "exp": int(time.time()) + 300, "scope": "agent-tools:full"}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})

    jwks = {"body": {"keys": [rsa_jwk(k1, "k1")]}}
    with jwks_https_server(tmp_path, jwks) as (url, ca, hits):
        common = ["--root", str(workspace(tmp_path)), "--jwks-url", url, "--issuer", ISSUER, "--resource", resource]
        # The test's CA is not one of the public roots: without --jwks-ca-file, no start.
        r = subprocess.run([agent_tools_bin(), "serve", "--http", "127.0.0.1:0", *common], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "--jwks-url" in r.stderr and "TLS" in r.stderr, r.stderr
        hits.clear()
        with serve(*common, "--jwks-ca-file", str(ca), "--jwks-min-refresh", "3") as srv:
            assert hits == ["/keys/jwks.json"], hits  # fetched once at start
            for _ in range(3):
                assert (await post_init(srv, token(k1, "k1"))).status_code == 200
            assert len(hits) == 1, hits  # served from the cache (max-age=3600)
            jwks["body"] = {"keys": [rsa_jwk(k2, "k2")]}
            await anyio.sleep(3.2)
            # An unknown key id sends the server back to the URL once the interval allows.
            r = await post_init(srv, token(k2, "k2"))
            assert r.status_code == 200, r.text
            assert len(hits) == 2, hits
            # Made-up key ids right after do not make it fetch again.
            for kid in ("k7", "k8", "k9"):
                r = await post_init(srv, token(k2, kid))
                assert r.status_code == 401 and f"`{kid}`" in r.json()["error_description"], r.text
            r = await post_init(srv, token(k1, "k1"))
            assert r.status_code == 401 and "`k1`" in r.json()["error_description"], r.text
            assert len(hits) == 2, hits
            async with client(srv.url(), token(k2, "k2")) as c:
                assert "write" in {t.name for t in (await c.list_tools()).tools}
