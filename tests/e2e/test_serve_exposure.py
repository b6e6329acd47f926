"""``ameide serve`` facing hostile clients: DNS rebinding, idle and half-sent connections, too
many connections, clear-text tokens on the network, and a misleading bind error (issue #16).

Every test runs a real server (uvicorn + gRPC) on a loopback port; request loops are bounded.
"""

from __future__ import annotations

import re
import socket
import ssl
import subprocess
import time
from pathlib import Path

import anyio
import grpc
import httpx
import pytest

from domain.errors import InvalidArgument
from server.serve import AmeideServer, Endpoints, ServeConfig
from tests.conftest import World, make_world
from tests.e2e.mcp_harness import http_session, structured
from tests.e2e.serve_harness import serving

ATTACKER = "attacker.example"


def _port(endpoints: Endpoints) -> int:
    return int(endpoints.rest.rsplit(":", 1)[1].split("/")[0])


# -- DNS rebinding --------------------------------------------------------------------------
def test_a_rebinding_page_cannot_drive_a_no_auth_server(world: World) -> None:
    """The issue's reproduction: with --no-auth, a page on attacker.example resolved to
    127.0.0.1 used to create an admin grant (201) and mint a token. Now 421 on every route."""
    with serving(world, require_auth=False) as (_, endpoints):
        port = _port(endpoints)
        url = f"http://127.0.0.1:{port}"
        hostile = {"Host": f"{ATTACKER}:{port}", "Origin": f"http://{ATTACKER}:{port}"}
        grant = {"principal_id": "user:attacker", "role": "admin", "scope": "*"}
        for method, path, body in [
            ("POST", "/v1/grants", grant),
            ("POST", "/v1/tokens", {"principal_id": "user:attacker"}),
            ("GET", "/metrics", None),
            ("GET", "/openapi.json", None),
            ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        ]:
            refused = httpx.request(method, f"{url}{path}", headers=hostile, json=body)
            assert refused.status_code == 421, (path, refused.text)
            assert refused.json()["error"]["code"] == "MISDIRECTED_REQUEST"
        # the right Host with a foreign Origin: a cross-site page, refused as well
        cross = httpx.post(f"{url}/v1/grants", json=grant, headers={"Origin": f"http://{ATTACKER}"})
        assert cross.status_code == 403
        assert cross.json()["error"]["code"] == "PERMISSION_DENIED"
        assert "user:attacker" not in str(world.svc.admin.list_grants(world.admin, "*"))
        # the local user's own tools still work: no Origin, or a loopback one
        assert httpx.get(f"{url}/healthz").status_code == 200
        same = httpx.get(f"{url}/healthz", headers={"Origin": f"http://localhost:{port}"})
        assert same.status_code == 200
        assert httpx.get(f"http://localhost:{port}/healthz").status_code == 200


def test_allowed_host_names_and_origins_are_configurable(world: World) -> None:
    with serving(
        world, allowed_hosts=("memory.internal",), allowed_origins=("https://app.example",)
    ) as (_, endpoints):
        url = endpoints.rest.removesuffix("/v1")
        assert httpx.get(f"{url}/healthz", headers={"Host": "memory.internal"}).status_code == 200
        other = httpx.get(f"{url}/healthz", headers={"Host": "other.internal"})
        assert other.status_code == 421
        app = httpx.get(f"{url}/healthz", headers={"Origin": "https://app.example"})
        assert app.status_code == 200


# -- /metrics ------------------------------------------------------------------------------
def test_metrics_need_a_token_on_the_served_port(world: World) -> None:
    with serving(world) as (_, endpoints):
        assert httpx.get(endpoints.metrics).status_code == 401
        token = world.svc.tokens.create(world.admin, world.reader.principal_id)["token"]
        scraped = httpx.get(endpoints.metrics, headers={"Authorization": f"Bearer {token}"})
        assert scraped.status_code == 200
        assert world.repo not in scraped.text
    with serving(world, metrics_public=True) as (_, endpoints):
        assert httpx.get(endpoints.metrics).status_code == 200


def _queue(text: str) -> dict[str, float]:
    """``ameide_proposal_queue_size`` series of a scrape: repository (``""`` unlabelled) → n."""
    found = re.findall(
        r'^ameide_proposal_queue_size(?:\{repository="([^"]*)"\})? (\S+)$', text, re.M
    )
    return {repo: float(n) for repo, n in found}


def _propose(w: World, n: int) -> None:
    element, v1 = w.canonical()
    for i in range(n):
        w.svc.curation.propose(
            w.agent, w.repo, body=f"# Testing SOP\n\nRun it {i}.\n", summary=f"edit {i}",
            element_id=element, target_version_id=v1,
        )  # fmt: skip


def test_metrics_count_only_the_proposals_the_token_may_read(world: World) -> None:
    """Two tenants on one server: the proposal queue a token scrapes counts only proposals its
    principal may read — a curator its repository's, an agent its own, a reader none — never
    another tenant's; a global admin counts all; a public scrape without a token, none."""
    other = make_world(world.app)  # another tenant, same database and server
    _propose(world, 2)
    _propose(other, 1)

    def token(principal: str) -> dict[str, str]:
        secret = world.svc.tokens.create(world.admin, principal)["token"]
        return {"Authorization": f"Bearer {secret}"}

    curator, reader = token(world.curator.principal_id), token(world.reader.principal_id)
    other_agent, admin = token(other.agent.principal_id), token(world.admin.principal_id)
    with serving(world, metrics_public=True) as (_, endpoints):
        scrape = lambda headers: httpx.get(endpoints.metrics, headers=headers).text  # noqa: E731
        assert _queue(scrape(curator)) == {"": 2.0}  # not 3: the other tenant's is not counted
        assert _queue(scrape(other_agent)) == {"": 1.0}
        assert _queue(scrape(reader)) == {"": 0.0}  # proposals do not exist for readers
        assert _queue(scrape(admin))[""] >= 3.0  # a global admin: every repository
        anonymous = scrape({})
        assert "ameide_requests_total" in anonymous
        assert "ameide_proposal_queue_size" not in anonymous
    with serving(world, metrics_repository_labels=True) as (_, endpoints):
        scrape = lambda headers: httpx.get(endpoints.metrics, headers=headers).text  # noqa: E731
        assert _queue(scrape(curator)) == {world.repo: 2.0}
        assert _queue(scrape(other_agent)) == {other.repo: 1.0}
        assert _queue(scrape(reader)) == {}
        everything = _queue(scrape(admin))
        assert (everything[world.repo], everything[other.repo]) == (2.0, 1.0)


# -- idle, half-sent and too many connections -------------------------------------------------
def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (EOF or reset)."""
    sock.settimeout(seconds)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_idle_and_half_sent_connections_are_reaped(world: World) -> None:
    with serving(world, header_timeout=0.5, keep_alive=1) as (_, endpoints):
        port = _port(endpoints)
        idle = socket.create_connection(("127.0.0.1", port))
        half = socket.create_connection(("127.0.0.1", port))
        half.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
        started = time.monotonic()
        try:
            assert _closed_within(idle, 5)
            assert _closed_within(half, 5)
            assert time.monotonic() - started < 5
        finally:
            idle.close()
            half.close()
        # a kept-alive connection that has finished its request is closed after keep-alive
        kept = socket.create_connection(("127.0.0.1", port))
        try:
            kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            kept.settimeout(5)
            assert b"200 OK" in kept.recv(4096)
            assert _closed_within(kept, 5)
        finally:
            kept.close()


def test_connections_beyond_the_cap_get_503(world: World) -> None:
    with serving(world, max_connections=3) as (_, endpoints):
        port = _port(endpoints)
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        try:
            time.sleep(0.2)  # the server has accepted them
            extra = socket.create_connection(("127.0.0.1", port))
            extra.settimeout(5)
            answer = extra.recv(4096)
            extra.close()
            assert answer.startswith(b"HTTP/1.1 503")
            assert b'"UNAVAILABLE"' in answer
        finally:
            for sock in held:
                sock.close()
        time.sleep(0.3)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200


# -- TLS and the bind address -----------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls_serves_https_and_grpc(world: World, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with serving(world, tls_cert=str(cert), tls_key=str(key)) as (_, endpoints):
        assert endpoints.rest.startswith("https://")
        context = ssl.create_default_context(cafile=str(cert))
        assert httpx.get(
            endpoints.rest.removesuffix("/v1") + "/healthz", verify=context
        ).json() == {"status": "ok"}
        with pytest.raises(httpx.HTTPError):  # plain HTTP is not answered
            httpx.get(
                endpoints.rest.replace("https://", "http://").removesuffix("/v1") + "/healthz"
            )
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        with grpc.secure_channel(endpoints.grpc, credentials) as channel:
            method = channel.unary_unary("/ameide.memory.v1.KnowledgeService/GetElement")
            with pytest.raises(grpc.RpcError) as refused:
                method(b"", timeout=10)
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED  # TLS worked; no token

        token = world.svc.tokens.create(world.admin, world.reader.principal_id)["token"]

        async def over_tls() -> None:
            import os

            os.environ["SSL_CERT_FILE"] = str(cert)
            try:
                async with http_session(endpoints.mcp, token) as client:
                    health = structured(await client.call_tool("memory.health", {}))
                    assert health["principal"] == world.reader.principal_id
            finally:
                os.environ.pop("SSL_CERT_FILE", None)

        anyio.run(over_tls)


def test_a_non_loopback_address_needs_tls_or_an_explicit_flag(world: World) -> None:
    with pytest.raises(InvalidArgument, match="without TLS"):
        AmeideServer(world.svc, world.app.settings, ServeConfig(host="0.0.0.0", http_port=0))
    with pytest.raises(InvalidArgument, match="go together"):
        ServeConfig(host="127.0.0.1", tls_cert="cert.pem")


def test_bracketed_ipv6_and_foreign_addresses_get_the_right_message(world: World) -> None:
    assert ServeConfig(host="[::1]").host == "::1"
    config = ServeConfig(host="192.0.2.10", http_port=0, grpc_port=0, insecure_http=True)
    with pytest.raises(InvalidArgument, match="--host must be an address") as refused:
        AmeideServer(world.svc, world.app.settings, config)
    assert "--port" not in str(refused.value)
