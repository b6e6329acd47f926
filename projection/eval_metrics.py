"""Retrieval-quality metrics for golden query sets (pure; the harness lives in the service).

A golden query grades documents by a *key* — the provenance path of an ingested file or an
element id — from 1 (related) to 3 (answers it). A run's ranked list is a list of keys, best
first; a key seen again counts as no gain (returning the same document twice helps nobody).

A query may also name groups of keys that are *one answer* (``same_answer``: a page and the
mirror that copies its section word for word). A group counts once, in every pipeline alike: the
first member returned gains its own grade, later members gain nothing, the ideal ranking holds
the group once at its best grade, and recall counts answers, not keys. So collapsing a mirror
into its original costs nothing, and showing both gains nothing twice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

METRICS = ("precision", "recall", "ndcg", "mrr", "duplicate_rate", "context_chars")


@dataclass(frozen=True, slots=True)
class GoldenQuery:
    """One line of a dataset: the query and its graded relevant keys."""

    query: str
    relevant: Mapping[str, int]
    same_answer: Mapping[str, str] = field(default_factory=dict)
    """Each key of a ``same_answer`` group mapped to its group's first key."""
    as_of: datetime | None = None
    """The system time the query reads at (a time-travel question); None reads now."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one pipeline returned for one query."""

    keys: tuple[str, ...]
    duplicate_rate: float
    context_chars: int


def parse_dataset(lines: Iterable[str]) -> list[GoldenQuery]:
    """Parse JSONL lines ``{"query": …, "relevant": {key: grade}, "same_answer": [[key, …]],
    "as_of": "2026-01-03T00:00:00Z"}`` (``same_answer`` optional; each group names two or more
    graded keys, a key at most once; ``as_of`` optional, an ISO-8601 instant with a time zone);
    other fields are ignored; blank lines are skipped.

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
        same = _same_answer(row.get("same_answer", []), relevant, number)
        as_of = _instant(row.get("as_of"), number)
        queries.append(GoldenQuery(query, dict(relevant), same, as_of))
    if not queries:
        raise ValueError("the dataset holds no queries")
    return queries


def _instant(value: object, number: int) -> datetime | None:
    """The optional ``as_of`` of one line, in UTC."""
    if value is None:
        return None
    bad = ValueError(f"line {number}: 'as_of' must be an ISO-8601 instant with a time zone")
    if not isinstance(value, str):
        raise bad
    try:
        instant = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise bad from None
    if instant.utcoffset() is None:
        raise bad
    return instant.astimezone(UTC)


def _same_answer(groups: object, relevant: Mapping[str, int], number: int) -> dict[str, str]:
    """``same_answer`` of one line as key → the first key of its group."""
    bad = ValueError(
        f"line {number}: 'same_answer' must be a list of groups of two or more graded keys, "
        "each key in one group at most"
    )
    if not isinstance(groups, list):
        raise bad
    same: dict[str, str] = {}
    for group in groups:
        if not isinstance(group, list) or len(group) < 2:
            raise bad
        for key in group:
            if not isinstance(key, str) or key not in relevant or key in same:
                raise bad
            same[key] = group[0]
    return same


def _answers(relevant: Mapping[str, int], same: Mapping[str, str]) -> dict[str, int]:
    """The best grade of each answer (a ``same_answer`` group or a lone key)."""
    best: dict[str, int] = {}
    for key, grade in relevant.items():
        answer = same.get(key, key)
        best[answer] = max(best.get(answer, 0), grade)
    return best


def _gains(
    keys: Sequence[str], relevant: Mapping[str, int], k: int, same: Mapping[str, str]
) -> list[int]:
    seen: set[str] = set()
    gains = []
    for key in keys[:k]:
        answer = same.get(key, key)
        gains.append(0 if answer in seen else relevant.get(key, 0))
        seen.add(answer)
    return gains


def precision_at_k(
    keys: Sequence[str], relevant: Mapping[str, int], k: int, same: Mapping[str, str] | None = None
) -> float:
    """Relevant answers in the top ``k``, divided by ``k``."""
    return sum(1 for g in _gains(keys, relevant, k, same or {}) if g > 0) / k


def recall_at_k(
    keys: Sequence[str], relevant: Mapping[str, int], k: int, same: Mapping[str, str] | None = None
) -> float:
    """Relevant answers in the top ``k``, divided by the number of relevant answers."""
    total = sum(1 for g in _answers(relevant, same or {}).values() if g > 0)
    if not total:
        return 0.0
    return sum(1 for g in _gains(keys, relevant, k, same or {}) if g > 0) / total


def ndcg_at_k(
    keys: Sequence[str], relevant: Mapping[str, int], k: int, same: Mapping[str, str] | None = None
) -> float:
    """Normalised discounted cumulative gain with graded gains ``2**grade - 1``; the ideal
    ranking holds each answer once, at its best grade."""
    grades = _answers(relevant, same or {}).values()
    ideal = sorted((g for g in grades if g > 0), reverse=True)[:k]
    best = _dcg(ideal)
    return _dcg(_gains(keys, relevant, k, same or {})) / best if best else 0.0


def reciprocal_rank(
    keys: Sequence[str], relevant: Mapping[str, int], k: int, same: Mapping[str, str] | None = None
) -> float:
    """1 / rank of the first relevant result in the top ``k`` (0 when there is none)."""
    for rank, gain in enumerate(_gains(keys, relevant, k, same or {}), start=1):
        if gain > 0:
            return 1.0 / rank
    return 0.0


def _dcg(gains: Sequence[int]) -> float:
    return sum(float(2**g - 1) / math.log2(rank + 2) for rank, g in enumerate(gains))


def evaluate_run(query: GoldenQuery, result: RunResult, k: int) -> dict[str, float]:
    """Every metric of one query's run."""
    keys, relevant, same = result.keys, query.relevant, query.same_answer
    return {
        "precision": precision_at_k(keys, relevant, k, same),
        "recall": recall_at_k(keys, relevant, k, same),
        "ndcg": ndcg_at_k(keys, relevant, k, same),
        "mrr": reciprocal_rank(keys, relevant, k, same),
        "duplicate_rate": result.duplicate_rate,
        "context_chars": float(result.context_chars),
    }


def mean_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over queries (rounded to 4 places)."""
    if not rows:
        return dict.fromkeys(METRICS, 0.0)
    return {name: round(sum(r[name] for r in rows) / len(rows), 4) for name in METRICS}
