"""Use cases of ingest: mirror a markdown backlog (a git repository) in as evidence.

``ingest_backlog`` plans the run with the pure planner (``ingest.plan``), then applies the plan
through the domain, in batches of units of work, so authorization, the audit chain and the index
outbox apply exactly as for any other write:

1. authorize ``ingest`` on the command's repository (and later on every routed repository);
2. plan from the last ingested commit (only the diff is read) or, on the first run, a full scan;
3. apply file actions (create, new version, rename, retire, reinstate), ``BATCH`` files per unit
   of work, so a large backlog never holds one giant transaction;
4. reconcile ``REFERENCE`` relationships between mirrored files (also batched);
5. only then record the source's last commit and report, with one ``ingest.run`` audit event.

A run that writes nothing at the commit already recorded writes nothing at all — no versions, no
audit events, no run record. A run interrupted after some batches is safe to repeat: every step
compares with what is stored and converges.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from domain.errors import Conflict, InvalidArgument, LegalHoldActive, NotFound, PermissionDenied
from domain.model import Element, ElementVersion, Provenance, Relationship, RelationshipKind
from domain.permissions import Action
from domain.values import (
    MAX_TITLE_CHARS,
    Classification,
    ElementKind,
    SourceKind,
    principal_type,
)
from ingest.explain import explain_routing
from ingest.git_source import GitBacklogSource, GitSourceError
from ingest.links import (
    LINK_TYPE,
    FileLinks,
    LinkTarget,
    late_targets,
    mirrored_after,
    resolve_links,
)
from ingest.plan import PlanOptions, build_plan
from ingest.plan_model import ActionKind, FileAction, IngestPlan
from ingest.routing import RepositoryKey, RoutingConfigError, load_config
from ingest.routing_model import RoutingConfig
from ingest.run_report import RunTally
from ingest.state import MirrorState
from service.authz import Caller
from service.core import UnitOfWork
from service.element_ops import ElementOps
from service.views import iso

TOOL_ID = "ameide-ingest"
BATCH = 100
"""Files per unit of work: big enough to amortize a commit, small enough to keep locks short."""
MAX_GLOB_CHARS = 500
MAX_SOURCE_CHARS = 500  # ingest_sources.source_repo

_LinkWork = tuple[str, str, tuple[LinkTarget, ...], bool]
"""(repository, source element, link targets, whether links no longer named are retired)"""

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)`` with phase ``reading``, ``writing`` or ``linking``."""


@dataclass
class _Run:
    """One run's context while its plan is applied."""

    caller: Caller
    plan: IngestPlan  # as planned (the report counts PII over every planned file)
    actions: list[FileAction]  # what this caller may apply, full-scan retirements included
    state: MirrorState
    links: dict[str, FileLinks]
    where: dict[tuple[str, str], str]
    progress: Progress | None
    tally: RunTally = field(default_factory=RunTally)
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


class IngestOps(ElementOps):
    """Mirror markdown backlogs in as evidence."""

    # -- the run -------------------------------------------------------------------------
    def ingest_backlog(
        self,
        caller: Caller,
        source: str,
        repo: str,
        *,
        glob: str = "**/*.md",
        ref: str = "main",
        routing: str | Path | None = None,
        progress: Progress | None = None,
        cache_dir: Path | None = None,
        full_scan: bool = False,
    ) -> dict[str, Any]:
        """Mirror the markdown files of ``source`` at ``ref`` into ``repo``; returns the report.

        ``routing`` is a rule file's path or its YAML text. ``full_scan`` re-reads every file
        instead of the diff since the last run (it also retires what disappeared meanwhile).
        """
        started = time.perf_counter()
        key = self.repo_key(repo)
        glob = _valid_glob(glob)
        config = _routing_config(routing)
        with self._uow(readonly=True) as uow:
            self.gate(uow, caller, key, Action.INGEST)
        with _open_source(source, cache_dir) as src:
            if len(src.source_repo) > MAX_SOURCE_CHARS:
                raise InvalidArgument(f"source name is longer than {MAX_SOURCE_CHARS} characters")
            with self._uow(readonly=True) as uow:
                record = uow.store.get_ingest_source(key, src.source_repo)
                state = MirrorState(src.source_repo, uow.store.mirrored_files(src.source_repo))
            since = None if full_scan or record is None else record["last_commit"]
            plan = _plan(src, key, state, ref, since, config, glob, progress)
        timings = {"plan_s": time.perf_counter() - started}
        run = self._prepare_run(caller, key, plan, state, progress)
        mark = time.perf_counter()
        self._apply_files(run)
        timings["write_s"] = time.perf_counter() - mark
        mark = time.perf_counter()
        self._apply_links(run)
        timings["link_s"] = time.perf_counter() - mark
        noop = (
            run.tally.writes == 0 and record is not None and record["last_commit"] == plan.to_commit
        )
        report = run.tally.report(
            plan, ref=ref, glob=glob, noop=noop, duration_s=time.perf_counter() - started
        )
        report["timings"] = {name: round(value, 3) for name, value in timings.items()}
        if not noop:
            report["run"] = self._record_run(run, key, ref, report)
        return report

    def _prepare_run(
        self,
        caller: Caller,
        key: str,
        plan: IngestPlan,
        state: MirrorState,
        progress: Progress | None,
    ) -> _Run:
        """Add full-scan retirements, drop what the caller may not write, resolve links."""
        actions = list(plan.actions)
        if plan.full_scan:
            actions += state.vanished(plan)
        targets = {a.repository for a in actions if a.repository} - {key}
        refused = self._refused_repositories(caller, targets)
        tally = RunTally()
        kept: list[FileAction] = []
        for action in actions:
            if action.kind is ActionKind.SKIPPED:
                tally.skip(action.path, str(action.skip_code), action.skip_reason or "")
            elif action.repository in refused:
                tally.skip(action.path, "forbidden", refused[action.repository])
            else:
                kept.append(action)
        where = mirrored_after(kept, state)
        run = _Run(caller, plan, kept, state, resolve_links(kept, where), where, progress, tally)
        run.paths = {k: f.element_id for k, f in state.files.items()}
        return run

    def _refused_repositories(self, caller: Caller, repositories: set[str]) -> dict[str, str]:
        """Routed repositories the caller may not ingest into, with the reason (missing and
        forbidden read the same, so a rule file cannot probe which repositories exist)."""
        refused: dict[str, str] = {}
        with self._uow(readonly=True) as uow:
            for repository in sorted(repositories):
                try:
                    self.gate(uow, caller, repository, Action.INGEST)
                except (NotFound, PermissionDenied):
                    refused[repository] = (
                        f"routed to {repository}, which does not exist or where "
                        f"{caller.principal_id} may not ingest"
                    )
        return refused

    # -- files ---------------------------------------------------------------------------
    def _apply_files(self, run: _Run) -> None:
        """Apply every file action, ``BATCH`` files per unit of work."""
        total = len(run.actions)
        run.tick("writing", 0, total)
        for start in range(0, total, BATCH):
            batch = run.actions[start : start + BATCH]
            with self._uow() as uow:
                heads = uow.store.elements_with_head_hash(a.element_id for a in batch)
                holds: dict[str, bool] = {}
                for action in batch:
                    if action.kind is ActionKind.DELETED:
                        self._retire_file(uow, run, action, heads, holds)
                    else:
                        self._mirror_file(uow, run, action, heads)
                uow.commit()
            run.tick("writing", start + len(batch), total)

    def _mirror_file(
        self,
        uow: UnitOfWork,
        run: _Run,
        a: FileAction,
        heads: dict[str, tuple[Element, str | None]],
    ) -> None:
        """Create, reinstate, re-version or just re-point one file's element."""
        assert a.element_id is not None
        assert a.repository is not None
        assert a.body is not None
        tally, at = run.tally, self.clock.now()
        tally.bytes_read += len(a.body.encode("utf-8", "surrogatepass"))
        if a.metadata.get("front_matter_repaired"):
            tally.repaired_front_matter += 1
        if a.kind is ActionKind.RENAMED and a.old_path:
            old = (a.repository, a.old_path)
            if uow.store.drop_ingest_file(a.repository, run.source_repo, a.old_path, a.element_id):
                run.paths.pop(old, None)
                tally.writes += 1
        el, head_sha = heads.get(a.element_id, (None, None))
        wrote = False
        if el is None:
            el = self._create_mirrored(uow, run, a, at)
            outcome, wrote = "new", True
        else:
            outcome = "renamed" if a.kind is ActionKind.RENAMED else "unchanged"
            if el.retired:
                self._reinstate(uow, run, el, at)
                outcome = "reinstated"
            if head_sha != a.content_sha256:
                head_sha = self._add_version(uow, run, el, a, at).content_sha256
                wrote = True
                outcome = "changed" if outcome == "unchanged" else outcome
            self._reclassify(uow, run, el, a, at)
        heads[el.element_id] = (el, head_sha)
        if outcome in ("new", "reinstated", "renamed"):
            run.appeared.add((a.repository, a.path))
        known = run.paths.get((a.repository, a.path))
        if wrote or known != el.element_id:
            uow.store.save_ingest_file(
                a.repository,
                run.source_repo,
                a.path,
                el.element_id,
                run.commit,
                exists=known is not None,
            )
            run.paths[(a.repository, a.path)] = el.element_id
            tally.writes += 1
        tally.count(outcome, a.repository)
        run.applied.append(a)

    def _create_mirrored(self, uow: UnitOfWork, run: _Run, a: FileAction, at: datetime) -> Element:
        assert a.repository is not None
        assert a.element_id is not None
        el = Element.new(
            a.repository,
            kind=ElementKind.DOCUMENT.value,
            type_key=a.type_key,
            source_kind=SourceKind.INGESTED_EVIDENCE,
            classification=_classification(a),
            at=at,
            by=run.caller.principal_id,
            element_id=a.element_id,
        )
        self.write_new_element(
            uow,
            run.caller,
            el,
            title=_title(a),
            body=a.body or "",
            metadata=_metadata(a, run.links.get(a.path)),
            at=at,
            provenance=self._ingest_provenance(run, a.path),
        )
        run.tally.versions += 1
        run.tally.writes += 1
        return el

    def _add_version(
        self, uow: UnitOfWork, run: _Run, el: Element, a: FileAction, at: datetime
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
        self.event(
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

    def _reinstate(self, uow: UnitOfWork, run: _Run, el: Element, at: datetime) -> None:
        el.reinstate()
        uow.store.reinstate_element(el.element_id, at, run.caller.principal_id)
        self.event(
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
        self, uow: UnitOfWork, run: _Run, el: Element, a: FileAction, at: datetime
    ) -> None:
        """Routing decides an ingested file's classification; follow it when it changes."""
        wanted = _classification(a)
        if el.classification is wanted:
            return
        uow.store.set_classification(el.element_id, wanted.value, at)
        self.event(
            uow,
            run.caller,
            el.repo_key,
            "element.reclassified",
            at,
            element_id=el.element_id,
            payload={"from": el.classification.value, "to": wanted.value, "rule": a.rule},
        )
        el.classification = wanted
        run.tally.writes += 1

    def _retire_file(
        self,
        uow: UnitOfWork,
        run: _Run,
        a: FileAction,
        heads: dict[str, tuple[Element, str | None]],
        holds: dict[str, bool],
    ) -> None:
        """Retire the element of a file deleted upstream; a legal hold keeps it, reported."""
        found = heads.get(a.element_id or "")
        if found is None or found[0].retired or a.repository is None:
            return
        el = found[0]
        if a.repository not in holds:
            holds[a.repository] = bool(uow.store.get_repository(a.repository).legal_hold)
        at = self.clock.now()
        try:
            el.retire(at, run.caller.principal_id, legal_hold=holds[a.repository])
        except LegalHoldActive:
            run.tally.skip(
                a.path, "legal_hold", f"deleted upstream, but {a.repository} is under legal hold"
            )
            return
        uow.store.retire_element(el)
        self.event(
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

    def _ingest_provenance(self, run: _Run, path: str) -> Provenance:
        caller = run.caller
        return Provenance(
            principal_type(caller.principal_id),
            caller.principal_id,
            TOOL_ID,
            source_repo=run.source_repo,
            commit_sha=run.commit,
            path=path,
        )

    # -- links ---------------------------------------------------------------------------
    def _apply_links(self, run: _Run) -> None:
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
        run: _Run,
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

    def _write_links(self, uow: UnitOfWork, run: _Run, rels: list[Relationship]) -> None:
        """Append the run's link relationships (one statement, each audited)."""
        self.write_relationships(uow, run.caller, rels)
        run.tally.links_added += len(rels)
        run.tally.writes += len(rels)

    def _late_links(self, run: _Run) -> list[_LinkWork]:
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

    # -- the record ----------------------------------------------------------------------
    def _record_run(self, run: _Run, key: str, ref: str, report: dict[str, Any]) -> int:
        """Remember the commit and the report, and audit the run (after every batch)."""
        with self._uow() as uow:
            at = self.clock.now()
            count: int = uow.store.record_ingest_run(
                key,
                run.source_repo,
                commit=run.commit,
                ref=ref,
                at=at,
                by=run.caller.principal_id,
                report=report,
            )
            self.event(
                uow,
                run.caller,
                key,
                "ingest.run",
                at,
                payload={
                    "source_repo": run.source_repo,
                    "ref": ref,
                    "from_commit": report["from_commit"],
                    "to_commit": run.commit,
                    "full_scan": report["full_scan"],
                    "counts": report["counts"],
                    "skipped_by_code": report["skipped_by_code"],
                    "links": report["links"],
                    "versions_written": report["versions_written"],
                    "repositories": report["repositories"],
                    "run": count,
                },
            )
            uow.commit()
        return count

    # -- status and explain --------------------------------------------------------------
    def ingest_status(self, caller: Caller, repo: str) -> dict[str, Any]:
        """The last run of every source ingested into ``repo`` (readers and ingestors)."""
        key = self.repo_key(repo)
        with self._uow(readonly=True) as uow:
            try:
                self.gate(uow, caller, key, Action.READ)
            except PermissionDenied:
                self.gate(uow, caller, key, Action.INGEST)
            rows = uow.store.list_ingest_sources(key)
            self.log_read(uow, caller, "ingest.status", key)
            uow.commit()
        return {"repository": key, "sources": [_source_view(r) for r in rows]}

    def routing_explain(
        self,
        caller: Caller | None,
        routing: str | Path | None,
        path: str,
        data: bytes,
        *,
        repo: str | None = None,
    ) -> dict[str, Any]:
        """Which routing rule decides a file, and why, rule by rule (reads no stored state)."""
        if caller is not None:
            self.check_caller(caller)
        key = self.repo_key(repo) if repo else None
        return explain_routing(
            _routing_config(routing) or RoutingConfig(),
            path,
            data,
            repository=RepositoryKey.parse(key) if key else None,
            max_bytes=PlanOptions().max_bytes,
        )


# -- helpers ---------------------------------------------------------------------------------


def _open_source(source: str, cache_dir: Path | None) -> GitBacklogSource:
    if not isinstance(source, str) or not source.strip():
        raise InvalidArgument("source is required: a git repository path or URL", field="source")
    try:
        return GitBacklogSource.open(source, cache_dir=cache_dir)
    except GitSourceError as exc:
        raise InvalidArgument(str(exc), field="source") from None


def _plan(
    src: GitBacklogSource,
    key: str,
    state: MirrorState,
    ref: str,
    since: str | None,
    config: RoutingConfig | None,
    glob: str,
    progress: Progress | None,
) -> IngestPlan:
    tick = (lambda done, total: progress("reading", done, total)) if progress else None
    try:
        return build_plan(
            src,
            repository=RepositoryKey.parse(key),
            current_hash=state.current_hash,
            ref=ref,
            since=since,
            routing=config,
            options=PlanOptions(glob=glob),
            locate=state.locate,
            progress=tick,
        )
    except GitSourceError as exc:
        raise InvalidArgument(str(exc), field="ref") from None


def _valid_glob(glob: str) -> str:
    if not isinstance(glob, str) or not glob.strip() or len(glob) > MAX_GLOB_CHARS:
        raise InvalidArgument(
            f"glob must be a pattern of 1-{MAX_GLOB_CHARS} characters", field="glob"
        )
    return glob.strip()


def _routing_config(routing: str | Path | None) -> RoutingConfig | None:
    """A rule file (a path, or YAML text), validated; errors name the rule and field."""
    if routing is None:
        return None
    is_path = isinstance(routing, Path) or (
        "\n" not in routing and routing.strip().endswith((".yaml", ".yml"))
    )
    try:
        if is_path:
            path = Path(routing)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise RoutingConfigError(str(path), [f"cannot read: {exc}"]) from None
            return load_config(text, source=str(path))
        return load_config(str(routing))
    except RoutingConfigError as exc:
        raise InvalidArgument(
            f"invalid routing rules: {exc}", field="routing", errors=exc.errors
        ) from None


def _classification(a: FileAction) -> Classification:
    return Classification(a.classification.value) if a.classification else Classification.INTERNAL


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


def _source_view(row: dict[str, Any]) -> dict[str, Any]:
    """One ``ingest_sources`` record for ``ingest status``."""
    return {
        "source_repo": row["source_repo"],
        "last_commit": row["last_commit"],
        "last_ref": row["last_ref"],
        "last_run_at": iso(row["last_run_at"]),
        "last_run_by": row["last_run_by"],
        "run_count": row["run_count"],
        "last_report": row["last_report"],
    }
