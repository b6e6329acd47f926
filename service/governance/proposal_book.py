"""Proposals as stored things: loading one the caller may act on, opening one, its view."""

from __future__ import annotations

from typing import Any

from domain.errors import InvalidArgument, NotFound, PermissionDenied
from domain.merge import unified_diff
from domain.model import (
    PROPOSAL_TYPE,
    TARGETS_VERSION,
    ChangeKind,
    Element,
    ElementVersion,
    Proposal,
    ProposalStatus,
    SelectorKind,
)
from domain.permissions import Action
from domain.values import Classification, SourceKind, validate_id
from service.authz import Caller, Permission
from service.core import UnitOfWork, head_version, stored_element
from service.gate import may_read_proposal, owns
from service.governance.decisions import Decisions, Pin
from service.governance.writer import ElementWriter, provenance
from service.kernel import Kernel
from service.views import proposal_view


class ProposalBook:
    """What the curation use cases share about proposals."""

    def __init__(self, k: Kernel, writer: ElementWriter, decisions: Decisions) -> None:
        self.k = k
        self.writer = writer
        self.decisions = decisions

    def load(
        self, uow: UnitOfWork, caller: Caller, proposal_id: str
    ) -> tuple[Proposal, Permission]:
        """A proposal the caller may read (``gate.may_read_proposal``: curators and auditors
        all, proposers their own); the rest, and a proposal on an element the caller may not
        see, is NOT_FOUND."""
        validate_id(proposal_id, "prop", "proposal")
        p = uow.store.get_proposal(proposal_id)
        missing = NotFound(f"proposal {proposal_id} not found", proposal_id=proposal_id)
        if p is None:
            raise missing
        try:
            _, perm = self.k.gate.element(uow, caller, p.element_id)
        except NotFound:
            raise missing from None
        if not may_read_proposal(perm, caller, p.proposed_by):
            raise missing
        return p, perm

    def open(
        self,
        uow: UnitOfWork,
        caller: Caller,
        p: Proposal,
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
        v = self.writer.new_element(
            uow,
            caller,
            el,
            title=title,
            body=body,
            metadata=metadata,
            at=p.created_at,
            provenance=provenance(caller),
        )
        uow.store.insert_proposal(p, create_spec)
        if p.change_kind is ChangeKind.UPDATE:
            assert p.target_element_id
            assert p.target_version_id
            pin = Pin(TARGETS_VERSION, el.element_id, p.target_element_id, p.target_version_id)
            self.decisions.pin(uow, caller, p.repo_key, pin, p.created_at)
        self.k.audit.event(
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

    def view(self, uow: UnitOfWork, p: Proposal, *, with_diff: bool = True) -> dict[str, Any]:
        """The proposal with its body, staleness, current head, selected version and diff."""
        view = proposal_view(p)
        body_v = head_version(uow.store, p.element_id)
        head = None
        if p.target_element_id:
            head = stored_element(uow.store, p.target_element_id).head_version_id
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
            view.update(self._diffs(uow, p, body_v.body, head, stale=view["stale"]))
        return view

    @staticmethod
    def _diffs(
        uow: UnitOfWork, p: Proposal, body: str, head: str | None, *, stale: bool
    ) -> dict[str, Any]:
        """The diff against the pinned version; when stale, also against the current head and
        the published version, so a curator sees what accepting would overwrite."""

        def against(version_id: str | None) -> str:
            base = uow.store.get_version(version_id) if version_id else None
            return unified_diff(
                base.body if base else "", body, version_id or "/dev/null", "proposal"
            )

        diffs: dict[str, Any] = {"diff": against(p.target_version_id)}
        if not stale:
            return diffs
        pointer = uow.store.get_pointer(p.repo_key)[0]
        baseline = uow.store.get_baseline(pointer) if pointer else None
        published = baseline.pins.get(p.target_element_id or "") if baseline else None
        diffs.update(
            diff_against_head=against(head),
            published_version_id=published,
            diff_against_published=against(published) if published else None,
        )
        return diffs

    @staticmethod
    def _selected_version(uow: UnitOfWork, p: Proposal) -> str | None:
        sel = p.target_selector
        bl_id = (
            uow.store.get_pointer(p.repo_key)[0]
            if sel.kind is SelectorKind.PUBLISHED
            else sel.baseline_id
        )
        baseline = uow.store.get_baseline(bl_id) if bl_id else None
        return baseline.pins.get(p.target_element_id or "") if baseline else None


def is_own(p: Proposal, caller: Caller) -> bool:
    """The caller owns ``p`` (``gate.owns``: made by or for the principal it acts as)."""
    return owns(caller, p.proposed_by)


def own_or_curator(p: Proposal, perm: Permission, caller: Caller, verb: str) -> None:
    """PERMISSION_DENIED unless the caller proposed ``p`` (and may propose) or curates."""
    if not (perm.can(Action.CURATE) or (is_own(p, caller) and perm.can(Action.PROPOSE))):
        raise PermissionDenied(f"only the proposer or a curator may {verb} {p.proposal_id}")


def change_kind(value: str) -> ChangeKind:
    """A ``ChangeKind`` from user input."""
    try:
        return ChangeKind(value.strip().upper())
    except ValueError:
        raise InvalidArgument(
            f"unknown change_kind {value!r}; use UPDATE or CREATE", field="change_kind"
        ) from None


def selector_kind(value: str) -> SelectorKind:
    """A ``SelectorKind`` from user input."""
    try:
        return SelectorKind(value.strip().lower())
    except ValueError:
        raise InvalidArgument(
            f"unknown target selector {value!r}; use published or baseline_ref",
            field="target_selector",
        ) from None


def proposal_status(value: str) -> ProposalStatus:
    """A ``ProposalStatus`` from user input."""
    try:
        return ProposalStatus(value.strip().upper())
    except ValueError:
        allowed = ", ".join(s.value for s in ProposalStatus)
        raise InvalidArgument(
            f"unknown status {value!r}; use one of: {allowed}", field="status"
        ) from None
