"""Erasure reaches what derives from the erased text (issue #16, items 3 and 13).

An agent proposal pinned to a version — its body that text plus one line — and the proposal a
rebase made of it used to keep the whole text after the version was erased: readable through
``element show`` on the proposal's element, ``proposal show`` (body and diff) and its summary.
"""

from __future__ import annotations

import json
import secrets

import pytest

from domain.errors import FailedPrecondition, NotFound, PermissionDenied
from edge.results import as_json
from service.authz import Caller
from tests.conftest import World
from tests.read_world import request

SECRET = "# Contacts\n\nCall Mallory Quince on +44 20 7946 0958 about the merger.\n"


def _pinned_and_rebased(w: World) -> tuple[str, str, str, str]:
    """(element, erased version v1, the proposal pinned to v1, its rebased successor)."""
    el, v1 = w.canonical(title="Mallory Quince contacts", body=SECRET)
    first = w.svc.curation.propose(
        w.agent, w.repo, body=SECRET + "\nAlso the backup number.\n",
        summary="Mallory Quince: add the backup number", element_id=el, target_version_id=v1,
    )  # fmt: skip
    other = w.svc.curation.propose(
        w.agent, w.repo, body=SECRET.replace("# Contacts", "# Contacts (2026)"),
        summary="retitle", element_id=el, target_version_id=v1,
    )  # fmt: skip
    w.svc.review.accept(w.curator, other["proposal_id"])  # the head moves: `first` is stale now
    rebased = w.svc.review.rebase(w.agent, first["proposal_id"])
    return el, v1, first["proposal_id"], rebased["proposal_id"]


def test_erasure_reaches_pinned_and_rebased_proposals(world: World) -> None:
    w = world
    el, v1, first, rebased = _pinned_and_rebased(w)
    assert "Mallory" in json.dumps(as_json(w.svc.curation.proposal_show(w.curator, rebased)))

    report = w.svc.erasure.erase_version(w.admin, v1, "gdpr")["erasure"]

    assert report["derived_erased"] >= 2
    assert report["proposals_redacted"] >= 2
    assert report["proposals_withdrawn"] == 1  # the rebased one was OPEN
    for proposal_id in (first, rebased):
        shown = w.svc.curation.proposal_show(w.curator, proposal_id)
        text = json.dumps(as_json(shown))
        assert "Mallory" not in text
        assert "7946 0958" not in text  # the number, not a random id
        assert shown["summary"] == "[erased]"
        # a proposal's element is read by those who read proposals (issue 12 item 7)
        element = w.svc.elements.get_element(w.curator, shown["proposal_element_id"])["version"]
        assert element["erased"] is True
        assert "Mallory" not in json.dumps(as_json(element))
    assert w.svc.curation.proposal_show(w.curator, rebased)["status"] == "WITHDRAWN"
    # the erased version's title goes too (item 13)
    shown = w.svc.elements.get_element(w.reader, el, version_id=v1)["version"]
    assert shown["title"] == "[erased]"
    events = [e["event_type"] for e in w.svc.history.history(w.auditor, w.repo)]
    assert "proposal.withdrawn" in events


def test_a_proposal_that_replaced_the_text_keeps_its_own_words(world: World) -> None:
    w = world
    el, v1 = w.canonical(title="SOP", body=SECRET)
    p = w.svc.curation.propose(
        w.agent, w.repo, body="# Contacts\n\nAsk the front desk.\n", summary="simplify",
        element_id=el, target_version_id=v1,
    )  # fmt: skip
    report = w.svc.erasure.erase_version(w.admin, v1, "gdpr")["erasure"]
    assert report["derived_erased"] == 0
    shown = w.svc.curation.proposal_show(w.curator, p["proposal_id"])
    assert shown["status"] == "OPEN"
    assert shown["summary"] == "simplify"


def test_the_erase_report_says_what_cannot_be_erased(world: World) -> None:
    w = world
    _, v1 = w.canonical(title="SOP", body=SECRET)
    report = w.svc.erasure.erase_version(w.admin, v1, "gdpr")["erasure"]
    assert report["copies_erased"] == 0
    assert any("backups" in line for line in report["not_erased"])
    with pytest.raises(NotFound):
        w.svc.elements.get_element(w.stranger, "el_" + "0" * 24)


# -- issue 28, item 4: an erasure reaches only what its caller could erase directly -----------

GUESS = "# Salary review\n\nThe board approved a 40% rise for the CFO, effective in May.\n"


def _lower_admin(w: World) -> Caller:
    """An admin of the repository cleared only for internal."""
    who = Caller(f"user:admin-internal-{secrets.token_hex(4)}", purpose="erasure probe")
    w.svc.admin.grant(w.admin, who.principal_id, "admin", w.repo, "internal")
    return who


def test_an_erasure_is_no_oracle_for_restricted_copies(world: World) -> None:
    """Erasing an internal element whose body guesses a restricted one neither erases the
    restricted version nor says, by its counts, whether the guess was right."""
    w = world
    w.svc.admin.grant(w.admin, w.curator.principal_id, "curator", w.repo, "restricted")
    restricted, secret_v = w.canonical(
        title="Salary review", body=GUESS, classification="restricted"
    )
    low = _lower_admin(w)
    reports = {}
    for name, body in (("wrong", GUESS.replace("40%", "30%")), ("right", GUESS)):
        out = w.svc.elements.create_element(
            low, w.repo, title="guess", body=body, classification="internal"
        )
        reports[name] = w.svc.erasure.erase_version(low, out["version"]["version_id"], "probe")[
            "erasure"
        ]
    keys = ("copies_erased", "derived_erased", "proposals_redacted", "read_contexts_redacted")
    assert [reports["right"][k] for k in keys] == [reports["wrong"][k] for k in keys] == [0] * 4
    shown = w.svc.elements.get_element(w.admin, restricted, version_id=secret_v)["version"]
    assert shown["erased"] is False
    assert shown["body"] == GUESS
    # the lower admin's events name nothing of the restricted version
    events = json.dumps(as_json(w.svc.history.history(w.admin, w.repo)))
    assert events.count(secret_v) == 1  # its own version.created only
    # an admin cleared for it still erases every copy, the restricted one included
    out = w.svc.elements.create_element(
        w.admin, w.repo, title="copy", body=GUESS, classification="internal"
    )
    report = w.svc.erasure.erase_version(w.admin, out["version"]["version_id"], "gdpr")["erasure"]
    assert report["copies_erased"] == 1
    assert w.svc.elements.get_element(w.admin, restricted, version_id=secret_v)["version"]["erased"]


def test_an_erasure_counts_only_proposals_and_contexts_its_caller_may_read(
    world: World,
) -> None:
    """A lower admin's erasure leaves a restricted proposal and a restricted reader's context
    alone; a context it cannot inspect (an organization-wide read reaching a repository it
    does not audit) loses the erased text but is not counted in its report."""
    w = world
    w.svc.admin.grant(w.admin, w.curator.principal_id, "curator", w.repo, "restricted")
    w.svc.admin.grant(w.admin, w.agent.principal_id, "agent", w.repo, "restricted")
    w.svc.admin.grant(w.admin, w.reader.principal_id, "reader", w.repo, "restricted")
    el, v1 = w.canonical(title="Salary review", body=GUESS, classification="restricted")
    p = w.svc.curation.propose(
        w.agent, w.repo, body=GUESS + "\nAnd the CTO too.\n", summary="Salary review: the CTO",
        element_id=el, target_version_id=v1,
    )  # fmt: skip
    restricted_ctx = w.svc.reading.read_context(
        w.reader, request(w.repo, "board rise CFO", selector="head")
    )
    assert v1 in [i["version_id"] for i in restricted_ctx["items"]]
    low = _lower_admin(w)
    out = w.svc.elements.create_element(
        low, w.repo, title="guess", body=GUESS, classification="internal"
    )
    copy = out["version"]["version_id"]
    # someone reads the whole organization, another repository of it included
    tenant, org, _ = w.repo.split("/")
    elsewhere = f"{tenant}/{org}/elsewhere"
    w.svc.admin.create_repository(w.admin, elsewhere)
    w.svc.elements.create_element(
        w.admin, elsewhere, title="Board", body="# Board\n\nThe board met.\n"
    )
    wide = Caller(f"user:wide-{secrets.token_hex(4)}", purpose="org-wide read")
    w.svc.admin.grant(w.admin, wide.principal_id, "reader", f"{tenant}/{org}", "internal")
    org_req = request(w.repo, "board rise CFO", selector="head")
    org_req["scope"].pop("repository_id")
    org_ctx = w.svc.reading.read_context(wide, org_req)
    assert copy in [i["version_id"] for i in org_ctx["items"]]
    assert elsewhere in [i["repository_id"] for i in org_ctx["items"]]

    report = w.svc.erasure.erase_version(low, copy, "probe")["erasure"]

    assert (report["copies_erased"], report["derived_erased"]) == (0, 0)
    assert (report["proposals_redacted"], report["proposals_withdrawn"]) == (0, 0)
    assert report["read_contexts_redacted"] == 0
    shown = w.svc.curation.proposal_show(w.curator, p["proposal_id"])
    assert (shown["status"], shown["summary"]) == ("OPEN", "Salary review: the CTO")
    assert "error" not in w.svc.reading.replay(w.reader, restricted_ctx["context_id"])  # query kept
    # the organization-wide context lost the text all the same
    with pytest.raises(FailedPrecondition):  # its query was erased with the text
        w.svc.reading.replay(wide, org_ctx["context_id"])


def test_erasing_needs_the_admin_grant_cleared_for_the_content(world: World) -> None:
    """Clearance is per action: a reader grant at restricted lets an admin at internal read a
    restricted version, not erase it (nor, so, its copies)."""
    w = world
    w.svc.admin.grant(w.admin, w.curator.principal_id, "curator", w.repo, "restricted")
    _, v1 = w.canonical(title="Salary review", body=GUESS, classification="restricted")
    low = _lower_admin(w)
    w.svc.admin.grant(w.admin, low.principal_id, "reader", w.repo, "restricted")
    assert w.svc.reading.get_version(low, v1)["version"]["body"] == GUESS
    with pytest.raises(PermissionDenied):
        w.svc.erasure.erase_version(low, v1, "probe")
    assert w.svc.reading.get_version(w.admin, v1)["version"]["erased"] is False
