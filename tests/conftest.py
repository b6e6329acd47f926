"""Shared fixtures: real SQLite files and a real PostgreSQL database, both built by migrations."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

# Semantic recall (the optional extra) loads a model and embeds in the background: tests that
# are about it turn it on themselves; every other test, and the processes they start, read by
# keywords alone.
os.environ.setdefault("AMEIDE_SEMANTIC", "off")

from runtime import App, build_app
from runtime.engines import DEFAULT_ENGINE, engine_directory
from service.authz import Caller
from service.settings import Settings
from tests import results_as_json

results_as_json.install()

PG_ADMIN_URL = os.environ.get(
    "AMEIDE_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def _pg_reachable() -> str | None:
    try:
        engine = sa.create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
        engine.dispose()
        return None
    except Exception as exc:  # any failure means "no server here"
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    """The PostgreSQL server URL; in CI an unreachable server fails the run, elsewhere skips."""
    problem = _pg_reachable()
    if problem:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but PostgreSQL at {PG_ADMIN_URL} is unreachable: {problem}")
        pytest.skip(
            f"PostgreSQL lane skipped: {PG_ADMIN_URL} unreachable ({problem}); "
            "set AMEIDE_TEST_POSTGRES_URL to run it"
        )
    return PG_ADMIN_URL


def create_database(admin_url: str, prefix: str = "ameide_t") -> str:
    """Create an empty, uniquely named PostgreSQL database; return its URL."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return admin_url.rsplit("/", 1)[0] + "/" + name


def drop_database(admin_url: str, url: str) -> None:
    """Drop a database made by ``create_database`` (terminating leftover connections)."""
    name = url.rsplit("/", 1)[1]
    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(
            sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
            {"n": name},
        )
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
    engine.dispose()


@pytest.fixture
def empty_pg_url(postgres_admin_url: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test."""
    url = create_database(postgres_admin_url)
    yield url
    drop_database(postgres_admin_url, url)


@pytest.fixture(scope="session")
def shared_pg_url(postgres_admin_url: str) -> Iterator[str]:
    """One migrated PostgreSQL database for the session; tests isolate by unique repositories."""
    url = create_database(postgres_admin_url)
    app = build_app(Settings(database_url=url), migrate=True)
    app.close()
    yield url
    drop_database(postgres_admin_url, url)


@pytest.fixture
def sqlite_app(tmp_path: Path) -> Iterator[App]:
    """A service on a fresh, migrated SQLite file."""
    app = build_app(Settings(home=tmp_path / "home"), migrate=True)
    yield app
    app.close()


@pytest.fixture
def pg_app(shared_pg_url: str, tmp_path: Path) -> Iterator[App]:
    """A service on the session's migrated PostgreSQL database (its own index directory)."""
    app = build_app(Settings(database_url=shared_pg_url, home=tmp_path / "home"))
    yield app
    app.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_app(request: pytest.FixtureRequest) -> App:
    """The same test on both dialects."""
    name = "sqlite_app" if request.param == "sqlite" else "pg_app"
    return request.getfixturevalue(name)


ADMIN = Caller("user:admin", purpose="test setup")

INDEX_ENGINE = os.environ.get("AMEIDE_INDEX_ENGINE") or DEFAULT_ENGINE
"""The keyword index engine of this run: every ``build_app`` and every process a test starts
reads ``AMEIDE_INDEX_ENGINE`` (unset: the default engine)."""
ENGINE_SENSITIVE = frozenset(
    {
        # the read side
        "integration/projection/test_keyword_index_engines.py",
        "integration/test_read_context.py",
        "integration/test_read_anchor_text.py",
        "integration/test_read_citations_and_replay.py",
        "integration/test_read_eval.py",
        "integration/test_read_other_reads.py",
        "integration/test_read_permission_trimming.py",
        "integration/test_read_selectors.py",
        "integration/test_time_travel_as_of.py",
        "integration/test_history_trimming.py",
        "integration/test_search_statistics_isolation.py",
        # index upkeep
        "integration/test_index_maintenance.py",
        "integration/test_index_concurrent_processes.py",
        "integration/test_erasure.py",
        "integration/test_erasure_reach.py",
        # ingest
        "integration/test_ingest_backlog.py",
        "integration/test_ingest_lifecycle.py",
        "integration/test_ingest_mass_retire.py",
        "integration/test_ingest_reclassification.py",
        "integration/test_ingest_text_pipeline.py",
        "integration/ingest/test_ingest_backlog_git.py",
        # the surfaces and the smoke
        "e2e/test_surface_parity.py",
        # the smoke's fault tests other than a deleted index do not touch the index (and take
        # a minute each)
        "e2e/test_smoke.py::test_the_smoke_passes_every_phase_on_an_initialised_home",
        "e2e/test_smoke.py::test_a_fault_between_steps_fails_the_next_step_by_name[index-deleted]",
        "e2e/test_cli_index.py",
        "e2e/test_cli_read.py",
    }
)
"""Test files (or single tests: ``file::name``) whose outcome depends on the keyword index
engine, marked ``index_engine``: ``make test`` runs them a second time with
``AMEIDE_INDEX_ENGINE=whoosh`` (the first pass is on the default engine, tantivy)."""


def keyword_index_dir(settings: Settings) -> Path:
    """Where this run's engine keeps its index files (its ``state.json``, its generations)."""
    return engine_directory(settings, INDEX_ENGINE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        path = item.path.relative_to(root).as_posix()
        if path in ENGINE_SENSITIVE or f"{path}::{item.name}" in ENGINE_SENSITIVE:
            item.add_marker(pytest.mark.index_engine)


@dataclass
class World:
    """A repository with one principal per role, ready for a scenario."""

    app: App
    repo: str
    admin: Caller
    curator: Caller
    agent: Caller
    publisher: Caller
    reader: Caller
    auditor: Caller
    stranger: Caller

    @property
    def svc(self):
        return self.app.service

    def canonical(
        self, title: str = "Testing SOP", body: str = "# Testing SOP\n\nRun it.\n", **kw: object
    ) -> tuple[str, str]:
        """Create a canonical element; return (element_id, version_id)."""
        out = self.svc.elements.create_element(
            self.curator, self.repo, title=title, body=body, **kw
        )
        return out["element"]["element_id"], out["version"]["version_id"]

    def open_creates(
        self, n: int, tag: str, body: str = "# Testing SOP\n\nRun it twice.\n"
    ) -> list[str]:
        """Have the agent open ``n`` CREATE proposals titled ``tag 0`` … ; their ids."""
        return [
            self.svc.curation.propose(
                self.agent, self.repo, change_kind="CREATE", title=f"{tag} {i}", body=body,
                summary=tag,
            )["proposal_id"]
            for i in range(n)
        ]  # fmt: skip


def make_world(app: App) -> World:
    """Bootstrap an admin (idempotent), a unique repository and one grant per role."""
    svc = app.service
    svc.admin.bootstrap_admin(ADMIN.principal_id)  # idempotent on the shared database
    tag = secrets.token_hex(4)
    repo = f"acme-{tag}/eng/platform"
    svc.admin.create_repository(ADMIN, repo)
    callers = {}
    for role in ("curator", "agent", "publisher", "reader", "auditor"):
        principal = f"{'agent' if role == 'agent' else 'user'}:{role}-{tag}"
        svc.admin.grant(ADMIN, principal, role, repo)
        callers[role] = Caller(principal, purpose=f"test as {role}")
    return World(app, repo, ADMIN, stranger=Caller(f"user:stranger-{tag}"), **callers)


@pytest.fixture
def world(sqlite_app: App) -> World:
    """A ready repository on SQLite."""
    return make_world(sqlite_app)


@pytest.fixture
def any_world(any_app: App) -> World:
    """A ready repository on each dialect."""
    return make_world(any_app)
