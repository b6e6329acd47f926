"""Ingest: mirror markdown backlogs from git as evidence (plan here; the service applies it)."""
