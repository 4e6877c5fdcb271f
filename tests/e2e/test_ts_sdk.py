"""The official TypeScript MCP SDK (from npm) as the client, over stdio against `agent-tools
mcp` and over streamable HTTP against `agent-tools serve`: it negotiates 2025-11-25 and
declares the tasks extension, as the Inspector does, and still gets each `eval` cell's output
as the call's own answer, with the progress it asked for while the cell ran, and a kernel
whose variables persist from call to call."""

import json
import os
import subprocess

from conftest import REPO, agent_tools_bin
from serve_support import serve

SCRIPT = REPO / "tests" / "e2e" / "ts_sdk_client.cjs"


def node_path():
    # The SDK is installed with the other npm components (xtask/components/mcp.toml).
    path = os.environ.get("NODE_PATH") or str(REPO / ".tools" / "node" / "node_modules")
    sdk = os.path.join(path.split(os.pathsep)[0], "@modelcontextprotocol", "sdk", "package.json")
    assert os.path.exists(sdk), f"the TypeScript MCP SDK is not installed under {path}; run cargo xtask setup"
    return path


def run_client(*args):
    r = subprocess.run(
        ["node", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "NODE_PATH": node_path()},
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def workspace(tmp_path):
    # Progress every 0.2 s, so a 1.5 s cell reports several times.
    (tmp_path / "agent-tools.toml").write_text("[eval]\nprogress_interval_secs = 0.2\n")
    return tmp_path


def assert_session(seen):
    assert "eval" in seen["tools"] and "ask_user" not in seen["tools"], seen["tools"]
    # The cell's output, not a task handle the SDK would not poll.
    assert seen["slow"] == {
        "content": [{"type": "text", "text": "42"}],
        "isError": False,
        "keys": ["content", "isError", "structuredContent"],
    }, seen["slow"]
    assert len(seen["progress"]) >= 2, seen["progress"]
    assert all(m.startswith("python cell running for ") for m in seen["progress"]), seen["progress"]
    assert seen["kept"] == [{"type": "text", "text": "6"}], seen["kept"]


def test_the_typescript_sdk_over_stdio_gets_cell_output_and_progress(tmp_path):
    assert_session(run_client("stdio", agent_tools_bin(), str(workspace(tmp_path))))


def test_the_typescript_sdk_over_http_gets_cell_output_and_progress_in_its_session(tmp_path):
    with serve("--root", str(workspace(tmp_path))) as srv:
        seen = run_client("http", srv.url())
    assert seen["protocol"] == "2025-11-25" and seen["session"] == "yes", seen
    assert_session(seen)
