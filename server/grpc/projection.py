"""ProjectionService: read contexts, citations, replay, baseline diffs and evaluation over gRPC.

``ReadContextRequest`` mirrors docs/product.md §4 field for field, so the request is handed to the
service as the same JSON object the other surfaces send; the service validates it.
"""

# ruff: noqa: N802 - RPC method names are the .proto's (CamelCase)

from __future__ import annotations

from typing import Any

from ameide_proto.v1 import projection_pb2 as pb
from ameide_proto.v1 import projection_pb2_grpc as rpc
from server.grpc.calls import current_caller
from server.grpc.convert import message_dict, present, to_message
from service.app import MemoryService


class ProjectionServicer(rpc.ProjectionServiceServicer):
    """The projection RPCs over one service instance."""

    def __init__(self, service: MemoryService) -> None:
        self._svc = service

    def GetReadContext(self, request: pb.ReadContextRequest, _: Any) -> pb.ReadContextResponse:
        out = self._svc.reading.read_context(current_caller(), message_dict(request))
        return to_message(pb.ReadContextResponse, out)

    def VerifyCitations(
        self, request: pb.VerifyCitationsRequest, _: Any
    ) -> pb.VerifyCitationsResponse:
        citations = [message_dict(c) for c in request.citations]
        out = self._svc.reading.verify_citations(current_caller(), request.context_id, citations)
        return to_message(pb.VerifyCitationsResponse, out)

    def Replay(self, request: pb.ReplayRequest, _: Any) -> pb.ReplayResponse:
        out = self._svc.reading.replay(
            current_caller(), request.context_id, **present(request, "as_recorded")
        )
        return to_message(pb.ReplayResponse, out)

    def DiffBaselines(self, request: pb.DiffBaselinesRequest, _: Any) -> pb.BaselineDiff:
        out = self._svc.publishing.baseline_diff(
            current_caller(), request.from_baseline_id, request.to_baseline_id
        )
        return to_message(pb.BaselineDiff, out)

    def Evaluate(self, request: pb.EvaluateRequest, _: Any) -> pb.EvaluateResponse:
        out = self._svc.evaluation.evaluate(
            current_caller(),
            request.repository_id,
            request.dataset,
            **present(request, "k", "selector", "include_per_query"),
        )
        return to_message(pb.EvaluateResponse, out)
