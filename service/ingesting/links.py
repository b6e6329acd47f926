"""Reconciling relationships between mirrored files after the file actions: ``REFERENCE`` ones
from links, ``SUPERSEDES`` ones from lifecycle statements ("Supersedes: 432", "Superseded by:
…"). Each file's own text decides the relationships it states: stated ones are added, ones its
text no longer states are retired."""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.model import Relationship, RelationshipKind
from ingest.links.types import LINK_TYPE
from service.core import UnitOfWork
from service.governance.writer import ElementWriter
from service.ingesting.mirror import BATCH, IngestRun
from service.kernel import Kernel

if (
    TYPE_CHECKING
):  # the ingest pipeline is imported by the first run (``service.ingesting.backlog``)
    from ingest.links.resolve import LinkTarget

    _LinkWork = tuple[str, str, tuple[LinkTarget, ...], bool]
    """(repository, source element, link targets, whether links no longer named are retired)"""


class _Counts:
    """Where one relationship type's additions and retirements are tallied."""

    def __init__(self, run: IngestRun, type_key: str) -> None:
        self.run, self.links = run, type_key == LINK_TYPE
        self.reason = "link removed" if self.links else "statement removed"

    def added(self, n: int) -> None:
        if self.links:
            self.run.tally.links_added += n
        else:
            self.run.tally.supersedes_added += n
        self.run.tally.writes += n

    def retired(self) -> None:
        if self.links:
            self.run.tally.links_retired += 1
        else:
            self.run.tally.supersedes_retired += 1
        self.run.tally.writes += 1


class LinkMirror:
    """The link step of an ingest run."""

    def __init__(self, k: Kernel, writer: ElementWriter) -> None:
        self.k = k
        self.writer = writer

    def apply(self, run: IngestRun) -> None:
        """Make each mirrored file's ``links_to`` relationships match its links, connect older
        files whose unresolved links point at files that appeared in this run, and make its
        ``SUPERSEDES`` relationships match its lifecycle statements."""
        from ingest.links.resolve import FileLinks

        work: list[_LinkWork] = []
        for a in run.applied:
            links = run.links.get(a.path, FileLinks())
            run.tally.links_resolved += len(links.targets)
            run.tally.links_unresolved.update(str(u["reason"]) for u in links.unresolved)
            work.append((a.repository or "", a.element_id or "", links.targets, True))
        work += self._late_links(run)
        self._reconcile(run, LINK_TYPE, RelationshipKind.REFERENCE, work)
        for type_key, stated in run.statements.items():
            work = [
                (
                    a.repository or "",
                    a.element_id or "",
                    stated.get(a.path, FileLinks()).targets,
                    True,
                )
                for a in run.applied
            ]
            self._reconcile(run, type_key, RelationshipKind.SUPERSEDES, work)

    def _reconcile(
        self, run: IngestRun, type_key: str, kind: RelationshipKind, work: list[_LinkWork]
    ) -> None:
        """Apply ``work`` for one relationship type, in batches of units of work."""
        counts = _Counts(run, type_key)
        total = len(work)
        for start in range(0, total, BATCH * 2):
            batch = work[start : start + BATCH * 2]
            with self.k.uow() as uow:
                existing = uow.store.live_relationships_from((item[1] for item in batch), type_key)
                added: list[Relationship] = []
                for item in batch:
                    added += self._link(uow, run, item, existing, kind, type_key, counts)
                self.writer.relationships(uow, run.caller, added)
                counts.added(len(added))
                uow.commit()
            run.tick("linking", min(start + len(batch), total), total)

    def _link(
        self,
        uow: UnitOfWork,
        run: IngestRun,
        item: _LinkWork,
        existing: dict[str, list[Relationship]],
        kind: RelationshipKind,
        type_key: str,
        counts: _Counts,
    ) -> list[Relationship]:
        """The relationships to add for one file; retires the ones it no longer states."""
        repository, source_id, targets, reconcile = item
        have = {r.target_element_id: r for r in existing.get(source_id, [])}
        want = {t.element_id: t for t in targets}
        caller, by = run.caller, run.caller.principal_id
        added = [
            Relationship.new(
                repository,
                kind,
                type_key,
                source_id,
                target_id,
                {"raw": target.raw, "target_path": target.path},
                self.k.clock.now(),
                by,
            )
            for target_id, target in want.items()
            if target_id not in have
        ]
        if not reconcile:
            return added
        for target_id, rel in have.items():
            if target_id in want:
                continue
            at = self.k.clock.now()
            uow.store.retire_relationship(rel.relationship_id, at, by)
            self.k.audit.event(
                uow,
                caller,
                rel.repo_key,
                "relationship.retired",
                at,
                element_id=source_id,
                payload={"relationship_id": rel.relationship_id, "reason": counts.reason},
            )
            counts.retired()
        return added

    def _late_links(self, run: IngestRun) -> list[_LinkWork]:
        """Files untouched by this run whose recorded unresolved links now resolve."""
        from ingest.links.resolve import late_targets

        touched = {a.element_id for a in run.actions}
        others = [f for f in run.state.live() if f.element_id not in touched]
        if not run.appeared or not others:
            return []
        with self.k.uow(readonly=True) as uow:
            metadata = uow.store.head_metadata(f.element_id for f in others)
        return [
            (f.repository, f.element_id, targets, False)
            for f in others
            if (targets := late_targets(f, metadata.get(f.element_id, {}), run.appeared, run.where))
        ]
