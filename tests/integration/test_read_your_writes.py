"""Read your writes, with the keyword index kept off the request path.

A write returns once the database committed it; the index applies the outbox in the background.
A read issued after a write returned must still find that write: the read makes the index cover
the outbox as it was when the read began. Proven under load: writer threads each evolve their
own element with governed writes (propose + accept) and, after every accept returns, read it
back by a word only that revision holds, while reader threads keep the index busy.
"""

from __future__ import annotations

import threading
import time

import pytest

from runtime import App
from tests.conftest import World, make_world
from tests.read_world import request

WRITERS = 4
READERS = 2
ROUNDS = 8


def _word(writer: int, n: int) -> str:
    """A word no other revision holds (letters only: the index stems, it does not split)."""
    letters = "abcdefghij"
    return "zq" + "".join(letters[int(d)] for d in f"{writer:02d}{n:03d}")


def _read_your_writes(w: World) -> None:
    svc = w.svc
    elements = [w.canonical(f"Note {i}", f"# Note {i}\n\nfirst draft\n") for i in range(WRITERS)]
    failures: list[str] = []
    done = threading.Event()
    start = threading.Barrier(WRITERS + READERS)

    def write(i: int) -> None:
        element_id, head = elements[i]
        start.wait(timeout=30)
        for n in range(ROUNDS):
            word = _word(i, n)
            p = svc.curation.propose(
                w.agent, w.repo, element_id=element_id, target_version_id=head,
                body=f"# Note {i}\n\nrevision with {word}\n", summary=f"r{n}",
            )  # fmt: skip
            head = svc.review.accept(w.curator, p["proposal_id"])["result_version_id"]
            items = svc.reading.read_context(w.agent, request(w.repo, word, selector="head"))[
                "items"
            ]
            if [it["version_id"] for it in items] != [head]:
                failures.append(f"writer {i} round {n}: read {items!r}, wanted {head}")

    def read() -> None:
        start.wait(timeout=30)
        while not done.is_set():
            svc.reading.read_context(w.reader, request(w.repo, "revision", selector="head"))

    writers = [threading.Thread(target=write, args=(i,)) for i in range(WRITERS)]
    readers = [threading.Thread(target=read) for _ in range(READERS)]
    for t in writers + readers:
        t.start()
    for t in writers:
        t.join(timeout=300)
    done.set()
    for t in readers:
        t.join(timeout=60)
    assert not failures, failures
    assert w.svc.index.index_status(w.admin, catch_up=False)["pending"] >= 0


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_every_writer_reads_its_write_right_after_it_returns_under_concurrent_load(
    backend: str, request: pytest.FixtureRequest
):
    app: App = request.getfixturevalue("sqlite_app" if backend == "sqlite" else "pg_app")
    _read_your_writes(make_world(app))


def test_a_write_returns_before_the_index_applies_it_and_the_lag_is_reported(world: World):
    upkeep = world.app.status_upkeep
    indexer = world.app.indexer
    assert upkeep is not None
    assert indexer is not None
    indexer.catch_up(wait=True)
    with indexer._lock:  # the background upkeep cannot apply anything meanwhile
        world.canonical("Later", "# Later\n\nlater zebra words\n")
        status = world.svc.index.index_status(world.admin, catch_up=False)
        assert status["pending"] == 1
        assert status["positions_behind"] >= 1
        assert status["oldest_pending_age_seconds"] is not None
        assert status["outbox_head"] == status["last_applied_position"] + status["positions_behind"]
    items = world.svc.reading.read_context(
        world.agent, request(world.repo, "zebra", selector="head")
    )
    assert [it["title"] for it in items["items"]] == ["Later"]
    status = world.svc.index.index_status(world.admin, catch_up=False)
    assert (status["pending"], status["positions_behind"]) == (0, 0)
    assert status["oldest_pending_age_seconds"] is None


def test_close_applies_what_the_process_committed(tmp_path):
    from runtime import build_app
    from service.settings import Settings

    app = build_app(Settings(home=tmp_path / "home"), migrate=True, background=False)
    w = make_world(app)
    w.canonical("One-shot", "# One-shot\n\nwritten by a command that exits\n")
    assert app.indexer is not None
    assert app.indexer.status()["pending"] > 0  # no background thread: nothing applied yet
    app.close()
    again = build_app(Settings(home=tmp_path / "home"), background=False)
    try:
        assert again.indexer is not None
        assert again.indexer.status()["pending"] == 0
    finally:
        again.close()


def test_close_stops_the_background_upkeep(world: World):
    world.canonical("Some", "# Some\n\nwords\n")
    upkeep = world.app.status_upkeep
    assert upkeep is not None
    deadline = time.monotonic() + 5
    while upkeep._thread is None and time.monotonic() < deadline:
        time.sleep(0.01)
    world.app.close()
    assert upkeep._thread is None or not upkeep._thread.is_alive()
