"""Symbol edits end to end through a real MCP client: `edit` with `symbol` (a name path)
replaces a symbol's body or whole text, or inserts beside it, re-indented to the symbol's
own indentation; the diagnostics on write name what the change broke in a caller; a preview
writes nothing until `resolve` accepts it; an ambiguous name is refused with its candidates;
a file no language server serves is resolved through the bundled grammar."""

import pytest

from conftest import mcp_session, text
from test_lsp import require

pytestmark = pytest.mark.anyio

GREETER = '''class Greeter:
    def greet(self, name: str):
        return "hi " + name


class Other:
    def greet(self):
        return "bye"
'''

MAIN = '''from greeter import Greeter

message: str = Greeter().greet("ann")
print(message)
'''

PYRIGHT_ONLY = (
    '[lsp]\ndiagnostics_wait_ms = 30000\n[lsp.servers.python]\ncommand = ["pyright-langserver", "--stdio"]\n'
    "[lsp.servers.ruff]\nenabled = false\n"
)


def python_project(root):
    (root / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0"\n')
    (root / "greeter.py").write_text(GREETER)
    (root / "main.py").write_text(MAIN)
    (root / "agent-tools.toml").write_text(PYRIGHT_ONLY)


BROKEN_CALLER = 'main.py:3:16 error [reportAssignmentType] Type "int" is not assignable to declared type "str"'


async def test_a_method_body_replaced_by_name_path_reports_the_callers_new_error(tmp_path):
    require("pyright-langserver")
    python_project(tmp_path)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.py"})
        assert "no diagnostics" in text(r), text(r)
        r = await c.call_tool(
            "edit", {"path": "greeter.py", "symbol": "Greeter.greet", "body": "return len(name)\n"}
        )
        answer = text(r)
        assert not r.is_error, answer
        lines = answer.splitlines()
        assert lines[0] == (
            "Edited greeter.py:3: replaced the body of `Greeter.greet` (method, found by pyright-langserver)."
        ), answer
        assert any(line.startswith(BROKEN_CALLER) for line in lines), answer
        assert (tmp_path / "greeter.py").read_text() == GREETER.replace(
            'return "hi " + name', "return len(name)"
        )
        assert r.structured_content["symbol"] == "Greeter.greet"
        assert r.structured_content["part"] == "body"


async def test_a_symbol_edit_previewed_writes_nothing_until_accepted(tmp_path):
    require("pyright-langserver")
    python_project(tmp_path)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "edit",
            {
                "path": "greeter.py",
                "symbol": "greeter.Greeter.greet",
                "replace": "def greet(self, name: str) -> int:\n    return len(name)",
                "preview": True,
            },
        )
        answer = text(r)
        assert not r.is_error, answer
        assert answer.startswith("predicted: 1 new diagnostic(s)"), answer
        assert any(line.startswith(BROKEN_CALLER) for line in answer.splitlines()), answer
        assert "(preview) would edit greeter.py:2-3: replaced `Greeter.greet` (method, found by pyright-langserver)." in answer
        assert (tmp_path / "greeter.py").read_text() == GREETER
        change = r.structured_content["change_id"]
        r = await c.call_tool("resolve", {"change_id": change, "action": "accept"})
        assert not r.is_error, text(r)
        assert (tmp_path / "greeter.py").read_text() == GREETER.replace(
            '    def greet(self, name: str):\n        return "hi " + name',
            "    def greet(self, name: str) -> int:\n        return len(name)",
        )


async def test_an_ambiguous_name_is_refused_with_its_candidates(tmp_path):
    require("pyright-langserver")
    python_project(tmp_path)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("edit", {"path": "greeter.py", "symbol": "greet", "body": "pass"})
        assert r.is_error
        assert text(r) == (
            "invalid arguments (`symbol`): `greet` names 2 symbols in greeter.py (found by pyright-langserver); nothing was "
            "changed — give the one you mean by its full name path: Greeter.greet (method, line 2); "
            "Other.greet (method, line 7)"
        ), text(r)
        r = await c.call_tool("edit", {"path": "greeter.py", "symbol": "Greeter.wave", "body": "pass"})
        assert r.is_error
        assert text(r) == (
            "invalid arguments (`symbol`): no symbol `Greeter.wave` in greeter.py (found by pyright-langserver); nothing was "
            "changed — its top-level symbols are: Greeter (class, line 1); Other (class, line 6)"
        ), text(r)
        assert (tmp_path / "greeter.py").read_text() == GREETER


POINT = """/// A point.
#[derive(Debug)]
pub struct Point {
    pub x: i32,
}

impl Point {
    pub fn norm(&self) -> i32 {
        self.x
    }
}
"""


async def test_without_a_server_the_grammar_resolves_the_name_path(tmp_path):
    # No Cargo.toml: no language server can run for this file.
    (tmp_path / "point.rs").write_text(POINT)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "edit",
            {"path": "point.rs", "symbol": "impl Point.norm", "body": "let y = self.x * 2;\ny"},
        )
        assert not r.is_error, text(r)
        assert text(r) == "Edited point.rs:8-11: replaced the body of `impl Point.norm` (method, found by tree-sitter rust)."
        r = await c.call_tool(
            "edit",
            {"path": "point.rs", "symbol": "Point", "insert_after": "\nconst ORIGIN: i32 = 0;"},
        )
        assert not r.is_error, text(r)
        assert text(r) == "Edited point.rs:6-7: inserted after `Point` (struct, found by tree-sitter rust)."
        assert (tmp_path / "point.rs").read_text() == POINT.replace(
            "        self.x\n", "        let y = self.x * 2;\n        y\n"
        ).replace("}\n\nimpl", "}\n\nconst ORIGIN: i32 = 0;\n\nimpl")


SERVER_GO = """package shop

type Server struct{ port int }

func (s *Server) Port() int {
\treturn s.port
}
"""

MAIN_GO = """package shop

func Address(s *Server) int {
\tvar p int = s.Port()
\treturn p
}
"""


async def test_a_go_method_replaced_by_name_reports_the_callers_new_error(tmp_path):
    require("gopls")
    (tmp_path / "go.mod").write_text("module example.com/shop\n\ngo 1.19\n")
    (tmp_path / "server.go").write_text(SERVER_GO)
    (tmp_path / "main.go").write_text(MAIN_GO)
    (tmp_path / "agent-tools.toml").write_text("[lsp]\ndiagnostics_wait_ms = 30000\n")
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "main.go"})
        assert "no diagnostics" in text(r), text(r)
        r = await c.call_tool(
            "edit",
            {
                "path": "server.go",
                "symbol": "Server.Port",
                "replace": 'func (s *Server) Port() string {\n\treturn "x"\n}',
            },
        )
        answer = text(r)
        assert not r.is_error, answer
        assert answer.splitlines()[0] == (
            "Edited server.go:5-7: replaced `Server.Port` (method, found by gopls)."
        ), answer
        assert "main.go:4:" in answer, answer
