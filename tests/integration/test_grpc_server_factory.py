"""``create_grpc_server``: the error table, every RPC implemented, binding and auth modes."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import governance_pb2_grpc, knowledge_pb2, projection_pb2
from domain import errors
from edge.errors import ERROR_TABLE, Unavailable
from edge.network import is_loopback
from runtime import App
from server.grpc.calls import current_call, wrap_unary
from server.grpc.errors import status_for
from server.grpc.governance import GovernanceServicer
from server.grpc.knowledge import KnowledgeServicer
from server.grpc.projection import ProjectionServicer
from server.grpc.server import create_grpc_server
from service.settings import Settings
from tests.conftest import World, make_world


def _error_classes() -> list[type[errors.AmeideError]]:
    found, todo = [], [errors.AmeideError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return [c for c in found if c.__module__ == "domain.errors" and c is not errors.AmeideError]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("INVALID_ARGUMENT", grpc.StatusCode.INVALID_ARGUMENT),
        ("NOT_FOUND", grpc.StatusCode.NOT_FOUND),
        ("PERMISSION_DENIED", grpc.StatusCode.PERMISSION_DENIED),
        ("UNAUTHENTICATED", grpc.StatusCode.UNAUTHENTICATED),
        ("FAILED_PRECONDITION", grpc.StatusCode.FAILED_PRECONDITION),
        ("STALE_PROPOSAL", grpc.StatusCode.FAILED_PRECONDITION),
        ("PROPOSAL_HAS_CONFLICTS", grpc.StatusCode.FAILED_PRECONDITION),
        ("LEGAL_HOLD", grpc.StatusCode.FAILED_PRECONDITION),
        ("CONFLICT", grpc.StatusCode.ABORTED),
        ("ALREADY_EXISTS", grpc.StatusCode.ALREADY_EXISTS),
        ("UNAVAILABLE", grpc.StatusCode.UNAVAILABLE),  # IndexBuilding: the index is being built
    ],
)
def test_each_error_code_maps_to_its_status(code: str, status: grpc.StatusCode) -> None:
    (cls,) = [c for c in _error_classes() if c.code == code]
    assert status_for(cls("boom")) == status


def test_every_error_class_of_the_taxonomy_has_a_status() -> None:
    classes = _error_classes()
    assert len(classes) == 11
    unmapped = [c.__name__ for c in classes if status_for(c("x")) == grpc.StatusCode.INTERNAL]
    assert unmapped == []
    assert set(ERROR_TABLE) <= {*classes, Unavailable}  # the table names no stray class


@pytest.mark.parametrize(
    ("servicer", "module", "service"),
    [
        (KnowledgeServicer, knowledge_pb2, "KnowledgeService"),
        (GovernanceServicer, gov, "GovernanceService"),
        (ProjectionServicer, projection_pb2, "ProjectionService"),
    ],
)
def test_every_rpc_of_the_protos_is_implemented(
    servicer: type, module: object, service: str
) -> None:
    methods = module.DESCRIPTOR.services_by_name[service].methods  # type: ignore[attr-defined]
    base = servicer.__mro__[1]
    missing = [m.name for m in methods if getattr(servicer, m.name) is getattr(base, m.name)]
    assert missing == []


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("example.com", False),
    ],
)
def test_loopback_hosts_are_recognised(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_server_without_authentication_refuses_a_non_loopback_host(sqlite_app: App) -> None:
    with pytest.raises(errors.InvalidArgument, match="without authentication"):
        create_grpc_server(
            sqlite_app, sqlite_app.service, host="0.0.0.0", port=0, require_auth=False
        )


def test_a_second_server_cannot_bind_a_port_in_use(sqlite_app: App) -> None:
    first, port = create_grpc_server(sqlite_app, sqlite_app.service, host="127.0.0.1", port=0)
    try:
        with pytest.raises(errors.InvalidArgument, match="cannot listen for gRPC"):
            create_grpc_server(sqlite_app, sqlite_app.service, host="127.0.0.1", port=port)
    finally:
        first.stop(None)


def test_without_required_auth_a_loopback_call_acts_as_the_local_principal(world: World) -> None:
    settings = Settings(home=world.app.settings.home, principal=world.reader.principal_id)
    server, port = create_grpc_server(
        settings, world.svc, host="127.0.0.1", port=0, require_auth=False
    )
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = governance_pb2_grpc.GovernanceServiceStub(channel)
            request = gov.ListBaselinesRequest(repository_id=world.repo)
            assert list(stub.ListBaselines(request).baselines) == []
            with pytest.raises(grpc.RpcError) as info:
                stub.ListBaselines(request, metadata=[("authorization", "Bearer amt_forged")])
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        server.stop(None)


def test_no_local_principal_means_a_call_without_token_is_unauthenticated(
    sqlite_app: App,
) -> None:
    world = make_world(sqlite_app)
    settings = Settings(home=sqlite_app.settings.home, principal=None)
    server, port = create_grpc_server(
        settings, world.svc, host="localhost", port=0, require_auth=False
    )
    server.start()
    try:
        with grpc.insecure_channel(f"localhost:{port}") as channel:
            stub = governance_pb2_grpc.GovernanceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as info:
                stub.ListBaselines(gov.ListBaselinesRequest(repository_id=world.repo))
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        server.stop(None)


class _Recorder(grpc.ServerInterceptor):
    """An embedding process's interceptor: what each call was, by whom, and how it ended."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None, str | None]] = []

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        def observed(behavior: Any) -> Any:
            def handle(request: Any, context: Any) -> Any:
                try:
                    return behavior(request, context)
                finally:
                    call = current_call()
                    assert call is not None
                    who = call.caller.principal_id if call.caller else None
                    self.seen.append((call.method.rsplit("/", 1)[1], who, call.error_code))

            return handle

        return wrap_unary(continuation(details), observed)


def test_added_interceptors_see_the_caller_and_the_error_code(world: World) -> None:
    recorder = _Recorder()
    server, port = create_grpc_server(
        world.app, world.svc, host="127.0.0.1", port=0, interceptors=[recorder]
    )
    server.start()
    token = world.svc.tokens.create(world.admin, world.reader.principal_id)["token"]
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = governance_pb2_grpc.GovernanceServiceStub(channel)
            md = [("authorization", f"Bearer {token}")]
            stub.ListBaselines(gov.ListBaselinesRequest(repository_id=world.repo), metadata=md)
            with pytest.raises(grpc.RpcError):
                stub.GetBaseline(gov.GetBaselineRequest(baseline_id="bl_" + "0" * 24), metadata=md)
            with pytest.raises(grpc.RpcError):
                stub.GetBaseline(gov.GetBaselineRequest(baseline_id="bl_x"))
    finally:
        server.stop(None)
    assert recorder.seen == [
        ("ListBaselines", world.reader.principal_id, None),
        ("GetBaseline", world.reader.principal_id, "NOT_FOUND"),
        ("GetBaseline", None, "UNAUTHENTICATED"),
    ]
