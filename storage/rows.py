"""Row ↔ domain mapping: one function per table shape, shared by the ``Store`` mixins.

The mappers live here, not in ``storage.store``, so the mixins (``store_governance``,
``store_ingest``) and the core store import them without importing each other.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC
from typing import Any

from sqlalchemy.engine import Connection, Row

from domain.audit import AuditEvent
from domain.model import (
    ChangeKind,
    Element,
    ElementVersion,
    Proposal,
    ProposalStatus,
    Provenance,
    Relationship,
    RelationshipKind,
    SelectorKind,
    TargetSelector,
)
from domain.permissions import TokenRecord
from domain.values import Classification, SourceKind


def element_row(el: Element, head: ElementVersion | None = None) -> dict[str, Any]:
    """An ``elements`` row; its head is ``head`` (inserted with it) or none yet."""
    return {
        "element_id": el.element_id,
        "repo_key": el.repo_key,
        "element_kind": el.element_kind,
        "type_key": el.type_key,
        "source_kind": el.source_kind.value,
        "classification": el.classification.value,
        "created_at": el.created_at,
        "created_by": el.created_by,
        "head_version_id": head.version_id if head else None,
        "head_seq": head.seq if head else 0,
    }


def version_row(v: ElementVersion) -> dict[str, Any]:
    """An ``element_versions`` row, provenance included."""
    p = v.provenance
    return {
        "version_id": v.version_id,
        "element_id": v.element_id,
        "seq": v.seq,
        "parent_version_id": v.parent_version_id,
        "title": v.title,
        "body": v.body,
        "metadata": v.metadata,
        "content_sha256": v.content_sha256,
        "recorded_at": v.recorded_at,
        "actor_type": p.actor_type,
        "actor_id": p.actor_id,
        "tool_id": p.tool_id,
        "on_behalf_of": p.on_behalf_of,
        "source_repo": p.source_repo,
        "commit_sha": p.commit_sha,
        "path": p.path,
        "classification": v.classification.value if v.classification else None,
    }


def relationship_row(r: Relationship) -> dict[str, Any]:
    """Column values for inserting a relationship."""
    return {
        "relationship_id": r.relationship_id,
        "repo_key": r.repo_key,
        "relationship_kind": r.relationship_kind.value,
        "type_key": r.type_key,
        "source_element_id": r.source_element_id,
        "target_element_id": r.target_element_id,
        "metadata": r.metadata,
        "recorded_at": r.recorded_at,
        "recorded_by": r.recorded_by,
    }


def element_as_stored(el: Element, head: ElementVersion | None = None) -> Element:
    """``el`` as reading back the row ``element_row(el, head)`` inserted gives it."""
    return replace(
        el,
        created_at=el.created_at.astimezone(UTC),
        head_version_id=head.version_id if head else None,
        head_seq=head.seq if head else 0,
        retired_at=None,
        retired_by=None,
    )


def version_as_stored(v: ElementVersion) -> ElementVersion:
    """``v`` as reading back the row ``version_row(v)`` inserted gives it: its metadata through
    JSON, its time in UTC, erasure unset."""
    return replace(
        v,
        metadata=json.loads(json.dumps(v.metadata)) if v.metadata else {},
        recorded_at=v.recorded_at.astimezone(UTC),
        erased_at=None,
        erased_by=None,
        erasure_reason=None,
    )


def element_from_row(r: Row[Any]) -> Element:
    """Map an ``elements`` row."""
    return Element(
        element_id=r.element_id,
        repo_key=r.repo_key,
        element_kind=r.element_kind,
        type_key=r.type_key,
        source_kind=SourceKind(r.source_kind),
        classification=Classification(r.classification),
        created_at=r.created_at,
        created_by=r.created_by,
        head_version_id=r.head_version_id,
        head_seq=r.head_seq,
        retired_at=r.retired_at,
        retired_by=r.retired_by,
    )


def version_from_row(r: Row[Any]) -> ElementVersion:
    """Map an ``element_versions`` row."""
    return ElementVersion(
        version_id=r.version_id,
        element_id=r.element_id,
        seq=r.seq,
        parent_version_id=r.parent_version_id,
        title=r.title,
        body=r.body,
        metadata=dict(r.metadata or {}),
        content_sha256=r.content_sha256,
        recorded_at=r.recorded_at,
        provenance=Provenance(
            r.actor_type,
            r.actor_id,
            r.tool_id,
            r.source_repo,
            r.commit_sha,
            r.path,
            on_behalf_of=r.on_behalf_of,
        ),
        erased_at=r.erased_at,
        erased_by=r.erased_by,
        erasure_reason=r.erasure_reason,
        classification=Classification(r.classification) if r.classification else None,
    )


def relationship_from_row(r: Row[Any]) -> Relationship:
    """Map a ``relationships`` row."""
    return Relationship(
        relationship_id=r.relationship_id,
        repo_key=r.repo_key,
        relationship_kind=RelationshipKind(r.relationship_kind),
        type_key=r.type_key,
        source_element_id=r.source_element_id,
        target_element_id=r.target_element_id,
        metadata=dict(r.metadata or {}),
        recorded_at=r.recorded_at,
        recorded_by=r.recorded_by,
        retired_at=r.retired_at,
        retired_by=r.retired_by,
    )


def event_from_row(r: Row[Any]) -> AuditEvent:
    """Map an ``audit_events`` row."""
    return AuditEvent(
        chain_key=r.chain_key,
        event_type=r.event_type,
        occurred_at=r.occurred_at,
        actor=r.actor,
        on_behalf_of=r.on_behalf_of,
        purpose=r.purpose,
        element_id=r.element_id,
        version_id=r.version_id,
        proposal_id=r.proposal_id,
        baseline_id=r.baseline_id,
        payload=dict(r.payload or {}),
        event_id=r.event_id,
        chain_seq=r.chain_seq,
        prev_hash=r.prev_hash,
        hash=r.hash,
    )


def token_from_row(r: Row[Any]) -> TokenRecord:
    """Map a ``tokens`` row (never its hash)."""
    return TokenRecord(
        r.token_id,
        r.principal_id,
        r.created_at,
        r.created_by,
        r.revoked_at,
        r.parent_token_id,
        r.revoked_by,
    )


def proposal_from_row(r: Row[Any]) -> Proposal:
    """Map a ``proposals`` row."""
    return Proposal(
        proposal_id=r.proposal_id,
        repo_key=r.repo_key,
        element_id=r.element_id,
        change_kind=ChangeKind(r.change_kind),
        summary=r.summary,
        proposed_by=Provenance(
            r.proposer_actor_type,
            r.proposer_actor_id,
            r.proposer_tool_id,
            on_behalf_of=r.proposer_on_behalf_of,
        ),
        created_at=r.created_at,
        target_selector=TargetSelector(SelectorKind(r.selector_kind), r.selector_baseline_id),
        target_element_id=r.target_element_id,
        target_version_id=r.target_version_id,
        status=ProposalStatus(r.status),
        has_conflicts=bool(r.has_conflicts),
        client_request_id=r.client_request_id,
        rebased_from=r.rebased_from,
        rebased_to=r.rebased_to,
        result_version_id=r.result_version_id,
        decided_at=r.decided_at,
        decided_by=r.decided_by,
    )


def proposal_values(p: Proposal) -> dict[str, Any]:
    """The mutable columns of a ``proposals`` row (what ``save_proposal`` updates)."""
    return {
        "status": p.status.value,
        "summary": p.summary,
        "has_conflicts": p.has_conflicts,
        "rebased_to": p.rebased_to,
        "result_version_id": p.result_version_id,
        "target_element_id": p.target_element_id,
        "decided_at": p.decided_at,
        "decided_by": p.decided_by,
    }


def dialect_insert(conn: Connection, table: Any) -> Any:
    """An ``INSERT`` into ``table`` of ``conn``'s dialect, which has ``on_conflict_do_*``
    (PostgreSQL's or SQLite's). The dialect's module is imported here, when first needed: a
    command on SQLite never loads PostgreSQL's (about 25 ms of a CLI start)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)
