"""``as_of``: the published pointer and element heads resolve as recorded at an instant."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from domain.errors import NotFound
from tests.conftest import World


def parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def accept_change(w: World, el: str, version: str, body: str) -> str:
    p = w.svc.curation.propose(
        w.agent, w.repo, body=body, summary="change", element_id=el, target_version_id=version
    )
    return str(w.svc.review.accept(w.curator, p["proposal_id"])["result_version_id"])


def test_the_pointer_and_the_heads_resolve_before_between_and_after_each_change(
    any_world: World,
):
    w, svc = any_world, any_world.svc
    now = w.app.clock.now  # the service's clock: strictly after everything recorded so far

    t_before = now()
    el, v1 = w.canonical(body="version one\n")
    t_created = now()
    b1 = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    t_baseline = now()
    move1 = svc.publishing.promote(w.publisher, b1)
    t_promoted = now()
    v2 = accept_change(w, el, v1, "version two\n")
    t_accepted = now()
    b2 = svc.publishing.create_baseline(w.publisher, w.repo)["baseline_id"]
    move2 = svc.publishing.promote(w.publisher, b2)
    t_promoted_again = now()
    svc.publishing.rollback(w.publisher, w.repo, reason="bad release")
    t_rolled_back = now()

    expected_pointer = [
        (t_before, None),
        (t_created, None),
        (t_baseline, None),
        (t_promoted, b1),
        (t_accepted, b1),
        (t_promoted_again, b2),
        (t_rolled_back, b1),
    ]
    for instant, baseline in expected_pointer:
        assert (
            svc.publishing.published(w.reader, w.repo, as_of=instant)["baseline_id"] == baseline
        ), instant
    assert svc.publishing.published(w.reader, w.repo)["baseline_id"] == b1

    # At the exact instant of a move the new baseline is in effect; a microsecond before, not.
    at2 = parse(move2["at"])
    assert svc.publishing.published(w.reader, w.repo, as_of=at2)["baseline_id"] == b2
    just_before = at2 - timedelta(microseconds=1)
    assert (
        svc.publishing.published(w.reader, w.repo, as_of=just_before)["baseline_id"] == move1["to"]
    )
    moves = svc.publishing.published(w.reader, w.repo, as_of=t_accepted)["moves"]
    assert [(m["from"], m["to"]) for m in moves] == [(None, b1)]

    with pytest.raises(NotFound, match="did not exist"):
        svc.elements.get_element(w.reader, el, as_of=t_before)
    expected_head = [
        (t_created, v1),
        (t_promoted, v1),
        (t_accepted, v2),
        (t_rolled_back, v2),
    ]
    for instant, version in expected_head:
        shown = svc.elements.get_element(w.reader, el, as_of=instant)
        assert shown["version"]["version_id"] == version, instant
    assert (
        svc.elements.get_element(w.reader, el, as_of=t_promoted)["version"]["body"]
        == "version one\n"
    )
    # Rolling the pointer back does not move the element's head.
    assert svc.elements.get_element(w.reader, el)["version"]["version_id"] == v2


def test_a_retirement_is_visible_only_from_its_instant_on(any_world: World):
    w, svc = any_world, any_world.svc
    el, _ = w.canonical()
    t_live = w.app.clock.now()
    svc.elements.retire_element(w.curator, el, "obsolete")
    t_retired = w.app.clock.now()
    assert (
        svc.elements.get_element(w.reader, el, as_of=t_live)["element"]["retired_at_as_of"] is False
    )
    assert (
        svc.elements.get_element(w.reader, el, as_of=t_retired)["element"]["retired_at_as_of"]
        is True
    )


def test_relationships_resolve_as_of_an_instant(any_world: World):
    w, svc = any_world, any_world.svc
    a, _ = w.canonical(title="A", body="a\n")
    b, _ = w.canonical(title="B", body="b\n")
    t_none = w.app.clock.now()
    rel = svc.elements.add_relationship(w.curator, a, b, kind="SEMANTIC", type_key="ameide:related")
    t_linked = w.app.clock.now()
    svc.elements.retire_relationship(w.curator, rel["relationship_id"])
    t_unlinked = w.app.clock.now()

    def ids(instant: datetime) -> list[str]:
        return [
            r["relationship_id"]
            for r in svc.elements.list_relationships(w.reader, a, as_of=instant)
        ]

    assert ids(t_none) == []
    assert ids(t_linked) == [rel["relationship_id"]]
    assert ids(t_unlinked) == []
    assert svc.elements.list_relationships(w.reader, a) == []
