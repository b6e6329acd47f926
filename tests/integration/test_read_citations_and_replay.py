"""verify_citations accepts exactly what a stored context returned; replay re-runs it as the
principal who read it and names what changed; bad requests get one clear error."""

from __future__ import annotations

import copy

import pytest

from domain.errors import InvalidArgument, NotFound
from tests.conftest import World
from tests.read_world import add_evidence, publish, request

SOP = "# Testing SOP\n\n## Phases\n\nRun phase 0, phase 1 and phase 2 tests in order.\n"


@pytest.fixture
def read(world: World) -> tuple[World, dict, str, str]:
    sop, v1 = world.canonical(title="Testing SOP", body=SOP)
    add_evidence(world.app, world.repo, "notes.md", "# Notes\n\nPhase 2 tests need a preview.\n")
    publish(world)
    return (
        world,
        world.svc.reading.read_context(world.agent, request(world.repo, "phase tests")),
        sop,
        v1,
    )


def _citations(out: dict) -> list[dict]:
    return [c for item in out["items"] for c in item["citations"]]


def test_the_contexts_own_citations_all_verify(read) -> None:
    w, out, _, _ = read
    verdict = w.svc.reading.verify_citations(w.agent, out["context_id"], _citations(out))
    assert verdict["all_valid"]
    assert verdict["valid"] == len(_citations(out)) > 0


def test_invented_and_altered_citations_are_rejected(read) -> None:
    w, out, sop, v1 = read
    p = w.svc.curation.propose(
        w.agent,
        w.repo,
        element_id=sop,
        target_version_id=v1,
        body=SOP + "\nMore.\n",
        summary="more",
    )
    v2 = w.svc.review.accept(w.curator, p["proposal_id"])["result_version_id"]
    good = next(c for c in _citations(out) if c["version_id"] == v1)
    other_version = {**good, "version_id": v2}
    shifted = copy.deepcopy(good)
    shifted["excerpt"]["end"] += 500
    wrong_chunk = copy.deepcopy(good)
    wrong_chunk["excerpt"]["chunk_key"] = "nope"
    invented = {**good, "element_id": "el_" + "0" * 24, "version_id": "ver_" + "0" * 24}
    narrower = copy.deepcopy(good)
    narrower["excerpt"]["end"] -= 1
    verdict = w.svc.reading.verify_citations(
        w.agent,
        out["context_id"],
        [good, other_version, shifted, wrong_chunk, invented, narrower, 7],
    )
    reasons = [(r["valid"], r["reason"]) for r in verdict["results"]]
    assert reasons == [
        (True, "in_context"),
        (False, "other_version_of_element"),
        (False, "excerpt_not_in_context"),
        (False, "excerpt_not_in_context"),
        (False, "not_in_context"),
        (True, "within_returned_excerpt"),
        (False, "malformed"),
    ]
    assert not verdict["all_valid"]


def test_only_the_reader_or_an_auditor_may_inspect_a_context(read) -> None:
    w, out, _, _ = read
    assert w.svc.reading.verify_citations(w.auditor, out["context_id"], [])["all_valid"]
    for outsider in (w.stranger, w.reader):
        with pytest.raises(NotFound):
            w.svc.reading.verify_citations(outsider, out["context_id"], [])
    with pytest.raises(NotFound):
        w.svc.reading.verify_citations(w.agent, "ctx_" + "0" * 24, [])


def test_replay_reports_no_difference_on_an_unchanged_repository(read) -> None:
    w, out, _, _ = read
    replay = w.svc.reading.replay(w.agent, out["context_id"])
    assert replay["identical"]
    assert replay["differences"] == []
    assert replay["replayed_as"] == w.agent.principal_id
    assert replay["replay_context_id"] != out["context_id"]


def test_replay_names_the_changed_item_after_a_promotion(read) -> None:
    w, out, sop, v1 = read
    p = w.svc.curation.propose(
        w.agent,
        w.repo,
        element_id=sop,
        target_version_id=v1,
        body=SOP.replace("in order", "in order, always"),
        summary="s",
    )
    v2 = w.svc.review.accept(w.curator, p["proposal_id"])["result_version_id"]
    publish(w)
    replay = w.svc.reading.replay(w.auditor, out["context_id"])
    assert not replay["identical"]
    assert replay["replayed_as"] == w.agent.principal_id
    (change,) = replay["differences"]
    assert change["element_id"] == sop
    assert change["change"] == "version_changed"
    assert (change["before_version_id"], change["after_version_id"]) == (v1, v2)
    pinned = w.svc.reading.replay(w.auditor, out["context_id"], as_recorded=True)
    assert pinned["identical"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"selector": {"kind": "latest"}}, "unknown selector 'latest'"),
        ({"selector": {"kind": "baseline_ref"}}, "baseline_ref needs a baseline_id"),
        ({"as_of": "yesterday"}, "unparsable instant"),
        ({"as_of": "2999-01-01T00:00:00Z"}, "in the future"),
        ({"as_of": "2025-01-01T00:00:00"}, "needs a time zone"),
        ({"budget": {"max_items": -1}}, "budget.max_items"),
        ({"budget": {"max_items": 51}}, "budget.max_items"),
        ({"budget": {"max_chars": 100_001}}, "budget.max_chars"),
        ({"expand": {"hops": 4}}, "expand.hops"),
        ({"expand": {"max_nodes": 0}}, "expand.max_nodes"),
        ({"query": "   "}, "empty query"),
        ({"element_ids": ["el_" + "1" * 24]}, "exactly one of query, element_ids"),
        ({"detail_level": "everything"}, "detail_level"),
        ({"surprise": 1}, "surprise: unknown field"),
        ({"selector": {"kind": "version_ref"}}, "version_ref needs version_ids"),
    ],
)
def test_bad_input_gets_a_clear_error(world: World, change: dict, message: str) -> None:
    req = {**request(world.repo, "phase tests"), **change}
    with pytest.raises(InvalidArgument, match=message):
        world.svc.reading.read_context(world.agent, req)


def test_whoosh_syntax_in_user_text_is_only_words(world: World) -> None:
    world.canonical(title="Secrets", body="# Secrets\n\nRotate the vault keys.\n")
    publish(world)
    for query in ("title:secrets", "vault AND NOT keys", "vau*", "(rotate", '"vault'):
        out = world.svc.reading.read_context(world.agent, request(world.repo, query))
        assert isinstance(out["items"], list)
    hits = world.svc.reading.read_context(world.agent, request(world.repo, "title:nothing OR keys"))
    assert [i["title"] for i in hits["items"]] == ["Secrets"]
    assert world.svc.reading.read_context(world.agent, request(world.repo, "vau*"))["items"] == []
