"""Server reflection, ``grpc.reflection.v1`` beside ``grpc.reflection.v1alpha``.

grpcurl, Postman and current gRPC tooling ask ``grpc.reflection.v1.ServerReflection`` first; the
``grpcio-reflection`` package ships only v1alpha. The two are one protocol under two package
names (the same messages, field numbers and method), so the v1 file descriptor is derived from
v1alpha's and added to the default pool — v1 then describes itself to a client that asks — and
one servicer answers both method paths with the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

V1ALPHA_SERVICE: str = reflection.SERVICE_NAME
V1_PACKAGE = "grpc.reflection.v1"
V1_SERVICE = f"{V1_PACKAGE}.ServerReflection"
V1_FILE = "grpc/reflection/v1/reflection.proto"


def v1_descriptor() -> FileDescriptor:
    """``grpc/reflection/v1/reflection.proto`` in the default pool (added on first use)."""
    pool = descriptor_pool.Default()
    try:
        found: FileDescriptor = pool.FindFileByName(V1_FILE)
        return found
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old, new = f".{proto.package}.", f".{V1_PACKAGE}."
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    proto.ClearField("options")  # v1alpha's language options name v1alpha packages
    for message in proto.message_type:
        for field in message.field:
            if field.HasField("type_name"):  # only message and enum fields name a type
                field.type_name = field.type_name.replace(old, new, 1)
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new, 1)
            method.output_type = method.output_type.replace(old, new, 1)
    added: FileDescriptor = pool.AddSerializedFile(proto.SerializeToString())
    return added


def enable_reflection(service_names: Iterable[str], server: grpc.Server) -> None:
    """Serve reflection v1 and v1alpha for ``service_names`` (both reflection services are
    listed too)."""
    v1_descriptor()
    names = (*service_names, V1_SERVICE, V1ALPHA_SERVICE)
    servicer = reflection.ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)  # v1alpha
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE, {"ServerReflectionInfo": handler}),)
    )
