"""Both keyword index engines answer the shipped golden set alike (issue 10): the same top 10
per query through plain keyword recall and through the full read pipeline, on one database.

The engines' BM25 differs in which readable documents its statistics count (Whoosh: what the
caller may read and asked to search; tantivy: what the caller may read as of the read's
instant, see projection/tantivy/statistics.py) and in the stemmer, so scores differ and
near-ties may swap places; what the test holds them to is written beside each assertion
(docs/search-engines.md has the figures).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from runtime import build_app
from service.settings import Settings
from tests.conftest import make_world
from tests.integration.test_read_eval import EXAMPLES, INGESTOR, committed_copy
from tests.read_world import publish


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The sample backlog and a published Testing SOP, evaluated through each engine."""
    tmp = tmp_path_factory.mktemp("engines")
    whoosh = build_app(Settings(home=tmp / "home", index_engine="whoosh"), migrate=True)
    w = make_world(whoosh)
    w.svc.admin.grant(w.admin, INGESTOR.principal_id, "ingestor", w.repo)
    w.svc.ingest.ingest_backlog(
        INGESTOR, str(committed_copy(EXAMPLES / "backlog", tmp / "src")), w.repo
    )
    w.canonical(title="Testing SOP", body=(EXAMPLES / "testing-sop.md").read_text("utf-8"))
    publish(w)
    tantivy = build_app(Settings(home=tmp / "home", index_engine="tantivy"))
    golden = (EXAMPLES / "golden.jsonl").read_text("utf-8")
    found = {
        name: app.service.evaluation.evaluate(
            w.reader, w.repo, golden, k=10, include_per_query=True
        )
        for name, app in (("whoosh", whoosh), ("tantivy", tantivy))
    }
    yield found
    tantivy.close()
    whoosh.close()


def _pairs(runs: dict[str, Any], pipeline: str) -> list[tuple[list[str], list[str]]]:
    both = zip(runs["whoosh"]["per_query"], runs["tantivy"]["per_query"], strict=True)
    return [(list(a[pipeline]), list(b[pipeline])) for a, b in both]


@pytest.mark.parametrize("pipeline", ["keyword", "full", "full_expanded"])
def test_both_engines_find_the_same_top_10_for_the_golden_set(
    runs: dict[str, Any], pipeline: str
) -> None:
    """Measured (58 queries): the same best result for 53 (keyword) and 55 (full) queries,
    9.5-9.7 of the 10 in common on average and never fewer than 7; exact lists for only a
    quarter, as near-equal scores swap places (the engines' BM25 statistics differ, see the
    module docstring; equal scores are ordered by random ids). nDCG@10 differs by < 0.01."""
    pairs = _pairs(runs, pipeline)
    in_common = [len(set(a) & set(b)) for a, b in pairs]
    same_best = sum(a[:1] == b[:1] for a, b in pairs)
    assert min(in_common) >= 7
    assert sum(in_common) >= 0.93 * 10 * len(pairs)
    assert same_best >= 0.88 * len(pairs)
    ndcg = [runs[engine]["pipelines"][pipeline]["ndcg"] for engine in ("whoosh", "tantivy")]
    assert abs(ndcg[0] - ndcg[1]) <= 0.02
