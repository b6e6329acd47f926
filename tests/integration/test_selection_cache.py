"""The selection cache never answers differently from resolving the selection afresh.

Random interleavings of writes — canonical creates, accepted proposals, new evidence, confidential
evidence, retirements, baselines promoted and rolled back, erasures, grants and revocations — made
by two processes' services on one database, each followed by reads of both processes as several
callers and selectors, current and ``as_of``: the cached selection always equals the uncached one
(the triggers' stamp covers every write path), an erased version is never served from a kept
selection without the store's current state, and a revoked caller's key changes with its grants.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime import App, build_app
from service.authz import Caller
from service.reading.request import ReadRequest
from service.reading.selection import readable_repositories, resolve_selection
from service.reading.selection_cache import SelectionCache
from service.settings import Settings
from tests.conftest import World, make_world
from tests.read_world import add_evidence, scope

OPS = (
    "create",
    "accept",
    "evidence",
    "confidential_evidence",
    "evidence_version",
    "retire",
    "promote",
    "rollback",
    "erase",
    "grant",
    "revoke",
)
SELECTORS = ("published", "head")
CHECKS = itertools.count()


@dataclass
class Scenario:
    """Two processes' apps on one SQLite file, a world on it, and what the ops made."""

    apps: tuple[App, App]
    w: World
    extra: Caller
    elements: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    granted: bool = False
    promotions: int = 0
    serial: Iterator[int] = field(default_factory=itertools.count)
    instants: list[datetime] = field(default_factory=list)
    """An instant before each write: what the reads of the past ask for."""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    tmp = tmp_path_factory.mktemp("selection-cache")
    first = build_app(Settings(home=tmp / "home"), migrate=True, background=False)
    # a second process: the same database file, its own index directory (two index writers in
    # one process would share one process's file locks)
    database = f"sqlite:///{tmp / 'home' / 'ameide.db'}"
    second = build_app(Settings(database_url=database, home=tmp / "other"), background=False)
    w = make_world(first)
    extra = Caller(f"user:extra-{w.repo.split('/')[0]}", purpose="cache test")
    yield Scenario((first, second), w, extra)
    second.close()
    first.close()


def _apply(s: Scenario, op: str, writer: App, pick: int) -> None:
    svc, w, n = writer.service, s.w, next(s.serial)

    def chosen(ids: list[str]) -> str | None:
        return ids[pick % len(ids)] if ids else None

    if op == "create":
        out = svc.elements.create_element(
            w.curator, w.repo, title=f"Page {n}", body=f"# Page {n}\n\nx\n"
        )
        s.elements.append(out["element"]["element_id"])
        s.versions.append(out["version"]["version_id"])
    elif op == "accept" and (element := chosen(s.elements)):
        with writer.uow() as uow:
            head = uow.store.get_element(element)
        if head.retired_at is None:
            proposal = svc.curation.propose(
                w.agent, w.repo, element_id=element, target_version_id=head.head_version_id,
                body=f"# Edit {n}\n\ny\n", summary=f"edit {n}",
            )  # fmt: skip
            svc.review.accept(w.curator, proposal["proposal_id"], "ok")
    elif op in ("evidence", "confidential_evidence"):
        level = "confidential" if op == "confidential_evidence" else "internal"
        element, version = add_evidence(
            writer, w.repo, f"docs/{n}.md", f"# Doc {n}\n\nz\n", classification=level
        )
        s.evidence.append(element)
        s.versions.append(version)
    elif op == "evidence_version" and (element := chosen(s.evidence)):
        with writer.uow() as uow:
            head = uow.store.get_element(element)
        if head is not None and head.retired_at is None:
            from tests.read_world import new_evidence_version

            s.versions.append(new_evidence_version(writer, element, f"# Doc v{n}\n\nq\n"))
    elif op == "retire" and (element := chosen(s.elements + s.evidence)):
        with writer.uow() as uow:
            live = uow.store.get_element(element).retired_at is None
        if live:
            svc.elements.retire_element(w.admin, element, "test")
    elif op == "promote" and _has_live_canonical(writer, s.elements):
        baseline = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
        svc.publishing.promote(w.publisher, baseline, w.repo, "test")
        s.promotions += 1
    elif op == "rollback" and s.promotions >= 2:
        svc.publishing.rollback(w.publisher, w.repo, reason="test")
        s.promotions += 1
    elif op == "erase" and (version := chosen(s.versions)):
        with writer.uow() as uow:
            erased = uow.store.get_version(version).erased_at is not None
        if not erased:
            svc.erasure.erase_version(w.admin, version, "test erasure")
    elif op == "grant" and not s.granted:
        svc.admin.grant(w.admin, s.extra.principal_id, "reader", w.repo, clearance="confidential")
        s.granted = True
    elif op == "revoke" and s.granted:
        svc.admin.revoke(w.admin, s.extra.principal_id, "reader", w.repo)
        s.granted = False


def _has_live_canonical(app: App, elements: list[str]) -> bool:
    """Whether a baseline would pin anything (a repository with none has nothing to pin)."""
    with app.uow() as uow:
        return any(uow.store.get_element(e).retired_at is None for e in elements)


def _request(
    s: Scenario, selector: str, evidence: bool, as_of: object = None, valid_at: object = None
) -> ReadRequest:
    return ReadRequest.model_validate(
        {
            "scope": scope(s.w.repo),
            "selector": {"kind": selector},
            "query": "page",
            "include_evidence": evidence,
            "as_of": as_of,
            "valid_at": valid_at,
        }
    )


def _check_reads(s: Scenario, pick: int = 0) -> None:
    """Every process, caller and selector, now and (with evidence or not, by ``pick``) at an
    earlier instant — the one before the last write or one picked from before, by turns, and
    every third time with ``valid_at`` too: the cache answers like resolving afresh."""
    callers = [s.w.reader, s.w.admin] + ([s.extra] if s.granted else [])
    reads = [(None, evidence, None) for evidence in (True, False)]
    if s.instants:
        at = s.instants[-1] if pick % 2 else s.instants[pick % len(s.instants)]
        reads.append((at, pick % 4 < 2, at if pick % 3 == 0 else None))
    for app, caller, selector, (at, evidence, valid) in itertools.product(
        s.apps, callers, SELECTORS, reads
    ):
        cache = app.reads.selections
        assert isinstance(cache, SelectionCache)
        req = _request(s, selector, evidence, at, valid)
        with app.uow(readonly=True) as uow:
            perms = readable_repositories(app.reads.k.gate, uow, caller, req.scope)
            kept = cache.resolve(uow, perms, req, at)
            fresh = resolve_selection(uow, perms, req, at)
        assert kept.versions == fresh.versions
        assert kept.by_element == fresh.by_element
        assert kept.baselines == fresh.baselines
        next(CHECKS)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(OPS), st.integers(0, 1), st.integers(0, 50)),
        min_size=1,
        max_size=10,
    )
)
def test_cached_selections_equal_fresh_ones_under_random_writes(
    scenario: Scenario, steps: list[tuple[str, int, int]]
) -> None:
    for op, process, pick in steps:
        scenario.instants.append(scenario.apps[process].clock.now())
        _apply(scenario, op, scenario.apps[process], pick)
        _check_reads(scenario, pick)


def test_the_property_ran_enough_cases_and_the_cache_was_used(scenario: Scenario) -> None:
    """Runs after the property (file order): at least 2,000 cached-vs-fresh comparisons, and
    the cache both kept selections and let writes invalidate them."""
    checks = next(CHECKS)
    assert checks >= 2_000, checks
    caches = [app.reads.selections for app in scenario.apps]
    assert all(isinstance(c, SelectionCache) for c in caches)
    assert sum(c.hits for c in caches if c) > 0
    assert sum(c.misses for c in caches if c) > 0


def test_reads_of_the_past_are_never_answered_from_the_current_state(scenario: Scenario) -> None:
    """A read of the past is kept under its own instant: never answered from the current
    selection (kept just before) nor from another instant's, and a second read of the same
    instant reuses it."""
    s = scenario
    app = s.apps[0]
    before = app.clock.now()
    out = app.service.elements.create_element(
        s.w.curator, s.w.repo, title="Later", body="# Later\n"
    )
    cache = app.reads.selections
    assert isinstance(cache, SelectionCache)
    after = app.clock.now()
    with app.uow(readonly=True) as uow:
        head = _request(s, "head", False)
        perms = readable_repositories(app.reads.k.gate, uow, s.w.admin, head.scope)
        current = cache.resolve(uow, perms, head, None)
        misses = cache.misses
        past = cache.resolve(uow, perms, _request(s, "head", False, before), before)
        assert cache.misses == misses + 1  # resolved, not taken from the current selection
        hits = cache.hits
        again = cache.resolve(uow, perms, _request(s, "head", False, before), before)
        assert cache.hits == hits + 1
        later = cache.resolve(uow, perms, _request(s, "head", False, after), after)
    assert out["version"]["version_id"] not in past.versions
    assert out["version"]["version_id"] not in again.versions
    assert out["version"]["version_id"] in current.versions
    assert out["version"]["version_id"] in later.versions


def test_an_erased_version_and_a_revoked_grant_change_what_is_kept(
    tmp_path: Path,
) -> None:
    app = build_app(Settings(home=tmp_path / "home"), migrate=True, background=False)
    try:
        w = make_world(app)
        cache = app.reads.selections
        assert isinstance(cache, SelectionCache)
        _, version = add_evidence(app, w.repo, "docs/a.md", "# A\n\nsecret words\n")
        req = _request_for(w, "head", True)
        stamps = []
        for _ in range(2):
            with app.uow(readonly=True) as uow:
                stamps.append(uow.store.selection_stamp())
                perms = readable_repositories(app.reads.k.gate, uow, w.reader, req.scope)
                assert version in cache.resolve(uow, perms, req, None).versions
        assert stamps[0] == stamps[1]
        assert cache.hits >= 1
        app.service.erasure.erase_version(w.admin, version, "erasure request")
        with app.uow(readonly=True) as uow:
            assert uow.store.selection_stamp() > stamps[0]  # the erasure advanced the stamp
        read = app.service.reading.read_context(w.reader, req.model_dump(mode="json"))
        assert all("secret words" not in item["content"] for item in read["items"])
        app.service.admin.revoke(w.admin, w.reader.principal_id, "reader", w.repo)
        with pytest.raises(Exception, match="not found"):
            app.service.reading.read_context(w.reader, req.model_dump(mode="json"))
    finally:
        app.close()


def _request_for(w: World, selector: str, evidence: bool) -> ReadRequest:
    return ReadRequest.model_validate(
        {
            "scope": scope(w.repo),
            "selector": {"kind": selector},
            "query": "secret words",
            "include_evidence": evidence,
        }
    )


@pytest.mark.postgres
def test_on_postgresql_every_write_advances_the_stamp_at_commit(pg_app: App) -> None:
    """The deferred triggers advance the stamp once a transaction commits; a kept selection
    is dropped by the next write, a promotion included."""
    w = make_world(pg_app)
    cache = pg_app.reads.selections
    assert isinstance(cache, SelectionCache)
    req = _request_for(w, "published", True)

    def check() -> int:
        with pg_app.uow(readonly=True) as uow:
            stamp = uow.store.selection_stamp()
            perms = readable_repositories(pg_app.reads.k.gate, uow, w.reader, req.scope)
            kept = cache.resolve(uow, perms, req, None)
            assert kept.versions == resolve_selection(uow, perms, req, None).versions
            return stamp

    first = check()
    element, _ = w.canonical(title="Kept", body="# Kept\n")
    second = check()
    assert second > first
    baseline = w.svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    w.svc.publishing.promote(w.publisher, baseline, w.repo, "test")
    assert check() > second
    with pg_app.uow(readonly=True) as uow:
        perms = readable_repositories(pg_app.reads.k.gate, uow, w.reader, req.scope)
        published = cache.resolve(uow, perms, req, None)
    assert published.version_of(element) is not None
