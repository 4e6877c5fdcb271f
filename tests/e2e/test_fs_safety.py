"""Data safety of the writing tools through the real binary: concurrent writes are never
lost, files keep their conventions and modes, special files and planted links are refused."""

import asyncio
import os
import stat

import anyio
import pytest

from conftest import mcp_session, text

pytestmark = pytest.mark.anyio

N = 40


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def current_umask() -> int:
    m = os.umask(0o022)
    os.umask(m)
    return m


async def test_forty_concurrent_edits_and_patches_all_land(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("".join(f"line {i}\n" for i in range(N)))
    async with mcp_session(tmp_path) as c:
        results = await asyncio.gather(*[
            c.call_tool("edit", {"path": "f.txt", "old_string": f"line {i}\n", "new_string": f"edited {i}\n"})
            for i in range(N)
        ])
        assert all(not r.is_error for r in results), [text(r) for r in results if r.is_error]
        assert f.read_text() == "".join(f"edited {i}\n" for i in range(N))
        patches = [
            f"*** Begin Patch\n*** Update File: f.txt\n@@\n-edited {i}\n+patched {i}\n*** End Patch\n"
            for i in range(N)
        ]
        results = await asyncio.gather(*[c.call_tool("apply_patch", {"patch": p}) for p in patches])
        assert all(not r.is_error for r in results), [text(r) for r in results if r.is_error]
        assert f.read_text() == "".join(f"patched {i}\n" for i in range(N))
        # A write racing a patch: one order or the other, never the patch on stale content.
        for _ in range(10):
            f.write_text("a\nb\n")
            w, p = await asyncio.gather(
                c.call_tool("write", {"path": "f.txt", "content": "a\nb\nwritten\n"}),
                c.call_tool("apply_patch", {"patch": "*** Begin Patch\n*** Update File: f.txt\n@@\n-b\n+B\n*** End Patch\n"}),
            )
            assert not w.is_error and not p.is_error, (text(w), text(p))
            assert f.read_text() in ("a\nb\nwritten\n", "a\nB\nwritten\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


async def test_write_with_a_stale_hash_is_refused(tmp_path):
    (tmp_path / "f.txt").write_text("v1\n")
    async with mcp_session(tmp_path) as c:
        seen = (await c.call_tool("read", {"path": "f.txt"})).structured_content["sha256"]
        r = await c.call_tool("edit", {"path": "f.txt", "old_string": "v1", "new_string": "v2"})
        assert not r.is_error, text(r)
        r = await c.call_tool("write", {"path": "f.txt", "content": "stale\n", "expected_sha256": seen})
        assert r.is_error and "changed since it was read" in text(r), text(r)
    assert (tmp_path / "f.txt").read_text() == "v2\n"


async def test_line_endings_bom_modes_and_links_are_kept(tmp_path):
    win = tmp_path / "win.txt"
    win.write_bytes("\ufeffone\r\ntwo\r\n".encode())
    exe = tmp_path / "run.sh"
    exe.write_text("#!/bin/sh\necho one\n")
    exe.chmod(0o755)
    (tmp_path / "a.txt").write_text("shared\n")
    os.link(tmp_path / "a.txt", tmp_path / "b.txt")
    ro = tmp_path / "ro.txt"
    ro.write_text("keep\n")
    ro.chmod(0o444)
    async with mcp_session(tmp_path) as c:
        r = await c.call_tool("apply_patch", {"patch": "*** Begin Patch\n*** Update File: win.txt\n@@\n one\n+inserted\n two\n*** End Patch\n"})
        assert not r.is_error, text(r)
        r = await c.call_tool("edit", {"path": "win.txt", "old_string": "one\ninserted", "new_string": "uno\ninserted"})
        assert not r.is_error, text(r)
        r = await c.call_tool("edit", {"path": "run.sh", "old_string": "one", "new_string": "two"})
        assert not r.is_error, text(r)
        r = await c.call_tool("apply_patch", {"patch": "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo two\n+echo three\n*** End Patch\n"})
        assert not r.is_error, text(r)
        r = await c.call_tool("write", {"path": "new.txt", "content": "x\n"})
        assert not r.is_error, text(r)
        r = await c.call_tool("edit", {"path": "a.txt", "old_string": "shared", "new_string": "edited"})
        assert not r.is_error, text(r)
        r = await c.call_tool("edit", {"path": "ro.txt", "old_string": "keep", "new_string": "x"})
        assert r.is_error and "read-only" in text(r), text(r)
    assert win.read_bytes() == "\ufeffuno\r\ninserted\r\ntwo\r\n".encode()
    assert mode(tmp_path / "bin/run.sh") == 0o755
    assert mode(tmp_path / "new.txt") == 0o666 & ~current_umask()
    assert (tmp_path / "b.txt").read_text() == "edited\n"
    assert os.stat(tmp_path / "a.txt").st_ino == os.stat(tmp_path / "b.txt").st_ino
    assert ro.read_text() == "keep\n"


async def test_fifos_and_links_to_the_outside_are_refused(tmp_path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    os.mkfifo(root / "pipe")
    os.symlink(outside / "made-through-link.txt", root / "dangling.txt")
    async with mcp_session(root) as c:
        # A guard against a hang, not a timing assertion: before, these reads never answered.
        with anyio.fail_after(60):
            reads = await asyncio.gather(
                c.call_tool("read", {"path": "pipe"}), c.call_tool("read", {"path": "pipe"})
            )
            for r in reads:
                assert r.is_error and "FIFO" in text(r), text(r)
            r = await c.call_tool("write", {"path": "pipe", "content": "x"})
            assert r.is_error and "FIFO" in text(r), text(r)
        r = await c.call_tool("write", {"path": "dangling.txt", "content": "x"})
        assert r.is_error and "outside" in text(r), text(r)
        r = await c.call_tool("write", {"path": "ok.txt", "content": "still serving\n"})
        assert not r.is_error, text(r)
    assert list(outside.iterdir()) == []
    assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)


async def test_resolve_refuses_a_folder_swapped_for_an_outside_link(tmp_path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "pkg").mkdir(parents=True)
    outside.mkdir()
    src = "dispose(x)\n"
    (root / "pkg" / "a.py").write_text(src)
    async with mcp_session(root) as c:
        r = await c.call_tool("ast_edit", {"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "python"})
        assert not r.is_error, text(r)
        edit_id = r.structured_content["edit_id"]
        (root / "pkg").rename(root / "pkg.old")
        (outside / "a.py").write_text(src)
        os.symlink(outside, root / "pkg")
        r = await c.call_tool("resolve", {"edit_id": edit_id, "action": "accept"})
        assert r.is_error and "pkg/a.py" in text(r) and "Nothing was written" in text(r), text(r)
    assert (outside / "a.py").read_text() == src
    assert (root / "pkg.old" / "a.py").read_text() == src


async def test_an_edit_racing_resolve_accept_is_never_lost(tmp_path):
    """`edit` and `resolve accept` on one file take the same lock: either the accept comes
    first and the edit applies on top, or the edit comes first and the accept is refused."""
    f = tmp_path / "a.py"
    async with mcp_session(tmp_path) as c:
        for _ in range(10):
            f.write_text("dispose(x)\nkeep = 1\n")
            r = await c.call_tool("ast_edit", {"pattern": "dispose($X)", "rewrite": "$X.dispose()", "language": "python"})
            assert not r.is_error, text(r)
            edit_id = r.structured_content["edit_id"]
            edit, accept = await asyncio.gather(
                c.call_tool("edit", {"path": "a.py", "old_string": "keep = 1", "new_string": "keep = 2"}),
                c.call_tool("resolve", {"edit_id": edit_id, "action": "accept"}),
            )
            assert not edit.is_error, text(edit)
            if accept.is_error:
                assert "changed since it was staged" in text(accept), text(accept)
                assert f.read_text() == "dispose(x)\nkeep = 2\n"
            else:
                assert f.read_text() == "x.dispose()\nkeep = 2\n"
