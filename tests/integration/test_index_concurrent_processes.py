"""Rebuilding the keyword index while other processes write to and read from the same home
(issue 12 item 5): no call fails, every read answers, and the index ends consistent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from projection.generations import generations
from projection.keyword_index import IndexFilter
from runtime import build_app
from service.settings import Settings
from tests.conftest import keyword_index_dir, make_world

WORKER = Path(__file__).with_name("index_process_worker.py")
SECONDS = 10.0


def test_rebuilds_beside_writing_and_reading_processes_never_fail_a_call(tmp_path: Path) -> None:
    home = tmp_path / "home"
    world = make_world(build_app(Settings(home=home), migrate=True))
    world.canonical("Seed", "# Seed\n\nalpha seed words\n")
    principals = {
        "admin": world.admin.principal_id,
        "curator": world.curator.principal_id,
        "agent": world.agent.principal_id,
    }
    roles = ["writer", "writer", "rebuilder", "rebuilder", "reader", "reader"]
    workers = [
        subprocess.Popen(
            [sys.executable, WORKER, role, home, world.repo, json.dumps(principals), str(SECONDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role in roles
    ]
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=SECONDS + 60)
        assert worker.returncode == 0, err
        assert "Traceback" not in err, err
        reports.append(json.loads(out))

    for report in reports:
        assert report["errors"] == [], (report["role"], report["errors"][:3])
    calls = {role: sum(r["calls"] for r in reports if r["role"] == role) for role in set(roles)}
    assert calls["rebuilder"] >= 4, calls  # the rebuilds really overlapped the others
    assert calls["reader"] >= 10, calls
    written = [w for r in reports for w in r["written"]]
    assert len(written) >= 10, calls

    status = world.svc.index.index_status(world.admin)  # applies what the last commits left pending
    assert (status["pending"], status["consistent"], status["on_disk"]) == (0, True, True)
    assert status["indexed_versions"] == status["expected_versions"] == len(written) + 1
    index = world.app.reads.index
    everything = IndexFilter(max_rank_by_repository={world.repo: 3})
    for version_id, word in written:
        assert [h.version_id for h in index.search(word, everything)] == [version_id], word
    world.svc.index.index_rebuild(world.admin)  # every other process is gone: nothing holds the old
    directory = keyword_index_dir(Settings(home=home))
    state = json.loads((directory / "state.json").read_text())
    assert generations(directory) == [state["generation"]]
    world.app.close()
