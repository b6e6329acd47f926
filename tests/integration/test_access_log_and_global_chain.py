"""Access log shape, bounded history, the global audit chain and reads racing writes on SQLite."""

from __future__ import annotations

import json
import threading

import pytest
import sqlalchemy as sa

from domain.errors import NotFound, PermissionDenied
from edge.results import as_json
from service.authz import Caller
from storage import schema as t
from tests.conftest import World
from tests.read_world import publish, request


def test_the_access_log_names_who_read_what_for_whom_and_why(world: World):
    element_id, _ = world.canonical()
    reader = Caller(world.reader.principal_id, purpose="answer a question")
    world.svc.elements.get_element(reader, element_id)
    rows = world.svc.history.access_log(world.auditor, world.repo)
    row = next(r for r in rows if r["operation"] == "element.get")
    assert row["repository_id"] == world.repo
    assert row["principal_id"] == world.reader.principal_id
    assert row["purpose"] == "answer a question"
    assert row["subject"]["element_id"] == element_id
    assert row["at"].endswith("Z")


def test_a_bounded_history_shows_the_newest_events_oldest_first(world: World):
    for n in range(5):
        world.canonical(title=f"Doc {n}")
    everything = world.svc.history.history(world.auditor, world.repo)
    last_three = world.svc.history.history(world.auditor, world.repo, limit=3)
    assert [e["event_id"] for e in last_three] == [e["event_id"] for e in everything[-3:]]


def test_the_global_chain_verifies_for_a_global_admin_and_is_hidden_from_others(world: World):
    world.svc.tokens.create(world.admin, world.reader.principal_id)
    verdict = world.svc.history.verify_audit(world.admin, None)
    assert verdict["ok"] is True
    assert verdict["chain"] == "*"
    assert verdict["events_checked"] >= 2
    with pytest.raises(NotFound):
        world.svc.history.verify_audit(world.reader, None)


def test_the_global_chain_names_an_altered_token_event(world: World):
    world.svc.tokens.create(world.admin, world.reader.principal_id)
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
    verdict = world.svc.history.verify_audit(world.admin, None)
    assert verdict["ok"] is False
    assert verdict["first_broken_event_id"] == victim


def test_an_auditor_of_one_repository_may_not_verify_the_global_chain(world: World):
    world.svc.admin.grant(world.admin, world.auditor.principal_id, "reader", "*")
    with pytest.raises(PermissionDenied):
        world.svc.history.verify_audit(world.auditor, None)


def test_logged_reads_racing_writes_on_sqlite_never_fail(world: World):
    element_id, _ = world.canonical()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(25):
                world.svc.elements.get_element(world.reader, element_id)
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
        for r in world.svc.history.access_log(world.auditor, world.repo)
        if r["operation"] == "element.get"
    ]
    assert len(reads) == 50


def test_the_access_log_redacts_reads_of_content_above_the_auditors_clearance(world: World):
    """An internal auditor sees that a restricted element, version and proposal were read (the
    log keeps no gaps), but not which: like history, ids nulled and ``{"redacted": true}``."""
    svc = world.svc
    svc.admin.grant(world.admin, world.curator.principal_id, "curator", world.repo, "restricted")
    svc.admin.grant(
        world.admin, world.publisher.principal_id, "publisher", world.repo, "restricted"
    )
    svc.admin.grant(world.admin, world.agent.principal_id, "agent", world.repo, "restricted")
    internal, internal_v = world.canonical("Doc internal", "# Doc internal\n\nzebra notes\n")
    secret, secret_v = world.canonical(
        "Doc restricted", "# Doc restricted\n\nzebra secrets\n", classification="restricted"
    )
    proposal = svc.curation.propose(
        world.agent, world.repo, body="# Doc restricted\n\nzebra more secrets\n",
        summary="edit", element_id=secret, target_version_id=secret_v,
    )["proposal_id"]  # fmt: skip
    publish(world)
    svc.elements.get_element(world.curator, secret)
    svc.elements.get_element(world.curator, internal)
    svc.reading.get_version(world.curator, secret_v)
    svc.curation.proposal_show(world.curator, proposal)
    svc.reading.read_context(world.curator, request(world.repo, "zebra", budget={"max_items": 10}))

    rows = svc.history.access_log(world.auditor, world.repo)
    text = json.dumps(as_json(rows))
    for hidden in (secret, secret_v, proposal):
        assert hidden not in text
    ops = [r["operation"] for r in rows]
    assert {"element.get", "version.get", "proposal.show", "read_context"} <= set(ops)
    redacted = [r for r in rows if r["subject"] == {"redacted": True}]
    assert sorted(r["operation"] for r in redacted) == [
        "element.get",
        "proposal.show",
        "version.get",
    ]
    shown = [r for r in rows if r["operation"] == "element.get" and r not in redacted]
    assert shown[0]["subject"] == {"element_id": internal, "version_id": internal_v}
    (context,) = [r for r in rows if r["operation"] == "read_context"]
    assert context["subject"]["version_ids"] == [internal_v]  # the restricted hit is left out
    # an auditor cleared for restricted sees every id
    full = json.dumps(as_json(svc.history.access_log(Caller(world.admin.principal_id), world.repo)))
    for hidden in (secret, secret_v, proposal):
        assert hidden in full
