"""read_context on a real SQLite file and a real Whoosh index: the reference scenario, trust
ranking, demotion, duplicates, budgets, detail levels, explain and the stored context."""

from __future__ import annotations

import json

import pytest

from tests.conftest import World
from tests.read_world import (
    add_evidence,
    check_citations_slice_bodies,
    publish,
    request,
    versions,
)

SOP = """# Testing SOP

How we test every change.

## Phases

Run phase 0 with `make test-phase0`, phase 1 with `make test-phase1` and phase 2 with
`make test-phase2`. Each phase of tests must pass before the next one runs.

## Flaky tests

Quarantine a flaky test and open a ticket.
"""
QUERY = "how do I run phase 0/1/2 tests?"
PHASES_NOTE = """---
title: Testing phases
status: active
---
# Testing phases

To run the tests of phase 1 and phase 2, start the dependencies first, then run the phase.
"""


@pytest.fixture
def scenario(world: World) -> tuple[World, str, str, str]:
    """A published Testing SOP and matching evidence; (world, sop, sop v1, evidence)."""
    sop, v1 = world.canonical(title="Testing SOP", body=SOP, type_key="ameide:sop")
    evidence, _ = add_evidence(world.app, world.repo, "backlog/017-testing.md", PHASES_NOTE)
    publish(world)
    return world, sop, v1, evidence


def test_the_published_sop_comes_first_with_citations_that_slice_its_body(scenario) -> None:
    w, sop, v1, evidence = scenario
    out = w.svc.reading.read_context(w.agent, request(w.repo, QUERY))
    first = out["items"][0]
    assert (first["element_id"], first["version_id"], first["source_kind"]) == (
        sop,
        v1,
        "CANONICAL",
    )
    assert first["citations"]
    assert first["why_included"] == "keyword_match"
    assert [i["element_id"] for i in out["items"]][1:] == [evidence]
    assert out["items"][1]["provenance"]["path"] == "backlog/017-testing.md"
    assert out["context_id"].startswith("ctx_")
    assert out["selector_used"]["baseline_id"]
    check_citations_slice_bodies(w, out)
    assert out["context_block"].startswith(f"[1] Testing SOP (CANONICAL, {v1})")


def test_a_new_promotion_is_read_now_and_the_old_version_as_of_before(scenario) -> None:
    w, sop, v1, _ = scenario
    before = w.svc.reading.read_context(w.agent, request(w.repo, QUERY))
    proposal = w.svc.curation.propose(
        w.agent,
        w.repo,
        element_id=sop,
        target_version_id=v1,
        body=SOP.replace("Quarantine", "Quarantine within a day"),
        summary="tighten",
    )
    v2 = w.svc.review.accept(w.curator, proposal["proposal_id"])["result_version_id"]
    assert v1 in versions(
        w.svc.reading.read_context(w.agent, request(w.repo, QUERY))
    )  # not published
    publish(w)
    now = w.svc.reading.read_context(w.agent, request(w.repo, QUERY))
    assert now["items"][0]["version_id"] == v2
    check_citations_slice_bodies(w, now)
    at = before["selector_used"]["resolved_at"]
    old = w.svc.reading.read_context(w.agent, request(w.repo, QUERY, as_of=at))
    assert old["items"][0]["version_id"] == v1
    assert old["selector_used"]["baseline_id"] == before["selector_used"]["baseline_id"]
    assert (
        w.svc.reading.read_context(w.agent, request(w.repo, QUERY, selector="head"))["items"][0][
            "version_id"
        ]
        == v2
    )


def test_superseded_evidence_ranks_below_its_active_replacement(world: World) -> None:
    text = "# Release checklist\n\nTag the release, run the release checklist, announce it.\n"
    old, _ = add_evidence(
        world.app,
        world.repo,
        "old.md",
        text,
        metadata={"status": "superseded", "superseded_by": ["new.md"]},
    )
    new, _ = add_evidence(world.app, world.repo, "new.md", text.replace("announce", "post"))
    out = world.svc.reading.read_context(
        world.agent, request(world.repo, "release checklist", explain=True)
    )
    order = [i["element_id"] for i in out["items"]]
    assert order.index(new) < order.index(old)
    demoted = out["items"][order.index(old)]["score_breakdown"]["superseded"]
    assert demoted["contribution"] < 0


def test_a_question_spelling_out_an_abbreviation_finds_the_page_that_only_uses_it(
    world: World,
) -> None:
    glossary, _ = add_evidence(
        world.app,
        world.repo,
        "glossary.md",
        "# Messaging glossary\n\nWe build on Event-Driven Architecture (EDA): services publish "
        "facts and never call each other for state.\n",
    )
    # shares no word with the question: only the abbreviation connects them
    rules, _ = add_evidence(
        world.app, world.repo, "rules.md", "# EDA rules\n\nOne topic per aggregate; idempotent "
        "consumers; outbox before publish.\n",
    )  # fmt: skip
    question = "what does our event-driven architecture require?"
    out = world.svc.reading.read_context(world.agent, request(world.repo, question, explain=True))
    assert {glossary, rules} <= {i["element_id"] for i in out["items"]}
    (rewrite,) = out["trace"]["query_rewrite"]["abbreviations"]
    assert (rewrite["short"], rewrite["long"], rewrite["added"]) == (
        "eda",
        "event driven architecture",
        "eda",
    )
    assert rewrite["defined_in"] in {i["version_id"] for i in out["items"]}
    # a question that already uses the short form is not rewritten
    plain = world.svc.reading.read_context(
        world.agent, request(world.repo, "EDA rules", explain=True)
    )
    assert "abbreviations" not in plain["trace"]["query_rewrite"]


def test_a_mirrored_section_is_collapsed_into_the_original(world: World) -> None:
    section = "## Rolling back\n\n" + " ".join(f"step{i} rollback word{i}" for i in range(60))
    original, _ = add_evidence(
        world.app, world.repo, "runbook.md", "# Deploy runbook\n\nDeploy it.\n\n" + section + "\n"
    )
    mirror, _ = add_evidence(world.app, world.repo, "quickref.md", "# Quick ref\n\n" + section)
    out = world.svc.reading.read_context(
        world.agent, request(world.repo, "rolling back", explain=True)
    )
    kept = [i["element_id"] for i in out["items"]]
    assert len({original, mirror} & set(kept)) == 1
    drops = [d for d in out["trace"]["drops"] if d["reason"] == "duplicate"]
    assert len(drops) == 1
    assert drops[0]["element_id"] in {original, mirror}


def test_budgets_are_honoured_exactly(world: World) -> None:
    for n in range(12):
        add_evidence(
            world.app,
            world.repo,
            f"n{n}.md",
            f"# Note {n}\n\nThe widget service note number {n}. " + "filler " * 80,
        )
    out = world.svc.reading.read_context(
        world.agent, request(world.repo, "widget", budget={"max_items": 5, "max_chars": 100_000})
    )
    assert len(out["items"]) == 5
    assert out["truncated"]
    for max_chars in (1, 60, 150, 700, 1500):
        small = world.svc.reading.read_context(
            world.agent,
            request(world.repo, "widget", budget={"max_items": 50, "max_chars": max_chars}),
        )
        assert len(small["context_block"]) <= max_chars
        assert sum(len(i["content"]) for i in small["items"]) <= max_chars
        assert small["truncated"]
        check_citations_slice_bodies(world, small)


def test_detail_levels_trade_size_for_completeness(scenario) -> None:
    w, sop, _, _ = scenario
    sizes = {}
    for detail in ("titles", "excerpt", "full"):
        out = w.svc.reading.read_context(
            w.agent, request(w.repo, element_ids=[sop], detail_level=detail)
        )
        check_citations_slice_bodies(w, out)
        sizes[detail] = len(out["items"][0]["content"])
        if detail == "full":
            spans = [c["excerpt"] for c in out["items"][0]["citations"]]
            assert " ".join(SOP[c["start"] : c["end"]] for c in spans).split() == SOP.split()
            assert out["items"][0]["why_included"] == "direct_fetch"
    assert sizes["titles"] < sizes["excerpt"] < sizes["full"]
    titles = w.svc.reading.read_context(
        w.agent, request(w.repo, element_ids=[sop], detail_level="titles")
    )
    assert titles["items"][0]["content"] == "How we test every change."


def test_explain_gives_breakdowns_that_sum_to_the_score_and_a_trace(scenario) -> None:
    w, *_ = scenario
    out = w.svc.reading.read_context(
        w.agent, request(w.repo, "title:secret OR phase*", explain=True)
    )
    for item in out["items"]:
        total = sum(term["contribution"] for term in item["score_breakdown"].values())
        assert abs(total - item["score"]) < 1e-4
    trace = out["trace"]
    assert trace["query_rewrite"]["terms"] == ["title", "secret", "phase"]
    assert trace["filters"]["repositories"] == {w.repo: "internal"}
    assert trace["candidates"]
    plain = w.svc.reading.read_context(w.agent, request(w.repo, QUERY))
    assert plain["trace"] is None
    assert "score_breakdown" not in plain["items"][0]


def test_every_response_is_stored_with_who_asked_for_whom_and_why(scenario) -> None:
    w, *_ = scenario
    out = w.svc.reading.read_context(
        w.agent, request(w.repo, QUERY, principal={"purpose": "answer", "on_behalf_of": None})
    )
    with w.app.uow(readonly=True) as uow:
        row = uow.store.get_read_context(out["context_id"])
    assert (row["principal_id"], row["purpose"], row["repo_key"]) == (
        w.agent.principal_id,
        "answer",
        w.repo,
    )
    assert json.loads(json.dumps(row["response"])) == out
    log = w.svc.history.access_log(w.auditor, w.repo)
    assert any(e["operation"] == "read_context" for e in log)


def test_omitting_the_repository_reads_every_readable_repository_of_the_org(world: World) -> None:
    other = world.repo.rsplit("/", 1)[0] + "/docs"
    world.svc.admin.create_repository(world.admin, other)
    world.svc.admin.grant(world.admin, world.agent.principal_id, "agent", other)
    hidden = world.repo.rsplit("/", 1)[0] + "/secret"
    world.svc.admin.create_repository(world.admin, hidden)
    a, _ = add_evidence(world.app, world.repo, "a.md", "# Kafka\n\nKafka topics.\n")
    b, _ = add_evidence(world.app, other, "b.md", "# Kafka\n\nKafka consumers.\n")
    add_evidence(world.app, hidden, "c.md", "# Kafka\n\nKafka secrets.\n")
    req = request(world.repo, "kafka")
    req["scope"].pop("repository_id")
    out = world.svc.reading.read_context(world.agent, req)
    assert {i["element_id"] for i in out["items"]} == {a, b}
