"""A status call never does the catch-up work inside the request (issue 14): REST ``/readyz`` and
``/v1/index/status``, gRPC ``grpc.health.v1.Health/Check`` and MCP ``memory.health`` report the
index's lag as it is; applying it (which can mean a rebuild, seconds long) is left to the next
write or read, or to a background thread the status call only wakes."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from mcp import Client

from mcp_adapter.server import MemoryMcp
from tests.conftest import World
from tests.e2e.grpc_harness import serve
from tests.e2e.mcp_harness import structured
from tests.e2e.rest_harness import rest_client


@pytest.fixture
def lagging(world: World, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A world whose index is behind by one commit, and a record of every catch-up (and
    background wake-up) asked for from now on."""
    asked: list[str] = []
    indexer: Any = world.app.indexer
    upkeep: Any = world.app.status_upkeep
    assert upkeep.wait_idle()  # the round the world's own writes woke is over
    monkeypatch.setattr(indexer, "catch_up", lambda **_: asked.append("catch_up") or 0)
    monkeypatch.setattr(upkeep, "poke", lambda: asked.append("poke"))
    world.canonical("Lagging", "# Lagging\n\nnot indexed yet\n")  # its wake-up is recorded
    asked.clear()
    assert indexer.status()["pending"] > 0
    return asked


def test_rest_readyz_and_index_status_report_the_lag_without_applying_it(
    world: World, lagging: list[str]
) -> None:
    with rest_client(world) as rest:
        lagging.clear()  # minting the client's tokens (writes) woke the upkeep as writes do
        ready = rest.client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["index"]["pending"] > 0
        status = rest.ok("GET", "/v1/index/status", world.admin)
        assert status["pending"] > 0
        assert status["applied"] == 0
    assert lagging == ["poke"]  # index status wakes the background upkeep; nothing else


def test_grpc_health_check_reads_readiness_without_catching_up(
    world: World, lagging: list[str]
) -> None:
    with serve(world) as client:
        lagging.clear()  # minting the client's tokens (writes) woke the upkeep as writes do
        probe = health_pb2_grpc.HealthStub(client.channel)
        answer = probe.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    assert lagging == []


def test_mcp_health_reports_the_lag_without_catching_up(world: World, lagging: list[str]) -> None:
    server = MemoryMcp(world.svc, lambda ctx: world.reader).server()

    async def main() -> None:
        async with Client(server) as client:
            health = structured(await client.call_tool("memory.health", {}))
            assert health["index"]["pending"] > 0

    anyio.run(main)
    assert lagging == []


def test_the_status_calls_answer_while_a_catch_up_holds_the_index(world: World) -> None:
    """Even while a catch-up or rebuild holds the maintainer's lock, a status call answers
    instead of queueing behind it."""
    indexer: Any = world.app.indexer
    answers: list[Any] = []
    with rest_client(world) as rest:

        def ask() -> None:
            answers.append(rest.client.get("/readyz").status_code)
            answers.append(rest.ok("GET", "/v1/index/status", world.admin)["applied"])
            answers.append(world.svc.index.health()["ready"])

        assert indexer._lock.acquire(timeout=10)  # as a running catch-up holds it
        try:
            asking = threading.Thread(target=ask, daemon=True)
            asking.start()
            asking.join(30)
            assert not asking.is_alive(), "a status call waited for the catch-up"
        finally:
            indexer._lock.release()
    assert answers == [200, 0, True]
