"""``ameide context``, ``verify-citations``, ``replay`` and ``eval`` through the CLI."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Repo

SOP = "# Testing SOP\n\nHow we test.\n\n## Phases\n\nRun phase 0, phase 1 and phase 2 tests.\n"
QUERY = "how do I run phase 0/1/2 tests?"

pytestmark = pytest.mark.usefixtures("mode")  # local, and over --server (remote)


def _publish(repo: Repo) -> None:
    baseline = repo.cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)
    repo.cli.ok("promote", baseline["baseline_id"], "--repo", repo.key, as_=repo.publisher)


def test_context_returns_the_published_sop_with_citations(repo: Repo, files) -> None:
    element_id, version_id = repo.canonical(SOP)
    _publish(repo)
    out = repo.cli.ok(
        "context", QUERY, "--repo", repo.key, "--selector", "published", "--explain", as_=repo.agent
    )
    first = out["items"][0]
    assert (first["element_id"], first["version_id"]) == (element_id, version_id)
    span = first["citations"][0]["excerpt"]
    assert SOP[span["start"] : span["end"]] in first["content"]
    assert out["trace"]["query_rewrite"]["terms"]
    human = repo.cli("context", QUERY, "--repo", repo.key, "--detail", "titles", as_=repo.agent)
    assert human.exit_code == 0
    assert "[1] Testing SOP" in human.stdout


def test_search_finds_titles_and_ids_to_read_next(repo: Repo) -> None:
    element_id, version_id = repo.canonical(SOP)
    _publish(repo)
    hits = repo.cli.ok("search", "--repo", repo.key, QUERY, as_=repo.agent)
    assert [(i["element_id"], i["version_id"]) for i in hits["items"]] == [(element_id, version_id)]
    assert hits["items"][0]["title"] == "Testing SOP"
    assert len(hits["items"][0]["content"]) < len(SOP)  # the first sentence: a cheap read
    assert hits["context_id"].startswith("ctx_")  # stored and citable like any read
    human = repo.cli("search", "--repo", repo.key, QUERY, as_=repo.agent)
    assert human.exit_code == 0, human.stderr
    assert f"[1] Testing SOP  {element_id} @ {version_id}" in human.stdout
    nothing = repo.cli("search", "--repo", repo.key, QUERY, as_=repo.stranger)
    assert nothing.exit_code == 3, nothing.stderr  # forbidden reads as missing: NOT_FOUND
    assert "NOT_FOUND" in nothing.stderr


def test_verify_citations_exits_non_zero_on_a_citation_not_given(repo: Repo, files) -> None:
    repo.canonical(SOP)
    _publish(repo)
    out = repo.cli.ok("context", QUERY, "--repo", repo.key, as_=repo.agent)
    citations = out["items"][0]["citations"]
    good = files("good.json", json.dumps(citations))
    verdict = repo.cli.ok(
        "verify-citations", out["context_id"], "--citations", good, as_=repo.agent
    )
    assert verdict["all_valid"]
    bad = files("bad.json", json.dumps([{**citations[0], "version_id": "ver_" + "0" * 24}]))
    result = repo.cli("verify-citations", out["context_id"], "--citations", bad, as_=repo.agent)
    assert result.exit_code == 10
    assert "BAD" in result.stdout


def test_replay_shows_no_difference_then_the_new_version(repo: Repo) -> None:
    element_id, version_id = repo.canonical(SOP)
    _publish(repo)
    out = repo.cli.ok("context", QUERY, "--repo", repo.key, as_=repo.agent)
    same = repo.cli("replay", out["context_id"], as_=repo.agent)
    assert same.exit_code == 0
    assert "no difference" in same.stdout
    proposal = repo.cli.ok(
        "propose",
        "--repo",
        repo.key,
        "--element",
        element_id,
        "--target-version",
        version_id,
        "--summary",
        "s",
        "--body-file",
        "-",
        as_=repo.agent,
        stdin=(SOP + "\nAlways.\n").encode(),
    )
    repo.cli.ok("accept", proposal["proposal_id"], as_=repo.curator)
    _publish(repo)
    changed = repo.cli.ok("replay", out["context_id"], as_=repo.auditor)
    assert [d["change"] for d in changed["differences"]] == ["version_changed"]


def test_eval_prints_three_pipelines_side_by_side(repo: Repo, files) -> None:
    element_id, _ = repo.canonical(SOP)
    _publish(repo)
    dataset = files("golden.jsonl", json.dumps({"query": QUERY, "relevant": {element_id: 3}}))
    out = repo.cli.ok("eval", "--dataset", dataset, "--repo", repo.key, "--k", "5", as_=repo.agent)
    assert out["pipelines"]["full"]["ndcg"] == 1.0
    table = repo.cli("eval", "--dataset", dataset, "--repo", repo.key, as_=repo.agent)
    assert table.exit_code == 0
    for name in ("keyword", "full", "full_expanded", "nDCG@10", "dup rate"):
        assert name in table.stdout


def test_bad_context_input_is_one_clear_line(repo: Repo) -> None:
    result = repo.cli("context", QUERY, "--repo", repo.key, "--selector", "latest", as_=repo.agent)
    assert result.exit_code == 2
    assert "unknown selector 'latest'" in result.stderr
    result = repo.cli("context", "--repo", repo.key, as_=repo.agent)
    assert result.exit_code == 2
    assert "empty query" in result.stderr


def test_json_output_is_the_dump_of_the_operations_result_model(repo: Repo) -> None:
    """``--json`` prints the service's result model as every surface dumps it (issue 29): the
    document is that model, field for field, with nothing beside it."""
    from edge.results import as_json
    from service.results import ElementWithVersion

    element_id, version_id = repo.canonical(SOP)
    out = repo.cli.ok("element", "show", element_id, as_=repo.curator)
    model = ElementWithVersion.model_validate(out)
    assert as_json(model) == out
    assert model.version is not None
    assert model.version.version_id == version_id
    extras = [model.model_extra, model.element.model_extra, model.version.model_extra]
    assert not any(extras)
