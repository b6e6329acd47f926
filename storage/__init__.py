"""SQLAlchemy adapter: schema, engine, unit of work and row ↔ domain mapping.

The only package that imports SQLAlchemy. The schema is changed only by Alembic migrations
(``migrations/``); ``schema.metadata`` is what ``alembic check`` compares against.
"""
