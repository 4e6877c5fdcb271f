"""Structural search and staged rewrite, end to end through a real MCP client:
search, stage, accept; the write tools absent on the plan surface."""

import pytest
from mcp import MCPError

from conftest import mcp_session, text

pytestmark = pytest.mark.anyio

DART = """\
class Owner {
  void close() {
    if (controller != null) controller.dispose();
    if (focus != null) other.dispose();
    dispose(a ?? b);
  }
}
"""


async def test_search_stage_accept(tmp_path):
    (tmp_path / "lib").mkdir()
    src = tmp_path / "lib" / "owner.dart"
    src.write_text(DART)
    async with mcp_session(tmp_path) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert {"ast_grep", "ast_edit", "resolve"} <= names

        r = await c.call_tool("ast_grep", {"pattern": "if ($X != null) $X.dispose()", "language": "dart"})
        assert not r.is_error, text(r)
        assert "lib/owner.dart:3:5" in text(r)
        assert "other.dispose" not in text(r)
        assert r.structured_content["total_matches"] == 1
        assert r.structured_content["matches"][0]["captures"] == {"X": "controller"}

        r = await c.call_tool("ast_edit", {"pattern": "dispose($X)", "rewrite": "$X.dispose()", "path": "lib"})
        assert not r.is_error, text(r)
        assert text(r).startswith("(proposed) 1 replacement(s) in 1 file(s)")
        edit_id = r.structured_content["edit_id"]
        assert edit_id == "edit_1"
        assert src.read_text() == DART  # staged, not written

        r = await c.call_tool("resolve", {"edit_id": edit_id, "action": "accept"})
        assert not r.is_error, text(r)
        assert "(a ?? b).dispose();" in src.read_text()

        r = await c.call_tool("resolve", {"edit_id": edit_id, "action": "accept"})
        assert r.is_error and "already accepted" in text(r)

        r = await c.call_tool("ast_grep", {"pattern": "foo(", "language": "dart"})
        assert r.is_error and "does not parse" in text(r)


async def test_write_tools_absent_on_plan_surface(tmp_path):
    (tmp_path / "a.py").write_text("dispose(x)\n")
    async with mcp_session(tmp_path, "plan") as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert "ast_grep" in names
        assert not names & {"ast_edit", "resolve"}
        r = await c.call_tool("ast_grep", {"pattern": "dispose($X)"})
        assert not r.is_error and "a.py:1:1" in text(r)
        with pytest.raises(MCPError) as hidden:
            await c.call_tool("ast_edit", {"pattern": "dispose($X)", "rewrite": "$X.dispose()"})
        assert "unknown tool" in str(hidden.value)
    assert (tmp_path / "a.py").read_text() == "dispose(x)\n"


async def test_a_5000_deep_pattern_is_an_error_and_the_server_lives_on(tmp_path):
    (tmp_path / "a.py").write_text("f(g(x))\ntotal = a + b + c\n")
    async with mcp_session(tmp_path, "read-only") as c:
        for pattern in ["f(" * 5000 + "x" + ")" * 5000, " + ".join(["a"] * 5000)]:
            r = await c.call_tool("ast_grep", {"pattern": pattern, "language": "python"})
            assert r.is_error and "nests too deeply" in text(r), text(r)[:300]
        # The same process still answers.
        r = await c.call_tool("ast_grep", {"pattern": "f(g($X))", "language": "python"})
        assert not r.is_error, text(r)
        assert r.structured_content["total_matches"] == 1


async def test_a_template_of_8000_captures_is_staged_with_a_bounded_answer(tmp_path):
    (tmp_path / "a.py").write_text("".join(f"dispose(a{i} + b{i})\n" for i in range(20)))
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "ast_edit", {"pattern": "dispose($X)", "rewrite": "$X " * 8000, "language": "python"}
        )
        assert not r.is_error, text(r)[:300]
        assert r.structured_content["replacements"] == 20
        assert len(text(r).encode()) <= 4096
