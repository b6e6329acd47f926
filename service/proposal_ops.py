"""Use cases: propose, revise, rebase, accept, reject, withdraw, and the proposal views."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from domain.errors import (
    AlreadyExists,
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    StaleProposal,
)
from domain.merge import three_way_merge, unified_diff
from domain.model import (
    ACCEPTED_AS,
    DECISION_TYPE,
    PROPOSAL_TYPE,
    REBASED_TO,
    REJECTED_BECAUSE,
    TARGETS_VERSION,
    ChangeKind,
    Element,
    ElementVersion,
    Proposal,
    ProposalStatus,
    Relationship,
    RelationshipKind,
    SelectorKind,
    TargetSelector,
    has_conflict_markers,
)
from domain.permissions import Action
from domain.values import (
    MAX_RATIONALE_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
    Classification,
    SourceKind,
    new_id,
    validate_body,
    validate_id,
    validate_metadata,
    validate_text,
    validate_type_key,
)
from service.authz import Caller, Permission
from service.core import UnitOfWork, existing
from service.element_ops import ElementOps, _element_kind
from service.views import proposal_view, version_view


class ProposalOps(ElementOps):
    """The governed write path."""

    # -- helpers -------------------------------------------------------------------------
    def _load(
        self, uow: UnitOfWork, caller: Caller, proposal_id: str
    ) -> tuple[Proposal, Permission]:
        validate_id(proposal_id, "prop", "proposal")
        p = uow.store.get_proposal(proposal_id)
        missing = NotFound(f"proposal {proposal_id} not found", proposal_id=proposal_id)
        if p is None:
            raise missing
        try:
            _, perm = self.visible_element(uow, caller, p.element_id)
        except NotFound:
            raise missing from None
        own = p.proposed_by.actor_id in (caller.principal_id, caller.on_behalf_of)
        if not (perm.can(Action.CURATE) or (own and perm.can(Action.PROPOSE))):
            raise missing
        return p, perm

    def _decision(
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
        v = self.write_new_element(
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

    def _pin(
        self,
        uow: UnitOfWork,
        caller: Caller,
        repo_key: str,
        type_key: str,
        source: str,
        target: str,
        version_id: str,
        at: datetime,
    ) -> None:
        rel = Relationship.new(
            repo_key,
            RelationshipKind.REFERENCE,
            type_key,
            source,
            target,
            {"target_version_id": version_id},
            at,
            caller.principal_id,
        )
        self.write_relationship(uow, caller, rel)

    def _open(
        self,
        uow: UnitOfWork,
        caller: Caller,
        p: Proposal,
        *,
        title: str,
        body: str,
        metadata: dict[str, Any],
        classification: Classification,
        create_spec: dict[str, Any] | None = None,
    ) -> ElementVersion:
        """Write the proposal element, its record and its pin."""
        el = Element.new(
            p.repo_key,
            kind="NOTE",
            type_key=PROPOSAL_TYPE,
            source_kind=SourceKind.PROPOSAL,
            classification=classification,
            at=p.created_at,
            by=p.proposed_by.actor_id,
            element_id=p.element_id,
        )
        v = self.write_new_element(
            uow,
            caller,
            el,
            title=title,
            body=body,
            metadata=metadata,
            at=p.created_at,
            provenance=self.provenance(caller),
        )
        uow.store.insert_proposal(p, create_spec)
        if p.change_kind is ChangeKind.UPDATE:
            assert p.target_element_id
            assert p.target_version_id
            self._pin(
                uow,
                caller,
                p.repo_key,
                TARGETS_VERSION,
                el.element_id,
                p.target_element_id,
                p.target_version_id,
                p.created_at,
            )
        self.event(
            uow,
            caller,
            p.repo_key,
            "proposal.opened",
            p.created_at,
            element_id=p.target_element_id or el.element_id,
            proposal_id=p.proposal_id,
            version_id=v.version_id,
            payload={
                "change_kind": p.change_kind.value,
                "target_version_id": p.target_version_id,
                "has_conflicts": p.has_conflicts,
                "rebased_from": p.rebased_from,
            },
        )
        return v

    def _selected_version(self, uow: UnitOfWork, p: Proposal) -> str | None:
        sel = p.target_selector
        bl_id = (
            uow.store.get_pointer(p.repo_key)[0]
            if sel.kind is SelectorKind.PUBLISHED
            else sel.baseline_id
        )
        baseline = uow.store.get_baseline(bl_id) if bl_id else None
        return baseline.pins.get(p.target_element_id or "") if baseline else None

    def _view(self, uow: UnitOfWork, p: Proposal, *, with_diff: bool = True) -> dict[str, Any]:
        view = proposal_view(p)
        body_el = existing(uow.store.get_element(p.element_id))
        body_v = existing(uow.store.get_version(existing(body_el.head_version_id)))
        head = None
        if p.target_element_id:
            head = existing(uow.store.get_element(p.target_element_id)).head_version_id
        view.update(
            title=body_v.title,
            body=body_v.body,
            metadata=body_v.metadata,
            proposal_version_id=body_v.version_id,
            current_head_version_id=head,
            stale=p.is_stale(head),
            selected_version_id=self._selected_version(uow, p),
        )
        if with_diff:
            base = uow.store.get_version(p.target_version_id) if p.target_version_id else None
            view["diff"] = unified_diff(
                base.body if base else "",
                body_v.body,
                p.target_version_id or "/dev/null",
                "proposal",
            )
        return view

    # -- use cases -----------------------------------------------------------------------
    def propose(
        self,
        caller: Caller,
        repo: str,
        *,
        body: str,
        summary: str,
        title: str | None = None,
        element_id: str | None = None,
        target_version_id: str | None = None,
        change_kind: str = "UPDATE",
        selector: str = "published",
        baseline_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        client_request_id: str | None = None,
        type_key: str = "ameide:doc",
        element_kind: str = "DOCUMENT",
        classification: str | None = None,
    ) -> dict[str, Any]:
        """Open a proposal (UPDATE pinned to a target version, or CREATE); idempotent with
        ``client_request_id`` — a repeat returns the original with ``replay: true``."""
        key = self.repo_key(repo)
        kind = _change_kind(change_kind)
        body = validate_body(body)
        summary = validate_text(summary, "summary", MAX_SUMMARY_CHARS)
        metadata = validate_metadata(metadata)
        sel = TargetSelector(_selector_kind(selector), baseline_id)
        if client_request_id is not None:
            client_request_id = validate_text(client_request_id, "client_request_id", 200)
        fingerprint = hashlib.sha256(
            json.dumps(
                [
                    kind.value,
                    element_id,
                    target_version_id,
                    title,
                    body,
                    summary,
                    sel.kind.value,
                    baseline_id,
                    metadata,
                    type_key,
                    element_kind,
                    classification,
                ],
                sort_keys=True,
                default=str,
            ).encode()
        ).hexdigest()
        with self._uow() as uow:
            perm = self.gate(uow, caller, key, Action.PROPOSE)
            if client_request_id:
                prior = uow.store.get_idempotency(key, caller.principal_id, client_request_id)
                if prior is not None:
                    if prior.request_fingerprint != fingerprint:
                        raise AlreadyExists(
                            "client_request_id was already used for a different proposal",
                            client_request_id=client_request_id,
                        )
                    view = self._view(uow, existing(uow.store.get_proposal(prior.proposal_id)))
                    return {**view, "replay": True}
            at = self.clock.now()
            if sel.baseline_id:
                validate_id(sel.baseline_id, "bl", "baseline")
                bl = uow.store.get_baseline(sel.baseline_id)
                if bl is None or bl.repo_key != key:
                    raise NotFound(f"baseline {sel.baseline_id} not found")
            if kind is ChangeKind.UPDATE:
                p, level, title_, create_spec = self._update_target(
                    uow, caller, perm, key, element_id, target_version_id, title, at
                )
            else:
                level = (
                    Classification.parse(classification)
                    if classification
                    else Classification.INTERNAL
                )
                if not (
                    perm.may_act_on(Action.PROPOSE, level) or perm.may_act_on(Action.CURATE, level)
                ):
                    raise InvalidArgument(
                        "classification is above your clearance", field="classification"
                    )
                title_ = validate_text(title, "title", MAX_TITLE_CHARS)
                create_spec = {
                    "type_key": validate_type_key(type_key),
                    "element_kind": _element_kind(element_kind),
                    "classification": level.value,
                }
                p = None
            p = p or Proposal(
                new_id("prop"), key, new_id("el"), kind, summary, self.provenance(caller), at, sel
            )
            p.summary, p.target_selector, p.client_request_id = summary, sel, client_request_id
            self._open(
                uow,
                caller,
                p,
                title=title_,
                body=body,
                metadata=metadata,
                classification=level,
                create_spec=create_spec,
            )
            if client_request_id:
                uow.store.insert_idempotency(
                    key, caller.principal_id, client_request_id, fingerprint, p.proposal_id, at
                )
            view = self._view(uow, p)
            uow.commit()
        return {**view, "replay": False}

    def _update_target(
        self,
        uow: UnitOfWork,
        caller: Caller,
        perm: Permission,
        key: str,
        element_id: str | None,
        target_version_id: str | None,
        title: str | None,
        at: datetime,
    ) -> tuple[Proposal, Classification, str, None]:
        if not element_id or not target_version_id:
            raise InvalidArgument(
                "an UPDATE proposal must be pinned: give the target element "
                "and the target version it was written against",
                field="target_version_id",
            )
        target, _ = self.visible_element(uow, caller, element_id)
        if target.repo_key != key:
            raise NotFound(f"element {element_id} not found", element_id=element_id)
        if target.source_kind is not SourceKind.CANONICAL:
            raise InvalidArgument(
                f"element {element_id} is {target.source_kind.value}; only "
                "canonical elements take proposals",
                field="element_id",
            )
        if target.retired:
            raise FailedPrecondition(f"element {element_id} is retired")
        validate_id(target_version_id, "ver", "version")
        pinned = uow.store.get_version(target_version_id)
        if pinned is None or pinned.element_id != element_id:
            raise NotFound(f"version {target_version_id} of element {element_id} not found")
        title_ = validate_text(title, "title", MAX_TITLE_CHARS) if title else pinned.title
        p = Proposal(
            new_id("prop"),
            key,
            new_id("el"),
            ChangeKind.UPDATE,
            "-",
            self.provenance(caller),
            at,
            target_element_id=element_id,
            target_version_id=target_version_id,
        )
        return p, target.classification, title_, None

    def proposal_show(self, caller: Caller, proposal_id: str) -> dict[str, Any]:
        """A proposal with staleness, current head, selected version and the diff vs target."""
        with self._uow(readonly=True) as uow:
            p, _ = self._load(uow, caller, proposal_id)
            view = self._view(uow, p)
            self.log_read(uow, caller, "proposal.show", p.repo_key, proposal_id=proposal_id)
            uow.commit()
        return view

    def proposal_list(
        self, caller: Caller, repo: str, status: str | None = None
    ) -> list[dict[str, Any]]:
        """The queue: all proposals for curators, one's own for agents."""
        key = self.repo_key(repo)
        st = _status(status) if status else None
        with self._uow(readonly=True) as uow:
            perm = self.gate(uow, caller, key, Action.READ)
            if not (perm.can(Action.CURATE) or perm.can(Action.PROPOSE)):
                raise PermissionDenied(f"{caller.principal_id} may not list proposals in {key}")
            mine = None if perm.can(Action.CURATE) else caller.principal_id
            items = [
                self._view(uow, p, with_diff=False) for p in uow.store.list_proposals(key, st, mine)
            ]
            self.log_read(uow, caller, "proposal.list", key, status=status)
            uow.commit()
        return [{k: v for k, v in i.items() if k != "body"} for i in items]

    def revise(
        self,
        caller: Caller,
        proposal_id: str,
        body: str,
        summary: str | None = None,
        title: str | None = None,
    ) -> dict[str, Any]:
        """Replace the body of an OPEN proposal (its proposer or a curator); audited."""
        body = validate_body(body)
        with self._uow() as uow:
            p, perm = self._load(uow, caller, proposal_id)
            self._own_or_curator(p, perm, caller, "revise")
            p.ensure_open()
            el = existing(uow.store.get_element(p.element_id))
            cur = existing(uow.store.get_version(existing(el.head_version_id)))
            at = self.clock.now()
            v = el.next_version(
                title=validate_text(title, "title", MAX_TITLE_CHARS) if title else cur.title,
                body=body,
                metadata=cur.metadata,
                at=at,
                provenance=self.provenance(caller),
            )
            if not uow.store.move_head(el.element_id, cur.version_id, v):
                raise Conflict(f"proposal {proposal_id} was revised concurrently; retry")
            uow.store.insert_version(v)
            if summary is not None:
                p.summary = validate_text(summary, "summary", MAX_SUMMARY_CHARS)
            p.has_conflicts = has_conflict_markers(body)
            if not uow.store.save_proposal(p, ProposalStatus.OPEN):
                raise Conflict(f"proposal {proposal_id} changed concurrently; retry")
            self.event(
                uow,
                caller,
                p.repo_key,
                "proposal.revised",
                at,
                element_id=p.target_element_id or p.element_id,
                proposal_id=proposal_id,
                version_id=v.version_id,
                payload={"has_conflicts": p.has_conflicts},
            )
            view = self._view(uow, p)
            uow.commit()
        return view

    @staticmethod
    def _own_or_curator(p: Proposal, perm: Permission, caller: Caller, verb: str) -> None:
        own = p.proposed_by.actor_id in (caller.principal_id, caller.on_behalf_of)
        if not (perm.can(Action.CURATE) or (own and perm.can(Action.PROPOSE))):
            raise PermissionDenied(f"only the proposer or a curator may {verb} {p.proposal_id}")

    def accept(
        self, caller: Caller, proposal_id: str, rationale: str | None = None
    ) -> dict[str, Any]:
        """Accept a fresh, clean, OPEN proposal: new version, head CAS, accepted_as, decision."""
        rationale = validate_text(rationale, "rationale", MAX_RATIONALE_CHARS, required=False)
        with self._uow() as uow:
            p, perm = self._load(uow, caller, proposal_id)
            body_el = existing(uow.store.get_element(p.element_id))
            if not perm.may_act_on(Action.CURATE, body_el.classification):
                raise PermissionDenied(f"{caller.principal_id} may not accept proposals")
            proposed = existing(uow.store.get_version(existing(body_el.head_version_id)))
            at = self.clock.now()
            if p.change_kind is ChangeKind.UPDATE:
                target = existing(uow.store.get_element(existing(p.target_element_id)))
                p.ensure_acceptable(target.head_version_id)
            else:
                p.ensure_acceptable(None)
                spec = uow.store.get_create_spec(proposal_id)
                target = Element.new(
                    p.repo_key,
                    kind=spec["element_kind"],
                    type_key=spec["type_key"],
                    source_kind=SourceKind.CANONICAL,
                    classification=Classification(spec["classification"]),
                    at=at,
                    by=caller.principal_id,
                )
                uow.store.insert_element(target)
                self.event(
                    uow,
                    caller,
                    p.repo_key,
                    "element.created",
                    at,
                    element_id=target.element_id,
                    proposal_id=proposal_id,
                )
            new_v = target.next_version(
                title=proposed.title,
                body=proposed.body,
                metadata=proposed.metadata,
                at=at,
                provenance=p.proposed_by,
            )
            if not uow.store.move_head(target.element_id, target.head_version_id, new_v):
                current = existing(uow.store.get_element(target.element_id)).head_version_id
                raise StaleProposal(
                    f"proposal {proposal_id} lost a race: the head of {target.element_id} is now "
                    f"{current}; rebase it",
                    current_head_version_id=current,
                    target_version_id=p.target_version_id,
                )
            uow.store.insert_version(new_v)
            p.close(ProposalStatus.ACCEPTED, at, caller.principal_id)
            p.result_version_id = new_v.version_id
            p.target_element_id = target.element_id
            if not uow.store.save_proposal(p, ProposalStatus.OPEN):
                raise Conflict(f"proposal {proposal_id} was decided concurrently")
            self.event(
                uow,
                caller,
                p.repo_key,
                "version.created",
                at,
                element_id=target.element_id,
                version_id=new_v.version_id,
                proposal_id=proposal_id,
                payload={"seq": new_v.seq, "content_sha256": new_v.content_sha256},
            )
            self._pin(
                uow,
                caller,
                p.repo_key,
                ACCEPTED_AS,
                p.element_id,
                target.element_id,
                new_v.version_id,
                at,
            )
            dec = self._decision(
                uow,
                caller,
                p.repo_key,
                "ACCEPT",
                rationale,
                at,
                target.classification,
                proposal_id=proposal_id,
            )
            self.event(
                uow,
                caller,
                p.repo_key,
                "proposal.accepted",
                at,
                element_id=target.element_id,
                version_id=new_v.version_id,
                proposal_id=proposal_id,
                payload={"decision_element_id": dec.element_id},
            )
            view = self._view(uow, p)
            uow.commit()
        return {**view, "decision_element_id": dec.element_id}

    def reject(self, caller: Caller, proposal_id: str, rationale: str) -> dict[str, Any]:
        """Reject with a required rationale; links ``rejected_because`` to the decision."""
        rationale = validate_text(rationale, "rationale", MAX_RATIONALE_CHARS)
        return self._close(caller, proposal_id, ProposalStatus.REJECTED, "REJECT", rationale)

    def withdraw(
        self, caller: Caller, proposal_id: str, rationale: str | None = None
    ) -> dict[str, Any]:
        """The proposer withdraws their own OPEN proposal."""
        rationale = validate_text(rationale, "rationale", MAX_RATIONALE_CHARS, required=False)
        return self._close(caller, proposal_id, ProposalStatus.WITHDRAWN, "WITHDRAW", rationale)

    def _close(
        self, caller: Caller, proposal_id: str, status: ProposalStatus, kind: str, rationale: str
    ) -> dict[str, Any]:
        with self._uow() as uow:
            p, perm = self._load(uow, caller, proposal_id)
            if status is ProposalStatus.REJECTED and not perm.can(Action.CURATE):
                raise PermissionDenied(f"{caller.principal_id} may not reject proposals")
            if status is ProposalStatus.WITHDRAWN and p.proposed_by.actor_id not in (
                caller.principal_id,
                caller.on_behalf_of,
            ):
                raise PermissionDenied("only the proposer may withdraw a proposal")
            at = self.clock.now()
            p.close(status, at, caller.principal_id)
            if not uow.store.save_proposal(p, ProposalStatus.OPEN):
                raise Conflict(f"proposal {proposal_id} was decided concurrently")
            el = existing(uow.store.get_element(p.element_id))
            dec = self._decision(
                uow,
                caller,
                p.repo_key,
                kind,
                rationale,
                at,
                el.classification,
                proposal_id=proposal_id,
            )
            if status is ProposalStatus.REJECTED:
                self._pin(
                    uow,
                    caller,
                    p.repo_key,
                    REJECTED_BECAUSE,
                    p.element_id,
                    dec.element_id,
                    dec.version_id,
                    at,
                )
            self.event(
                uow,
                caller,
                p.repo_key,
                f"proposal.{status.value.lower()}",
                at,
                element_id=p.target_element_id or p.element_id,
                proposal_id=proposal_id,
                payload={"decision_element_id": dec.element_id, "rationale": rationale},
            )
            view = self._view(uow, p)
            uow.commit()
        return {**view, "decision_element_id": dec.element_id}

    def rebase(self, caller: Caller, proposal_id: str) -> dict[str, Any]:
        """New OPEN proposal on the current head with a three-way-merged body; old → REBASED."""
        with self._uow() as uow:
            old, perm = self._load(uow, caller, proposal_id)
            self._own_or_curator(old, perm, caller, "rebase")
            old.ensure_open()
            if old.change_kind is not ChangeKind.UPDATE:
                raise FailedPrecondition("only UPDATE proposals can be rebased")
            target = existing(uow.store.get_element(existing(old.target_element_id)))
            if not old.is_stale(target.head_version_id):
                raise FailedPrecondition(
                    f"proposal {proposal_id} is already on the current head "
                    f"{target.head_version_id}"
                )
            base = existing(uow.store.get_version(existing(old.target_version_id)))
            head = existing(uow.store.get_version(existing(target.head_version_id)))
            mine_el = existing(uow.store.get_element(old.element_id))
            mine = existing(uow.store.get_version(existing(mine_el.head_version_id)))
            merged = three_way_merge(base.body, head.body, mine.body)
            title = head.title if mine.title == base.title else mine.title
            at = self.clock.now()
            new = Proposal(
                new_id("prop"),
                old.repo_key,
                new_id("el"),
                ChangeKind.UPDATE,
                old.summary,
                old.proposed_by,
                at,
                old.target_selector,
                target.element_id,
                head.version_id,
                has_conflicts=merged.has_conflicts,
                rebased_from=old.proposal_id,
            )
            new_v = self._open(
                uow,
                caller,
                new,
                title=title,
                body=merged.body,
                metadata=mine.metadata,
                classification=target.classification,
            )
            old.close(ProposalStatus.REBASED, at, caller.principal_id)
            old.rebased_to = new.proposal_id
            if not uow.store.save_proposal(old, ProposalStatus.OPEN):
                raise Conflict(f"proposal {proposal_id} was decided concurrently")
            self._pin(
                uow,
                caller,
                old.repo_key,
                REBASED_TO,
                old.element_id,
                new.element_id,
                new_v.version_id,
                at,
            )
            dec = self._decision(
                uow,
                caller,
                old.repo_key,
                "REBASE",
                f"rebased onto {head.version_id} as {new.proposal_id}"
                + (" (with conflicts)" if merged.has_conflicts else ""),
                at,
                target.classification,
                proposal_id=proposal_id,
            )
            self.event(
                uow,
                caller,
                old.repo_key,
                "proposal.rebased",
                at,
                element_id=target.element_id,
                proposal_id=proposal_id,
                payload={
                    "rebased_to": new.proposal_id,
                    "onto": head.version_id,
                    "has_conflicts": merged.has_conflicts,
                    "decision_element_id": dec.element_id,
                },
            )
            view = self._view(uow, new)
            uow.commit()
        return {
            **view,
            "rebased_from_view": {"proposal_id": proposal_id, "status": "REBASED"},
            "version": version_view(new_v, with_body=False),
        }


def _change_kind(value: str) -> ChangeKind:
    try:
        return ChangeKind(value.strip().upper())
    except ValueError:
        raise InvalidArgument(
            f"unknown change_kind {value!r}; use UPDATE or CREATE", field="change_kind"
        ) from None


def _selector_kind(value: str) -> SelectorKind:
    try:
        return SelectorKind(value.strip().lower())
    except ValueError:
        raise InvalidArgument(
            f"unknown target selector {value!r}; use published or baseline_ref",
            field="target_selector",
        ) from None


def _status(value: str) -> ProposalStatus:
    try:
        return ProposalStatus(value.strip().upper())
    except ValueError:
        allowed = ", ".join(s.value for s in ProposalStatus)
        raise InvalidArgument(
            f"unknown status {value!r}; use one of: {allowed}", field="status"
        ) from None
