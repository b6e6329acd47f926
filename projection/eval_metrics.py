"""Retrieval-quality metrics for golden query sets (pure; the harness lives in the service).

A golden query grades documents by a *key* — the provenance path of an ingested file or an
element id — from 1 (related) to 3 (answers it). A run's ranked list is a list of keys, best
first; a key seen again counts as no gain (returning the same document twice helps nobody).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

METRICS = ("precision", "recall", "ndcg", "mrr", "duplicate_rate", "context_chars")


@dataclass(frozen=True, slots=True)
class GoldenQuery:
    """One line of a dataset: the query and its graded relevant keys."""

    query: str
    relevant: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one pipeline returned for one query."""

    keys: tuple[str, ...]
    duplicate_rate: float
    context_chars: int


def parse_dataset(lines: Iterable[str]) -> list[GoldenQuery]:
    """Parse JSONL lines ``{"query": …, "relevant": {key: grade}}``; blank lines are skipped.

    Raises ``ValueError`` naming the line for anything else.
    """
    queries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: not JSON ({exc.msg})") from None
        query = row.get("query") if isinstance(row, dict) else None
        relevant = row.get("relevant") if isinstance(row, dict) else None
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"line {number}: needs a non-empty text 'query'")
        if not isinstance(relevant, dict) or not all(
            isinstance(g, int) and not isinstance(g, bool) and g >= 0 for g in relevant.values()
        ):
            raise ValueError(f"line {number}: 'relevant' must map keys to grades >= 0")
        queries.append(GoldenQuery(query, dict(relevant)))
    if not queries:
        raise ValueError("the dataset holds no queries")
    return queries


def _gains(keys: Sequence[str], relevant: Mapping[str, int], k: int) -> list[int]:
    seen: set[str] = set()
    gains = []
    for key in keys[:k]:
        gains.append(0 if key in seen else relevant.get(key, 0))
        seen.add(key)
    return gains


def precision_at_k(keys: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Relevant results in the top ``k``, divided by ``k``."""
    return sum(1 for g in _gains(keys, relevant, k) if g > 0) / k


def recall_at_k(keys: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Relevant results in the top ``k``, divided by the number of relevant keys."""
    total = sum(1 for g in relevant.values() if g > 0)
    if not total:
        return 0.0
    return sum(1 for g in _gains(keys, relevant, k) if g > 0) / total


def ndcg_at_k(keys: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Normalised discounted cumulative gain with graded gains ``2**grade - 1``."""
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    best = _dcg(ideal)
    return _dcg(_gains(keys, relevant, k)) / best if best else 0.0


def reciprocal_rank(keys: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """1 / rank of the first relevant result in the top ``k`` (0 when there is none)."""
    for rank, gain in enumerate(_gains(keys, relevant, k), start=1):
        if gain > 0:
            return 1.0 / rank
    return 0.0


def _dcg(gains: Sequence[int]) -> float:
    return sum(float(2**g - 1) / math.log2(rank + 2) for rank, g in enumerate(gains))


def evaluate_run(query: GoldenQuery, result: RunResult, k: int) -> dict[str, float]:
    """Every metric of one query's run."""
    return {
        "precision": precision_at_k(result.keys, query.relevant, k),
        "recall": recall_at_k(result.keys, query.relevant, k),
        "ndcg": ndcg_at_k(result.keys, query.relevant, k),
        "mrr": reciprocal_rank(result.keys, query.relevant, k),
        "duplicate_rate": result.duplicate_rate,
        "context_chars": float(result.context_chars),
    }


def mean_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over queries (rounded to 4 places)."""
    if not rows:
        return dict.fromkeys(METRICS, 0.0)
    return {name: round(sum(r[name] for r in rows) / len(rows), 4) for name in METRICS}
