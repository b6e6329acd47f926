"""Scores and order never depend on documents the caller may not read (issue 31 §1), on the
engine ``AMEIDE_INDEX_ENGINE`` names; and on tantivy they are exactly BM25 over the readable
population (the statistics of ``projection.tantivy.statistics``), whatever tantivy's own
whole-index statistics would rank first: the rescoring leaves no residual.

Random corpora from a small vocabulary (so words are shared and scores close), random forbidden
documents — another tenant's, above the clearance in the same repository, recorded after the
read's ``as_of`` — and random questions, limits and per-version caps.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projection.keyword_index import IndexedChunk, IndexFilter, indexed_chunks
from projection.tantivy import TantivyKeywordIndex
from projection.whoosh import WhooshKeywordIndex
from tests.conftest import INDEX_ENGINE

pytestmark = pytest.mark.index_engine
Index = TantivyKeywordIndex if INDEX_ENGINE == "tantivy" else WhooshKeywordIndex

MINE = "acme/eng/platform"
THEIRS = "rival/eng/platform"
AS_OF = 5_000.0
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
K1, B = 1.2, 0.75
FIELD_WEIGHTS = (("title", 1.0), ("heading", 0.5), ("text", 1.0))

phrase = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
sections = st.lists(st.tuples(phrase, st.lists(phrase, min_size=1, max_size=4)), max_size=3)
document = st.tuples(phrase, sections)


def _body(parts: list[tuple[str, list[str]]]) -> str:
    return "".join(f"# {heading}\n{' '.join(text)}\n\n" for heading, text in parts) or "empty\n"


def _chunks(
    n: int,
    title: str,
    parts: list[tuple[str, list[str]]],
    repository: str,
    rank: int,
    at: float,
    *,
    replaced_at: float | None = None,
    element: int | None = None,
) -> list[IndexedChunk]:
    return indexed_chunks(
        body=_body(parts),
        title=title,
        repository_key=repository,
        element_id=f"el-{n if element is None else element}",
        version_id=f"v{n:03d}",
        classification_rank=rank,
        source_kind="CANONICAL",
        type_key="ameide:doc",
        recorded_at=at,
        replaced_at=replaced_at,
    )


def _forbidden(kind: int, n: int, doc: tuple[str, list[tuple[str, list[str]]]]) -> list[Any]:
    title, parts = doc
    if kind == 0:  # another tenant's repository, which the reader cannot read at all
        return _chunks(n, title, parts, THEIRS, 0, 1_000.0)
    if kind == 1:  # above the reader's clearance (internal) in the readable repository
        return _chunks(n, title, parts, MINE, 3, 1_000.0)
    return _chunks(n, title, parts, MINE, 1, AS_OF + 1)  # recorded after the read's as_of


def _answers(index: Any, questions: Sequence[str], flt: IndexFilter, limit: int) -> list[Any]:
    return [
        (
            [(h.chunk_id, h.score) for h in index.search(q, flt, limit, per_version=2)],
            [(h.chunk_id, h.score) for h in index.search(q, flt, limit)],
            [(h.version_id, h.score) for h in index.search_versions(q, flt, limit)],
        )
        for q in questions
    ]


@settings(
    deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow]
)  # no speed claim
@given(
    mine=st.lists(document, min_size=1, max_size=8),
    forbidden=st.lists(st.tuples(st.integers(0, 3), document), min_size=1, max_size=8),
    questions=st.lists(phrase, min_size=1, max_size=3),
    limit=st.integers(1, 6),
    as_of=st.booleans(),
)
def test_forbidden_documents_change_neither_scores_nor_order(
    mine: list[Any], forbidden: list[Any], questions: list[str], limit: int, as_of: bool
) -> None:
    """Kind 3 is a later version of one of the reader's documents, recorded after ``as_of``:
    the document it replaces is indexed again as replaced then, and was current at ``as_of``."""
    flt = IndexFilter({MINE: 1}, as_of=AS_OF if as_of else None)
    if not as_of:  # without as_of the later versions are readable: only the first two kinds
        forbidden = [(kind % 2, doc) for kind, doc in forbidden]
    with tempfile.TemporaryDirectory() as directory:
        index = Index(Path(directory) / "index")
        try:
            for n, (title, parts) in enumerate(mine):
                index.replace_versions(_chunks(n, title, parts, MINE, n % 2, 1_000.0 + n))
            before = _answers(index, questions, flt, limit)
            replaced: set[int] = set()
            for n, (kind, doc) in enumerate(forbidden, start=100):
                old = n % len(mine)
                if kind < 3 or old in replaced:
                    index.replace_versions(_forbidden(min(kind, 2), n, doc))
                    continue
                replaced.add(old)
                (title, parts), later = mine[old], AS_OF + 1
                index.replace_versions(
                    _chunks(old, title, parts, MINE, old % 2, 1_000.0 + old, replaced_at=later)
                )
                index.replace_versions(_chunks(n, *doc, MINE, old % 2, later, element=old))
            assert _answers(index, questions, flt, limit) == before
        finally:
            index.close()


# -- tantivy: exactly BM25 over the population -------------------------------------------------


def _reference(
    index: TantivyKeywordIndex,
    corpus: list[list[IndexedChunk]],
    question: str,
    flt: IndexFilter,
    limit: int,
    per_version: int | None,
    versions: bool,
) -> list[tuple[str, float]]:
    """BM25 by hand: statistics over the readable population, every admitted match scored."""
    docs = []
    for chunks in corpus:
        first = chunks[0]
        readable = first.classification_rank <= flt.max_rank_by_repository.get(
            first.repository_key, -1
        ) and (flt.as_of is None or first.recorded_at <= flt.as_of)
        replaced = first.replaced_at is not None and (
            flt.as_of is None or first.replaced_at <= flt.as_of
        )
        counted = readable and not replaced  # the population: as it stood at the read's instant
        admitted = readable and (flt.version_ids is None or first.version_id in flt.version_ids)
        headings = list(dict.fromkeys(c.heading_path for c in chunks))
        if versions:
            fields = [
                index.words(first.title),
                [w for h in headings for w in index.words(h)],
                [w for c in chunks for w in index.words(c.text)],
            ]
            docs.append((first.version_id, first.version_id, counted, admitted, fields))
        else:
            for c in chunks:
                fields = [index.words(c.title), index.words(c.heading_path), index.words(c.text)]
                docs.append((c.chunk_id, c.version_id, counted, admitted, fields))
    population = [fields for _, _, counted, _, fields in docs if counted]
    count = len(population)
    sums = [sum(len(fields[i]) for fields in population) for i in range(3)]
    averages = [total / count if total else 1.0 for total in sums]
    clauses = []
    for term in index.query_words(question):
        for position, (_, weight) in enumerate(FIELD_WEIGHTS):
            df = sum(term in fields[position] for fields in population)
            if df:
                idf = math.log(count / (df + 1)) + 1
                clauses.append(
                    (position, term, weight * idf * (K1 + 1), K1 * B / averages[position])
                )
    scored = []
    for key, version, _, admitted, fields in docs:
        score = 0.0
        for position, term, weight, norm in clauses:
            tf = fields[position].count(term)
            if tf:
                score += weight * tf / (tf + K1 * (1 - B) + norm * len(fields[position]))
        if admitted and score > 0:
            scored.append((score, key, version))
    scored.sort(key=lambda item: (-item[0], item[1]))
    taken: list[tuple[str, float]] = []
    per: dict[str, int] = {}
    for score, key, version in scored:
        per[version] = per.get(version, 0) + 1
        if per_version is None or per[version] <= per_version:
            taken.append((key, score))
    return taken[:limit]


@pytest.mark.skipif(INDEX_ENGINE != "tantivy", reason="the tantivy engine's rescoring")
@settings(deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=st.lists(
        st.tuples(document, st.integers(0, 3), st.booleans(), st.booleans(), st.integers(0, 2)),
        min_size=1,
        max_size=14,
    ),
    question=phrase,
    limit=st.integers(1, 8),
    per_version=st.sampled_from([None, 1, 2]),
    as_of=st.booleans(),
    selected=st.booleans(),
    moved=st.booleans(),
)
def test_tantivy_answers_exactly_bm25_over_what_the_caller_may_read(
    corpus: list[Any],
    question: str,
    limit: int,
    per_version: int | None,
    as_of: bool,
    selected: bool,
    moved: bool,
) -> None:
    """Other tenants' documents and long texts skew tantivy's whole-index statistics (its
    first-stage order); the answer is the exact list all the same, scores included. With
    ``moved`` the first version is indexed again above the clearance: tantivy's term
    dictionary still counts its deleted documents, the population's statistics must not. A
    version replaced by the read's instant is found but not counted (``replaced``: 1 replaced
    before ``as_of``, 2 after it)."""
    built = []
    for n, ((title, parts), rank, theirs, late, replaced) in enumerate(corpus):
        at = AS_OF + 1 if late else 1_000.0 + n
        replaced_at = (None, AS_OF - 1 if not late else None, AS_OF + 2)[replaced]
        repository = THEIRS if theirs else MINE
        built.append(_chunks(n, title, parts, repository, rank, at, replaced_at=replaced_at))
    allowlist = frozenset(chunks[0].version_id for chunks in built[::2]) if selected else None
    flt = IndexFilter({MINE: 2}, version_ids=allowlist, as_of=AS_OF if as_of else None)
    with tempfile.TemporaryDirectory() as directory:
        index = TantivyKeywordIndex(Path(directory) / "index")
        try:
            index.replace_versions(chunk for chunks in built for chunk in chunks)
            if moved:
                (title, parts), _, theirs, late, _ = corpus[0]
                at = AS_OF + 1 if late else 1_000.0
                replaced_at = built[0][0].replaced_at
                repository = THEIRS if theirs else MINE
                built[0] = _chunks(0, title, parts, repository, 3, at, replaced_at=replaced_at)
                index.replace_versions(built[0])
            found = [
                (h.chunk_id, h.score)
                for h in index.search(question, flt, limit, per_version=per_version)
            ]
            expected = _reference(index, built, question, flt, limit, per_version, False)
            assert [key for key, _ in found] == [key for key, _ in expected]
            assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-12)
            whole = [(h.version_id, h.score) for h in index.search_versions(question, flt, limit)]
            expected = _reference(index, built, question, flt, limit, None, True)
            assert [key for key, _ in whole] == [key for key, _ in expected]
            assert [s for _, s in whole] == pytest.approx([s for _, s in expected], rel=1e-12)
        finally:
            index.close()
