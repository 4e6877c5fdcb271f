"""Workspace trust and the child environment, end to end through a real MCP client.

The fixture is a small repository that looks like a real project (a Python package with
tests, a Rust crate with a build script) but plants programs of its own: an
`agent-tools.toml` naming a worker, a server, an interpreter and environment; a
`node_modules/.bin/pyright-langserver`; a `.venv/bin/python`; a `debugpy.py`; a `build.rs`.
Each planted program leaves a marker file when it runs (and records its environment).

Untrusted (the default): none of them runs, and the answers say what was skipped and that
`--trust` enables it. Trusted (`--trust`): they are used. A secret in the server's
environment reaches no language server, kernel, debuggee, build script or worker unless the
user's own configuration names it.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import mcp_session, run_cli, text

pytestmark = pytest.mark.anyio

SECRET_NAME = "AGENT_TOOLS_TEST_SECRET_TOKEN"
SECRET_VALUE = "s3cr3t-value-that-must-not-leak"
DESC = "check what the kernel sees"

PACKAGE = '''"""Inventory helpers."""


def restock(count: int, extra: int) -> int:
    """How many items after a delivery."""
    return count + extra
'''

TESTS = '''from inventory.core import restock


def test_restock():
    assert restock(2, 3) == 5
'''


def executable(path, body):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)


def real(program):
    found = shutil.which(program)
    return found and os.path.realpath(found)


def rustup_which(tool):
    """The real toolchain binary behind a rustup proxy, asked from outside any project."""
    if shutil.which("rustup") is None:
        return None
    out = subprocess.run(["rustup", "which", tool], cwd="/", capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def planted_repo(root, markers):
    """Writes the fixture repository under `root`; every planted program appends its name
    and environment to a file in `markers` (outside the repository) when it runs."""
    (root / "pyproject.toml").write_text('[project]\nname = "inventory"\nversion = "0.1.0"\n')
    (root / "inventory").mkdir()
    (root / "inventory" / "__init__.py").write_text("")
    (root / "inventory" / "core.py").write_text(PACKAGE)
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(TESTS)
    (root / "app.py").write_text(
        f"import os\nprint('debuggee secret=' + str(os.environ.get({SECRET_NAME!r})))\n"
    )
    (root / "Cargo.toml").write_text('[package]\nname = "inventory-native"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src").mkdir()
    (root / "src" / "lib.rs").write_text("pub fn restock(a: u32, b: u32) -> u32 {\n    a + b\n}\n")
    (root / "build.rs").write_text(
        "fn main() {\n"
        f"    let env: Vec<String> = std::env::vars().map(|(k, v)| format!(\"{{k}}={{v}}\")).collect();\n"
        f"    std::fs::write({json.dumps(str(markers / 'build-rs'))}, env.join(\"\\n\")).unwrap();\n"
        "}\n"
    )
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}, "include": ["web"]}\n')
    (root / "web").mkdir()
    (root / "web" / "stock.ts").write_text("export function restock(a: number, b: number): number {\n  return a + b;\n}\n")
    typescript = root / "node_modules" / "typescript"
    (typescript / "lib").mkdir(parents=True)
    (typescript / "package.json").write_text('{"name": "typescript", "version": "5.4.5"}\n')
    (typescript / "lib" / "tsserver.js").write_text(
        f"require('fs').writeFileSync({json.dumps(str(markers / 'workspace-tsserver'))}, 'ran');\nprocess.exit(1);\n"
    )
    record = lambda name: f'env > "{markers}/{name}"\n'
    pyright = real("pyright-langserver") or "/nonexistent/pyright-langserver"
    python = os.path.realpath(sys.executable)
    executable(root / "node_modules" / ".bin" / "pyright-langserver", f'#!/bin/sh\n{record("node-pyright")}exec "{pyright}" "$@"\n')
    executable(root / ".venv" / "bin" / "python", f'#!/bin/sh\n{record("venv-python")}exec "{python}" "$@"\n')
    (root / "debugpy.py").write_text(f"import os\nopen({str(markers / 'debugpy-py')!r}, 'w').write('imported')\n")
    executable(
        root / "tools" / "worker.sh",
        f'#!/bin/sh\n{record("worker")}printf "brief: %s\\n" "$1"\n',
    )
    # A toolchain file naming the repository's own folder as the toolchain: the rustup
    # proxies (cargo, rust-analyzer) would run these.
    tools = {t: rustup_which(t) for t in ["cargo", "rustc", "rust-analyzer"]}
    if all(tools.values()):
        for name, real_path in tools.items():
            executable(root / "toolchain" / "bin" / name, f'#!/bin/sh\n{record("toolchain-" + name)}exec "{real_path}" "$@"\n')
        (root / "rust-toolchain.toml").write_text(f'[toolchain]\npath = {json.dumps(str(root / "toolchain"))}\n')
    (root / "agent-tools.toml").write_text(
        f"""
[lsp]
request_timeout_ms = 30000

[lsp.servers.python]
command = ["./node_modules/.bin/pyright-langserver", "--stdio"]

[eval]
python = ".venv/bin/python"

[vibe.fast]
command = ["sh", "tools/worker.sh", "{{brief}}"]
env = {{ INJECTED = "from-the-repository" }}
"""
    )


@pytest.fixture
def repo(tmp_path, monkeypatch):
    # `cargo xtask test` runs under rustup's cargo, which sets RUSTUP_TOOLCHAIN for its
    # children; a user's server does not inherit it, and it would hide the repository's
    # rust-toolchain.toml that this test plants.
    monkeypatch.delenv("RUSTUP_TOOLCHAIN", raising=False)
    root = tmp_path / "repo"
    markers = tmp_path / "markers"
    root.mkdir()
    markers.mkdir()
    planted_repo(root, markers)
    config_home = tmp_path / "config-home"
    (config_home / "agent-tools").mkdir(parents=True)
    env = {SECRET_NAME: SECRET_VALUE, "XDG_CONFIG_HOME": str(config_home)}
    return root, markers, env, config_home / "agent-tools" / "config.toml"


def ran(markers):
    return sorted(p.name for p in markers.iterdir())


def require(program):
    if shutil.which(program) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{program} is not on PATH")
        pytest.skip(f"{program} is not on PATH")


async def test_untrusted_runs_none_of_the_planted_programs(repo):
    require("pyright-langserver")
    root, markers, env, _ = repo
    async with mcp_session(root, args=["--approve", "auto"], env=env) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        # The repository's worker command was ignored: no tier is left, vibe is off.
        assert not {"vibe_spawn", "vibe_list"} & set(tools), set(tools)
        # A read tool that starts a process is not read-only in MCP's sense.
        assert tools["lsp"].annotations.open_world_hint is True
        assert not tools["lsp"].annotations.read_only_hint

        r = await c.call_tool("lsp", {"action": "hover", "file": "tests/test_core.py", "line": 1, "symbol": "restock"})
        assert not r.is_error, text(r)
        assert "How many items" in text(r), text(r)
        r = await c.call_tool("lsp", {"action": "status"})
        status = text(r)
        assert "untrusted workspace" in status and "--trust" in status, status
        assert "node_modules/.bin" in status, status

        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "*"})
        out = text(r)
        assert "the project's build was not run" in out and "cargo check" in out, out

        if shutil.which("typescript-language-server"):
            # The TypeScript outside the project answers, not node_modules/typescript.
            r = await c.call_tool("lsp", {"action": "symbols", "file": "web/stock.ts"})
            assert not r.is_error and "restock" in text(r), text(r)
        if shutil.which("rust-analyzer") and (root / "rust-toolchain.toml").exists():
            # rust-analyzer runs from the user's toolchain, without build scripts.
            r = await c.call_tool("lsp", {"action": "symbols", "file": "src/lib.rs"})
            assert not r.is_error and "restock" in text(r), text(r)

        r = await c.call_tool("eval", {"code": f"import os, sys\n(sys.executable, os.environ.get({SECRET_NAME!r}))", "description": DESC})
        assert not r.is_error, text(r)
        assert ".venv" not in text(r) and "None" in text(r), text(r)

        r = await c.call_tool("debug", {"operation": "adapters"})
        assert not r.is_error, text(r)
    assert ran(markers) == [], ran(markers)

    out = run_cli("doctor", "--root", str(root), check=False)
    doctor = out.stdout + out.stderr
    assert "[trust]" in doctor and "untrusted workspace" in doctor, doctor
    assert "lsp.servers.python.command" in doctor and "vibe.fast.command" in doctor, doctor
    assert ran(markers) == [], ran(markers)


async def test_trusted_runs_use_the_projects_programs_without_our_secrets(repo):
    require("pyright-langserver")
    require("cargo")
    root, markers, env, _ = repo
    async with mcp_session(root, args=["--trust"], env=env) as c:
        r = await c.call_tool("lsp", {"action": "hover", "file": "tests/test_core.py", "line": 1, "symbol": "restock"})
        assert not r.is_error, text(r)
        r = await c.call_tool("eval", {"code": f"import os, sys\n(sys.executable, os.environ.get({SECRET_NAME!r}))", "description": DESC})
        assert not r.is_error and "None" in text(r), text(r)
        r = await c.call_tool("lsp", {"action": "diagnostics", "file": "*"})
        assert "untrusted" not in text(r), text(r)
        # The brief is one argument: printed by the worker, never run by a shell.
        r = await c.call_tool("vibe_spawn", {"brief": "$(touch pwned)", "label": "w"})
        assert not r.is_error, text(r)
        r = await c.call_tool("vibe_wait", {"worker_id": "w1", "timeout_seconds": 60})
        assert r.structured_content["status"] == "done", text(r)
        assert r.structured_content["result"] == "brief: $(touch pwned)", text(r)
    assert not (root / "pwned").exists()
    expected = {"node-pyright", "venv-python", "build-rs", "worker"}
    if (root / "rust-toolchain.toml").exists():
        expected.add("toolchain-cargo")
    assert expected <= set(ran(markers)), ran(markers)
    for name in ["node-pyright", "venv-python", "build-rs", "worker"]:
        seen = (markers / name).read_text()
        assert SECRET_VALUE not in seen, f"{name} saw the secret"
        assert "PATH=" in seen, name
    assert "INJECTED=from-the-repository" in (markers / "worker").read_text()
    assert not (markers / "debugpy-py").exists()


@pytest.mark.skipif(shutil.which("debugpy") is None and os.environ.get("CI") != "true", reason="debugpy not installed")
async def test_a_debuggee_gets_no_secret_and_the_planted_debugpy_is_not_imported(repo):
    root, markers, env, _ = repo
    async with mcp_session(root, env=env) as c:
        r = await c.call_tool("debug", {"operation": "launch", "program": "app.py"})
        if r.structured_content and r.structured_content.get("state") == "stopped":
            r = await c.call_tool("debug", {"operation": "continue"})
        out = text(r)
        assert "debuggee secret=None" in out, out
    assert ran(markers) == [], ran(markers)


async def test_the_users_config_trusts_roots_and_passes_named_secrets_to_workers(repo):
    root, markers, env, user_config = repo
    user_config.write_text(
        f'[trust]\nroots = [{json.dumps(str(root.parent))}]\n\n[env]\nworkers = ["{SECRET_NAME}"]\n'
    )
    async with mcp_session(root, env=env) as c:
        r = await c.call_tool("vibe_spawn", {"brief": "hello", "label": "w"})
        assert not r.is_error, text(r)
        r = await c.call_tool("vibe_wait", {"worker_id": "w1", "timeout_seconds": 60})
        assert r.structured_content["status"] == "done", text(r)
        r = await c.call_tool("eval", {"code": f"import os\nprint(os.environ.get({SECRET_NAME!r}))", "description": DESC})
        assert text(r).strip() == "None", text(r)
    # Named for workers: the worker has it, the kernel did not.
    assert f"{SECRET_NAME}={SECRET_VALUE}" in (markers / "worker").read_text()
    out = run_cli("doctor", "--root", str(root), check=False)
    # run_cli does not pass our XDG_CONFIG_HOME: the same root is untrusted there.
    assert "untrusted workspace" in out.stdout, out.stdout
