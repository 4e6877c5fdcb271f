"""The Windows build of agent-tools, driven under Wine over stdio by the official MCP Python
SDK: `tools/list`, then a `write`, a `read` and an `ast_grep` of the same file, and
JavaScript `eval` cells on Windows' own Node.js (state kept between cells, a cell's prints,
an awaited promise, where the kernel runs, a cancelled cell interrupted with the kernel's
state kept), each answer checked exactly; then the per-user
daemon over its named pipe: started, asked its status, a second one started beside it
leaving at once (the build's lock), and stopped. Run by `cargo xtask test`'s `wine` step:

    python wine_round_trip.py WINE64 AGENT_TOOLS_EXE NODE_EXE

NODE_EXE is Windows' node.exe; its folder must be on the Windows PATH (WINEPATH), where
`eval` looks for it.

WINEPREFIX and WINEDEBUG come from the environment. The workspace is a fresh folder on the
Linux side, handed to the program as Wine sees it (drive Z: is the Linux root).
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time

import anyio
from mcp import Client, StdioServerParameters

# The tools of the Windows build: every family.
EXPECTED_TOOLS = [
    "apply_patch",
    "ast_edit",
    "ast_grep",
    "debug",
    "edit",
    "eval",
    "lsp",
    "lsp_rename",
    "read",
    "resolve",
    "test",
    "write",
]
CONTENT = "def main():\n    print('hi')\n"
WRITE_ANSWER = "Created src/app.py (2 lines, 28 bytes)."
READ_ANSWER = "     1\tdef main():\n     2\t    print('hi')\n"
AST_GREP_ANSWER = "1 match(es) in 1 file(s) for `print($X)` (python)\n\nsrc/app.py:2:5  print('hi')\n    $X = 'hi'"

# JavaScript cells in order, each (what, code, answer): the kernel keeps its state between
# cells, a cell's prints come before its value, an awaited promise resolves, and the
# kernel is a Windows process (node.exe, win32).
EVAL_CELLS = [
    ("define a value in the kernel", "const n = 40;\nconsole.log('defined n');\nn + 2", "defined n\n42"),
    ("await a timer in the kernel", "await new Promise((r) => setTimeout(r, 50));\nn * 2", "80"),
    ("ask the kernel where it runs", "[process.platform, require('path').basename(process.execPath)]", "[ 'win32', 'node.exe' ]"),
]

# A cell that marks that it started, then waits on a timer far longer than the test.
AWAITING_CELL = "require('fs').writeFileSync('started', '');\nawait new Promise((r) => setTimeout(r, 600000));\n'never'"


async def cancel_once_started(c, marker: str, arguments: dict) -> None:
    """Calls eval with `arguments` and cancels the call (the SDK sends
    `notifications/cancelled`) once the cell made `marker`."""
    async with anyio.create_task_group() as tg:

        async def call():
            await c.call_tool("eval", arguments)

        tg.start_soon(call)
        deadline = time.monotonic() + 60
        while not os.path.exists(marker):
            if time.monotonic() > deadline:
                raise TimeoutError("the awaiting cell did not start within 60 s")
            await anyio.sleep(0.05)
        tg.cancel_scope.cancel()


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def round_trip(wine64: str, exe: str, root: str) -> list:
    """The answers, in order, as (what, got, want); compared once the server has closed."""
    windows_root = "Z:" + root.replace("/", "\\")
    params = StdioServerParameters(
        command=wine64,
        args=[exe, "mcp", "--root", windows_root, "--surface", "full"],
        env=dict(os.environ),
    )
    answers = []
    async with Client(params) as c:
        names = sorted(t.name for t in (await c.list_tools()).tools)
        answers.append(("tools/list", names, EXPECTED_TOOLS))
        r = await c.call_tool("write", {"path": "src/app.py", "content": CONTENT})
        answers.append(("write", (r.is_error, text(r)), (False, WRITE_ANSWER)))
        r = await c.call_tool("read", {"path": "src/app.py"})
        answers.append(("read", (r.is_error, text(r)), (False, READ_ANSWER)))
        r = await c.call_tool("ast_grep", {"pattern": "print($X)", "language": "python"})
        answers.append(("ast_grep", (r.is_error, text(r)), (False, AST_GREP_ANSWER)))
        for what, code, want in EVAL_CELLS:
            r = await c.call_tool("eval", {"language": "javascript", "code": code, "description": what})
            answers.append((f"eval: {what}", (r.is_error, text(r)), (False, want)))
        # A cancelled cell is interrupted through the kernel's interrupts pipe (Windows has
        # no SIGINT): the kernel lives on with its state, so the next cell answers from it.
        marker = os.path.join(root, "started")
        await cancel_once_started(c, marker, {"language": "javascript", "code": AWAITING_CELL, "description": "wait on a timer until cancelled"})
        r = await c.call_tool("eval", {"language": "javascript", "code": "n + 1", "description": "use the kernel's state after the cancel"})
        answers.append(("eval after a cancelled cell", (r.is_error, text(r)), (False, "41")))
    with open(os.path.join(root, "src", "app.py"), "rb") as f:
        answers.append(("the file on disk", f.read().decode(), CONTENT))
    return answers


def daemon_round_trip(wine64: str, exe: str) -> list:
    """The daemon over its named pipe: (what, got, want) in order."""
    answers = []

    def status():
        out = subprocess.run([wine64, exe, "daemon", "status", "--json"], capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout or "null")

    answers.append(("status before any daemon", status(), None))
    daemon = subprocess.Popen([wine64, exe, "daemon", "serve"], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    seen = None
    while seen is None and time.monotonic() < deadline and daemon.poll() is None:
        time.sleep(0.2)
        seen = status()
    answers.append(("status of the started daemon", seen and (seen["servers"], seen["draining"]), ([], False)))
    second = subprocess.run([wine64, exe, "daemon", "serve"], capture_output=True, text=True, timeout=120)
    answers.append(("a second daemon of the same build", second.returncode, 0))
    answers.append(("the daemon serving after the second left", (status() or {}).get("pid"), seen and seen["pid"]))
    stop = subprocess.run([wine64, exe, "daemon", "stop"], capture_output=True, text=True, timeout=120)
    answers.append(("daemon stop", stop.stdout.strip(), "stopped the daemon and every server it held"))
    try:
        daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        daemon.kill()
    answers.append(("the daemon after stop", daemon.returncode, 0))
    return answers


def main() -> None:
    wine64, exe, node = sys.argv[1], sys.argv[2], sys.argv[3]
    if not os.path.isfile(node):
        sys.exit(f"wine round trip: no Windows node.exe at {node}")
    with tempfile.TemporaryDirectory(prefix="agent-tools-wine-") as root:
        answers = asyncio.run(round_trip(wine64, exe, os.path.realpath(root)))
    answers += daemon_round_trip(wine64, exe)
    wrong = [f"{what}:\n  got:  {got!r}\n  want: {want!r}" for what, got, want in answers if got != want]
    if wrong:
        sys.exit("wine round trip: wrong answers\n" + "\n".join(wrong))
    print("wine round trip: tools/list, write, read, ast_grep and JavaScript eval answered as expected; the daemon served its named pipe")


if __name__ == "__main__":
    main()
