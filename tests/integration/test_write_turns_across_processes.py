"""Writers of one SQLite file take turns across processes through a ``flock`` beside it
(``storage.turns.FileTurn``): a waiting process gets the lock the moment it is free and before
the releasing process takes it again, and the engine's turns hold it while they write.

``flock`` locks belong to an open file description, so two ``FileTurn`` objects in one process
conflict exactly as two processes do; the last test uses two real processes on one database."""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

import sqlalchemy as sa

from storage.db import SqlAlchemyUnitOfWork, make_engine
from storage.turns import FileTurn, WriteTurns


def test_a_waiter_gets_the_lock_before_the_releaser_takes_it_again(tmp_path: Path) -> None:
    path = tmp_path / "db.writers"
    busy, waiter = FileTurn(path), FileTurn(path)
    order: list[str] = []
    busy.acquire()
    waiting = threading.Thread(target=lambda: (waiter.acquire(), order.append("waiter")))
    waiting.start()
    time.sleep(0.2)  # the waiter is in line now
    assert order == []  # ... and waits while the lock is held

    def release_and_take_again() -> None:
        busy.release()
        busy.acquire()  # at once: must queue behind the waiter
        order.append("releaser")

    again = threading.Thread(target=release_and_take_again)
    again.start()
    waiting.join(timeout=5)
    time.sleep(0.2)
    assert order == ["waiter"]  # the releaser is still waiting: the waiter went first
    waiter.release()
    again.join(timeout=5)
    assert order == ["waiter", "releaser"]
    busy.release()
    assert (path.stat().st_mode & 0o777) == 0o600


def test_a_turn_holds_the_file_lock_until_its_last_nested_release(tmp_path: Path) -> None:
    path = tmp_path / "db.writers"
    turns, other = WriteTurns(path), FileTurn(path)
    got: list[bool] = []
    assert turns.acquire()
    assert turns.acquire()  # re-entrant
    probe = threading.Thread(target=lambda: (other.acquire(), got.append(True)))
    probe.start()
    turns.release()
    time.sleep(0.2)
    assert got == []  # still inside the outer turn
    turns.release()
    probe.join(timeout=5)
    assert got == [True]
    other.release()


def _write_rows(url: str, who: str, rows: int) -> None:
    engine = make_engine(url)
    for n in range(rows):
        with SqlAlchemyUnitOfWork(engine) as uow:
            uow.store.conn.execute(sa.text("INSERT INTO t VALUES (:who, :n)"), {"who": who, "n": n})
            uow.commit()
    engine.dispose()


def test_two_processes_write_one_database_in_turns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ameide.db'}"
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (who TEXT, n INTEGER)")
    spawn = multiprocessing.get_context("spawn")
    procs = [spawn.Process(target=_write_rows, args=(url, who, 200)) for who in ("a", "b")]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    with engine.connect() as conn:
        counts = dict(conn.exec_driver_sql("SELECT who, count(*) FROM t GROUP BY who").all())
    assert counts == {"a": 200, "b": 200}
    assert (tmp_path / "ameide.db.writers").is_file()  # the turns' lock sits beside the file
    engine.dispose()
