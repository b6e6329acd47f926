"""Each selector, as_of and valid_at give exactly the expected versions — across promotions,
new versions, retirements, erasures and relationships that come and go."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from tests.conftest import World
from tests.read_world import add_evidence, new_evidence_version, publish, request, versions


@dataclass
class Timeline:
    """Elements, versions and the instants between the steps of the story."""

    w: World
    a: str
    b: str
    e: str
    f: str
    a1: str
    a2: str
    b1: str
    e1: str
    e2: str
    f1: str
    bl1: str
    bl2: str
    t_first_publish: datetime
    t_linked: datetime
    t_before_retire: datetime
    t_end: datetime

    def read(self, selector: object = "published", **fields: object) -> set[str]:
        """The versions returned for a direct fetch of every element."""
        req = request(
            self.w.repo,
            element_ids=[self.a, self.b, self.e, self.f],
            selector=selector,
            budget={"max_items": 50},
            **fields,
        )
        return versions(self.w.svc.reading.read_context(self.w.reader, req))


@pytest.fixture
def tl(world: World) -> Timeline:
    svc, app, repo = world.svc, world.app, world.repo
    a, a1 = world.canonical(title="Alpha", body="# Alpha\n\nalpha policy one\n")
    b, b1 = world.canonical(title="Beta", body="# Beta\n\nbeta policy alpha\n")
    e, e1 = add_evidence(app, repo, "e.md", "# E\n\nevidence alpha one\n")
    f, f1 = add_evidence(
        app,
        repo,
        "f.md",
        "# F\n\nwindowed alpha\n",
        metadata={"effective_from": "2025-01-01", "effective_to": "2025-06-01"},
    )
    bl1 = publish(world)
    t_first_publish = app.clock.now()
    p = svc.curation.propose(
        world.agent,
        repo,
        element_id=a,
        target_version_id=a1,
        body="# Alpha\n\nalpha policy two\n",
        summary="two",
    )
    a2 = svc.review.accept(world.curator, p["proposal_id"])["result_version_id"]
    rel = svc.elements.add_relationship(
        world.curator, a, e, kind="REFERENCE", type_key="ameide:cites"
    )
    e2 = new_evidence_version(app, e, "# E\n\nevidence alpha two\n")
    t_linked = app.clock.now()
    t_before_retire = app.clock.now()
    svc.elements.retire_element(world.curator, b, "obsolete")
    bl2 = publish(world)
    svc.elements.retire_relationship(world.curator, rel["relationship_id"])
    t_end = app.clock.now()
    return Timeline(
        world,
        a,
        b,
        e,
        f,
        a1,
        a2,
        b1,
        e1,
        e2,
        f1,
        bl1,
        bl2,
        t_first_publish,
        t_linked,
        t_before_retire,
        t_end,
    )


def test_published_now_and_as_of_the_first_promotion(tl: Timeline) -> None:
    assert tl.read() == {tl.a2, tl.e2, tl.f1}
    assert tl.read(as_of=tl.t_first_publish.isoformat()) == {tl.a1, tl.b1, tl.e1, tl.f1}


def test_head_skips_retired_elements_as_of_when_they_were_retired(tl: Timeline) -> None:
    assert tl.read("head") == {tl.a2, tl.e2, tl.f1}
    assert tl.read("head", as_of=tl.t_before_retire.isoformat()) == {tl.a2, tl.b1, tl.e2, tl.f1}
    assert tl.read("head", as_of=tl.t_first_publish.isoformat()) == {tl.a1, tl.b1, tl.e1, tl.f1}


def test_baseline_ref_keeps_its_pins_and_demotes_a_retired_one(tl: Timeline) -> None:
    selector = {"kind": "baseline_ref", "baseline_id": tl.bl1}
    assert tl.read(selector) == {tl.a1, tl.b1, tl.e2, tl.f1}
    out = tl.w.svc.reading.read_context(
        tl.w.reader, request(tl.w.repo, "beta policy", selector=selector, explain=True)
    )
    retired = next(i for i in out["items"] if i["element_id"] == tl.b)
    assert retired["score_breakdown"]["retired"]["value"] == 1.0
    assert tl.read({"kind": "baseline_ref", "baseline_id": tl.bl2}) == {tl.a2, tl.e2, tl.f1}


def test_version_ref_selects_exactly_the_listed_versions(tl: Timeline) -> None:
    req = request(
        tl.w.repo,
        "alpha",
        selector={"kind": "version_ref", "version_ids": [tl.a1]},
        include_evidence=False,
        budget={"max_items": 50},
    )
    assert versions(tl.w.svc.reading.read_context(tl.w.reader, req)) == {tl.a1}
    req = request(
        tl.w.repo, selector="version_ref", version_ids=[tl.a1, tl.a2, tl.e1], include_evidence=False
    )
    assert versions(tl.w.svc.reading.read_context(tl.w.reader, req)) == {tl.a1, tl.a2, tl.e1}


def test_evidence_can_be_left_out(tl: Timeline) -> None:
    assert tl.read(include_evidence=False) == {tl.a2}
    assert tl.read("head", include_evidence=False, as_of=tl.t_before_retire.isoformat()) == {
        tl.a2,
        tl.b1,
    }


def test_valid_at_keeps_versions_whose_window_contains_it(tl: Timeline) -> None:
    assert tl.read(valid_at="2025-03-01T00:00:00Z") == {tl.a2, tl.e2, tl.f1}
    assert tl.read(valid_at="2025-06-01T00:00:00Z") == {tl.a2, tl.e2}
    assert tl.read(valid_at="2024-12-31T23:59:59Z") == {tl.a2, tl.e2}
    query = request(tl.w.repo, "windowed", valid_at="2026-01-01T00:00:00Z")
    assert tl.f1 not in versions(tl.w.svc.reading.read_context(tl.w.reader, query))


def test_keyword_recall_uses_the_selection_on_every_path(tl: Timeline) -> None:
    query = request(tl.w.repo, "alpha", budget={"max_items": 50})
    assert versions(tl.w.svc.reading.read_context(tl.w.reader, query)) == {tl.a2, tl.e2, tl.f1}
    old = request(
        tl.w.repo, "alpha", as_of=tl.t_first_publish.isoformat(), budget={"max_items": 50}
    )
    assert versions(tl.w.svc.reading.read_context(tl.w.reader, old)) == {tl.a1, tl.b1, tl.e1, tl.f1}


def test_retired_evidence_is_gone_now_but_not_before(tl: Timeline) -> None:
    t = tl.w.app.clock.now()
    tl.w.svc.elements.retire_element(tl.w.curator, tl.f, "deleted upstream")
    assert tl.read() == {tl.a2, tl.e2}
    assert tl.read(as_of=t.isoformat()) == {tl.a2, tl.e2, tl.f1}


def test_an_erased_version_says_so_and_is_never_matched(tl: Timeline) -> None:
    tl.w.svc.erasure.erase_version(tl.w.admin, tl.e2, "personal data")
    out = tl.w.svc.reading.read_context(tl.w.reader, request(tl.w.repo, element_ids=[tl.e]))
    (item,) = out["items"]
    assert item["version_id"] == tl.e2
    assert item["erased"]
    assert not item["citations"]
    assert "erased" in item["content"]
    assert "evidence alpha two" not in out["context_block"]
    query = request(tl.w.repo, "evidence", budget={"max_items": 50})
    assert tl.e2 not in versions(tl.w.svc.reading.read_context(tl.w.reader, query))


def test_expansion_follows_relationships_as_they_were(tl: Timeline) -> None:
    def expanded(as_of: datetime | None) -> list[dict]:
        req = request(
            tl.w.repo,
            element_ids=[tl.a],
            expand={"hops": 1},
            selector="head",
            as_of=as_of.isoformat() if as_of else None,
        )
        out = tl.w.svc.reading.read_context(tl.w.reader, req)
        return [i for i in out["items"] if i["why_included"] == "relationship_path"]

    (then,) = expanded(tl.t_linked)
    assert then["element_id"] == tl.e
    assert then["version_id"] == tl.e2
    assert then["relationship_path"][0]["from_element_id"] == tl.a
    assert expanded(None) == []
    assert expanded(tl.t_first_publish) == []


def test_an_as_of_in_the_future_or_before_a_baseline_is_refused(tl: Timeline) -> None:
    from domain.errors import InvalidArgument, NotFound

    with pytest.raises(InvalidArgument, match="future"):
        tl.read(as_of="2999-01-01T00:00:00Z")
    with pytest.raises(NotFound):
        tl.read(
            {"kind": "baseline_ref", "baseline_id": tl.bl2}, as_of=tl.t_first_publish.isoformat()
        )
