"""Engines and the unit of work that owns each transaction."""

from __future__ import annotations

import json
import logging
import re
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, InvalidatePoolError, OperationalError

from domain.audit import GENESIS_HASH, AuditEvent
from domain.errors import Conflict
from domain.values import lone_surrogate_at, replace_lone_surrogates
from storage import schema as t
from storage.store import Store
from storage.turns import WriteTurns

log = logging.getLogger(__name__)


def make_engine(url: str, *, for_migrations: bool = False) -> Engine:
    """An engine for SQLite (WAL; writes serialized by BEGIN IMMEDIATE) or PostgreSQL (a
    pooled connection idle for a while is pinged before use)."""
    codec = {"json_serializer": dump_json, "json_deserializer": load_json}
    if url.startswith("sqlite"):
        engine = sa.create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 60}, **codec
        )
        _tune_sqlite(engine, foreign_keys=not for_migrations)
        # this process's writers queue here first, then take the database file's write turn
        # from other processes (storage.turns)
        _TURNS[engine] = WriteTurns(_turn_file(engine))
        return engine
    engine = sa.create_engine(url, pool_size=10, max_overflow=20, **codec)
    _ping_when_idle(engine)
    return engine


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""A hint that JSON text may hold a surrogate escape (a pair, or a literal backslash, also
match it: the value itself decides)."""


def dump_json(value: Any) -> str:
    """JSON columns as written: ``json.dumps``, but a lone surrogate is never stored (the
    service refuses it first, naming the field; this is the last guard)."""
    text = json.dumps(value)
    if _ESCAPED_SURROGATE.search(text) and lone_surrogate_at(value, "value") is not None:
        raise ValueError("refusing to store JSON that holds a lone surrogate (not valid text)")
    return text


def load_json(text: str | bytes | memoryview) -> Any:
    """JSON columns as read: a lone surrogate stored before it was refused comes back as
    U+FFFD, so every surface can still encode and serve the row (psycopg hands bytes)."""
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")
    value = json.loads(text)
    if _ESCAPED_SURROGATE.search(text) is None:
        return value
    return replace_lone_surrogates(value)


def _turn_file(engine: Engine) -> Path | None:
    """The file whose ``flock`` orders writers of the database file across processes (beside
    it: ``ameide.db`` → ``ameide.db.writers``); ``None`` for an in-memory database."""
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    real = Path(database).resolve()  # one lock file whichever link a process opened it by
    return real.with_name(real.name + ".writers")


PING_AFTER_IDLE = 1.0
"""Seconds a pooled PostgreSQL connection may sit unused before its next checkout pings it."""


def _ping_when_idle(engine: Engine) -> None:
    """Ping a pooled connection on checkout when it sat idle for more than
    :data:`PING_AFTER_IDLE` seconds: a dead one (server restarted, idle session closed by the
    server or a proxy) is replaced, and the rest of the pool with it, before a transaction uses it.

    ``pool_pre_ping`` did this on every checkout: one more round trip for every transaction,
    two of a governed pair's round trips. A connection checked in less than a second ago was
    working then; one that died within that second fails its transaction like any connection
    lost mid-transaction (and the pool drops it then)."""

    @event.listens_for(engine, "checkin")
    def _idle_since(_dbapi_conn: Any, record: Any) -> None:
        record.info["ameide_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("ameide_idle_since")  # None: fresh from connect, not pinged
        if since is None or time.monotonic() - since <= PING_AFTER_IDLE:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except engine.dialect.loaded_dbapi.Error as exc:
            if engine.dialect.is_disconnect(exc, dbapi_conn, None):
                # the pool retries the checkout on a new connection, dropping the older ones
                raise InvalidatePoolError("a pooled connection was dead on checkout") from exc
            raise


_TURNS: weakref.WeakKeyDictionary[Engine, WriteTurns] = weakref.WeakKeyDictionary()


def _tune_sqlite(engine: Engine, *, foreign_keys: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking
        # on a read→write lock upgrade; read-only work starts DEFERRED and never blocks writers.
        readonly = conn.get_execution_options().get("ameide_readonly", False)
        conn.exec_driver_sql("BEGIN DEFERRED" if readonly else "BEGIN IMMEDIATE")


# The audit chain's statements, run by every write transaction: built once (``storage.store``).
_heads = t.audit_chain_heads.c
_LOCK_CHAIN_HEAD = (
    sa.select(_heads.last_seq, _heads.last_hash)
    .where(_heads.chain_key == sa.bindparam("key"))
    .with_for_update()
)
_MOVE_CHAIN_HEAD = (
    t.audit_chain_heads.update()
    .where(_heads.chain_key == sa.bindparam("key"))
    .values(last_seq=sa.bindparam("seq"), last_hash=sa.bindparam("digest"))
)
_INSERT_EVENTS = t.audit_events.insert()


def _is_unique_violation(exc: IntegrityError) -> bool:
    """PostgreSQL SQLSTATE 23505, or SQLite's UNIQUE / PRIMARY KEY constraint failure."""
    orig = exc.orig
    return getattr(orig, "sqlstate", None) == "23505" or "UNIQUE constraint failed" in str(orig)


class SqlAlchemyUnitOfWork:
    """One transaction: ``with uow: …; uow.commit()``. Leaving without commit rolls back.

    Audit events collected during the work are appended to their hash chains at commit, inside the
    same transaction. Post-commit hooks (index updates) run after the commit; a failing hook is
    logged and left for catch-up, never allowed to undo the committed write.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        readonly: bool = False,
        on_commit: Callable[[], object] | None = None,
    ) -> None:
        self._engine = engine
        self._readonly = readonly
        self._on_commit = on_commit
        self._conn: Connection | None = None
        self.events: list[AuditEvent] = []
        self.after_commit: list[Callable[[], None]] = []
        self.committed = False
        self._access: list[tuple[Any, ...]] = []
        self._turns: WriteTurns | None = None
        self.store: Store

    def __enter__(self) -> SqlAlchemyUnitOfWork:
        turns = None if self._readonly else _TURNS.get(self._engine)
        self._turns = turns if turns is not None and turns.acquire() else None
        try:
            conn = self._engine.connect()
            if self._readonly:
                conn = conn.execution_options(ameide_readonly=True)
            self._conn = conn
            self._tx = conn.begin()
        except BaseException:
            self._end_turn()
            raise
        self.store = Store(conn)
        return self

    def _end_turn(self) -> None:
        """Let the next writer of this process go (SQLite; once per unit of work)."""
        turns, self._turns = self._turns, None
        if turns is not None:
            turns.release()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._conn is not None
        try:
            if self._tx.is_active:
                self._tx.rollback()
        finally:
            self._conn.close()
            self._conn = None
            self._end_turn()
        if isinstance(exc, IntegrityError) and _is_unique_violation(exc):
            # A concurrent writer inserted the same key first (same client_request_id, same
            # repository …): the domain's typed, retryable conflict, not a driver error.
            raise Conflict(
                "a concurrent change won; re-read and retry", cause=type(exc.orig).__name__
            ) from exc

    def record(self, event_: AuditEvent) -> None:
        """Queue an audit event; it is chained and written at commit."""
        self.events.append(event_)

    def log_access(self, *entry: Any) -> None:
        """Queue an access-log row (``Store.log_access`` arguments); written at commit.

        A read-only unit of work writes it in a short write transaction after its reads:
        upgrading SQLite's deferred read transaction to a write would fail at once (no busy
        wait) whenever another writer committed in between.
        """
        self._access.append(entry)

    def commit(self) -> None:
        """Write the audit events, commit, then run post-commit hooks."""
        try:
            self._append_events(self.events)
            if not self._readonly:
                self._write_access(self.store)
            self._tx.commit()
            self._end_turn()
            if self._readonly and self._access:
                turns = _TURNS.get(self._engine)
                turn = turns is not None and turns.acquire()
                try:
                    with self._engine.begin() as conn:
                        self._write_access(Store(conn))
                finally:
                    if turn and turns is not None:
                        turns.release()
        except IntegrityError as exc:
            self._tx.rollback()
            raise Conflict(
                "a concurrent change won; re-read and retry", cause=type(exc.orig).__name__
            ) from exc
        except OperationalError as exc:
            self._tx.rollback()
            if "locked" in str(exc.orig).lower() or "deadlock" in str(exc.orig).lower():
                raise Conflict("the database was busy with a concurrent change; retry") from exc
            raise
        self.committed = True
        hooks: list[Callable[[], object]] = list(self.after_commit)
        if self._on_commit is not None and not self._readonly:
            hooks.append(self._on_commit)  # e.g. apply the index outbox
        for hook in hooks:
            try:
                hook()
            except Exception as exc:  # derived state only: catch-up repairs it
                log.warning("post-commit hook failed (%s: %s); it will be caught up",
                            type(exc).__name__, exc)  # fmt: skip
                log.debug("post-commit hook failure", exc_info=True)

    def _write_access(self, store: Store) -> None:
        for entry in self._access:
            store.log_access(*entry)
        self._access.clear()

    def _append_events(self, events: list[AuditEvent]) -> None:
        """Chain and write the queued events: one locked read and one update per chain, and
        one multi-row insert in occurrence order (an ingest run queues thousands)."""
        if not events:
            return
        assert self._conn is not None
        tips: dict[str, tuple[int, str]] = {}
        for chain_key in sorted({ev.chain_key for ev in events}):  # a fixed lock order
            head = self._conn.execute(_LOCK_CHAIN_HEAD, {"key": chain_key}).first()
            if head is None:
                self._conn.execute(
                    t.audit_chain_heads.insert().values(
                        chain_key=chain_key, last_seq=0, last_hash=GENESIS_HASH
                    )
                )
                tips[chain_key] = (0, GENESIS_HASH)
            else:
                tips[chain_key] = (head.last_seq, head.last_hash)
        rows = []
        for ev in events:
            last_seq, prev = tips[ev.chain_key]
            seq = last_seq + 1
            digest = ev.compute_hash(seq, prev)
            tips[ev.chain_key] = (seq, digest)
            rows.append(
                {
                    "chain_key": ev.chain_key,
                    "chain_seq": seq,
                    "prev_hash": prev,
                    "hash": digest,
                    "event_type": ev.event_type,
                    "occurred_at": ev.occurred_at,
                    "actor": ev.actor,
                    "on_behalf_of": ev.on_behalf_of,
                    "purpose": ev.purpose,
                    "element_id": ev.element_id,
                    "version_id": ev.version_id,
                    "proposal_id": ev.proposal_id,
                    "baseline_id": ev.baseline_id,
                    "payload": ev.payload,
                }
            )
        self._conn.execute(_INSERT_EVENTS, rows[0] if len(rows) == 1 else rows)
        for chain_key, (seq, digest) in tips.items():
            self._conn.execute(_MOVE_CHAIN_HEAD, {"key": chain_key, "seq": seq, "digest": digest})


def database_identity(engine: Engine) -> str:
    """What names this database, the same from every node that reaches it (whatever host name
    or port it uses): on PostgreSQL the cluster's system identifier and the database's oid (a
    streaming replica, or a promoted one, has the same), else the host, port and name; on
    SQLite the database file's real path."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        return f"sqlite:{Path(url.database or ':memory:').resolve()}"
    try:
        with engine.connect() as connection:
            system = connection.execute(
                sa.text("SELECT system_identifier FROM pg_control_system()")
            ).scalar()
            oid = connection.execute(
                sa.text("SELECT oid FROM pg_database WHERE datname = current_database()")
            ).scalar()
        return f"postgresql:{system}/{oid}"
    except sa.exc.DBAPIError:  # pg_control_system() may be refused to a non-superuser
        return f"postgresql:{url.host}:{url.port or 5432}/{url.database}"
