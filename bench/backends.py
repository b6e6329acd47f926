"""The databases a benchmark runs on: a SQLite file and, when reachable, a fresh PostgreSQL one."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from service.settings import Settings

PG_ADMIN = os.environ.get(
    "AMEIDE_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
Backend = tuple[str, Settings, Callable[[], None] | None]


def _pg_database() -> tuple[str, Callable[[], None]] | str:
    """A fresh database URL and its dropper, or why there is none."""
    try:
        admin = sa.create_engine(
            PG_ADMIN, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3}
        )
        name = f"ameide_bench_{secrets.token_hex(4)}"
        with admin.connect() as c:
            c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # any failure means "no server here"
        return f"skipped: {PG_ADMIN.rsplit('@', 1)[-1]} unreachable ({type(exc).__name__})"

    def drop() -> None:
        with admin.connect() as c:
            c.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"
                ),
                {"n": name},
            )
            c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()

    return PG_ADMIN.rsplit("/", 1)[0] + "/" + name, drop


def backends(tmp: Path, *, postgres: bool = True) -> tuple[list[Backend], list[str]]:
    """SQLite under ``tmp`` and, when reachable (and ``postgres``), PostgreSQL (each with its
    own home and index under ``tmp``), plus notes on what was skipped."""
    found: list[Backend] = [("sqlite", Settings(home=tmp / "sqlite-home"), None)]
    if not postgres:
        return found, []
    pg = _pg_database()
    if isinstance(pg, str):
        return found, [f"postgresql {pg}"]
    found.append(("postgresql", Settings(database_url=pg[0], home=tmp / "pg-home"), pg[1]))
    return found, []
