"""Fixtures for the end-to-end suite: the built `agent-tools` binary driven through the
official MCP Python SDK, as a real client drives it.

- `AGENT_TOOLS_BIN` names the binary (set by `cargo xtask test`); else target/debug/agent-tools.
- `mcp_session(root, surface=..., args=..., daemon=False, **client_kwargs)` opens a client
  session on a fresh `agent-tools mcp` process serving `root` (async context manager); its
  language servers are its own unless `daemon` is true.
- `text(result)` joins a call result's text content.
- `running(pid)` says whether a process is alive (not a zombie).
"""

import contextlib
import os
import pathlib
import subprocess

import pytest
from mcp import Client, StdioServerParameters

REPO = pathlib.Path(__file__).resolve().parents[2]


def agent_tools_bin() -> str:
    env = os.environ.get("AGENT_TOOLS_BIN")
    if env:
        return env
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "debug" / "agent-tools")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def bin_path() -> str:
    path = agent_tools_bin()
    assert os.access(path, os.X_OK), f"build the binary first: {path} is missing"
    return path


@contextlib.asynccontextmanager
async def mcp_session(root, surface="full", args=(), env=None, daemon=False, **client_kwargs):
    """A client session on `agent-tools mcp --root ROOT --surface SURFACE ARGS...`.

    The conversation's language servers start in its own process (`--no-daemon`) unless
    `daemon` is true: the suite's other tests check what one process owns and ends."""
    params = StdioServerParameters(
        command=agent_tools_bin(),
        args=["mcp", "--root", str(root), "--surface", surface, *([] if daemon else ["--no-daemon"]), *args],
        env={**os.environ, **(env or {})},
    )
    async with Client(params, **client_kwargs) as client:
        yield client


def running(pid: int) -> bool:
    """Whether process `pid` is alive (not a zombie). A process can end between the open
    and the read of its stat file (ESRCH): that is not running either."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def run_cli(*args, cwd=None, check=True):
    """Runs the binary with `args`, returning the completed process."""
    return subprocess.run([agent_tools_bin(), *args], cwd=cwd, capture_output=True, text=True, check=check, timeout=120)
