"""Use cases: propose, revise, and the proposal queue (deciding them:
``service.governance.review``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import datetime
from typing import Any

from domain.errors import (
    AlreadyExists,
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from domain.model import ChangeKind, Proposal, ProposalStatus, TargetSelector, has_conflict_markers
from domain.permissions import Action
from domain.values import (
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
from service import results as r
from service import results_ops as ro
from service.authz import Caller, Permission
from service.core import UnitOfWork, existing, head_version, repo_key, stored_element
from service.governance.proposal_book import (
    ProposalBook,
    change_kind,
    own_or_curator,
    proposal_status,
    selector_kind,
)
from service.governance.queue import QueueFilter
from service.governance.writer import element_kind as parse_element_kind
from service.governance.writer import provenance
from service.kernel import Kernel, acting


class Curation:
    """The agent's side of the governed write path: proposing and revising."""

    def __init__(self, k: Kernel, book: ProposalBook) -> None:
        self.k = k
        self.book = book

    @acting
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
    ) -> r.Proposal:
        """Open a proposal (UPDATE pinned to a target version, or CREATE); idempotent with
        ``client_request_id`` — a repeat returns the original with ``replay: true``."""
        key = repo_key(repo)
        kind = _change_kind(change_kind)
        _no_pin_on_create(kind, element_id=element_id, target_version_id=target_version_id)
        body = validate_body(body)
        summary = validate_text(summary, "summary", MAX_SUMMARY_CHARS)
        metadata = validate_metadata(metadata)
        sel = TargetSelector(selector_kind(selector), baseline_id)
        if client_request_id is not None:
            client_request_id = validate_text(client_request_id, "client_request_id", 200)
        target = (kind.value, element_id, target_version_id, title, *_subject(caller))
        content = (body, summary, sel.kind.value, baseline_id, metadata)
        fingerprint = _fingerprint(*target, *content, type_key, element_kind, classification)
        with self.k.uow() as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.PROPOSE)
            replay = self._replay(uow, key, caller, client_request_id, fingerprint)
            if replay is not None:
                return r.Proposal.model_validate(replay)
            at = self.k.clock.now()
            _check_baseline(uow, key, sel)
            create_spec = None
            if kind is ChangeKind.UPDATE:
                p, level, title_ = self._update_target(
                    uow, caller, key, element_id, target_version_id, title, at
                )
            else:
                level, create_spec = _create_spec(perm, classification, type_key, element_kind)
                title_ = validate_text(title, "title", MAX_TITLE_CHARS)
                p = Proposal(
                    new_id("prop"), key, new_id("el"), kind, summary, provenance(caller), at, sel
                )
            p.summary, p.target_selector, p.client_request_id = summary, sel, client_request_id
            self.book.open(uow, caller, p, title_, body, metadata, level, create_spec)
            if client_request_id:
                uow.store.insert_idempotency(
                    key, caller.principal_id, client_request_id, fingerprint, p.proposal_id, at
                )
            view = self.book.view(uow, p)
            uow.commit()
        return r.Proposal.model_validate({**view, "replay": False})

    def _replay(
        self,
        uow: UnitOfWork,
        key: str,
        caller: Caller,
        client_request_id: str | None,
        fingerprint: str,
    ) -> dict[str, Any] | None:
        """The original proposal when ``client_request_id`` was used before for the same one."""
        if not client_request_id:
            return None
        prior = uow.store.get_idempotency(key, caller.principal_id, client_request_id)
        if prior is None:
            return None
        if prior.request_fingerprint != fingerprint:
            raise AlreadyExists(
                "client_request_id was already used for a different proposal",
                client_request_id=client_request_id,
            )
        proposal = existing(uow.store.get_proposal(prior.proposal_id))
        return {**self.book.view(uow, proposal), "replay": True}

    def _update_target(
        self,
        uow: UnitOfWork,
        caller: Caller,
        key: str,
        element_id: str | None,
        target_version_id: str | None,
        title: str | None,
        at: datetime,
    ) -> tuple[Proposal, Classification, str]:
        if not element_id or not target_version_id:
            raise InvalidArgument(
                "an UPDATE proposal must be pinned: give the target element "
                "and the target version it was written against",
                field="target_version_id",
            )
        target, _ = self.k.gate.element(uow, caller, element_id)
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
            provenance(caller),
            at,
            target_element_id=element_id,
            target_version_id=target_version_id,
        )
        return p, target.classification, title_

    @acting
    def proposal_show(self, caller: Caller, proposal_id: str) -> r.Proposal:
        """A proposal with staleness, current head, selected version and the diff vs target."""
        with self.k.uow(readonly=True) as uow:
            p, _ = self.book.load(uow, caller, proposal_id)
            view = self.book.view(uow, p)
            self.k.audit.log_read(uow, caller, "proposal.show", p.repo_key, proposal_id=proposal_id)
            uow.commit()
        return r.Proposal.model_validate(view)

    @acting
    def proposal_list(
        self,
        caller: Caller,
        repo: str,
        status: str | None = None,
        queue: QueueFilter | None = None,
    ) -> list[r.Proposal]:
        """The queue: all proposals for curators and auditors, one's own for agents; narrowed,
        ordered and paged by ``queue`` (oldest first by default)."""
        return [
            r.Proposal.model_validate(row)
            for row in self._queue(caller, repo, status, (queue or QueueFilter()).checked())
        ]

    def _queue(
        self, caller: Caller, repo: str, status: str | None, wanted: QueueFilter
    ) -> list[dict[str, Any]]:
        """:meth:`proposal_list` with ``wanted`` already checked."""
        key = repo_key(repo)
        st = proposal_status(status) if status else None
        with self.k.uow(readonly=True) as uow:
            perm = self.k.gate.repository(uow, caller, key, Action.READ)
            every = perm.can(Action.CURATE) or perm.can(Action.AUDIT)
            if not (every or perm.can(Action.PROPOSE)):
                raise PermissionDenied(f"{caller.principal_id} may not list proposals in {key}")
            mine = None if every else caller.principal_id
            after = None
            if wanted.cursor is not None:  # a proposal the caller may read, of this repository
                at, _ = self.book.load(uow, caller, wanted.cursor)
                if at.repo_key != key:
                    raise NotFound(f"proposal {wanted.cursor} not found", proposal_id=wanted.cursor)
                after = (at.created_at, at.proposal_id)
            items = [
                self.book.view(uow, p, with_diff=False)
                for p in uow.store.list_proposals(key, st, mine)
                if wanted.admits(p)
            ]
            self.k.audit.log_read(uow, caller, "proposal.list", key, status=status)
            uow.commit()
        return [{k: v for k, v in i.items() if k != "body"} for i in wanted.page(items, after)]

    @acting
    def proposal_page(
        self,
        caller: Caller,
        repo: str,
        status: str | None = None,
        queue: QueueFilter | None = None,
    ) -> ro.ProposalPage:
        """One page of the queue (:meth:`proposal_list`) and ``next_cursor``: the cursor that
        continues after it, absent on the last page. The order is stable (opened at, then id),
        so a walk from cursor to cursor sees every proposal once, new ones at its end."""
        wanted = (queue or QueueFilter()).checked()
        if wanted.limit is None:
            return ro.ProposalPage.model_validate(
                {"proposals": self._queue(caller, repo, status, wanted)}
            )
        probe = replace(wanted, limit=wanted.limit + 1)  # one more: is there a next page?
        rows = self._queue(caller, repo, status, probe)
        page = rows[: wanted.limit]
        more = len(rows) > wanted.limit
        return ro.ProposalPage.model_validate(
            {"proposals": page, "next_cursor": page[-1]["proposal_id"] if more else None}
        )

    @acting
    def revise(
        self,
        caller: Caller,
        proposal_id: str,
        body: str,
        summary: str | None = None,
        title: str | None = None,
        expected_version_id: str | None = None,
    ) -> r.Proposal:
        """Replace the body of an OPEN proposal (its proposer or a curator); audited.
        ``expected_version_id``: the proposal version the reviser started from — CONFLICT if
        the body moved on since, so one revision never silently overwrites another."""
        body = validate_body(body)
        with self.k.uow() as uow:
            p, perm = self.book.load(uow, caller, proposal_id)
            own_or_curator(p, perm, caller, "revise")
            p.ensure_open()
            el = stored_element(uow.store, p.element_id)
            cur = head_version(uow.store, p.element_id)
            if expected_version_id and expected_version_id != cur.version_id:
                raise Conflict(
                    f"proposal {proposal_id} was revised after version {expected_version_id} "
                    f"(its body is now version {cur.version_id}): compare, then revise again",
                    expected_version_id=expected_version_id,
                    proposal_version_id=cur.version_id,
                )
            at = self.k.clock.now()
            v = el.next_version(
                title=validate_text(title, "title", MAX_TITLE_CHARS) if title else cur.title,
                body=body,
                metadata=cur.metadata,
                at=at,
                provenance=provenance(caller),
            )
            if not uow.store.move_head(el.element_id, cur.version_id, v):
                raise Conflict(f"proposal {proposal_id} was revised concurrently; retry")
            uow.store.insert_version(v)
            if summary is not None:
                p.summary = validate_text(summary, "summary", MAX_SUMMARY_CHARS)
            p.has_conflicts = has_conflict_markers(body)
            if not uow.store.save_proposal(p, ProposalStatus.OPEN):
                raise Conflict(f"proposal {proposal_id} changed concurrently; retry")
            self.k.audit.event(
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
            view = self.book.view(uow, p)
            uow.commit()
        return r.Proposal.model_validate(view)


_change_kind = change_kind  # ``propose``'s keyword shadows the parser


def _subject(caller: Caller) -> tuple[str, ...]:
    """Whom a proposal is for, as part of its request: a gateway replaying one user's
    ``client_request_id`` for another user never gets the first user's proposal back."""
    return () if caller.on_behalf_of is None else (caller.on_behalf_of,)


def _fingerprint(*request: Any) -> str:
    """What a repeated ``client_request_id`` must match to count as the same proposal."""
    return hashlib.sha256(
        json.dumps(list(request), sort_keys=True, default=str).encode()
    ).hexdigest()


def _no_pin_on_create(kind: ChangeKind, **pins: str | None) -> None:
    """A CREATE proposal makes a new element: a pin to an existing one is a mistake the caller
    must hear about, not a field silently dropped."""
    for name, value in pins.items():
        if kind is ChangeKind.CREATE and value:
            raise InvalidArgument(
                f"a CREATE proposal makes a new element and takes no {name}; "
                "propose an UPDATE to change an existing element",
                field=name,
            )


def _check_baseline(uow: UnitOfWork, key: str, sel: TargetSelector) -> None:
    if sel.baseline_id:
        validate_id(sel.baseline_id, "bl", "baseline")
        bl = uow.store.get_baseline(sel.baseline_id)
        if bl is None or bl.repo_key != key:
            raise NotFound(f"baseline {sel.baseline_id} not found")


def _create_spec(
    perm: Permission, classification: str | None, type_key: str, element_kind: str
) -> tuple[Classification, dict[str, Any]]:
    """The level and the element spec a CREATE proposal carries until it is accepted."""
    level = Classification.parse(classification) if classification else Classification.INTERNAL
    if not (perm.may_act_on(Action.PROPOSE, level) or perm.may_act_on(Action.CURATE, level)):
        raise PermissionDenied("classification is above your clearance", field="classification")
    spec = {
        "type_key": validate_type_key(type_key),
        "element_kind": parse_element_kind(element_kind),
        "classification": level.value,
    }
    return level, spec
