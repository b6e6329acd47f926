"""Writing elements, versions and relationships, each with its audit event."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from domain.errors import InvalidArgument
from domain.model import Element, ElementVersion, Provenance, Relationship
from domain.values import ElementKind, principal_type
from service.audit_trail import AuditTrail
from service.authz import Caller
from service.core import UnitOfWork


def provenance(caller: Caller, *, tool_id: str | None = None, **extra: str | None) -> Provenance:
    """Provenance of a version written by ``caller`` (through ``tool_id``, else the caller's
    tool): who acted, and whom it acted for."""
    return Provenance(
        principal_type(caller.principal_id),
        caller.principal_id,
        tool_id or caller.tool_id,
        on_behalf_of=caller.on_behalf_of if caller.on_behalf_of != caller.principal_id else None,
        **extra,
    )


class ElementWriter:
    """Every path that creates an element or appends a relationship writes through here."""

    def __init__(self, audit: AuditTrail) -> None:
        self.audit = audit

    def new_element(
        self,
        uow: UnitOfWork,
        caller: Caller,
        el: Element,
        *,
        title: str,
        body: str,
        metadata: dict[str, Any],
        at: datetime,
        provenance: Provenance | None = None,
    ) -> ElementVersion:
        """Insert an element with version 1 as its head, and audit it."""
        v1 = el.next_version(
            title=title,
            body=body,
            metadata=metadata,
            at=at,
            provenance=provenance or _provenance(caller),
        )
        uow.store.insert_element(el, head=v1)  # new: nobody else can move its head yet
        uow.store.insert_version(v1)
        el.head_version_id, el.head_seq = v1.version_id, v1.seq
        self.audit.event(
            uow,
            caller,
            el.repo_key,
            "element.created",
            at,
            element_id=el.element_id,
            version_id=v1.version_id,
            payload=created_payload(el, v1),
        )
        return v1

    def relationship(self, uow: UnitOfWork, caller: Caller, rel: Relationship) -> None:
        """Append a relationship and audit it."""
        self.relationships(uow, caller, [rel])

    def relationships(self, uow: UnitOfWork, caller: Caller, rels: Sequence[Relationship]) -> None:
        """Append relationships in one statement, each with its own audit event."""
        uow.store.insert_relationships(rels)
        for rel in rels:
            self.audit.event(
                uow,
                caller,
                rel.repo_key,
                "relationship.added",
                rel.recorded_at,
                element_id=rel.source_element_id,
                payload={
                    "relationship_id": rel.relationship_id,
                    "type_key": rel.type_key,
                    "kind": rel.relationship_kind.value,
                    "target_element_id": rel.target_element_id,
                    "target_version_id": rel.target_version_id,
                },
            )


_provenance = provenance  # ``new_element``'s keyword shadows the function


def created_payload(el: Element, v1: ElementVersion) -> dict[str, Any]:
    """The ``element.created`` audit payload (every path that creates an element writes it)."""
    return {
        "type_key": el.type_key,
        "source_kind": el.source_kind.value,
        "classification": el.classification.value,
        "content_sha256": v1.content_sha256,
    }


def element_kind(value: str) -> str:
    """An ``ElementKind`` value from user input (INVALID_ARGUMENT listing the kinds)."""
    try:
        return ElementKind(value.strip().upper()).value
    except ValueError:
        allowed = ", ".join(k.value for k in ElementKind)
        raise InvalidArgument(
            f"unknown element_kind {value!r}; use one of: {allowed}", field="element_kind"
        ) from None
