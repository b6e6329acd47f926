"""Alembic migrations: the only path by which the schema changes (see storage/migrate.py)."""
