"""Helpers of the `agent-tools serve` suites: start the binary on a free port, open an MCP
client on it (the official MCP Python SDK's streamable HTTP client), raw requests, probes
and metrics."""

import contextlib
import re
import subprocess
import threading

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import agent_tools_bin

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


async def post_init(srv, token=None):
    headers = dict(MCP_HEADERS)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(srv.url(), json=INIT, headers=headers)


async def wait_ready(srv):
    async with httpx2.AsyncClient(timeout=10) as http:
        with anyio.fail_after(60):
            while (await http.get(srv.url("/readyz"))).status_code != 200:
                await anyio.sleep(0.1)


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

