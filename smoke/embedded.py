"""The embedded instance the smoke creates: a fresh home in a temporary directory, migrated to
head, with an administrator; and the real server (``ameide serve --workers 2``'s pool of worker
processes) started over it on loopback.

Settings are built without reading the environment, so ``AMEIDE_DATABASE_URL`` or
``AMEIDE_INDEX_DIR`` of the caller never point the smoke at someone's real data.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.results import as_json
from runtime import App, build_app
from server.serve import AmeideServer, Endpoints, ServeConfig
from server.workers import WorkerPool
from service.app import MemoryService
from service.authz import Caller
from service.settings import Settings
from smoke.content import ADMIN, CURATOR, GRANTS, INGESTOR, commit_change
from smoke.runner import StepFailed, expect
from storage.migrate import head_revision
from storage.revision import database_revision

SERVER_START_SECONDS = 90.0  # spawning the worker processes is slow on a busy machine


def isolated_settings(home: Path) -> Settings:
    """Settings for ``home`` alone: SQLite under it, its own index, nothing from the environment."""
    return Settings.model_construct(home=home, database_url=None, principal=ADMIN, index_path=None)


@dataclass
class EmbeddedInstance:
    """A fresh Ameide home the smoke owns (deleted afterwards unless kept)."""

    root: Path
    app: App

    @classmethod
    def create(cls, root: Path) -> EmbeddedInstance:
        """Migrate a new SQLite home under ``root`` to head and bootstrap the administrator."""
        app = build_app(isolated_settings(root / "home"), migrate=True)
        app.service.admin.bootstrap_admin(ADMIN)
        return cls(root, app)

    @property
    def settings(self) -> Settings:
        """The instance's settings (home, database URL, index directory)."""
        return self.app.settings

    @property
    def service(self) -> MemoryService:
        """The instance's service."""
        return self.app.service

    def describe(self) -> str:
        """What was created, for the step's detail."""
        url = self.settings.resolved_database_url
        revision = database_revision(url)
        expect(revision == head_revision(), f"the new database is at {revision}, not at head")
        return f"fresh home {self.settings.home} at schema head {revision}, admin {ADMIN}"

    def setup(self, repo: str) -> str:
        """Create ``repo`` and grant the cast their roles, as the administrator."""
        admin = Caller(ADMIN, purpose="ameide test", tool_id="ameide-smoke")
        self.service.admin.create_repository(admin, repo)
        for principal, role in GRANTS:
            self.service.admin.grant(admin, principal, role, repo)
        return f"repository {repo}; " + ", ".join(f"{p} {r}" for p, r in GRANTS)

    def ingest(self, repo: str, source: Path) -> dict[str, Any]:
        """Mirror the backlog at ``source`` into ``repo`` as the ingestor (local only: no
        network surface ingests)."""
        caller = Caller(INGESTOR, purpose="ameide test", tool_id="ameide-smoke")
        report: dict[str, Any] = as_json(
            self.service.ingest.ingest_backlog(caller, str(source), repo)
        )
        return report

    def sync_and_drift(self, repo: str, source: Path, page_id: str) -> str:
        """docs/sources.md and docs/drift.md in one pass: the page cites an evidence file at its
        version now, the backlog is registered as a source, a teammate changes that file, the
        source syncs — and the page is listed as drifted with the evidence's diff."""
        svc = self.service
        admin, curator = (
            Caller(p, purpose="ameide test", tool_id="ameide-smoke") for p in (ADMIN, CURATOR)
        )
        runner = Caller(INGESTOR, purpose="ameide test", tool_id="ameide-smoke")
        listed = svc.discovery.list_elements(curator, repo, limit=100)
        evidence = next(e for e in listed.elements if e.source_kind == "INGESTED_EVIDENCE")
        version = svc.elements.get_element(curator, evidence.element_id).version
        if version is None or not version.provenance.path:
            raise AssertionError(f"the evidence {evidence.element_id} names no source path")
        path = version.provenance.path
        svc.elements.add_relationship(
            curator, page_id, evidence.element_id, kind="REFERENCE", type_key="ameide:cites",
            metadata={"target_version_id": version.version_id},
        )  # fmt: skip
        added = svc.sources.add_source(admin, repo, "smoke-backlog", path=str(source), ref="main")
        commit_change(source, path, "\nA line a teammate added after the page was written.\n")
        run = svc.sources.run_source(runner, added.source_id)
        if run.status != "ok" or not run.report or run.report["counts"]["changed"] < 1:
            raise AssertionError(f"the source run did not bring the change in: {run.model_dump()}")
        drifted = [
            d for d in svc.drift.drift_list(curator, repo).entries
            if d.curated_element_id == page_id and d.evidence_element_id == evidence.element_id
        ]  # fmt: skip
        if not drifted or "+A line a teammate added" not in drifted[0].diff:
            raise AssertionError(f"the page is not listed as drifted with the diff: {drifted}")
        return (
            f"source {added.source_id} synced {path} (run {run.run_id}); the page citing "
            f"{version.version_id} is drifted since {drifted[0].drifted_since}"
        )

    def check_index(self) -> str:
        """The keyword index is on disk and has applied every commit.

        Checked before the step's read, which would catch up and rebuild a lost index (it is
        derived state): the smoke reports the loss by name rather than let the repair hide it.
        The directory is looked at first, then ``health()`` (which also says not ready while
        the files are gone).
        """
        index_dir = self.settings.index_dir
        if not index_dir.is_dir():
            raise StepFailed(f"the keyword index directory {index_dir} is gone")
        upkeep = self.app.status_upkeep
        if upkeep is not None:  # writes return before the background upkeep applies them
            upkeep.wait_idle(60)
        health = self.service.index.health()
        index = health.index or {}
        deadline = time.monotonic() + INDEX_PENDING_SECONDS
        while (index.get("pending") or 0) > 0 and time.monotonic() < deadline:
            # a server worker's writes: its own background upkeep applies them (health only
            # looks, so a lost index is still reported rather than repaired)
            time.sleep(0.05)
            health = self.service.index.health()
            index = health.index or {}
        expect(
            health.ready and index.get("consistent"),
            f"the keyword index is not ready: {index.get('indexed_versions')} of "
            f"{index.get('expected_versions')} versions indexed, {index.get('pending')} pending",
        )
        return f"index ready ({index.get('indexed_versions')} versions)"

    def close(self) -> None:
        """Release the database and the index."""
        self.app.close()


SERVER_WORKERS = 2
INDEX_PENDING_SECONDS = 30.0


@contextmanager
def serving(instance: EmbeddedInstance, workers: int = SERVER_WORKERS) -> Iterator[Endpoints]:
    """The real server (REST + MCP on one port, gRPC on another, tokens required) on loopback
    free ports over the instance's home, in a thread; stopped on exit.

    With ``workers`` above 1 (the default: the smoke checks what ``ameide serve`` runs by
    default on a multi-core machine) it is ``ameide serve --workers N``'s pool: N processes,
    each opening the instance's home itself; with 1, ``AmeideServer`` over the instance's own
    service in this process."""
    config = ServeConfig(
        host="127.0.0.1", http_port=0, grpc_port=0, require_auth=True, grace_seconds=1.0
    )
    server: AmeideServer | WorkerPool
    if workers > 1:
        server = WorkerPool(instance.settings, config, workers)
    else:
        server = AmeideServer(instance.service, instance.settings, config)
    ready = threading.Event()
    found: list[Endpoints] = []

    def on_ready(endpoints: Endpoints) -> None:
        found.append(endpoints)
        ready.set()

    thread = threading.Thread(
        target=server.run, args=(on_ready,), name="ameide-smoke-server", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + SERVER_START_SECONDS
    try:
        while not ready.wait(0.05):
            if not thread.is_alive():
                raise RuntimeError("the server stopped while starting (see the log above)")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start in {SERVER_START_SECONDS:.0f}s")
        yield found[0]
    finally:
        server.stop()
        thread.join(timeout=30)
