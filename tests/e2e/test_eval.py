"""The eval tool end to end: persistent kernels behind `agent-tools mcp`, driven by a real
MCP client — image content, the tool() bridge into the file tools, crashes, progress, and
no kernel left behind when the server goes away."""

import base64
import os
import shutil
import struct
import time

import pytest

from conftest import mcp_session, running, text

pytestmark = pytest.mark.anyio

DESC = "run a cell from the end to end suite"



def png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    return struct.unpack(">II", data[16:24])


async def test_eval_is_listed_only_on_the_full_surface(tmp_path):
    async with mcp_session(tmp_path) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert "eval" in tools
    schema = tools["eval"].input_schema
    assert {"code", "description"} <= set(schema["required"])
    assert tools["eval"].annotations.read_only_hint is False
    async with mcp_session(tmp_path, "plan") as c:
        assert "eval" not in {t.name for t in (await c.list_tools()).tools}


async def test_python_state_images_and_errors(tmp_path):
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("eval", {"code": "x = 6\nprint('hi')\nx * 7", "description": DESC})
        assert not r.is_error, text(r)
        assert text(r) == "hi\n42"
        assert r.structured_content["status"] == "ok"
        r = await c.call_tool("eval", {"code": "x + 1", "description": DESC})
        assert text(r) == "7"
        r = await c.call_tool(
            "eval",
            {"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()", "description": DESC},
        )
        assert not r.is_error, text(r)
        images = [b for b in r.content if b.type == "image"]
        assert len(images) == 1, r.content
        assert images[0].mime_type == "image/png"
        assert png_size(base64.b64decode(images[0].data)) == (640, 480)
        assert "[image 1: 640x480 PNG]" in text(r)
        assert len(text(r)) < 200, "the image is not sent as text"
        # An exception is output, not a failed call; so is a cell whose description is short.
        r = await c.call_tool("eval", {"code": "1/0", "description": DESC})
        assert not r.is_error and "ZeroDivisionError" in text(r)
        assert r.structured_content["status"] == "error"
        r = await c.call_tool("eval", {"code": "1", "description": "too short"})
        assert not r.is_error
        assert text(r) == '1\n[note: the description has 2 words (5–10 are asked); the label is "too short (python cell 5)"]'
        assert r.structured_content["label"] == "too short (python cell 5)"
        # IPython runs the magic: loading an extension that does not exist is the cell's error.
        r = await c.call_tool("eval", {"code": "%load_ext no_such_extension", "description": DESC})
        assert not r.is_error
        assert r.structured_content["error"] == {
            "ename": "ModuleNotFoundError",
            "evalue": "No module named 'no_such_extension'",
        }


async def test_bridge_into_the_file_tools(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "eval",
            {"code": "contents = tool('read', {'path': 'notes.txt'})\nprint(contents)", "description": DESC},
        )
        assert not r.is_error, text(r)
        assert "alpha" in text(r) and "beta" in text(r)
        r = await c.call_tool(
            "eval",
            {"code": "print(tool('write', {'path': 'made/by_cell.txt', 'content': 'from the cell\\n'}))", "description": DESC},
        )
        assert not r.is_error, text(r)
        assert (tmp_path / "made/by_cell.txt").read_text() == "from the cell\n"
        # The jail applies to bridged calls too.
        r = await c.call_tool(
            "eval",
            {"code": "try:\n    tool('read', {'path': '../../etc/passwd'})\nexcept ToolError as e:\n    print('refused:', e)", "description": DESC},
        )
        assert "refused:" in text(r) and "outside the workspace" in text(r), text(r)
        # So does re-entrance.
        r = await c.call_tool(
            "eval",
            {"code": "try:\n    tool('eval', {'code': '1', 'description': 'a nested cell that is refused'})\nexcept ToolError as e:\n    print(e)", "description": DESC},
        )
        assert "already running further up this call" in text(r), text(r)


async def test_bridged_write_gets_diagnostics_on_write(tmp_path):
    if not shutil.which("pyright-langserver"):
        if os.environ.get("CI") == "true":
            pytest.fail("pyright-langserver is not on PATH under CI")
        pytest.skip("pyright-langserver is not on PATH")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "eval",
            {"code": "print(tool('write', {'path': 'bad.py', 'content': 'x: int = \"text\"\\n'}))", "description": DESC},
        )
        assert not r.is_error, text(r)
        out = text(r)
        assert "bad.py" in out
        assert "diagnostics" in out.lower(), out


async def test_javascript_cells(tmp_path):
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "eval",
            {"code": "const n = await Promise.resolve(21)\nconsole.log('js')\nn * 2", "language": "javascript", "description": DESC},
        )
        assert not r.is_error, text(r)
        assert text(r) == "js\n42"
        r = await c.call_tool("eval", {"code": "n + 1", "language": "javascript", "description": DESC})
        assert text(r) == "22"


async def test_crash_progress_and_no_kernel_left_behind(tmp_path):
    (tmp_path / "agent-tools.toml").write_text("[eval]\nprogress_interval_secs = 0.2\n")
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "eval",
            {"code": "import time, os\ntime.sleep(1)\nos.getpid()", "description": DESC},
            progress_callback=on_progress,
        )
        assert not r.is_error, text(r)
        pid = int(text(r))
        assert progress and "python cell running" in progress[0], progress
        r = await c.call_tool("eval", {"code": "import os\nos._exit(3)", "description": DESC})
        assert r.is_error and "exited with code 3" in text(r), text(r)
        assert not running(pid)
        r = await c.call_tool("eval", {"code": "import os\nos.getpid()", "description": DESC})
        assert "fresh python kernel" in text(r)
        pid = int(text(r).splitlines()[-1])
        r = await c.call_tool("eval", {"code": "process.pid", "language": "javascript", "description": DESC})
        node_pid = int(text(r))
        assert running(pid) and running(node_pid)
    deadline = time.monotonic() + 10
    while (running(pid) or running(node_pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(pid) and not running(node_pid), "kernels outlived the server"


async def test_writefile_goes_through_the_write_tool_and_its_jail(tmp_path):
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("eval", {"code": "%%writefile made_mod.py\nVALUE = 41\n", "description": DESC})
        assert not r.is_error, text(r)
        assert text(r) == "Writing made_mod.py\n"
        assert (tmp_path / "made_mod.py").read_text() == "VALUE = 41\n"
        r = await c.call_tool("eval", {"code": "import made_mod\nmade_mod.VALUE + 1", "description": DESC})
        assert text(r) == "42"
        outside = tmp_path.parent / (tmp_path.name + "-escape.txt")
        r = await c.call_tool("eval", {"code": f"%%writefile {outside}\nescaped\n", "description": DESC})
        assert r.structured_content["status"] == "error"
        assert r.structured_content["error"]["ename"] == "ToolError"
        assert not outside.exists()
