"""Observability (issue 14): ``ameide_requests_total{status}`` speaks one vocabulary on every
surface — ``OK`` or the error code of the answer — and gRPC access-log lines carry a trace id
(the caller's ``x-trace-id``/``traceparent`` when given, echoed back, else a fresh one)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import anyio
import grpc
import httpx
import pytest

from ameide_proto.v1 import knowledge_pb2 as kno
from ameide_proto.v1 import knowledge_pb2_grpc as kno_rpc
from domain import errors as domain_errors
from edge.errors import Unavailable
from server.serve import AmeideServer, Endpoints
from tests.conftest import World
from tests.e2e.mcp_harness import http_session
from tests.e2e.serve_harness import serving

MISSING = "el_" + "0" * 24
VOCABULARY = {"OK", "INTERNAL", "METHOD_NOT_ALLOWED", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"}
VOCABULARY |= {Unavailable.code} | {
    cls.code
    for cls in vars(domain_errors).values()
    if isinstance(cls, type) and issubclass(cls, domain_errors.AmeideError)
}
_COUNT = re.compile(
    r'^ameide_requests_total\{operation="([^"]*)",status="([^"]*)",surface="(\w+)"\}'
)


@pytest.fixture
def served(world: World) -> Iterator[tuple[AmeideServer, Endpoints]]:
    with serving(world, grace_seconds=2) as running:
        yield running


def _counted(endpoints: Endpoints, token: str) -> set[tuple[str, str, str]]:
    text = httpx.get(endpoints.metrics, headers={"Authorization": f"Bearer {token}"}).text
    return {m.groups() for line in text.splitlines() if (m := _COUNT.match(line))}


def test_every_surface_counts_requests_as_ok_or_the_error_code(
    world: World, served: tuple[AmeideServer, Endpoints]
) -> None:
    _, endpoints = served
    element, _ = world.canonical()
    token = world.svc.tokens.create(world.admin, world.reader.principal_id)["token"]
    bearer = {"Authorization": f"Bearer {token}"}

    assert httpx.get(f"{endpoints.rest}/elements/{element}", headers=bearer).status_code == 200
    assert httpx.get(f"{endpoints.rest}/elements/{MISSING}", headers=bearer).status_code == 404
    assert httpx.get(f"{endpoints.rest}/elements/{element}").status_code == 401

    async def mcp() -> None:
        async with http_session(endpoints.mcp, token) as client:
            assert not (
                await client.call_tool("memory.get_element", {"element_id": element})
            ).is_error
            missing = await client.call_tool("memory.get_element", {"element_id": MISSING})
            assert missing.is_error

    anyio.run(mcp)

    with grpc.insecure_channel(endpoints.grpc) as channel:
        stub = kno_rpc.KnowledgeServiceStub(channel)
        md = [("authorization", f"Bearer {token}")]
        stub.GetElement(kno.GetElementRequest(element_id=element), metadata=md, timeout=10)
        with pytest.raises(grpc.RpcError):
            stub.GetElement(kno.GetElementRequest(element_id=MISSING), metadata=md, timeout=10)

    counted = _counted(endpoints, token)
    assert {status for _, status, _ in counted} <= VOCABULARY, counted
    by_surface = {(surface, status) for _, status, surface in counted}
    for surface in ("rest", "mcp", "grpc"):
        assert {(surface, "OK"), (surface, "NOT_FOUND")} <= by_surface, surface
    assert ("rest", "UNAUTHENTICATED") in by_surface


def _grpc_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "ameide.access"]
    return [line for line in lines if line["surface"] == "grpc"]


def test_grpc_access_log_lines_carry_the_callers_trace_id_or_a_fresh_one(
    world: World, served: tuple[AmeideServer, Endpoints], caplog: pytest.LogCaptureFixture
) -> None:
    _, endpoints = served
    element, _ = world.canonical()
    token = world.svc.tokens.create(world.admin, world.reader.principal_id)["token"]
    caplog.set_level("INFO", logger="ameide.access")
    request = kno.GetElementRequest(element_id=element)
    parent = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"
    with grpc.insecure_channel(endpoints.grpc) as channel:
        stub = kno_rpc.KnowledgeServiceStub(channel)
        md = [("authorization", f"Bearer {token}")]
        _, call = stub.GetElement.with_call(
            request, metadata=[*md, ("x-trace-id", "trace-grpc-1234")], timeout=10
        )
        assert dict(call.initial_metadata())["x-trace-id"] == "trace-grpc-1234"
        stub.GetElement(request, metadata=[*md, ("traceparent", parent)], timeout=10)
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetElement(request, timeout=10)  # no token: logged with a fresh trace id
        fresh = dict(refused.value.initial_metadata())["x-trace-id"]  # type: ignore[attr-defined]

    given, traced, refused_line = _grpc_lines(caplog)[-3:]
    assert (given["trace_id"], given["status"]) == ("trace-grpc-1234", "OK")
    assert traced["trace_id"] == "ab" * 16
    assert refused_line["trace_id"] == fresh
    assert re.fullmatch(r"[0-9a-f]{32}", str(fresh))
    assert refused_line["status"] == "UNAUTHENTICATED"
