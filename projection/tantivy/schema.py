"""What the tantivy index files hold: the schema, the analyser, and an ``IndexFilter`` as a query.

Both indexes (``chunks`` and ``versions``) share one schema. Text fields are analysed by tantivy
itself with :func:`analyzer`, aligned with the Whoosh engine's ``StemmingAnalyzer``: the same
word expression (words of two characters or more, dotted words such as ``e.g.`` kept whole),
lower-cased, the same stop words (:data:`~projection.keyword_index.STOP_WORDS`), then tantivy's
English stemmer — Snowball's "Porter2", where Whoosh uses the original Porter stemmer, so a few
words stem differently (``generously`` → ``generous`` / ``gener``). Only word frequencies are
indexed (no positions: nothing searches phrases). Times are indexed as microseconds.

The chunk side stores each chunk whole (every :class:`~projection.keyword_index.IndexedChunk`
field, as a JSON list in field order): a search answers from it, and erasure rewrites the index
from it (tantivy-py cannot merge chosen segments, and only a merge drops a deleted document's
words).
"""

from __future__ import annotations

import hashlib

import tantivy

from projection import keyword_index as port

FORMAT = 3
"""What the index files hold; bump it when the schema, the analyser or the stored values change."""
ANALYZER = "ameide_en"
TEXT_FIELDS = ("title", "heading", "text")
IDENTIFIER_FIELDS = ("version_id", "element_id", "access", "source_kind", "type_key", "superseded")
TIME_FIELDS = ("recorded_at", "retired_at", "effective_from", "effective_to")
STORED = "stored"
KEY_FIELDS = {"version_ids": "version_key", "element_ids": "element_key"}
"""Fast fields holding a 64-bit hash of the version and element id, for long allowlists."""
LONG_ALLOWLIST = 256
"""Allowlists longer than this are checked on the hits (by their hashed ids) instead of in the
query: a term-set query over thousands of ids took 20-250 ms a search at 100k chunks (a term
lookup and a posting list each), checking a few hundred hits' fast-field values well under 1."""
WORD = r"[\w*](?:\.?[\w*])+"
"""Whoosh's ``RegexTokenizer`` words (``[\\w*]+(\\.?[\\w*]+)*``) without the one-character ones,
which its ``StopFilter`` drops (``min=2``)."""
LONGEST_WORD = 255  # bytes; longer tokens (encoded blobs) are not indexed


def analyzer() -> tantivy.TextAnalyzer:
    """The text analyser of every text field, and of query text."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(WORD))
        .filter(tantivy.Filter.remove_long(LONGEST_WORD))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(list(port.STOP_WORDS)))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def schema() -> tantivy.Schema:
    """One schema for both indexes."""
    builder = tantivy.SchemaBuilder()
    for name in IDENTIFIER_FIELDS:  # these and the times are left out when unset
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    for name in TIME_FIELDS:
        builder.add_integer_field(name, indexed=True, fast=True)
    for name in TEXT_FIELDS:
        builder.add_text_field(name, tokenizer_name=ANALYZER, index_option="freq")
    for name in KEY_FIELDS.values():
        builder.add_integer_field(name, fast=True)
    builder.add_bytes_field(STORED, stored=True)
    return builder.build()


def key(identifier: str) -> int:
    """The signed 64-bit hash of an id kept in a key field (a collision, 2^-64 a pair, would
    let one other version past a long allowlist)."""
    digest = hashlib.blake2b(identifier.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def long_allowlists(f: port.IndexFilter) -> dict[str, frozenset[int]]:
    """The filter's allowlists too long for the query: key field → the admitted hashes."""
    found = {}
    for criterion, field in KEY_FIELDS.items():
        values: frozenset[str] | None = getattr(f, criterion)
        if values is not None and len(values) > LONG_ALLOWLIST:
            found[field] = frozenset(key(value) for value in values)
    return found


def micros(seconds: float | None) -> int | None:
    """Epoch seconds as the indexed microseconds (``None`` stays unset)."""
    return None if seconds is None else round(seconds * 1_000_000)


def filter_queries(
    s: tantivy.Schema, f: port.IndexFilter
) -> tuple[list[tantivy.Query], list[tantivy.Query]]:
    """An ``IndexFilter`` as queries a document must match (each) and must not match (any);
    id allowlists longer than :data:`LONG_ALLOWLIST` are left to :func:`long_allowlists`.

    Retirement, superseding and effective windows are only indexed when set, so they are
    exclusions of the documents with a disqualifying value (like the Whoosh engine's).
    """
    access = [
        f"{rank}:{repository}"
        for repository, top in f.max_rank_by_repository.items()
        for rank in range(min(top, 3) + 1)
    ]
    included = [tantivy.Query.term_set_query(s, "access", access)]
    for name, values, hashed in (
        ("version_id", f.version_ids, True),
        ("element_id", f.element_ids, True),
        ("source_kind", f.source_kinds, False),
        ("type_key", f.type_keys, False),
    ):
        if values is None or (hashed and len(values) > LONG_ALLOWLIST):
            continue  # unset, or checked on the hits (long_allowlists)
        included.append(tantivy.Query.term_set_query(s, name, sorted(values)))
    integer = tantivy.FieldType.Integer
    if f.as_of is not None:
        included.append(tantivy.Query.range_query(s, "recorded_at", integer, None, micros(f.as_of)))
    excluded = []
    if f.valid_at is not None:
        at = micros(f.valid_at)
        excluded.append(
            tantivy.Query.range_query(s, "effective_from", integer, at, None, include_lower=False)
        )
        excluded.append(tantivy.Query.range_query(s, "effective_to", integer, None, at))
    if f.live_at is not None:
        excluded.append(
            tantivy.Query.range_query(s, "retired_at", integer, None, micros(f.live_at))
        )
    if f.exclude_superseded:
        excluded.append(tantivy.Query.term_query(s, "superseded", "yes"))
    return included, excluded
