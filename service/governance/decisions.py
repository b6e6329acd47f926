"""Decisions: the artifact every curation and publishing decision leaves, its pins, and the
one step that concludes a proposal (accept, reject, withdraw, rebase)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from domain.errors import Conflict
from domain.model import (
    DECISION_TYPE,
    Element,
    ElementVersion,
    Proposal,
    ProposalStatus,
    Relationship,
    RelationshipKind,
)
from domain.values import Classification, SourceKind, new_id
from service.audit_trail import AuditTrail
from service.authz import Caller
from service.core import UnitOfWork
from service.governance.writer import ElementWriter


@dataclass(frozen=True)
class Pin:
    """A curation relationship pinned to one version: ``source`` → ``target`` @ ``version_id``."""

    type_key: str
    source: str
    target: str
    version_id: str


@dataclass(frozen=True)
class Outcome:
    """How a proposal was concluded: what the decision says and what gets linked and audited.

    ``pin`` is written before the decision (accepted_as, rebased_to); ``pin_to_decision`` names
    a relationship type from the proposal to the decision itself (rejected_because)."""

    kind: str
    rationale: str
    classification: Classification
    event_type: str
    element_id: str
    pin: Pin | None = None
    pin_to_decision: str | None = None
    version_id: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)


class Decisions:
    """Writes decision elements and pins, and concludes proposals."""

    def __init__(self, writer: ElementWriter, audit: AuditTrail) -> None:
        self.writer = writer
        self.audit = audit

    def conclude(
        self, uow: UnitOfWork, caller: Caller, p: Proposal, at: datetime, outcome: Outcome
    ) -> ElementVersion:
        """Save the closed proposal (compare-and-swap on OPEN), pin, decide, audit."""
        if not uow.store.save_proposal(p, ProposalStatus.OPEN):
            raise Conflict(f"proposal {p.proposal_id} was decided concurrently")
        if outcome.pin is not None:
            self.pin(uow, caller, p.repo_key, outcome.pin, at)
        dec = self.record(
            uow,
            caller,
            p.repo_key,
            outcome.kind,
            outcome.rationale,
            at,
            outcome.classification,
            proposal_id=p.proposal_id,
        )
        if outcome.pin_to_decision is not None:
            link = Pin(outcome.pin_to_decision, p.element_id, dec.element_id, dec.version_id)
            self.pin(uow, caller, p.repo_key, link, at)
        self.audit.event(
            uow,
            caller,
            p.repo_key,
            outcome.event_type,
            at,
            element_id=outcome.element_id,
            version_id=outcome.version_id,
            proposal_id=p.proposal_id,
            payload={**outcome.payload, "decision_element_id": dec.element_id},
        )
        return dec

    def record(
        self,
        uow: UnitOfWork,
        caller: Caller,
        repo_key: str,
        kind: str,
        rationale: str,
        at: datetime,
        classification: Classification,
        proposal_id: str | None = None,
        baseline_id: str | None = None,
    ) -> ElementVersion:
        """Write the decision artifact (an element plus a decision row)."""
        el = Element.new(
            repo_key,
            kind="NOTE",
            type_key=DECISION_TYPE,
            source_kind=SourceKind.DECISION,
            classification=classification,
            at=at,
            by=caller.principal_id,
        )
        subject = f"proposal {proposal_id}" if proposal_id else f"baseline {baseline_id}"
        body = (
            f"# Decision: {kind} {subject}\n\n- by: {caller.principal_id}\n"
            f"- on behalf of: {caller.on_behalf_of or '-'}\n- at: {at.isoformat()}\n"
            f"- purpose: {caller.purpose or '-'}\n\n## Rationale\n\n{rationale or '-'}\n"
        )
        v = self.writer.new_element(
            uow,
            caller,
            el,
            title=f"Decision: {kind} {subject}",
            body=body,
            metadata={"decision": kind},
            at=at,
        )
        uow.store.insert_decision(
            {
                "decision_id": new_id("dec"),
                "repo_key": repo_key,
                "element_id": el.element_id,
                "kind": kind,
                "proposal_id": proposal_id,
                "baseline_id": baseline_id,
                "actor": caller.principal_id,
                "on_behalf_of": caller.on_behalf_of,
                "rationale": rationale,
                "at": at,
            }
        )
        return v

    def pin(self, uow: UnitOfWork, caller: Caller, repo_key: str, pin: Pin, at: datetime) -> None:
        """Append a curation relationship pinned to a version."""
        rel = Relationship.new(
            repo_key,
            RelationshipKind.REFERENCE,
            pin.type_key,
            pin.source,
            pin.target,
            {"target_version_id": pin.version_id},
            at,
            caller.principal_id,
        )
        self.writer.relationship(uow, caller, rel)
