"""Audit checkpoints kept outside the database (issue 12, item 2): every tamper of a chain is
caught — an altered row, a deleted middle row and a deleted tail by the chain and its head row
(see test_audit_and_compliance), reordered rows by the links, and a consistent rewrite of the
newest events together with the head row only by a checkpoint taken before it."""

from __future__ import annotations

import dataclasses

import pytest
import sqlalchemy as sa

from domain.audit import Checkpoint
from domain.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from storage import schema as t
from tests.conftest import World


def _pages(w: World, n: int) -> None:
    for i in range(n):
        w.canonical(title=f"Page {i}", body=f"# Page {i}\n\nText {i}.\n")


def _checkpoint(w: World) -> Checkpoint:
    taken = w.svc.history.audit_checkpoint(w.auditor, w.repo)
    return Checkpoint(taken["chain"], taken["length"], taken["head_hash"])


def _rewrite_newest_event_and_head(w: World) -> int:
    """What an attacker with database access does to hide the newest event: change it, give it
    the hash its new content has, and make the head row agree. Returns its event id."""
    with w.app.uow(readonly=True) as uow:
        newest = uow.store.audit_events(w.repo)[-1]
    forged = dataclasses.replace(newest, actor="user:nobody")
    assert newest.chain_seq is not None
    assert newest.prev_hash is not None
    new_hash = forged.compute_hash(newest.chain_seq, newest.prev_hash)
    with w.app.engine.begin() as conn:
        conn.execute(
            t.audit_events.update()
            .where(t.audit_events.c.event_id == newest.event_id)
            .values(actor="user:nobody", hash=new_hash)
        )
        conn.execute(
            t.audit_chain_heads.update()
            .where(t.audit_chain_heads.c.chain_key == w.repo)
            .values(last_hash=new_hash)
        )
    assert newest.event_id is not None
    return newest.event_id


def test_a_checkpoint_names_the_chains_length_and_head(any_world: World) -> None:
    w = any_world
    _pages(w, 2)
    taken = w.svc.history.audit_checkpoint(w.auditor, w.repo)
    events = w.svc.history.history(w.auditor, w.repo)
    assert (taken["chain"], taken["length"]) == (w.repo, len(events))
    assert taken["head_hash"] == events[-1]["hash"]


def test_a_chain_that_grew_since_the_checkpoint_still_extends_it(any_world: World) -> None:
    w = any_world
    _pages(w, 2)
    kept = _checkpoint(w)
    _pages(w, 1)
    verdict = w.svc.history.verify_audit(w.auditor, w.repo, kept)
    assert verdict["ok"] is True
    assert verdict["checkpoint"] == {"length": kept.length, "head_hash": kept.head_hash}


def test_a_consistent_rewrite_of_the_tail_and_head_row_is_caught_only_by_the_checkpoint(
    any_world: World,
) -> None:
    w = any_world
    _pages(w, 3)
    kept = _checkpoint(w)
    victim = _rewrite_newest_event_and_head(w)

    assert w.svc.history.verify_audit(w.auditor, w.repo)["ok"] is True  # links and head row agree
    verdict = w.svc.history.verify_audit(w.auditor, w.repo, kept)
    assert verdict["ok"] is False
    assert verdict["first_broken_event_id"] == victim
    assert "rewritten at or before it" in verdict["reason"]


def test_deleting_events_the_checkpoint_recorded_is_caught_even_with_the_head_row_moved_back(
    any_world: World,
) -> None:
    w = any_world
    _pages(w, 3)
    kept = _checkpoint(w)
    with w.app.uow(readonly=True) as uow:
        events = uow.store.audit_events(w.repo)
    last, before = events[-1], events[-2]
    with w.app.engine.begin() as conn:
        conn.execute(t.audit_events.delete().where(t.audit_events.c.event_id == last.event_id))
        conn.execute(
            t.audit_chain_heads.update()
            .where(t.audit_chain_heads.c.chain_key == w.repo)
            .values(last_seq=before.chain_seq, last_hash=before.hash)
        )
    assert w.svc.history.verify_audit(w.auditor, w.repo)["ok"] is True
    verdict = w.svc.history.verify_audit(w.auditor, w.repo, kept)
    assert verdict["ok"] is False
    assert "events were deleted since it was taken" in verdict["reason"]


def test_reordered_rows_are_caught_naming_the_first_out_of_place(any_world: World) -> None:
    w = any_world
    _pages(w, 2)
    with w.app.uow(readonly=True) as uow:
        events = uow.store.audit_events(w.repo)
    a, b = events[1], events[2]
    rows = t.audit_events.c
    with w.app.engine.begin() as conn:  # swap two rows' positions (through a free one)
        for event_id, seq in (
            (a.event_id, -1),
            (b.event_id, a.chain_seq),
            (a.event_id, b.chain_seq),
        ):
            conn.execute(
                t.audit_events.update().where(rows.event_id == event_id).values(chain_seq=seq)
            )
    verdict = w.svc.history.verify_audit(w.auditor, w.repo)
    assert verdict["ok"] is False
    assert verdict["first_broken_event_id"] == b.event_id


def test_no_checkpoint_of_a_broken_chain_and_none_of_another_chain(any_world: World) -> None:
    w = any_world
    _pages(w, 1)
    kept = _checkpoint(w)
    with pytest.raises(InvalidArgument, match="checkpoint is of chain"):
        w.svc.history.verify_audit(w.admin, None, kept)  # the global chain
    with w.app.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE audit_events SET actor = 'user:mallory' WHERE chain_key = :k"),
            {"k": w.repo},
        )
    with pytest.raises(FailedPrecondition, match="does not verify"):
        w.svc.history.audit_checkpoint(w.auditor, w.repo)


def test_only_auditors_and_admins_take_checkpoints(any_world: World) -> None:
    with pytest.raises(PermissionDenied):
        any_world.svc.history.audit_checkpoint(any_world.curator, any_world.repo)


def _delete_chain_and_head(w: World) -> None:
    """What an attacker with database access does to leave no trace: every event of the
    repository's chain and its head row go."""
    with w.app.engine.begin() as conn:
        conn.execute(t.audit_events.delete().where(t.audit_events.c.chain_key == w.repo))
        conn.execute(t.audit_chain_heads.delete().where(t.audit_chain_heads.c.chain_key == w.repo))


def test_deleting_a_repositorys_whole_chain_and_head_row_is_detected(any_world: World) -> None:
    """Issue 28 item 13: a repository exists, so its chain holds at least its
    ``repository.created`` event; an empty chain is not "intact: 0 events"."""
    w = any_world
    _pages(w, 2)
    kept = _checkpoint(w)
    _delete_chain_and_head(w)
    for verdict in (
        w.svc.history.verify_audit(w.auditor, w.repo),
        w.svc.history.verify_audit(w.admin, w.repo, kept),
    ):
        assert verdict["ok"] is False
        assert verdict["events_checked"] == 0
        assert "repository.created" in verdict["reason"]
    with pytest.raises(FailedPrecondition):
        w.svc.history.audit_checkpoint(w.auditor, w.repo)


def test_a_chain_restarted_after_its_deletion_is_detected(any_world: World) -> None:
    """The next write after the deletion starts a new chain (and head row) at position 1: its
    links are all right, but it does not begin with the repository's creation."""
    w = any_world
    _pages(w, 2)
    _delete_chain_and_head(w)
    _pages(w, 1)
    verdict = w.svc.history.verify_audit(w.auditor, w.repo)
    assert verdict["ok"] is False
    first = w.svc.history.history(w.auditor, w.repo)[0]
    assert verdict["first_broken_event_id"] == first["event_id"]
    assert "repository.created" in verdict["reason"]
