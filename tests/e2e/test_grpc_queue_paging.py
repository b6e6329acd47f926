"""gRPC ListProposals filters and pages like the CLI, console and REST; GetHistory pages both
ways (issue 30 §2). A real server and channel."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from ameide_proto.v1 import governance_pb2 as gov
from tests.conftest import World
from tests.e2e.grpc_harness import GrpcClient, serve

BODY = "# Testing SOP\n\nRun it twice.\n"


@pytest.fixture
def client(world: World) -> Iterator[GrpcClient]:
    with serve(world) as c:
        yield c


def test_list_proposals_filters_and_pages_with_a_token(client: GrpcClient) -> None:
    g, w = client, client.world
    e1, v1 = w.canonical(title="One")
    e2, v2 = w.canonical(title="Two")

    def update(el: str, ver: str, body: str) -> str:
        out = w.svc.curation.propose(w.agent, w.repo, body=body, summary="s", element_id=el,
                            target_version_id=ver)  # fmt: skip
        return str(out["proposal_id"])

    first = update(e1, v1, "# One\n\nfirst.\n")
    stale_one = update(e1, v1, "# One\n\nsecond.\n")
    other = update(e2, v2, BODY)
    w.svc.review.accept(w.curator, first)

    def ids(**kw: object) -> list[str]:
        request = gov.ListProposalsRequest(repository_id=w.repo, **kw)
        return [p.proposal_id for p in g.call(g.governance.ListProposals, request, w.curator)
                .proposals]  # fmt: skip

    assert ids(stale=True) == [stale_one]
    assert ids(stale=False) == [first, other]
    assert ids(element_id=e2) == [other]
    assert ids(proposer=w.agent.principal_id) == [first, stale_one, other]
    assert ids(proposer=w.curator.principal_id) == []
    assert ids(conflicts=True) == []
    assert ids(status="OPEN", newest_first=True) == [other, stale_one]
    assert ids(since="2999-01-01T00:00:00Z") == []

    page = g.call(
        g.governance.ListProposals,
        gov.ListProposalsRequest(repository_id=w.repo, page_size=2),
        w.curator,
    )
    assert [p.proposal_id for p in page.proposals] == [first, stale_one]
    assert page.next_page_token == stale_one
    last = g.call(
        g.governance.ListProposals,
        gov.ListProposalsRequest(repository_id=w.repo, page_size=2, page_token=stale_one),
        w.curator,
    )
    assert [p.proposal_id for p in last.proposals] == [other]
    assert last.next_page_token == ""

    bad = g.fail(
        g.governance.ListProposals,
        gov.ListProposalsRequest(repository_id=w.repo, page_size=501),
        w.curator,
    )
    assert bad.status == grpc.StatusCode.INVALID_ARGUMENT
    assert bad.details == {"field": "page_size"}


def test_a_grpc_walk_over_a_250_item_queue_sees_each_once_while_proposals_are_added(
    client: GrpcClient,
) -> None:
    g, w = client, client.world
    before = w.open_creates(250, "walk")
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = g.call(
            g.governance.ListProposals,
            gov.ListProposalsRequest(
                repository_id=w.repo, status="OPEN", page_size=40, page_token=token
            ),
            w.curator,
        )
        seen += [p.proposal_id for p in page.proposals]
        pages += 1
        w.open_creates(3, f"added during page {pages}")
        token = page.next_page_token
        if not token:
            break
        assert pages < 50, "the walk does not end"
    assert pages >= 250 // 40
    assert len(seen) == len(set(seen)), "a proposal came twice"
    assert seen[: len(before)] == before  # none skipped, oldest first


def test_get_history_pages_back_and_forth(client: GrpcClient) -> None:
    g, w = client, client.world
    for i in range(6):
        w.canonical(title=f"Doc {i}")

    def history(**kw: object) -> gov.GetHistoryResponse:
        request = gov.GetHistoryRequest(repository_id=w.repo, **kw)
        return g.call(g.governance.GetHistory, request, w.auditor)

    everything = [e.event_id for e in history().events]
    newest = history(limit=3)
    assert [e.event_id for e in newest.events] == everything[-3:]
    assert not newest.HasField("next_cursor")
    pages: list[list[int]] = []
    response = newest
    while True:
        pages.insert(0, [e.event_id for e in response.events])
        if not response.HasField("prev_cursor"):
            break
        response = history(limit=3, before=response.prev_cursor)
        assert len(pages) < 40
    assert [e for page in pages for e in page] == everything

    forwards: list[int] = []
    response = history(limit=4, after=0)
    assert not response.HasField("prev_cursor")
    while True:
        forwards += [e.event_id for e in response.events]
        if not response.HasField("next_cursor"):
            break
        response = history(limit=4, after=response.next_cursor)
        assert len(forwards) < 400
    assert forwards == everything
