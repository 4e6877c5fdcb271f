"""agent-tools and Serena side by side, through one MCP client (the official Python SDK).

Both servers run over stdio on fresh copies of the same sources, one at a time, the order
alternating between runs. For each corpus and side it measures:

- cold start -> first correct name search: from spawning the server to the first answer to
  "where is X defined?" by name (our `lsp` symbols query, Serena's `find_symbol`) that names
  the declaration's file and line (asked again until it does). An answer of ours labelled
  "(not final: ...)" in its first line (declarations read from the files while the server
  has not answered) counts when it names the right line; when the server's own answer
  first did is timed apart;
- warm references: the median of 7 asks once the first has answered;
- breaking edit -> broken callers known: the edit itself, plus (for Serena, which does not
  report diagnostics on write) its references and the diagnostics of every referencing
  file; the sites found are held against the project's own checker (pyright's command
  line, `cargo check --workspace --tests`) run before and after the same edit;
- rename: the call, whether the tree it leaves is the same as the other side's, and how many
  errors the project's checker reports in that tree that it did not after the breaking edit
  (a rename that leaves a use behind breaks it);
- RSS of the server's process tree at the end of the run, and the size of tools/list.

The corpora (`corpora.py`): the sdists of click, requests and Django from PyPI, ripgrep's
crate from crates.io and a Cargo workspace written here.

Usage: side_by_side.py --ours BIN --serena BIN --python313-dir DIR --work DIR
[--sdist NAME=TAR ...] [--crate NAME=DIR ...] [--runs N] [--only NAME,...] (run by
`cargo xtask bench peer`, which installs Serena, downloads the sdists and fetches the crates
of the corpora asked for).
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

from corpora import (
    Corpus,
    cargo_corpus,
    click_corpus,
    django_corpus,
    line_of,
    requests_corpus,
    ripgrep_corpus,
)
from mcp import Client, StdioServerParameters

WARM_ASKS = 7
# How long the first correct name search may take before the side counts as failed.
COLD_LIMIT_S = 300.0
# The pause before the breaking edit and before the rename, on both sides: an agent reads
# each answer before its next call (a model's turn takes seconds), and work a server goes on
# with behind an answer is done by then. `--think-s 0` asks back to back.
THINK_S = 2.0


@dataclass
class Outcome:
    """What one side did on one corpus in one run."""

    cold_s: float = float("nan")
    cold_final_s: float = float("nan")  # the server's own correct answer (not a stand-in)
    cold_stand_in: bool = False  # the first correct answer was labelled not final
    warm_refs_s: float = float("nan")
    refs_count: int = 0
    break_s: float = float("nan")
    break_found: int = 0
    break_truth: int = 0
    rename_s: float = float("nan")
    rename_tree: dict = field(default_factory=dict)
    rename_broke: int = 0
    rss_kib: int = 0
    processes: int = 0
    tools_list_bytes: int = 0
    errors: list = field(default_factory=list)


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


# ---------------------------------------------------------------- process tree memory


def tree(pid: int) -> list:
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


# ---------------------------------------------------------------- checkers (ground truth)


def checker_sites(corpus: Corpus, tree_dir: str) -> set:
    env = {**os.environ, "CARGO_TARGET_DIR": os.path.join(tree_dir, "..", "checker-target")}
    p = subprocess.run(corpus.checker, cwd=tree_dir, capture_output=True, text=True, env=env, timeout=900)
    cwd = os.getcwd()
    os.chdir(tree_dir)
    try:
        return corpus.parse_checker(p.stdout)
    finally:
        os.chdir(cwd)


def apply_breaking(tree_dir: str, b: dict) -> None:
    path = os.path.join(tree_dir, b["file"])
    with open(path, encoding="utf-8") as f:
        src = f.read()
    if src.count(b["old"]) != 1:
        raise SystemExit(f"bench peer: the breaking edit's text is not unique in {b['file']}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(src.replace(b["old"], b["new"]))


def truth_of_breaking(corpus: Corpus, scratch: str) -> tuple:
    """The (file, line) sites the project's checker reports after the breaking edit and not
    before it, and every site it reports after the edit (what a rename made next is held
    against)."""
    copy = os.path.join(scratch, f"{corpus.name}-truth")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(corpus.root, copy)
    before = checker_sites(corpus, copy)
    apply_breaking(copy, corpus.breaking)
    after = checker_sites(corpus, copy)
    return after - before, after


def snapshot(tree_dir: str) -> dict:
    """Every text file's content (what a rename leaves behind), minus each side's own state."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(tree_dir):
        dirnames[:] = [d for d in dirnames if d not in (".serena", ".git", "target", "__pycache__")]
        for name in filenames:
            # Cargo.lock: rust-analyzer under Serena writes one, ours does not.
            if name in ("agent-tools.toml", "Cargo.lock"):
                continue
            p = os.path.join(dirpath, name)
            try:
                with open(p, encoding="utf-8") as f:
                    out[os.path.relpath(p, tree_dir)] = f.read()
            except (UnicodeDecodeError, OSError):
                pass
    return out


# ---------------------------------------------------------------- the two sides


def side_env() -> dict:
    """The environment both servers run in: the bench's own cargo target folder left out, so
    that a Cargo corpus builds into its own tree."""
    return {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}


SITE = re.compile(r"([\w./-]+\.(?:py|rs)):(\d+)")
# Our line for alike diagnostics of one file: `path, N times: what — at 12:5, 40:5, …`.
ALIKE = re.compile(r"^([\w./-]+\.(?:py|rs)), \d+ times: .* — (?:the first \d+ )?at ((?:\d+:\d+(?:, )?)+)$", re.MULTILINE)


def our_sites(answer: str) -> set:
    """The (file, line) sites our write's answer names: on lines of their own, and on the
    lines naming the places of alike ones."""
    sites = {(f, int(n)) for f, n in SITE.findall(answer)}
    for f, places in ALIKE.findall(answer):
        sites |= {(f, int(at.split(":")[0])) for at in places.split(", ")}
    return sites


class Ours:
    name = "agent-tools"

    def __init__(self, binary: str):
        self.binary = binary

    def params(self, root: str, log) -> StdioServerParameters:
        return StdioServerParameters(
            command="sh",
            args=["-c", 'exec "$0" mcp --no-daemon --root "$1" --surface full 2>>"$2"', self.binary, root, log],
            env=side_env(),
        )

    async def search(self, c, q):
        return text_of(await c.call_tool("lsp", {"action": "symbols", "query": q["query"]}))

    def search_ok(self, answer: str, q) -> bool:
        return re.search(rf"(^|\s){re.escape(q['want_file'])}:{q['want_line']}:", answer, re.MULTILINE) is not None

    @staticmethod
    def final(answer: str) -> bool:
        """Whether the answer is the server's own: its workspace search, or declarations
        each confirmed by its outline of their file (as Serena's `find_symbol` reads the
        outlines) — no leading note says its matches are declarations read from the files
        that the server has not confirmed."""
        for line in answer.strip().splitlines():
            if not line.startswith("("):
                return True
            if line.startswith("(not final") and "declarations read from the files" in line:
                return False
        return True

    def learn(self, tools) -> None:
        pass

    async def references(self, c, r):
        res = await c.call_tool("lsp", {"action": "references", "file": r["file"], "line": r["line"], "symbol": r["symbol"]})
        out = text_of(res)
        count = re.match(r"(\d+) reference", out)
        return out, int(count.group(1)) if count else 0

    async def breaking(self, c, b, root):
        r = await c.call_tool("edit", {"path": b["file"], "old_string": b["old"], "new_string": b["new"]})
        out = text_of(r)
        return out, our_sites(out)

    async def rename(self, c, r):
        args = {"file": r["file"], "line": r["line"], "symbol": r["symbol"], "new_name": r["new_name"]}
        res = await c.call_tool("lsp_rename", args)
        return text_of(res)


class Serena:
    name = "Serena"

    def __init__(self, binary: str, python313_dir: str):
        self.binary = binary
        self.path_prefix = f"{python313_dir}:{os.path.dirname(binary)}"

    def params(self, root: str, log) -> StdioServerParameters:
        return StdioServerParameters(
            command="sh",
            args=[
                "-c",
                'exec "$0" start-mcp-server --project "$1" --context agent --agent-interface tools '
                "--enable-web-dashboard false --enable-gui-log-window false --open-web-dashboard false "
                '2>>"$2"',
                self.binary,
                root,
                log,
            ],
            env={**side_env(), "SERENA_USAGE_REPORTING": "false", "PATH": f"{self.path_prefix}:{os.environ['PATH']}"},
        )

    name_param = "name_path_pattern"

    def learn(self, tools) -> None:
        """Reads find_symbol's pattern parameter from its own description in tools/list (the
        first required one naming a name path)."""
        for t in tools:
            if t.name == "find_symbol":
                schema = getattr(t, "input_schema", None) or getattr(t, "inputSchema", None) or {}
                required = schema.get("required") or list(schema.get("properties", {}))
                named = [p for p in required if "name" in p] or required
                if named:
                    self.name_param = named[0]

    async def search(self, c, q):
        return text_of(await c.call_tool("find_symbol", {self.name_param: q["query"]}))

    @staticmethod
    def final(answer: str) -> bool:
        return True

    def search_ok(self, answer: str, d) -> bool:
        try:
            data = json.loads(answer)
        except json.JSONDecodeError:
            return False
        found = data if isinstance(data, list) else [data]
        for s in found:
            if not isinstance(s, dict):
                continue
            # Serena names a symbol by its body's 0-based line range (doc comments included).
            body = s.get("body_location") or {}
            first, last = body.get("start_line"), body.get("end_line")
            if s.get("relative_path") == d["want_file"] and first is not None and last is not None:
                if int(first) + 1 <= d["want_line"] <= int(last) + 1:
                    return True
        return False

    async def references(self, c, r):
        res = await c.call_tool("find_referencing_symbols", {"name_path": r["name_path"], "relative_path": r["file"]})
        out = text_of(res)
        return out, out.count('"content_around_reference"')

    async def breaking(self, c, b, root):
        r = await c.call_tool(
            "replace_content", {"relative_path": b["file"], "needle": b["old"], "repl": b["new"], "mode": "literal"}
        )
        out = [text_of(r)]
        refs, _ = await self.references(c, {"name_path": b["name_path"], "file": b["file"]})
        out.append(refs)
        files = {b["file"]} | referencing_files(refs)
        sites = set()
        for f in sorted(files):
            d = text_of(await c.call_tool("get_diagnostics_for_file", {"relative_path": f, "min_severity": 1}))
            out.append(d)
            sites |= {(f, line + 1) for line in diagnostic_lines(d)}
        return "\n".join(out), sites

    async def rename(self, c, r):
        res = await c.call_tool("rename_symbol", {"name_path": r["name_path"], "relative_path": r["file"], "new_name": r["new_name"]})
        return text_of(res)


def referencing_files(answer: str) -> set:
    """The files named in Serena's find_referencing_symbols answer (its JSON's relative paths)."""
    files = set()

    def walk(v, key=None):
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str) and re.search(r"\.(py|rs)$", k):
                    files.add(k)
                walk(x, k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif key == "relative_path" and isinstance(v, str):
            files.add(v)

    try:
        walk(json.loads(answer))
    except json.JSONDecodeError:
        pass
    return files


def diagnostic_lines(answer: str) -> set:
    """0-based lines of the diagnostics in Serena's get_diagnostics_for_file answer."""
    lines = set()

    def walk(v):
        if isinstance(v, dict):
            rng = v.get("range")
            if isinstance(rng, dict) and isinstance(rng.get("start"), dict):
                lines.add(int(rng["start"]["line"]))
            elif "line" in v and isinstance(v["line"], int):
                lines.add(v["line"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    try:
        walk(json.loads(answer))
    except json.JSONDecodeError:
        pass
    return lines


# ---------------------------------------------------------------- one side, one run


async def run_side(
    side, corpus: Corpus, scratch: str, run: int, truth: set, broken: set, log_dir: str, think_s: float
) -> Outcome:
    o = Outcome(break_truth=len(truth))
    root = os.path.join(scratch, f"{corpus.name}-{side.name}-{run}")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(corpus.root, root)
    log = os.path.join(log_dir, f"{corpus.name}-{side.name}-{run}.log")
    answers = open(os.path.join(log_dir, f"{corpus.name}-{side.name}-{run}.answers"), "w")

    def keep(what, text):
        answers.write(f"===== {what}\n{text}\n")
        answers.flush()

    me = os.getpid()
    start = time.monotonic()
    async with Client(side.params(root, log)) as c:
        tools = (await c.list_tools()).tools
        o.tools_list_bytes = len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in tools]))
        side.learn(tools)
        q = corpus.search
        while True:
            answer = await side.search(c, q)
            right = side.search_ok(answer, q)
            if right and o.cold_s != o.cold_s:
                o.cold_s = time.monotonic() - start
                o.cold_stand_in = not side.final(answer)
                keep(f"name search {q['query']} (first correct, {o.cold_s:.2f} s)", answer)
            if right and side.final(answer):
                o.cold_final_s = time.monotonic() - start
                if o.cold_stand_in:
                    keep(f"name search {q['query']} (the server's own, {o.cold_final_s:.2f} s)", answer)
                break
            # A refused question will not become right by asking again.
            if time.monotonic() - start > COLD_LIMIT_S or answer.startswith("invalid arguments"):
                keep(f"name search {q['query']} (never correct from the server)", answer)
                o.errors.append("name search never correct" if o.cold_s != o.cold_s else "the server's own name search never correct")
                break
            await asyncio.sleep(0.05)
        times = []
        for _ in range(WARM_ASKS + 1):
            t = time.monotonic()
            out, o.refs_count = await side.references(c, corpus.references)
            times.append(time.monotonic() - t)
        keep("references", out)
        o.warm_refs_s = statistics.median(times[1:])
        await asyncio.sleep(think_s)
        t = time.monotonic()
        out, sites = await side.breaking(c, corpus.breaking, root)
        o.break_s = time.monotonic() - t
        keep("breaking edit", out)
        o.break_found = len(truth & sites)
        # The breaking edit may have moved the renamed symbol's line.
        rename = {**corpus.rename, "line": line_of(root, corpus.rename["file"], corpus.rename["needle"])}
        await asyncio.sleep(think_s)
        t = time.monotonic()
        out = await side.rename(c, rename)
        o.rename_s = time.monotonic() - t
        keep("rename", out)
        o.rename_tree = snapshot(root)
        procs = tree(me)
        o.processes = len(procs)
        o.rss_kib = sum(rss_kib(p) for p in procs)
    answers.close()
    # What the rename broke that the breaking edit had not: the checker over the tree it left
    # (same-line edits, so the sites compare), once the server is gone.
    o.rename_broke = len(checker_sites(corpus, root) - broken)
    return o


# ---------------------------------------------------------------- the table


def ratio(a: float, b: float) -> str:
    if not (a == a and b == b) or b == 0:
        return "n/a"
    return f"{a / b:.2f}×"


def span(values: list, fmt) -> str:
    values = [v for v in values if v == v]
    if not values:
        return "failed"
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def table(results: dict) -> str:
    """results[corpus] = (ours outcomes, serena outcomes), one of each per run."""
    secs = lambda v: f"{v:.2f} s"  # noqa: E731
    rows = [
        ("cold start → first correct name search", "cold_s", secs),
        ("cold start → the server's own correct name search", "cold_final_s", secs),
        ("warm references (median of 7)", "warm_refs_s", lambda v: f"{v * 1000:.0f} ms"),
        ("breaking edit → broken callers known", "break_s", secs),
        ("rename", "rename_s", secs),
        ("RSS of the server's process tree", "rss_kib", lambda v: f"{v / 1024:.0f} MiB"),
        ("tools/list size", "tools_list_bytes", lambda v: f"{v / 1000:.1f} KB"),
    ]
    names = list(results)
    out = ["| operation | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for label, key, fmt in rows:
        cells = []
        for name in names:
            ours, theirs = results[name]
            ratios = [getattr(a, key) / getattr(b, key) for a, b in zip(ours, theirs) if getattr(b, key)]
            r = span(ratios, lambda v: f"{v:.2f}×")
            detail = f"{span([getattr(a, key) for a in ours], fmt)} vs {span([getattr(b, key) for b in theirs], fmt)}"
            if key == "cold_s":
                stand_in = sum(a.cold_stand_in for a in ours)
                if stand_in:
                    detail += f"; ours read from the files' declarations in {stand_in} of {len(ours)}"
            if key == "break_s":
                detail += (
                    f"; found {span([a.break_found for a in ours], str)} vs "
                    f"{span([b.break_found for b in theirs], str)} of {ours[0].break_truth}"
                )
            if key == "rename_s":
                same = all(a.rename_tree == b.rename_tree for a, b in zip(ours, theirs))
                detail += "; same tree" if same else "; TREES DIFFER"
                detail += (
                    f"; new checker errors after it {span([a.rename_broke for a in ours], str)} vs "
                    f"{span([b.rename_broke for b in theirs], str)}"
                )
            if key == "rss_kib":
                detail += f"; {span([a.processes for a in ours], str)} vs {span([b.processes for b in theirs], str)} processes"
            cells.append(f"{r} ({detail})")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--serena", required=True)
    ap.add_argument("--python313-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sdist", action="append", default=[], metavar="NAME=TAR", help="a Python corpus's sdist")
    ap.add_argument("--crate", action="append", default=[], metavar="NAME=DIR", help="a Rust corpus's fetched crate")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--think-s", type=float, default=THINK_S, help="pause before the breaking edit and the rename")
    ap.add_argument("--only", default="", help="comma-separated corpus names")
    a = ap.parse_args()
    scratch = os.path.join(a.work, "trees")
    log_dir = os.path.join(a.work, "logs")
    os.makedirs(scratch, exist_ok=True)
    os.makedirs(log_dir, exist_ok=True)
    sources = dict(s.split("=", 1) for s in a.sdist + a.crate)
    builders = {
        "click": lambda: click_corpus(sources["click"], scratch),
        "requests": lambda: requests_corpus(sources["requests"], scratch),
        "django": lambda: django_corpus(sources["django"], scratch),
        "ripgrep": lambda: ripgrep_corpus(sources["ripgrep"], scratch),
        "cargo-ws": lambda: cargo_corpus(scratch),
    }
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in builders]
    if unknown:
        raise SystemExit(f"bench peer: no corpus named {', '.join(unknown)} (there are {', '.join(builders)})")
    missing = [n for n in (only or builders) if n != "cargo-ws" and n not in sources]
    if missing:
        raise SystemExit(f"bench peer: no sources given for {', '.join(missing)} (--sdist NAME=TAR, --crate NAME=DIR)")
    corpora = [build() for name, build in builders.items() if not only or name in only]
    sides = [Ours(a.ours), Serena(a.serena, a.python313_dir)]
    results = {}
    failed = False
    for corpus in corpora:
        truth, broken = truth_of_breaking(corpus, scratch)
        print(f"bench peer: {corpus.name}: the checker reports {len(truth)} new error site(s) after the breaking edit: "
              + ", ".join(f"{f}:{n}" for f, n in sorted(truth)[:12]) + (", …" if len(truth) > 12 else ""), file=sys.stderr)
        per = {s.name: [] for s in sides}
        for run in range(a.runs):
            order = sides if run % 2 == 0 else sides[::-1]
            for side in order:
                o = await run_side(side, corpus, scratch, run, truth, broken, log_dir, a.think_s)
                per[side.name].append(o)
                print(f"bench peer: {corpus.name} run {run + 1} {side.name}: cold {o.cold_s:.2f} s"
                      + (f" (declarations read from the files; the server's own {o.cold_final_s:.2f} s)" if o.cold_stand_in else "")
                      + f", refs {o.warm_refs_s * 1000:.0f} ms "
                      f"({o.refs_count}), break {o.break_s:.2f} s ({o.break_found}/{o.break_truth}), rename {o.rename_s:.2f} s "
                      f"({o.rename_broke} new checker errors), "
                      f"rss {o.rss_kib // 1024} MiB in {o.processes} processes" + (f"; {o.errors}" if o.errors else ""),
                      file=sys.stderr)
                failed |= bool(o.errors)
        results[corpus.name] = (per["agent-tools"], per["Serena"])
    print(
        f"ours / Serena's, lower is better; {a.runs} runs, order alternating, {a.think_s:g} s between the "
        f"references, the breaking edit and the rename; answers and logs in {log_dir}"
    )
    print(table(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
