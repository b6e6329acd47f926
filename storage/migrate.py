"""Programmatic Alembic: upgrade, downgrade, check — the schema's only path."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

import migrations
from storage.db import make_engine

MIGRATIONS_DIR = Path(migrations.__file__).parent


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at the packaged migrations and ``url``."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at ``url`` up to ``revision``."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    """Migrate down to ``revision`` (``base`` empties the schema)."""
    command.downgrade(alembic_config(url), revision)


def check(url: str) -> None:
    """Raise when the models and the migrated schema differ (``alembic check``)."""
    command.check(alembic_config(url))


def head_revision() -> str:
    """The single head of the migration scripts."""
    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"expected exactly one migration head, found {heads}")
    return heads[0]


def current_revision(url: str) -> str | None:
    """The revision the database at ``url`` is at (None when empty)."""
    engine = make_engine(url, for_migrations=True)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
