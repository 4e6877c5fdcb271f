"""The soak `cargo xtask soak [--minutes N]` runs: one `agent-tools serve --http` on a small
Python project, 10 sessions making mixed calls for N minutes (reads, pyright queries, writes
with diagnostics, evals in a kernel, ast searches, a call cancelled part way, and in every
third session a debugpy session from breakpoint to exit), then 1,000
sessions opened and closed. Every call must be answered, and at the end the server's child
processes, open file descriptors, threads and RSS must be back within 10% of the baseline
taken after a warm-up of the same shape (one round in 10 sessions at once, one batch of
sessions opened and closed). The figures are printed before and after.

Run with the e2e virtualenv's Python; AGENT_TOOLS_BIN names the binary."""

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from serve_support import serve  # noqa: E402

# The server runs with glibc's default arenas, as users run it: what the sessions freed is
# handed back once they have closed (`serve` trims the allocator when it is quiet), so RSS
# after the soak measures what is still held, not the busiest moment's arenas.

SESSIONS = 10
# Every DEBUG_EVERY-th session also debugs a program each round (debugpy).
DEBUG_EVERY = 3
OPEN_CLOSE = 1000
OPEN_CLOSE_AT_ONCE = 20
DESC = "a cell of the soak"


def project(root: Path):
    (root / "pyproject.toml").write_text('[project]\nname = "soak"\nversion = "0"\n')
    (root / "agent-tools.toml").write_text('[lsp.servers.python]\ncommand = ["pyright-langserver", "--stdio"]\n')
    (root / "util.py").write_text("def compute(x: int) -> int:\n    return x * 2\n")
    (root / "main.py").write_text("from util import compute\n\nprint(compute(2))\n")
    (root / "debugged.py").write_text("a = 2\nb = a * 3\nprint('sum', a + b)\n")


@contextlib.asynccontextmanager
async def client(url):
    """An MCP session whose HTTP connections are closed when it ends, so what the server
    still holds afterwards is its own."""
    async with create_mcp_http_client() as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            yield c


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def figures(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    field = {k: v.split()[0] for k, _, v in (ln.partition(":") for ln in status.splitlines()) if v.split()}
    return {
        "children": len(descendants(pid)),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(field["Threads"]),
        "rss_kib": int(field["VmRSS"]),
    }


class Tally:
    def __init__(self):
        self.calls = 0
        self.answered = 0
        self.failures: list[str] = []

    async def call(self, c, tool, args, ok=True):
        self.calls += 1
        r = await c.call_tool(tool, args)
        self.answered += 1
        text = "\n".join(x.text for x in r.content if getattr(x, "type", None) == "text")
        if ok and r.is_error:
            self.failures.append(f"{tool} {args}: {text[:300]}")
        return r, text


async def mixed_round(c, tally: Tally, i: int, n: int):
    await tally.call(c, "read", {"path": "util.py"})
    await tally.call(c, "lsp", {"action": "definition", "file": "main.py", "line": 3, "symbol": "compute"})
    await tally.call(c, "lsp", {"action": "hover", "file": "main.py", "line": 3, "symbol": "compute"})
    await tally.call(c, "write", {"path": f"s{i}/w.py", "content": f"from util import compute\n\nv{n} = compute({n})\n"})
    await tally.call(c, "eval", {"code": f"{n} * 2", "description": DESC})
    await tally.call(c, "ast_grep", {"pattern": "compute($X)", "language": "python"})
    # A call cancelled part way: the client gives up on a slow cell; the next call is served.
    tally.calls += 1
    with anyio.move_on_after(0.5):
        await c.call_tool("eval", {"code": "import time; time.sleep(3)", "description": DESC})
    tally.answered += 1
    if i % DEBUG_EVERY == 0:
        await debug_round(c, tally)


async def debug_round(c, tally: Tally):
    """Launches `debugged.py` to a breakpoint, evaluates there and runs it to its exit: the
    adapter and the debuggee must be gone afterwards (the resource figures say so)."""
    await tally.call(c, "debug", {"operation": "breakpoints", "file": "debugged.py", "lines": [2]})
    r, text = await tally.call(c, "debug", {"operation": "launch", "program": "debugged.py"})
    s = r.structured_content or {}
    where = (s.get("location") or {}).get("line")
    if (s.get("state"), s.get("reason"), where) != ("stopped", "breakpoint", 2):
        tally.failures.append(f"debug launch did not stop at debugged.py:2: {text[:300]}")
        return
    r, text = await tally.call(c, "debug", {"operation": "evaluate", "expression": "a * 10"})
    if not text.startswith("20"):
        tally.failures.append(f"debug evaluate a * 10 answered {text[:200]!r}")
    r, text = await tally.call(c, "debug", {"operation": "continue"})
    s = r.structured_content or {}
    if (s.get("state"), s.get("exit_code")) != ("terminated", 0):
        tally.failures.append(f"debug continue did not run to a clean exit: {text[:300]}")


async def session_loop(url, tally: Tally, i: int, until: float):
    async with client(url) as c:
        n = 0
        while n == 0 or time.monotonic() < until:
            await mixed_round(c, tally, i, n)
            n += 1


async def open_and_close(url, tally: Tally, count: int):
    sem = anyio.Semaphore(OPEN_CLOSE_AT_ONCE)

    async def one():
        async with sem:
            async with client(url) as c:
                tally.calls += 1
                await c.list_tools()
                tally.answered += 1

    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(one)


async def settle(pid: int, base: dict[str, int], limit: float = 60.0) -> dict[str, int]:
    """The figures once they are back within bounds, or after `limit` seconds; says how long
    that took and, when it took a while, the RSS on the way."""
    started = time.monotonic()
    deadline = started + limit
    now = figures(pid)
    rss = [now["rss_kib"]]
    while time.monotonic() < deadline and not within(base, now):
        await anyio.sleep(1)
        now = figures(pid)
        rss.append(now["rss_kib"])
    waited = time.monotonic() - started
    trail = f" (RSS KiB each second: {rss})" if len(rss) > 1 else ""
    print(f"figures after the soak taken {waited:.0f} s after its last call{trail}", flush=True)
    return now


def within(base: dict[str, int], now: dict[str, int]) -> bool:
    return all(now[k] <= max(base[k] * 1.1, base[k] + (1 if k == "children" else 0)) for k in base)


def fd_targets(pid: int) -> list[str]:
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return sorted(out)


def table(base, now) -> str:
    rows = [f"{'':10} {'baseline':>10} {'after':>10} {'ratio':>7}"]
    for k in base:
        ratio = now[k] / base[k] if base[k] else float("inf") if now[k] else 1.0
        rows.append(f"{k:10} {base[k]:>10} {now[k]:>10} {ratio:>6.2f}x")
    return "\n".join(rows)


async def main(minutes: float, open_close: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        project(root)
        with serve("--root", str(root), "--max-sessions", str(SESSIONS + OPEN_CLOSE_AT_ONCE + 5)) as srv:
            pid = srv.proc.pid
            tally = Tally()
            # Warm-up in the soak's own shape (its concurrency sets the allocator's and the
            # runtime's working size): one round of every kind of call in each of the 10
            # sessions at once, and one batch of sessions opened and closed.
            async with anyio.create_task_group() as tg:
                for i in range(SESSIONS):
                    tg.start_soon(session_loop, srv.url(), tally, i, time.monotonic())
            await open_and_close(srv.url(), tally, OPEN_CLOSE_AT_ONCE)
            await anyio.sleep(2)
            base = figures(pid)
            base_fds = fd_targets(pid)
            print(f"baseline after a warm-up in the soak's shape: {base}", flush=True)
            started = time.monotonic()
            until = started + minutes * 60
            async with anyio.create_task_group() as tg:
                for i in range(SESSIONS):
                    tg.start_soon(session_loop, srv.url(), tally, i, until)
            mixed = time.monotonic() - started
            print(f"{SESSIONS} sessions of mixed calls for {mixed:.0f} s: {tally.calls} calls", flush=True)
            started = time.monotonic()
            await open_and_close(srv.url(), tally, open_close)
            print(f"{open_close} sessions opened and closed in {time.monotonic() - started:.0f} s", flush=True)
            after = await settle(pid, base)
            print(table(base, after), flush=True)
            print(f"calls: {tally.calls}, answered: {tally.answered}, failed: {len(tally.failures)}", flush=True)
            for f in tally.failures[:20]:
                print(f"  failed: {f}", flush=True)
            bad = []
            if tally.answered != tally.calls:
                bad.append(f"{tally.calls - tally.answered} calls were not answered")
            if tally.failures:
                bad.append(f"{len(tally.failures)} calls failed")
            if not within(base, after):
                bad.append("resources did not come back within 10% of the baseline")
                extra = list(fd_targets(pid))
                for t in base_fds:
                    if t in extra:
                        extra.remove(t)
                print(f"file descriptors beyond the baseline: {extra}", flush=True)
            if bad:
                print("soak FAILED: " + "; ".join(bad), flush=True)
                return 1
            print("soak passed", flush=True)
            return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--open-close", type=int, default=OPEN_CLOSE)
    a = ap.parse_args()
    sys.exit(anyio.run(main, a.minutes, a.open_close))
