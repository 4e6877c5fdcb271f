"""A conversation's first correct answer from the per-user daemon's warm servers against a
cold start, side by side in one run, through the official MCP Python SDK.

For each corpus (Django's sdist and ripgrep's crate, `corpora.py`), on fresh copies:

- cold: `agent-tools mcp --no-daemon` (the servers start with the conversation): from
  spawning the server to the first correct answer to "where is X defined?" asked at the
  symbol's own declaration (a definition that names its file and line; asked again until it
  does), then the conversation ends;
- first through the daemon: the same, with a daemon of the run's own (its own runtime
  folder) that starts with the conversation;
- second through the daemon: a new conversation started right after the first one ended,
  timed the same way, and a later one, started once the servers have no work under way
  (`lsp status` shows no `indexing`): what a user's next conversation pays;
- RSS: the resident memory of one in-process conversation (its process and its servers'
  trees) against two conversations started together on a daemon of their own (both
  processes and the daemon's whole tree), each read once the first definition answered;
  and their PSS beside it: the conversations and the daemon run one binary, whose code pages
  RSS counts once per process though the machine holds them once.

The order alternates between runs (cold first in odd runs, the daemon first in even runs).
Prints one table with the ratios (daemon / cold). Usage: warm_conversation.py --ours BIN
--work DIR [--sdist django=TAR] [--crate ripgrep=DIR] [--runs N] [--smoke].

`--smoke` (what `cargo xtask bench --smoke` runs): one run on a two-file Python project of its
own instead of the corpora, each answer still checked, to show the bench still runs; its
figures mean nothing.
"""

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import psutil
from corpora import Corpus, django_corpus, ripgrep_corpus
from mcp import Client, StdioServerParameters

FIRST_ANSWER_LIMIT_S = 600.0
# The "later" conversation starts once the daemon's servers have no work under way: a
# user's next conversation rarely starts the moment the last one ended, and a warm server
# may still be on its first analysis then (pyright analyses Django's 2,000 files for
# minutes and answers between slices of it). Waited for at most this long.
SETTLE_LIMIT_S = 900.0


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def tree_pids(pid: int) -> set:
    try:
        root = psutil.Process(pid)
        return {root.pid, *(c.pid for c in root.children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


def memory_of(pids) -> tuple:
    """The resident memory of `pids` (RSS) and their proportional share of it (PSS: a page
    several of them map, the binary's own code above all, counted once in all), each process
    counted once (a daemon started by a conversation is also below it in the process tree)."""
    rss = pss = 0
    for pid in set(pids):
        try:
            info = psutil.Process(pid).memory_full_info()
        except psutil.NoSuchProcess:
            continue
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return rss, pss


def conversation_pids(binary: str, root: str) -> list:
    """The `agent-tools mcp` processes serving `root` now."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info.get("cmdline") or []
        if cmd[:1] == [binary] and "mcp" in cmd and root in cmd:
            found.append(p.pid)
    return found


def daemon_pid(binary: str, env: dict):
    out = subprocess.run([binary, "daemon", "status", "--json"], env=env, capture_output=True, text=True)
    import json

    status = json.loads(out.stdout or "null")
    return status["pid"] if status else None


async def until_settled(binary, root, env, target):
    """Seconds until the daemon's servers for `root` have no work under way (a conversation
    asks `lsp status` every 5 s until no line says `indexing`; at most SETTLE_LIMIT_S)."""
    started = time.monotonic()
    params = StdioServerParameters(command=binary, args=["mcp", "--root", root], env=env)
    async with Client(params) as client:
        # Status lists only the servers this conversation has reached.
        await client.call_tool("lsp", {"action": "definition", "file": target["file"],
                                       "line": target["line"], "symbol": target["symbol"]})
        while time.monotonic() - started < SETTLE_LIMIT_S:
            r = await client.call_tool("lsp", {"action": "status"})
            if "indexing" not in text(r):
                break
            await asyncio.sleep(5)
    return time.monotonic() - started


async def first_answer(binary, root, env, daemon, target, hold=None):
    """Seconds from spawning a conversation to its first correct definition; `hold`, when
    given, is awaited before the conversation ends (to measure memory while it lives)."""
    args = ["mcp", "--root", root, *([] if daemon else ["--no-daemon"])]
    started = time.monotonic()
    params = StdioServerParameters(command=binary, args=args, env=env)
    want = f"{target['file']}:{target['line']}:"
    async with Client(params) as client:
        while True:
            r = await client.call_tool("lsp", {"action": "definition", "file": target["file"],
                                               "line": target["line"], "symbol": target["symbol"]})
            answer = text(r)
            if not r.is_error and want in answer.split("\n", 1)[-1]:
                break
            if time.monotonic() - started > FIRST_ANSWER_LIMIT_S:
                raise SystemExit(f"no correct definition within {FIRST_ANSWER_LIMIT_S} s: {answer[:300]}")
            await asyncio.sleep(0.1)
        took = time.monotonic() - started
        if hold is not None:
            await hold()
    return took


async def measure(binary, corpus, scratch, daemon_first):
    """One run on `corpus`: cold, daemon first and daemon second conversations' times, and
    the memory of one in-process conversation and of two served by the daemon."""
    runtime = tempfile.mkdtemp(prefix="w", dir="/tmp")
    os.chmod(runtime, 0o700)
    base = {**os.environ}
    daemon_env = {**base, "XDG_RUNTIME_DIR": runtime}
    target = corpus.references
    out = {}

    async def cold():
        root = fresh(corpus, scratch, "cold")
        rss = {}

        async def read_memory():
            rss["one"] = memory_of(p for c in conversation_pids(binary, root) for p in tree_pids(c))

        out["cold"] = await first_answer(binary, root, base, False, target, read_memory)
        out["rss_one"], out["pss_one"] = rss["one"]

    async def through_daemon():
        root = fresh(corpus, scratch, "daemon")
        out["daemon_first"] = await first_answer(binary, root, daemon_env, True, target)
        out["daemon_second"] = await first_answer(binary, root, daemon_env, True, target)
        out["settle_s"] = await until_settled(binary, root, daemon_env, target)
        out["daemon_later"] = await first_answer(binary, root, daemon_env, True, target)
        subprocess.run([binary, "daemon", "stop"], env=daemon_env, capture_output=True)

    async def two_together():
        # Memory at the same stage as the cold conversation's: two conversations started
        # together on a daemon of their own, read once both have their first answer.
        root = fresh(corpus, scratch, "two")
        both = asyncio.Event()
        arrived = []

        async def wait_for_both():
            arrived.append(1)
            if len(arrived) == 2:
                convs = conversation_pids(binary, root)
                pid = daemon_pid(binary, daemon_env)
                trees = [*convs, *([pid] if pid else [])]
                out["rss_two"], out["pss_two"] = memory_of(p for c in trees for p in tree_pids(c))
                both.set()
            await both.wait()

        await asyncio.gather(first_answer(binary, root, daemon_env, True, target, wait_for_both),
                             first_answer(binary, root, daemon_env, True, target, wait_for_both))
        subprocess.run([binary, "daemon", "stop"], env=daemon_env, capture_output=True)

    steps = [through_daemon, two_together, cold] if daemon_first else [cold, through_daemon, two_together]
    for step in steps:
        await step()
    shutil.rmtree(runtime, ignore_errors=True)
    return out


def smoke_corpus(scratch) -> Corpus:
    """Two Python files: `main.py` calls `compute`, defined in `util.py`."""
    root = os.path.join(scratch, "smoke-src")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    files = {
        "pyproject.toml": '[project]\nname = "smoke"\nversion = "0"\n',
        "util.py": "def compute(x):\n    return x * 2\n",
        "main.py": "from util import compute\n\nprint(compute(2))\n",
    }
    for name, body in files.items():
        with open(os.path.join(root, name), "w", encoding="utf-8") as f:
            f.write(body)
    target = {"file": "util.py", "line": 1, "symbol": "compute", "name_path": "compute"}
    return Corpus(name="smoke", root=root, search={}, references=target, breaking={}, rename={},
                  checker=[], parse_checker=None)


def fresh(corpus, scratch, side):
    dest = os.path.join(scratch, f"{corpus.name}-{side}")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(corpus.root, dest, symlinks=True)
    return dest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sdist", action="append", default=[])
    ap.add_argument("--crate", action="append", default=[])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    scratch = os.path.join(args.work, "warm")
    os.makedirs(scratch, exist_ok=True)
    corpora = []
    if args.smoke:
        global FIRST_ANSWER_LIMIT_S, SETTLE_LIMIT_S
        FIRST_ANSWER_LIMIT_S, SETTLE_LIMIT_S = 120.0, 120.0
        corpora.append(smoke_corpus(scratch))
        args.runs = 1
    for spec in args.sdist:
        name, path = spec.split("=", 1)
        if name == "django":
            corpora.append(django_corpus(path, scratch))
    for spec in args.crate:
        name, path = spec.split("=", 1)
        if name == "ripgrep":
            corpora.append(ripgrep_corpus(path, scratch))
    rows = []
    for corpus in corpora:
        runs = [asyncio.run(measure(args.ours, corpus, scratch, n % 2 == 1)) for n in range(args.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        rows.append((corpus.name, med, runs))
        print(f"{corpus.name}: " + ", ".join(f"run {i + 1}: " + " ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()) for i, r in enumerate(runs)), flush=True)
    print()
    print("| corpus | cold first answer | daemon: first conversation | next, right after | servers settled after | next, once settled | right after / cold | settled / cold | RSS one conversation | RSS two via daemon | two / one | PSS one | PSS two | two / one |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, m, _ in rows:
        print(f"| {name} | {m['cold']:.2f} s | {m['daemon_first']:.2f} s | {m['daemon_second']:.2f} s | {m['settle_s']:.0f} s | {m['daemon_later']:.2f} s | "
              f"{m['daemon_second'] / m['cold']:.2f}x | {m['daemon_later'] / m['cold']:.2f}x | {m['rss_one'] / 2**20:.0f} MiB | "
              f"{m['rss_two'] / 2**20:.0f} MiB | {m['rss_two'] / m['rss_one']:.2f}x | "
              f"{m['pss_one'] / 2**20:.0f} MiB | {m['pss_two'] / 2**20:.0f} MiB | {m['pss_two'] / m['pss_one']:.2f}x |")


if __name__ == "__main__":
    main()
