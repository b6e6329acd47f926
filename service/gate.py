"""The authorization gate: one place decides who may see and do what (docs/product.md §3)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from domain.errors import InvalidArgument, NotFound, PermissionDenied
from domain.model import Element, ElementVersion, Provenance, version_classification
from domain.permissions import Action, DelegationRecord, subject_matches
from domain.values import (
    MAX_PURPOSE_CHARS,
    SourceKind,
    require_unicode,
    validate_id,
    validate_principal,
)
from service.authz import Authorizer, Caller, Grant, Permission
from service.core import UnitOfWork


class Gate:
    """Authorize once per use case: missing and hidden objects look the same (NOT_FOUND),
    PERMISSION_DENIED only where the caller may see what it may not change."""

    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    # -- callers -------------------------------------------------------------------------
    @staticmethod
    def check_caller(caller: Caller) -> Caller:
        """Validate the identity fields of a request at the edge of the service."""
        validate_principal(caller.principal_id)
        if caller.on_behalf_of is not None:
            validate_principal(caller.on_behalf_of, "on_behalf_of")
        if caller.purpose is not None and len(caller.purpose) > MAX_PURPOSE_CHARS:
            raise InvalidArgument(
                f"purpose is longer than {MAX_PURPOSE_CHARS} characters", field="purpose"
            )
        if caller.purpose is not None:
            require_unicode(caller.purpose, "purpose")  # recorded with every read and write
        return caller

    # -- the gate ------------------------------------------------------------------------
    def permission(self, uow: UnitOfWork, caller: Caller, repo_key: str) -> Permission:
        """The caller's effective permission in a repository (empty when it doesn't exist)."""
        return self.permissions(uow, caller, [repo_key])[repo_key]

    def permissions(
        self, uow: UnitOfWork, caller: Caller, repo_keys: Iterable[str]
    ) -> dict[str, Permission]:
        """The caller's permission in each repository, its grants read once."""
        self.check_caller(caller)
        delegations = self.delegations(uow, caller)
        principals = [caller.principal_id] + ([caller.on_behalf_of] if caller.on_behalf_of else [])
        grants = [
            Grant(g.principal_id, g.role, g.scope_key, g.clearance)
            for g in uow.store.grants_for(principals)
        ]
        return {
            key: self.authorizer.permission(grants, caller, key)
            if delegations is None
            or any(d.covers(caller.on_behalf_of or "", key) for d in delegations)
            else Permission(key, frozenset())
            for key in repo_keys
        }

    @staticmethod
    def delegations(uow: UnitOfWork, caller: Caller) -> list[DelegationRecord] | None:
        """The delegations that let the caller act for whom it names (None: it names nobody).

        Naming another principal needs a delegation grant for it — on-behalf-of is never "any
        name the caller types". Without one the request is refused, saying which grant is
        missing; with one, the caller acts for that principal only in the repositories the
        delegation covers (elsewhere it may do nothing)."""
        subject = caller.on_behalf_of
        if subject is None or subject == caller.principal_id:
            return None  # acting for oneself needs no delegation
        mine = [
            d
            for d in uow.store.delegations_of(caller.principal_id)
            if subject_matches(d.on_behalf_of, subject)
        ]
        if not mine:
            raise PermissionDenied(
                f"{caller.principal_id} may not act on behalf of {subject}: it holds no "
                f"delegation grant for it (an admin, or {subject} itself, can give one: "
                f"`ameide grant {caller.principal_id} delegate --for {subject}`)",
                action="delegate",
                missing_grant=f"delegate --for {subject}",
            )
        return mine

    def repository(
        self, uow: UnitOfWork, caller: Caller, repo_key: str, action: Action
    ) -> Permission:
        """Authorize once: NOT_FOUND when the repository is missing or invisible to the caller,
        PERMISSION_DENIED when it is visible but the action is not allowed."""
        perm = self.permission(uow, caller, repo_key)
        if not perm.any or uow.store.get_repository(repo_key) is None:
            raise NotFound(f"repository {repo_key} not found", repository=repo_key)
        _require(perm, caller, repo_key, action)
        return perm

    def element(
        self, uow: UnitOfWork, caller: Caller, element_id: str, action: Action = Action.READ
    ) -> tuple[Element, Permission]:
        """Load an element the caller may see and act on; missing and hidden look the same."""
        validate_id(element_id, "el", "element")
        el = uow.store.get_element(element_id)
        missing = NotFound(f"element {element_id} not found", element_id=element_id)
        if el is None:
            raise missing
        perm = self.scoped(uow, caller, el.repo_key, action, missing)
        if not self.sees(uow, caller, perm, el):
            raise missing
        if not perm.may_act_on(action, el.classification):
            raise PermissionDenied(
                f"{caller.principal_id} may not {action.value} content classified "
                f"{el.classification.value}",
                action=action.value,
            )
        return el, perm

    @staticmethod
    def sees(uow: UnitOfWork, caller: Caller, perm: Permission, el: Element) -> bool:
        """The one read rule for an element, on every path (element reads, relationships,
        expansion, history, stored contexts, the proposal queue): within the caller's clearance,
        and a proposal's element only for whoever may read that proposal (see
        :func:`may_read_proposal`) — proposals are low-trust drafts, not content to share."""
        if not perm.may_see(el.classification):
            return False
        if el.source_kind is not SourceKind.PROPOSAL:
            return True
        if perm.can(Action.CURATE) or perm.can(Action.AUDIT):
            return True
        proposal_id = uow.store.proposals_of_elements([el.element_id]).get(el.element_id)
        p = uow.store.get_proposal(proposal_id) if proposal_id else None
        return p is not None and may_read_proposal(perm, caller, p.proposed_by)

    def scoped(
        self,
        uow: UnitOfWork,
        caller: Caller,
        repo_key: str,
        action: Action,
        missing: NotFound,
    ) -> Permission:
        """Authorize an action on an object of a repository (an element, a baseline): a caller
        who may not read there gets ``missing`` — the very answer a missing object gets, so
        an ingestor-only caller learns nothing of what exists — and PERMISSION_DENIED only
        when it may read the object but not do ``action``."""
        perm = self.permission(uow, caller, repo_key)
        if not perm.can(Action.READ) or uow.store.get_repository(repo_key) is None:
            raise missing
        _require(perm, caller, repo_key, action)
        return perm

    def readable_version(
        self, perm: Permission, el: Element, v: ElementVersion | None
    ) -> ElementVersion | None:
        """``v`` when the caller may read it at the level it was written at (NOT_FOUND, like a
        missing one, when the element was lowered since and ``v`` stays above clearance)."""
        if v is not None and not perm.may_see(version_classification(el, v)):
            raise NotFound(f"version {v.version_id} not found", version_id=v.version_id)
        return v

    @staticmethod
    def shown_parent(
        uow: UnitOfWork, perm: Permission, el: Element, v: ElementVersion
    ) -> str | None:
        """``v``'s parent version id when the caller may read that version at the level it was
        written at, else None: a version above the caller's clearance (the element was lowered
        since) is named nowhere, not even as the parent of the one it may read."""
        if v.parent_version_id is None:
            return None
        parent = uow.store.get_version(v.parent_version_id)
        if parent is None or not perm.may_see(version_classification(el, parent)):
            return None
        return parent.version_id

    def may_erase(
        self, uow: UnitOfWork, caller: Caller, perm: Permission, el: Element, v: ElementVersion
    ) -> bool:
        """Whether the caller could erase ``v`` itself: it reads the version at the level it was
        written at (:meth:`sees`, :meth:`readable_version`) and administers the repository at
        that level. An erasure reaches copies, derived versions and proposals only when this
        holds for each (issue 28 item 4), so it is never an oracle on what the caller can't read."""
        level = version_classification(el, v)
        return (
            self.sees(uow, caller, perm, el)
            and perm.may_see(level)
            and perm.may_act_on(Action.ADMIN, level)
        )

    def version(
        self, uow: UnitOfWork, caller: Caller, version_id: str
    ) -> tuple[ElementVersion, Element, Permission]:
        """Load a version the caller may read."""
        validate_id(version_id, "ver", "version")
        v = uow.store.get_version(version_id)
        if v is None:
            raise NotFound(f"version {version_id} not found", version_id=version_id)
        try:
            el, perm = self.element(uow, caller, v.element_id)
        except NotFound:
            raise NotFound(f"version {version_id} not found", version_id=version_id) from None
        self.readable_version(perm, el, v)
        return v, el, perm

    def may_inspect_context(self, uow: UnitOfWork, caller: Caller, row: dict[str, Any]) -> bool:
        """Whether the caller may inspect a stored read context (``row`` as the store keeps it):
        its reader (or the one it read for), or an auditor of every repository it touched."""
        if caller.principal_id in (row["principal_id"], row["on_behalf_of"]):
            return True
        repos = (
            {row["repo_key"]}
            if row["repo_key"]
            else {i["repository_id"] for i in row["response"]["items"]}
        )
        return bool(repos) and all(
            self.permission(uow, caller, repo).can(Action.AUDIT) for repo in repos
        )


def may_read_proposal(perm: Permission, caller: Caller, proposer: Provenance) -> bool:
    """Who reads a proposal (docs/product.md §3): curators (and publishers, admins) and auditors all
    of them; an agent its own (see :func:`owns`); nobody else — to everyone else a proposal,
    its element and its events do not exist."""
    if perm.can(Action.CURATE) or perm.can(Action.AUDIT):
        return True
    return owns(caller, proposer) and perm.can(Action.PROPOSE)


def owns(caller: Caller, proposer: Provenance) -> bool:
    """Whether ``caller`` owns what ``proposer`` made.

    What is made for someone belongs to that someone (its subject); what is made for nobody
    belongs to its actor. A caller acts as the principal it names on behalf of — which the gate
    has checked it holds a delegation for, in this repository, before any permission was
    given — and as itself otherwise. So a second agent naming the first without a delegation
    never gets this far, and a gateway acting for alice owns alice's proposals, not bob's.
    """
    return proposer.subject == (caller.on_behalf_of or caller.principal_id)


def _require(perm: Permission, caller: Caller, repo_key: str, action: Action) -> None:
    """PERMISSION_DENIED unless ``perm`` allows ``action`` (the caller may see the repository)."""
    if not perm.can(action):
        raise PermissionDenied(
            f"{caller.principal_id} may not {action.value} in {repo_key}"
            + (f" on behalf of {caller.on_behalf_of}" if caller.on_behalf_of else ""),
            action=action.value,
        )
