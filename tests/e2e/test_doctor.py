"""`agent-tools doctor` on a real project: what concerns the workspace's own languages leads,
resources for other languages are folded into one line per family, and `--all` lists every
entry."""

from conftest import run_cli


def python_project(root):
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "shapes.py").write_text("def area(w: int, h: int) -> int:\n    return w * h\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_shapes.py").write_text("from pkg.shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n")
    (root / "pyproject.toml").write_text('[project]\nname = "shapes"\nversion = "0.1.0"\n')
    (root / "README.md").write_text("# shapes\n")


def entry_lines(out):
    """The lines after the workspace summary: the entries and the folded lines."""
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("this workspace:"))
    return lines[start], lines[start + 1 :]


def test_doctor_leads_with_the_workspaces_languages(tmp_path):
    python_project(tmp_path)
    out = run_cli("doctor", "--root", str(tmp_path)).stdout
    summary, entries = entry_lines(out)
    assert summary == "this workspace: python (3 files)", out
    # The python server is the first entry; every entry about a language is about python.
    assert entries[0].startswith("[lsp]") and " python: " in entries[0], out
    for family in ["lsp", "ast"]:
        full = [l for l in entries if l.startswith(f"[{family}] ok") or l.startswith(f"[{family}] missing")]
        assert all("python" in l or "workspace trust" in l for l in full), out
    # The other grammars are one line, naming each; so are the other servers.
    ast = [l for l in entries if l.startswith("[ast]")]
    assert len(ast) == 2, out
    assert "grammar: python" in ast[0], out
    assert ast[1].startswith("[ast] 20 grammars") and "rust" in ast[1] and "yaml" in ast[1], out
    lsp_folded = [l for l in entries if l.startswith("[lsp] ") and " servers, " in l]
    assert len(lsp_folded) == 1 and "rust" in lsp_folded[0] and "go" in lsp_folded[0], out
    # Entries about no language in particular are still shown in full.
    assert any(l.startswith("[fs] ok") for l in entries), out
    assert any(l.startswith("[trust]") for l in entries), out


def test_doctor_all_lists_every_entry(tmp_path):
    python_project(tmp_path)
    folded = run_cli("doctor", "--root", str(tmp_path)).stdout
    full = run_cli("doctor", "--all", "--root", str(tmp_path)).stdout
    _, entries = entry_lines(full)
    grammars = [l for l in entries if l.startswith("[ast] ok      grammar: ")]
    assert len(grammars) == 21, full
    servers = {l.split(":")[0].split()[-1] for l in entries if l.startswith("[lsp] ") and "workspace trust" not in l}
    assert {"python", "rust", "c", "go", "typescript", "bash"} <= servers, full
    assert not any("doctor --all" in l for l in entries), full
    assert len(full.splitlines()) > len(folded.splitlines()) + 20, (folded, full)


def test_doctor_on_a_c_project_leads_with_clangd_and_lldb(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "src" / "util.cpp").write_text("int twice(int x) { return 2 * x; }\n")
    out = run_cli("doctor", "--root", str(tmp_path)).stdout
    summary, entries = entry_lines(out)
    assert summary == "this workspace: c (1 file), cpp (1 file)", out
    assert entries[0].startswith("[lsp]") and " c: clangd" in entries[0], out
    full = [l for l in entries if l.startswith("[debug] ok") or l.startswith("[debug] missing")]
    assert len(full) == 1 and "lldb" in full[0], out
    assert any(l.startswith("[debug] ") and "debugpy" in l and " adapters, " in l for l in entries), out
