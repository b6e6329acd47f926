"""Access log shape, bounded history, the global audit chain and reads racing writes on SQLite."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from domain.errors import NotFound, PermissionDenied
from service.authz import Caller
from storage import schema as t
from tests.conftest import World


def test_the_access_log_names_who_read_what_for_whom_and_why(world: World):
    element_id, _ = world.canonical()
    reader = Caller(world.reader.principal_id, purpose="answer a question")
    world.svc.get_element(reader, element_id)
    rows = world.svc.access_log(world.auditor, world.repo)
    row = next(r for r in rows if r["operation"] == "element.get")
    assert row["repository_id"] == world.repo
    assert row["principal_id"] == world.reader.principal_id
    assert row["purpose"] == "answer a question"
    assert row["subject"]["element_id"] == element_id
    assert row["at"].endswith("Z")


def test_a_bounded_history_shows_the_newest_events_oldest_first(world: World):
    for n in range(5):
        world.canonical(title=f"Doc {n}")
    everything = world.svc.history(world.auditor, world.repo)
    last_three = world.svc.history(world.auditor, world.repo, limit=3)
    assert [e["event_id"] for e in last_three] == [e["event_id"] for e in everything[-3:]]


def test_the_global_chain_verifies_for_a_global_admin_and_is_hidden_from_others(world: World):
    world.svc.create_token(world.admin, world.reader.principal_id)
    verdict = world.svc.verify_audit(world.admin, None)
    assert verdict["ok"] is True
    assert verdict["chain"] == "*"
    assert verdict["events_checked"] >= 2
    with pytest.raises(NotFound):
        world.svc.verify_audit(world.reader, None)


def test_the_global_chain_names_an_altered_token_event(world: World):
    world.svc.create_token(world.admin, world.reader.principal_id)
    with world.app.engine.begin() as conn:
        victim = conn.execute(
            sa.select(sa.func.max(t.audit_events.c.event_id)).where(
                t.audit_events.c.chain_key == "*"
            )
        ).scalar_one()
        conn.execute(
            t.audit_events.update()
            .where(t.audit_events.c.event_id == victim)
            .values(actor="user:mallory")
        )
    verdict = world.svc.verify_audit(world.admin, None)
    assert verdict["ok"] is False
    assert verdict["first_broken_event_id"] == victim


def test_an_auditor_of_one_repository_may_not_verify_the_global_chain(world: World):
    world.svc.grant(world.admin, world.auditor.principal_id, "reader", "*")
    with pytest.raises(PermissionDenied):
        world.svc.verify_audit(world.auditor, None)


def test_logged_reads_racing_writes_on_sqlite_never_fail(world: World):
    element_id, _ = world.canonical()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(25):
                world.svc.get_element(world.reader, element_id)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    def write() -> None:
        try:
            for n in range(10):
                world.canonical(title=f"Concurrent {n}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=f) for f in (read, read, write)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    reads = [
        r
        for r in world.svc.access_log(world.auditor, world.repo)
        if r["operation"] == "element.get"
    ]
    assert len(reads) == 50
