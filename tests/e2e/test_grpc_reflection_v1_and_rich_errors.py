"""gRPC tooling's standards (issue 14): server reflection ``grpc.reflection.v1`` beside v1alpha,
and errors in the rich error model — a ``google.rpc.Status`` with an ``ErrorInfo`` whose reason is
our code in ``grpc-status-details-bin`` — beside the ``x-ameide-error-*`` trailers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from google.rpc import error_details_pb2
from grpc_reflection.v1alpha import reflection_pb2
from grpc_status import rpc_status

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import knowledge_pb2 as kno
from server.grpc.server import SERVICE_NAMES
from tests.conftest import World
from tests.e2e.grpc_harness import GrpcClient, serve

V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


@pytest.fixture
def client(world: World) -> Iterator[GrpcClient]:
    with serve(world) as c:
        yield c


def _ask_v1(channel: grpc.Channel, **request: Any) -> Any:
    """One v1 reflection exchange on the v1 method path, with no token. The v1 messages are
    v1alpha's under another package name (same fields, same numbers), so v1alpha's classes
    write and read the v1 bytes."""
    info = channel.stream_stream(
        V1_METHOD,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    ask = reflection_pb2.ServerReflectionRequest(**request)
    return next(iter(info(iter([ask]), timeout=10)))


def test_a_reflection_v1_client_lists_every_service(client: GrpcClient) -> None:
    answer = _ask_v1(client.channel, list_services="")
    names = {s.name for s in answer.list_services_response.service}
    assert set(SERVICE_NAMES) <= names
    assert {
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names


def test_reflection_v1_describes_our_services_and_itself(client: GrpcClient) -> None:
    for symbol, package in [
        ("ameide.memory.v1.GovernanceService", "ameide.memory.v1"),
        ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1"),
    ]:
        answer = _ask_v1(client.channel, file_containing_symbol=symbol)
        assert not answer.HasField("error_response"), answer.error_response.error_message
        files = [
            descriptor_pb2.FileDescriptorProto.FromString(raw)
            for raw in answer.file_descriptor_response.file_descriptor_proto
        ]
        described = files[0]  # the file that defines the symbol comes first, then its imports
        assert described.package == package
        assert symbol.rsplit(".", 1)[1] in {s.name for s in described.service}
    (method,) = files[0].service[0].method
    assert method.input_type == ".grpc.reflection.v1.ServerReflectionRequest"


def _rich(error: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(error)  # checks code and message agree with the call's
    assert status is not None, "no grpc-status-details-bin"
    (detail,) = status.details
    info = error_details_pb2.ErrorInfo()
    assert detail.Unpack(info)
    return info


def test_an_error_carries_error_info_with_our_code_as_reason_and_keeps_the_trailers(
    client: GrpcClient,
) -> None:
    w = client.world
    sop = "# SOP\n\nRun phase 0.\n"
    element, v1 = w.canonical(body=sop)
    stale = w.svc.curation.propose(
        w.agent, w.repo, body=sop + "\nPhase 2.\n", summary="s", element_id=element,
        target_version_id=v1,
    )["proposal_id"]  # fmt: skip
    other = w.svc.curation.propose(
        w.agent, w.repo, body=sop + "\nPhase 3.\n", summary="o", element_id=element,
        target_version_id=v1,
    )["proposal_id"]  # fmt: skip
    head = w.svc.review.accept(w.curator, other)["result_version_id"]
    request = gov.AcceptProposalRequest(proposal_id=stale)
    with pytest.raises(grpc.RpcError) as refused:
        client.call(client.governance.AcceptProposal, request, w.curator)
    error: Any = refused.value
    info = _rich(error)
    assert (info.reason, info.domain) == ("STALE_PROPOSAL", "ameide.memory")
    assert info.metadata["current_head_version_id"] == head
    trailers = dict(error.trailing_metadata())
    assert trailers["x-ameide-error-code"] == "STALE_PROPOSAL"  # the current trailers stay
    assert head in trailers["x-ameide-error-details"]
    assert error.code() is grpc.StatusCode.FAILED_PRECONDITION


def test_a_not_found_error_info_names_not_found(client: GrpcClient) -> None:
    request = kno.GetElementRequest(element_id="el_" + "0" * 24)
    with pytest.raises(grpc.RpcError) as missing:
        client.call(client.knowledge.GetElement, request, client.world.reader)
    info = _rich(missing.value)
    assert info.reason == "NOT_FOUND"
    assert dict(missing.value.trailing_metadata())["x-ameide-error-code"] == "NOT_FOUND"  # type: ignore[attr-defined]
