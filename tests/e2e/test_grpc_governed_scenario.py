"""The governed write scenario of docs/product.md §9, driven entirely through gRPC stubs.

create element → publish → propose pinned → another change accepted → stale, accept refused
→ rebase → accept → baseline → promote (compare-and-swap) → published now and ``as_of`` →
diff, history, audit. The server maps responses strictly, so every key the service returns
on the way has a field in the messages.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from ameide_proto.v1 import governance_pb2 as gov
from ameide_proto.v1 import knowledge_pb2 as kno
from ameide_proto.v1 import projection_pb2 as proj
from tests.conftest import World
from tests.e2e.grpc_harness import GrpcClient, serve

SOP_V1 = "# Testing SOP\n\n## Phase 0\n\nRun phase 0.\n\n## Phase 1\n\nRun phase 1.\n"
SOP_FAST = SOP_V1.replace("Run phase 0.", "Run phase 0 with --fast.")
SOP_PHASE_2 = SOP_V1 + "\n## Phase 2\n\nRun phase 2.\n"
SOP_MERGED = SOP_FAST + "\n## Phase 2\n\nRun phase 2.\n"


@pytest.fixture
def client(world: World) -> Iterator[GrpcClient]:
    with serve(world) as c:
        yield c


def test_the_governed_loop_runs_end_to_end_over_grpc(client: GrpcClient) -> None:
    g, w = client, client.world
    k, gv = g.knowledge, g.governance

    # A curator creates the canonical SOP; a publisher promotes a baseline containing it.
    created = g.call(
        k.CreateElement,
        kno.CreateElementRequest(
            repository_id=w.repo,
            title="Testing SOP",
            body=SOP_V1,
            type_key="ameide:sop",
            metadata={"tags": ["testing"], "owners": 1},
        ),
        w.curator,
    )
    el, v1 = created.element.element_id, created.version.version_id
    assert created.element.source_kind == "CANONICAL"
    assert created.version.seq == 1
    assert not created.version.HasField("body")
    assert dict(created.version.metadata)["owners"] == 1
    bl1 = g.call(gv.CreateBaseline, gov.CreateBaselineRequest(repository_id=w.repo), w.publisher)
    assert [(p.element_id, p.version_id) for p in bl1.pins] == [(el, v1)]
    first = g.call(
        gv.Promote, gov.PromoteRequest(baseline_id=bl1.baseline_id, reason="r1"), w.publisher
    )
    assert not first.HasField("from_baseline_id")
    assert first.to_baseline_id == bl1.baseline_id

    # The agent proposes an update pinned to the published version.
    opened = g.call(
        gv.Propose,
        gov.ProposeRequest(
            repository_id=w.repo,
            element_id=el,
            target_version_id=v1,
            body=SOP_PHASE_2,
            summary="add phase 2",
            target_selector=gov.TargetSelector(kind="published"),
            client_request_id="req-1",
        ),
        w.agent,
    )
    assert (opened.status, opened.stale, opened.replay) == ("OPEN", False, False)
    assert opened.selected_version_id == v1
    assert opened.proposed_by.actor_id == w.agent.principal_id
    assert opened.proposed_by.tool_id == "ameide-grpc"
    assert "+Run phase 2." in opened.diff

    # Meanwhile another change is accepted: the agent's proposal becomes stale.
    other = g.call(
        gv.Propose,
        gov.ProposeRequest(
            repository_id=w.repo,
            element_id=el,
            target_version_id=v1,
            body=SOP_FAST,
            summary="fast phase 0",
        ),
        w.agent,
    )
    accepted_other = g.call(
        gv.AcceptProposal, gov.AcceptProposalRequest(proposal_id=other.proposal_id), w.curator
    )
    v2 = accepted_other.result_version_id
    shown = g.call(
        gv.GetProposal, gov.GetProposalRequest(proposal_id=opened.proposal_id), w.curator
    )
    assert (shown.stale, shown.current_head_version_id, shown.selected_version_id) == (
        True,
        v2,
        v1,
    )
    refused = g.fail(
        gv.AcceptProposal, gov.AcceptProposalRequest(proposal_id=opened.proposal_id), w.curator
    )
    assert (refused.status, refused.code) == (grpc.StatusCode.FAILED_PRECONDITION, "STALE_PROPOSAL")
    assert refused.details is not None
    assert refused.details["current_head_version_id"] == v2

    # Rebase: a clean three-way merge onto the head, then accept it.
    rebased = g.call(
        gv.RebaseProposal, gov.RebaseProposalRequest(proposal_id=opened.proposal_id), w.agent
    )
    new = rebased.proposal
    assert (rebased.previous.proposal_id, rebased.previous.status) == (
        opened.proposal_id,
        "REBASED",
    )
    assert (new.status, new.target_version_id, new.has_conflicts, new.stale) == (
        "OPEN",
        v2,
        False,
        False,
    )
    assert new.rebased_from == opened.proposal_id
    assert new.body == SOP_MERGED
    accepted = g.call(
        gv.AcceptProposal,
        gov.AcceptProposalRequest(proposal_id=new.proposal_id, rationale="clean merge"),
        w.curator,
    )
    v3 = accepted.result_version_id
    assert accepted.status == "ACCEPTED"
    assert accepted.decision_element_id
    head = g.call(k.GetElement, kno.GetElementRequest(element_id=el), w.reader)
    assert (head.version.version_id, head.version.seq, head.version.body) == (v3, 3, SOP_MERGED)
    assert head.version.parent_version_id == v2

    # Accepting does not publish; a new baseline is promoted with compare-and-swap.
    bl2 = g.call(
        gv.CreateBaseline, gov.CreateBaselineRequest(repository_id=w.repo, name="r2"), w.publisher
    )
    second = g.call(
        gv.Promote,
        gov.PromoteRequest(
            baseline_id=bl2.baseline_id,
            repository_id=w.repo,
            reason="phase 2",
            expected_baseline_id=bl1.baseline_id,
        ),
        w.publisher,
    )
    assert (second.from_baseline_id, second.to_baseline_id) == (bl1.baseline_id, bl2.baseline_id)

    # Published truth now, and as it was right after the first promotion.
    now = g.call(gv.GetPublished, gov.GetPublishedRequest(repository_id=w.repo), w.reader)
    assert now.baseline_id == bl2.baseline_id
    assert [m.to_baseline_id for m in now.moves] == [bl1.baseline_id, bl2.baseline_id]
    then = g.call(
        gv.GetPublished, gov.GetPublishedRequest(repository_id=w.repo, as_of=first.at), w.reader
    )
    assert (then.baseline_id, then.as_of) == (bl1.baseline_id, first.at)
    old = g.call(k.GetElement, kno.GetElementRequest(element_id=el, as_of=first.at), w.reader)
    assert old.version.version_id == v1
    assert old.element.retired_at_as_of is False

    # The baseline diff cites both sides; history and the audit chain record every step.
    diff = g.call(
        g.projection.DiffBaselines,
        proj.DiffBaselinesRequest(from_baseline_id=bl1.baseline_id, to_baseline_id=bl2.baseline_id),
        w.reader,
    )
    (change,) = diff.changed
    assert (change.element_id, change.from_side.version_id, change.to_side.version_id) == (
        el,
        v1,
        v3,
    )
    assert "+Run phase 2." in change.diff
    assert not diff.added
    assert not diff.removed
    events = g.call(
        gv.GetHistory, gov.GetHistoryRequest(repository_id=w.repo, element_id=el), w.auditor
    ).events
    kinds = [e.event_type for e in events]
    for step in ("element.created", "proposal.opened", "proposal.rebased", "proposal.accepted"):
        assert step in kinds
    opened_event = next(e for e in events if e.proposal_id == opened.proposal_id)
    assert opened_event.actor == w.agent.principal_id
    assert opened_event.payload["target_version_id"] == v1
    verdict = g.call(gv.VerifyAudit, gov.VerifyAuditRequest(repository_id=w.repo), w.auditor)
    assert (verdict.ok, verdict.chain) == (True, w.repo)
    assert verdict.events_checked > 10


def test_a_repeated_client_request_id_replays_the_original_proposal(client: GrpcClient) -> None:
    g, w = client, client.world
    el, v1 = w.canonical()
    request = gov.ProposeRequest(
        repository_id=w.repo,
        element_id=el,
        target_version_id=v1,
        body="# Testing SOP\n\nRun it twice.\n",
        summary="twice",
        client_request_id="retry-1",
    )
    first = g.call(g.governance.Propose, request, w.agent)
    again = g.call(g.governance.Propose, request, w.agent)
    assert (again.proposal_id, again.replay, first.replay) == (first.proposal_id, True, False)
    queue = g.call(
        g.governance.ListProposals,
        gov.ListProposalsRequest(repository_id=w.repo, status="OPEN"),
        w.curator,
    ).proposals
    assert [p.proposal_id for p in queue] == [first.proposal_id]
    assert not queue[0].HasField("body")
    assert not queue[0].HasField("diff")


def test_a_conflicted_rebase_is_revised_then_withdrawn(client: GrpcClient) -> None:
    g, w = client, client.world
    gv = g.governance
    el, v1 = w.canonical(body=SOP_V1)
    mine = g.call(
        gv.Propose,
        gov.ProposeRequest(
            repository_id=w.repo,
            element_id=el,
            target_version_id=v1,
            body=SOP_V1.replace("Run phase 0.", "Run phase 0 twice."),
            summary="twice",
        ),
        w.agent,
    )
    w.svc.review.accept(
        w.curator,
        w.svc.curation.propose(
            w.agent, w.repo, body=SOP_FAST, summary="fast", element_id=el, target_version_id=v1
        )["proposal_id"],
    )
    rebased = g.call(
        gv.RebaseProposal, gov.RebaseProposalRequest(proposal_id=mine.proposal_id), w.agent
    )
    assert rebased.proposal.has_conflicts is True
    assert "<<<<<<<" in rebased.proposal.body
    refused = g.fail(
        gv.AcceptProposal,
        gov.AcceptProposalRequest(proposal_id=rebased.proposal.proposal_id),
        w.curator,
    )
    assert (refused.status, refused.code) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "PROPOSAL_HAS_CONFLICTS",
    )
    revised = g.call(
        gv.ReviseProposal,
        gov.ReviseProposalRequest(
            proposal_id=rebased.proposal.proposal_id,
            body=SOP_FAST.replace("--fast.", "--fast, twice."),
            summary="resolved",
        ),
        w.agent,
    )
    assert (revised.has_conflicts, revised.summary) == (False, "resolved")
    withdrawn = g.call(
        gv.WithdrawProposal,
        gov.WithdrawProposalRequest(proposal_id=revised.proposal_id, rationale="not needed"),
        w.agent,
    )
    assert withdrawn.status == "WITHDRAWN"
    assert withdrawn.decision_element_id


def test_relationships_versions_and_retirement_over_grpc(client: GrpcClient) -> None:
    g, w = client, client.world
    k = g.knowledge
    sop, sop_v1 = w.canonical()
    guide, _ = w.canonical(title="Guide", body="# Guide\n\nSee the SOP.\n")
    rel = g.call(
        k.AddRelationship,
        kno.AddRelationshipRequest(
            source_element_id=guide,
            target_element_id=sop,
            relationship_kind="REFERENCE",
            type_key="ameide:refers_to",
            metadata={"target_version_id": sop_v1},
        ),
        w.curator,
    )
    assert (rel.source_element_id, rel.target_element_id) == (guide, sop)
    listed = g.call(k.ListRelationships, kno.ListRelationshipsRequest(element_id=sop), w.reader)
    assert [r.relationship_id for r in listed.relationships] == [rel.relationship_id]
    near = g.call(k.ExpandNeighborhood, kno.ExpandNeighborhoodRequest(element_id=sop), w.reader)
    assert {n.element_id for n in near.nodes} == {sop, guide}
    assert [e.relationship_id for e in near.edges] == [rel.relationship_id]
    version = g.call(k.GetVersion, kno.GetVersionRequest(version_id=sop_v1), w.reader)
    assert version.version.body == "# Testing SOP\n\nRun it.\n"
    assert version.chunks[0].start == 0
    history = g.call(k.GetElementHistory, kno.GetElementHistoryRequest(element_id=sop), w.reader)
    assert [v.version_id for v in history.versions] == [sop_v1]
    retired_rel = g.call(
        k.RetireRelationship,
        kno.RetireRelationshipRequest(relationship_id=rel.relationship_id),
        w.curator,
    )
    assert retired_rel.HasField("retired_at")
    retired = g.call(
        k.RetireElement, kno.RetireElementRequest(element_id=guide, reason="merged"), w.curator
    )
    assert retired.element.HasField("retired_at")


def test_baselines_are_listed_shown_rolled_back_and_proposals_rejected(
    client: GrpcClient,
) -> None:
    g, w = client, client.world
    gv = g.governance
    el, v1 = w.canonical()
    first = w.svc.publishing.create_baseline(w.publisher, w.repo, name="one")["baseline_id"]
    w.svc.publishing.promote(w.publisher, first)
    w.svc.review.accept(
        w.curator,
        w.svc.curation.propose(
            w.agent, w.repo, body="# Testing SOP\n\nv2\n", summary="v2", element_id=el,
            target_version_id=v1,
        )["proposal_id"],
    )  # fmt: skip
    second = g.call(
        gv.CreateBaseline,
        gov.CreateBaselineRequest(
            repository_id=w.repo, name="explicit", pins=[gov.Pin(element_id=el, version_id=v1)]
        ),
        w.publisher,
    )
    assert [(p.element_id, p.version_id) for p in second.pins] == [(el, v1)]
    g.call(gv.Promote, gov.PromoteRequest(baseline_id=second.baseline_id), w.publisher)
    listed = g.call(gv.ListBaselines, gov.ListBaselinesRequest(repository_id=w.repo), w.reader)
    assert [(b.baseline_id, b.published) for b in listed.baselines] == [
        (second.baseline_id, True),
        (first, False),
    ]
    shown = g.call(gv.GetBaseline, gov.GetBaselineRequest(baseline_id=first), w.reader)
    assert (shown.name, shown.published) == ("one", False)
    back = g.call(
        gv.Rollback, gov.RollbackRequest(repository_id=w.repo, reason="oops"), w.publisher
    )
    assert (back.from_baseline_id, back.to_baseline_id, back.reason) == (
        second.baseline_id,
        first,
        "oops",
    )
    duplicate = g.fail(
        gv.CreateBaseline,
        gov.CreateBaselineRequest(
            repository_id=w.repo,
            pins=[gov.Pin(element_id=el, version_id=v1), gov.Pin(element_id=el, version_id=v1)],
        ),
        w.publisher,
    )
    assert (duplicate.status, duplicate.details) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        {"field": "pins"},
    )

    proposal = w.svc.curation.propose(
        w.agent, w.repo, change_kind="CREATE", title="Checklist", body="# C\n\n- x\n", summary="c"
    )
    rejected = g.call(
        gv.RejectProposal,
        gov.RejectProposalRequest(proposal_id=proposal["proposal_id"], rationale="duplicate"),
        w.curator,
    )
    assert (rejected.status, rejected.change_kind) == ("REJECTED", "CREATE")
    assert not rejected.HasField("target_element_id")


def test_repositories_grants_tokens_and_erasure_are_administered_over_grpc(
    client: GrpcClient,
) -> None:
    g, w = client, client.world
    gv = g.governance
    tenant = w.repo.split("/")[0]
    repo = g.call(
        gv.CreateRepository,
        gov.CreateRepositoryRequest(repository_id=f"{tenant}/eng/docs"),
        w.admin,
    )
    assert (repo.repository_id, repo.tenant_id) == (f"{tenant}/eng/docs", tenant)
    granted = g.call(
        gv.GrantRole,
        gov.GrantRoleRequest(
            principal_id="user:newbie", role="reader", scope=repo.repository_id, clearance="public"
        ),
        w.admin,
    )
    assert (granted.role, granted.clearance) == ("reader", "public")
    grants = g.call(gv.ListGrants, gov.ListGrantsRequest(scope=repo.repository_id), w.admin)
    assert [(x.principal_id, x.created_by) for x in grants.grants] == [
        ("user:newbie", w.admin.principal_id)
    ]
    revoked = g.call(
        gv.RevokeRole,
        gov.RevokeRoleRequest(principal_id="user:newbie", role="reader", scope=repo.repository_id),
        w.admin,
    )
    assert revoked.revoked is True

    token = g.call(gv.CreateToken, gov.CreateTokenRequest(principal_id="user:newbie"), w.admin)
    assert token.token.startswith("amt_")
    gone = g.call(gv.RevokeToken, gov.RevokeTokenRequest(token_id=token.token_id), w.admin)
    assert gone.revoked is True

    _, v1 = w.canonical()
    erased = g.call(
        g.knowledge.EraseVersion,
        kno.EraseVersionRequest(version_id=v1, reason="GDPR request 7"),
        w.admin,
    )
    assert erased.erased is True
    assert erased.erasure.reason == "GDPR request 7"
    global_chain = g.call(gv.VerifyAudit, gov.VerifyAuditRequest(), w.admin)
    assert global_chain.ok is True
    assert not global_chain.HasField("repository_id")


def test_accept_takes_only_the_proposal_version_the_curator_reviewed(client: GrpcClient) -> None:
    """AcceptProposal with ``expected_version_id``: a proposal revised after the version the
    curator reviewed is refused (ABORTED / CONFLICT, naming both versions) and stays OPEN."""
    g, w = client, client.world
    el, v1 = w.canonical()
    opened = g.call(
        g.governance.Propose,
        gov.ProposeRequest(
            repository_id=w.repo, element_id=el, target_version_id=v1,
            body="# Testing SOP\n\nRun it twice.\n", summary="twice",
        ),
        w.agent,
    )  # fmt: skip
    reviewed = g.call(
        g.governance.GetProposal, gov.GetProposalRequest(proposal_id=opened.proposal_id), w.curator
    ).proposal_version_id
    revised = g.call(
        g.governance.ReviseProposal,
        gov.ReviseProposalRequest(
            proposal_id=opened.proposal_id, body="# Testing SOP\n\nDelete everything.\n"
        ),
        w.agent,
    )
    assert revised.proposal_version_id != reviewed
    refused = g.fail(
        g.governance.AcceptProposal,
        gov.AcceptProposalRequest(proposal_id=opened.proposal_id, expected_version_id=reviewed),
        w.curator,
    )
    assert (refused.status, refused.code) == (grpc.StatusCode.ABORTED, "CONFLICT")
    assert refused.details == {
        "expected_version_id": reviewed,
        "proposal_version_id": revised.proposal_version_id,
    }
    still = g.call(
        g.governance.GetProposal, gov.GetProposalRequest(proposal_id=opened.proposal_id), w.curator
    )
    assert still.status == "OPEN"
    malformed = g.fail(
        g.governance.AcceptProposal,
        gov.AcceptProposalRequest(proposal_id=opened.proposal_id, expected_version_id="nope"),
        w.curator,
    )
    assert malformed.status == grpc.StatusCode.INVALID_ARGUMENT
    done = g.call(
        g.governance.AcceptProposal,
        gov.AcceptProposalRequest(
            proposal_id=opened.proposal_id, expected_version_id=revised.proposal_version_id
        ),
        w.curator,
    )
    assert done.status == "ACCEPTED"
