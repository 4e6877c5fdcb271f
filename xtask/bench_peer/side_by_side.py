"""agent-tools and Serena side by side, through one MCP client (the official Python SDK).

Both servers run over stdio on fresh copies of the same sources, one at a time, the order
alternating between runs. For each corpus and side it measures:

- cold start -> first correct definition: from spawning the server to the first answer that
  names the definition's file and line (asked again until it does);
- warm references: the median of 7 asks once the first has answered;
- breaking edit -> broken callers known: the edit itself, plus (for Serena, which does not
  report diagnostics on write) its references and the diagnostics of every referencing
  file; the sites found are held against the project's own checker (pyright's command
  line, `cargo check --workspace --tests`) run before and after the same edit;
- rename: the call, whether the tree it leaves is the same as the other side's, and how many
  errors the project's checker reports in that tree that it did not after the breaking edit
  (a rename that leaves a use behind breaks it);
- RSS of the server's process tree at the end of the run, and the size of tools/list.

The corpora: click's and requests' sdists (pyright on `src` and `tests`) and a Cargo
workspace written here (`cargo check`).

Usage: side_by_side.py --ours BIN --serena BIN --python313-dir DIR --work DIR
[--sdist NAME=TAR ...] [--runs N] [--only NAME,...] (run by `cargo xtask bench peer`, which
installs Serena and downloads the sdists of the corpora asked for).
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
import tarfile
import time
from dataclasses import dataclass, field

from mcp import Client, StdioServerParameters

WARM_ASKS = 7
# How long the first correct definition may take before the side counts as failed.
COLD_LIMIT_S = 180.0
# The pause before the breaking edit and before the rename, on both sides: an agent reads
# each answer before its next call (a model's turn takes seconds), and work a server goes on
# with behind an answer is done by then. `--think-s 0` asks back to back.
THINK_S = 2.0


@dataclass
class Corpus:
    """A project and the operations asked of both sides on it (lines 1-based)."""

    name: str
    root: str  # pristine tree, copied fresh for every side and run
    definition: dict  # file, line, symbol, want_file, want_line
    references: dict  # file, line, symbol, name_path
    breaking: dict  # file, old, new, symbol, name_path
    rename: dict  # file, needle (the text of its line), symbol, name_path, new_name
    checker: list  # argv of the project's own checker, run in the tree
    parse_checker: object  # checker stdout -> set of (file, line) with errors


@dataclass
class Outcome:
    """What one side did on one corpus in one run."""

    cold_s: float = float("nan")
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


def line_of(root: str, rel: str, needle: str) -> int:
    """The 1-based line of the first line of `rel` containing `needle`."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if needle in line:
                return n
    raise SystemExit(f"bench peer: `{needle}` is not in {rel}")


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


def pyright_errors(out: str) -> set:
    data = json.loads(out)
    return {
        (os.path.relpath(d["file"]), d["range"]["start"]["line"] + 1)
        for d in data.get("generalDiagnostics", [])
        if d.get("severity") == "error"
    }


def cargo_errors(out: str) -> set:
    sites = set()
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        m = msg.get("message") if msg.get("reason") == "compiler-message" else None
        if not m or m.get("level") != "error":
            continue
        for span in m.get("spans", []):
            if span.get("is_primary"):
                sites.add((span["file_name"], span["line_start"]))
    return sites


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


SITE = re.compile(r"([\w./-]+\.(?:py|rs)):(\d+)")


class Ours:
    name = "agent-tools"

    def __init__(self, binary: str):
        self.binary = binary

    def params(self, root: str, log) -> StdioServerParameters:
        return StdioServerParameters(
            command="sh",
            args=["-c", 'exec "$0" mcp --root "$1" --surface full 2>>"$2"', self.binary, root, log],
            env=dict(os.environ),
        )

    async def definition(self, c, d):
        r = await c.call_tool(
            "lsp", {"action": "definition", "file": d["file"], "line": d["line"], "symbol": d["symbol"], "occurrence": 1}
        )
        return text_of(r)

    def definition_ok(self, answer: str, d) -> bool:
        return f"{d['want_file']}:{d['want_line']}:" in answer

    async def references(self, c, r):
        res = await c.call_tool("lsp", {"action": "references", "file": r["file"], "line": r["line"], "symbol": r["symbol"]})
        out = text_of(res)
        count = re.match(r"(\d+) reference", out)
        return out, int(count.group(1)) if count else 0

    async def breaking(self, c, b, root):
        r = await c.call_tool("edit", {"path": b["file"], "old_string": b["old"], "new_string": b["new"]})
        out = text_of(r)
        return out, {(f, int(n)) for f, n in SITE.findall(out)}

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
            env={**os.environ, "SERENA_USAGE_REPORTING": "false", "PATH": f"{self.path_prefix}:{os.environ['PATH']}"},
        )

    async def definition(self, c, d):
        regex = re.escape(d["context"]).replace(re.escape(d["symbol"]), f"({re.escape(d['symbol'])})", 1)
        r = await c.call_tool("find_declaration", {"relative_path": d["file"], "regex": regex})
        return text_of(r)

    def definition_ok(self, answer: str, d) -> bool:
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
        d = corpus.definition
        while True:
            answer = await side.definition(c, d)
            if side.definition_ok(answer, d):
                o.cold_s = time.monotonic() - start
                keep("definition", answer)
                break
            # A refused question will not become right by asking again.
            if time.monotonic() - start > COLD_LIMIT_S or answer.startswith("invalid arguments"):
                keep("definition (never correct)", answer)
                o.errors.append("definition never correct")
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


# ---------------------------------------------------------------- corpora


def unpacked(sdist: str, scratch: str, name: str) -> str:
    """The pristine tree of an sdist (its one top folder), unpacked once."""
    dest = os.path.join(scratch, f"{name}-src")
    if not os.path.isdir(dest):
        shutil.rmtree(dest + ".tmp", ignore_errors=True)
        with tarfile.open(sdist) as t:
            t.extractall(dest + ".tmp", filter="data")
        (inner,) = os.listdir(dest + ".tmp")
        os.rename(os.path.join(dest + ".tmp", inner), dest)
        os.rmdir(dest + ".tmp")
    return dest


def click_corpus(sdist: str, scratch: str) -> Corpus:
    dest = unpacked(sdist, scratch, "click")
    utils, core = "src/click/utils.py", "src/click/core.py"
    return Corpus(
        name="click",
        root=dest,
        definition={
            "file": core,
            "line": line_of(dest, core, "cmd_name = make_str(args[0])"),
            "symbol": "make_str",
            "context": "cmd_name = make_str(args[0])",
            "want_file": utils,
            "want_line": line_of(dest, utils, "def make_str("),
        },
        references={
            "file": utils,
            "line": line_of(dest, utils, "def format_filename("),
            "symbol": "format_filename",
            "name_path": "format_filename",
        },
        breaking={
            "file": utils,
            "old": "def make_default_short_help(help: str, max_length: int = 45) -> str:",
            "new": "def make_default_short_help(help: str, max_length: int, style: str) -> str:",
            "symbol": "make_default_short_help",
            "name_path": "make_default_short_help",
        },
        rename={
            "file": utils,
            "needle": "def format_filename(",
            "symbol": "format_filename",
            "name_path": "format_filename",
            "new_name": "display_filename",
        },
        checker=["pyright", "--outputjson", "src", "tests"],
        parse_checker=pyright_errors,
    )


def requests_corpus(sdist: str, scratch: str) -> Corpus:
    dest = unpacked(sdist, scratch, "requests")
    utils, models = "src/requests/utils.py", "src/requests/models.py"
    internal, cookies = "src/requests/_internal_utils.py", "src/requests/cookies.py"
    return Corpus(
        name="requests",
        root=dest,
        definition={
            "file": models,
            "line": line_of(dest, models, "length = super_len(body)"),
            "symbol": "super_len",
            "context": "length = super_len(body)",
            "want_file": utils,
            "want_line": line_of(dest, utils, "def super_len("),
        },
        # Used in adapters.py, sessions.py, models.py and tests/test_utils.py.
        references={
            "file": utils,
            "line": line_of(dest, utils, "def get_auth_from_url("),
            "symbol": "get_auth_from_url",
            "name_path": "get_auth_from_url",
        },
        # Every caller breaks, tests/test_utils.py's through the re-export in requests.utils.
        breaking={
            "file": internal,
            "old": 'def to_native_string(string, encoding="ascii"):',
            "new": 'def to_native_string(string, encoding="ascii", *, errors):',
            "symbol": "to_native_string",
            "name_path": "to_native_string",
        },
        # Called in adapters.py, auth.py and sessions.py, never from the tests.
        rename={
            "file": cookies,
            "needle": "def extract_cookies_to_jar(",
            "symbol": "extract_cookies_to_jar",
            "name_path": "extract_cookies_to_jar",
            "new_name": "store_cookies_in_jar",
        },
        checker=["pyright", "--outputjson", "src", "tests"],
        parse_checker=pyright_errors,
    )


CARGO_WS = {
    "Cargo.toml": '[workspace]\nresolver = "2"\nmembers = ["shapes", "circle", "square", "app"]\n',
    "shapes/Cargo.toml": '[package]\nname = "shapes"\nversion = "0.1.0"\nedition = "2021"\n',
    "shapes/src/lib.rs": (
        "//! Shapes and what every shape can do.\n\n"
        "/// Anything with an area.\npub trait Shape {\n    /// Its area.\n    fn area(&self) -> u32;\n}\n\n"
        "/// The area of `s`, `k` times over.\npub fn scaled(s: &dyn Shape, k: u32) -> u32 {\n    s.area() * k\n}\n"
    ),
    "circle/Cargo.toml": '[package]\nname = "circle"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nshapes = { path = "../shapes" }\n',
    "circle/src/lib.rs": (
        "//! Circles, roughly.\n\nuse shapes::{scaled, Shape};\n\n/// A circle.\npub struct Circle {\n    /// Radius.\n    pub r: u32,\n}\n\n"
        "impl Shape for Circle {\n    fn area(&self) -> u32 {\n        3 * self.r * self.r\n    }\n}\n\n"
        "/// Two circles' worth.\npub fn double(c: &Circle) -> u32 {\n    scaled(c, 2)\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn doubles() {\n        assert_eq!(double(&Circle { r: 1 }), 6);\n    }\n}\n"
    ),
    "square/Cargo.toml": '[package]\nname = "square"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nshapes = { path = "../shapes" }\n',
    "square/src/lib.rs": (
        "//! Squares.\n\nuse shapes::{scaled, Shape};\n\n/// A square.\npub struct Square {\n    /// Side.\n    pub side: u32,\n}\n\n"
        "impl Shape for Square {\n    fn area(&self) -> u32 {\n        self.side * self.side\n    }\n}\n\n"
        "/// Three squares' worth.\npub fn triple(s: &Square) -> u32 {\n    scaled(s, 3)\n}\n"
    ),
    "app/Cargo.toml": (
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
        'shapes = { path = "../shapes" }\ncircle = { path = "../circle" }\nsquare = { path = "../square" }\n'
    ),
    "app/src/main.rs": (
        "//! Prints some areas.\n\nuse circle::Circle;\nuse shapes::{scaled, Shape};\nuse square::Square;\n\n"
        "struct Dot;\n\nimpl Shape for Dot {\n    fn area(&self) -> u32 {\n        0\n    }\n}\n\n"
        "fn main() {\n    let c = Circle { r: 2 };\n    let s = Square { side: 3 };\n"
        '    println!("{} {} {}", scaled(&c, 1), scaled(&s, 1), scaled(&Dot, 4));\n'
        '    println!("{} {}", circle::double(&c), square::triple(&s));\n}\n'
    ),
}


def cargo_corpus(scratch: str) -> Corpus:
    dest = os.path.join(scratch, "cargo-ws-src")
    shutil.rmtree(dest, ignore_errors=True)
    for rel, content in CARGO_WS.items():
        p = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(content)
    lib, main = "shapes/src/lib.rs", "app/src/main.rs"
    return Corpus(
        name="cargo-ws",
        root=dest,
        definition={
            "file": main,
            "line": line_of(dest, main, "scaled(&c, 1)"),
            "symbol": "scaled",
            "context": "scaled(&c, 1)",
            "want_file": lib,
            "want_line": line_of(dest, lib, "pub fn scaled("),
        },
        references={"file": lib, "line": line_of(dest, lib, "pub fn scaled("), "symbol": "scaled", "name_path": "scaled"},
        breaking={
            "file": lib,
            "old": "    fn area(&self) -> u32;\n",
            "new": "    fn area(&self) -> u32;\n    /// Its name.\n    fn name(&self) -> String;\n",
            "symbol": "Shape",
            "name_path": "Shape",
        },
        rename={
            "file": lib,
            "needle": "pub fn scaled(",
            "symbol": "scaled",
            "name_path": "scaled",
            "new_name": "times",
        },
        checker=["cargo", "check", "--workspace", "--tests", "--keep-going", "--offline", "--message-format=json"],
        parse_checker=cargo_errors,
    )


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
        ("cold start → first correct definition", "cold_s", secs),
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
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--think-s", type=float, default=THINK_S, help="pause before the breaking edit and the rename")
    ap.add_argument("--only", default="", help="comma-separated corpus names")
    a = ap.parse_args()
    scratch = os.path.join(a.work, "trees")
    log_dir = os.path.join(a.work, "logs")
    os.makedirs(scratch, exist_ok=True)
    os.makedirs(log_dir, exist_ok=True)
    sdists = dict(s.split("=", 1) for s in a.sdist)
    builders = {
        "click": lambda: click_corpus(sdists["click"], scratch),
        "requests": lambda: requests_corpus(sdists["requests"], scratch),
        "cargo-ws": lambda: cargo_corpus(scratch),
    }
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in builders]
    if unknown:
        raise SystemExit(f"bench peer: no corpus named {', '.join(unknown)} (there are {', '.join(builders)})")
    missing = [n for n in (only or builders) if n in ("click", "requests") and n not in sdists]
    if missing:
        raise SystemExit(f"bench peer: no sdist given for {', '.join(missing)} (--sdist NAME=TAR)")
    corpora = [build() for name, build in builders.items() if not only or name in only]
    sides = [Ours(a.ours), Serena(a.serena, a.python313_dir)]
    results = {}
    failed = False
    for corpus in corpora:
        truth, broken = truth_of_breaking(corpus, scratch)
        print(f"bench peer: {corpus.name}: the checker reports {len(truth)} new error site(s) after the breaking edit: "
              + ", ".join(f"{f}:{n}" for f, n in sorted(truth)), file=sys.stderr)
        per = {s.name: [] for s in sides}
        for run in range(a.runs):
            order = sides if run % 2 == 0 else sides[::-1]
            for side in order:
                o = await run_side(side, corpus, scratch, run, truth, broken, log_dir, a.think_s)
                per[side.name].append(o)
                print(f"bench peer: {corpus.name} run {run + 1} {side.name}: cold {o.cold_s:.2f} s, refs {o.warm_refs_s * 1000:.0f} ms "
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
