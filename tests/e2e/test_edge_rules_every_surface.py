"""Edge rules that every network surface applies alike, each checked on REST, MCP and gRPC of
one running ``ameide serve`` (``edge/`` holds each rule once)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import governance_pb2_grpc as gov_grpc
from domain.errors import InvalidArgument
from mcp_adapter.http import create_http_app
from server.grpc.server import create_grpc_server
from server.serve import Endpoints, ServeConfig
from tests.conftest import World
from tests.e2e.serve_harness import serving

MCP_PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def no_auth(world: World) -> Iterator[Endpoints]:
    """``ameide serve --no-auth`` on loopback: a call without a token acts as the admin."""
    with serving(world, require_auth=False) as (_, endpoints):
        yield endpoints


def _rest(endpoints: Endpoints, headers: dict[str, str]) -> int:
    return httpx.get(f"{endpoints.rest}/whoami", headers=headers).status_code


def _mcp(endpoints: Endpoints, headers: dict[str, str]) -> int:
    return httpx.post(endpoints.mcp, json=MCP_PING, headers={**MCP_HEADERS, **headers}).status_code


def _grpc(endpoints: Endpoints, world: World, headers: dict[str, str]) -> grpc.StatusCode:
    metadata = [(k.lower(), v) for k, v in headers.items()]
    with grpc.insecure_channel(endpoints.grpc) as channel:
        stub = gov_grpc.GovernanceServiceStub(channel)
        try:
            stub.ListBaselines(
                gov.ListBaselinesRequest(repository_id=world.repo), metadata=metadata, timeout=10
            )
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


@pytest.mark.parametrize("authorization", ["Basic dXNlcjpwYXNz", "Bearer", "amt_no_scheme"])
def test_without_auth_an_authorization_that_is_not_a_bearer_is_refused_on_every_surface(
    no_auth: Endpoints, world: World, authorization: str
) -> None:
    """A request that meant to authenticate is never taken for the local principal: REST used
    to serve an ``Authorization: Basic …`` request as the local admin while MCP and gRPC
    refused it."""
    sent = {"Authorization": authorization}
    assert _rest(no_auth, sent) == 401
    assert _mcp(no_auth, sent) == 401
    assert _grpc(no_auth, world, sent) is grpc.StatusCode.UNAUTHENTICATED
    # without the header each surface acts as the local principal
    assert _rest(no_auth, {}) == 200
    assert _mcp(no_auth, {}) == 200
    assert _grpc(no_auth, world, {}) is grpc.StatusCode.OK


def test_an_open_bind_without_auth_is_refused_alike_by_every_surface(world: World) -> None:
    """One rule (``edge.network.refuse_open_bind``): the same error type and words whether
    ``serve`` or the gRPC or MCP server alone is asked to listen to the network unprotected."""
    settings = world.app.settings
    attempts = {
        "serve": lambda: ServeConfig(host="0.0.0.0", require_auth=False).check_exposure(),
        "gRPC": lambda: create_grpc_server(
            settings, world.svc, host="0.0.0.0", port=0, require_auth=False
        ),
        "MCP": lambda: create_http_app(
            world.svc, settings=settings, require_auth=False, host="0.0.0.0"
        ),
    }
    for surface, attempt in attempts.items():
        with pytest.raises(InvalidArgument) as refused:
            attempt()
        assert refused.value.details == {"field": "host"}, surface
        assert "on 0.0.0.0 without authentication" in str(refused.value), surface


ORIGINS = {
    "http://app.example:8080": True,
    "http://app.example": True,
    "HTTP://APP.EXAMPLE:8080": True,
    "http://app.example:8080x": False,
    "http://app.example:": False,
    "http://app.example.evil:8080": False,
    "http://app.example:8080@evil.example": False,
}


def test_an_origin_pattern_with_any_port_means_the_same_on_rest_and_mcp(world: World) -> None:
    """One rule (``edge.network.origin_matches``): REST's guard let ``http://app.example:8080x``
    through a ``http://app.example:*`` pattern that MCP's refused."""
    with serving(world, allowed_origins=("http://app.example:*",)) as (_, endpoints):
        health = endpoints.rest.removesuffix("/v1") + "/healthz"
        for origin, allowed in ORIGINS.items():
            rest = httpx.get(health, headers={"Origin": origin})
            mcp = httpx.post(
                endpoints.mcp, json=MCP_PING, headers={**MCP_HEADERS, "Origin": origin}
            )
            assert (rest.status_code != 403) is allowed, (origin, rest.text)
            assert (mcp.status_code != 403) is allowed, (origin, mcp.text)
