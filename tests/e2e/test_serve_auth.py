"""`agent-tools serve` authorization: a static token, OAuth 2.1 access tokens (JWT) checked
against a JWKS file or a JWKS served over HTTPS, scopes choosing the surface, sessions bound
to the credential that opened them."""

import base64
import contextlib
import json
import os
import subprocess
import threading
import time

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import agent_tools_bin, text
from serve_support import ISSUER, MCP_HEADERS, client, post_init, serve, workspace

pytestmark = pytest.mark.anyio


# --- authorization ----------------------------------------------------------------------


def b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class Issuer:
    """A signing key of a test authorization server and its JWKS file."""

    def __init__(self, tmp_path):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pub = self.key.public_key().public_numbers()
        self.jwks = tmp_path / "jwks.json"
        self.jwks.write_text(
            json.dumps({"keys": [{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig", "n": b64(pub.n), "e": b64(pub.e)}]})
        )

    def token(self, resource, scope="agent-tools:full", exp_in=300, aud=None, key=None, **extra):
        claims = {"iss": ISSUER, "sub": "agent-1", "aud": aud or resource, "exp": int(time.time()) + exp_in, **extra}
        if scope is not None:
            claims["scope"] = scope
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": "k1"})


@contextlib.contextmanager
def oauth_server(tmp_path):
    issuer = Issuer(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text("a-static-token-of-enough-length\n")
    root = workspace(tmp_path)
    with serve(
        "--root", str(root), "--token-file", str(token_file),
        "--jwks-file", str(issuer.jwks), "--issuer", ISSUER, "--resource", "http://127.0.0.1/mcp",
    ) as srv:
        yield srv, issuer, "http://127.0.0.1/mcp"



async def test_bad_tokens_are_refused_with_401_and_a_reason(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        cases = {
            None: "no access token",
            "not-a-jwt": "neither this server's token nor a JWT",
            issuer.token(resource, exp_in=-3600): "expired",
            issuer.token(resource, aud="https://elsewhere.test/mcp"): "audience must be http://127.0.0.1/mcp",
            issuer.token(resource, key=issuer.other): "signature",
            issuer.token(resource, iss="https://rogue.test"): "another authorization server",
        }
        for token, reason in cases.items():
            r = await post_init(srv, token)
            assert r.status_code == 401, (token, r.status_code, r.text)
            assert reason in r.json()["error_description"], (token, r.text)
            challenge = r.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert 'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"' in challenge
        r = await post_init(srv, issuer.token(resource, scope="email"))
        assert r.status_code == 403 and "insufficient_scope" in r.headers["www-authenticate"]
        async with httpx2.AsyncClient(timeout=10) as http:
            meta = (await http.get(srv.url("/.well-known/oauth-protected-resource/mcp"))).json()
        assert meta["resource"] == resource
        assert meta["authorization_servers"] == [ISSUER]
        assert "agent-tools:read-only" in meta["scopes_supported"]


async def test_scopes_choose_the_surface(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        async with client(srv.url(), issuer.token(resource, scope="openid agent-tools:read-only")) as c:
            names = {t.name for t in (await c.list_tools()).tools}
        assert "read" in names and "ast_grep" in names
        assert not names & {"write", "edit", "ast_edit", "eval", "debug"}, names
        async with client(srv.url(), issuer.token(resource, scope="agent-tools:full")) as c:
            names = {t.name for t in (await c.list_tools()).tools}
        assert {"write", "eval"} <= names
        async with client(srv.url(), "a-static-token-of-enough-length") as c:
            r = await c.call_tool("write", {"path": "w.txt", "content": "w\n"})
            assert not r.is_error, text(r)


async def test_a_session_answers_only_to_the_credential_that_opened_it(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        r = await post_init(srv, "a-static-token-of-enough-length")
        assert r.status_code == 200, r.text
        session = r.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        other = issuer.token(resource)
        async with httpx2.AsyncClient(timeout=10) as http:
            headers = {**MCP_HEADERS, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
            r = await http.post(srv.url(), json=listing, headers={**headers, "Authorization": f"Bearer {other}"})
            assert r.status_code == 404, r.text
            r = await http.post(srv.url(), json=listing, headers=headers)
            assert r.status_code == 401, r.text
            owner = {**headers, "Authorization": "Bearer a-static-token-of-enough-length"}
            r = await http.delete(srv.url(), headers=owner)
            assert r.status_code == 204, r.text
            r = await http.post(srv.url(), json=listing, headers=owner)
            assert r.status_code == 404, r.text


async def test_a_rotated_jwks_file_is_picked_up_without_a_restart(tmp_path):
    with oauth_server(tmp_path) as (srv, issuer, resource):
        new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pub = new_key.public_key().public_numbers()
        token = jwt.encode(
            {"iss": ISSUER, "sub": "agent-2", "aud": resource, "exp": int(time.time()) + 300, "scope": "agent-tools:plan"},
            new_key,
            algorithm="RS256",
            headers={"kid": "k2"},
        )
        r = await post_init(srv, token)
        assert r.status_code == 401 and "`k2`" in r.json()["error_description"], r.text
        issuer.jwks.write_text(
            json.dumps({"keys": [{"kty": "RSA", "kid": "k2", "alg": "RS256", "n": b64(pub.n), "e": b64(pub.e)}]})
        )
        os.utime(issuer.jwks, (time.time() + 5, time.time() + 5))
        r = await post_init(srv, token)
        assert r.status_code == 200, r.text
        # The retired key no longer verifies.
        r = await post_init(srv, issuer.token(resource))
        assert r.status_code == 401 and "`k1`" in r.json()["error_description"], r.text


# --- JWKS by URL ------------------------------------------------------------------------------


def tls_files(tmp_path):
    """A private CA and a certificate for 127.0.0.1 it signed, as PEM files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent-tools test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    pem = lambda c: c.public_bytes(serialization.Encoding.PEM)
    (tmp_path / "ca.pem").write_bytes(pem(ca))
    (tmp_path / "server.pem").write_bytes(pem(cert))
    (tmp_path / "server.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key"


@contextlib.contextmanager
def jwks_https_server(tmp_path, jwks):
    """Serves `jwks["body"]` over HTTPS with `Cache-Control: max-age=3600`, counting GETs."""
    import http.server
    import ssl

    ca, cert, key = tls_files(tmp_path)
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            body = json.dumps(jwks["body"]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "public, max-age=3600")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}/keys/jwks.json", ca, hits
    finally:
        httpd.shutdown()


def rsa_jwk(key, kid):
    pub = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "alg": "RS256", "n": b64(pub.n), "e": b64(pub.e)}


async def test_a_jwks_url_is_cached_refetched_for_a_new_key_and_its_ca_trusted(tmp_path):
    resource = "http://127.0.0.1/mcp"
    k1 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    k2 = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def token(key, kid):
        claims = {"iss": ISSUER, "sub": "agent", "aud": resource, "exp": int(time.time()) + 300, "scope": "agent-tools:full"}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})

    jwks = {"body": {"keys": [rsa_jwk(k1, "k1")]}}
    with jwks_https_server(tmp_path, jwks) as (url, ca, hits):
        common = ["--root", str(workspace(tmp_path)), "--jwks-url", url, "--issuer", ISSUER, "--resource", resource]
        # The test's CA is not one of the public roots: without --jwks-ca-file, no start.
        r = subprocess.run([agent_tools_bin(), "serve", "--http", "127.0.0.1:0", *common], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "--jwks-url" in r.stderr and "TLS" in r.stderr, r.stderr
        hits.clear()
        with serve(*common, "--jwks-ca-file", str(ca), "--jwks-min-refresh", "3") as srv:
            assert hits == ["/keys/jwks.json"], hits  # fetched once at start
            for _ in range(3):
                assert (await post_init(srv, token(k1, "k1"))).status_code == 200
            assert len(hits) == 1, hits  # served from the cache (max-age=3600)
            jwks["body"] = {"keys": [rsa_jwk(k2, "k2")]}
            await anyio.sleep(3.2)
            # An unknown key id sends the server back to the URL once the interval allows.
            r = await post_init(srv, token(k2, "k2"))
            assert r.status_code == 200, r.text
            assert len(hits) == 2, hits
            # Made-up key ids right after do not make it fetch again.
            for kid in ("k7", "k8", "k9"):
                r = await post_init(srv, token(k2, kid))
                assert r.status_code == 401 and f"`{kid}`" in r.json()["error_description"], r.text
            r = await post_init(srv, token(k1, "k1"))
            assert r.status_code == 401 and "`k1`" in r.json()["error_description"], r.text
            assert len(hits) == 2, hits
            async with client(srv.url(), token(k2, "k2")) as c:
                assert "write" in {t.name for t in (await c.list_tools()).tools}
