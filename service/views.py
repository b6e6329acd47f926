"""Domain objects → plain JSON-ready dicts with the field names of docs/product.md (every
surface)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any, overload

from domain.audit import AuditEvent
from domain.model import Baseline, Element, ElementVersion, PointerMove, Proposal, Relationship


@overload
def iso(value: datetime) -> str: ...
@overload
def iso(value: datetime | None) -> str | None: ...
def iso(value: datetime | None) -> str | None:
    """ISO-8601 UTC text (None stays None)."""
    return value.isoformat().replace("+00:00", "Z") if value else None


def element_view(el: Element) -> dict[str, Any]:
    """An element without its content."""
    return {
        "element_id": el.element_id,
        "repository_id": el.repo_key,
        "element_kind": el.element_kind,
        "type_key": el.type_key,
        "source_kind": el.source_kind.value,
        "classification": el.classification.value,
        "created_at": iso(el.created_at),
        "created_by": el.created_by,
        "head_version_id": el.head_version_id,
        "retired_at": iso(el.retired_at),
    }


def version_view(v: ElementVersion, *, with_body: bool = True) -> dict[str, Any]:
    """A version; an erased one says so instead of showing content."""
    out: dict[str, Any] = {
        "version_id": v.version_id,
        "element_id": v.element_id,
        "seq": v.seq,
        "parent_version_id": v.parent_version_id,
        "title": v.title,
        "metadata": v.metadata,
        "content_sha256": v.content_sha256,
        "recorded_at": iso(v.recorded_at),
        "provenance": asdict(v.provenance),
        "erased": v.erased,
    }
    if v.erased:
        out["erasure"] = {
            "erased_at": iso(v.erased_at),
            "erased_by": v.erased_by,
            "reason": v.erasure_reason,
        }
    if with_body:
        out["body"] = v.body
    return out


def relationship_view(r: Relationship) -> dict[str, Any]:
    """A relationship record."""
    return {
        "relationship_id": r.relationship_id,
        "repository_id": r.repo_key,
        "relationship_kind": r.relationship_kind.value,
        "type_key": r.type_key,
        "source_element_id": r.source_element_id,
        "target_element_id": r.target_element_id,
        "metadata": r.metadata,
        "recorded_at": iso(r.recorded_at),
        "recorded_by": r.recorded_by,
        "retired_at": iso(r.retired_at),
    }


def proposal_view(p: Proposal) -> dict[str, Any]:
    """The proposal record (callers add staleness, body and diff)."""
    return {
        "proposal_id": p.proposal_id,
        "repository_id": p.repo_key,
        "proposal_element_id": p.element_id,
        "status": p.status.value,
        "change_kind": p.change_kind.value,
        "summary": p.summary,
        "proposed_by": {
            "actor_type": p.proposed_by.actor_type,
            "actor_id": p.proposed_by.actor_id,
            "tool_id": p.proposed_by.tool_id,
            "on_behalf_of": p.proposed_by.on_behalf_of,
        },
        "target_selector": {
            "kind": p.target_selector.kind.value,
            "baseline_id": p.target_selector.baseline_id,
        },
        "target_element_id": p.target_element_id,
        "target_version_id": p.target_version_id,
        "has_conflicts": p.has_conflicts,
        "client_request_id": p.client_request_id,
        "rebased_from": p.rebased_from,
        "rebased_to": p.rebased_to,
        "result_version_id": p.result_version_id,
        "created_at": iso(p.created_at),
        "decided_at": iso(p.decided_at),
        "decided_by": p.decided_by,
    }


def baseline_view(b: Baseline) -> dict[str, Any]:
    """A baseline with its pins."""
    return {
        "baseline_id": b.baseline_id,
        "repository_id": b.repo_key,
        "name": b.name,
        "created_at": iso(b.created_at),
        "created_by": b.created_by,
        "parent_baseline_id": b.parent_baseline_id,
        "pins": [{"element_id": e, "version_id": v} for e, v in sorted(b.pins.items())],
    }


def move_view(m: PointerMove) -> dict[str, Any]:
    """A recorded pointer move."""
    return {
        "move_id": m.move_id,
        "repository_id": m.repo_key,
        "from": m.from_baseline_id,
        "to": m.to_baseline_id,
        "at": iso(m.at),
        "by": m.by,
        "reason": m.reason or None,
    }


def event_view(e: AuditEvent) -> dict[str, Any]:
    """An audit event."""
    return {
        "event_id": e.event_id,
        "chain_seq": e.chain_seq,
        "event_type": e.event_type,
        "occurred_at": iso(e.occurred_at),
        "actor": e.actor,
        "on_behalf_of": e.on_behalf_of,
        "purpose": e.purpose,
        "element_id": e.element_id,
        "version_id": e.version_id,
        "proposal_id": e.proposal_id,
        "baseline_id": e.baseline_id,
        "payload": e.payload,
        "hash": e.hash,
    }
