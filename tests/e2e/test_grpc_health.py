"""``grpc.health.v1.Health`` as a probe sees it (issue 14): every service and the server answer
SERVING while the service is ready and NOT_SERVING while it is not (the keyword index gone from
disk), with no token; an unknown service is NOT_FOUND, and reflection lists the health service."""

from __future__ import annotations

import shutil

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from server.grpc.server import SERVICE_NAMES
from tests.conftest import World
from tests.e2e.grpc_harness import serve

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def _check(channel: grpc.Channel, service: str) -> int:
    probe = health_pb2_grpc.HealthStub(channel)  # no token: probes carry none
    status: int = probe.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status
    return status


def test_every_service_is_serving_while_the_service_is_ready(world: World) -> None:
    with serve(world) as client:
        for name in ("", *SERVICE_NAMES):
            assert _check(client.channel, name) == SERVING, name
        with pytest.raises(grpc.RpcError) as unknown:
            _check(client.channel, "no.such.Service")
        assert unknown.value.code() is grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]


def test_list_answers_every_service_with_its_status(world: World) -> None:
    # issue 30: List was the base class's NotImplementedError, an INTERNAL on the wire
    with serve(world) as client:
        probe = health_pb2_grpc.HealthStub(client.channel)  # no token: probes carry none
        listed = probe.List(health_pb2.HealthListRequest(), timeout=10).statuses
        every = ("", *SERVICE_NAMES)
        assert {name: listed[name].status for name in listed} == dict.fromkeys(every, SERVING)


def test_not_serving_while_the_index_is_gone_then_serving_again(world: World) -> None:
    """Readiness is the index being on disk and able to catch up (lag alone does not make a
    server unready: it is caught up on the next write, read or status)."""
    world.canonical("Indexed", "# Indexed\n\nsomething to index\n")
    upkeep = world.app.status_upkeep
    assert upkeep is not None
    assert upkeep.wait_idle()  # not deleted in the middle of the background batch
    with serve(world) as client:
        assert _check(client.channel, SERVICE_NAMES[0]) == SERVING
        shutil.rmtree(world.app.settings.index_dir)  # deleted underneath the running server
        assert _check(client.channel, SERVICE_NAMES[0]) == NOT_SERVING
        assert _check(client.channel, "") == NOT_SERVING
        world.svc.index.index_status(world.admin)  # `ameide index status` rebuilds it
        assert _check(client.channel, SERVICE_NAMES[0]) == SERVING


def test_reflection_lists_the_health_service(world: World) -> None:
    with serve(world) as client:
        stub = reflection_pb2_grpc.ServerReflectionStub(client.channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        response = next(iter(stub.ServerReflectionInfo(iter([request]), timeout=10)))
        names = {s.name for s in response.list_services_response.service}
        assert "grpc.health.v1.Health" in names
