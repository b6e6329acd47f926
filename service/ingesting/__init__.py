"""Ingest: mirroring markdown backlogs (git repositories) in as evidence, and the registered
sources that sync them on a schedule or a webhook."""
