"""Two ``ameide serve`` processes on one PostgreSQL database run a scheduled source exactly once
per interval: the database lease (a compare-and-set on the source's row) lets one of them take
each run, and never two runs of the source at once."""

from __future__ import annotations

import itertools
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.conftest import create_database, drop_database
from tests.e2e.sources_harness import ADMIN, REPO, make_home, open_home, serve
from tests.integration.ingest.conftest import GitRepo

pytestmark = pytest.mark.postgres
INTERVAL = 3
WATCH_SECONDS = 24


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def database(postgres_admin_url: str):
    url = create_database(postgres_admin_url)
    yield url
    drop_database(postgres_admin_url, url)


def test_two_serve_processes_run_a_source_once_per_interval(tmp_path: Path, database: str) -> None:
    git = GitRepo(tmp_path / "backlog")
    git.write("docs/a.md", "# Alpha\n\nScheduled.\n")
    git.commit("first")
    make_home(tmp_path / "home-a", database)
    app = open_home(tmp_path / "home-a", database)
    try:
        source = app.service.sources.add_source(
            ADMIN, REPO, "backlog", path=str(git.root), interval_s=INTERVAL,
            hook_secret_env="UNUSED_HOOK_SECRET",
        )  # fmt: skip
        app.service.sources.pause_source(ADMIN, source.source_id)  # until both processes serve
    finally:
        app.close()

    with (
        serve(tmp_path / "home-a", tmp_path / "a.log", database) as a,
        serve(tmp_path / "home-b", tmp_path / "b.log", database) as b,
    ):
        app = open_home(tmp_path / "home-a", database)
        try:
            app.service.sources.resume_source(ADMIN, source.source_id)  # due now
            began = time.monotonic()
            time.sleep(WATCH_SECONDS)
            app.service.sources.pause_source(ADMIN, source.source_id)
            watched = time.monotonic() - began
            time.sleep(2)  # a run that started just before the pause finishes
            status = app.service.sources.source_status(ADMIN, source.source_id, 100)
        finally:
            app.close()
        logs = a.stderr() + b.stderr()
        pid_a, pid_b = a.proc.pid, b.proc.pid

    runs = sorted(status.runs, key=lambda r: r.run_id)
    assert all(r.status == "ok" for r in runs), (runs, logs)
    expected = int(watched // INTERVAL) + 1  # one at once, then one per interval
    assert abs(len(runs) - expected) <= 1, ([r.started_at for r in runs], expected, logs)
    for earlier, later in itertools.pairwise(runs):
        assert earlier.finished_at is not None
        assert at(later.started_at) >= at(earlier.finished_at)  # never two runs at once
    assert runs[0].report["counts"]["new"] == 1
    assert all(r.report["noop"] for r in runs[1:])  # the same commit: nothing written again
    pids = {int(r.runner.split(":")[1]) for r in runs}  # host:pid:nonce of the lease holder
    assert pids <= {pid_a, pid_b}
