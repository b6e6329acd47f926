"""What the tantivy index files hold: the schema, the analyser, and an ``IndexFilter`` as a query.

Both indexes (``chunks`` and ``versions``) share one schema. Text is analysed into the words of
:func:`analyzer`, aligned with the Whoosh engine's ``StemmingAnalyzer``: the same
word expression (words of two characters or more, dotted words such as ``e.g.`` kept whole),
lower-cased, the same stop words (:data:`~projection.keyword_index.STOP_WORDS`), then tantivy's
English stemmer — Snowball's "Porter2", where Whoosh uses the original Porter stemmer, so a few
words stem differently (``generously`` → ``generous`` / ``gener``). Only word frequencies are
indexed (no positions: nothing searches phrases). Times are indexed as microseconds.

Indexed text is analysed in Python (:class:`Terms`), and tantivy's text fields only split the
terms at spaces (:func:`index_analyzer`). tantivy's regex tokenizer spends its time in the regex
crate's Pike VM (``perf``: about 40% of the indexing threads' time in a build, 28% of the
build's), and both indexes analysed the same text again, a stemming per word occurrence each;
``bytes.translate`` and one regex substitution find the same words in ASCII text several times
faster, and each distinct word is stemmed once (by tantivy, with :func:`analyzer`'s filters).
Non-ASCII characters that separate words become spaces first; text with non-ASCII word
characters goes through :func:`analyzer` itself. So the terms are the query analyser's in every
case (a test holds the two to it on random text).

The chunk side stores each chunk whole (every :class:`~projection.keyword_index.IndexedChunk`
field, as a JSON list in field order): a search answers from it, and erasure rewrites the index
from it (tantivy-py cannot merge chosen segments, and only a merge drops a deleted document's
words).
"""

from __future__ import annotations

import hashlib
import re

import tantivy

from projection import keyword_index as port

FORMAT = 9
"""What the index files hold; bump it when the schema, the analyser or the stored values change."""
INDEX_ANALYZER = "whitespace"
"""The text fields' analyser: tantivy's built-in ``whitespace`` tokenizer, which splits at
spaces the terms :class:`Terms` found (built in, so tantivy's own query parser — the filter
aggregations counting document frequencies, :mod:`~projection.tantivy.statistics` — knows it)."""
TEXT_FIELDS = ("title", "heading", "text")
LENGTH_FIELDS = {name: f"{name}_length" for name in TEXT_FIELDS}
"""Fast fields holding each text field's number of terms (the exact BM25 field length: tantivy
keeps it quantised to one byte), summed over the documents a read's statistics count."""
SCOPED_FIELDS = {name: f"{name}_in" for name in TEXT_FIELDS}
"""JSON fields holding each text field's terms under the document's partition (its ``access``
value, repository and classification, as :func:`partition` names it) — a current version's
under one path, a replaced one's (its element has a later version, ``replaced_at``) under
another: tantivy's term dictionary then knows how many current documents of one partition hold
a word (``searcher.doc_freq("text_in.<partition>", term)``), which the statistics of a read sum
over the readable partitions instead of intersecting the word's postings with them
(:mod:`~projection.tantivy.statistics`). Only which documents hold a word is indexed."""
TERMS = "terms"
"""Stored: the analysed terms of the title, the heading (a version: every heading) and the text
(a version: the whole body), UTF-8, separated by :data:`TERMS_SEPARATOR` (analysed terms never
hold one; JSON's escaping scan was a sixth of a build), whose term frequencies the exact
rescoring counts (:mod:`~projection.tantivy.statistics`)."""
TERMS_SEPARATOR = "\n"
IDENTIFIER_FIELDS = ("version_id", "element_id", "access", "source_kind", "type_key", "superseded")
TIME_FIELDS = ("recorded_at", "retired_at", "effective_from", "effective_to", "replaced_at")
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
_WORD_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_*")
_ONE_CHARACTER_WORDS = sorted({c.lower() for c in _WORD_CHARACTERS})
"""What ASCII text split at :data:`_SEPARATORS` may still hold that :data:`WORD` does not
match: dropped as stop words (after lower-casing)."""
_MOST_CACHED = 200_000  # words whose terms a Terms keeps (a few MiB), then it starts over
_SEPARATORS = bytes(c if chr(c) in _WORD_CHARACTERS or c == ord(".") else 32 for c in range(256))
"""``bytes.translate``'s table: what separates ASCII words becomes a space (``str.translate``
takes four times as long)."""
_LONE_DOT = re.compile(rb"\.(?![\w*])", re.ASCII)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def analyzer() -> tantivy.TextAnalyzer:
    """The analyser of query text; indexed text gets the same words from :class:`Terms` and
    :func:`index_analyzer`."""
    return _filtered(tantivy.Tokenizer.regex(WORD), list(port.STOP_WORDS))


def _filtered(tokenizer: tantivy.Tokenizer, stop_words: list[str]) -> tantivy.TextAnalyzer:
    """``tokenizer``'s words, too-long ones dropped, lower-cased, ``stop_words`` dropped and
    stemmed: the filters the query analyser and the indexed terms share."""
    return (
        tantivy.TextAnalyzerBuilder(tokenizer)
        .filter(tantivy.Filter.remove_long(LONGEST_WORD))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(stop_words))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _splitter() -> tantivy.TextAnalyzer:
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(WORD)).build()


def index_analyzer() -> tantivy.TextAnalyzer:
    """The text fields' analyser: the terms :class:`Terms` found, split at spaces."""
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _word_analyzer() -> tantivy.TextAnalyzer:
    """:func:`analyzer`'s filters, for one word."""
    return _filtered(tantivy.Tokenizer.whitespace(), [*port.STOP_WORDS, *_ONE_CHARACTER_WORDS])


class Terms:
    """Analyses indexed text into :func:`analyzer`'s terms (:meth:`__call__`), knowing which
    non-ASCII characters separate words and the terms of the words it met (one stemming per
    distinct word instead of one per occurrence and index)."""

    def __init__(self) -> None:
        self._splitter = _splitter()
        self._analyzer = analyzer()
        self._word = _word_analyzer()
        self._separates: dict[str, bool] = {}
        self._terms: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        """``text``'s terms, as :func:`analyzer` finds them, separated by spaces.

        ASCII text: every character that is neither a word character nor a dot becomes a
        space, then every dot that does not join two word characters (dots join exactly
        there: the expression takes a dot only between word characters, and always does); each
        lower-cased word then goes through the analyser's filters (remembered per word).
        Non-ASCII characters that separate words (dashes, curly quotes, arrows …; the regex
        tokenizer tells, once per character) become spaces first; text with non-ASCII word
        characters is analysed by :func:`analyzer` itself."""
        if not text.isascii():
            for character in set(_NON_ASCII.findall(text)):
                if not self._separator(character):
                    return " ".join(self._analyzer.analyze(text))
                text = text.replace(character, " ")
        spaced = text.encode("ascii").translate(_SEPARATORS)
        if b"." in spaced:  # a dot left is followed by a word character: is one before it?
            spaced = _LONE_DOT.sub(b" ", spaced).replace(b" .", b"  ")
            if spaced.startswith(b"."):
                spaced = b" " + spaced[1:]
        words = spaced.lower().decode("ascii").split()
        known = self._terms
        unknown = set(words).difference(known)
        if unknown:
            if len(known) + len(unknown) > _MOST_CACHED:
                known.clear()  # start over before, never while the words are looked up
                unknown = set(words)
            for word in unknown:
                known[word] = self._term(word)
        # one lookup per word and the stop words ("") left out, each a loop in C
        return " ".join(filter(None, map(known.__getitem__, words)))

    def _term(self, word: str) -> str:
        """The term of one lower-cased ASCII word ("": none, a stop word or too long)."""
        found = self._word.analyze(word)
        return found[0] if found else ""

    def _separator(self, character: str) -> bool:
        """True when ``character`` is neither a word character nor a dot (any other such
        character splits words alike, so a space may stand for it)."""
        found = self._separates.get(character)
        if found is None:
            found = self._splitter.analyze(f"ab{character}cd") == ["ab", "cd"]
            self._separates[character] = found
        return found


def schema() -> tantivy.Schema:
    """One schema for both indexes."""
    builder = tantivy.SchemaBuilder()
    for name in IDENTIFIER_FIELDS:  # these and the times are left out when unset
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    for name in TIME_FIELDS:
        builder.add_integer_field(name, indexed=True, fast=True)
    for name in TEXT_FIELDS:
        builder.add_text_field(name, tokenizer_name=INDEX_ANALYZER, index_option="freq")
    for name in SCOPED_FIELDS.values():
        builder.add_json_field(name, tokenizer_name=INDEX_ANALYZER, index_option="basic")
    for name in (*KEY_FIELDS.values(), *LENGTH_FIELDS.values()):
        builder.add_integer_field(name, fast=True)
    builder.add_bytes_field(STORED, stored=True)
    builder.add_bytes_field(TERMS, stored=True)
    return builder.build()


def key(identifier: str) -> int:
    """The signed 64-bit hash of an id kept in a key field (a collision, 2^-64 a pair, would
    let one other version past a long allowlist)."""
    digest = hashlib.blake2b(identifier.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def partition(access: str, *, replaced: bool = False) -> str:
    """The JSON path of a partition (an ``access`` value, ``rank:repository``) in the
    :data:`SCOPED_FIELDS`, for its current documents or, ``replaced``, for those of versions
    replaced since: a hash, as a repository key may hold the dots that separate a path."""
    digest = hashlib.blake2b(access.encode("utf-8"), digest_size=8).hexdigest()
    return ("r" if replaced else "p") + digest


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
