"""read_context against the in-memory store (``tests.fakes``, ``tests.fakes_read``): permission
trimming, the selectors, ``as_of``, expansion and the stored contexts — the service's read
pipeline with no database and no index (recall by ids needs none), in milliseconds."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.errors import NotFound
from domain.model import Element, Provenance
from domain.values import Classification, SourceKind
from edge.results import as_json
from runtime.compose import compose
from service.app import MemoryService
from service.authz import Caller
from service.clock import Clock
from tests.fakes import FakeDatabase
from tests.read_world import EVIDENCE_TYPE, request, versions

REPO = "acme/eng/platform"
ADMIN = Caller("user:admin", purpose="test setup")
CURATOR = Caller("user:curator", purpose="curate")
PUBLISHER = Caller("user:publisher", purpose="publish")
AGENT = Caller("agent:planner", purpose="propose")
READER = Caller("user:reader", purpose="read")  # clearance internal (the default)
CLEARED = Caller("user:cleared", purpose="read")  # clearance confidential
UNKNOWN = "el_" + "0" * 24


class SteppingClock(Clock):
    """A millisecond per reading, from a fixed instant: every run records the same times."""

    def __init__(self) -> None:
        super().__init__()
        self._next = datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        self._next += timedelta(milliseconds=1)
        return self._next


@dataclass
class Shelf:
    db: FakeDatabase
    svc: MemoryService
    clock: SteppingClock
    open_id: str
    open_v1: str
    secret_id: str
    secret_v1: str


@pytest.fixture
def shelf() -> Shelf:
    """One repository with an internal and a confidential element, readers on both levels."""
    db, clock = FakeDatabase(), SteppingClock()
    svc, _ = compose(db.uow, clock)
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    svc.admin.create_repository(ADMIN, REPO)
    svc.admin.grant(ADMIN, CURATOR.principal_id, "curator", REPO, "confidential")
    svc.admin.grant(ADMIN, PUBLISHER.principal_id, "publisher", REPO, "confidential")
    svc.admin.grant(ADMIN, AGENT.principal_id, "agent", REPO)
    svc.admin.grant(ADMIN, READER.principal_id, "reader", REPO)
    svc.admin.grant(ADMIN, CLEARED.principal_id, "reader", REPO, "confidential")
    shown = svc.elements.create_element(
        CURATOR, REPO, title="Runbook", body="# Runbook\n\nRestart it.\n"
    )
    secret = svc.elements.create_element(
        CURATOR,
        REPO,
        title="Merger plan",
        body="# Merger plan\n\nBuy the competitor.\n",
        classification="confidential",
    )
    return Shelf(
        db,
        svc,
        clock,
        shown["element"]["element_id"],
        shown["version"]["version_id"],
        secret["element"]["element_id"],
        secret["version"]["version_id"],
    )


def _by_ids(shelf: Shelf, caller: Caller, *element_ids: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("selector", "head")
    return shelf.svc.reading.read_context(
        caller, request(REPO, element_ids=list(element_ids), explain=True, **fields)
    )


def _resolved(response: dict[str, Any]) -> datetime:
    """The instant a read resolved at (an ``as_of`` for a later read)."""
    return datetime.fromisoformat(response["selector_used"]["resolved_at"])


def _without_instants(response: dict[str, Any]) -> dict[str, Any]:
    """A response minus what differs between two reads of the same thing (id, resolution time)."""
    out = json.loads(json.dumps(as_json(response)))
    del out["context_id"], out["selector_used"]["resolved_at"]
    return dict(out)


def test_a_reader_cleared_for_internal_gets_no_trace_of_a_confidential_element(
    shelf: Shelf,
) -> None:
    out = _by_ids(shelf, READER, shelf.open_id, shelf.secret_id)

    assert versions(out) == {shelf.open_v1}
    assert out["trace"]["filters"]["selected_versions"] == {"CANONICAL": 1}  # not counted
    assert out["trace"]["candidates"] == [
        {
            "version_id": shelf.open_v1,
            "why": "direct_fetch",
            "chunk_score": 0.0,
            "version_score": 0.0,
            "best_chunk_key": None,
            "semantic_score": None,
            "anchor_score": 0.0,
        }
    ]
    text = json.dumps(as_json(out))
    for leak in (shelf.secret_v1, "Merger", "competitor", "confidential"):
        assert leak not in text
    # The id the reader named itself is dropped exactly as an id that names nothing is: the
    # whole answer, with the secret's id swapped for the unknown one, is the same answer.
    unknown = _by_ids(shelf, READER, shelf.open_id, UNKNOWN)
    swapped = json.loads(
        json.dumps(as_json(_without_instants(out))).replace(shelf.secret_id, UNKNOWN)
    )
    assert swapped == _without_instants(unknown)
    assert out["trace"]["drops"] == [{"element_id": shelf.secret_id, "reason": "not_in_selection"}]
    # ...and what was stored under the context id (its access log) holds no more than that.
    stored = shelf.db.state.read_contexts[out["context_id"]]
    assert stored["response"] == json.loads(json.dumps(as_json(out)))
    assert (stored["principal_id"], stored["purpose"], stored["repo_key"]) == (
        READER.principal_id,
        "read",
        REPO,
    )


def test_a_reader_cleared_for_confidential_gets_both(shelf: Shelf) -> None:
    out = _by_ids(shelf, CLEARED, shelf.open_id, shelf.secret_id)

    assert versions(out) == {shelf.open_v1, shelf.secret_v1}
    assert out["trace"]["filters"]["selected_versions"] == {"CANONICAL": 2}
    assert out["trace"]["drops"] == []
    assert "Buy the competitor." in out["context_block"]
    cited = {c["version_id"] for item in out["items"] for c in item["citations"]}
    assert cited == {shelf.open_v1, shelf.secret_v1}


def test_listed_versions_are_trimmed_by_clearance_and_as_of(shelf: Shelf) -> None:
    before = _resolved(_by_ids(shelf, READER, shelf.open_id))
    v2 = _edit(shelf, "# Runbook\n\nRestart it twice.\n")
    listed = {"kind": "version_ref", "version_ids": [shelf.open_v1, v2, shelf.secret_v1]}
    for caller, as_of, seen in (
        (READER, None, {shelf.open_v1, v2}),
        (CLEARED, None, {shelf.open_v1, v2, shelf.secret_v1}),
        (READER, before, {shelf.open_v1}),  # v2 was recorded later
        (CLEARED, before, {shelf.open_v1, shelf.secret_v1}),
    ):
        out = shelf.svc.reading.read_context(caller, request(REPO, selector=listed, as_of=as_of))
        assert versions(out) == seen


def _edit(shelf: Shelf, body: str) -> str:
    """A second version of the internal element (proposed and accepted); its id."""
    opened = shelf.svc.curation.propose(
        AGENT,
        REPO,
        body=body,
        summary="edit",
        element_id=shelf.open_id,
        target_version_id=shelf.open_v1,
    )
    return str(shelf.svc.review.accept(CURATOR, opened["proposal_id"])["result_version_id"])


def test_published_reads_the_pinned_version_and_head_the_newest(shelf: Shelf) -> None:
    nothing_published = _by_ids(shelf, CLEARED, shelf.open_id, selector="published")
    assert nothing_published["items"] == []
    baseline = shelf.svc.publishing.create_baseline(PUBLISHER, REPO)["baseline_id"]
    shelf.svc.publishing.promote(PUBLISHER, baseline, REPO)
    promoted = _resolved(_by_ids(shelf, CLEARED, shelf.open_id))
    v2 = _edit(shelf, "# Runbook\n\nRestart it, then page.\n")

    published = _by_ids(shelf, READER, shelf.open_id, selector="published")
    assert versions(published) == {shelf.open_v1}
    assert published["selector_used"]["baseline_id"] == baseline
    assert versions(_by_ids(shelf, READER, shelf.open_id)) == {v2}
    pinned = {"kind": "baseline_ref", "baseline_id": baseline}
    assert versions(_by_ids(shelf, READER, shelf.open_id, selector=pinned)) == {shelf.open_v1}
    # as of before the edit, head is the first version; the baseline's confidential pin stays
    # out for the internal reader and in for the cleared one
    assert versions(_by_ids(shelf, READER, shelf.open_id, as_of=promoted)) == {shelf.open_v1}
    both = (shelf.open_id, shelf.secret_id)
    assert versions(_by_ids(shelf, READER, *both, selector=pinned)) == {shelf.open_v1}
    assert versions(_by_ids(shelf, CLEARED, *both, selector=pinned)) == {
        shelf.open_v1,
        shelf.secret_v1,
    }


def test_as_of_before_a_baseline_existed_is_refused_and_before_a_promotion_is_empty(
    shelf: Shelf,
) -> None:
    before = _resolved(_by_ids(shelf, READER, shelf.open_id))
    baseline = shelf.svc.publishing.create_baseline(PUBLISHER, REPO)["baseline_id"]
    shelf.svc.publishing.promote(PUBLISHER, baseline, REPO)

    then = _by_ids(shelf, READER, shelf.open_id, selector="published", as_of=before)
    assert then["items"] == []
    assert then["selector_used"]["baseline_id"] is None
    with pytest.raises(NotFound, match="did not exist"):
        _by_ids(
            shelf,
            READER,
            shelf.open_id,
            selector={"kind": "baseline_ref", "baseline_id": baseline},
            as_of=before,
        )
    # a baseline of a repository the reader cannot see is NOT_FOUND, like a missing one
    with pytest.raises(NotFound):
        _by_ids(
            shelf,
            READER,
            shelf.open_id,
            selector={"kind": "baseline_ref", "baseline_id": "bl_" + "0" * 24},
        )


def test_head_skips_a_retired_element_as_of_when_it_was_retired_and_a_baseline_flags_it(
    shelf: Shelf,
) -> None:
    baseline = shelf.svc.publishing.create_baseline(PUBLISHER, REPO)["baseline_id"]
    before = _resolved(_by_ids(shelf, READER, shelf.open_id))
    shelf.svc.elements.retire_element(CURATOR, shelf.open_id, "obsolete")
    after = _resolved(_by_ids(shelf, READER, shelf.open_id))

    assert _by_ids(shelf, READER, shelf.open_id)["items"] == []
    assert _by_ids(shelf, READER, shelf.open_id, as_of=after)["items"] == []
    assert versions(_by_ids(shelf, READER, shelf.open_id, as_of=before)) == {shelf.open_v1}
    pinned = {"kind": "baseline_ref", "baseline_id": baseline}
    for as_of, retired in ((None, 1.0), (after, 1.0), (before, 0.0)):
        out = _by_ids(shelf, READER, shelf.open_id, selector=pinned, as_of=as_of)
        assert versions(out) == {shelf.open_v1}  # a baseline keeps its pins...
        assert out["items"][0]["score_breakdown"]["retired"]["value"] == retired  # ...flagged


def _lowered_evidence(shelf: Shelf) -> tuple[str, str]:
    """Evidence lowered to internal whose one version was written confidential (as ingest
    leaves it when a file's level is lowered), written straight through the unit of work."""
    with shelf.db.uow() as uow:
        at = shelf.clock.now()
        el = Element.new(
            REPO,
            kind="DOCUMENT",
            type_key=EVIDENCE_TYPE,
            source_kind=SourceKind.INGESTED_EVIDENCE,
            classification=Classification.INTERNAL,
            at=at,
            by="service:ingest",
        )
        uow.store.insert_element(el)
        v = el.next_version(
            title="Salaries",
            body="# Salaries\n\nThe table.\n",
            metadata={},
            at=at,
            provenance=Provenance("service", "service:ingest", "ameide-ingest", "/src", "c", "p"),
        )
        v = replace(v, classification=Classification.CONFIDENTIAL)
        uow.store.move_head(el.element_id, None, v)
        uow.store.insert_version(v)
        uow.commit()
    return el.element_id, v.version_id


def test_a_version_written_above_its_elements_level_needs_that_clearance(shelf: Shelf) -> None:
    element_id, version_id = _lowered_evidence(shelf)

    hidden = _by_ids(shelf, READER, shelf.open_id, element_id)
    assert versions(hidden) == {shelf.open_v1}
    assert hidden["trace"]["filters"]["selected_versions"] == {"CANONICAL": 1}  # not counted
    assert "Salaries" not in json.dumps(as_json(hidden))
    listed = {"kind": "version_ref", "version_ids": [version_id]}
    assert shelf.svc.reading.read_context(READER, request(REPO, selector=listed))["items"] == []

    shown = _by_ids(shelf, CLEARED, shelf.open_id, element_id)
    assert versions(shown) == {shelf.open_v1, version_id}
    assert shown["trace"]["filters"]["selected_versions"]["INGESTED_EVIDENCE"] == 1
    assert versions(shelf.svc.reading.read_context(CLEARED, request(REPO, selector=listed))) == {
        version_id
    }


def test_expansion_never_walks_into_an_element_the_reader_may_not_read(shelf: Shelf) -> None:
    beyond = shelf.svc.elements.create_element(
        CURATOR, REPO, title="Pager", body="# Pager\n\nCall.\n"
    )
    beyond_id = beyond["element"]["element_id"]
    unrelated = _resolved(_by_ids(shelf, CLEARED, shelf.open_id))
    for src, dst in ((shelf.open_id, shelf.secret_id), (shelf.secret_id, beyond_id)):
        shelf.svc.elements.add_relationship(
            CURATOR, src, dst, kind="REFERENCE", type_key="ameide:x"
        )
    expand = {"hops": 2}

    trimmed = _by_ids(shelf, READER, shelf.open_id, expand=expand)
    assert versions(trimmed) == {shelf.open_v1}
    assert shelf.secret_id not in json.dumps(as_json(trimmed))  # not even as a dropped neighbour
    assert trimmed["trace"]["expansions"] == []

    cleared = _by_ids(shelf, CLEARED, shelf.open_id, expand=expand)
    assert versions(cleared) == {
        shelf.open_v1,
        shelf.secret_v1,
        beyond["version"]["version_id"],
    }
    hops = {e["element_id"]: e["hops"] for e in cleared["trace"]["expansions"]}
    assert hops == {shelf.secret_id: 1, beyond_id: 2}
    # as of before the relationships were recorded there is nothing to walk along
    then = _by_ids(shelf, CLEARED, shelf.open_id, expand=expand, as_of=unrelated)
    assert versions(then) == {shelf.open_v1}


def test_a_stored_context_verifies_replays_and_loses_erased_text(shelf: Shelf) -> None:
    out = _by_ids(shelf, READER, shelf.open_id)
    citations = out["items"][0]["citations"]

    assert shelf.svc.reading.verify_citations(READER, out["context_id"], citations)["all_valid"]
    with pytest.raises(NotFound):  # another reader cannot inspect it
        shelf.svc.reading.verify_citations(CLEARED, out["context_id"], citations)
    assert shelf.svc.reading.replay(READER, out["context_id"])["identical"] is True

    shelf.svc.erasure.erase_version(ADMIN, shelf.open_v1, "gdpr")
    stored = shelf.db.state.read_contexts[out["context_id"]]["response"]
    assert stored["items"][0]["version_id"] == shelf.open_v1
    assert "Restart it." not in json.dumps(as_json(stored))
