"""Preview diagnostics end to end through a real MCP client: `write` with `preview: true`
predicts what the write would break and writes nothing; `resolve` accepts the change by its
`change_id` and the write's own diagnostics name the same error; a file changed since the
preview rejects the change whole."""

import hashlib
import re

import pytest

from conftest import mcp_session, text
from test_lsp import require

pytestmark = pytest.mark.anyio


def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    (tmp_path / "util.py").write_text("def compute(x):\n    return x * 2\n")
    (tmp_path / "main.py").write_text("from util import compute\n\nprint(compute(2))\n")
    (tmp_path / "agent-tools.toml").write_text(
        '[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = ["pyright-langserver", "--stdio"]\n'
    )


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def change_id(answer):
    m = re.search(r'change_id "(change_\d+)"', answer)
    assert m, answer
    return m.group(1)


async def test_write_preview_then_resolve_accept(tmp_path):
    require("pyright-langserver")
    project(tmp_path)
    broken = "def compute(x, y):\n    return x * y\n"
    before = digest(tmp_path / "util.py")
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "util.py"})
        assert "no diagnostics" in text(r), text(r)
        r = await c.call_tool("write", {"path": "util.py", "content": broken, "preview": True})
        assert not r.is_error, text(r)
        answer = text(r)
        # The prediction leads the answer and names the broken caller.
        assert answer.startswith("predicted: 1 new diagnostic(s)"), answer
        assert "main.py:3:" in answer and '"y"' in answer, answer
        assert "(preview) would replace util.py" in answer, answer
        assert digest(tmp_path / "util.py") == before
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        assert "no diagnostics" in text(r), text(r)
        # Accept: written, and the write's own diagnostics are the predicted ones.
        r = await c.call_tool("resolve", {"change_id": change_id(answer), "action": "accept"})
        assert not r.is_error, text(r)
        accepted = text(r)
        assert "accepted change_" in accepted and "staged by write" in accepted, accepted
        assert "1 new diagnostic(s) after this write" in accepted, accepted
        predicted = [line for line in answer.splitlines() if line.startswith("main.py:3:")]
        assert predicted and all(line in accepted for line in predicted), accepted
        assert (tmp_path / "util.py").read_text() == broken
        # A file changed between preview and accept: the whole change is refused.
        r = await c.call_tool(
            "edit",
            {"path": "util.py", "old_string": "x * y", "new_string": "x * 2", "preview": True},
        )
        assert not r.is_error, text(r)
        pending = change_id(text(r))
        (tmp_path / "util.py").write_text(broken + "# touched\n")
        r = await c.call_tool("resolve", {"change_id": pending, "action": "accept"})
        assert r.is_error and "changed since it was staged" in text(r), text(r)
        assert (tmp_path / "util.py").read_text() == broken + "# touched\n"


async def test_ast_edit_proposal_carries_predicted_diagnostics(tmp_path):
    require("pyright-langserver")
    project(tmp_path)
    before = digest(tmp_path / "main.py")
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        assert "no diagnostics" in text(r), text(r)
        r = await c.call_tool(
            "ast_edit",
            {"pattern": "compute($X)", "rewrite": "compute($X, 1)", "language": "python", "path": "main.py"},
        )
        assert not r.is_error, text(r)
        proposal = text(r)
        assert proposal.startswith("predicted: 1 new diagnostic(s)"), proposal
        assert "main.py:3:" in proposal and "(proposed) 1 replacement(s)" in proposal, proposal
        assert digest(tmp_path / "main.py") == before
        r = await c.call_tool("resolve", {"edit_id": "edit_1", "action": "discard"})
        assert not r.is_error, text(r)
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        assert "no diagnostics" in text(r), text(r)
