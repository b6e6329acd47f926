"""A gRPC server on port 0 over a test ``World`` and a client built from the generated stubs.

Used by ``tests/e2e/test_grpc_*.py``: ``serve(world)`` starts a real server on loopback with a
bearer token per principal, and ``GrpcClient`` calls it as a chosen principal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from ameide_proto.v1 import governance_pb2_grpc, knowledge_pb2_grpc, projection_pb2_grpc
from server.grpc import convert as grpc_convert
from server.grpc.server import create_grpc_server
from service.authz import Caller
from tests.conftest import World

Who = Caller | str | None


@dataclass
class GrpcFailure:
    """What a failed call returned: status, message, and the taxonomy's code and details."""

    status: grpc.StatusCode
    message: str
    code: str | None
    details: dict[str, Any] | None


@dataclass
class GrpcClient:
    """Stubs on one channel plus a token per principal."""

    world: World
    channel: grpc.Channel
    tokens: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(self.channel)
        self.governance = governance_pb2_grpc.GovernanceServiceStub(self.channel)
        self.projection = projection_pb2_grpc.ProjectionServiceStub(self.channel)

    def metadata(self, who: Who, **extra: str) -> list[tuple[str, str]]:
        """``authorization`` for ``who`` (a Caller, a principal, or None for no token) and
        ``x-ameide-*`` entries from ``extra`` (``on_behalf_of="…"`` → ``x-ameide-on-behalf-of``)."""
        out = []
        if who is not None:
            principal = who.principal_id if isinstance(who, Caller) else who
            token = self.tokens.get(principal, principal)  # an unknown principal: a raw token
            out.append(("authorization", f"Bearer {token}"))
        out += [(f"x-ameide-{k.replace('_', '-')}", v) for k, v in extra.items()]
        return out

    def call(self, method: Any, request: Any, who: Who, **extra: str) -> Any:
        """Call an RPC as ``who``; the response message."""
        return method(request, metadata=self.metadata(who, **extra), timeout=30)

    def fail(self, method: Any, request: Any, who: Who, **extra: str) -> GrpcFailure:
        """Call an RPC that must fail; what it returned."""
        with pytest.raises(grpc.RpcError) as info:
            self.call(method, request, who, **extra)
        err: Any = info.value
        trailing = dict(err.trailing_metadata() or ())
        details = trailing.get("x-ameide-error-details")
        return GrpcFailure(
            err.code(),
            err.details(),
            trailing.get("x-ameide-error-code"),
            json.loads(details) if details is not None else None,
        )


def mint_tokens(world: World) -> dict[str, str]:
    """A bearer token for every principal of the world (minted by the global admin)."""
    svc = world.svc
    callers = [world.admin, world.curator, world.agent, world.publisher, world.reader]
    callers += [world.auditor, world.stranger]
    return {
        c.principal_id: svc.tokens.create(world.admin, c.principal_id)["token"] for c in callers
    }


@contextmanager
def serve(world: World, *, require_auth: bool = True) -> Iterator[GrpcClient]:
    """A started server over ``world``'s service and a client on a fresh channel.

    While it runs, response mapping is strict: a key the service returns that the response
    message lacks fails the call instead of being dropped.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grpc_convert, "STRICT", True)
        server, port = create_grpc_server(
            world.app, world.svc, host="127.0.0.1", port=0, require_auth=require_auth
        )
        server.start()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        try:
            yield GrpcClient(world, channel, mint_tokens(world))
        finally:
            channel.close()
            server.stop(None).wait()
