"""Use cases of ingest: mirror a markdown backlog (a git repository) in as evidence.

``ingest_backlog`` plans the run with the pure planner (``ingest.plan``), then applies the plan
through the domain, in batches of units of work, so authorization, the audit chain and the index
outbox apply exactly as for any other write:

1. authorize ``ingest`` on the command's repository (and later on every routed repository);
2. plan from the last ingested commit (only the diff is read) or, on the first run, a full scan;
3. apply file actions (create, new version, rename, retire, reinstate), ``BATCH`` files per unit
   of work, so a large backlog never holds one giant transaction (``service.ingesting.mirror``);
4. reconcile ``REFERENCE`` relationships between mirrored files, and ``SUPERSEDES`` ones from
   their lifecycle statements, also batched (``service.ingesting.links``);
5. only then record the source's last commit and report, with one ``ingest.run`` audit event.

A run that writes nothing at the commit already recorded writes nothing at all — no versions, no
audit events, no run record. A run interrupted after some batches is safe to repeat: every step
compares with what is stored and converges.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from domain.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from domain.permissions import Action
from domain.values import Classification
from ingest.source import BacklogSource, BacklogSourceFactory, SourceError
from service import results_ops as ro
from service.audit.trimming import Visibility, ingest_source_view
from service.authz import Caller
from service.core import repo_key
from service.ingesting.classification import above_clearance
from service.ingesting.links import LinkMirror
from service.ingesting.mirror import FileMirror, IngestRun, Progress
from service.kernel import Kernel, acting

if TYPE_CHECKING:  # the pipeline (Markdown, YAML, routing rules) is imported by its first use
    from ingest.plan_model import FileAction, IngestPlan
    from ingest.routing.model import RoutingConfig
    from ingest.state import MirrorState

MAX_GLOB_CHARS = 500
MAX_SOURCE_CHARS = 500  # ingest_sources.source_repo


class Ingest:
    """Mirror markdown backlogs in as evidence."""

    def __init__(
        self,
        k: Kernel,
        files: FileMirror,
        links: LinkMirror,
        backlog_sources: BacklogSourceFactory | None = None,
    ) -> None:
        self.k = k
        self.files = files
        self.links = links
        # Opens the backlog a run names (``runtime`` passes the git one); the service never
        # imports a source technology itself. Without it, ``ingest_backlog`` is unavailable.
        self.backlog_sources = backlog_sources

    # -- the run -------------------------------------------------------------------------

    @acting
    def ingest_backlog(
        self,
        caller: Caller,
        source: str,
        repo: str,
        *,
        glob: str = "**/*.md",
        ref: str = "main",
        routing: str | None = None,
        routing_name: str = "routing.yaml",
        progress: Progress | None = None,
        cache_dir: Path | None = None,
        full_scan: bool = False,
        dry_run: bool = False,
        allow_mass_retire: bool = False,
        credential: str | None = None,
    ) -> ro.IngestReport:
        """Mirror the markdown files of ``source`` at ``ref`` into ``repo``; returns the report.

        ``routing`` is a rule file's YAML text (the caller reads the file; ``routing_name`` names
        it in errors). ``full_scan`` re-reads every file instead of the diff since the last run
        (it also retires what disappeared meanwhile). ``dry_run`` plans and reports without
        writing anything. A run that would retire more than :data:`MASS_RETIRE_SHARE` of the
        mirror (at least :data:`MASS_RETIRE_MIN` files) is refused unless ``allow_mass_retire``
        — a mistyped ``--glob`` or ``--ref`` does that. ``credential`` (a registered source's
        token) is handed to the source for a URL's fetch."""
        from ingest.state import MirrorState

        started = time.perf_counter()
        key = repo_key(repo)
        glob = _valid_glob(glob)
        config = _routing_config(routing, routing_name)
        with self.k.uow(readonly=True) as uow:
            self.k.gate.repository(uow, caller, key, Action.INGEST)
        with _open_source(self.backlog_sources, source, cache_dir, credential) as src:
            if len(src.source_repo) > MAX_SOURCE_CHARS:
                raise InvalidArgument(f"source name is longer than {MAX_SOURCE_CHARS} characters")
            with self.k.uow(readonly=True) as uow:
                record = uow.store.get_ingest_source(key, src.source_repo)
                state = MirrorState(src.source_repo, uow.store.mirrored_files(src.source_repo))
            since = None if full_scan or record is None else record["last_commit"]
            plan = _plan(src, key, state, ref, since, config, glob, progress)
        timings = {"plan_s": time.perf_counter() - started}
        run = self._prepare_run(caller, key, plan, state, progress)
        if not allow_mass_retire:
            _refuse_mass_retirement(run, state)
        if dry_run:
            return _dry_run_report(run, ref, glob, time.perf_counter() - started)
        timings["write_s"] = _timed(lambda: self.files.apply(run))
        timings["link_s"] = _timed(lambda: self.links.apply(run))
        noop = (
            run.tally.writes == 0 and record is not None and record["last_commit"] == plan.to_commit
        )
        report = run.tally.report(
            plan, ref=ref, glob=glob, noop=noop, duration_s=time.perf_counter() - started
        )
        report["timings"] = {name: round(value, 3) for name, value in timings.items()}
        if not noop:
            report["run"] = self._record_run(run, key, ref, report)
        return ro.IngestReport.model_validate(report)

    def _prepare_run(
        self,
        caller: Caller,
        key: str,
        plan: IngestPlan,
        state: MirrorState,
        progress: Progress | None,
    ) -> IngestRun:
        """Add full-scan retirements, drop what the caller may not write, resolve links."""
        from ingest import run_report
        from ingest.links import resolve as links

        actions = list(plan.actions)
        if plan.full_scan:
            actions += state.vanished(plan)
        targets = {a.repository for a in actions if a.repository} - {key}
        refused = self._refused_repositories(caller, targets)
        clearance = self._ingest_clearances(caller, {key, *targets} - set(refused))
        tally = run_report.RunTally()
        kept: list[FileAction] = []
        for action in actions:
            if action.kind == "skipped":  # ActionKind, a StrEnum
                tally.skip(action.path, str(action.skip_code), action.skip_reason or "")
            elif action.repository in refused:
                tally.skip(action.path, "forbidden", refused[action.repository])
            elif (above := above_clearance(action, state, clearance)) is not None:
                tally.skip(action.path, "above_clearance", above)
            else:
                kept.append(action)
        where = links.mirrored_after(kept, state)
        run = IngestRun(
            caller,
            plan,
            kept,
            state,
            links.resolve_links(kept, where),
            where,
            progress,
            links.resolve_statements(kept, where),
            tally,
        )
        run.paths = {k: f.element_id for k, f in state.files.items()}
        return run

    def _ingest_clearances(
        self, caller: Caller, repositories: set[str]
    ) -> dict[str, Classification | None]:
        """Repository → the highest classification the caller may ingest at there."""
        with self.k.uow(readonly=True) as uow:
            return {
                repo: self.k.gate.permission(uow, caller, repo).clearance_for(Action.INGEST)
                for repo in sorted(repositories)
            }

    def _refused_repositories(self, caller: Caller, repositories: set[str]) -> dict[str, str]:
        """Routed repositories the caller may not ingest into, with the reason (missing and
        forbidden read the same, so a rule file cannot probe which repositories exist)."""
        refused: dict[str, str] = {}
        with self.k.uow(readonly=True) as uow:
            for repository in sorted(repositories):
                try:
                    self.k.gate.repository(uow, caller, repository, Action.INGEST)
                except (NotFound, PermissionDenied):
                    refused[repository] = (
                        f"routed to {repository}, which does not exist or where "
                        f"{caller.principal_id} may not ingest"
                    )
        return refused

    # -- the record ----------------------------------------------------------------------
    def _record_run(self, run: IngestRun, key: str, ref: str, report: dict[str, Any]) -> int:
        """Remember the commit and the report, and audit the run (after every batch)."""
        with self.k.uow() as uow:
            at = self.k.clock.now()
            count: int = uow.store.record_ingest_run(
                key,
                run.source_repo,
                commit=run.commit,
                ref=ref,
                at=at,
                by=run.caller.principal_id,
                report=report,
            )
            self.k.audit.event(
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
    @acting
    def ingest_status(self, caller: Caller, repo: str) -> ro.IngestStatus:
        """The last run of every source ingested into ``repo`` (readers and ingestors); the
        last reports' totals only for callers cleared for ``restricted``."""
        key = repo_key(repo)
        with self.k.uow(readonly=True) as uow:
            try:
                self.k.gate.repository(uow, caller, key, Action.READ)
            except PermissionDenied:
                self.k.gate.repository(uow, caller, key, Action.INGEST)
            rows = uow.store.list_ingest_sources(key)
            vis = Visibility(self.k.gate, uow, caller)
            sources = [ingest_source_view(r, vis, key) for r in rows]
            self.k.audit.log_read(uow, caller, "ingest.status", key)
            uow.commit()
        return ro.IngestStatus(repository=key, sources=sources)

    @acting
    def routing_explain(
        self,
        caller: Caller | None,
        routing: str | None,
        path: str,
        data: bytes,
        *,
        repo: str | None = None,
        routing_name: str = "routing.yaml",
    ) -> ro.RoutingExplanation:
        """Which routing rule decides a file, and why, rule by rule (reads no stored state).

        ``routing`` is the rule file's YAML text, as for :meth:`ingest_backlog`."""
        from ingest import explain, plan
        from ingest.routing import model as routing_model
        from ingest.routing.rules import RepositoryKey

        if caller is not None:
            self.k.gate.check_caller(caller)
        key = repo_key(repo) if repo else None
        explained = explain.explain_routing(
            _routing_config(routing, routing_name) or routing_model.RoutingConfig(),
            path,
            data,
            repository=RepositoryKey.parse(key) if key else None,
            max_bytes=plan.PlanOptions().max_bytes,
        )
        return ro.RoutingExplanation.model_validate(explained)


# -- helpers ---------------------------------------------------------------------------------
MASS_RETIRE_SHARE = 0.2
"""A run retiring more than this share of the mirror's live files is refused (see below)."""
MASS_RETIRE_MIN = 5
"""…when it retires at least this many: a small mirror losing a file or two is ordinary."""
_PLANNED = {"deleted": "retired"} | {k: k for k in ("new", "changed", "unchanged", "renamed")}


def _timed(step: Callable[[], None]) -> float:
    """Seconds ``step`` took."""
    mark = time.perf_counter()
    step()
    return time.perf_counter() - mark


def _refuse_mass_retirement(run: IngestRun, state: MirrorState) -> None:
    """Stop a run that would retire a large share of the mirror (``--allow-mass-retire``)."""
    retiring = sum(1 for a in run.actions if a.kind == "deleted")
    live = len(state.live())
    if retiring < MASS_RETIRE_MIN or retiring <= MASS_RETIRE_SHARE * live:
        return
    raise FailedPrecondition(
        f"this run would retire {retiring} of the {live} mirrored files "
        f"({retiring / live:.0%}; the limit is {MASS_RETIRE_SHARE:.0%}): a mistyped --glob or "
        "--ref does this. Check with --dry-run; pass --allow-mass-retire if it is meant",
        retiring=retiring,
        mirrored=live,
        option="allow_mass_retire",
    )


def _dry_run_report(run: IngestRun, ref: str, glob: str, duration_s: float) -> ro.IngestReport:
    """The report of a run that writes nothing: outcomes as planned (links are not
    resolved against the database, so they count 0)."""
    for action in run.actions:
        outcome = _PLANNED.get(action.kind)
        if outcome is not None:
            run.tally.count(outcome, action.repository)
    report = run.tally.report(run.plan, ref=ref, glob=glob, noop=False, duration_s=duration_s)
    return ro.IngestReport.model_validate({**report, "dry_run": True})


def _open_source(
    open_source: BacklogSourceFactory | None,
    source: str,
    cache_dir: Path | None,
    credential: str | None = None,
) -> AbstractContextManager[BacklogSource]:
    if not isinstance(source, str) or not source.strip():
        raise InvalidArgument("source is required: a git repository path or URL", field="source")
    if open_source is None:
        raise RuntimeError("this service was built without a backlog source factory")
    try:
        if credential is not None:
            return open_source(source, cache_dir=cache_dir, credential=credential)
        return open_source(source, cache_dir=cache_dir)
    except SourceError as exc:
        raise InvalidArgument(str(exc), field="source") from None


def _plan(
    src: BacklogSource,
    key: str,
    state: MirrorState,
    ref: str,
    since: str | None,
    config: RoutingConfig | None,
    glob: str,
    progress: Progress | None,
) -> IngestPlan:
    from ingest import plan
    from ingest.routing import rules as routing

    tick = (lambda done, total: progress("reading", done, total)) if progress else None
    try:
        return plan.build_plan(
            src,
            repository=routing.RepositoryKey.parse(key),
            current_hash=state.current_hash,
            ref=ref,
            since=since,
            routing=config,
            options=plan.PlanOptions(glob=glob),
            locate=state.locate,
            progress=tick,
        )
    except SourceError as exc:
        raise InvalidArgument(str(exc), field="ref") from None


def _valid_glob(glob: str) -> str:
    if not isinstance(glob, str) or not glob.strip() or len(glob) > MAX_GLOB_CHARS:
        raise InvalidArgument(
            f"glob must be a pattern of 1-{MAX_GLOB_CHARS} characters", field="glob"
        )
    return glob.strip()


def _routing_config(routing: str | None, name: str) -> RoutingConfig | None:
    """A rule file's YAML text, validated; errors name the file (``name``), rule and field."""
    from ingest.routing.rules import RoutingConfigError, load_config

    if routing is None:
        return None
    if not isinstance(routing, str):  # a path is the caller's to read (the CLI does)
        raise InvalidArgument("routing must be the rule file's YAML text", field="routing")
    try:
        return load_config(routing, source=name)
    except RoutingConfigError as exc:
        raise InvalidArgument(
            f"invalid routing rules: {exc}", field="routing", errors=exc.errors
        ) from None
