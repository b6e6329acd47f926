"""Staleness by the head rule, what proposal views report, and rebase with and without conflicts."""

from __future__ import annotations

import pytest

from domain.errors import Conflict, FailedPrecondition, ProposalConflicted, StaleProposal
from domain.model import REBASED_TO
from tests.conftest import World

BASE = "# SOP\n\nline one\nline two\nline three\nline four\nline five\n"


def propose(w: World, el: str, version: str, body: str, **kw: object) -> dict:
    return w.svc.curation.propose(
        w.agent, w.repo, body=body, summary="edit", element_id=el, target_version_id=version, **kw
    )


def move_head(w: World, el: str, version: str, body: str) -> str:
    """Another change accepted by the curator: the head moves, nothing is published."""
    p = w.svc.curation.propose(
        w.agent, w.repo, body=body, summary="other", element_id=el, target_version_id=version
    )
    return str(w.svc.review.accept(w.curator, p["proposal_id"])["result_version_id"])


def test_accepting_a_stale_proposal_is_refused_naming_the_new_head(any_world: World):
    w = any_world
    el, v1 = w.canonical(body=BASE)
    mine = propose(w, el, v1, BASE.replace("line five", "line 5"))
    v2 = move_head(w, el, v1, BASE.replace("line one", "line 1"))
    with pytest.raises(StaleProposal) as err:
        w.svc.review.accept(w.curator, mine["proposal_id"])
    assert v2 in err.value.message
    assert err.value.details["current_head_version_id"] == v2
    assert err.value.details["target_version_id"] == v1
    view = w.svc.curation.proposal_show(w.curator, mine["proposal_id"])
    assert view["status"] == "OPEN"
    assert w.svc.elements.get_element(w.reader, el)["element"]["head_version_id"] == v2


def test_proposal_views_report_staleness_head_and_what_each_selector_resolves_to(
    any_world: World,
):
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical(body=BASE)
    unpublished = propose(w, el, v1, BASE + "extra\n")
    assert unpublished["selected_version_id"] is None  # nothing published yet
    b1 = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    svc.publishing.promote(w.publisher, b1)

    on_published = propose(w, el, v1, BASE + "published\n")
    on_baseline = propose(w, el, v1, BASE + "baseline\n", selector="baseline_ref", baseline_id=b1)
    for p in (on_published, on_baseline):
        assert (p["stale"], p["current_head_version_id"], p["selected_version_id"]) == (
            False,
            v1,
            v1,
        )
    assert on_baseline["target_selector"] == {"kind": "baseline_ref", "baseline_id": b1}

    # The head moves but published truth does not: stale by the head rule, selector still v1.
    v2 = move_head(w, el, v1, BASE.replace("line two", "line 2"))
    for p in (on_published, on_baseline):
        view = svc.curation.proposal_show(w.curator, p["proposal_id"])
        assert (view["stale"], view["current_head_version_id"], view["selected_version_id"]) == (
            True,
            v2,
            v1,
        )
    queue = {
        p["proposal_id"]: p for p in svc.curation.proposal_list(w.curator, w.repo, status="OPEN")
    }
    assert queue[on_published["proposal_id"]]["stale"] is True
    assert queue[on_published["proposal_id"]]["current_head_version_id"] == v2

    # Publishing v2 moves what "published" selects; the baseline_ref stays on its baseline.
    b2 = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    svc.publishing.promote(w.publisher, b2)
    assert (
        svc.curation.proposal_show(w.curator, on_published["proposal_id"])["selected_version_id"]
        == v2
    )
    assert (
        svc.curation.proposal_show(w.curator, on_baseline["proposal_id"])["selected_version_id"]
        == v1
    )


def test_rebasing_non_overlapping_edits_gives_a_clean_open_proposal_that_accepts(
    any_world: World,
):
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical(body=BASE)
    old = propose(w, el, v1, BASE.replace("line five", "line five, by the agent"))
    v2 = move_head(w, el, v1, BASE.replace("line one", "line one, by the curator"))

    new = svc.review.rebase(w.agent, old["proposal_id"])
    assert new["status"] == "OPEN"
    assert new["proposal_id"] != old["proposal_id"]
    assert new["target_version_id"] == v2
    assert new["rebased_from"] == old["proposal_id"]
    assert new["has_conflicts"] is False
    assert new["stale"] is False
    assert new["proposed_by"]["actor_id"] == w.agent.principal_id
    assert "line one, by the curator" in new["body"]
    assert "line five, by the agent" in new["body"]
    assert "<<<<<<<" not in new["body"]

    before = svc.curation.proposal_show(w.agent, old["proposal_id"])
    assert before["status"] == "REBASED"
    assert before["rebased_to"] == new["proposal_id"]
    links = [
        r
        for r in svc.elements.list_relationships(w.curator, old["proposal_element_id"])
        if r["type_key"] == REBASED_TO
    ]
    assert [(r["source_element_id"], r["target_element_id"]) for r in links] == [
        (old["proposal_element_id"], new["proposal_element_id"])
    ]
    assert links[0]["metadata"]["target_version_id"] == new["proposal_version_id"]

    accepted = svc.review.accept(w.curator, new["proposal_id"])
    head = svc.elements.get_element(w.reader, el)["version"]
    assert head["version_id"] == accepted["result_version_id"]
    assert (head["seq"], head["parent_version_id"]) == (3, v2)
    assert head["body"] == new["body"]
    events = [e["event_type"] for e in svc.history.history(w.auditor, w.repo)]
    assert "proposal.rebased" in events


def test_a_conflicted_rebase_is_refused_until_revised_with_a_clean_body(any_world: World):
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical(body=BASE)
    old = propose(w, el, v1, BASE.replace("line three", "line three (agent)"))
    v2 = move_head(w, el, v1, BASE.replace("line three", "line three (curator)"))

    new = svc.review.rebase(w.curator, old["proposal_id"])
    assert new["has_conflicts"] is True
    assert new["target_version_id"] == v2
    body_lines = new["body"].split("\n")
    for marker in ("<<<<<<< current head", "=======", ">>>>>>> proposal"):
        assert marker in body_lines
    assert "line three (agent)" in body_lines
    assert "line three (curator)" in body_lines

    with pytest.raises(ProposalConflicted):
        svc.review.accept(w.curator, new["proposal_id"])

    still = svc.curation.revise(w.agent, new["proposal_id"], body=new["body"] + "\nmore\n")
    assert still["has_conflicts"] is True
    with pytest.raises(ProposalConflicted):
        svc.review.accept(w.curator, new["proposal_id"])

    resolved = BASE.replace("line three", "line three (curator and agent)")
    revised = svc.curation.revise(w.agent, new["proposal_id"], body=resolved, summary="resolved")
    assert revised["has_conflicts"] is False
    assert revised["summary"] == "resolved"
    assert revised["body"] == resolved
    revisions = [
        e
        for e in svc.history.history(w.auditor, w.repo)
        if e["event_type"] == "proposal.revised" and e["proposal_id"] == new["proposal_id"]
    ]
    assert [(e["actor"], e["payload"]["has_conflicts"]) for e in revisions] == [
        (w.agent.principal_id, True),
        (w.agent.principal_id, False),
    ]

    accepted = svc.review.accept(w.curator, new["proposal_id"])
    head = svc.elements.get_element(w.reader, el)["version"]
    assert (head["version_id"], head["body"], head["parent_version_id"]) == (
        accepted["result_version_id"],
        resolved,
        v2,
    )


def test_a_fresh_proposal_cannot_be_rebased(any_world: World):
    w = any_world
    el, v1 = w.canonical(body=BASE)
    p = propose(w, el, v1, BASE + "x\n")
    with pytest.raises(FailedPrecondition, match="already on the current head"):
        w.svc.review.rebase(w.agent, p["proposal_id"])
    assert w.svc.curation.proposal_show(w.agent, p["proposal_id"])["status"] == "OPEN"


def test_a_rebased_proposal_is_terminal(any_world: World):
    w = any_world
    el, v1 = w.canonical(body=BASE)
    old = propose(w, el, v1, BASE + "x\n")
    move_head(w, el, v1, BASE.replace("line one", "1"))
    w.svc.review.rebase(w.agent, old["proposal_id"])
    with pytest.raises(FailedPrecondition, match="REBASED"):
        w.svc.review.accept(w.curator, old["proposal_id"])
    with pytest.raises(FailedPrecondition, match="REBASED"):
        w.svc.review.rebase(w.agent, old["proposal_id"])


def test_a_revision_from_an_older_version_is_a_conflict_and_changes_nothing(any_world: World):
    """Two reviewers open the same proposal; the second to save names the version it started
    from and gets CONFLICT instead of overwriting the first one's revision."""
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical()
    p = svc.curation.propose(
        w.agent, w.repo, body="# Testing SOP\n\nRun it twice.\n", summary="twice",
        element_id=el, target_version_id=v1,
    )  # fmt: skip
    seen = p["proposal_version_id"]
    first = svc.curation.revise(
        w.curator, p["proposal_id"], "# Testing SOP\n\nA.\n", expected_version_id=seen
    )
    with pytest.raises(Conflict, match="was revised after version"):
        svc.curation.revise(
            w.agent, p["proposal_id"], "# Testing SOP\n\nB.\n", expected_version_id=seen
        )
    shown = svc.curation.proposal_show(w.curator, p["proposal_id"])
    assert shown["proposal_version_id"] == first["proposal_version_id"]
    assert shown["body"] == "# Testing SOP\n\nA.\n"
