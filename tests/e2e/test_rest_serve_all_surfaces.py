"""``ameide serve``'s server: REST, MCP over HTTP and gRPC in one process with shared metrics,
refusing an open bind without authentication and stopping gracefully."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator

import anyio
import grpc
import httpx
import pytest

from domain.errors import InvalidArgument
from server.grpc.server import SERVICE_NAMES
from server.serve import AmeideServer, Endpoints, ServeConfig
from tests.conftest import World
from tests.e2e.mcp_harness import ROOT, http_session, structured
from tests.e2e.serve_harness import serving


@pytest.fixture
def served(world: World) -> Iterator[tuple[AmeideServer, Endpoints]]:
    with serving(world, grace_seconds=2) as running:
        yield running


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_an_open_bind_without_authentication_is_refused(world: World, host: str) -> None:
    config = ServeConfig(host=host, http_port=0, grpc_port=0, require_auth=False)
    with pytest.raises(InvalidArgument, match="without authentication"):
        AmeideServer(world.svc, world.app.settings, config)


def test_all_surfaces_answer_on_one_process_and_share_metrics(
    world: World, served: tuple[AmeideServer, Endpoints]
) -> None:
    _, endpoints = served
    token = world.svc.tokens.create(world.admin, world.reader.principal_id)["token"]
    base = endpoints.rest.removesuffix("/v1")

    assert httpx.get(f"{base}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{base}/readyz").status_code == 200
    published = httpx.get(
        f"{endpoints.rest}/repositories/{world.repo}/published",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert published.status_code == 200

    async def mcp_health() -> None:
        async with http_session(endpoints.mcp, token) as client:
            health = structured(await client.call_tool("memory.health", {}))
            assert health["principal"] == world.reader.principal_id

    anyio.run(mcp_health)

    with grpc.insecure_channel(endpoints.grpc) as channel:
        method = channel.unary_unary(f"/{SERVICE_NAMES[0]}/GetElement")
        with pytest.raises(grpc.RpcError) as refused:
            method(b"", timeout=10)
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED

    metrics = httpx.get(endpoints.metrics, headers={"Authorization": f"Bearer {token}"}).text
    assert 'operation="published",status="OK",surface="rest"' in metrics
    assert 'operation="memory.health",status="OK",surface="mcp"' in metrics
    assert 'operation="GetElement",status="UNAUTHENTICATED",surface="grpc"' in metrics
    assert "ameide_index_lag" in metrics


def test_an_mcp_request_without_a_token_is_refused_by_the_composed_server(
    served: tuple[AmeideServer, Endpoints],
) -> None:
    _, endpoints = served
    response = httpx.post(endpoints.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    metadata_url = endpoints.mcp.removesuffix("/mcp") + "/.well-known/oauth-protected-resource"
    assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    metadata = httpx.get(metadata_url)  # routed to MCP, not to REST's 404
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == endpoints.mcp


LAUNCH_CLI = """
import sys
from cli.commands import serve as commands_serve
from cli.main import app
if "serve" not in {c.name for c in app.registered_commands}:
    commands_serve.register(app)  # until cli/main.py registers it
sys.argv[0] = "ameide"
app()
"""


def test_ameide_serve_refuses_an_open_bind_without_authentication(world: World) -> None:
    home = str(world.app.settings.home)
    run = subprocess.run(
        [sys.executable, "-c", LAUNCH_CLI, "--home", home, "--as", world.admin.principal_id,
         "serve", "--host", "0.0.0.0", "--no-auth"],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert "refusing to serve on 0.0.0.0 without authentication" in run.stderr
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_ameide_serve_drains_grpc_before_a_signal_ends_it(world: World, sig: int) -> None:
    home = str(world.app.settings.home)
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH_CLI, "--home", home, "--as", world.admin.principal_id,
         "--json", "serve", "--port", "0", "--grpc-port", "0", "--grace", "2", "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline()]  # printed once every surface listens
        while lines[-1] and lines[-1].rstrip() != "}":
            lines.append(proc.stdout.readline())
        endpoints = json.loads("".join(lines))
        assert httpx.get(endpoints["rest"].removesuffix("/v1") + "/healthz").status_code == 200
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert "stopped: HTTP and gRPC drained" in stderr
    assert "Traceback" not in stderr
    # a finished drain is a clean stop, with one worker as with several
    assert proc.returncode == 0, stderr


@pytest.mark.parametrize("which", ["http", "grpc"])
def test_a_port_in_use_is_a_clear_error_before_anything_listens(world: World, which: str) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = ServeConfig(
            host="127.0.0.1",
            http_port=port if which == "http" else 0,
            grpc_port=port if which == "grpc" else 0,
        )
        with pytest.raises(InvalidArgument, match=f"cannot listen.* 127.0.0.1:{port}") as refused:
            AmeideServer(world.svc, world.app.settings, config)
    assert refused.value.details["field"] == ("port" if which == "http" else "grpc_port")
