"""The schema revision this code needs, and the one a database is at — without importing Alembic.

Alembic costs ~0.6 s to import; every CLI command checks the revision, so the head is kept
here as a constant and a test fails when it differs from the migration scripts' head.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.exc import OperationalError, ProgrammingError

from storage.db import make_engine

SCHEMA_REVISION = "b5d1f7a3c9e2"


def database_revision(url: str) -> str | None:
    """The Alembic revision recorded in the database at ``url`` (None when never migrated)."""
    engine = make_engine(url, for_migrations=True)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    except (OperationalError, ProgrammingError) as exc:
        if "alembic_version" in str(exc):
            return None
        raise
    finally:
        engine.dispose()
