"""KnowledgeService: elements, versions and relationships over gRPC.

Each RPC parses its request, calls one ``MemoryService`` method as the authenticated caller and
maps the result back; authorization, validation and every rule live in the service.
"""

# ruff: noqa: N802 - RPC method names are the .proto's (CamelCase)

from __future__ import annotations

from typing import Any

from ameide_proto.v1 import common_pb2 as common
from ameide_proto.v1 import knowledge_pb2 as pb
from ameide_proto.v1 import knowledge_pb2_grpc as rpc
from server.grpc.calls import current_caller
from server.grpc.convert import instant, opt, present, struct, to_message
from service.app import MemoryService


class KnowledgeServicer(rpc.KnowledgeServiceServicer):
    """The knowledge RPCs over one service instance."""

    def __init__(self, service: MemoryService) -> None:
        self._svc = service

    def CreateElement(self, request: pb.CreateElementRequest, _: Any) -> pb.CreateElementResponse:
        out = self._svc.elements.create_element(
            current_caller(),
            request.repository_id,
            title=request.title,
            body=request.body,
            metadata=struct(request, "metadata"),
            **present(request, "type_key", "element_kind", "classification"),
        )
        return to_message(pb.CreateElementResponse, out)

    def GetElement(self, request: pb.GetElementRequest, _: Any) -> pb.GetElementResponse:
        out = self._svc.elements.get_element(
            current_caller(),
            request.element_id,
            opt(request, "version_id"),
            instant(request, "as_of"),
        )
        return to_message(pb.GetElementResponse, out)

    def GetVersion(self, request: pb.GetVersionRequest, _: Any) -> pb.GetVersionResponse:
        out = self._svc.reading.get_version(
            current_caller(), request.version_id, instant(request, "as_of")
        )
        return to_message(pb.GetVersionResponse, out)

    def GetElementHistory(
        self, request: pb.GetElementHistoryRequest, _: Any
    ) -> pb.GetElementHistoryResponse:
        out = self._svc.elements.element_history(current_caller(), request.element_id)
        return to_message(pb.GetElementHistoryResponse, out)

    def RetireElement(self, request: pb.RetireElementRequest, _: Any) -> pb.RetireElementResponse:
        out = self._svc.elements.retire_element(
            current_caller(), request.element_id, opt(request, "reason")
        )
        return to_message(pb.RetireElementResponse, out)

    def EraseVersion(self, request: pb.EraseVersionRequest, _: Any) -> common.Version:
        out = self._svc.erasure.erase_version(current_caller(), request.version_id, request.reason)
        return to_message(common.Version, out)

    def AddRelationship(self, request: pb.AddRelationshipRequest, _: Any) -> common.Relationship:
        out = self._svc.elements.add_relationship(
            current_caller(),
            request.source_element_id,
            request.target_element_id,
            kind=request.relationship_kind,
            type_key=request.type_key,
            metadata=struct(request, "metadata"),
        )
        return to_message(common.Relationship, out)

    def RetireRelationship(
        self, request: pb.RetireRelationshipRequest, _: Any
    ) -> common.Relationship:
        out = self._svc.elements.retire_relationship(current_caller(), request.relationship_id)
        return to_message(common.Relationship, out)

    def ListRelationships(
        self, request: pb.ListRelationshipsRequest, _: Any
    ) -> pb.ListRelationshipsResponse:
        out = self._svc.elements.list_relationships(
            current_caller(), request.element_id, instant(request, "as_of")
        )
        return to_message(pb.ListRelationshipsResponse, {"relationships": out})

    def ExpandNeighborhood(
        self, request: pb.ExpandNeighborhoodRequest, _: Any
    ) -> pb.ExpandNeighborhoodResponse:
        out = self._svc.reading.expand(
            current_caller(),
            request.element_id,
            relationship_types=tuple(request.relationship_types),
            as_of=instant(request, "as_of"),
            **present(request, "hops", "max_nodes"),
        )
        return to_message(pb.ExpandNeighborhoodResponse, out)
