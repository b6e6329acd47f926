"""Registered sources through the service on a real SQLite home and real git repositories:
who may manage them, references that are never printed, the run as ``ingest backlog`` (its
mass-retire guard included), back-off after failures, and the lease between two runners."""

from __future__ import annotations

import os
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from domain.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from runtime import App, build_app
from service.authz import Caller
from service.ingesting.scheduling import SourceRunner
from service.settings import Settings
from tests.integration.ingest.conftest import GitRepo

ADMIN = Caller("user:admin", purpose="test")
INGESTOR = Caller("service:ingest")
READER = Caller("user:reader")
REPO = "acme/eng/backlog"


@pytest.fixture
def app(tmp_path: Path):
    app = build_app(Settings(home=tmp_path / "home"), migrate=True, background=False)
    app.service.admin.bootstrap_admin(ADMIN.principal_id)
    app.service.admin.create_repository(ADMIN, REPO)
    app.service.admin.grant(ADMIN, INGESTOR.principal_id, "ingestor", REPO)
    app.service.admin.grant(ADMIN, READER.principal_id, "reader", REPO)
    yield app
    app.close()


@pytest.fixture
def git(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "backlog")
    for n in range(10):
        repo.write(f"docs/page{n}.md", f"# Page {n}\n\nContent of page {n}.\n")
    repo.commit("ten pages")
    return repo


def add(app: App, git: GitRepo, **extra):
    return app.service.sources.add_source(ADMIN, REPO, "backlog", path=str(git.root), **extra)


def test_only_admins_manage_sources_and_ingestors_observe_and_run_them(app, git) -> None:
    with pytest.raises((PermissionDenied, NotFound)):
        app.service.sources.add_source(INGESTOR, REPO, "backlog", path=str(git.root))
    source = add(app, git)
    assert [s.name for s in app.service.sources.list_sources(INGESTOR, REPO).sources] == ["backlog"]
    run = app.service.sources.run_source(INGESTOR, source.source_id)
    assert run.status == "ok", run.error
    assert run.report["counts"]["new"] == 10
    for manage in (app.service.sources.pause_source, app.service.sources.remove_source):
        with pytest.raises(NotFound, match="not found"):
            manage(INGESTOR, source.source_id)
    with pytest.raises(NotFound):
        app.service.sources.source_status(READER, source.source_id)
    with pytest.raises(NotFound):  # a missing source reads the same
        app.service.sources.source_status(ADMIN, "src_" + "0" * 24)
    paused = app.service.sources.pause_source(ADMIN, source.source_id)
    assert paused.paused
    assert app.service.sources.remove_source(ADMIN, source.source_id).removed
    assert app.service.sources.list_sources(ADMIN, REPO).sources == []
    events = [e["event_type"] for e in app.service.history.history(ADMIN, REPO)]
    for kind in ("source.added", "source.run", "source.paused", "source.removed"):
        assert kind in events


def test_credentials_and_secrets_are_references_never_values(app, git, monkeypatch) -> None:
    monkeypatch.setenv("BACKLOG_TOKEN", "tok-value-never-shown")
    with pytest.raises(InvalidArgument, match="password"):
        app.service.sources.add_source(ADMIN, REPO, "x", url="https://bob:pw@example.com/r.git")
    source = add(app, git, credential_env="BACKLOG_TOKEN")
    assert source.credential == "env:BACKLOG_TOKEN"
    assert source.hook_secret  # generated, shown once …
    secret_file = Path(source.hook_secret_ref.removeprefix("file:"))
    assert secret_file.read_text().strip() == source.hook_secret
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    shown = [
        app.service.sources.list_sources(ADMIN, REPO).model_dump_json(),
        app.service.sources.source_status(ADMIN, source.source_id).model_dump_json(),
        app.service.sources.run_source(ADMIN, source.source_id).model_dump_json(),
        str(app.service.history.history(ADMIN, REPO)),
    ]
    for text in shown:  # … and never again; the credential's value never
        assert source.hook_secret not in text
        assert "tok-value-never-shown" not in text
    app.service.sources.remove_source(ADMIN, source.source_id)
    assert not secret_file.exists()


def test_a_run_is_ingest_backlog_with_its_mass_retire_guard(app, git) -> None:
    source = add(app, git)
    assert app.service.sources.run_source(ADMIN, source.source_id).status == "ok"
    for n in range(6):
        git.remove(f"docs/page{n}.md")
    git.commit("lose most pages")
    run = app.service.sources.run_source(ADMIN, source.source_id)
    assert run.status == "failed"
    assert "would retire 6 of the 10 mirrored files" in (run.error or "")
    status = app.service.sources.source_status(ADMIN, source.source_id)
    assert status.last_error == run.error
    assert status.source.failures == 1


def test_failures_back_off_doubling_and_a_success_resets(app, tmp_path) -> None:
    not_git = tmp_path / "plain"
    not_git.mkdir()
    source = app.service.sources.add_source(ADMIN, REPO, "broken", path=str(not_git), interval_s=60)
    delays = []
    for _ in range(3):
        run = app.service.sources.run_source(ADMIN, source.source_id)
        assert run.status == "failed"
        row = app.service.sources.source_status(ADMIN, source.source_id).source
        finished = _at(run.finished_at)
        delays.append((_at(row.next_run_at) - finished) / timedelta(seconds=1))
    assert [round(d) for d in delays] == [60, 120, 240]
    GitRepo(not_git).write("a.md", "# A\n")
    GitRepo(not_git).commit("now a repository")
    assert app.service.sources.run_source(ADMIN, source.source_id).status == "ok"
    assert app.service.sources.source_status(ADMIN, source.source_id).source.failures == 0


def test_the_lease_lets_one_runner_run_a_source(app, git) -> None:
    source = add(app, git, interval_s=3600)
    assert app.source_runner is not None
    other = SourceRunner(app.source_runner.k, app.source_runner.ingest, None)
    held = other._lease(source.source_id, due_only=True)  # another process holds it
    assert held is not None
    assert app.source_runner.run_due() == 0
    with pytest.raises(FailedPrecondition, match="in progress"):
        app.service.sources.run_source(ADMIN, source.source_id)
    other.execute(held, ADMIN, "schedule")  # runs and releases
    assert app.source_runner.run_due() == 0  # next run an interval away
    (run,) = app.service.sources.source_status(ADMIN, source.source_id).runs
    assert run.runner == other.identity
    assert str(os.getpid()) in run.runner


def _at(text):
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_run_whose_runner_died_is_recorded_as_abandoned_when_the_lease_expires(app, git) -> None:
    source = add(app, git, interval_s=3600)
    runner = app.source_runner
    assert runner is not None
    dead = SourceRunner(runner.k, runner.ingest, None)
    assert dead._lease(source.source_id, due_only=True) is not None
    with app.uow() as uow:  # it started a run, then its process died
        uow.store.start_source_run(source.source_id, "schedule", dead.identity, app.clock.now())
        past = app.clock.now() - timedelta(seconds=1)
        uow.store.update_source(source.source_id, {"lease_until": past})
        uow.commit()
    assert runner.run_due() == 1  # the expired lease is taken over
    newer, older = app.service.sources.source_status(ADMIN, source.source_id).runs
    assert (newer.status, newer.runner) == ("ok", runner.identity)
    assert older.status == "failed"
    assert older.error.startswith("abandoned")
