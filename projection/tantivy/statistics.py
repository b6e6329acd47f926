"""BM25 over what the caller may read: statistics of the readable population, exact rescoring.

tantivy scores with statistics of the whole index (every tenant, classification and version),
and tantivy-py cannot plug in others. So a search here computes BM25 itself, from statistics of
the **population**: the documents the caller may read as they stood at the read's instant — the
readable repositories at or below the caller's clearance there (the ``access`` criteria of the
:class:`~projection.keyword_index.IndexFilter`), each element's version current then: recorded
at or before ``as_of`` (or now) and not replaced by a later version by then (``replaced_at``).
Nothing the caller may not read is counted, so documents of other tenants, above the clearance or
recorded after ``as_of`` change neither a score nor an order; and an element's history does not
count its words again and again (the real corpus's 248 earlier versions of changed files made
the full pipeline's nDCG@10 0.013 lower than the Whoosh engine's). (The read's other criteria —
the selection's version allowlist, the attribute allowlists and exclusions — choose which
readable documents are returned, not the statistics: the Whoosh engine narrows its statistics
to those too.)

- Population statistics (document count, summed exact field lengths from the ``*_length`` fast
  fields) by one aggregation over the population query; document frequencies of the query's
  terms per field by one aggregation of filter buckets over the population's matching documents.
  Both are kept per reader epoch (``Lru``): reads repeat populations and words.
- BM25 exactly as the Whoosh engine computes it (k1 1.2, b 0.75, its field weights and its
  ``idf = log(N / (df + 1)) + 1``; tantivy's ``ln(1 + (N − df + 0.5) / (df + 0.5))`` scored the
  real-corpus dev set 0.011 lower, nDCG@10 of the full pipeline) over the population, with
  exact field lengths.
- **Exact top list.** tantivy ranks candidates with its own statistics, each word and field
  boosted by ``weight · idf_population / idf_index`` so its idf cancels; what differs from the
  exact score is only length normalisation (tantivy's whole-index average length and one-byte
  quantised lengths, always rounded down). Per word and field the exact contribution is at most
  ``max(1, population average / index average)`` times tantivy's (``R``, read from the
  statistics, plus 10⁻⁴ for tantivy's single-precision arithmetic). Candidates are rescored
  exactly in tantivy's order (term frequencies counted in their stored analysed text) until the
  next one's tantivy score times ``R`` falls below the ``limit``-th exact score: no document
  further down can enter, so the list and its scores are the exact ones — zero residual — and a
  search rescores about ``limit`` documents plus those within the factor ``R`` of the cut.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import tantivy

from projection import keyword_index as port
from projection.lru import Lru
from projection.tantivy.schema import (
    LENGTH_FIELDS,
    SCOPED_FIELDS,
    TEXT_FIELDS,
    filter_queries,
    micros,
    partition,
)

K1, B = 1.2, 0.75  # tantivy's BM25 parameters, and the Whoosh engine's
SAFETY = 1e-4
"""Relative margin of the rescoring bound for tantivy's single-precision arithmetic."""
_EARLIEST = -(2**63)  # a range needs a bound: the smallest indexed microsecond
KEPT = 20_000  # entries a side keeps (statistics per population, frequencies per word)
DOCUMENTS_KEPT = 16_000_000
"""Characters of analysed text a side keeps for the documents it rescored (the same documents
top one query after another; analysing a chunk's text again was most of a search)."""
COUNT_COST = 100
"""What a document kept counts (towards :data:`DOCUMENTS_KEPT`) per term frequency it keeps
(a dict entry and its key, about that many bytes)."""
COUNTS_KEPT = 384
"""Term frequencies a document keeps at most (four questions of the most words, every field);
past them it starts over."""
Read = Callable[[tantivy.Document], tuple[dict[str, Any], Sequence[str]]]
"""A stored document → its hit fields and its analysed title, headings and text."""
Clause = tuple[int, str, float, float]
"""(field position, term, BM25 weight ``field weight · idf · (k1 + 1)``, length norm factor)."""


def _access(f: port.IndexFilter) -> list[str]:
    """The readable partitions: the ``access`` values (rank and repository) of the filter."""
    return [
        f"{rank}:{repository}"
        for repository, top in f.max_rank_by_repository.items()
        for rank in range(min(top, 3) + 1)
    ]


def population_query(schema: tantivy.Schema, f: port.IndexFilter) -> tantivy.Query:
    """The documents the caller may read as they stood at the read's instant (the statistics'
    population): of the readable partitions, recorded by then and not yet replaced then."""
    access = _access(f)
    # a union of term queries (not a term set): intersected lazily with a word's postings
    readable = tantivy.Query.boolean_query(
        [
            (
                tantivy.Occur.Should,
                tantivy.Query.term_query(schema, "access", a, index_option="basic"),
            )
            for a in access
        ]
    )
    clauses = [(tantivy.Occur.Must, readable), (tantivy.Occur.MustNot, _replaced(schema, f))]
    if f.as_of is not None:
        clauses.append((tantivy.Occur.Must, _recorded(schema, f.as_of)))
    return tantivy.Query.boolean_query(clauses)


def _recorded(schema: tantivy.Schema, as_of: float) -> tantivy.Query:
    """Documents recorded at or before ``as_of``."""
    integer = tantivy.FieldType.Integer
    return tantivy.Query.range_query(schema, "recorded_at", integer, None, micros(as_of))


def _replaced(schema: tantivy.Schema, f: port.IndexFilter) -> tantivy.Query:
    """Documents of versions replaced by the read's instant (by now: any replaced one)."""
    upper = None if f.as_of is None else micros(f.as_of)
    integer = tantivy.FieldType.Integer
    return tantivy.Query.range_query(schema, "replaced_at", integer, _EARLIEST, upper)


def search(
    kept: Lru,
    documents_kept: Lru,
    epoch: int,
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    terms: Sequence[str],
    weights: Sequence[tuple[str, float]],
    index_filter: port.IndexFilter,
    limit: int,
    per_version: int | None,
    allowlists: Mapping[str, frozenset[int]],
    read: Read,
) -> list[tuple[dict[str, Any], float]]:
    """The exact top ``limit`` admitted documents by BM25 over the population's statistics, at
    most ``per_version`` of each version, equal scores by id."""
    population = (tuple(index_filter.max_rank_by_repository.items()), index_filter.as_of)
    everyone = population_query(schema, index_filter)
    documents, averages = _population(kept, epoch, searcher, everyone, population)
    if not documents:
        return []
    pairs = [(name, term) for term in terms for name, _ in weights]
    total, index_averages = _whole_index(kept, epoch, searcher, schema, read)
    deletions = total != searcher.num_docs  # tantivy's count holds deleted documents
    frequencies = _frequencies(
        kept, epoch, searcher, schema, index_filter, population, pairs, deletions
    )
    clauses: list[Clause] = []
    boosted = []
    bound = 1.0
    for term in terms:
        for name, weight in weights:
            df = frequencies[(name, term)]
            if not df:
                continue
            idf = math.log(documents / (df + 1)) + 1  # the Whoosh engine's idf
            position = TEXT_FIELDS.index(name)
            average = averages[position]
            clauses.append((position, term, weight * idf * (K1 + 1), K1 * B / average))
            index_idf = _tantivy_idf(searcher.doc_freq(name, term), total)
            index_average = index_averages.get(name)
            if index_idf <= 0 or not index_average:
                bound = math.inf  # tantivy scores the word 0: rescore every match
                index_idf = 1.0
            else:
                bound = max(bound, average / index_average)
            query = tantivy.Query.term_query(schema, name, term, index_option="freq")
            boosted.append(
                (tantivy.Occur.Should, tantivy.Query.boost_query(query, weight * idf / index_idf))
            )
    if not clauses:
        return []
    included, excluded = filter_queries(schema, index_filter)
    parts = [(tantivy.Occur.Must, tantivy.Query.boolean_query(boosted))]
    parts += [(tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)) for q in included]
    parts += [(tantivy.Occur.MustNot, q) for q in excluded]
    query = tantivy.Query.boolean_query(parts)
    ranked = _rescored(
        documents_kept,
        epoch,
        searcher,
        query,
        clauses,
        bound * (1 + SAFETY),
        limit,
        per_version,
        allowlists,
        read,
    )
    return [(hit, score) for score, _, _, hit in ranked]


def _rescored(
    documents: Lru,
    epoch: int,
    searcher: tantivy.Searcher,
    query: tantivy.Query,
    clauses: list[Clause],
    bound: float,
    limit: int,
    per_version: int | None,
    allowlists: Mapping[str, frozenset[int]],
    read: Read,
) -> list[tuple[float, str, str, dict[str, Any]]]:
    """Rescore tantivy's candidates in its order until none further down can enter the list."""
    scored: list[tuple[float, str, str, dict[str, Any]]] = []
    seen: set[tuple[int, int]] = set()
    by_version: dict[Any, list[float]] = {}  # exact scores so far per version key
    threshold = -math.inf
    wanted = 4 * limit + 16
    while True:
        best = searcher.search(query, limit=wanted, count=False).hits
        complete = len(best) < wanted
        fresh = [
            (score, address)
            for score, address in best
            if (address.segment_ord, address.doc) not in seen
        ]
        admitted = [True] * len(fresh)
        for field, allowed in allowlists.items():
            values = searcher.fast_field_values(field, [address for _, address in fresh])
            admitted = [ok and v in allowed for ok, v in zip(admitted, values, strict=True)]
        if per_version is not None:  # which version each is, without reading it
            keys = searcher.fast_field_values("version_key", [address for _, address in fresh])
        else:
            keys = [None] * len(fresh)
        stopped = False
        for (score, address), ok, version in zip(fresh, admitted, keys, strict=True):
            if bound * score < threshold:
                stopped = True
                break
            seen.add((address.segment_ord, address.doc))
            if not ok:
                continue
            above = by_version.get(version, ())
            if per_version is not None and sum(s > bound * score for s in above) >= per_version:
                continue  # its version has enough scoring strictly more: never taken
            document = _prepared(documents, epoch, searcher, address, read)
            exact = document.score(clauses)
            if document.size > document.kept_at:  # it keeps more frequencies: count them
                document.kept_at = document.size
                documents.put(document.key, document, document.size)
            hit = document.hit
            scored.append(
                (exact, str(hit.get("chunk_id", hit["version_id"])), str(hit["version_id"]), hit)
            )
            if per_version is not None:
                by_version.setdefault(version, []).append(exact)
            if len(scored) >= limit:  # each one scored may raise the bar (a short sort)
                threshold = _threshold(scored, limit, per_version)
        if stopped or complete:
            return _ranked(scored, limit, per_version)
        threshold = _threshold(scored, limit, per_version)
        wanted *= 4


class _Document:
    """A document rescored: its hit, its analysed fields padded for counting and their lengths,
    and the term frequencies counted so far — kept while the reader is current, each field's
    term counted once (reads of the same documents repeat words, and counting a word in a
    whole version's text is a scan of it: a third of a read on the real corpus)."""

    __slots__ = ("counted", "hit", "kept_at", "key", "lengths", "padded", "size")

    def __init__(self, key: Hashable, hit: dict[str, Any], texts: Sequence[str]) -> None:
        self.key, self.hit = key, hit
        self.lengths = [text.count(" ") + 1 if text else 0 for text in texts]
        # doubled spaces: str.count then finds " term " repeated back to back too
        self.padded = [f" {text.replace(' ', '  ')} " for text in texts]
        self.counted: dict[tuple[int, str], int] = {}
        self.size = self.kept_at = sum(map(len, self.padded)) + len(hit.get("text", "")) + 300

    def score(self, clauses: list[Clause]) -> float:
        """BM25: each clause's ``weight · tf / (tf + k1·(1 − b) + norm·length)``."""
        counted = self.counted
        if len(counted) > COUNTS_KEPT:
            self.size -= COUNT_COST * len(counted)
            counted.clear()
        total = 0.0
        for position, term, weight, norm in clauses:
            tf = counted.get((position, term))
            if tf is None:
                tf = counted[(position, term)] = self.padded[position].count(f" {term} ")
                self.size += COUNT_COST
            if tf:
                total += weight * tf / (tf + K1 * (1 - B) + norm * self.lengths[position])
        return total


def _prepared(
    documents: Lru,
    epoch: int,
    searcher: tantivy.Searcher,
    address: tantivy.DocAddress,
    read: Read,
) -> _Document:
    """A document, read once and kept while the reader is current."""
    key = (epoch, address.segment_ord, address.doc)
    found: _Document | None = documents.peek(key)
    if found is None:
        found = _Document(key, *read(searcher.doc(address)))
        documents.put(key, found, found.size)
    return found


def _ranked(
    scored: list[tuple[float, str, str, dict[str, Any]]], limit: int, per_version: int | None
) -> list[tuple[float, str, str, dict[str, Any]]]:
    """The best ``limit``, at most ``per_version`` of each version, equal scores by id."""
    scored.sort(key=lambda item: (-item[0], item[1]))
    taken: list[tuple[float, str, str, dict[str, Any]]] = []
    counts: dict[str, int] = {}
    for item in scored:
        if per_version is not None:
            counts[item[2]] = counts.get(item[2], 0) + 1
            if counts[item[2]] > per_version:
                continue
        taken.append(item)
        if len(taken) == limit:
            break
    return taken


def _threshold(
    scored: list[tuple[float, str, str, dict[str, Any]]], limit: int, per_version: int | None
) -> float:
    """The ``limit``-th exact score so far (minus infinity while fewer are taken)."""
    taken = _ranked(scored, limit, per_version)
    return taken[-1][0] if len(taken) == limit else -math.inf


def _population(
    kept: Lru,
    epoch: int,
    searcher: tantivy.Searcher,
    everyone: tantivy.Query,
    population: Hashable,
) -> tuple[int, tuple[float, ...]]:
    """The population's document count and average length of each text field."""
    key = ("population", epoch, population)
    found = kept.peek(key)
    if found is None:
        aggregations: dict[str, Any] = {"n": {"value_count": {"field": "version_key"}}}
        for name in TEXT_FIELDS:
            aggregations[name] = {"sum": {"field": LENGTH_FIELDS[name]}}
        values = searcher.aggregate(everyone, aggregations)
        documents = int(values["n"]["value"] or 0)
        sums = [float(values[name]["value"] or 0.0) for name in TEXT_FIELDS]
        averages = tuple(total / documents if total else 1.0 for total in sums)
        found = (documents, averages)
        kept.put(key, found)
    return found  # type: ignore[no-any-return]


def _frequencies(
    kept: Lru,
    epoch: int,
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    index_filter: port.IndexFilter,
    population: Hashable,
    pairs: Sequence[tuple[str, str]],
    deletions: bool,
) -> dict[tuple[str, str], int]:
    """Per (field, term): how many documents of the population hold the term in the field,
    summed over the readable partitions (:data:`~projection.tantivy.schema.SCOPED_FIELDS`).

    Without ``as_of`` the population is the partitions' current documents: without deleted
    documents in the index, each partition's count is its term dictionary's document frequency
    (no posting read), otherwise a count of its postings (deleted documents left out). With
    ``as_of``, the current documents recorded by then and the replaced ones recorded by then
    and replaced after it, counted in their postings."""
    accesses = _access(index_filter)
    scopes = [partition(access) for access in accesses]
    at = index_filter.as_of
    recorded = replaced = None
    if at is not None:
        recorded = _recorded(schema, at)
        later = tantivy.Query.range_query(
            schema, "replaced_at", tantivy.FieldType.Integer, micros(at), None, include_lower=False
        )
        replaced = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, recorded), (tantivy.Occur.Must, later)]
        )
        scopes_then = [partition(access, replaced=True) for access in accesses]
    found: dict[tuple[str, str], int] = {}
    for pair in pairs:
        value = kept.peek(("df", epoch, population, pair))
        if value is None:
            name, term = pair
            paths = [f"{SCOPED_FIELDS[name]}.{scope}" for scope in scopes]
            if recorded is None and not deletions:
                value = sum(searcher.doc_freq(path, term) for path in paths)
            else:
                value = sum(_count(searcher, schema, path, term, recorded) for path in paths)
            if replaced is not None:
                value += sum(
                    _count(searcher, schema, f"{SCOPED_FIELDS[name]}.{scope}", term, replaced)
                    for scope in scopes_then
                )
            kept.put(("df", epoch, population, pair), value)
        found[pair] = value
    return found


def _count(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    path: str,
    term: str,
    recorded: tantivy.Query | None,
) -> int:
    """Live documents holding ``term`` at ``path`` (recorded by then, with ``recorded``)."""
    query = tantivy.Query.term_query(schema, path, term, index_option="basic")
    if recorded is not None:
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, query), (tantivy.Occur.Must, recorded)]
        )
    counted: Any = searcher.search(query, limit=1, count=True)  # the stub lacks .count
    return int(counted.count or 0)


def _whole_index(
    kept: Lru, epoch: int, searcher: tantivy.Searcher, schema: tantivy.Schema, read: Read
) -> tuple[int, dict[str, float]]:
    """tantivy's own statistics: its document count (deleted documents included) and average
    length per text field, read from its explanation of one document per field."""
    key = ("index", epoch)
    found = kept.peek(key)
    if found is None:
        total = int(searcher.num_docs)
        averages: dict[str, float] = {}
        for position, name in enumerate(TEXT_FIELDS):
            longer = tantivy.Query.range_query(
                schema, LENGTH_FIELDS[name], tantivy.FieldType.Integer, 1, None
            )
            hits = searcher.search(longer, 1, count=False).hits
            if not hits:
                continue
            address = hits[0][1]
            term = read(searcher.doc(address))[1][position].split(" ", 1)[0]
            explained = tantivy.Query.term_query(schema, name, term, index_option="freq").explain(
                searcher, address
            )
            values = _explained(json.loads(explained.to_json()))
            averages[name] = values["avgdl"]
            total = int(values["N"])
        found = (total, averages)
        kept.put(key, found)
    return found  # type: ignore[no-any-return]


def _explained(node: Mapping[str, Any]) -> dict[str, float]:
    """The average length and document count in a tantivy term query's explanation."""
    found: dict[str, float] = {}
    description = str(node.get("description", ""))
    if description.startswith("avgdl"):
        found["avgdl"] = float(node["value"])
    elif description.startswith("N,"):
        found["N"] = float(node["value"])
    for child in node.get("details", []) or []:
        found.update(_explained(child))
    return found


def _f32(value: float) -> float:
    result: float = struct.unpack("f", struct.pack("f", value))[0]
    return result


def _tantivy_idf(df: int, total: int) -> float:
    """tantivy's idf as it computes it, in single precision (``(1 + x).ln()``: for a word in
    nearly every document it rounds far from the exact value)."""
    if df > total or total <= 0:
        return 0.0
    x = _f32(_f32(_f32(float(total - df)) + 0.5) / _f32(_f32(float(df)) + 0.5))
    return _f32(math.log(_f32(1.0 + x)))
