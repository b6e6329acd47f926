"""Reconciling the ``REFERENCE`` relationships between mirrored files after the file actions."""

from __future__ import annotations

from domain.model import Relationship, RelationshipKind
from ingest.links import LINK_TYPE, FileLinks, LinkTarget, late_targets
from service.core import UnitOfWork
from service.ingest_files import BATCH, IngestFileOps, IngestRun

_LinkWork = tuple[str, str, tuple[LinkTarget, ...], bool]
"""(repository, source element, link targets, whether links no longer named are retired)"""


class IngestLinkOps(IngestFileOps):
    """The link step of an ingest run."""

    def _apply_links(self, run: IngestRun) -> None:
        """Make each mirrored file's ``links_to`` relationships match its links, and connect
        older files whose unresolved links point at files that appeared in this run."""
        work: list[_LinkWork] = []
        for a in run.applied:
            links = run.links.get(a.path, FileLinks())
            run.tally.links_unresolved += len(links.unresolved)
            work.append((a.repository or "", a.element_id or "", links.targets, True))
        work += self._late_links(run)
        total = len(work)
        for start in range(0, total, BATCH * 2):
            batch = work[start : start + BATCH * 2]
            with self._uow() as uow:
                existing = uow.store.live_relationships_from((item[1] for item in batch), LINK_TYPE)
                added: list[Relationship] = []
                for item in batch:
                    added += self._link(uow, run, item, existing)
                self._write_links(uow, run, added)
                uow.commit()
            run.tick("linking", min(start + len(batch), total), total)

    def _link(
        self,
        uow: UnitOfWork,
        run: IngestRun,
        item: _LinkWork,
        existing: dict[str, list[Relationship]],
    ) -> list[Relationship]:
        """The relationships to add for one file; retires the ones its links no longer name."""
        repository, source_id, targets, reconcile = item
        have = {r.target_element_id: r for r in existing.get(source_id, [])}
        want = {t.element_id: t for t in targets}
        caller, by = run.caller, run.caller.principal_id
        added = [
            Relationship.new(
                repository,
                RelationshipKind.REFERENCE,
                LINK_TYPE,
                source_id,
                target_id,
                {"raw": target.raw, "target_path": target.path},
                self.clock.now(),
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
            at = self.clock.now()
            uow.store.retire_relationship(rel.relationship_id, at, by)
            self.event(
                uow,
                caller,
                rel.repo_key,
                "relationship.retired",
                at,
                element_id=source_id,
                payload={"relationship_id": rel.relationship_id, "reason": "link removed"},
            )
            run.tally.links_retired += 1
            run.tally.writes += 1
        return added

    def _write_links(self, uow: UnitOfWork, run: IngestRun, rels: list[Relationship]) -> None:
        """Append the run's link relationships (one statement, each audited)."""
        self.write_relationships(uow, run.caller, rels)
        run.tally.links_added += len(rels)
        run.tally.writes += len(rels)

    def _late_links(self, run: IngestRun) -> list[_LinkWork]:
        """Files untouched by this run whose recorded unresolved links now resolve."""
        touched = {a.element_id for a in run.actions}
        others = [f for f in run.state.live() if f.element_id not in touched]
        if not run.appeared or not others:
            return []
        with self._uow(readonly=True) as uow:
            metadata = uow.store.head_metadata(f.element_id for f in others)
        return [
            (f.repository, f.element_id, targets, False)
            for f in others
            if (targets := late_targets(f, metadata.get(f.element_id, {}), run.appeared, run.where))
        ]
