"""The corpora `side_by_side.py` measures both sides on, and the checkers that give the truth.

Each corpus names the operations asked of both sides (lines 1-based, read from the pristine
tree so that a new release of a corpus fails loudly rather than measuring the wrong line):
the name an agent searches for first and where it is declared, a symbol whose references
are asked, a breaking edit, a rename, and the project's own checker (pyright's command line,
`cargo check`) that says which sites the breaking edit broke.

- click 8.1.8 and requests 2.32.5: their sdists from PyPI (pyright on `src` and `tests`);
- Django 5.2.8: its sdist from PyPI (2,814 Python files, 488k lines with its tests; pyright
  on the files that name the symbols edited, since a run over the whole tree takes minutes);
- ripgrep 14.1.1: its crate from crates.io (`cargo check --tests`, its dependencies fetched
  by cargo beforehand);
- cargo-ws: a Cargo workspace written here whose trait other crates implement.
"""

import json
import os
import re
import shutil
import tarfile
from dataclasses import dataclass


@dataclass
class Corpus:
    """A project and the operations asked of both sides on it (lines 1-based)."""

    name: str
    root: str  # pristine tree, copied fresh for every side and run
    search: dict  # query, want_file, want_line: the first question, "where is X defined?"
    references: dict  # file, line, symbol, name_path
    breaking: dict  # file, old, new, symbol, name_path
    rename: dict  # file, needle (the text of its line), symbol, name_path, new_name
    checker: list  # argv of the project's own checker, run in the tree
    parse_checker: object  # checker stdout -> set of (file, line) with errors


def line_of(root: str, rel: str, needle: str) -> int:
    """The 1-based line of the first line of `rel` containing `needle`."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if needle in line:
                return n
    raise SystemExit(f"bench peer: `{needle}` is not in {rel}")


def search_of(root: str, query: str, file: str, needle: str) -> dict:
    return {"query": query, "want_file": file, "want_line": line_of(root, file, needle)}


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


CARGO_CHECK = ["cargo", "check", "--workspace", "--tests", "--keep-going", "--offline", "--message-format=json"]


def files_naming(root: str, folders: list, words: list) -> list:
    """The Python files under `folders` of `root` that contain one of `words` as a word: the
    only files a breaking edit of those names or a rename of them can break."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b")
    found = []
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(".py"):
                    continue
                p = os.path.join(dirpath, name)
                with open(p, encoding="utf-8", errors="replace") as f:
                    if pattern.search(f.read()):
                        found.append(os.path.relpath(p, root))
    return found


# ---------------------------------------------------------------- sources


def unpacked(archive: str, scratch: str, name: str) -> str:
    """The pristine tree of an sdist (its one top folder), unpacked once."""
    dest = os.path.join(scratch, f"{name}-src")
    if not os.path.isdir(dest):
        shutil.rmtree(dest + ".tmp", ignore_errors=True)
        with tarfile.open(archive) as t:
            t.extractall(dest + ".tmp", filter="data")
        (inner,) = os.listdir(dest + ".tmp")
        os.rename(os.path.join(dest + ".tmp", inner), dest)
        os.rmdir(dest + ".tmp")
    return dest


def copied(source: str, scratch: str, name: str) -> str:
    """The pristine tree of a crate cargo fetched, copied once (cargo's checksum file left out)."""
    dest = os.path.join(scratch, f"{name}-src")
    if not os.path.isdir(dest):
        shutil.rmtree(dest + ".tmp", ignore_errors=True)
        shutil.copytree(source, dest + ".tmp", ignore=shutil.ignore_patterns(".cargo-checksum.json", "target"))
        os.rename(dest + ".tmp", dest)
    return dest


# ---------------------------------------------------------------- the corpora


def click_corpus(sdist: str, scratch: str) -> Corpus:
    dest = unpacked(sdist, scratch, "click")
    utils = "src/click/utils.py"
    return Corpus(
        name="click",
        root=dest,
        search=search_of(dest, "make_str", utils, "def make_str("),
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
    utils = "src/requests/utils.py"
    internal, cookies = "src/requests/_internal_utils.py", "src/requests/cookies.py"
    return Corpus(
        name="requests",
        root=dest,
        search=search_of(dest, "super_len", utils, "def super_len("),
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


def django_corpus(sdist: str, scratch: str) -> Corpus:
    dest = unpacked(sdist, scratch, "django")
    http, loading = "django/utils/http.py", "django/utils/module_loading.py"
    timezone, encoding = "django/utils/timezone.py", "django/utils/encoding.py"
    return Corpus(
        name="django",
        root=dest,
        search=search_of(dest, "url_has_allowed_host_and_scheme", http, "def url_has_allowed_host_and_scheme("),
        # Used in 32 modules across django/ (apps, core, db, contrib, template, ...).
        references={
            "file": loading,
            "line": line_of(dest, loading, "def import_string("),
            "symbol": "import_string",
            "name_path": "import_string",
        },
        # Every call breaks: in utils, db, contrib, templatetags and the tests.
        breaking={
            "file": timezone,
            "old": "def is_aware(value):",
            "new": "def is_aware(value, *, strict):",
            "symbol": "is_aware",
            "name_path": "is_aware",
        },
        # Called in 9 modules of django/ and 2 of the tests.
        rename={
            "file": encoding,
            "needle": "def iri_to_uri(",
            "symbol": "iri_to_uri",
            "name_path": "iri_to_uri",
            "new_name": "iri_as_uri",
        },
        checker=["pyright", "--outputjson", *files_naming(dest, ["django", "tests"], ["is_aware", "iri_to_uri"])],
        parse_checker=pyright_errors,
    )


def ripgrep_corpus(crate: str, scratch: str) -> Corpus:
    dest = copied(crate, scratch, "ripgrep")
    flags, util = "crates/core/flags/mod.rs", "tests/util.rs"
    return Corpus(
        name="ripgrep",
        root=dest,
        search=search_of(dest, "search_parallel", "crates/core/main.rs", "fn search_parallel("),
        # Used by three of the integration tests' modules.
        references={"file": util, "line": line_of(dest, util, "pub fn sort_lines("), "symbol": "sort_lines", "name_path": "sort_lines"},
        # A required method on the trait every flag implements (104 impls in flags/defs.rs).
        breaking={
            "file": flags,
            "old": "    fn is_switch(&self) -> bool;\n",
            "new": "    fn is_switch(&self) -> bool;\n    /// Where the flag is listed.\n    fn group(&self) -> u8;\n",
            "symbol": "Flag",
            "name_path": "Flag",
        },
        rename={
            "file": util,
            "needle": "pub fn sort_lines(",
            "symbol": "sort_lines",
            "name_path": "sort_lines",
            "new_name": "sorted_lines",
        },
        checker=CARGO_CHECK,
        parse_checker=cargo_errors,
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
    lib = "shapes/src/lib.rs"
    return Corpus(
        name="cargo-ws",
        root=dest,
        search=search_of(dest, "scaled", lib, "pub fn scaled("),
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
        checker=CARGO_CHECK,
        parse_checker=cargo_errors,
    )
