"""`lsp diagnostics "*"` on a C library through a real MCP client: the compile commands the
project declares are compiled syntax-only by the real compiler in a trusted run, and nothing
of the project's build runs in an untrusted one."""

import json
import shutil

import pytest

from conftest import mcp_session, text

pytestmark = pytest.mark.anyio

HEADER = "#ifndef VEC_H\n#define VEC_H\n#include <stddef.h>\ntypedef struct { double *v; size_t n; } vec;\ndouble vec_sum(const vec *a);\nconst char *vec_version(void);\n#endif\n"
SUM_C = '#include "vec.h"\n\ndouble vec_sum(const vec *a) {\n    double s = 0;\n    for (size_t i = 0; i < a->n; i++) s += a->v[i];\n    return s;\n}\n'
VERSION_C = '#include "vec.h"\n\nconst char *vec_version(void) {\n    return VEC_VERSION;\n}\n'
TEST_C = '#include <stdio.h>\n#include "vec.h"\n\nint main(void) {\n    double d[] = {1, 2};\n    vec a = {d, 2};\n    printf("%s %g\\n", vec_version(), vec_sum(&a));\n    return 0;\n}\n'


def c_library(root):
    (root / "include").mkdir()
    (root / "src").mkdir()
    (root / "tests").mkdir()
    (root / "include" / "vec.h").write_text(HEADER)
    (root / "src" / "sum.c").write_text(SUM_C)
    (root / "src" / "version.c").write_text(VERSION_C)
    (root / "tests" / "test_vec.c").write_text(TEST_C)
    flags = ["-std=c11", "-Wall", "-Iinclude"]
    entries = [
        {"directory": str(root), "file": "src/sum.c", "arguments": ["cc", *flags, "-c", "src/sum.c", "-o", "build/sum.o"]},
        {"directory": str(root), "file": "src/version.c", "arguments": ["cc", *flags, '-DVEC_VERSION="2.1"', "-c", "src/version.c", "-o", "build/version.o"]},
        {"directory": str(root), "file": "tests/test_vec.c", "arguments": ["cc", *flags, "-c", "tests/test_vec.c", "-o", "build/test_vec.o"]},
    ]
    (root / "compile_commands.json").write_text(json.dumps(entries))


async def test_a_c_project_is_checked_through_its_compile_commands(tmp_path):
    if shutil.which("cc") is None:
        pytest.skip("cc is not on PATH")
    c_library(tmp_path)
    async with mcp_session(tmp_path, args=["--trust"]) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "*"})
        assert not r.is_error, text(r)
        assert "3 file(s) compiled, 0 finding(s)" in text(r), text(r)
        assert "every compiled file is clean" in text(r), text(r)
        r = await c.call_tool("write", {"path": "src/version.c", "content": VERSION_C.replace("VEC_VERSION;", "VEC_VERSION + missing_offset;")})
        assert not r.is_error, text(r)
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "*"})
        assert not r.is_error, text(r)
        assert "src/version.c:4:26 error" in text(r) and "missing_offset" in text(r), text(r)
    assert not (tmp_path / "build").exists(), "a syntax-only check wrote object files"


async def test_an_untrusted_run_does_not_run_the_projects_compile_commands(tmp_path):
    c_library(tmp_path)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "*"})
        assert r.is_error, text(r)
        assert "untrusted workspace" in text(r) and "compile_commands.json" in text(r), text(r)
