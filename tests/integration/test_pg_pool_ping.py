"""PostgreSQL's pool pings a connection before use only when it sat idle: a dead one is
replaced before a transaction uses it, and back-to-back transactions pay no extra round trip."""

from __future__ import annotations

import time
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from storage import db

pytestmark = pytest.mark.postgres


def _kill_connections(admin_url: str, url: str) -> int:
    """Terminate every server session on ``url``'s database (a server restart, as the pool
    sees it)."""
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        killed = conn.execute(
            sa.text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = :n AND pid <> pg_backend_pid()"
            ),
            {"n": url.rsplit("/", 1)[1]},
        ).scalar_one()
    admin.dispose()
    return int(killed)


def _counting_pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    real = engine.dialect.do_ping

    def do_ping(dbapi_conn: Any) -> bool:
        pings.append(1)
        return real(dbapi_conn)

    monkeypatch.setattr(engine.dialect, "do_ping", do_ping)
    return pings


def _select_one(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text("select 1")).scalar_one())


def test_a_connection_that_died_while_idle_is_replaced_before_use(
    empty_pg_url: str, postgres_admin_url: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(db, "PING_AFTER_IDLE", 0.05)
    engine = db.make_engine(empty_pg_url)
    pings = _counting_pings(engine, monkeypatch)
    try:
        assert _select_one(engine) == 1
        assert _kill_connections(postgres_admin_url, empty_pg_url) >= 1
        time.sleep(0.2)
        assert _select_one(engine) == 1  # the ping found it dead; a new connection served
        assert pings == [1]
    finally:
        engine.dispose()


def test_back_to_back_transactions_are_not_pinged(
    empty_pg_url: str, postgres_admin_url: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(db, "PING_AFTER_IDLE", 60.0)
    engine = db.make_engine(empty_pg_url)
    pings = _counting_pings(engine, monkeypatch)
    try:
        for _ in range(5):
            assert _select_one(engine) == 1
        assert pings == []
        # the price: a connection that died within the idle allowance fails its transaction
        # (and the pool drops it), like one lost mid-transaction
        _kill_connections(postgres_admin_url, empty_pg_url)
        with pytest.raises(sa.exc.OperationalError):
            _select_one(engine)
        assert _select_one(engine) == 1
    finally:
        engine.dispose()
