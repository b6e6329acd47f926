"""Audit trail, tamper detection, legal hold and erasure (docs/product.md §2 audit log, §8)."""

from __future__ import annotations

from collections import Counter

import pytest
import sqlalchemy as sa

from domain.errors import FailedPrecondition, LegalHoldActive, PermissionDenied
from domain.model import ERASED_BODY
from storage import schema as t
from tests.conftest import World

BASE = "# SOP\n\none\ntwo\nthree\n"


def full_scenario(w: World) -> dict[str, str]:
    """Every kind of state change once; returns the ids involved."""
    svc = w.svc
    el, v1 = w.canonical(body=BASE)
    other, _ = w.canonical(title="Other", body="other\n")
    rel = svc.elements.add_relationship(
        w.curator, el, other, kind="SEMANTIC", type_key="ameide:related"
    )
    svc.elements.retire_relationship(w.curator, rel["relationship_id"])

    def propose(body: str, version: str) -> str:
        p = svc.curation.propose(
            w.agent, w.repo, body=body, summary="s", element_id=el, target_version_id=version
        )
        return str(p["proposal_id"])

    to_reject, to_withdraw = propose(BASE + "r\n", v1), propose(BASE + "w\n", v1)
    to_rebase, winner = propose(BASE.replace("one", "1"), v1), propose(BASE + "x\n", v1)
    svc.curation.revise(w.agent, winner, BASE + "x, revised\n")
    v2 = svc.review.accept(w.curator, winner)["result_version_id"]
    svc.review.reject(w.curator, to_reject, "not needed")
    svc.review.withdraw(w.agent, to_withdraw)
    rebased = svc.review.rebase(w.agent, to_rebase)["proposal_id"]
    svc.review.accept(w.curator, rebased)
    b1 = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    svc.publishing.promote(w.publisher, b1)
    b2 = svc.publishing.create_baseline(w.publisher, w.repo, pins={el: v2})["baseline_id"]
    svc.publishing.promote(w.publisher, b2)
    svc.publishing.rollback(w.publisher, w.repo)
    svc.admin.grant(w.admin, "user:temp", "reader", w.repo)
    svc.admin.revoke(w.admin, "user:temp", "reader", w.repo)
    svc.admin.set_legal_hold(w.admin, w.repo, True)
    svc.admin.set_legal_hold(w.admin, w.repo, False)
    svc.erasure.erase_version(w.admin, v1, "right to be forgotten")
    svc.elements.retire_element(w.curator, other, "obsolete")
    return {"el": el, "v1": v1, "v2": v2}


def test_every_state_change_of_a_full_scenario_has_its_audit_event(any_world: World):
    w = any_world
    full_scenario(w)
    events = w.svc.history.history(w.auditor, w.repo, limit=10_000)
    kinds = Counter(e["event_type"] for e in events)
    assert set(kinds) == {
        "repository.created",
        "grant.added",
        "grant.revoked",
        "element.created",
        "element.retired",
        "relationship.added",
        "relationship.retired",
        "proposal.opened",
        "proposal.revised",
        "proposal.accepted",
        "proposal.rejected",
        "proposal.withdrawn",
        "proposal.rebased",
        "version.created",
        "version.erased",
        "baseline.created",
        "pointer.moved",
        "legal_hold.set",
        "legal_hold.released",
    }
    assert kinds["proposal.opened"] == 5  # four proposed, one by rebase
    assert kinds["proposal.accepted"] == kinds["version.created"] == 2
    assert kinds["pointer.moved"] == 3  # promote, promote, roll back
    assert all(e["actor"] and e["occurred_at"] and e["purpose"] for e in events)

    # Each row of canonical state is named by at least one event.
    named = {
        value
        for e in events
        for value in (
            e["element_id"],
            e["version_id"],
            e["proposal_id"],
            e["baseline_id"],
            *(str(v) for v in e["payload"].values()),
        )
        if value
    }
    with w.app.engine.connect() as conn:
        for table, column in [
            (t.elements, "element_id"),
            (t.relationships, "relationship_id"),
            (t.proposals, "proposal_id"),
            (t.baselines, "baseline_id"),
        ]:
            ids = conn.execute(sa.select(table.c[column]).where(table.c.repo_key == w.repo))
            missing = {r[0] for r in ids} - named
            assert not missing, f"{table.name} rows without an audit event: {missing}"
        versions = conn.execute(
            sa.select(t.element_versions.c.version_id)
            .join(t.elements)
            .where(t.elements.c.repo_key == w.repo)
        )
        assert not {r[0] for r in versions} - named
        moves = conn.execute(
            sa.select(t.pointer_moves.c.to_baseline_id).where(t.pointer_moves.c.repo_key == w.repo)
        ).all()
    assert len(moves) == kinds["pointer.moved"]
    assert w.svc.history.verify_audit(w.auditor, w.repo) == {
        "repository_id": w.repo,
        "chain": w.repo,
        "ok": True,
        "events_checked": len(events),
        "first_broken_event_id": None,
        "reason": None,
    }


@pytest.mark.parametrize(
    "tamper",
    [
        "UPDATE audit_events SET actor = 'user:mallory' WHERE event_id = :id",
        "UPDATE audit_events SET purpose = 'nothing to see' WHERE event_id = :id",
        "UPDATE audit_events SET event_type = 'element.retired' WHERE event_id = :id",
    ],
)
def test_altering_an_audit_row_with_sql_is_detected_naming_the_event(any_world: World, tamper):
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical()
    svc.curation.propose(
        w.agent, w.repo, body="b\n", summary="s", element_id=el, target_version_id=v1
    )
    events = svc.history.history(w.auditor, w.repo)
    victim = next(e for e in events if e["event_type"] == "proposal.opened")
    assert svc.history.verify_audit(w.auditor, w.repo)["ok"] is True
    with w.app.engine.begin() as conn:
        assert conn.execute(sa.text(tamper), {"id": victim["event_id"]}).rowcount == 1
    verdict = svc.history.verify_audit(w.auditor, w.repo)
    assert verdict["ok"] is False
    assert verdict["first_broken_event_id"] == victim["event_id"]
    assert verdict["events_checked"] == victim["chain_seq"] - 1
    assert "altered" in verdict["reason"]


def test_altering_an_audit_payload_is_detected_naming_the_event(any_world: World):
    w, svc = any_world, any_world.svc
    w.canonical()
    victim = next(
        e for e in svc.history.history(w.auditor, w.repo) if e["event_type"] == "element.created"
    )
    with w.app.engine.begin() as conn:
        conn.execute(
            t.audit_events.update()
            .where(t.audit_events.c.event_id == victim["event_id"])
            .values(payload={**victim["payload"], "classification": "public"})
        )
    verdict = svc.history.verify_audit(w.auditor, w.repo)
    assert (verdict["ok"], verdict["first_broken_event_id"]) == (False, victim["event_id"])


def test_deleting_an_audit_row_is_detected(any_world: World):
    w, svc = any_world, any_world.svc
    w.canonical()
    events = svc.history.history(w.auditor, w.repo)
    with w.app.engine.begin() as conn:
        conn.execute(
            sa.text("DELETE FROM audit_events WHERE event_id = :id"), {"id": events[1]["event_id"]}
        )
    verdict = svc.history.verify_audit(w.auditor, w.repo)
    assert (verdict["ok"], verdict["first_broken_event_id"]) == (False, events[2]["event_id"])


def test_deleting_the_newest_audit_events_is_detected_against_the_chain_head(any_world: World):
    """Truncating the tail leaves a chain whose links are all right: only the head row the
    database keeps beside the events shows it (issue #12, item 2)."""
    w, svc = any_world, any_world.svc
    for n in range(3):
        w.canonical(title=f"Page {n}")
    events = svc.history.history(w.auditor, w.repo)
    newest = max(e["chain_seq"] for e in events)
    with w.app.engine.begin() as conn:
        conn.execute(
            sa.text("DELETE FROM audit_events WHERE chain_key = :k AND chain_seq = :s"),
            {"k": w.repo, "s": newest},
        )
    verdict = svc.history.verify_audit(w.auditor, w.repo)
    assert verdict["ok"] is False
    assert verdict["events_checked"] == newest - 1
    assert f"its head records position {newest}" in verdict["reason"]


def test_only_auditors_and_admins_verify_the_audit_log(any_world: World):
    w = any_world
    with pytest.raises(PermissionDenied):
        w.svc.history.verify_audit(w.curator, w.repo)
    assert w.svc.history.verify_audit(w.admin, w.repo)["ok"] is True


def test_a_legal_hold_blocks_retirement_and_erasure_until_released(any_world: World):
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical()
    svc.admin.set_legal_hold(w.admin, w.repo, True)
    with pytest.raises(LegalHoldActive) as err:
        svc.elements.retire_element(w.curator, el, "cleanup")
    assert err.value.code == "LEGAL_HOLD"
    with pytest.raises(LegalHoldActive):
        svc.erasure.erase_version(w.admin, v1, "gdpr")
    assert svc.elements.get_element(w.reader, el)["element"]["retired_at"] is None
    assert svc.elements.get_element(w.reader, el)["version"]["erased"] is False
    holds = [e["event_type"] for e in svc.history.history(w.auditor, w.repo)]
    assert "element.retired" not in holds
    assert "version.erased" not in holds

    svc.admin.set_legal_hold(w.admin, w.repo, False)
    svc.erasure.erase_version(w.admin, v1, "gdpr")
    assert (
        svc.elements.retire_element(w.curator, el, "cleanup")["element"]["retired_at"] is not None
    )


def test_erasure_leaves_a_tombstone_with_ids_hash_and_audit_trail(any_world: World):
    w, svc = any_world, any_world.svc
    el, v1 = w.canonical(body="# SOP\n\ncall Alice at +1 555 0100\n")
    p = svc.curation.propose(
        w.agent, w.repo, body="# SOP\n\nv2\n", summary="s", element_id=el, target_version_id=v1
    )
    v2 = svc.review.accept(w.curator, p["proposal_id"])["result_version_id"]
    before = svc.elements.get_element(w.reader, el, version_id=v1)["version"]

    erased = svc.erasure.erase_version(w.admin, v1, "right to be forgotten")
    assert erased["erased"] is True
    shown = svc.elements.get_element(w.reader, el, version_id=v1)["version"]
    assert shown["erased"] is True
    assert shown["body"] == ERASED_BODY
    assert "Alice" not in str(shown)
    assert shown["erasure"]["reason"] == "right to be forgotten"
    assert shown["erasure"]["erased_by"] == w.admin.principal_id
    for kept in ("version_id", "content_sha256", "seq", "parent_version_id", "element_id"):
        assert shown[kept] == before[kept]
    # The rest of the history is untouched and still linear.
    versions = svc.elements.element_history(w.reader, el)["versions"]
    assert [(v["version_id"], v["erased"]) for v in versions] == [(v1, True), (v2, False)]
    assert svc.elements.get_element(w.reader, el)["version"]["body"] == "# SOP\n\nv2\n"

    event = [
        e for e in svc.history.history(w.auditor, w.repo) if e["event_type"] == "version.erased"
    ]
    assert [(e["version_id"], e["actor"]) for e in event] == [(v1, w.admin.principal_id)]
    assert event[0]["payload"]["content_sha256"] == before["content_sha256"]
    assert svc.history.verify_audit(w.auditor, w.repo)["ok"] is True
    with pytest.raises(FailedPrecondition, match="already erased"):
        svc.erasure.erase_version(w.admin, v1, "again")


def test_only_an_admin_can_erase(any_world: World):
    w = any_world
    el, v1 = w.canonical()
    with pytest.raises(PermissionDenied):
        w.svc.erasure.erase_version(w.curator, v1, "gdpr")
    assert w.svc.elements.get_element(w.reader, el)["version"]["erased"] is False
