"""The hash-chained audit log: every state change is an event carrying its predecessor's hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

GENESIS_HASH = "0" * 64
GLOBAL_CHAIN = "*"
"""Chain key of events that belong to no single repository (global grants, tokens)."""
REPOSITORY_GENESIS = "repository.created"
"""The first event of every repository's chain (written with the repository, in one
transaction): a repository whose chain is empty, or starts otherwise, lost its events."""


@dataclass(frozen=True)
class AuditEvent:
    """One recorded state change."""

    chain_key: str
    event_type: str
    occurred_at: datetime
    actor: str
    on_behalf_of: str | None
    purpose: str | None
    element_id: str | None = None
    version_id: str | None = None
    proposal_id: str | None = None
    baseline_id: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    event_id: int | None = None
    chain_seq: int | None = None
    prev_hash: str | None = None
    hash: str | None = None

    def canonical(self, chain_seq: int, prev_hash: str) -> str:
        """The exact text hashed for this event at position ``chain_seq``."""
        doc = {
            "chain_key": self.chain_key,
            "chain_seq": chain_seq,
            "prev_hash": prev_hash,
            "event_type": self.event_type,
            "occurred_at": self.occurred_at.isoformat(),
            "actor": self.actor,
            "on_behalf_of": self.on_behalf_of,
            "purpose": self.purpose,
            "element_id": self.element_id,
            "version_id": self.version_id,
            "proposal_id": self.proposal_id,
            "baseline_id": self.baseline_id,
            "payload": self.payload,
        }
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)

    def compute_hash(self, chain_seq: int, prev_hash: str) -> str:
        """SHA-256 of the canonical text."""
        return hashlib.sha256(self.canonical(chain_seq, prev_hash).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ChainVerdict:
    """Result of verifying a chain: ok, or the first broken event and why."""

    ok: bool
    events_checked: int
    first_broken_event_id: int | None = None
    reason: str | None = None


def verify_chain(
    events: list[AuditEvent], head: tuple[int, str] | None = None, *, genesis: str | None = None
) -> ChainVerdict:
    """Walk the events in chain order and report the first one whose links or hash are wrong.

    ``head``, when given, is the chain head the database keeps beside the events,
    ``(last_seq, last_hash)`` (``(0, GENESIS_HASH)`` for a chain never written to): a chain that
    is intact but ends before its head lost events from its tail, which the links alone cannot
    show. ``genesis``, when given, is the event type the chain must start with (a repository's
    chain: :data:`REPOSITORY_GENESIS`): an empty chain, or one restarted after its events and
    head row were deleted, is broken — the links alone would call it intact."""
    if genesis is not None and not events:
        return ChainVerdict(
            False,
            0,
            None,
            f"the chain is empty, but it must start with its {genesis} event: its events were "
            "deleted (with its head row)",
        )
    if genesis is not None and events[0].event_type != genesis:
        return ChainVerdict(
            False,
            0,
            events[0].event_id,
            f"the chain starts with {events[0].event_type}, not its {genesis} event: its "
            "earlier events were deleted (with its head row) and the chain restarted",
        )
    prev = GENESIS_HASH
    for expected_seq, event in enumerate(events, start=1):
        if event.chain_seq != expected_seq:
            return ChainVerdict(
                False,
                expected_seq - 1,
                event.event_id,
                f"expected chain position {expected_seq}, found {event.chain_seq}",
            )
        if event.prev_hash != prev:
            return ChainVerdict(
                False,
                expected_seq - 1,
                event.event_id,
                "prev_hash does not match the previous event's hash",
            )
        if event.compute_hash(expected_seq, prev) != event.hash:
            return ChainVerdict(
                False,
                expected_seq - 1,
                event.event_id,
                "content does not match its hash (the event was altered)",
            )
        prev = event.hash
    recorded = head
    if recorded is not None and (len(events), prev) != recorded:
        return ChainVerdict(
            False,
            len(events),
            None,
            f"the chain ends at position {len(events)} but its head records position "
            f"{recorded[0]}: events were deleted from the tail (or the head was altered)",
        )
    return ChainVerdict(True, len(events))


@dataclass(frozen=True)
class Checkpoint:
    """A chain's length and head hash at one moment, kept outside the database: the chain must
    still extend it later, so even a consistent rewrite of the tail and the head row shows."""

    chain_key: str
    length: int
    head_hash: str


def check_extends(events: list[AuditEvent], checkpoint: Checkpoint) -> ChainVerdict:
    """Whether ``events`` (an intact chain, in order) still extend ``checkpoint``."""
    if checkpoint.length == 0:
        if checkpoint.head_hash != GENESIS_HASH:
            return ChainVerdict(False, 0, None, "a checkpoint of an empty chain has another hash")
        return ChainVerdict(True, len(events))
    if len(events) < checkpoint.length:
        return ChainVerdict(
            False,
            len(events),
            None,
            f"the chain has {len(events)} events but the checkpoint recorded "
            f"{checkpoint.length}: events were deleted since it was taken",
        )
    at = events[checkpoint.length - 1]
    if at.hash != checkpoint.head_hash:
        return ChainVerdict(
            False,
            checkpoint.length - 1,
            at.event_id,
            f"the event at checkpoint position {checkpoint.length} no longer carries the "
            "checkpoint's head hash: the chain was rewritten at or before it",
        )
    return ChainVerdict(True, len(events))
