"""What every use case shares: transactions, the authorization gate, audit and access logging."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar

from domain.audit import AuditEvent
from domain.errors import InvalidArgument, NotFound, PermissionDenied
from domain.model import Element, ElementVersion, version_classification
from domain.permissions import Action
from domain.values import RepoRef, validate_id, validate_principal
from projection.keyword_index import KeywordIndex
from service.authz import Authorizer, Caller, Grant, Permission
from service.clock import Clock
from service.index_ops import IndexMaintainer
from service.ports import Store
from service.semantic_recall import SemanticRecall


class UnitOfWork(Protocol):
    """The transaction port (implemented by storage.db.SqlAlchemyUnitOfWork)."""

    @property
    def store(self) -> Store:
        """The store of this transaction (read-only here, so an adapter may narrow its type)."""

    after_commit: list[Callable[[], None]]

    def __enter__(self) -> UnitOfWork: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None: ...
    def record(self, event: AuditEvent) -> None: ...
    def log_access(self, *entry: Any) -> None: ...
    def commit(self) -> None: ...


UowFactory = Callable[..., UnitOfWork]
T = TypeVar("T")


def existing(value: T | None) -> T:
    """``value``, read from the store where stored state guarantees it (a proposal's element and
    its head, the repository the gate found): a ``None`` here is a broken invariant, not a miss."""
    if value is None:
        raise LookupError("the store lacks a record its invariants guarantee")
    return value


class ServiceCore:
    """Shared plumbing of the use-case mixins."""

    def __init__(
        self,
        uow_factory: UowFactory,
        authorizer: Authorizer,
        clock: Clock,
        indexer: IndexMaintainer[KeywordIndex] | None = None,
        semantic: SemanticRecall | None = None,
    ) -> None:
        self._uow = uow_factory
        self.authorizer = authorizer
        self.clock = clock
        self.indexer = indexer
        self.semantic = semantic  # semantic recall, when the extra is installed and enabled

    @property
    def index(self) -> KeywordIndex:
        """The keyword index (a derived projection kept by ``indexer``)."""
        if self.indexer is None:
            raise RuntimeError("this service was built without a keyword index")
        return self.indexer.index

    # -- callers -------------------------------------------------------------------------
    @staticmethod
    def check_caller(caller: Caller) -> Caller:
        """Validate the identity fields of a request at the edge of the service."""
        validate_principal(caller.principal_id)
        if caller.on_behalf_of is not None:
            validate_principal(caller.on_behalf_of, "on_behalf_of")
        if caller.purpose is not None and len(caller.purpose) > 500:
            raise InvalidArgument("purpose is longer than 500 characters", field="purpose")
        return caller

    # -- the gate ------------------------------------------------------------------------
    def permission(self, uow: UnitOfWork, caller: Caller, repo_key: str) -> Permission:
        """The caller's effective permission in a repository (empty when it doesn't exist)."""
        self.check_caller(caller)
        principals = [caller.principal_id] + ([caller.on_behalf_of] if caller.on_behalf_of else [])
        grants = [
            Grant(g.principal_id, g.role, g.scope_key, g.clearance)
            for g in uow.store.grants_for(principals)
        ]
        return self.authorizer.permission(grants, caller, repo_key)

    def gate(self, uow: UnitOfWork, caller: Caller, repo_key: str, action: Action) -> Permission:
        """Authorize once: NOT_FOUND when the repository is missing or invisible to the caller,
        PERMISSION_DENIED when it is visible but the action is not allowed."""
        perm = self.permission(uow, caller, repo_key)
        if not perm.any or uow.store.get_repository(repo_key) is None:
            raise NotFound(f"repository {repo_key} not found", repository=repo_key)
        _require(perm, caller, repo_key, action)
        return perm

    def visible_element(
        self, uow: UnitOfWork, caller: Caller, element_id: str, action: Action = Action.READ
    ) -> tuple[Element, Permission]:
        """Load an element the caller may see and act on; missing and hidden look the same."""
        validate_id(element_id, "el", "element")
        el = uow.store.get_element(element_id)
        missing = NotFound(f"element {element_id} not found", element_id=element_id)
        if el is None:
            raise missing
        perm = self.readable_gate(uow, caller, el.repo_key, action, missing)
        if not perm.may_see(el.classification):
            raise missing
        if not perm.may_act_on(action, el.classification):
            raise PermissionDenied(
                f"{caller.principal_id} may not {action.value} content classified "
                f"{el.classification.value}",
                action=action.value,
            )
        return el, perm

    def readable_gate(
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

    def visible_version(
        self, uow: UnitOfWork, caller: Caller, version_id: str
    ) -> tuple[ElementVersion, Element, Permission]:
        """Load a version the caller may read."""
        validate_id(version_id, "ver", "version")
        v = uow.store.get_version(version_id)
        if v is None:
            raise NotFound(f"version {version_id} not found", version_id=version_id)
        try:
            el, perm = self.visible_element(uow, caller, v.element_id)
        except NotFound:
            raise NotFound(f"version {version_id} not found", version_id=version_id) from None
        self.readable_version(perm, el, v)
        return v, el, perm

    @staticmethod
    def repo_key(repo: str | RepoRef) -> str:
        """Validate ``tenant/org/repo``."""
        return repo.key if isinstance(repo, RepoRef) else RepoRef.parse(repo).key

    # -- audit ---------------------------------------------------------------------------
    def event(
        self,
        uow: UnitOfWork,
        caller: Caller,
        chain_key: str,
        event_type: str,
        at: datetime,
        **fields: Any,
    ) -> None:
        """Queue one audit event for this state change."""
        payload = fields.pop("payload", {})
        uow.record(
            AuditEvent(
                chain_key=chain_key,
                event_type=event_type,
                occurred_at=at,
                actor=caller.principal_id,
                on_behalf_of=caller.on_behalf_of,
                purpose=caller.purpose,
                payload=payload,
                **fields,
            )
        )

    def log_read(
        self, uow: UnitOfWork, caller: Caller, operation: str, repo_key: str | None, **subject: Any
    ) -> None:
        """Record a read in the access log (who, for whom, why, what)."""
        uow.log_access(
            self.clock.now(),
            caller.principal_id,
            caller.on_behalf_of,
            caller.purpose,
            operation,
            repo_key,
            subject,
        )


def _require(perm: Permission, caller: Caller, repo_key: str, action: Action) -> None:
    """PERMISSION_DENIED unless ``perm`` allows ``action`` (the caller may see the repository)."""
    if not perm.can(action):
        raise PermissionDenied(
            f"{caller.principal_id} may not {action.value} in {repo_key}"
            + (f" on behalf of {caller.on_behalf_of}" if caller.on_behalf_of else ""),
            action=action.value,
        )
