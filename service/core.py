"""The transaction port every use case works in, and the repository-key rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from domain.audit import AuditEvent
from domain.values import RepoRef


class UnitOfWork(Protocol):
    """The transaction port (implemented by storage.db.SqlAlchemyUnitOfWork)."""

    store: Any
    after_commit: list[Callable[[], None]]

    def __enter__(self) -> UnitOfWork: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None: ...
    def record(self, event: AuditEvent) -> None: ...
    def log_access(self, *entry: Any) -> None: ...
    def commit(self) -> None: ...


UowFactory = Callable[..., UnitOfWork]


def repo_key(repo: str | RepoRef) -> str:
    """Validate ``tenant/org/repo``."""
    return repo.key if isinstance(repo, RepoRef) else RepoRef.parse(repo).key
