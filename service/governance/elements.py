"""Use cases: canonical elements, versions, relationships, retirement (erasure elsewhere)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from domain.model import (
    Element,
    Relationship,
    RelationshipKind,
    version_classification,
)
from domain.permissions import Action
from domain.values import (
    MAX_RATIONALE_CHARS,
    MAX_TITLE_CHARS,
    Classification,
    SourceKind,
    validate_body,
    validate_id,
    validate_instant,
    validate_metadata,
    validate_text,
    validate_type_key,
)
from service import results as r
from service.authz import Caller
from service.core import existing, repo_key
from service.governance.writer import ElementWriter
from service.governance.writer import element_kind as parse_element_kind
from service.kernel import Kernel, acting
from service.views import element_view, relationship_view, version_view


class Elements:
    """Canonical elements, their versions and relationships."""

    def __init__(self, k: Kernel, writer: ElementWriter) -> None:
        self.k = k
        self.writer = writer

    @acting
    def create_element(
        self,
        caller: Caller,
        repo: str,
        *,
        title: str,
        body: str,
        type_key: str = "ameide:doc",
        element_kind: str = "DOCUMENT",
        classification: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> r.ElementWithVersion:
        """A curator creates a canonical element directly (version 1 = head)."""
        key = repo_key(repo)
        title = validate_text(title, "title", MAX_TITLE_CHARS)
        body = validate_body(body)
        validate_type_key(type_key)
        kind = parse_element_kind(element_kind)
        level = Classification.parse(classification) if classification else Classification.INTERNAL
        metadata = validate_metadata(metadata)
        with self.k.uow() as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.CURATE)
            if not perm.may_act_on(Action.CURATE, level):
                top = perm.clearance_for(Action.CURATE) or perm.clearance
                raise PermissionDenied(
                    f"classification {level.value} is above your clearance {top.value}",
                    field="classification",
                )
            at = self.k.clock.now()
            el = Element.new(
                key,
                kind=kind,
                type_key=type_key,
                source_kind=SourceKind.CANONICAL,
                classification=level,
                at=at,
                by=caller.principal_id,
            )
            v1 = self.writer.new_element(
                uow, caller, el, title=title, body=body, metadata=metadata, at=at
            )
            uow.commit()
        return r.ElementWithVersion.model_validate(
            {"element": element_view(el), "version": version_view(v1, with_body=False)}
        )

    @acting
    def get_element(
        self,
        caller: Caller,
        element_id: str,
        version_id: str | None = None,
        as_of: datetime | None = None,
    ) -> r.ElementWithVersion:
        """An element with one version: the head, a given version, or the head as of an instant."""
        validate_instant(as_of, "as_of")
        with self.k.uow(readonly=True) as uow:
            el, perm = self.k.gate.element(uow, caller, element_id)
            if version_id is not None:
                validate_id(version_id, "ver", "version")
                v = uow.store.get_version(version_id)
                if v is None or v.element_id != element_id:
                    raise NotFound(f"version {version_id} not found", version_id=version_id)
            elif as_of is not None:
                v = uow.store.head_as_of(element_id, as_of)
                # a head then above the caller's clearance (the element was lowered since)
                # answers like no head at all: the error must not name the version
                hidden = v is not None and not perm.may_see(version_classification(el, v))
                if v is None or el.created_at > as_of or hidden:
                    raise NotFound(f"element {element_id} did not exist at {as_of.isoformat()}")
            else:
                v = uow.store.get_version(el.head_version_id) if el.head_version_id else None
            self.k.gate.readable_version(perm, el, v)
            parent = self.k.gate.shown_parent(uow, perm, el, v) if v else None
            self.k.audit.log_read(
                uow,
                caller,
                "element.get",
                el.repo_key,
                element_id=element_id,
                version_id=v.version_id if v else None,
            )
            uow.commit()
        view = element_view(el)
        if as_of is not None:
            view["retired_at_as_of"] = bool(el.retired_at and el.retired_at <= as_of)
        shown = {**version_view(v), "parent_version_id": parent} if v else None
        return r.ElementWithVersion.model_validate({"element": view, "version": shown})

    @acting
    def element_history(self, caller: Caller, element_id: str) -> r.ElementHistory:
        """Every version of an element, oldest first (bodies omitted)."""
        with self.k.uow(readonly=True) as uow:
            el, perm = self.k.gate.element(uow, caller, element_id)
            versions = [
                v
                for v in uow.store.list_versions(element_id)
                if perm.may_see(version_classification(el, v))
            ]
            self.k.audit.log_read(
                uow, caller, "element.history", el.repo_key, element_id=element_id
            )
            uow.commit()
        shown = {v.version_id for v in versions}  # a parent above clearance is not named
        return r.ElementHistory.model_validate(
            {
                "element": element_view(el),
                "versions": [
                    {
                        **version_view(v, with_body=False),
                        "parent_version_id": v.parent_version_id
                        if v.parent_version_id in shown
                        else None,
                    }
                    for v in versions
                ],
            }
        )

    @acting
    def retire_element(
        self, caller: Caller, element_id: str, reason: str | None = None
    ) -> r.RetiredElement:
        """Retire an element (curator); blocked by legal hold."""
        with self.k.uow() as uow:
            el, _ = self.k.gate.element(uow, caller, element_id, Action.CURATE)
            repo = existing(uow.store.get_repository(el.repo_key))
            at = self.k.clock.now()
            el.retire(at, caller.principal_id, legal_hold=repo.legal_hold)
            uow.store.retire_element(el)
            self.k.audit.event(
                uow,
                caller,
                el.repo_key,
                "element.retired",
                at,
                element_id=element_id,
                payload={
                    "reason": validate_text(reason, "reason", MAX_RATIONALE_CHARS, required=False)
                },
            )
            uow.commit()
        return r.RetiredElement.model_validate({"element": element_view(el)})

    @acting
    def add_relationship(
        self,
        caller: Caller,
        source_element_id: str,
        target_element_id: str,
        *,
        kind: str,
        type_key: str,
        metadata: dict[str, Any] | None = None,
    ) -> r.Relationship:
        """Append a relationship between two elements of one repository (curator)."""
        rel_kind = _relationship_kind(kind)
        validate_type_key(type_key)
        metadata = validate_metadata(metadata)
        with self.k.uow() as uow:
            src, _ = self.k.gate.element(uow, caller, source_element_id, Action.CURATE)
            dst, _ = self.k.gate.element(uow, caller, target_element_id)
            if src.repo_key != dst.repo_key:
                raise InvalidArgument("relationships stay inside one repository")
            pinned = metadata.get("target_version_id")
            if pinned is not None:
                v = uow.store.get_version(str(pinned))
                if v is None or v.element_id != dst.element_id:
                    raise InvalidArgument(
                        "metadata.target_version_id is not a version of the target element",
                        field="metadata.target_version_id",
                    )
            rel = Relationship.new(
                src.repo_key,
                rel_kind,
                type_key,
                src.element_id,
                dst.element_id,
                metadata,
                self.k.clock.now(),
                caller.principal_id,
            )
            self.writer.relationship(uow, caller, rel)
            uow.commit()
        return r.Relationship.model_validate(relationship_view(rel))

    @acting
    def retire_relationship(self, caller: Caller, relationship_id: str) -> r.Relationship:
        """Retire a relationship (it stays visible to earlier ``as_of`` reads)."""
        validate_id(relationship_id, "rel", "relationship")
        with self.k.uow() as uow:
            rel = uow.store.get_relationship(relationship_id)
            if rel is None:
                raise NotFound(f"relationship {relationship_id} not found")
            try:
                self.k.gate.element(uow, caller, rel.source_element_id, Action.CURATE)
            except NotFound:
                raise NotFound(f"relationship {relationship_id} not found") from None
            at = self.k.clock.now()
            if not uow.store.retire_relationship(relationship_id, at, caller.principal_id):
                raise FailedPrecondition(f"relationship {relationship_id} is already retired")
            self.k.audit.event(
                uow,
                caller,
                rel.repo_key,
                "relationship.retired",
                at,
                element_id=rel.source_element_id,
                payload={"relationship_id": relationship_id},
            )
            uow.commit()
            rel = uow.store.get_relationship(relationship_id) or rel
        return r.Relationship.model_validate(relationship_view(rel))

    @acting
    def list_relationships(
        self, caller: Caller, element_id: str, as_of: datetime | None = None
    ) -> list[r.Relationship]:
        """Relationships of an element whose other end the caller may also read."""
        validate_instant(as_of, "as_of")
        with self.k.uow(readonly=True) as uow:
            el, perm = self.k.gate.element(uow, caller, element_id)
            out = []
            for rel in uow.store.relationships_of(element_id, as_of):
                other_id = (
                    rel.target_element_id
                    if rel.source_element_id == element_id
                    else rel.source_element_id
                )
                other = uow.store.get_element(other_id)
                seen = other is not None and self.k.gate.sees(uow, caller, perm, other)
                if seen and other is not None and other.repo_key == el.repo_key:
                    out.append(relationship_view(rel))
            self.k.audit.log_read(
                uow, caller, "relationship.list", el.repo_key, element_id=element_id
            )
            uow.commit()
        return [r.Relationship.model_validate(row) for row in out]


def _relationship_kind(value: str) -> RelationshipKind:
    try:
        return RelationshipKind(value.strip().upper())
    except ValueError:
        allowed = ", ".join(k.value for k in RelationshipKind)
        raise InvalidArgument(
            f"unknown relationship_kind {value!r}; use one of: {allowed}", field="relationship_kind"
        ) from None
