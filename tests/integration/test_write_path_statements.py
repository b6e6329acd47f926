"""The governed write path's statements: what the store remembers of its own writes equals what
reading them back gives, and a propose + accept pair stays within its statement budget.

The store answers repeated lookups of one transaction from a memo; the writes every governed
write makes (a new element with its first version, a version, a head's compare-and-swap) keep it
instead of emptying it, remembering the rows they wrote. These tests hold that memory to the
database: on both dialects, each remembered row must equal the row a fresh transaction reads.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from domain.model import Element, Provenance
from domain.values import Classification, SourceKind
from runtime import App
from tests.conftest import make_world

PAIR_STATEMENT_BUDGET = 33
"""Statements of one propose + accept pair on SQLite (BEGINs included, COMMITs not): 44 before
the store kept its memo across its own writes and inserted new elements with their head (35),
and before versions no index holds (a proposal's body, a decision) stopped entering the outbox."""


def _element(repo: str) -> Element:
    return Element.new(
        repo,
        kind="NOTE",
        type_key="ameide:note",
        source_kind=SourceKind.CANONICAL,
        classification=Classification.INTERNAL,
        # not UTC and not the clock's: the store must remember it as the database returns it
        at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2))),
        by="user:curator",
    )


def test_rows_the_store_wrote_are_remembered_as_reading_them_back_gives_them(any_app: App):
    w = make_world(any_app)
    el = _element(w.repo)
    prov = Provenance("user", "user:curator", "tool:x")
    metadata: dict[str, Any] = {"tags": ("a", "b"), "n": 1.5, "nested": {"k": [1, None]}}
    at = datetime(2026, 1, 2, 5, 0, tzinfo=timezone(timedelta(hours=-5)))
    v1 = el.next_version(title="T", body="one\n", metadata=metadata, at=at, provenance=prov)
    with any_app.uow() as uow:
        uow.store.insert_element(el, head=v1)
        uow.store.insert_version(v1)
        remembered_el = uow.store.get_element(el.element_id)
        remembered_v1 = uow.store.get_version(v1.version_id)
        el.head_version_id, el.head_seq = v1.version_id, v1.seq
        v2 = el.next_version(title="T", body="two\n", metadata={}, at=at, provenance=prov)
        assert uow.store.move_head(el.element_id, v1.version_id, v2)
        uow.store.insert_version(v2)
        moved = uow.store.get_element(el.element_id)
        uow.commit()
    with any_app.uow(readonly=True) as uow:
        stored_v1 = uow.store.get_version(v1.version_id)
        stored_el = uow.store.get_element(el.element_id)
        uow.commit()
    assert remembered_v1 == stored_v1
    assert remembered_v1 is not None
    assert remembered_v1.metadata["tags"] == ["a", "b"]
    assert remembered_el is not None
    assert stored_el is not None
    assert (remembered_el.head_version_id, remembered_el.head_seq) == (v1.version_id, 1)
    assert moved == stored_el
    assert (stored_el.head_version_id, stored_el.head_seq) == (v2.version_id, 2)
    assert stored_el.created_at == el.created_at
    assert stored_el.created_at.tzinfo == UTC
    # equal instants are not enough: a view prints them, so the same offset too
    assert str(remembered_el.created_at) == str(stored_el.created_at)
    assert str(remembered_v1.recorded_at) == str(stored_v1.recorded_at)  # type: ignore[union-attr]


def test_a_lost_compare_and_swap_forgets_the_element(any_app: App):
    w = make_world(any_app)
    element_id, v1 = w.canonical()
    with any_app.uow() as uow:
        el = uow.store.get_element(element_id)
        assert el is not None
        v2 = el.next_version(
            title="T", body="b\n", metadata={}, at=any_app.clock.now(),
            provenance=Provenance("user", "user:curator"),
        )  # fmt: skip
        # Another writer moved the head behind this transaction's memo (raw SQL: the memo
        # cannot know); the compare-and-swap from the remembered head must lose …
        uow.store._keep.execute(
            sa.text("update elements set head_version_id = 'ver_elsewhere' where element_id = :e"),
            {"e": element_id},
        )
        assert uow.store.get_element(element_id).head_version_id == v1  # type: ignore[union-attr]
        assert not uow.store.move_head(element_id, v1, v2)
        # … and the next lookup read the element again instead of answering from memory.
        assert uow.store.get_element(element_id).head_version_id == "ver_elsewhere"  # type: ignore[union-attr]


def test_a_governed_pair_stays_within_its_statement_budget(sqlite_app: App):
    w = make_world(sqlite_app)
    element_id, head = w.canonical()
    mine = threading.get_ident()
    counted: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if threading.get_ident() == mine:  # not the index's background upkeep
            counted.append(statement)

    def pair(n: int) -> str:
        p = w.svc.curation.propose(
            w.agent, w.repo, element_id=element_id, target_version_id=head,
            body=f"# Testing SOP\n\nRun it {n} times.\n", summary=f"revision {n}",
        )  # fmt: skip
        return str(w.svc.review.accept(w.curator, p["proposal_id"])["result_version_id"])

    head = pair(0)  # warm: the first of anything may read more
    event.listen(sqlite_app.engine, "before_cursor_execute", count)
    try:
        head = pair(1)
    finally:
        event.remove(sqlite_app.engine, "before_cursor_execute", count)
    assert 0 < len(counted) <= PAIR_STATEMENT_BUDGET, "\n".join(counted)


def test_only_versions_an_index_holds_enter_the_outbox(any_app: App):
    w = make_world(any_app)
    element_id, head = w.canonical()

    def outbox() -> list[tuple[str, str | None]]:
        with any_app.engine.connect() as conn:
            rows = conn.execute(
                sa.text("select element_id, version_id from index_outbox order by outbox_id")
            )
            return [(r.element_id, r.version_id) for r in rows]

    before = outbox()
    assert (element_id, head) in before
    p = w.svc.curation.propose(
        w.agent, w.repo, element_id=element_id, target_version_id=head,
        body="# Testing SOP\n\nRun it twice.\n", summary="twice",
    )  # fmt: skip
    assert outbox() == before  # the proposal's body is no index's business
    accepted = w.svc.review.accept(w.curator, p["proposal_id"])
    # the accepted version, not the decision's
    assert outbox() == [*before, (element_id, accepted["result_version_id"])]
