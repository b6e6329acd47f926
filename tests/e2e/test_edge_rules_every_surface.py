"""Edge rules that every network surface applies alike, each checked on REST, MCP and gRPC of
one running ``ameide serve`` (``edge/`` holds each rule once)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import governance_pb2_grpc as gov_grpc
from server.serve import Endpoints
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
