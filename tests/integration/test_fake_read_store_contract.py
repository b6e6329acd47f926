"""The in-memory read store (``tests.fakes_read``) answers as the SQL one does.

A history is written through the service against the fake (edits, a baseline, retirements,
relationships and their retirement, a version written above its element's level, an erasure,
stored contexts); its committed state is then copied, object for object, into a real SQLite
store through the write ports (SQLite, and PostgreSQL where it runs). Every ``ReadModelStore``
and ``ReadContextStore`` query is asked of both for many ``access`` maps and instants: the rows
must be the same, key for key.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import pytest

from domain.model import Element, Provenance
from domain.values import Classification, RepoRef, SourceKind
from runtime import App
from runtime.compose import compose
from service.authz import Caller
from service.clock import Clock
from tests.fakes import FakeDatabase, FakeState
from tests.read_world import EVIDENCE_TYPE, request

ADMIN = Caller("user:admin", purpose="setup")
AGENT = Caller("agent:planner", purpose="propose")
READER = Caller("user:reader", purpose="read")
LEVELS = [c.value for c in Classification]


@dataclass
class Both:
    """The fake and the SQL store holding the same history."""

    db: FakeDatabase
    app: App
    repo: str
    other: str
    instants: list[datetime | None]
    listed: list[str]


def _history(
    db: FakeDatabase, clock: Clock, repo: str, other: str
) -> tuple[list[datetime | None], list[str]]:
    """Write a history against the fake; the instants between its steps and the ids to list."""
    svc, _ = compose(db.uow, clock)
    svc.admin.bootstrap_admin(ADMIN.principal_id)
    instants: list[datetime | None] = [None, clock.now()]
    for key in (repo, other):
        svc.admin.create_repository(ADMIN, key)
    svc.admin.grant(ADMIN, AGENT.principal_id, "agent", repo)
    svc.admin.grant(ADMIN, READER.principal_id, "reader", repo, "confidential")
    made = {
        level: svc.elements.create_element(
            ADMIN, repo, title=level, body=f"# {level}\n\n{level} text\n", classification=level
        )["element"]["element_id"]
        for level in LEVELS
    }
    elsewhere = svc.elements.create_element(ADMIN, other, title="o", body="# o\n\nother\n")
    lowered = _lowered_evidence(db, clock, repo)
    instants.append(clock.now())
    head = svc.elements.get_element(ADMIN, made["internal"])["element"]["head_version_id"]
    opened = svc.curation.propose(
        AGENT,
        repo,
        body="# internal\n\nv2\n",
        summary="v2",
        element_id=made["internal"],
        target_version_id=head,
    )
    svc.review.accept(ADMIN, opened["proposal_id"])
    baseline = svc.publishing.create_baseline(ADMIN, repo)["baseline_id"]
    instants.append(clock.now())
    rels = [
        svc.elements.add_relationship(ADMIN, a, b, kind="REFERENCE", type_key=t)["relationship_id"]
        for a, b, t in (
            (made["internal"], made["confidential"], "ameide:x"),
            (made["confidential"], made["public"], "ameide:y"),
            (made["public"], made["restricted"], "ameide:x"),
            (lowered[0], made["internal"], "ameide:x"),
        )
    ]
    instants.append(clock.now())
    svc.elements.retire_relationship(ADMIN, rels[0])
    svc.elements.retire_element(ADMIN, made["public"], "gone")
    instants.append(clock.now())
    svc.erasure.erase_version(ADMIN, head, "gdpr")
    for element_id in made.values():
        svc.reading.read_context(READER, request(repo, selector="head", element_ids=[element_id]))
    pinned = {"kind": "baseline_ref", "baseline_id": baseline}
    svc.reading.read_context(
        READER, request(repo, selector=pinned, element_ids=list(made.values()))
    )
    instants.append(clock.now())
    listed = [*db.state.versions, "ver_" + "0" * 24, elsewhere["version"]["version_id"]]
    return instants, listed


def _lowered_evidence(db: FakeDatabase, clock: Clock, repo: str) -> tuple[str, str]:
    with db.uow() as uow:
        at = clock.now()
        el = Element.new(
            repo,
            kind="DOCUMENT",
            type_key=EVIDENCE_TYPE,
            source_kind=SourceKind.INGESTED_EVIDENCE,
            classification=Classification.INTERNAL,
            at=at,
            by="service:ingest",
        )
        uow.store.insert_element(el)
        v = el.next_version(
            title="e",
            body="# e\n\nevidence\n",
            metadata={"valid_from": "2020-01-01"},
            at=at,
            provenance=Provenance("service", "service:ingest", "ameide-ingest", "/s", "c", "p"),
        )
        v = replace(v, classification=Classification.CONFIDENTIAL)
        uow.store.move_head(el.element_id, None, v)
        uow.store.insert_version(v)
        uow.commit()
    return el.element_id, v.version_id


def _copy_into(app: App, state: FakeState) -> None:
    """The fake's committed state, written into the SQL store through the same write ports."""
    with app.uow() as uow:
        s = uow.store
        for repo in state.repositories.values():
            s.ensure_tenant_and_org(RepoRef.parse(repo.key), repo.created_at)
            s.insert_repository(repo)
        for el in state.elements.values():
            s.insert_element(replace(el, retired_at=None, retired_by=None))
        for v in sorted(state.versions.values(), key=lambda v: (v.element_id, v.seq)):
            s.insert_version(v)
            if v.erased_at is not None:
                s.save_erasure(v)
        for el in state.elements.values():
            if el.head_version_id is not None:
                assert s.move_head(el.element_id, None, state.versions[el.head_version_id])
        for element_id, since, until in state.retirements:
            el = state.elements[element_id]
            s.retire_element(replace(el, retired_at=since, retired_by="user:admin"))
            if until is not None:
                s.reinstate_element(element_id, until, "user:admin")
        rels = sorted(state.relationships.values(), key=lambda r: r.recorded_at)
        s.insert_relationships([replace(r, retired_at=None, retired_by=None) for r in rels])
        for r in rels:
            if r.retired_at is not None:
                s.retire_relationship(r.relationship_id, r.retired_at, str(r.retired_by))
        for b in state.baselines.values():
            s.insert_baseline(b)
        for c in state.read_contexts.values():
            s.insert_read_context(**c)
        uow.commit()


def _rows(rows: Any) -> list[dict[str, Any]]:
    """Rows as sorted plain dicts; ``retired`` as a bool (SQLite answers 0/1, PostgreSQL and
    the service's ``bool()`` make it one)."""
    out = [dict(r) for r in rows]
    for r in out:
        if "retired" in r:
            r["retired"] = bool(r["retired"])
    return sorted(out, key=lambda r: sorted((k, str(v)) for k, v in r.items()))


def _access(repo: str, other: str) -> list[dict[str, list[str]]]:
    return [
        {},
        {repo: []},
        {repo: ["public", "internal"]},
        {repo: LEVELS[:3]},
        {repo: LEVELS, other: ["internal"]},
        {other: LEVELS},
    ]


@pytest.fixture
def both(any_app: App) -> Both:
    """A fresh tenant (the PostgreSQL database is shared by the session's tests)."""
    tenant = f"t{secrets.token_hex(4)}"
    repo, other = f"{tenant}/eng/platform", f"{tenant}/eng/other"
    db = FakeDatabase()
    instants, listed = _history(db, any_app.clock, repo, other)
    _copy_into(any_app, db.state)
    return Both(db, any_app, repo, other, instants, listed)


def test_every_read_model_query_answers_alike(both: Both) -> None:
    db, app, instants, listed = both.db, both.app, both.instants, both.listed
    elements = sorted(db.state.elements)
    with db.uow(readonly=True) as fake_uow, app.uow(readonly=True) as sql_uow:
        fake, sql = fake_uow.store, sql_uow.store
        for access in _access(both.repo, both.other):
            for at in instants:
                for kind in ("CANONICAL", "INGESTED_EVIDENCE"):
                    assert _rows(fake.latest_versions(access, kind, at)) == _rows(
                        sql.latest_versions(access, kind, at)
                    )
                for b in db.state.baselines:
                    assert _rows(fake.pinned_versions(b, access, at)) == _rows(
                        sql.pinned_versions(b, access, at)
                    )
                assert _rows(fake.listed_versions(listed, access, at)) == _rows(
                    sql.listed_versions(listed, access, at)
                )
                for types in ((), ("ameide:x",)):
                    assert fake.neighbours(elements, access, at, types) == sql.neighbours(
                        elements, access, at, types
                    )
        # the history is not trivial: retired and live pins, edges both ways, an erased version
        full, (baseline,) = {both.repo: LEVELS}, db.state.baselines
        assert len(sql.latest_versions(full, "CANONICAL", None)) == 3  # "public" is retired
        assert {bool(r["retired"]) for r in sql.pinned_versions(baseline, full, None)} == {
            False,
            True,
        }
        mine = ("ameide:x", "ameide:y")  # (a proposal adds an edge of its own)
        assert len(sql.neighbours(elements, full, None, mine)) == 6  # 3 live edges, both ways
        for b in [*db.state.baselines, "bl_" + "0" * 24]:
            assert fake.baseline_header(b) == sql.baseline_header(b)
        assert fake.version_metadata(listed) == sql.version_metadata(listed)
        assert fake.version_rows(listed) == sql.version_rows(listed)
        assert fake.erased_among(listed) == sql.erased_among(listed)
        assert any(fake.erased_among(listed).values())


def test_stored_contexts_answer_alike_and_are_rewritten_alike(both: Both) -> None:
    db, app, listed = both.db, both.app, both.listed
    contexts = sorted(db.state.read_contexts)
    assert len(contexts) == 5
    with db.uow() as fake_uow, app.uow() as sql_uow:
        fake, sql = fake_uow.store, sql_uow.store
        for c in [*contexts, "ctx_" + "0" * 24]:
            assert fake.get_read_context(c) == sql.get_read_context(c)
        for repo in (both.repo, both.other):
            assert fake.contexts_showing(repo, listed) == sql.contexts_showing(repo, listed)
            for v in listed:
                assert fake.contexts_showing(repo, [v]) == sql.contexts_showing(repo, [v])
        assert fake.read_context_responses(contexts) == sql.read_context_responses(contexts)
        for store in (fake, sql):
            store.erase_read_context_query(contexts[0], "[erased]")
            store.replace_read_context_response(contexts[1], {"items": [], "note": "gone"})
        for c in contexts:
            assert fake.get_read_context(c) == sql.get_read_context(c)
