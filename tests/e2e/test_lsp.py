"""The lsp family end to end through a real MCP client: queries, diagnostics on write
merged into `write`'s result, lsp_rename, and lsp_rename absent on the plan surface."""

import shutil

import pytest

from conftest import mcp_session, run_cli, text

pytestmark = pytest.mark.anyio


def require(binary):
    if shutil.which(binary) is None:
        import os

        if os.environ.get("CI") == "true":
            pytest.fail(f"{binary} is not on PATH under CI=true")
        pytest.skip(f"{binary} is not on PATH")


def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    (tmp_path / "util.py").write_text("def compute(x):\n    return x * 2\n")
    (tmp_path / "main.py").write_text("from util import compute\n\nprint(compute(2))\n")
    (tmp_path / "agent-tools.toml").write_text(
        '[lsp.servers.python]\ncommand = ["pyright-langserver", "--stdio"]\n'
    )


async def test_lsp_queries_diagnostics_on_write_and_rename(tmp_path):
    require("pyright-langserver")
    project(tmp_path)
    async with mcp_session(tmp_path) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert {"lsp", "lsp_rename"} <= names
        r = await c.call_tool("lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
        assert not r.is_error, text(r)
        assert "util.py:1:5" in text(r)
        r = await c.call_tool("lsp", {"action": "hover", "file": "main.py", "line": 3})
        assert r.is_error and "symbol" in text(r)
        # `write` gets the diagnostics section for what it just broke.
        r = await c.call_tool("write", {"path": "bad.py", "content": "print(nowhere_defined)\n"})
        assert not r.is_error, text(r)
        assert "## diagnostics" in text(r) and "nowhere_defined" in text(r), text(r)
        # Same error moved down: not reported again.
        r = await c.call_tool("write", {"path": "bad.py", "content": "\n\n\n\nprint(nowhere_defined)\n"})
        assert "nowhere_defined" not in text(r), text(r)
        r = await c.call_tool("lsp_rename", {"file": "util.py", "line": 1, "symbol": "compute", "new_name": "calc"})
        assert not r.is_error, text(r)
        assert "in 2 file(s)" in text(r)
    assert "calc(2)" in (tmp_path / "main.py").read_text()
    async with mcp_session(tmp_path, "plan") as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert "lsp" in names and "lsp_rename" not in names
        r = await c.call_tool("lsp", {"action": "status"})
        assert "python" in text(r)


def test_doctor_reports_lsp(tmp_path):
    project(tmp_path)
    out = run_cli("doctor", "--root", str(tmp_path), check=False)
    assert "lsp" in out.stdout + out.stderr


async def test_lsp_hierarchies_through_mcp(tmp_path):
    require("pyright-langserver")
    project(tmp_path)
    (tmp_path / "chain.py").write_text(
        "from util import compute\n\n\ndef twice(x):\n    return compute(compute(x))\n\n\n"
        "def run():\n    return twice(1) + compute(3)\n"
    )
    async with mcp_session(tmp_path, "plan") as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        schema = tools["lsp"].input_schema
        assert "depth" in schema["properties"], schema
        assert "incoming_calls" in str(schema) and "subtypes" in str(schema), schema
        r = await c.call_tool(
            "lsp", {"action": "incoming_calls", "file": "util.py", "line": 1, "symbol": "compute", "depth": 2}
        )
        assert not r.is_error, text(r)
        out = text(r)
        assert "← function twice" in out and "line 5 (2 calls)" in out, out
        assert "[repeated" in out, out  # `run` calls `compute` and `twice`: shown once, then marked
        r = await c.call_tool("lsp", {"action": "supertypes", "file": "util.py", "line": 1, "symbol": "compute"})
        assert r.is_error and "does not support type hierarchy" in text(r), text(r)
