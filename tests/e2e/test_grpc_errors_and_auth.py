"""gRPC status codes, authentication metadata, existence hiding and server reflection.

One server over one repository serves the whole module; each test creates what it needs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import knowledge_pb2 as kno
from runtime import build_app
from server.grpc.server import SERVICE_NAMES
from service.settings import Settings
from tests.conftest import make_world
from tests.e2e.grpc_harness import GrpcClient, serve

MISSING_ELEMENT = "el_" + "0" * 24
MISSING_REPO = "nobody-here/eng/platform"
SOP = "# Testing SOP\n\nRun phase 0.\n\nRun phase 1.\n"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GrpcClient]:
    app = build_app(Settings(home=tmp_path_factory.mktemp("grpc") / "home"), migrate=True)
    try:
        with serve(make_world(app)) as c:
            yield c
    finally:
        app.close()


def _stale_proposal(g: GrpcClient) -> str:
    w = g.world
    el, v1 = w.canonical(body=SOP)
    stale = w.svc.curation.propose(
        w.agent, w.repo, body=SOP + "\nPhase 2.\n", summary="s", element_id=el, target_version_id=v1
    )
    other = w.svc.curation.propose(
        w.agent, w.repo, body=SOP.replace("0.", "0 fast."), summary="o", element_id=el,
        target_version_id=v1,
    )  # fmt: skip
    w.svc.review.accept(w.curator, other["proposal_id"])
    return str(stale["proposal_id"])


def _conflicted_proposal(g: GrpcClient) -> str:
    w = g.world
    el, v1 = w.canonical(body=SOP)
    mine = w.svc.curation.propose(
        w.agent, w.repo, body=SOP.replace("0.", "0 twice."), summary="m", element_id=el,
        target_version_id=v1,
    )  # fmt: skip
    theirs = w.svc.curation.propose(
        w.agent, w.repo, body=SOP.replace("0.", "0 fast."), summary="t", element_id=el,
        target_version_id=v1,
    )  # fmt: skip
    w.svc.review.accept(w.curator, theirs["proposal_id"])
    return str(w.svc.review.rebase(w.agent, mine["proposal_id"])["proposal_id"])


def _published_baseline(g: GrpcClient) -> str:
    w = g.world
    w.canonical()
    baseline = w.svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    w.svc.publishing.promote(w.publisher, baseline)
    return str(baseline)


def test_invalid_argument(client: GrpcClient) -> None:
    g = client
    failure = g.fail(
        g.knowledge.CreateElement,
        kno.CreateElementRequest(repository_id="not a repository", title="t", body="b"),
        g.world.curator,
    )
    assert (failure.status, failure.code) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")
    assert failure.details == {"field": "repository"}
    assert "malformed repository" in failure.message


def test_a_string_that_is_not_utf8_is_invalid_argument(client: GrpcClient) -> None:
    """A raw message whose title bytes are not UTF-8 cannot be parsed: INVALID_ARGUMENT (not
    INTERNAL), in the taxonomy like every other bad request."""
    g = client
    good = kno.CreateElementRequest(
        repository_id=g.world.repo, title="TITLE!!", body="# b\n"
    ).SerializeToString()
    bad = good.replace(b"TITLE!!", b"TI\xff\xfeLE!")
    assert len(bad) == len(good)
    raw = g.channel.unary_unary(
        "/ameide.memory.v1.KnowledgeService/CreateElement",
        request_serializer=None,
        response_deserializer=None,
    )
    with pytest.raises(grpc.RpcError) as info:
        raw(bad, metadata=g.metadata(g.world.curator), timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "INVALID_ARGUMENT" in (info.value.details() or "")


def test_a_malformed_timestamp_is_invalid_argument(client: GrpcClient) -> None:
    g = client
    el, _ = g.world.canonical()
    failure = g.fail(
        g.knowledge.GetElement,
        kno.GetElementRequest(element_id=el, as_of="yesterday"),
        g.world.reader,
    )
    assert (failure.status, failure.details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        {"field": "as_of"},
    )
    naive = g.fail(
        g.knowledge.GetElement,
        kno.GetElementRequest(element_id=el, as_of="2026-01-01T00:00:00"),
        g.world.reader,
    )
    assert naive.status == grpc.StatusCode.INVALID_ARGUMENT


def test_not_found(client: GrpcClient) -> None:
    g = client
    failure = g.fail(
        g.knowledge.GetElement, kno.GetElementRequest(element_id=MISSING_ELEMENT), g.world.reader
    )
    assert (failure.status, failure.code) == (grpc.StatusCode.NOT_FOUND, "NOT_FOUND")
    assert failure.details == {"element_id": MISSING_ELEMENT}


def test_permission_denied(client: GrpcClient) -> None:
    g = client
    failure = g.fail(
        g.knowledge.CreateElement,
        kno.CreateElementRequest(repository_id=g.world.repo, title="t", body="b"),
        g.world.reader,
    )
    assert (failure.status, failure.code) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "PERMISSION_DENIED",
    )


def test_failed_precondition_for_a_stale_proposal(client: GrpcClient) -> None:
    g = client
    failure = g.fail(
        g.governance.AcceptProposal,
        gov.AcceptProposalRequest(proposal_id=_stale_proposal(g)),
        g.world.curator,
    )
    assert (failure.status, failure.code) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "STALE_PROPOSAL",
    )
    assert failure.details is not None
    assert set(failure.details) == {"current_head_version_id", "target_version_id"}


def test_failed_precondition_for_a_conflicted_proposal(client: GrpcClient) -> None:
    g = client
    failure = g.fail(
        g.governance.AcceptProposal,
        gov.AcceptProposalRequest(proposal_id=_conflicted_proposal(g)),
        g.world.curator,
    )
    assert (failure.status, failure.code) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "PROPOSAL_HAS_CONFLICTS",
    )


def test_failed_precondition_for_a_legal_hold(client: GrpcClient) -> None:
    g, w = client, client.world
    el, _ = w.canonical()
    g.call(
        g.governance.SetLegalHold,
        gov.SetLegalHoldRequest(repository_id=w.repo, held=True),
        w.admin,
    )
    try:
        failure = g.fail(
            g.knowledge.RetireElement, kno.RetireElementRequest(element_id=el), w.curator
        )
    finally:
        w.svc.admin.set_legal_hold(w.admin, w.repo, False)
    assert (failure.status, failure.code) == (grpc.StatusCode.FAILED_PRECONDITION, "LEGAL_HOLD")


def test_failed_precondition_for_promoting_the_published_baseline(client: GrpcClient) -> None:
    g = client
    failure = g.fail(
        g.governance.Promote,
        gov.PromoteRequest(baseline_id=_published_baseline(g)),
        g.world.publisher,
    )
    assert (failure.status, failure.code) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "FAILED_PRECONDITION",
    )


def test_aborted_when_the_published_pointer_moved_under_the_caller(client: GrpcClient) -> None:
    g, w = client, client.world
    current = _published_baseline(g)
    newer = w.svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    stale_view = w.svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    failure = g.fail(
        g.governance.Promote,
        gov.PromoteRequest(baseline_id=newer, expected_baseline_id=stale_view),
        w.publisher,
    )
    assert (failure.status, failure.code) == (grpc.StatusCode.ABORTED, "CONFLICT")
    assert failure.details == {"current_baseline_id": current}


def test_already_exists(client: GrpcClient) -> None:
    g = client
    failure = g.fail(
        g.governance.CreateRepository,
        gov.CreateRepositoryRequest(repository_id=g.world.repo),
        g.world.admin,
    )
    assert (failure.status, failure.code) == (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_EXISTS")


def test_an_unexpected_error_is_internal_and_logged(
    client: GrpcClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    g = client

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(g.world.svc.publishing, "list_baselines", broken)
    with caplog.at_level(logging.ERROR, logger="ameide.grpc"):
        failure = g.fail(
            g.governance.ListBaselines,
            gov.ListBaselinesRequest(repository_id=g.world.repo),
            g.world.reader,
        )
    assert (failure.status, failure.message, failure.code) == (
        grpc.StatusCode.INTERNAL,
        "internal error",
        None,
    )
    assert "disk on fire" not in failure.message
    assert "ListBaselines" in caplog.text
    assert "disk on fire" in caplog.text


# -- authentication -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "metadata",
    [
        [],
        [("authorization", "Bearer amt_not_a_real_token")],
        [("authorization", "Bearer ")],
        [("authorization", "Basic dXNlcjpwYXNz")],
        [("authorization", "amt_missing_scheme")],
    ],
    ids=["no-token", "unknown-token", "empty-token", "basic-scheme", "no-scheme"],
)
def test_a_call_without_a_valid_token_is_unauthenticated(
    client: GrpcClient, metadata: list[tuple[str, str]]
) -> None:
    with pytest.raises(grpc.RpcError) as info:
        client.governance.ListBaselines(
            gov.ListBaselinesRequest(repository_id=client.world.repo), metadata=metadata
        )
    err = info.value
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    assert dict(err.trailing_metadata())["x-ameide-error-code"] == "UNAUTHENTICATED"


def test_a_revoked_token_is_unauthenticated(client: GrpcClient) -> None:
    g, w = client, client.world
    minted = w.svc.tokens.create(w.admin, w.reader.principal_id)
    request = gov.ListBaselinesRequest(repository_id=w.repo)
    g.call(g.governance.ListBaselines, request, minted["token"])
    w.svc.tokens.revoke(w.admin, minted["token_id"])
    failure = g.fail(g.governance.ListBaselines, request, minted["token"])
    assert failure.status == grpc.StatusCode.UNAUTHENTICATED


def test_metadata_sets_purpose_on_behalf_of_and_narrowing_roles(client: GrpcClient) -> None:
    g, w = client, client.world
    created = g.call(
        g.knowledge.CreateElement,
        kno.CreateElementRequest(repository_id=w.repo, title="Purposeful", body="# P\n\nx\n"),
        w.curator,
        purpose="ticket 42",
    )
    events = w.svc.history.history(w.auditor, w.repo, element_id=created.element.element_id)
    assert [e["purpose"] for e in events] == ["ticket 42"]

    # Claimed roles only narrow: a curator claiming "reader" may no longer create (it holds
    # a reader grant too, so it still sees the repository).
    w.svc.admin.grant(w.admin, w.curator.principal_id, "reader", w.repo)
    narrowed = g.fail(
        g.knowledge.CreateElement,
        kno.CreateElementRequest(repository_id=w.repo, title="t", body="b"),
        w.curator,
        roles="reader",
    )
    assert narrowed.status == grpc.StatusCode.PERMISSION_DENIED

    # Naming someone without a delegation grant: refused, saying which grant is missing.
    refused = g.fail(
        g.knowledge.GetElement,
        kno.GetElementRequest(element_id=created.element.element_id),
        w.curator,
        on_behalf_of=w.stranger.principal_id,
    )
    assert refused.status == grpc.StatusCode.PERMISSION_DENIED
    assert "delegate --for" in refused.message

    # On behalf of a principal without grants: the intersection is empty, the repository hidden.
    w.svc.admin.grant(
        w.admin, w.curator.principal_id, "delegate", w.repo, on_behalf_of=w.stranger.principal_id
    )
    hidden = g.fail(
        g.knowledge.GetElement,
        kno.GetElementRequest(element_id=created.element.element_id),
        w.curator,
        on_behalf_of=w.stranger.principal_id,
    )
    assert hidden.status == grpc.StatusCode.NOT_FOUND


def test_a_forbidden_repository_and_a_missing_one_give_identical_not_found(
    client: GrpcClient,
) -> None:
    g, w = client, client.world
    w.canonical()

    def probe(repo: str) -> list[tuple[grpc.StatusCode, str, str | None, str]]:
        calls = [
            (g.governance.ListBaselines, gov.ListBaselinesRequest(repository_id=repo)),
            (g.governance.GetPublished, gov.GetPublishedRequest(repository_id=repo)),
            (g.governance.ListProposals, gov.ListProposalsRequest(repository_id=repo)),
            (
                g.governance.Propose,
                gov.ProposeRequest(
                    repository_id=repo, change_kind="CREATE", title="t", body="b", summary="s"
                ),
            ),
        ]
        out = []
        for method, request in calls:
            f = g.fail(method, request, w.stranger)
            details = str(f.details).replace(repo, "REPO")
            out.append((f.status, f.message.replace(repo, "REPO"), f.code, details))
        return out

    forbidden, missing = probe(w.repo), probe(MISSING_REPO)
    assert forbidden == missing
    assert {status for status, *_ in forbidden} == {grpc.StatusCode.NOT_FOUND}


# -- reflection ---------------------------------------------------------------------------------


def test_reflection_lists_the_three_services_without_a_token(client: GrpcClient) -> None:
    database = ProtoReflectionDescriptorDatabase(client.channel)
    services = set(database.get_services())
    assert set(SERVICE_NAMES) <= services
    assert SERVICE_NAMES == (
        "ameide.memory.v1.KnowledgeService",
        "ameide.memory.v1.GovernanceService",
        "ameide.memory.v1.ProjectionService",
    )
    pool = DescriptorPool(database)
    projection = pool.FindServiceByName("ameide.memory.v1.ProjectionService")
    assert {m.name for m in projection.methods} == {
        "GetReadContext",
        "VerifyCitations",
        "Replay",
        "DiffBaselines",
        "Evaluate",
    }
    propose = pool.FindServiceByName("ameide.memory.v1.GovernanceService").FindMethodByName(
        "Propose"
    )
    assert propose.input_type.fields_by_name["target_version_id"].type == 9  # string
