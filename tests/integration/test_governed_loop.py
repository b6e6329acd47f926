"""The governed loop at service level: create, propose, accept, baseline, promote, history."""

from __future__ import annotations

from datetime import datetime

from domain.model import ACCEPTED_AS, DECISION_TYPE, TARGETS_VERSION
from tests.conftest import World

SOP_V1 = "# Testing SOP\n\nRun phase 0, then phase 1.\n"
SOP_V2 = "# Testing SOP\n\nRun phase 0, then phase 1, then phase 2.\n"


def parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def test_a_proposal_accepted_and_promoted_becomes_published_truth_with_a_full_history(
    any_world: World,
):
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical(body=SOP_V1)

    opened = svc.curation.propose(
        w.agent,
        w.repo,
        body=SOP_V2,
        summary="add phase 2",
        element_id=el,
        target_version_id=v1,
    )
    assert opened["status"] == "OPEN"
    assert opened["target_version_id"] == v1
    assert opened["stale"] is False
    assert opened["replay"] is False
    pins = [
        r
        for r in svc.elements.list_relationships(w.curator, opened["proposal_element_id"])
        if r["type_key"] == TARGETS_VERSION
    ]
    assert [(r["target_element_id"], r["metadata"]["target_version_id"]) for r in pins] == [
        (el, v1)
    ]

    accepted = svc.review.accept(w.curator, opened["proposal_id"], rationale="matches the runbook")
    v2 = accepted["result_version_id"]
    assert accepted["status"] == "ACCEPTED"

    # A new version seq 2 whose parent is v1, and the head moved to it.
    shown = svc.elements.get_element(w.reader, el)
    assert shown["element"]["head_version_id"] == v2
    assert shown["version"]["seq"] == 2
    assert shown["version"]["parent_version_id"] == v1
    assert shown["version"]["body"] == SOP_V2
    assert shown["version"]["provenance"]["actor_id"] == w.agent.principal_id
    history = svc.elements.element_history(w.reader, el)["versions"]
    assert [(v["seq"], v["parent_version_id"]) for v in history] == [(1, None), (2, v1)]

    # accepted_as pins the new version.
    accepted_as = [
        r
        for r in svc.elements.list_relationships(w.curator, el)
        if r["type_key"] == ACCEPTED_AS and r["source_element_id"] == opened["proposal_element_id"]
    ]
    assert len(accepted_as) == 1
    assert accepted_as[0]["metadata"]["target_version_id"] == v2
    assert accepted_as[0]["relationship_kind"] == "REFERENCE"

    # The decision artifact.
    decision = svc.elements.get_element(w.curator, accepted["decision_element_id"])
    assert decision["element"]["type_key"] == DECISION_TYPE
    assert decision["element"]["source_kind"] == "DECISION"
    assert w.curator.principal_id in decision["version"]["body"]
    assert "matches the runbook" in decision["version"]["body"]

    # Accepting does not publish.
    assert svc.publishing.published(w.reader, w.repo)["baseline_id"] is None

    baseline = svc.publishing.create_baseline(w.publisher, w.repo, name="release 1")
    assert {p["element_id"]: p["version_id"] for p in baseline["pins"]} == {el: v2}
    move = svc.publishing.promote(w.publisher, baseline["baseline_id"], reason="first release")
    assert (move["from"], move["to"]) == (None, baseline["baseline_id"])
    published = svc.publishing.published(w.reader, w.repo)
    assert published["baseline_id"] == baseline["baseline_id"]
    assert svc.publishing.baseline_show(w.reader, baseline["baseline_id"])["published"] is True

    events = svc.history.history(w.auditor, w.repo)
    steps = [
        (e["event_type"], e["actor"])
        for e in events
        if e["event_type"]
        in {
            "repository.created",
            "proposal.opened",
            "version.created",
            "proposal.accepted",
            "baseline.created",
            "pointer.moved",
        }
        or (e["event_type"] == "element.created" and e["element_id"] == el)
    ]
    assert steps == [
        ("repository.created", w.admin.principal_id),
        ("element.created", w.curator.principal_id),
        ("proposal.opened", w.agent.principal_id),
        ("version.created", w.curator.principal_id),
        ("proposal.accepted", w.curator.principal_id),
        ("baseline.created", w.publisher.principal_id),
        ("pointer.moved", w.publisher.principal_id),
    ]
    times = [parse(e["occurred_at"]) for e in events]
    assert times == sorted(times)
    assert [e["chain_seq"] for e in events] == list(range(1, len(events) + 1))
    by_type = {e["event_type"]: e for e in events}
    assert by_type["version.created"]["version_id"] == v2
    assert by_type["proposal.accepted"]["proposal_id"] == opened["proposal_id"]
    assert by_type["pointer.moved"]["baseline_id"] == baseline["baseline_id"]
    assert all(e["purpose"] for e in events)
    assert svc.history.verify_audit(w.auditor, w.repo)["ok"] is True


def test_a_create_proposal_accepted_makes_a_new_canonical_element(any_world: World):
    w, svc = any_world, any_world.svc
    opened = svc.curation.propose(
        w.agent,
        w.repo,
        change_kind="CREATE",
        title="Release checklist",
        body="# Release checklist\n\n- tag\n- publish\n",
        summary="new checklist",
    )
    assert opened["target_element_id"] is None
    assert opened["stale"] is False
    accepted = svc.review.accept(w.curator, opened["proposal_id"])
    (link,) = [
        r
        for r in svc.elements.list_relationships(w.curator, opened["proposal_element_id"])
        if r["type_key"] == ACCEPTED_AS
    ]
    assert link["metadata"]["target_version_id"] == accepted["result_version_id"]
    shown = svc.elements.element_history(w.reader, link["target_element_id"])
    assert shown["element"]["source_kind"] == "CANONICAL"
    assert shown["element"]["type_key"] == "ameide:doc"
    assert [v["version_id"] for v in shown["versions"]] == [accepted["result_version_id"]]
    assert shown["versions"][0]["title"] == "Release checklist"
