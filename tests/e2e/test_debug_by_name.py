"""Breakpoints by name and with conditions, end to end with a real debugpy behind
`agent-tools mcp`: a name path stops on the symbol's first line of code, a conditional
breakpoint stops only when its condition holds, a logpoint prints into `output` and does
not stop."""

import os
import shutil

import pytest

from conftest import mcp_session, text

pytestmark = pytest.mark.anyio

APP = """def total(n):
    acc = 0
    for i in range(n):
        acc += i
    return acc


class Greeter:
    def greet(self, name):
        message = "hi " + name
        return message


print("total", total(5))
print(Greeter().greet("ann"))
"""

needs_debugpy = pytest.mark.skipif(
    shutil.which("debugpy") is None and os.environ.get("CI") != "true", reason="debugpy not installed"
)


def project(root):
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "app.py").write_text(APP)
    # The grammar places the breakpoint; no language server is needed for that.
    (root / "agent-tools.toml").write_text("[lsp]\nenabled = false\n")


@needs_debugpy
async def test_a_breakpoint_by_name_stops_on_the_symbols_first_line(tmp_path):
    project(tmp_path)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("debug", {"operation": "breakpoints", "file": "app.py", "symbol": "Greeter.greet"})
        assert not r.is_error, text(r)
        assert text(r).splitlines() == [
            "`Greeter.greet` starts its code at app.py:10; breakpoints of app.py (no session yet: kept and sent "
            "at the next launch):",
            "  app.py:10 [at Greeter.greet] — kept; sent to the adapter at the next launch",
        ]
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        s = r.structured_content
        assert s["state"] == "stopped" and s["reason"] == "breakpoint", text(r)
        assert s["location"]["path"] == "app.py" and s["location"]["line"] == 10, s
        r = await c.call_tool("debug", {"operation": "evaluate", "expression": "name"})
        assert text(r).startswith("'ann'"), text(r)
        r = await c.call_tool("debug", {"operation": "breakpoints", "file": "app.py", "symbol": "greet.nope"})
        assert r.is_error
        assert text(r) == (
            "invalid arguments (`symbol`): no symbol `greet.nope` in app.py (found by tree-sitter python); nothing "
            "was changed — its top-level symbols are: total (function, line 1); Greeter (class, line 8)"
        ), text(r)
        await c.call_tool("debug", {"operation": "terminate"})


@needs_debugpy
async def test_a_conditional_breakpoint_stops_only_when_true(tmp_path):
    project(tmp_path)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "debug", {"operation": "breakpoints", "file": "app.py", "lines": [4], "condition": "i == 3"}
        )
        assert not r.is_error, text(r)
        assert "app.py:4 [when i == 3]" in text(r), text(r)
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        s = r.structured_content
        assert s["state"] == "stopped" and s["location"]["line"] == 4, text(r)
        r = await c.call_tool("debug", {"operation": "evaluate", "expression": "(i, acc)"})
        assert text(r).startswith("(3, 3)"), text(r)
        # i == 3 only once: the next stop is the program's end.
        r = await c.call_tool("debug", {"operation": "continue"})
        assert r.structured_content["state"] == "terminated", text(r)
        assert "total 10" in text(r), text(r)


@needs_debugpy
async def test_a_logpoint_prints_into_output_and_does_not_stop(tmp_path):
    project(tmp_path)
    # debugpy sends a logpoint's line from inside the debuggee over its own connection and
    # the program's stdout through the launcher's pipe, so a print made right after the
    # loop can overtake the last logpoint lines: this program prints nothing of its own.
    quiet = APP.replace('print("total", total(5))', "total(5)")
    quiet = quiet.replace('print(Greeter().greet("ann"))', 'Greeter().greet("ann")')
    (tmp_path / "app.py").write_text(quiet)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "debug",
            {"operation": "breakpoints", "file": "app.py", "lines": [4], "log_message": "step {i} acc {acc}"},
        )
        assert not r.is_error, text(r)
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        assert r.structured_content["state"] == "terminated", text(r)
        r = await c.call_tool("debug", {"operation": "output"})
        logged = [line for line in text(r).splitlines() if line.startswith("step ")]
        assert logged == ["step 0 acc 0", "step 1 acc 0", "step 2 acc 1", "step 3 acc 3", "step 4 acc 6"], text(r)
        # Nothing but the logpoint's lines reached the program's output.
        assert not [line for line in text(r).splitlines() if line.startswith(("total", "hi "))], text(r)


MAIN = """def main():
    ready = True
    import helper
    helper.work()


main()
"""

HELPER = """def work():
    value = 42
    print("value", value)
    return value
"""


@needs_debugpy
async def test_breakpoints_follow_lines_inserted_above_them_mid_session(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "app.py").write_text(MAIN)
    (tmp_path / "helper.py").write_text(HELPER)
    (tmp_path / "agent-tools.toml").write_text("[lsp]\nenabled = false\n")
    async with mcp_session(tmp_path) as c:
        await c.call_tool("debug", {"operation": "breakpoints", "file": "app.py", "lines": [2]})
        await c.call_tool("debug", {"operation": "breakpoints", "file": "helper.py", "lines": [3, 4]})
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        assert r.structured_content["location"] == {"path": "app.py", "line": 2, "column": 1} or (
            r.structured_content["location"]["line"] == 2
        ), text(r)
        # helper.py is not loaded yet: three lines go in above its breakpoints.
        r = await c.call_tool(
            "edit", {"path": "helper.py", "old_string": "def work():", "new_string": "import os\n\n\ndef work():"}
        )
        assert not r.is_error, text(r)
        assert text(r).split("\n\n", 1)[1].splitlines() == [
            "## breakpoints",
            "moved with their lines: helper.py:3 → 6, helper.py:4 → 7",
            "sent again to the live debug session",
        ], text(r)
        r = await c.call_tool("debug", {"operation": "continue"})
        s = r.structured_content
        assert s["state"] == "stopped" and s["location"]["path"] == "helper.py", text(r)
        assert s["location"]["line"] == 6, text(r)
        assert 'print("value", value)' in text(r), text(r)
        # A deleted line takes its breakpoint with it, and the answer says so.
        r = await c.call_tool("edit", {"path": "helper.py", "old_string": "    return value\n", "new_string": ""})
        assert not r.is_error, text(r)
        assert text(r).split("\n\n", 1)[1].splitlines() == [
            "## breakpoints",
            "dropped (their lines were deleted): helper.py:7",
            "sent again to the live debug session",
        ], text(r)
        r = await c.call_tool("debug", {"operation": "status"})
        assert "helper.py:6" in text(r) and "helper.py:7" not in text(r), text(r)
        await c.call_tool("debug", {"operation": "terminate"})


SHOP_GO = """package main

import "fmt"

type Shop struct{ items int }

func (s *Shop) Add(n int) int {
\ts.items += n
\treturn s.items
}

func main() {
\ts := &Shop{}
\tfor i := 1; i <= 4; i++ {
\t\ts.Add(i)
\t}
\tfmt.Println("items", s.items)
}
"""


async def test_delve_stops_by_name_only_when_the_condition_holds(tmp_path):
    if shutil.which("dlv") is None or shutil.which("go") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("dlv and go are needed under CI=true")
        pytest.skip("dlv or go not installed")
    (tmp_path / "go.mod").write_text("module example.com/shop\n\ngo 1.19\n")
    (tmp_path / "main.go").write_text(SHOP_GO)
    (tmp_path / "agent-tools.toml").write_text("[lsp]\nenabled = false\n")
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool(
            "debug",
            {"operation": "breakpoints", "file": "main.go", "symbol": "Shop.Add", "condition": "n == 3"},
        )
        assert not r.is_error, text(r)
        assert text(r).splitlines()[0].startswith("`Shop.Add` starts its code at main.go:8;"), text(r)
        r = await c.call_tool("debug", {"operation": "launch", "program": ".", "timeout_seconds": 120})
        s = r.structured_content
        assert s["state"] == "stopped" and s["location"]["path"] == "main.go", text(r)
        assert s["location"]["line"] == 8, text(r)
        r = await c.call_tool("debug", {"operation": "evaluate", "expression": "n"})
        assert text(r).startswith("3"), text(r)
        r = await c.call_tool("debug", {"operation": "continue"})
        assert r.structured_content["state"] == "terminated", text(r)
        assert "items 10" in text(r), text(r)
