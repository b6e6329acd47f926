"""What the store already mirrors from one source, as the planner and the applier need it.

The store hands over one row per mirrored path (``ingest_files`` joined with the element and
its head); :class:`MirrorState` answers the planner's two questions — the live head hash of an
element (``current_hash``) and which element mirrors a path (``locate``) — without a query per
file.
"""

from __future__ import annotations

from collections.abc import Iterable

from domain.records import MirroredFile
from ingest.plan import element_id_for
from ingest.plan_model import ActionKind, FileAction, IngestPlan

__all__ = ["MirrorState", "MirroredFile"]  # MirroredFile lives in domain (storage builds it)


class MirrorState:
    """Path → element per repository for one source, and each element's live head hash."""

    def __init__(self, source_repo: str, files: Iterable[MirroredFile]) -> None:
        self.source_repo = source_repo
        self.files = {(f.repository, f.path): f for f in files}
        self._by_element = {f.element_id: f for f in self.files.values()}
        self._ids_in = {(f.repository, f.element_id) for f in self.files.values()}

    def current_hash(self, element_id: str) -> str | None:
        """The head's ``content_sha256`` of a live mirrored element, else ``None``."""
        found = self._by_element.get(element_id)
        return found.head_sha256 if found is not None and found.live else None

    def locate(self, repository: str, path: str) -> str:
        """The element that mirrors (or last mirrored) ``path`` in ``repository``.

        Without a record it is the id derived from the path — unless a renamed file took that
        id with it, in which case the path gets the next free derived id, so a new file at an
        old path never overwrites the element that moved away.
        """
        found = self.files.get((repository, path))
        if found is not None:
            return found.element_id
        candidate = element_id_for(repository, self.source_repo, path)
        n = 1
        while (repository, candidate) in self._ids_in:
            candidate = element_id_for(repository, self.source_repo, f"{path}\0{n}")
            n += 1
        return candidate

    def live(self) -> list[MirroredFile]:
        """Every path whose element is live, in (repository, path) order."""
        return sorted((f for f in self.files.values() if f.live), key=_key)

    def live_element(self, repository: str, path: str) -> str | None:
        """The live element mirroring ``path`` in ``repository``, if any."""
        found = self.files.get((repository, path))
        return found.element_id if found is not None and found.live else None

    def vanished(self, plan: IngestPlan) -> list[FileAction]:
        """Retirements a full scan implies: a full scan sees no deletions, so every live path
        the plan does not cover (and did not skip) is gone upstream."""
        covered = {(a.repository, a.path) for a in plan.actions if a.repository}
        covered_ids = {a.element_id for a in plan.actions if a.element_id}
        skipped = {a.path for a in plan.actions if a.kind is ActionKind.SKIPPED}
        return [
            FileAction(ActionKind.DELETED, f.path, f.element_id, f.repository)
            for f in self.live()
            if (f.repository, f.path) not in covered
            and f.element_id not in covered_ids
            and f.path not in skipped
        ]

    @property
    def repositories(self) -> set[str]:
        """Repositories holding live mirrored elements of this source."""
        return {f.repository for f in self.files.values() if f.live}


def _key(f: MirroredFile) -> tuple[str, str]:
    return f.repository, f.path
