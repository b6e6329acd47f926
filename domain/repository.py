"""The repository aggregate root's own record (scope, legal hold)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain.values import RepoRef


@dataclass
class Repository:
    """A repository of one organization of one tenant."""

    ref: RepoRef
    created_at: datetime
    created_by: str
    legal_hold: bool = False

    @property
    def key(self) -> str:
        """``tenant/org/repo``."""
        return self.ref.key
