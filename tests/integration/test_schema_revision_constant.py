"""The CLI's fast schema check agrees with Alembic."""

from pathlib import Path

from storage import migrate
from storage.revision import SCHEMA_REVISION, database_revision


def test_the_recorded_schema_revision_is_the_migration_head():
    assert migrate.head_revision() == SCHEMA_REVISION


def test_the_database_revision_is_read_without_alembic(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    assert database_revision(url) is None
    migrate.upgrade(url)
    assert database_revision(url) == migrate.current_revision(url) == SCHEMA_REVISION
