"""The read side over gRPC: GetReadContext, VerifyCitations and Replay (docs/product.md §4, §9)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import pytest

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import projection_pb2 as proj
from tests.conftest import World
from tests.e2e.grpc_harness import GrpcClient, serve

SOP_V1 = "# Testing SOP\n\n## Phases\n\nRun phase 0 and phase 1 tests with make test.\n"
SOP_V2 = SOP_V1 + "\nThen run phase 2 tests with make test-e2e.\n"
QUERY = "how do I run phase 0/1/2 tests?"


@pytest.fixture
def client(world: World) -> Iterator[GrpcClient]:
    with serve(world) as c:
        yield c


def _scope(repo: str) -> proj.Scope:
    tenant, org, repository = repo.split("/")
    return proj.Scope(tenant_id=tenant, organization_id=org, repository_id=repository)


def _read(g: GrpcClient, who: object, **fields: object) -> proj.ReadContextResponse:
    request = proj.ReadContextRequest(scope=_scope(g.world.repo), query=QUERY, **fields)
    return g.call(g.projection.GetReadContext, request, who)  # type: ignore[no-any-return]


def _publish(w: World) -> str:
    baseline = w.svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    w.svc.publishing.promote(w.publisher, baseline)
    return str(baseline)


def test_an_agent_reads_published_truth_and_an_as_of_read_replays_the_past(
    client: GrpcClient,
) -> None:
    g, w = client, client.world
    el, v1 = w.canonical(body=SOP_V1)
    first_baseline = _publish(w)

    first = _read(g, w.agent, principal=proj.PrincipalBlock(purpose="answer"))
    assert first.context_id.startswith("ctx_")
    assert (first.selector_used.kind, first.selector_used.baseline_id) == (
        "published",
        first_baseline,
    )
    top = first.items[0]
    assert (top.element_id, top.version_id, top.source_kind) == (el, v1, "CANONICAL")
    assert top.why_included == "keyword_match"
    assert top.citations
    assert all(c.version_id == v1 for c in top.citations)
    assert v1 in first.context_block

    # The agent's update is accepted and promoted: published reads move, as_of reads do not.
    proposal = w.svc.curation.propose(
        w.agent, w.repo, body=SOP_V2, summary="phase 2", element_id=el, target_version_id=v1
    )
    v2 = w.svc.review.accept(w.curator, proposal["proposal_id"])["result_version_id"]
    _publish(w)
    assert _read(g, w.agent).items[0].version_id == v2
    past = _read(g, w.agent, as_of=first.selector_used.resolved_at)
    assert past.items[0].version_id == v1
    assert past.selector_used.baseline_id == first_baseline

    # Citations are checked against what the first context returned.
    given = [
        proj.Citation(
            repository_id=c.repository_id,
            element_id=c.element_id,
            version_id=c.version_id,
            excerpt=c.excerpt,
        )
        for c in top.citations
    ]
    ok = g.call(
        g.projection.VerifyCitations,
        proj.VerifyCitationsRequest(context_id=first.context_id, citations=given),
        w.agent,
    )
    assert (ok.all_valid, ok.valid, ok.invalid) == (True, len(given), 0)
    assert [r.reason for r in ok.results] == ["in_context"] * len(given)
    wrong = g.call(
        g.projection.VerifyCitations,
        proj.VerifyCitationsRequest(
            context_id=first.context_id,
            citations=[proj.Citation(element_id=el, version_id=v2)],
        ),
        w.agent,
    )
    assert (wrong.all_valid, wrong.results[0].reason) == (False, "other_version_of_element")

    # Replaying the first read shows that the published version changed since.
    replay = g.call(g.projection.Replay, proj.ReplayRequest(context_id=first.context_id), w.agent)
    assert replay.identical is False
    changes = {(d.element_id, d.change) for d in replay.differences}
    assert (el, "version_changed") in changes
    as_recorded = g.call(
        g.projection.Replay,
        proj.ReplayRequest(context_id=first.context_id, as_recorded=True),
        w.agent,
    )
    assert as_recorded.identical is True

    # The access log records who read what, for which purpose.
    log = g.call(
        g.governance.GetAccessLog,
        gov.GetAccessLogRequest(repository_id=w.repo, limit=50),
        w.auditor,
    ).entries
    reads = [e for e in log if e.subject["context_id"] == first.context_id]
    assert ("read_context", w.agent.principal_id, "answer") in [
        (e.operation, e.principal_id, e.purpose) for e in reads
    ]
    assert {e.operation for e in reads} == {"read_context", "verify_citations"}


def test_explain_returns_a_trace_and_score_breakdowns(client: GrpcClient) -> None:
    g, w = client, client.world
    w.canonical(body=SOP_V1)
    _publish(w)
    explained = _read(
        g,
        w.reader,
        explain=True,
        detail_level="full",
        budget=proj.Budget(max_items=3),
        expand=proj.Expand(hops=1),
    )
    assert "filters" in explained.trace
    assert explained.items[0].HasField("score_breakdown")
    assert "Run phase 0 and phase 1 tests" in explained.items[0].content


def test_a_bad_read_request_is_invalid_argument_naming_the_field(client: GrpcClient) -> None:
    g, w = client, client.world
    failure = g.fail(
        g.projection.GetReadContext,
        proj.ReadContextRequest(scope=_scope(w.repo), query=QUERY, budget=proj.Budget(max_items=0)),
        w.reader,
    )
    assert (failure.status, failure.code) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT")
    assert "budget.max_items" in failure.message


def test_a_principal_without_a_grant_cannot_read_or_tell_the_repository_exists(
    client: GrpcClient,
) -> None:
    g, w = client, client.world
    w.canonical(body=SOP_V1)
    _publish(w)

    def attempt(repo: str) -> tuple[grpc.StatusCode, str | None]:
        request = proj.ReadContextRequest(scope=_scope(repo), query=QUERY)
        failure = g.fail(g.projection.GetReadContext, request, w.stranger)
        return failure.status, failure.code

    assert attempt(w.repo) == attempt("nobody-here/eng/platform")
    assert attempt(w.repo)[0] == grpc.StatusCode.NOT_FOUND


def test_a_golden_set_is_evaluated_over_grpc(client: GrpcClient) -> None:
    g, w = client, client.world
    el, _ = w.canonical(body=SOP_V1)
    _publish(w)
    dataset = json.dumps({"query": QUERY, "relevant": {el: 2}}) + "\n"
    report = g.call(
        g.projection.Evaluate,
        proj.EvaluateRequest(repository_id=w.repo, dataset=dataset, k=3, include_per_query=True),
        w.reader,
    )
    assert (report.k, report.queries, report.selector) == (3, 1, "published")
    assert set(report.pipelines) == {"keyword", "full", "full_expanded"}
    assert report.pipelines["full"]["mrr"] == 1.0
    assert report.per_query[0]["query"] == QUERY
