"""The :class:`~projection.keyword_index.KeywordIndex` port on Whoosh: the only package that
imports Whoosh (so a Whoosh upgrade touches this package only).

- :mod:`~projection.whoosh.index` — :class:`WhooshKeywordIndex`: the directory, its
  ``state.json`` and generations, the port's methods;
- :mod:`~projection.whoosh.schema` — the schema, its custom field types and the stemmer;
- :mod:`~projection.whoosh.writing` — adding versions, committing both indexes, erasure;
- :mod:`~projection.whoosh.segments` — one index's reusable searcher and per-segment caches;
- :mod:`~projection.whoosh.filters` — an ``IndexFilter`` as criteria and document sets;
- :mod:`~projection.whoosh.scoring` — BM25 from posting blocks, field lengths, the top-N cut.
"""

from projection.keyword_index import MAX_QUERY_TERMS
from projection.whoosh.index import WhooshKeywordIndex
from projection.whoosh.schema import FORMAT

__all__ = ["FORMAT", "MAX_QUERY_TERMS", "WhooshKeywordIndex"]
