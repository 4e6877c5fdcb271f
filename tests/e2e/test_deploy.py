"""The deployment recipes in `deploy/`, checked as far as this machine can: the systemd unit
by `systemd-analyze verify`, the Containerfile's instructions, the Kubernetes manifests'
shape — and every command line they hold by starting the real binary with it."""

import os
import re
import shlex
import shutil
import subprocess
import threading

import pytest

from conftest import REPO, agent_tools_bin

DEPLOY = REPO / "deploy"


def require(module_or_program):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{module_or_program} is missing")
    pytest.skip(f"{module_or_program} is missing")


def starts_serving(args, tmp_path):
    """Runs `agent-tools serve ARGS` with the address, workspace and token made local, and
    returns what it printed once it served (it is stopped then)."""
    token = tmp_path / "token"
    token.write_text("a-static-token-of-enough-length\n")
    (tmp_path / "ws").mkdir(exist_ok=True)
    local = []
    it = iter(args)
    for a in it:
        if a == "--http":
            local += [a, "127.0.0.1:0"]
            next(it)
        elif a == "--root":
            local += [a, str(tmp_path / "ws")]
            next(it)
        elif a == "--token-file":
            local += [a, str(token)]
            next(it)
        else:
            local.append(a)
    proc = subprocess.Popen([agent_tools_bin(), "serve", *local], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines, found = [], threading.Event()

    def drain():
        for line in proc.stderr:
            lines.append(line)
            if "serving" in line:
                found.set()
        found.set()

    threading.Thread(target=drain, daemon=True).start()
    found.wait(60)
    proc.terminate()
    assert proc.wait(30) == 0, "".join(lines)
    assert any("serving" in ln for ln in lines), f"{local} did not start: {''.join(lines)}"
    return "".join(lines)


def test_the_systemd_unit_verifies_and_its_command_line_serves(tmp_path):
    unit = (DEPLOY / "systemd" / "agent-tools.service").read_text()
    exec_start = next(ln for ln in unit.splitlines() if ln.startswith("ExecStart="))
    argv = shlex.split(exec_start.removeprefix("ExecStart="))
    assert argv[:2] == ["/usr/local/bin/agent-tools", "serve"], argv
    for hardening in ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "CapabilityBoundingSet=",
                      "SystemCallFilter=@system-service", "ProtectHome=yes"]:
        assert f"\n{hardening}\n" in unit, hardening
    stop = int(re.search(r"\nTimeoutStopSec=(\d+)", unit).group(1))
    grace = int(argv[argv.index("--grace") + 1])
    assert stop > grace, "systemd would kill the drain"
    if shutil.which("systemd-analyze") is None:
        require("systemd-analyze")
    local = tmp_path / "agent-tools.service"
    local.write_text(unit.replace("/usr/local/bin/agent-tools", agent_tools_bin()))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(local)], capture_output=True, text=True, timeout=60)
    # verify exits 0 even for unknown keys; it says so on stderr.
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr
    out = starts_serving(argv[2:], tmp_path)
    assert out.lstrip().startswith("{"), out  # --log-format json


INSTRUCTIONS = {"FROM", "ARG", "ENV", "RUN", "COPY", "ADD", "WORKDIR", "USER", "EXPOSE", "ENTRYPOINT", "CMD",
                "STOPSIGNAL", "LABEL", "HEALTHCHECK", "VOLUME", "SHELL", "ONBUILD"}


def containerfile_instructions(text):
    """(instruction, arguments) per logical line: comments dropped, continuations joined."""
    logical, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        word, _, rest = current.strip().partition(" ")
        logical.append((word, rest.strip()))
        current = ""
    assert not current, "a continuation runs off the end"
    return logical


def test_the_containerfile_is_well_formed_and_its_command_line_serves(tmp_path):
    import json

    steps = containerfile_instructions((DEPLOY / "container" / "Containerfile").read_text())
    unknown = [w for w, _ in steps if w not in INSTRUCTIONS]
    assert not unknown, unknown
    first_non_arg = next(w for w, _ in steps if w != "ARG")
    assert first_non_arg == "FROM"
    stages = [rest for w, rest in steps if w == "FROM"]
    assert len(stages) == 2 and stages[0].endswith(" AS build"), stages
    copied = [rest for w, rest in steps if w == "COPY" and "--from=build" in rest]
    assert copied == ["--from=build /agent-tools /usr/local/bin/agent-tools"], copied
    entrypoint = json.loads(dict(steps)["ENTRYPOINT"])
    cmd = json.loads(dict(steps)["CMD"])
    assert entrypoint == ["agent-tools", "serve"], entrypoint
    user = dict(steps)["USER"]
    assert user not in ("0", "root"), user
    # Listening beyond loopback needs the credential the command line names.
    assert cmd[cmd.index("--http") + 1].startswith("0.0.0.0:") and "--token-file" in cmd, cmd
    starts_serving(cmd, tmp_path)


def test_the_agent_sandbox_manifests_describe_a_ready_pod_per_session(tmp_path):
    try:
        import yaml
    except ImportError:
        require("PyYAML")
    docs = {}
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["apiVersion"] == "extensions.agents.x-k8s.io/v1alpha1", path
            docs[doc["kind"]] = doc
    assert set(docs) == {"SandboxTemplate", "SandboxWarmPool", "SandboxClaim"}, set(docs)
    template = docs["SandboxTemplate"]
    name = template["metadata"]["name"]
    assert docs["SandboxWarmPool"]["spec"]["sandboxTemplateRef"]["name"] == name
    assert docs["SandboxWarmPool"]["spec"]["replicas"] >= 1
    assert docs["SandboxClaim"]["spec"]["sandboxTemplateRef"]["name"] == name
    pod = template["spec"]["podTemplate"]["spec"]
    (container,) = pod["containers"]
    args = container["args"]
    port = container["ports"][0]
    assert args[args.index("--http") + 1] == f"0.0.0.0:{port['containerPort']}", args
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port["name"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    assert pod["terminationGracePeriodSeconds"] > int(args[args.index("--grace") + 1])
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"] for v in pod["volumes"]}
    assert set(mounts) <= volumes and mounts["workspace"] == args[args.index("--root") + 1], mounts
    token_dir = os.path.dirname(args[args.index("--token-file") + 1])
    assert mounts["token"] == token_dir, (mounts, token_dir)
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    starts_serving(args, tmp_path)
