"""The keyword index is a projection of the database: kept by the outbox, rebuildable, caught up."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from projection.keyword_index import IndexFilter
from runtime import App, build_app
from service.indexing import upkeep as index_ops
from service.settings import Settings
from storage import schema as t
from tests.conftest import World, keyword_index_dir, make_world
from tests.read_world import request

QUERIES = ["phase tests", "rollback canary", "unique zebra word", "runbook steps", "retired"]


def _everything(world: World) -> IndexFilter:
    return IndexFilter(max_rank_by_repository={world.repo: 3})


def _answers(world: World) -> list[list[tuple[str, str, float]]]:
    index = world.app.reads.index
    return [
        [(h.chunk_id, h.version_id, round(h.score, 6)) for h in index.search(q, _everything(world))]
        for q in QUERIES
    ]


def _populate(world: World) -> dict[str, str]:
    ids = {}
    sop, v1 = world.canonical(
        "Testing SOP", "# Testing SOP\n\n## Phases\n\nRun phase 0, then phase tests 1 and 2.\n"
    )
    ids["sop"] = sop
    p = world.svc.curation.propose(
        world.agent, world.repo, element_id=sop, target_version_id=v1, summary="more",
        body="# Testing SOP\n\n## Phases\n\nRun phase 0, 1, 2 tests.\n\n## Runbook\n\nsteps\n",
    )  # fmt: skip
    world.svc.review.accept(world.curator, p["proposal_id"])
    old, _ = world.canonical("Old runbook", "# Old\n\nrollback canary retired steps\n")
    world.svc.elements.retire_element(world.curator, old)
    _, secret_v = world.canonical("Zebra", "# Zebra\n\nunique zebra word\n")
    world.svc.admin.grant(world.admin, world.admin.principal_id, "admin", world.repo)
    world.svc.erasure.erase_version(world.admin, secret_v, "right to be forgotten")
    _applied_in_the_background(world)
    return ids


def _applied_in_the_background(world: World) -> None:
    """Wait until the background upkeep has applied every write (writes return before it)."""
    upkeep, indexer = world.app.status_upkeep, world.app.indexer
    assert upkeep is not None
    assert indexer is not None
    assert upkeep.wait_idle(), "the background upkeep did not finish"
    assert indexer.status()["pending"] == 0


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fresh_world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    """A world on a database of its own: a rebuild sees exactly what the index saw."""
    url = None if request.param == "sqlite" else request.getfixturevalue("empty_pg_url")
    app = build_app(Settings(home=tmp_path / "home", database_url=url), migrate=True)
    yield make_world(app)
    app.close()


def test_a_rebuilt_index_answers_exactly_like_the_incrementally_maintained_one(
    fresh_world: World,
):
    _populate(fresh_world)
    incremental = _answers(fresh_world)
    assert any(incremental), "the incremental index answered nothing"
    fresh_world.svc.index.index_rebuild(fresh_world.admin)
    assert _answers(fresh_world) == incremental


def test_a_rebuild_writes_the_chunk_rows_the_upkeep_wrote_even_past_its_batch_size(
    fresh_world: World,
):
    # one version of more chunks than a batch of rows (2,000): its ordinals count on across
    # batches, and the rebuild keeps only the rows' fields, not the chunks' text
    body = "# Long\n\n" + "".join(f"## Part {n}\n\nwords of part {n}\n\n" for n in range(2_100))
    fresh_world.canonical("Long", body)
    _populate(fresh_world)

    def rows() -> list[tuple[object, ...]]:
        with fresh_world.app.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.select(t.chunks).order_by("chunk_id"))]

    incremental = rows()
    assert len(incremental) > 2_100
    assert max(r[3] for r in incremental) == 2_100  # the preamble, then 2,100 parts
    built = fresh_world.svc.index.index_rebuild(fresh_world.admin)
    assert built["chunks"] == len(incremental)
    assert rows() == incremental


def test_an_erased_version_is_dropped_from_the_index(world: World):
    _populate(world)
    assert world.app.reads.index.search("zebra", _everything(world)) == []


def test_every_committed_write_reaches_the_index_and_the_chunk_rows(world: World):
    _populate(world)
    status = world.svc.index.index_status(world.admin)
    assert status["pending_before"] == 0
    assert status["consistent"] is True
    assert status["stored_chunk_rows"] == status["indexed_chunks"]


def _app_without_index_hook(home: Path) -> App:
    """Simulates a crash between the database commit and the index update: the hook never runs."""
    app = build_app(Settings(home=home), migrate=True)
    app.indexer.catch_up = lambda **_: 0  # type: ignore[method-assign]
    return app


def test_a_crash_between_commit_and_index_update_is_caught_up_by_index_status(tmp_path: Path):
    crashed = _app_without_index_hook(tmp_path / "home")
    world = make_world(crashed)
    world.canonical("Testing SOP", "# Testing SOP\n\nphase tests\n")
    repo = world.repo
    crashed.close()
    restarted = build_app(Settings(home=tmp_path / "home"))
    try:
        status = restarted.service.index.index_status(world.admin)
        assert status["pending_before"] > 0
        assert status["applied"] == status["pending_before"]
        assert status["pending"] == 0
        assert status["consistent"] is True
        hits = restarted.reads.index.search(
            "phase tests", IndexFilter(max_rank_by_repository={repo: 3})
        )
        assert [h.chunk_key for h in hits]
    finally:
        restarted.close()


def test_the_next_write_also_catches_up_what_a_crash_left(tmp_path: Path):
    crashed = _app_without_index_hook(tmp_path / "home")
    world = make_world(crashed)
    world.canonical("First", "# First\n\nalpha words\n")
    crashed.close()
    restarted = build_app(Settings(home=tmp_path / "home"))
    try:
        world.app = restarted
        world.canonical("Second", "# Second\n\nbeta words\n")
        _applied_in_the_background(world)  # the round it wakes applies what the crash left too
        status = restarted.service.index.index_status(world.admin, catch_up=False)
        assert status["pending"] == 0
        assert status["indexed_versions"] == status["expected_versions"]
    finally:
        restarted.close()


def test_a_deleted_index_is_reported_inconsistent_until_rebuilt(world: World):
    _populate(world)
    world.app.indexer.index.clear()  # empty, without a watermark: the next catch-up rebuilds
    assert world.svc.index.index_status(world.admin, catch_up=False)["consistent"] is False
    world.svc.index.index_rebuild(world.admin)
    assert world.svc.index.index_status(world.admin)["consistent"] is True


def test_only_a_global_admin_may_rebuild_or_inspect_the_index(world: World):
    from domain.errors import PermissionDenied

    with pytest.raises(PermissionDenied):
        world.svc.index.index_rebuild(world.curator)
    with pytest.raises(PermissionDenied):
        world.svc.index.index_status(world.reader)


def test_an_index_of_an_older_format_is_rebuilt_from_the_database_on_first_use(tmp_path: Path):
    app = build_app(Settings(home=tmp_path / "home"), migrate=True)
    world = make_world(app)
    _populate(world)
    before = _answers(world)
    app.close()
    state_file = keyword_index_dir(Settings(home=tmp_path / "home")) / "state.json"
    state = json.loads(state_file.read_text())
    older = {**state, "format": state["format"] - 1}  # as an older release wrote it
    state_file.write_text(json.dumps(older))

    world.app = build_app(Settings(home=tmp_path / "home"))
    try:
        assert world.svc.index.index_status(world.admin)["consistent"] is True
        assert _answers(world) == before
    finally:
        world.app.close()


def _delete_index_directory(world: World) -> Path:
    index_dir = world.app.settings.index_dir
    assert index_dir.is_dir()
    shutil.rmtree(index_dir)
    return index_dir


def test_a_deleted_index_directory_is_not_ready_until_index_status_rebuilds_it(
    fresh_world: World, caplog: pytest.LogCaptureFixture
):
    _populate(fresh_world)
    before = _answers(fresh_world)
    index_dir = _delete_index_directory(fresh_world)
    assert _answers(fresh_world) == before  # the open files still answer: only the disk tells

    health = fresh_world.svc.index.health()  # no catch-up: reports what it finds
    assert health["ready"] is False
    assert (health["index"]["on_disk"], health["index"]["consistent"]) == (False, False)
    assert not index_dir.exists()

    with caplog.at_level(logging.WARNING, logger="ameide.index"):
        status = fresh_world.svc.index.index_status(fresh_world.admin)  # `ameide index status`
    assert "missing on disk" in caplog.text
    assert (status["on_disk"], status["consistent"], status["pending"]) == (True, True, 0)
    assert status["indexed_versions"] == status["expected_versions"]
    assert index_dir.is_dir()
    assert fresh_world.svc.index.health()["ready"] is True
    assert _answers(fresh_world) == before


def test_the_next_read_after_the_index_directory_was_deleted_rebuilds_it_and_answers_the_same(
    fresh_world: World,
):
    _populate(fresh_world)
    ask = request(fresh_world.repo, "phase tests runbook steps", selector="head")
    before = fresh_world.svc.reading.read_context(fresh_world.agent, ask)
    assert before["items"], "the read found nothing to compare"
    index_dir = _delete_index_directory(fresh_world)
    assert fresh_world.svc.index.health()["ready"] is False

    after = fresh_world.svc.reading.read_context(fresh_world.agent, ask)
    assert after["items"] == before["items"]
    assert index_dir.is_dir()
    assert fresh_world.svc.index.health()["ready"] is True


def test_an_index_directory_deleted_while_no_process_ran_is_rebuilt_on_first_use(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    home = tmp_path / "home"
    world = make_world(build_app(Settings(home=home), migrate=True))
    _populate(world)
    ask = request(world.repo, "phase tests runbook steps", selector="head")
    before = world.svc.reading.read_context(world.agent, ask)["items"]
    world.app.close()
    shutil.rmtree(Settings(home=home).index_dir)  # e.g. `rm -rf .ameide/index` between runs

    world.app = build_app(Settings(home=home))
    try:
        with caplog.at_level(logging.WARNING, logger="ameide.index"):
            after = world.svc.reading.read_context(world.agent, ask)["items"]
        assert "opened empty" in caplog.text
        assert after == before
        status = world.svc.index.index_status(world.admin, catch_up=False)
        assert status["consistent"] is True
    finally:
        world.app.close()


def test_a_process_sees_what_another_process_on_the_same_home_indexed(tmp_path: Path):
    # e.g. `ameide serve` answering while a curator writes through the CLI (its own process,
    # which applies the outbox to the shared index directory itself)
    home = tmp_path / "home"
    server = make_world(build_app(Settings(home=home), migrate=True))
    server.canonical("Testing SOP", "# Testing SOP\n\nphase tests\n")
    ask = request(server.repo, "quokka migration runbook", selector="head")
    assert (
        server.svc.reading.read_context(server.agent, ask)["items"] == []
    )  # its searcher is warm now

    cli = build_app(Settings(home=home))
    try:
        out = cli.service.elements.create_element(
            server.curator,
            server.repo,
            title="Quokka",
            body="# Quokka\n\nquokka migration runbook\n",
        )
    finally:
        cli.close()
    try:
        items = server.svc.reading.read_context(server.agent, ask)["items"]
        assert [i["element_id"] for i in items] == [out["element"]["element_id"]]
    finally:
        server.app.close()


# -- several indexes (homes, hosts) on one database: each is a consumer of the outbox --------


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def two_homes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[World, World]]:
    """Two processes with index directories of their own on one database (e.g. two hosts)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'shared.db'}"
    else:
        url = request.getfixturevalue("empty_pg_url")
    a = make_world(build_app(Settings(home=tmp_path / "a", database_url=url), migrate=True))
    b = dataclasses.replace(a, app=build_app(Settings(home=tmp_path / "b", database_url=url)))
    b.svc.index.index_status(b.admin)  # b's index is up to date before a writes
    yield a, b
    a.app.close()
    b.app.close()


def _read(world: World) -> list[dict[str, object]]:
    ask = request(world.repo, "phase tests runbook steps rollback zebra", selector="head")
    items: list[dict[str, object]] = world.svc.reading.read_context(world.agent, ask)["items"]
    return items


def _outbox_ids(world: World) -> list[int]:
    with world.app.engine.connect() as conn:
        return list(conn.execute(sa.select(t.index_outbox.c.outbox_id)).scalars())


def test_what_one_home_commits_another_home_on_the_same_database_serves(
    two_homes: tuple[World, World],
):
    a, b = two_homes
    _populate(a)  # create, new version by propose + accept, retire, erase
    assert _read(b) == _read(a)  # b's read catches up first
    assert _answers(b) == _answers(a)
    assert any(_answers(a))
    assert b.app.reads.index.search("zebra", _everything(b)) == []
    status = b.svc.index.index_status(b.admin)
    assert (status["pending"], status["consistent"]) == (0, True)
    assert status["last_applied_position"] == max(_outbox_ids(a))
    assert len(_outbox_ids(a)) > 0, "applied rows stay for the other indexes"


def test_index_status_of_another_home_applies_exactly_what_it_had_pending(
    two_homes: tuple[World, World],
):
    a, b = two_homes
    _populate(a)
    assert a.svc.index.index_status(a.admin, catch_up=False)["pending"] == 0
    behind = b.svc.index.health()  # b lags until it catches up: reported, yet ready (no flapping)
    assert (behind["ready"], behind["index"]["consistent"]) == (True, False)
    assert behind["index"]["pending"] > 0
    status = b.svc.index.index_status(b.admin)
    assert status["pending_before"] > 0
    assert status["applied"] == status["pending_before"]
    assert (status["pending"], status["consistent"]) == (0, True)
    assert b.svc.index.health()["ready"] is True
    assert _answers(b) == _answers(a)


def test_a_rebuild_on_one_home_does_not_starve_another(two_homes: tuple[World, World]):
    a, b = two_homes
    _populate(a)
    a.svc.index.index_rebuild(a.admin)
    a.canonical("Quokka", "# Quokka\n\nquokka migration runbook steps\n")
    a.svc.index.index_rebuild(a.admin)
    status = b.svc.index.index_status(b.admin)
    assert status["applied"] == status["pending_before"] > 0
    assert status["consistent"] is True
    assert _answers(b) == _answers(a)
    assert _read(b) == _read(a)
    assert b.app.reads.index.search("quokka", _everything(b))


@contextlib.contextmanager
def _without_index_hook(world: World) -> Iterator[None]:
    indexer = world.app.indexer
    # The background upkeep runs a settle delay after each write: let the one the writes before
    # woke finish first (it would apply the writes inside), and the one the writes inside wake
    # run into the no-op before the hook is back.
    upkeep = world.app.status_upkeep
    if upkeep is not None:
        assert upkeep.wait_idle()
    indexer.catch_up = lambda **_: 0  # type: ignore[method-assign]
    try:
        yield
    finally:
        if upkeep is not None:
            assert upkeep.wait_idle()
        del indexer.catch_up


def test_an_outbox_row_committed_after_a_higher_one_was_applied_is_still_applied(
    two_homes: tuple[World, World],
):
    # On PostgreSQL a transaction holding id 10 may commit after the one holding id 11.
    a, b = two_homes
    first, _ = a.canonical("First", "# First\n\nalpha words\n")
    b.svc.index.index_status(b.admin)
    with _without_index_hook(a):
        late, _ = a.canonical("Late", "# Late\n\nwombat words\n")  # not applied anywhere yet
    top = max(_outbox_ids(a))
    with a.app.engine.begin() as conn:  # as if it had not committed yet
        row = conn.execute(sa.select(t.index_outbox).where(t.index_outbox.c.outbox_id == top))
        late_row = row.one()._asdict()
        conn.execute(t.index_outbox.delete().where(t.index_outbox.c.outbox_id == top))
        conn.execute(  # a later transaction (holding a higher id) commits first
            t.index_outbox.insert().values(
                outbox_id=top + 2, element_id=first, version_id=None, enqueued_at=datetime.now(UTC)
            )
        )
    for world in (a, b):
        world.svc.index.index_status(world.admin)
        assert world.app.indexer.index.last_applied_position() == top + 2
        assert world.app.reads.index.search("wombat", _everything(world)) == []
    with a.app.engine.begin() as conn:  # the earlier transaction commits at last
        conn.execute(t.index_outbox.insert().values(**late_row))
    for world in (a, b):
        assert world.svc.index.index_status(world.admin, catch_up=False)["pending"] == 1
        status = world.svc.index.index_status(world.admin)
        assert (status["applied"], status["pending"], status["consistent"]) == (1, 0, True)
        hits = world.app.reads.index.search("wombat", _everything(world))
        assert [h.element_id for h in hits] == [late]
        gaps = world.app.indexer.index.open_gaps()
        assert [gap[:2] for gap in gaps] == [(top + 1, top + 1)]  # the id nobody took: watched


def test_an_id_skipped_for_longer_than_the_timeout_is_no_longer_looked_for(
    two_homes: tuple[World, World], monkeypatch: pytest.MonkeyPatch
):
    a, _ = two_homes
    first, _ = a.canonical("First", "# First\n\nalpha words\n")
    top = max(_outbox_ids(a))
    with a.app.engine.begin() as conn:  # ids top+1 and top+2 rolled back
        conn.execute(
            t.index_outbox.insert().values(
                outbox_id=top + 3, element_id=first, version_id=None, enqueued_at=datetime.now(UTC)
            )
        )
    a.svc.index.index_status(a.admin)
    assert [gap[:2] for gap in a.app.indexer.index.open_gaps()] == [(top + 1, top + 2)]
    monkeypatch.setattr(index_ops, "GAP_TIMEOUT", 0.0)
    a.svc.index.index_status(a.admin)
    assert a.app.indexer.index.open_gaps() == []
    assert a.app.indexer.index.last_applied_position() == top + 3


def test_an_index_whose_watermark_is_below_the_pruned_outbox_is_rebuilt(
    two_homes: tuple[World, World],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
):
    a, b = two_homes
    a.canonical("First", "# First\n\nalpha words\n")
    b.svc.index.index_status(b.admin)
    b_home = b.app.settings
    b.app.close()  # b is offline for longer than the retention
    _populate(a)
    with a.app.engine.begin() as conn:
        old = datetime.now(UTC) - index_ops.RETENTION - timedelta(days=1)
        conn.execute(t.index_outbox.update().values(enqueued_at=old))
    monkeypatch.setattr(index_ops, "PRUNE_INTERVAL", 0.0)
    a.svc.index.index_status(a.admin)  # catch-up prunes (all but the newest row)
    assert _outbox_ids(a) == [top := max(_outbox_ids(a))]

    b.app = build_app(b_home)
    status = b.svc.index.index_status(b.admin, catch_up=False)
    assert (status["behind_pruning"], status["consistent"]) == (True, False)
    assert b.svc.index.health()["ready"] is False
    with caplog.at_level(logging.WARNING, logger="ameide.index"):
        assert _read(b) == _read(a)
    assert "pruned" in caplog.text
    assert _answers(b) == _answers(a)
    status = b.svc.index.index_status(b.admin, catch_up=False)
    assert (status["behind_pruning"], status["consistent"]) == (False, True)
    assert status["last_applied_position"] == top
    a.canonical("After", "# After\n\nnumbat words\n")  # ids keep growing after the prune
    assert max(_outbox_ids(a)) > top
    assert b.app.reads.index.search("numbat", _everything(b)) == []
    b.svc.index.index_status(b.admin)
    assert b.app.reads.index.search("numbat", _everything(b))


def test_an_index_whose_watermark_is_beyond_the_outbox_is_rebuilt(
    world: World, caplog: pytest.LogCaptureFixture
):
    # e.g. the database was restored from a backup older than the index
    _populate(world)
    before = _answers(world)
    index = world.app.indexer.index
    index.advance(max(_outbox_ids(world)) + 100)
    with caplog.at_level(logging.WARNING, logger="ameide.index"):
        world.svc.index.index_status(world.admin)
    assert "rebuilding" in caplog.text
    assert index.last_applied_position() == max(_outbox_ids(world))
    assert _answers(world) == before


def test_a_watermark_saved_by_an_older_release_is_not_trusted(tmp_path: Path):
    # Older releases deleted applied outbox rows, so SQLite could hand out their ids again.
    home = tmp_path / "home"
    world = make_world(build_app(Settings(home=home), migrate=True))
    _populate(world)
    before = _answers(world)
    world.app.close()
    state_file = keyword_index_dir(Settings(home=home)) / "state.json"
    state = json.loads(state_file.read_text())
    del state["gaps"]
    state_file.write_text(json.dumps({**state, "position": 10**6}))

    world.app = build_app(Settings(home=home))
    try:
        assert world.app.indexer.index.last_applied_position() is None
        status = world.svc.index.index_status(world.admin)
        assert (status["consistent"], status["last_applied_position"]) == (
            True,
            max(_outbox_ids(world)),
        )
        assert _answers(world) == before
    finally:
        world.app.close()


def test_while_another_process_holds_the_index_commits_and_status_do_not_wait(
    fresh_world: World,
):
    from projection.generations import WriteLock

    w = fresh_world
    indexer = w.app.indexer
    assert indexer is not None
    indexer.catch_up(wait=True)
    other = WriteLock(keyword_index_dir(w.app.settings))  # as another process rebuilding
    with other.locked():
        w.canonical("Later", "# Later\n\nlater zebra words\n")  # its catch-up leaves the work
        status = w.svc.index.index_status(w.admin, catch_up=False)
        assert (status["pending"], status["consistent"]) == (1, False)
        assert w.svc.index.health()["ready"] is True  # lag is reported, not a failure
    _applied_in_the_background(w)  # the round the commit woke applies it once the lock is free
    assert w.svc.index.index_status(w.admin, catch_up=False)["consistent"] is True


def test_a_new_version_marks_the_one_it_replaced_for_the_index(fresh_world: World):
    """The upkeep of a new version indexes the version it replaced again, with ``replaced_at``
    its recorded instant (a read's statistics count the versions current at its instant); a
    rebuild reads the same from the database."""
    ids = _populate(fresh_world)
    with fresh_world.app.engine.connect() as conn:
        v = t.element_versions.c
        rows = conn.execute(
            sa.select(v.version_id, v.recorded_at)
            .where(v.element_id == ids["sop"])
            .order_by(v.recorded_at)
        ).all()
    (first, first_at), (second, second_at) = rows
    with fresh_world.app.uow() as uow:
        found = {x.version_id: x for x in uow.store.indexable_versions(version_ids=[second])}
        every = {x.version_id: x for x in uow.store.all_indexable_versions()}
    assert set(found) == {first, second}  # the one it replaced comes along
    assert found[first].replaced_at == second_at
    assert found[second].replaced_at is None
    assert every[first].replaced_at == second_at
    assert every[second].replaced_at is None
    assert second_at > first_at
    index = fresh_world.app.reads.index
    stored = {c.version_id: c.replaced_at for c in getattr(index, "_stored_chunks", list)()}
    if stored:  # the tantivy engine keeps its chunks whole: what the upkeep indexed
        assert stored[first] == pytest.approx(second_at.replace(tzinfo=UTC).timestamp())
        assert stored[second] is None


def test_an_erased_version_is_not_indexed_again_when_a_later_one_is(fresh_world: World):
    """The version a new one replaced comes along for its ``replaced_at`` only while the index
    holds it: an erased one would be dropped again, and dropping rewrites the whole index."""
    ids = _populate(fresh_world)
    with fresh_world.app.engine.connect() as conn:
        v = t.element_versions.c
        first, second = conn.execute(
            sa.select(v.version_id).where(v.element_id == ids["sop"]).order_by(v.recorded_at)
        ).scalars()
    fresh_world.svc.erasure.erase_version(fresh_world.admin, first, "right to be forgotten")
    _applied_in_the_background(fresh_world)
    with fresh_world.app.uow() as uow:
        found = [x.version_id for x in uow.store.indexable_versions(version_ids=[second])]
    assert found == [second]
