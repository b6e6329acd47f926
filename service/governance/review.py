"""Use cases: deciding proposals — accept, reject, withdraw, rebase.

Each ends in the one shared step, ``Decisions.conclude``: save the closed proposal with a
compare-and-swap on OPEN, pin, write the decision, audit."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from domain.errors import Conflict, FailedPrecondition, PermissionDenied, StaleProposal
from domain.merge import three_way_merge
from domain.model import (
    ACCEPTED_AS,
    REBASED_TO,
    REJECTED_BECAUSE,
    ChangeKind,
    Element,
    ElementVersion,
    Proposal,
    ProposalStatus,
)
from domain.permissions import Action
from domain.values import (
    MAX_RATIONALE_CHARS,
    Classification,
    SourceKind,
    validate_id,
    validate_text,
)
from service import results as r
from service.authz import Caller, Permission
from service.core import UnitOfWork, existing, head_version, stored_element
from service.governance.decisions import Decisions, Outcome, Pin
from service.governance.proposal_book import ProposalBook, is_own, own_or_curator
from service.kernel import Kernel, acting
from service.views import version_view


class Review:
    """The curator's side of the governed write path."""

    def __init__(self, k: Kernel, book: ProposalBook, decisions: Decisions) -> None:
        self.k = k
        self.book = book
        self.decisions = decisions

    @acting
    def accept(
        self,
        caller: Caller,
        proposal_id: str,
        rationale: str | None = None,
        expected_version_id: str | None = None,
    ) -> r.Proposal:
        """Accept a fresh, clean, OPEN proposal: new version, head CAS, accepted_as, decision.
        ``expected_version_id``: the proposal version the curator reviewed (every surface passes
        it); one revised since is refused (CONFLICT), so nobody accepts a body they did not see."""
        rationale = _valid_accept_inputs(rationale, expected_version_id)
        with self.k.uow() as uow:
            p, perm = self.book.load(uow, caller, proposal_id)
            body_el = stored_element(uow.store, p.element_id)
            _ensure_may_accept(perm, caller, body_el)
            proposed = head_version(uow.store, p.element_id)
            _ensure_reviewed(proposal_id, proposed.version_id, expected_version_id)
            at = self.k.clock.now()
            target = self._target(uow, caller, p, at, proposed.body)
            new_v = target.next_version(
                title=proposed.title,
                body=proposed.body,
                metadata=proposed.metadata,
                at=at,
                provenance=p.proposed_by,
            )
            if not uow.store.move_head(target.element_id, target.head_version_id, new_v):
                current = stored_element(uow.store, target.element_id).head_version_id
                raise StaleProposal(
                    f"proposal {proposal_id} lost a race: the head of {target.element_id} is now "
                    f"{current}; rebase it",
                    current_head_version_id=current,
                    target_version_id=p.target_version_id,
                )
            uow.store.insert_version(new_v)
            p.accepted_as(new_v, at, caller.principal_id)
            self.k.audit.event(
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
            outcome = Outcome(
                "ACCEPT",
                rationale,
                target.classification,
                "proposal.accepted",
                target.element_id,
                pin=Pin(ACCEPTED_AS, p.element_id, target.element_id, new_v.version_id),
                version_id=new_v.version_id,
            )
            dec = self.decisions.conclude(uow, caller, p, at, outcome)
            view = self.book.view(uow, p)
            uow.commit()
        return r.Proposal.model_validate({**view, "decision_element_id": dec.element_id})

    @acting
    def accept_preview(self, caller: Caller, proposal_id: str) -> r.AcceptPreview:
        """What accepting would do, without doing it: whether it would be accepted, and if not
        the refusal accepting would give (stale, conflicts, not OPEN, not allowed); which
        element's head moves from which version, and the new version's sequence number; the
        proposal version previewed (to pass to ``accept`` as ``expected_version_id``)."""
        with self.k.uow(readonly=True) as uow:
            p, perm = self.book.load(uow, caller, proposal_id)
            body_el = stored_element(uow.store, p.element_id)
            target = (
                stored_element(uow.store, p.target_element_id)
                if p.change_kind is ChangeKind.UPDATE
                else None
            )
            refusal = None
            try:
                _ensure_may_accept(perm, caller, body_el)
                p.ensure_acceptable(
                    target.head_version_id if target else None,
                    head_version(uow.store, p.element_id).body,
                )
            except (PermissionDenied, FailedPrecondition) as exc:
                refusal = {"code": exc.code, "message": exc.message}
            view = self.book.view(uow, p)
            self.k.audit.log_read(
                uow, caller, "proposal.accept_preview", p.repo_key, proposal_id=proposal_id
            )
            uow.commit()
        return r.AcceptPreview.model_validate(
            {
                "proposal_id": proposal_id,
                "proposal_version_id": view["proposal_version_id"],
                "would_accept": refusal is None,
                "refusal": refusal,
                "stale": view["stale"],
                "has_conflicts": p.has_conflicts,
                "change_kind": p.change_kind.value,
                "target_element_id": target.element_id if target else None,
                "head_version_id": target.head_version_id if target else None,
                "new_seq": (target.head_seq + 1) if target else 1,
                "diff": view["diff"],
            }
        )

    def _target(
        self, uow: UnitOfWork, caller: Caller, p: Proposal, at: datetime, body: str
    ) -> Element:
        """The element accepting ``p`` (whose body is ``body``) writes to: its fresh target, or
        (CREATE) a new one."""
        if p.change_kind is ChangeKind.UPDATE:
            target = stored_element(uow.store, p.target_element_id)
            p.ensure_acceptable(target.head_version_id, body)
            return target
        p.ensure_acceptable(None, body)
        spec = uow.store.get_create_spec(p.proposal_id)
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
        self.k.audit.event(
            uow,
            caller,
            p.repo_key,
            "element.created",
            at,
            element_id=target.element_id,
            proposal_id=p.proposal_id,
        )
        return target

    @acting
    def reject(self, caller: Caller, proposal_id: str, rationale: str) -> r.Proposal:
        """Reject with a required rationale; links ``rejected_because`` to the decision."""
        rationale = validate_text(rationale, "rationale", MAX_RATIONALE_CHARS)
        return r.Proposal.model_validate(
            self._close(caller, proposal_id, ProposalStatus.REJECTED, "REJECT", rationale)
        )

    @acting
    def withdraw(
        self, caller: Caller, proposal_id: str, rationale: str | None = None
    ) -> r.Proposal:
        """The proposer withdraws their own OPEN proposal."""
        rationale = validate_text(rationale, "rationale", MAX_RATIONALE_CHARS, required=False)
        return r.Proposal.model_validate(
            self._close(caller, proposal_id, ProposalStatus.WITHDRAWN, "WITHDRAW", rationale)
        )

    def _close(
        self, caller: Caller, proposal_id: str, status: ProposalStatus, kind: str, rationale: str
    ) -> dict[str, Any]:
        with self.k.uow() as uow:
            p, perm = self.book.load(uow, caller, proposal_id)
            if status is ProposalStatus.REJECTED and not perm.can(Action.CURATE):
                raise PermissionDenied(f"{caller.principal_id} may not reject proposals")
            if status is ProposalStatus.WITHDRAWN and not is_own(p, caller):
                raise PermissionDenied("only the proposer may withdraw a proposal")
            at = self.k.clock.now()
            p.close(status, at, caller.principal_id)
            outcome = Outcome(
                kind,
                rationale,
                stored_element(uow.store, p.element_id).classification,
                f"proposal.{status.value.lower()}",
                p.target_element_id or p.element_id,
                pin_to_decision=REJECTED_BECAUSE if status is ProposalStatus.REJECTED else None,
                payload={"rationale": rationale},
            )
            dec = self.decisions.conclude(uow, caller, p, at, outcome)
            view = self.book.view(uow, p)
            uow.commit()
        return {**view, "decision_element_id": dec.element_id}

    @acting
    def rebase(self, caller: Caller, proposal_id: str) -> r.Proposal:
        """New OPEN proposal on the current head with a three-way-merged body; old → REBASED."""
        with self.k.uow() as uow:
            old, perm = self.book.load(uow, caller, proposal_id)
            own_or_curator(old, perm, caller, "rebase")
            target = stored_element(uow.store, old.target_element_id or old.element_id)
            old.ensure_rebasable(target.head_version_id)
            base = existing(uow.store.get_version(existing(old.target_version_id)))
            head = head_version(uow.store, target.element_id)
            mine = head_version(uow.store, old.element_id)
            merged = three_way_merge(base.body, head.body, mine.body)
            at = self.k.clock.now()
            new = old.rebased_onto(
                head.version_id, at=at, by=caller.principal_id, has_conflicts=merged.has_conflicts
            )
            title = head.title if mine.title == base.title else mine.title
            new_v = self.book.open(
                uow, caller, new, title, merged.body, mine.metadata, target.classification
            )
            outcome = _rebased(old, new, new_v, head, target, merged.has_conflicts)
            self.decisions.conclude(uow, caller, old, at, outcome)
            view = self.book.view(uow, new)
            uow.commit()
        return r.Proposal.model_validate(
            {
                **view,
                "rebased_from_view": {"proposal_id": proposal_id, "status": "REBASED"},
                "version": version_view(new_v, with_body=False),
            }
        )


def _valid_accept_inputs(rationale: str | None, expected_version_id: str | None) -> str:
    """The rationale checked; ``expected_version_id``, when given, must be a version id (the
    console's form, REST's body, gRPC's field and the CLI's ``--expected-version`` pass it)."""
    if expected_version_id is not None:
        validate_id(expected_version_id, "ver", "expected_version_id")
    return validate_text(rationale, "rationale", MAX_RATIONALE_CHARS, required=False)


def _ensure_reviewed(proposal_id: str, current: str, expected: str | None) -> None:
    """Refuse to accept a proposal whose body changed since the version the curator reviewed."""
    if expected is not None and expected != current:
        raise Conflict(
            f"proposal {proposal_id} was revised after version {expected} was reviewed (its "
            f"body is now version {current}); review it again",
            expected_version_id=expected,
            proposal_version_id=current,
        )


def _ensure_may_accept(perm: Permission, caller: Caller, body_el: Element) -> None:
    """Accepting needs curation at the proposal's classification (``accept`` and its preview)."""
    if not perm.may_act_on(Action.CURATE, body_el.classification):
        raise PermissionDenied(f"{caller.principal_id} may not accept proposals")


def _rebased(
    old: Proposal,
    new: Proposal,
    new_v: ElementVersion,
    head: ElementVersion,
    target: Element,
    has_conflicts: bool,
) -> Outcome:
    """The outcome of rebasing ``old`` onto ``head`` as ``new``."""
    return Outcome(
        "REBASE",
        f"rebased onto {head.version_id} as {new.proposal_id}"
        + (" (with conflicts)" if has_conflicts else ""),
        target.classification,
        "proposal.rebased",
        target.element_id,
        pin=Pin(REBASED_TO, old.element_id, new.element_id, new_v.version_id),
        payload={
            "rebased_to": new.proposal_id,
            "onto": head.version_id,
            "has_conflicts": has_conflicts,
        },
    )
