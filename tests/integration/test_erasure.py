"""Erasure is complete (docs/product.md §8): the copies of the text in a repository — the proposal
that carried it above all — and the stored contexts that returned it lose it too, in one
transaction; citations of those contexts still verify and replay names what was erased."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from domain.errors import FailedPrecondition, LegalHoldActive
from domain.model import ERASED_BODY
from service.reading.request import parse_request
from storage import schema as t
from tests.conftest import World, make_world
from tests.read_world import publish, request

MARKER = "zorblaxquux"
"""A word found nowhere but in the text to erase."""
BASE = "# Contacts\n\nAsk the front desk.\n"
SECRET = f"# Contacts\n\nCall {MARKER} at +1 555 0100 on weekdays.\n"


def _accepted(w: World, body: str = SECRET) -> tuple[str, str, str, str]:
    """An element whose head came from an accepted proposal: (element, proposal, proposal
    version, accepted version)."""
    el, v1 = w.canonical(title="Contacts", body=BASE)
    p = w.svc.curation.propose(
        w.agent, w.repo, body=body, summary="who to call", element_id=el, target_version_id=v1
    )
    accepted = w.svc.review.accept(w.curator, p["proposal_id"])
    return el, p["proposal_id"], p["proposal_version_id"], accepted["result_version_id"]


def _stored(w: World, context_id: str) -> dict:
    with w.app.engine.connect() as conn:
        row = conn.execute(
            sa.select(t.read_contexts.c.response).where(t.read_contexts.c.context_id == context_id)
        ).one()
    return dict(row.response)


def _stored_request(w: World, context_id: str) -> dict:
    with w.app.engine.connect() as conn:
        row = conn.execute(
            sa.select(t.read_contexts.c.request).where(t.read_contexts.c.context_id == context_id)
        ).one()
    return dict(row.request)


def _citations(response: dict) -> list[dict]:
    return [c for item in response["items"] for c in item["citations"]]


def _erasures(w: World) -> list[dict]:
    return [
        e for e in w.svc.history.history(w.auditor, w.repo) if e["event_type"] == "version.erased"
    ]


def test_erasing_an_accepted_version_erases_the_proposal_that_carried_it(any_world: World):
    w, svc = any_world, any_world.svc
    _, proposal, proposal_v, accepted_v = _accepted(w)
    assert svc.curation.proposal_show(w.curator, proposal)["body"] == SECRET

    svc.erasure.erase_version(w.admin, accepted_v, "right to be forgotten")

    for version_id in (accepted_v, proposal_v):
        shown = svc.reading.get_version(w.admin, version_id)["version"]
        assert (shown["erased"], shown["body"]) == (True, ERASED_BODY)
        assert shown["erasure"]["reason"] == "right to be forgotten"
    view = svc.curation.proposal_show(w.curator, proposal)
    assert view["body"] == ERASED_BODY
    assert MARKER not in view.model_dump_json()
    events = {e["version_id"]: e for e in _erasures(w)}
    assert set(events) == {accepted_v, proposal_v}
    assert events[accepted_v]["payload"]["copies_erased"] == [proposal_v]
    copy = events[proposal_v]
    assert copy["payload"]["copy_of"] == accepted_v
    assert copy["payload"]["reason"] == "right to be forgotten"
    assert copy["proposal_id"] == proposal
    assert copy["payload"]["content_sha256"] == events[accepted_v]["payload"]["content_sha256"]
    assert svc.history.verify_audit(w.auditor, w.repo)["ok"] is True


def test_erasing_the_proposal_version_erases_the_version_it_became(any_world: World):
    w, svc = any_world, any_world.svc
    el, _, proposal_v, accepted_v = _accepted(w)
    svc.erasure.erase_version(w.admin, proposal_v, "gdpr")
    assert svc.elements.get_element(w.reader, el)["version"]["erased"] is True
    assert {e["version_id"] for e in _erasures(w)} == {proposal_v, accepted_v}


def test_no_keyword_search_finds_the_erased_text(any_world: World):
    w, svc = any_world, any_world.svc
    _, _, _, accepted_v = _accepted(w)
    before = svc.reading.read_context(w.agent, request(w.repo, MARKER, selector="head"))
    assert [i["version_id"] for i in before["items"]] == [accepted_v]

    svc.erasure.erase_version(w.admin, accepted_v, "gdpr")
    after = svc.reading.read_context(w.agent, request(w.repo, MARKER, selector="head"))
    assert after["items"] == []
    assert MARKER not in json.dumps(after["items"]) + after["context_block"]
    with w.app.engine.connect() as conn:
        chunk_rows = conn.execute(
            sa.select(sa.func.count())
            .select_from(t.chunks)
            .where(t.chunks.c.version_id == accepted_v)
        ).scalar_one()
    assert chunk_rows == 0


def test_a_stored_context_keeps_its_citations_but_not_the_erased_text(any_world: World):
    w, svc = any_world, any_world.svc
    _, _, _, accepted_v = _accepted(w)
    w.canonical(title="Phones", body="# Phones\n\nThe weekday phone rota is on the wiki.\n")
    publish(w)
    out = svc.reading.read_context(w.agent, request(w.repo, f"{MARKER} weekday phone"))
    assert {i["version_id"] for i in out["items"]} >= {accepted_v}
    assert len(out["items"]) == 2
    kept = next(i for i in out["items"] if i["version_id"] != accepted_v)
    assert MARKER in json.dumps(_stored(w, out["context_id"]))

    svc.erasure.erase_version(w.admin, accepted_v, "gdpr")

    stored = _stored(w, out["context_id"])
    assert MARKER not in json.dumps(stored)
    assert "555 0100" not in json.dumps(stored)
    item = next(i for i in stored["items"] if i["version_id"] == accepted_v)
    assert item["erased"] is True
    assert item["content"].startswith("[erased:")
    assert item["content"] in stored["context_block"]
    assert item["citations"] == next(
        i["citations"] for i in out["items"] if i["version_id"] == accepted_v
    )
    # The other item is untouched, in the items and in the block.
    assert next(i for i in stored["items"] if i["version_id"] != accepted_v) == kept
    assert kept["content"] in stored["context_block"]

    verdict = svc.reading.verify_citations(w.agent, out["context_id"], _citations(out))
    assert verdict["all_valid"]
    assert verdict["valid"] == len(_citations(out)) > 0

    # The query that found the erased text is erased with it (issue #16 item 13): the context
    # can no longer be replayed, and says why.
    request_row = _stored_request(w, out["context_id"])
    assert request_row["query"] == "[erased]"
    with pytest.raises(FailedPrecondition, match="erased"):
        svc.reading.replay(w.agent, out["context_id"])
    assert svc.history.verify_audit(w.auditor, w.repo)["ok"] is True


def test_a_context_listing_the_version_replays_it_as_erased(any_world: World):
    w, svc = any_world, any_world.svc
    _, _, _, accepted_v = _accepted(w)
    listed = request(w.repo, selector={"kind": "version_ref", "version_ids": [accepted_v]})
    listed["version_ids"] = [accepted_v]
    out = svc.reading.read_context(w.agent, listed)
    assert MARKER in out["context_block"]

    svc.erasure.erase_version(w.admin, accepted_v, "gdpr")
    replay = svc.reading.replay(w.agent, out["context_id"])
    assert [(d["before_version_id"], d["after_version_id"]) for d in replay["differences"]] == [
        (accepted_v, accepted_v)
    ]
    fresh = _stored(w, replay["replay_context_id"])
    assert [i["erased"] for i in fresh["items"]] == [True]
    stored = _stored(w, out["context_id"])
    assert stored["items"][0]["content"] == fresh["items"][0]["content"]
    assert stored["context_block"] == fresh["context_block"]


def test_an_organization_wide_context_is_redacted_too(any_world: World):
    w, svc = any_world, any_world.svc
    _, _, _, accepted_v = _accepted(w)
    publish(w)
    wide = request(w.repo, MARKER)
    del wide["scope"]["repository_id"]
    out = svc.reading.read_context(w.agent, wide)
    assert accepted_v in {i["version_id"] for i in out["items"]}

    svc.erasure.erase_version(w.admin, accepted_v, "gdpr")
    assert MARKER not in json.dumps(_stored(w, out["context_id"]))


def test_a_read_that_raced_an_erasure_is_stored_and_returned_without_the_text(any_world: World):
    w, svc = any_world, any_world.svc
    _, _, _, accepted_v = _accepted(w)
    publish(w)
    parsed = parse_request(request(w.repo, MARKER))
    w.app.reads.catch_up_index()  # as read_context does before its run_read
    body = w.app.reads.run_read(w.agent, parsed)  # read before the erasure commits …
    assert MARKER in body["context_block"]
    svc.erasure.erase_version(w.admin, accepted_v, "gdpr")
    reading = svc.reading  # a race only the use-case group itself can stage
    out = reading._store_context(w.agent, parsed, body, "read_context")  # … stored after it
    assert MARKER not in json.dumps(out)
    assert MARKER not in json.dumps(_stored(w, out["context_id"]))


def test_a_legal_hold_blocks_the_erasure_and_changes_nothing(any_world: World):
    w, svc = any_world, any_world.svc
    _, proposal, proposal_v, accepted_v = _accepted(w)
    publish(w)
    out = svc.reading.read_context(w.agent, request(w.repo, MARKER))
    svc.admin.set_legal_hold(w.admin, w.repo, True)

    with pytest.raises(LegalHoldActive):
        svc.erasure.erase_version(w.admin, accepted_v, "gdpr")
    with pytest.raises(LegalHoldActive):
        svc.erasure.erase_version(w.admin, proposal_v, "gdpr")

    for version_id in (accepted_v, proposal_v):
        assert svc.reading.get_version(w.admin, version_id)["version"]["body"] == SECRET
    assert svc.curation.proposal_show(w.curator, proposal)["body"] == SECRET
    stored = _stored(w, out["context_id"])
    assert stored["context_block"] == out["context_block"]
    assert [i["content"] for i in stored["items"]] == [i["content"] for i in out["items"]]
    assert MARKER in stored["context_block"]
    assert _erasures(w) == []
    again = svc.reading.read_context(w.agent, request(w.repo, MARKER))
    assert [i["version_id"] for i in again["items"]] == [accepted_v]
    assert svc.history.verify_audit(w.auditor, w.repo)["ok"] is True


def test_copies_in_another_repository_are_left_to_its_own_admin(any_world: World):
    w, svc = any_world, any_world.svc
    other = make_world(w.app)
    _, theirs = other.canonical(title="Contacts", body=SECRET)
    _, _, _, accepted_v = _accepted(w)

    svc.erasure.erase_version(w.admin, accepted_v, "gdpr")

    assert svc.reading.get_version(other.admin, theirs)["version"]["body"] == SECRET
    assert _erasures(other) == []


def test_already_erased_copies_are_not_erased_twice(any_world: World):
    w, svc = any_world, any_world.svc
    el, _, proposal_v, accepted_v = _accepted(w)
    # The same text again, later, as a new version of another element.
    _, again = w.canonical(title="Contacts copy", body=SECRET)
    svc.erasure.erase_version(w.admin, again, "gdpr")
    assert {e["version_id"] for e in _erasures(w)} == {again, proposal_v, accepted_v}
    with pytest.raises(FailedPrecondition, match="already erased"):
        svc.erasure.erase_version(w.admin, accepted_v, "again")
    assert len(_erasures(w)) == 3
    assert svc.elements.get_element(w.reader, el)["version"]["erased"] is True
