"""The :class:`~projection.keyword_index.KeywordIndex` port on tantivy (the Rust search library,
through its official Python bindings): the only package that imports ``tantivy``.

- :mod:`~projection.tantivy.index` — :class:`TantivyKeywordIndex`: the directory, its
  ``state.json`` and generations (the Whoosh engine's code too: :mod:`projection.generational`),
  writing, searching with the filter inside the query, the top-N cut;
- :mod:`~projection.tantivy.schema` — the schema, the analyser, an ``IndexFilter`` as queries;
- :mod:`~projection.tantivy.statistics` — BM25 over what the caller may read: the population's
  statistics, tantivy's candidates rescored exactly.
"""

from projection.tantivy.index import ENGINE, TantivyKeywordIndex
from projection.tantivy.schema import FORMAT

__all__ = ["ENGINE", "FORMAT", "TantivyKeywordIndex"]
