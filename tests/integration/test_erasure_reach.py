"""Erasure reaches what derives from the erased text (issue #16, items 3 and 13).

An agent proposal pinned to a version — its body that text plus one line — and the proposal a
rebase made of it used to keep the whole text after the version was erased: readable through
``element show`` on the proposal's element, ``proposal show`` (body and diff) and its summary.
"""

from __future__ import annotations

import json

import pytest

from domain.errors import NotFound
from tests.conftest import World

SECRET = "# Contacts\n\nCall Mallory Quince on +44 20 7946 0958 about the merger.\n"


def _pinned_and_rebased(w: World) -> tuple[str, str, str, str]:
    """(element, erased version v1, the proposal pinned to v1, its rebased successor)."""
    el, v1 = w.canonical(title="Mallory Quince contacts", body=SECRET)
    first = w.svc.propose(
        w.agent, w.repo, body=SECRET + "\nAlso the backup number.\n",
        summary="Mallory Quince: add the backup number", element_id=el, target_version_id=v1,
    )  # fmt: skip
    other = w.svc.propose(
        w.agent, w.repo, body=SECRET.replace("# Contacts", "# Contacts (2026)"),
        summary="retitle", element_id=el, target_version_id=v1,
    )  # fmt: skip
    w.svc.accept(w.curator, other["proposal_id"])  # the head moves: `first` is stale now
    rebased = w.svc.rebase(w.agent, first["proposal_id"])
    return el, v1, first["proposal_id"], rebased["proposal_id"]


def test_erasure_reaches_pinned_and_rebased_proposals(world: World) -> None:
    w = world
    el, v1, first, rebased = _pinned_and_rebased(w)
    assert "Mallory" in json.dumps(w.svc.proposal_show(w.curator, rebased))

    report = w.svc.erase_version(w.admin, v1, "gdpr")["erasure"]

    assert report["derived_erased"] >= 2
    assert report["proposals_redacted"] >= 2
    assert report["proposals_withdrawn"] == 1  # the rebased one was OPEN
    for proposal_id in (first, rebased):
        shown = w.svc.proposal_show(w.curator, proposal_id)
        text = json.dumps(shown)
        assert "Mallory" not in text
        assert "7946 0958" not in text  # the number, not a random id
        assert shown["summary"] == "[erased]"
        # a proposal's element is read by those who read proposals (issue 12 item 7)
        element = w.svc.get_element(w.curator, shown["proposal_element_id"])["version"]
        assert element["erased"] is True
        assert "Mallory" not in json.dumps(element)
    assert w.svc.proposal_show(w.curator, rebased)["status"] == "WITHDRAWN"
    # the erased version's title goes too (item 13)
    shown = w.svc.get_element(w.reader, el, version_id=v1)["version"]
    assert shown["title"] == "[erased]"
    events = [e["event_type"] for e in w.svc.history(w.auditor, w.repo)]
    assert "proposal.withdrawn" in events


def test_a_proposal_that_replaced_the_text_keeps_its_own_words(world: World) -> None:
    w = world
    el, v1 = w.canonical(title="SOP", body=SECRET)
    p = w.svc.propose(
        w.agent, w.repo, body="# Contacts\n\nAsk the front desk.\n", summary="simplify",
        element_id=el, target_version_id=v1,
    )  # fmt: skip
    report = w.svc.erase_version(w.admin, v1, "gdpr")["erasure"]
    assert report["derived_erased"] == 0
    shown = w.svc.proposal_show(w.curator, p["proposal_id"])
    assert shown["status"] == "OPEN"
    assert shown["summary"] == "simplify"


def test_the_erase_report_says_what_cannot_be_erased(world: World) -> None:
    w = world
    _, v1 = w.canonical(title="SOP", body=SECRET)
    report = w.svc.erase_version(w.admin, v1, "gdpr")["erasure"]
    assert report["copies_erased"] == 0
    assert any("backups" in line for line in report["not_erased"])
    with pytest.raises(NotFound):
        w.svc.get_element(w.stranger, "el_" + "0" * 24)
