"""The hash-chained audit log: a valid chain verifies; any alteration names the first bad event."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from domain.audit import GENESIS_HASH, REPOSITORY_GENESIS, AuditEvent, verify_chain

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def chain(n: int) -> list[AuditEvent]:
    """``n`` events chained the way the unit of work writes them."""
    out: list[AuditEvent] = []
    prev = GENESIS_HASH
    for i in range(n):
        ev = AuditEvent(
            chain_key="acme/eng/platform",
            event_type="element.created" if i % 2 else "proposal.opened",
            occurred_at=T0 + timedelta(seconds=i),
            actor=f"user:u{i % 3}",
            on_behalf_of=None,
            purpose="test",
            element_id=f"el_{i:08x}",
            payload={"n": i, "tags": ["a", "b"]},
            event_id=100 + i,
        )
        digest = ev.compute_hash(i + 1, prev)
        out.append(dataclasses.replace(ev, chain_seq=i + 1, prev_hash=prev, hash=digest))
        prev = digest
    return out


def test_an_empty_chain_verifies():
    assert verify_chain([]).ok
    assert verify_chain([], (0, GENESIS_HASH)).ok


def test_a_chain_that_ends_before_its_head_lost_its_tail():
    events = chain(5)
    head = (5, events[-1].hash)
    assert verify_chain(events, head).ok
    truncated = verify_chain(events[:3], head)
    assert not truncated.ok
    assert truncated.events_checked == 3
    assert "deleted from the tail" in (truncated.reason or "")
    assert not verify_chain(events, (5, "0" * 64)).ok  # a head that does not match its chain


def test_an_intact_chain_verifies_and_counts_its_events():
    verdict = verify_chain(chain(5))
    assert verdict.ok
    assert verdict.events_checked == 5
    assert verdict.first_broken_event_id is None


ALTERATIONS = {
    "actor": "user:mallory",
    "payload": {"n": -1},
    "event_type": "proposal.accepted",
    "occurred_at": T0 - timedelta(days=1),
    "purpose": "cover-up",
    "on_behalf_of": "user:boss",
    "element_id": "el_deadbeef",
}


@given(
    n=st.integers(min_value=1, max_value=12),
    data=st.data(),
    field=st.sampled_from(sorted(ALTERATIONS)),
)
def test_altering_any_field_of_any_event_is_detected_at_that_event(
    n: int, data: st.DataObject, field: str
):
    events = chain(n)
    victim = data.draw(st.integers(min_value=0, max_value=n - 1))
    events[victim] = dataclasses.replace(events[victim], **{field: ALTERATIONS[field]})
    verdict = verify_chain(events)
    assert not verdict.ok
    assert verdict.first_broken_event_id == events[victim].event_id
    assert verdict.events_checked == victim
    assert "altered" in (verdict.reason or "")


@given(n=st.integers(min_value=2, max_value=10), data=st.data())
def test_deleting_an_event_breaks_the_chain_at_the_next_one(n: int, data: st.DataObject):
    events = chain(n)
    victim = data.draw(st.integers(min_value=0, max_value=n - 2))
    survivor = events[victim + 1]
    del events[victim]
    verdict = verify_chain(events)
    assert not verdict.ok
    assert verdict.first_broken_event_id == survivor.event_id


def test_recomputing_a_tampered_events_hash_still_breaks_the_link_to_the_next_event():
    events = chain(4)
    forged = dataclasses.replace(events[1], actor="user:mallory")
    forged = dataclasses.replace(forged, hash=forged.compute_hash(2, events[0].hash or ""))
    events[1] = forged
    verdict = verify_chain(events)
    assert not verdict.ok
    assert verdict.first_broken_event_id == events[2].event_id
    assert "prev_hash" in (verdict.reason or "")


def test_reordering_events_is_detected():
    events = chain(3)
    events[0], events[1] = events[1], events[0]
    verdict = verify_chain(events)
    assert not verdict.ok
    assert verdict.first_broken_event_id == events[0].event_id


def test_a_repositorys_chain_must_start_with_its_creation():
    """Issue 28 item 13: a repository's chain is never empty, and starts with its creation."""
    empty = verify_chain([], (0, GENESIS_HASH), genesis=REPOSITORY_GENESIS)
    assert not empty.ok
    assert empty.events_checked == 0
    assert "repository.created" in (empty.reason or "")
    restarted = chain(3)  # starts with proposal.opened: an earlier part was deleted
    verdict = verify_chain(restarted, (3, restarted[-1].hash), genesis=REPOSITORY_GENESIS)
    assert (verdict.ok, verdict.first_broken_event_id) == (False, restarted[0].event_id)
    created = [dataclasses.replace(restarted[0], event_type=REPOSITORY_GENESIS)]
    created = [dataclasses.replace(created[0], hash=created[0].compute_hash(1, GENESIS_HASH))]
    assert verify_chain(created, (1, created[0].hash), genesis=REPOSITORY_GENESIS).ok
