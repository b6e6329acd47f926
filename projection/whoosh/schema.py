"""What the index files hold: the Whoosh schema, its custom field types and the stemmer.

Both indexes (``chunks`` and ``versions``) share one schema. Text is analysed once, by the
index, into ``{word: frequency}`` counts (English stemming); the word count of each text field
lives in a ``<name>_length`` column read in one go per segment. Whoosh does not keep lengths
itself ("scorable" fields cost a column lookup for every posting written). Times are indexed as
microseconds.
"""

# Whoosh's own annotations are partial; strict mypy would flag every call into it.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import Any

from whoosh import fields, formats
from whoosh.analysis.analyzers import StemmingAnalyzer
from whoosh.columns import NumericColumn

FORMAT = 2
"""What the index files hold; bump it when the schema or the indexed values change."""
TEXT_FIELDS = ("title", "heading", "text")
LENGTH = "_length"  # suffix of the column holding each document's word count of a field
Stems = Callable[[str], list[str]]
_WHOOSH_WORD_GROUPED = r"[\w\*]+(\.?[\w\*]+)*"  # RegexTokenizer's default expression
_WHOOSH_WORD = r"[\w\*]+(?:\.?[\w\*]+)*"


class _Counts(formats.Format):
    """Postings whose weight is the word's frequency, with no other value (Whoosh's
    ``Frequency`` also stores every frequency again as four value bytes)."""

    posting_size = 0

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        counts = Counter(token.text for token in analyzer(value, **kwargs))
        return ((word, count, float(count), b"") for word, count in counts.items())


class _Words(fields.FieldType):
    """Text given already analysed, as ``{word: frequency}`` (the index stems each text once
    for both documents). Not "scorable": searching computes BM25 from the ``<name>_length``
    column, so Whoosh need not look up a length for every posting it writes."""

    def __init__(self, analyzer: Any) -> None:
        super().__init__(_Counts(), analyzer)

    def index(self, value: Any, **kwargs: Any) -> Generator[tuple[bytes, int, float, bytes]]:
        counts = value if isinstance(value, Mapping) else Counter(value)
        for word, count in counts.items():
            yield word.encode("utf-8"), count, float(count), b""


def schema() -> fields.Schema:
    """One schema for both indexes; ``hit`` stores the fields of a Hit / VersionHit."""
    analyzer = StemmingAnalyzer()
    time: dict[str, Any] = {
        "numtype": int,
        "bits": 64,
        "shift_step": 16,
    }  # microseconds, 4 trie terms a value
    return fields.Schema(
        version_id=fields.ID(),
        element_id=fields.ID(),
        access=fields.ID(),  # "<rank>:<repository key>": one term per readable pair
        source_kind=fields.ID(),
        type_key=fields.ID(),
        superseded=fields.ID(),  # these four are left out when unset
        retired_at=fields.NUMERIC(**time),
        effective_from=fields.NUMERIC(**time),
        effective_to=fields.NUMERIC(**time),
        recorded_at=fields.NUMERIC(**time),
        title=_Words(analyzer),
        heading=_Words(analyzer),
        text=_Words(analyzer),
        **{f"{name}{LENGTH}": fields.COLUMN(NumericColumn("I")) for name in TEXT_FIELDS},
        hit=fields.STORED(),
    )


def schema_is_current(existing: fields.Schema) -> bool:
    """Whether an index's schema has this module's fields and field types."""
    expected = schema()
    return existing.names() == expected.names() and all(
        type(existing[name]) is type(expected[name]) for name in expected.names()
    )


def micros(seconds: float | None) -> int | None:
    """Epoch seconds as the indexed microseconds (``None`` stays unset)."""
    return None if seconds is None else round(seconds * 1_000_000)


def stemmer(analyzer: Any) -> Stems:
    """The words ``analyzer`` indexes for a text, in one pass when it is the stock
    ``StemmingAnalyzer`` chain (tokenize, lower-case, drop stop and short words, stem), else by
    running it. A property test checks both agree."""
    try:
        tokenizer, lowercase, stop, stemming = analyzer.items
        pattern, stops, min_size, stem = tokenizer.expression, stop.stops, stop.min, stemming._stem
        stock = not tokenizer.gaps and stop.max is None and not stemming.ignore
        stock = stock and type(lowercase).__name__ == "LowercaseFilter"
    except (AttributeError, TypeError, ValueError):
        stock = False
    if not stock:
        return lambda text: [token.text for token in analyzer(text)]

    # The same tokens without capture groups, so findall() yields whole words.
    whole_words = re.compile(_WHOOSH_WORD) if pattern.pattern == _WHOOSH_WORD_GROUPED else None

    def stems(text: str) -> list[str]:
        if whole_words is None:
            words: Iterable[str] = (match.group().lower() for match in pattern.finditer(text))
        elif text.isascii():  # lower-casing first changes no token
            words = whole_words.findall(text.lower())
        else:
            words = map(str.lower, whole_words.findall(text))
        return [stem(word) for word in words if len(word) >= min_size and word not in stops]

    return stems
