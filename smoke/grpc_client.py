"""A gRPC client built from the generated stubs (``ameide_proto.v1``): the smoke's only grpc and
protobuf import.

Requests are given and responses returned as dicts with the proto field names (which are
docs/product.md's); a failed call becomes a ``SurfaceError`` carrying the taxonomy's code from the
``x-ameide-error-code`` trailing metadata and the gRPC status name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc
from google.protobuf import json_format, message_factory

from ameide_proto.v1 import (
    governance_pb2,
    governance_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
    projection_pb2,
    projection_pb2_grpc,
)
from smoke.surface import SurfaceError

ERROR_CODE_KEY = "x-ameide-error-code"
TIMEOUT_SECONDS = 30.0
_SERVICES: dict[str, tuple[Any, Any]] = {
    "knowledge": (knowledge_pb2, knowledge_pb2_grpc.KnowledgeServiceStub),
    "governance": (governance_pb2, governance_pb2_grpc.GovernanceServiceStub),
    "projection": (projection_pb2, projection_pb2_grpc.ProjectionServiceStub),
}
_SERVICE_NAMES = {
    "knowledge": "KnowledgeService",
    "governance": "GovernanceService",
    "projection": "ProjectionService",
}


def _pruned(value: Any) -> Any:
    """``value`` without None entries (an unset optional field)."""
    if isinstance(value, Mapping):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_pruned(v) for v in value]
    return value


class GrpcClient:
    """One channel to ``target`` (``host:port``, plaintext) and a bearer token per principal."""

    def __init__(self, target: str, tokens: Mapping[str, str]) -> None:
        self.target = target
        self.tokens = tokens
        self.channel = grpc.insecure_channel(target)
        self._stubs = {name: stub(self.channel) for name, (_, stub) in _SERVICES.items()}

    def call(
        self, service: str, method: str, who: str, _for: str | None = None, **payload: Any
    ) -> dict[str, Any]:
        """Call ``service.method`` as ``who`` (on behalf of ``_for``, when given) with a
        request made from ``payload``."""
        module, _ = _SERVICES[service]
        descriptor = module.DESCRIPTOR.services_by_name[_SERVICE_NAMES[service]]
        request_type = message_factory.GetMessageClass(
            descriptor.methods_by_name[method].input_type
        )
        request = json_format.ParseDict(_pruned(payload), request_type())
        metadata = [("authorization", f"Bearer {self.tokens[who]}")]
        if _for is not None:
            metadata.append(("x-ameide-on-behalf-of", _for))
        rpc = getattr(self._stubs[service], method)
        try:
            response = rpc(request, metadata=metadata, timeout=TIMEOUT_SECONDS)
        except grpc.RpcError as exc:
            raise _surface_error(exc) from None
        return json_format.MessageToDict(
            response, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()


def _surface_error(exc: grpc.RpcError) -> SurfaceError:
    status: Any = exc.code() if hasattr(exc, "code") else None
    trailing = dict(exc.trailing_metadata() or ()) if hasattr(exc, "trailing_metadata") else {}
    name = status.name if status is not None else "UNKNOWN"
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return SurfaceError(str(trailing.get(ERROR_CODE_KEY, name)), str(details or name), name)
