"""Applying an ingest plan's file actions: create, re-version, rename, reinstate, retire.

Files are applied ``BATCH`` per unit of work. Within a batch, the rows of files seen for the
first time (the bulk of a first run) are kept in a :class:`MirrorBatch` and written together
(elements with their first version as head, the versions, their index outbox rows and the
``ingest_files`` rows: four statements per batch rather than five per file). Every other write
of the batch flushes it first, so statements keep their order and a lost race still surfaces
where it did; audit events are queued in file order either way and chained at commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.errors import Conflict, LegalHoldActive
from domain.model import Element, ElementVersion, Provenance
from domain.values import MAX_TITLE_CHARS, ElementKind, SourceKind
from service.authz import Caller
from service.core import UnitOfWork, existing
from service.governance.writer import ElementWriter, created_payload, provenance
from service.ingesting.classification import planned_level
from service.kernel import Kernel
from service.ports import IngestStore

if (
    TYPE_CHECKING
):  # the ingest pipeline is imported by the first run (``service.ingesting.backlog``)
    from ingest.links.resolve import FileLinks
    from ingest.plan_model import FileAction, IngestPlan
    from ingest.run_report import RunTally
    from ingest.state import MirrorState

TOOL_ID = "ameide-ingest"
BATCH = 100
"""Files per unit of work: big enough to amortize a commit, small enough to keep locks short."""

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)`` with phase ``reading``, ``writing`` or ``linking``."""


@dataclass
class IngestRun:
    """One run's context while its plan is applied."""

    caller: Caller
    plan: IngestPlan  # as planned (the report counts PII over every planned file)
    actions: list[FileAction]  # what this caller may apply, full-scan retirements included
    state: MirrorState
    links: dict[str, FileLinks]
    where: dict[tuple[str, str], str]
    progress: Progress | None
    statements: dict[str, dict[str, FileLinks]]  # lifecycle statements, by type
    tally: RunTally
    paths: dict[tuple[str, str], str] = field(default_factory=dict)  # (repo, path) → element
    applied: list[FileAction] = field(default_factory=list)  # document actions written or kept
    appeared: set[tuple[str, str]] = field(default_factory=set)  # newly mirrored (repo, path)

    @property
    def source_repo(self) -> str:
        return self.plan.source_repo

    @property
    def commit(self) -> str:
        return self.plan.to_commit

    def tick(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)


class MirrorBatch:
    """The rows of the files a batch mirrors for the first time, written in a few statements.

    ``flush`` writes them (elements before what refers to them); the batch calls it before any
    other write and before committing.
    """

    def __init__(self, store: IngestStore) -> None:
        self._store = store
        self._created: list[tuple[Element, ElementVersion]] = []
        self._files: list[dict[str, str]] = []

    def create(self, el: Element, first: ElementVersion) -> None:
        """A new element with ``first`` as its head (``el`` already points at it)."""
        self._created.append((el, first))

    def mirror(
        self, repository: str, source_repo: str, path: str, element: str, commit: str
    ) -> None:
        """A path mirrored for the first time (no ``ingest_files`` row for it yet)."""
        self._files.append(
            {
                "repo_key": repository,
                "source_repo": source_repo,
                "path": path,
                "element_id": element,
                "commit_sha": commit,
            }
        )

    def flush(self) -> None:
        """Write what is pending."""
        if self._created:
            self._store.insert_new_elements(self._created)
            self._created = []
        if self._files:
            self._store.insert_ingest_files(self._files)
            self._files = []


class FileMirror:
    """The file actions of an ingest run."""

    def __init__(self, k: Kernel, writer: ElementWriter) -> None:
        self.k = k
        self.writer = writer

    def apply(self, run: IngestRun) -> None:
        """Apply every file action, ``BATCH`` files per unit of work."""
        total = len(run.actions)
        run.tick("writing", 0, total)
        for start in range(0, total, BATCH):
            batch = run.actions[start : start + BATCH]
            with self.k.uow() as uow:
                heads = uow.store.elements_with_head_hash(
                    a.element_id for a in batch if a.element_id
                )
                holds: dict[str, bool] = {}
                pending = MirrorBatch(uow.store)
                for action in batch:
                    if action.kind == "deleted":  # ActionKind, a StrEnum
                        self._retire_file(uow, run, action, heads, holds, pending)
                    else:
                        self._mirror_file(uow, run, action, heads, pending)
                pending.flush()
                uow.commit()
            run.tick("writing", start + len(batch), total)

    def _mirror_file(
        self,
        uow: UnitOfWork,
        run: IngestRun,
        a: FileAction,
        heads: dict[str, tuple[Element, str | None]],
        batch: MirrorBatch,
    ) -> None:
        """Create, reinstate, re-version or just re-point one file's element."""
        assert a.element_id is not None
        assert a.repository is not None
        assert a.body is not None
        tally, at = run.tally, self.k.clock.now()
        tally.bytes_read += len(a.body.encode("utf-8", "surrogatepass"))
        if a.metadata.get("front_matter_repaired"):
            tally.repaired_front_matter += 1
        if a.kind == "renamed" and a.old_path:
            old = (a.repository, a.old_path)
            batch.flush()
            if uow.store.drop_ingest_file(a.repository, run.source_repo, a.old_path, a.element_id):
                run.paths.pop(old, None)
                tally.writes += 1
        el, head_sha = heads.get(a.element_id, (None, None))
        wrote = False
        if el is None:
            el = self._create_mirrored(uow, run, a, at, batch)
            outcome, wrote = "new", True
        else:
            batch.flush()
            outcome = "renamed" if a.kind == "renamed" else "unchanged"
            if el.retired:
                self._reinstate(uow, run, el, at)
                outcome = "reinstated"
            lowered = self._reclassify(uow, run, el, a, at)
            if head_sha != a.content_sha256:
                head_sha = self._add_version(uow, run, el, a, at).content_sha256
                wrote = True
                outcome = "changed" if outcome == "unchanged" else outcome
            elif lowered:  # the same content at the new level; earlier versions keep theirs
                self._add_version(uow, run, el, a, at)
                wrote = True
        heads[el.element_id] = (el, head_sha)
        if outcome in ("new", "reinstated", "renamed"):
            run.appeared.add((a.repository, a.path))
        known = run.paths.get((a.repository, a.path))
        if wrote or known != el.element_id:
            if known is None:
                batch.mirror(a.repository, run.source_repo, a.path, el.element_id, run.commit)
            else:
                batch.flush()
                uow.store.save_ingest_file(
                    a.repository, run.source_repo, a.path, el.element_id, run.commit
                )
            run.paths[(a.repository, a.path)] = el.element_id
            tally.writes += 1
        tally.count(outcome, a.repository)
        run.applied.append(a)

    def _create_mirrored(
        self, uow: UnitOfWork, run: IngestRun, a: FileAction, at: datetime, batch: MirrorBatch
    ) -> Element:
        """A new element with version 1 as head (rows left to ``batch``), audited as
        ``ElementOps.write_new_element`` audits it (``created_payload``)."""
        assert a.repository is not None
        assert a.element_id is not None
        el = Element.new(
            a.repository,
            kind=ElementKind.DOCUMENT.value,
            type_key=a.type_key,
            source_kind=SourceKind.INGESTED_EVIDENCE,
            classification=planned_level(a),
            at=at,
            by=run.caller.principal_id,
            element_id=a.element_id,
        )
        v1 = el.next_version(
            title=_title(a),
            body=a.body or "",
            metadata=_metadata(a, run.links.get(a.path)),
            at=at,
            provenance=self._ingest_provenance(run, a.path),
        )
        el.head_version_id, el.head_seq = v1.version_id, v1.seq
        batch.create(el, v1)
        self.k.audit.event(
            uow,
            run.caller,
            el.repo_key,
            "element.created",
            at,
            element_id=el.element_id,
            version_id=v1.version_id,
            payload=created_payload(el, v1),
        )
        run.tally.versions += 1
        run.tally.writes += 1
        return el

    def _add_version(
        self, uow: UnitOfWork, run: IngestRun, el: Element, a: FileAction, at: datetime
    ) -> ElementVersion:
        v = el.next_version(
            title=_title(a),
            body=a.body or "",
            metadata=_metadata(a, run.links.get(a.path)),
            at=at,
            provenance=self._ingest_provenance(run, a.path),
        )
        if not uow.store.move_head(el.element_id, el.head_version_id, v):
            raise Conflict(
                f"element {el.element_id} changed during the ingest run; re-run it",
                element_id=el.element_id,
            )
        uow.store.insert_version(v)
        el.head_version_id, el.head_seq = v.version_id, v.seq
        self.k.audit.event(
            uow,
            run.caller,
            el.repo_key,
            "version.created",
            at,
            element_id=el.element_id,
            version_id=v.version_id,
            payload={
                "seq": v.seq,
                "content_sha256": v.content_sha256,
                "source_repo": run.source_repo,
                "commit_sha": run.commit,
                "path": a.path,
            },
        )
        run.tally.versions += 1
        run.tally.writes += 1
        return v

    def _reinstate(self, uow: UnitOfWork, run: IngestRun, el: Element, at: datetime) -> None:
        el.reinstate()
        uow.store.reinstate_element(el.element_id, at, run.caller.principal_id)
        self.k.audit.event(
            uow,
            run.caller,
            el.repo_key,
            "element.reinstated",
            at,
            element_id=el.element_id,
            payload={"reason": f"file is back upstream at {run.commit}"},
        )
        run.tally.writes += 1

    def _reclassify(
        self, uow: UnitOfWork, run: IngestRun, el: Element, a: FileAction, at: datetime
    ) -> bool:
        """Routing decides an ingested file's classification; follow it when it changes.

        The caller is cleared for both levels (``service.ingesting.classification.above_clearance``
        kept it out of the run otherwise). Lowering pins every earlier version at the old level
        and returns True: the caller then writes the version at the new level."""
        wanted = planned_level(a)
        if el.classification is wanted:
            return False
        lowered = wanted.rank < el.classification.rank
        kept = (
            uow.store.pin_version_classification(el.element_id, el.classification) if lowered else 0
        )
        uow.store.set_classification(el.element_id, wanted.value, at)
        payload: dict[str, Any] = {
            "from": el.classification.value,
            "to": wanted.value,
            "rule": a.rule,
        }
        if lowered:
            payload["versions_kept_at_from"] = kept
        self.k.audit.event(
            uow,
            run.caller,
            el.repo_key,
            "element.reclassified",
            at,
            element_id=el.element_id,
            payload=payload,
        )
        el.classification = wanted
        run.tally.writes += 1
        return lowered

    def _retire_file(
        self,
        uow: UnitOfWork,
        run: IngestRun,
        a: FileAction,
        heads: dict[str, tuple[Element, str | None]],
        holds: dict[str, bool],
        batch: MirrorBatch,
    ) -> None:
        """Retire the element of a file deleted upstream; a legal hold keeps it, reported."""
        found = heads.get(a.element_id or "")
        if found is None or found[0].retired or a.repository is None:
            return
        batch.flush()
        el = found[0]
        if a.repository not in holds:
            holds[a.repository] = existing(uow.store.get_repository(a.repository)).legal_hold
        at = self.k.clock.now()
        try:
            el.retire(at, run.caller.principal_id, legal_hold=holds[a.repository])
        except LegalHoldActive:
            run.tally.skip(
                a.path, "legal_hold", f"deleted upstream, but {a.repository} is under legal hold"
            )
            return
        uow.store.retire_element(el)
        self.k.audit.event(
            uow,
            run.caller,
            el.repo_key,
            "element.retired",
            at,
            element_id=el.element_id,
            payload={"reason": f"deleted upstream at {run.commit}", "path": a.path},
        )
        run.tally.count("retired", a.repository)
        run.tally.writes += 1

    def _ingest_provenance(self, run: IngestRun, path: str) -> Provenance:
        caller = run.caller
        return provenance(
            caller,
            tool_id=TOOL_ID,
            source_repo=run.source_repo,
            commit_sha=run.commit,
            path=path,
        )


# -- helpers ---------------------------------------------------------------------------------


def _title(a: FileAction) -> str:
    title = " ".join((a.title or a.path).split())
    return title[:MAX_TITLE_CHARS] or a.path[:MAX_TITLE_CHARS]


_RESERVED = frozenset({"routing_rule", "routing_override", "unresolved_links"})


def _metadata(a: FileAction, links: FileLinks | None) -> dict[str, Any]:
    """Front matter fields, tags, ``superseded``, routing, and the links left unresolved.

    The keys ingest sets are its own: a front matter field of the same name is dropped, so a
    file cannot pose as having other unresolved links or another routing decision.
    """
    metadata: dict[str, Any] = {k: v for k, v in a.metadata.items() if k not in _RESERVED}
    if a.rule:
        metadata["routing_rule"] = a.rule
    if a.override_rule:
        metadata["routing_override"] = a.override_rule
    if links is not None and links.unresolved:
        metadata["unresolved_links"] = links.unresolved_metadata()
    return metadata
