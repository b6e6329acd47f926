"""The transaction port every use case works in, and two small rules they share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from domain.audit import AuditEvent
from domain.model import Element, ElementVersion
from domain.values import RepoRef
from service.ports import Store


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


def repo_key(repo: str | RepoRef) -> str:
    """Validate ``tenant/org/repo``."""
    return repo.key if isinstance(repo, RepoRef) else RepoRef.parse(repo).key


def stored_element(store: Store, element_id: str | None) -> Element:
    """An element the stored state guarantees (a proposal's body or target)."""
    return existing(store.get_element(existing(element_id)))


def head_version(store: Store, element_id: str | None) -> ElementVersion:
    """The head version of an element the stored state guarantees."""
    el = stored_element(store, element_id)
    return existing(store.get_version(existing(el.head_version_id)))
