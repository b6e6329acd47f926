"""Optimistic concurrency, proven: racing accepts and racing promotions, exactly one winner each.

Threads share one service (as a server's worker pool would) and meet at a barrier before the
write, so they really race. PostgreSQL runs the full rounds; SQLite must serialize correctly too.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest
import sqlalchemy as sa

from domain.errors import AmeideError, Conflict, StaleProposal
from runtime import App
from storage import schema as t
from tests.conftest import World, make_world

WRITERS = 8


def race(pool: ThreadPoolExecutor, calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls at the same instant; each result is a value or the raised AmeideError."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], Any]) -> Any:
        barrier.wait(timeout=30)
        try:
            return call()
        except AmeideError as exc:
            return exc

    return list(pool.map(run, calls))


def accept_race(w: World, rounds: int) -> tuple[str, list[str]]:
    """``rounds`` times: WRITERS proposals pinned to the same head, all accepted at once."""
    svc = w.svc
    el, head = w.canonical(body="# Race\n\nround 0\n")
    heads = [head]
    with ThreadPoolExecutor(WRITERS) as pool:
        for r in range(1, rounds + 1):
            propose = partial(
                svc.curation.propose, w.agent, w.repo, element_id=el, target_version_id=head
            )
            proposals = list(
                pool.map(
                    lambda i, r=r, propose=propose: propose(
                        body=f"# Race\n\nround {r} writer {i}\n", summary=f"r{r}w{i}"
                    )["proposal_id"],
                    range(WRITERS),
                )
            )
            outcomes = race(pool, [partial(svc.review.accept, w.curator, p) for p in proposals])
            winners = [o for o in outcomes if not isinstance(o, Exception)]
            losers = [o for o in outcomes if isinstance(o, Exception)]
            assert len(winners) == 1, f"round {r}: {len(winners)} winners, {outcomes}"
            assert all(isinstance(o, StaleProposal | Conflict) for o in losers), losers
            head = winners[0]["result_version_id"]
            heads.append(head)
    return el, heads


def assert_linear_history(w: World, el: str, heads: list[str], rounds: int) -> None:
    versions = w.svc.elements.element_history(w.reader, el)["versions"]
    assert [v["seq"] for v in versions] == list(range(1, rounds + 2))
    assert [v["version_id"] for v in versions] == heads
    for prev, cur in itertools.pairwise(versions):
        assert cur["parent_version_id"] == prev["version_id"]
    assert w.svc.elements.get_element(w.reader, el)["element"]["head_version_id"] == heads[-1]
    statuses = [p["status"] for p in w.svc.curation.proposal_list(w.curator, w.repo)]
    assert statuses.count("ACCEPTED") == rounds
    assert statuses.count("OPEN") == rounds * (WRITERS - 1)
    assert len(statuses) == rounds * WRITERS
    accepted_events = [
        e
        for e in w.svc.history.history(w.auditor, w.repo, limit=10_000)
        if e["event_type"] == "proposal.accepted"
    ]
    assert len(accepted_events) == rounds
    assert sorted(e["version_id"] for e in accepted_events) == sorted(heads[1:])
    verdict = w.svc.history.verify_audit(w.auditor, w.repo)
    assert verdict["ok"] is True, verdict


def promotion_race(w: World, rounds: int, racers: int) -> None:
    """``rounds`` times: ``racers`` publishers who all saw the same published baseline promote
    different baselines at once (each promotion is conditional on what its publisher saw)."""
    svc = w.svc
    w.canonical()
    first = svc.publishing.create_baseline(w.publisher, w.repo, name="first")["baseline_id"]
    svc.publishing.promote(w.publisher, first)
    with ThreadPoolExecutor(racers) as pool:
        for r in range(rounds):
            baselines = [
                svc.publishing.create_baseline(w.publisher, w.repo, name=f"r{r}b{i}")["baseline_id"]
                for i in range(racers)
            ]
            seen = svc.publishing.published(w.reader, w.repo)["baseline_id"]
            promote = partial(
                svc.publishing.promote, w.publisher, reason="race", expected_baseline_id=seen
            )
            outcomes = race(pool, [partial(promote, b) for b in baselines])
            winners = [o for o in outcomes if not isinstance(o, Exception)]
            assert len(winners) == 1, f"round {r}: {outcomes}"
            assert all(isinstance(o, Conflict) for o in outcomes if isinstance(o, Exception))
            assert svc.publishing.published(w.reader, w.repo)["baseline_id"] == winners[0]["to"]

    moves = svc.publishing.published(w.reader, w.repo)["moves"]
    assert len(moves) == rounds + 1
    assert (moves[0]["from"], moves[0]["to"]) == (None, first)
    for prev, cur in itertools.pairwise(moves):
        assert cur["from"] == prev["to"]
    assert svc.publishing.published(w.reader, w.repo)["baseline_id"] == moves[-1]["to"]
    with w.app.engine.connect() as conn:
        rows = conn.execute(
            sa.select(sa.func.count()).where(t.pointer_moves.c.repo_key == w.repo)
        ).scalar_one()
        revision = conn.execute(
            sa.select(t.published_pointers.c.revision).where(
                t.published_pointers.c.repo_key == w.repo
            )
        ).scalar_one()
    assert rows == rounds + 1
    assert revision == rounds + 1
    pointer_events = [
        e for e in svc.history.history(w.auditor, w.repo) if e["event_type"] == "pointer.moved"
    ]
    assert [(e["payload"]["from"], e["payload"]["to"]) for e in pointer_events] == [
        (m["from"], m["to"]) for m in moves
    ]
    assert svc.history.verify_audit(w.auditor, w.repo)["ok"] is True


@pytest.mark.postgres
@pytest.mark.slow
def test_racing_accepts_on_postgresql_have_exactly_one_winner_and_keep_history_linear(
    pg_app: App,
):
    rounds = 50
    w = make_world(pg_app)
    el, heads = accept_race(w, rounds)
    assert len(heads) == rounds + 1
    assert_linear_history(w, el, heads, rounds)


@pytest.mark.postgres
def test_racing_promotions_on_postgresql_have_exactly_one_winner_per_round(pg_app: App):
    promotion_race(make_world(pg_app), rounds=20, racers=4)


def test_racing_accepts_on_sqlite_serialize_with_exactly_one_winner(sqlite_app: App):
    rounds = 2
    w = make_world(sqlite_app)
    el, heads = accept_race(w, rounds)
    assert_linear_history(w, el, heads, rounds)


def test_racing_promotions_on_sqlite_serialize_with_exactly_one_winner(sqlite_app: App):
    promotion_race(make_world(sqlite_app), rounds=3, racers=4)


@pytest.mark.postgres
def test_racing_repeats_of_one_client_request_id_open_one_proposal(pg_app: App):
    w = make_world(pg_app)
    svc = w.svc
    el, v1 = w.canonical()
    propose = partial(
        svc.curation.propose,
        w.agent,
        w.repo,
        body="# Race\n\nsame request\n",
        summary="once",
        element_id=el,
        target_version_id=v1,
        client_request_id="retry-me",
    )
    with ThreadPoolExecutor(4) as pool:
        outcomes = race(pool, [propose] * 4)
    opened = [o for o in outcomes if not isinstance(o, Exception) and not o["replay"]]
    assert len(opened) == 1, outcomes
    for o in outcomes:
        # Later repeats are replays; one racing the original loses with a typed, retryable error.
        assert isinstance(o, Conflict) or o["proposal_id"] == opened[0]["proposal_id"], o
    assert [p["proposal_id"] for p in svc.curation.proposal_list(w.curator, w.repo)] == [
        opened[0]["proposal_id"]
    ]
    again = propose()
    assert (again["replay"], again["proposal_id"]) == (True, opened[0]["proposal_id"])


@pytest.mark.postgres
def test_an_erasure_does_not_wait_for_rows_being_written_that_reference_the_version(
    pg_app: App,
):
    """The index upkeep inserts chunk rows that reference a version, which key-share locks the
    version's row until it commits. An erasure of that version (it changes no key) must go
    ahead rather than queue behind it — queueing, while the upkeep then waited for a version
    the erasure had locked, deadlocked the two (seen in CI)."""
    w = make_world(pg_app)
    _, v = w.canonical(body="# Contacts\n\nCall 555 0100.\n")
    with pg_app.engine.connect() as other:
        # What inserting a chunk row of ``v`` takes, held open as by an upkeep mid-transaction.
        other.execute(
            sa.select(t.element_versions.c.version_id)
            .where(t.element_versions.c.version_id == v)
            .with_for_update(key_share=True, read=True)
        )
        with ThreadPoolExecutor(1) as pool:
            erasing = pool.submit(w.svc.erasure.erase_version, w.admin, v, "gdpr")
            try:
                tomb = erasing.result(timeout=20)
            finally:
                other.rollback()  # unblocks a waiting erasure, so a failure ends the test
    assert tomb["erased"] is True
