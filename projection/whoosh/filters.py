"""Search filters as sets of document numbers: an :class:`~projection.keyword_index.IndexFilter`
becomes criteria (terms and numeric ranges), each criterion a segment's set of documents.

Filters are sets of admitted document numbers per segment, applied while scoring, so ``limit``
fills from permitted documents (:mod:`projection.whoosh.segments` caches the sets).
Identifier allowlists use one value→documents map per field and segment.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whoosh.query.qcore import Query
from whoosh.query.ranges import NumericRange
from whoosh.query.terms import Term

from projection import keyword_index as port
from projection.whoosh.schema import micros
from projection.whoosh.scoring import postings

Criterion = tuple[Any, ...]
"""``("term", field, value)`` or ``("range", field, low, high, low excluded)``."""


def docs_by_value(reader: Any, name: str) -> dict[str, frozenset[int]]:
    """Every value of an identifier field in a segment with the documents holding it."""
    if not reader.doc_count_all():
        return {}
    found = {}
    for value in reader.lexicon(name):
        text = value.decode("utf-8")
        found[text] = frozenset(doc for ids, _ in postings(reader, name, text) for doc in ids)
    return found


def docs_admitted(
    index_filter: port.IndexFilter, docs_for: Callable[[Criterion], frozenset[int]]
) -> set[int]:
    """Intersect the criteria's document sets (each a union), then remove the exclusions."""
    included, excluded = criteria(index_filter)
    docs: set[int] | None = None
    for alternatives in included:
        found = set().union(*(docs_for(criterion) for criterion in alternatives))
        docs = found if docs is None else docs & found
        if not docs:
            return set()
    docs = docs or set()
    for criterion in excluded:
        docs -= docs_for(criterion)
    return docs


def criteria(f: port.IndexFilter) -> tuple[list[list[Criterion]], list[Criterion]]:
    """What a document must match (one of each list) and what it must not match.

    Retirement, superseding and effective windows are only indexed when set, so they are
    criteria that exclude the documents with a disqualifying value.
    """
    access = [
        ("term", "access", f"{rank}:{repository}")
        for repository, top in f.max_rank_by_repository.items()
        for rank in range(min(top, 3) + 1)
    ]
    included: list[list[Criterion]] = [access]
    for name, values in (
        ("version_id", f.version_ids),
        ("element_id", f.element_ids),
        ("source_kind", f.source_kinds),
        ("type_key", f.type_keys),
    ):
        if values is not None:
            included.append([("term", name, value) for value in sorted(values)])
    if f.as_of is not None:
        included.append([("range", "recorded_at", None, micros(f.as_of), False)])
    excluded: list[Criterion] = []
    if f.valid_at is not None:
        excluded.append(("range", "effective_from", micros(f.valid_at), None, True))
        excluded.append(("range", "effective_to", None, micros(f.valid_at), False))
    if f.live_at is not None:
        excluded.append(("range", "retired_at", None, micros(f.live_at), False))
    if f.exclude_superseded:
        excluded.append(("term", "superseded", "yes"))
    return included, excluded


def query(criterion: Criterion) -> Query:
    """The Whoosh query matching the documents of one criterion."""
    if criterion[0] == "term":
        return Term(criterion[1], criterion[2])
    _, name, low, high, low_excluded = criterion
    return NumericRange(name, low, high, startexcl=low_excluded)
