"""The shape of an ingest plan: per-file actions and a report, as plain frozen dataclasses.

How to apply a plan (the service layer's job, inside one unit of work per file or batch):

- ``NEW``: create the element (``element_id``, ``TYPE_KEY``, ``INGESTED_EVIDENCE``,
  ``classification``) in ``repository`` with a first version (``title``, ``body``, ``metadata``,
  ``provenance``).
- ``CHANGED``: add a version to ``element_id``.
- ``RENAMED``: the element ``element_id`` (the old path's) now mirrors ``path``; add a version
  (new provenance path) when ``content_changed``, otherwise only record the new path.
- ``UNCHANGED``: nothing (links may be re-checked).
- ``DELETED``: retire ``element_id``.
- ``SKIPPED``: nothing; report ``skip_code`` / ``skip_reason``.

``links`` are REFERENCE relationship candidates from this file to ``target_path``; ``resolved``
says the target is among the files this run can ingest. Keep unresolved ones to retry later.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from ingest.markdown import LinkKind
from ingest.routing.model import Classification, Policy

if TYPE_CHECKING:
    from ingest.document import PreparedDocument, SkipCode
    from ingest.front_matter import JsonValue

TYPE_KEY = "ameide:ingest.backlog_md"


class ActionKind(StrEnum):
    """What the applier does for one file."""

    NEW = "new"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    RENAMED = "renamed"
    DELETED = "deleted"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class LinkCandidate:
    """A REFERENCE relationship candidate: this file refers to ``target_path`` (``None``: it
    would leave the repository). ``resolved``: the target is among the files being ingested.
    ``ambiguous``: several files answer to the reference, so none was chosen; ``outside``: the
    target is not a file the ingest mirrors (outside its glob: source code, configuration)."""

    raw: str
    kind: LinkKind
    target_path: str | None
    resolved: bool
    ambiguous: bool = False
    outside: bool = False


@dataclass(frozen=True)
class FileAction:
    """One planned action for one path; document fields are set unless ``DELETED``/``SKIPPED``."""

    kind: ActionKind
    path: str
    element_id: str | None = None
    repository: str | None = None
    old_path: str | None = None
    content_changed: bool = False
    title: str | None = None
    body: str | None = None
    content_sha256: str | None = None
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)
    classification: Classification | None = None
    policy: Policy | None = None
    tags: tuple[str, ...] = ()
    links: tuple[LinkCandidate, ...] = ()
    supersedes: tuple[LinkCandidate, ...] = ()  # files this one says it supersedes (resolved)
    superseded_by: tuple[LinkCandidate, ...] = ()  # files this one says supersede it (resolved)
    pii_counts: Mapping[str, int] = field(default_factory=dict)
    rule: str | None = None
    override_rule: str | None = None
    provenance: Mapping[str, str] = field(default_factory=dict)
    skip_code: SkipCode | None = None
    skip_reason: str | None = None
    type_key: str = TYPE_KEY

    @property
    def writes_version(self) -> bool:
        """Whether applying this action creates a new element version."""
        return self.kind in (ActionKind.NEW, ActionKind.CHANGED) or (
            self.kind is ActionKind.RENAMED and self.content_changed
        )

    @classmethod
    def for_document(
        cls,
        kind: ActionKind,
        path: str,
        element_id: str,
        doc: PreparedDocument,
        *,
        source_repo: str,
        commit: str,
    ) -> FileAction:
        """An action carrying a prepared document (links are filled in later)."""
        return cls(
            kind=kind,
            path=path,
            element_id=element_id,
            repository=str(doc.decision.repository),
            content_changed=kind in (ActionKind.NEW, ActionKind.CHANGED),
            title=doc.title,
            body=doc.body,
            content_sha256=doc.content_sha256,
            metadata=doc.metadata,
            classification=doc.decision.classification,
            policy=doc.decision.policy,
            tags=doc.tags,
            pii_counts=doc.pii_counts,
            rule=doc.decision.rule,
            override_rule=doc.decision.override_rule,
            provenance={"source_repo": source_repo, "commit_sha": commit, "path": path},
        )

    def renamed_from(self, old_path: str, content_changed: bool) -> FileAction:
        """This action as a rename of ``old_path``."""
        return replace(
            self, kind=ActionKind.RENAMED, old_path=old_path, content_changed=content_changed
        )

    def with_links(self, links: tuple[LinkCandidate, ...]) -> FileAction:
        """This action with its resolved link candidates."""
        return replace(self, links=links)


@dataclass(frozen=True)
class IngestReport:
    """Counts for the run report (``retired`` = deleted actions)."""

    new: int = 0
    changed: int = 0
    unchanged: int = 0
    renamed: int = 0
    retired: int = 0
    skipped: int = 0
    skipped_by_code: Mapping[str, int] = field(default_factory=dict)
    pii_counts: Mapping[str, int] = field(default_factory=dict)
    redacted_files: int = 0

    @classmethod
    def from_actions(cls, actions: list[FileAction]) -> IngestReport:
        """Count a plan's actions."""
        kinds = Counter(a.kind for a in actions)
        skips = Counter(str(a.skip_code) for a in actions if a.skip_code is not None)
        pii: Counter[str] = Counter()
        for action in actions:
            pii.update(action.pii_counts)
        redacted = sum(1 for a in actions if a.policy and a.policy.masked(a.pii_counts))
        return cls(
            new=kinds[ActionKind.NEW],
            changed=kinds[ActionKind.CHANGED],
            unchanged=kinds[ActionKind.UNCHANGED],
            renamed=kinds[ActionKind.RENAMED],
            retired=kinds[ActionKind.DELETED],
            skipped=kinds[ActionKind.SKIPPED],
            skipped_by_code=dict(sorted(skips.items())),
            pii_counts=dict(sorted(pii.items())),
            redacted_files=redacted,
        )


@dataclass(frozen=True)
class IngestPlan:
    """Everything one run would do, from ``from_commit`` (``None``: full scan) to ``to_commit``.

    After applying, record ``to_commit`` as the source's last ingested commit.
    """

    source_repo: str
    repository: str
    from_commit: str | None
    to_commit: str
    full_scan: bool
    actions: tuple[FileAction, ...]
    report: IngestReport
    notes: tuple[str, ...] = ()

    @property
    def seen_paths(self) -> frozenset[str]:
        """Paths present at ``to_commit`` that the plan covers (for full-scan retirement)."""
        return frozenset(a.path for a in self.actions if a.kind is not ActionKind.DELETED)

    def by_kind(self, kind: ActionKind) -> list[FileAction]:
        """The actions of one kind, in path order."""
        return [a for a in self.actions if a.kind is kind]
