"""Resolve a plan's link candidates to the elements they point at, before anything is written.

A link becomes a ``REFERENCE`` relationship when its target path is mirrored in the *same*
repository after this run (relationships never cross repositories); otherwise it is recorded as
unresolved in the version metadata, with the reason, so a later run can still connect it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.records import MirroredFile
from ingest.links.types import SUPERSEDED_BY_TYPE, SUPERSEDES_TYPE
from ingest.plan_model import ActionKind, FileAction, LinkCandidate
from ingest.state import MirrorState

MAX_UNRESOLVED = 200  # kept in version metadata; a file with thousands of dead links is noise

DOCUMENT_KINDS = frozenset(
    {ActionKind.NEW, ActionKind.CHANGED, ActionKind.UNCHANGED, ActionKind.RENAMED}
)


@dataclass(frozen=True)
class LinkTarget:
    """A resolved link: the target element and how the file referred to it."""

    element_id: str
    path: str
    raw: str


@dataclass(frozen=True)
class FileLinks:
    """One file's links: resolved targets (one per element, in order) and unresolved ones."""

    targets: tuple[LinkTarget, ...] = ()
    unresolved: tuple[dict[str, str | None], ...] = ()

    def unresolved_metadata(self) -> list[dict[str, str | None]]:
        """What goes into version metadata as ``unresolved_links`` (capped)."""
        return list(self.unresolved[:MAX_UNRESOLVED])


def mirrored_after(actions: Iterable[FileAction], state: MirrorState) -> dict[tuple[str, str], str]:
    """(repository, path) → element id of everything mirrored once ``actions`` are applied."""
    where = {(f.repository, f.path): f.element_id for f in state.live()}
    actions = list(actions)
    for action in actions:  # removals first: a rename's old path or a deleted path is gone
        if action.kind is ActionKind.DELETED and action.repository is not None:
            where.pop((action.repository, action.path), None)
        if action.kind is ActionKind.RENAMED and action.repository and action.old_path:
            where.pop((action.repository, action.old_path), None)
    for action in actions:
        if action.kind in DOCUMENT_KINDS and action.repository and action.element_id:
            where[(action.repository, action.path)] = action.element_id
    return where


def _links(action: FileAction) -> tuple[LinkCandidate, ...]:
    return action.links


def resolve_links(
    actions: Iterable[FileAction],
    where: Mapping[tuple[str, str], str],
    pick: Callable[[FileAction], tuple[LinkCandidate, ...]] = _links,
) -> dict[str, FileLinks]:
    """Path → its links (or, with ``pick``, other candidates such as lifecycle statements),
    for every document action that has some."""
    repositories_by_path: dict[str, set[str]] = {}
    for repository, path in where:
        repositories_by_path.setdefault(path, set()).add(repository)
    out: dict[str, FileLinks] = {}
    for action in actions:
        if action.kind not in DOCUMENT_KINDS or not pick(action) or action.repository is None:
            continue
        targets: dict[str, LinkTarget] = {}
        unresolved: list[dict[str, str | None]] = []
        for link in pick(action):
            target = link.target_path
            found = where.get((action.repository, target)) if target else None
            if found == action.element_id:
                continue  # a file mentioning itself is not a relationship
            if found is not None and target is not None:
                targets.setdefault(found, LinkTarget(found, target, link.raw))
                continue
            reason = unresolved_reason(link, bool(target and repositories_by_path.get(target)))
            unresolved.append({"raw": link.raw, "target_path": target, "reason": reason})
        out[action.path] = FileLinks(tuple(targets.values()), tuple(unresolved))
    return out


AMBIGUOUS = "ambiguous"
OUTSIDE = "not a mirrored file"
MISSING = "not mirrored"
LEAVES = "leaves the source repository"
ELSEWHERE = "mirrored in another repository"
OUTSIDE_REASONS = (OUTSIDE, LEAVES, ELSEWHERE)
"""The reasons the run report counts as ``outside``: no file of this backlog's mirror."""


def unresolved_reason(link: LinkCandidate, mirrored_elsewhere: bool) -> str:
    """Why a link found no element: it leaves the source, several files answer to it, its
    target is mirrored in another repository, is no file the ingest mirrors (outside the glob:
    source code, configuration), or is a document that is not there (missing)."""
    if link.target_path is None:
        return LEAVES
    if link.ambiguous:
        return AMBIGUOUS
    if mirrored_elsewhere:
        return ELSEWHERE
    return OUTSIDE if link.outside else MISSING


def resolve_statements(
    actions: Iterable[FileAction], where: Mapping[tuple[str, str], str]
) -> dict[str, dict[str, FileLinks]]:
    """Relationship type → path → the lifecycle statements of each document, resolved to
    elements (``SUPERSEDES_TYPE`` and ``SUPERSEDED_BY_TYPE``)."""
    actions = list(actions)
    return {
        SUPERSEDES_TYPE: resolve_links(actions, where, lambda a: a.supersedes),
        SUPERSEDED_BY_TYPE: resolve_links(actions, where, lambda a: a.superseded_by),
    }


def late_targets(
    file: MirroredFile,
    head_metadata: Mapping[str, Any],
    appeared: set[tuple[str, str]],
    where: Mapping[tuple[str, str], str],
) -> tuple[LinkTarget, ...]:
    """Targets of a file's recorded ``unresolved_links`` that appeared in this run."""
    found: dict[str, LinkTarget] = {}
    for link in head_metadata.get("unresolved_links") or []:
        target = link.get("target_path") if isinstance(link, dict) else None
        if not isinstance(target, str) or (file.repository, target) not in appeared:
            continue
        element_id = where.get((file.repository, target))
        if element_id and element_id != file.element_id:
            found.setdefault(element_id, LinkTarget(element_id, target, str(link.get("raw", ""))))
    return tuple(found.values())
