"""The keyword index port: what the read side needs from a full-text index, and nothing else.

The index is a derived projection of the database: every method that writes takes the caller's
``position`` (a monotonically growing number such as an outbox or audit sequence) and stores it
as the *last applied position* once the write is durable, so after a crash between the database
commit and the index update the caller can re-apply everything after that watermark. Writes are
idempotent (a version's chunks are replaced as a whole), so re-applying is always safe.

Two BM25 signals per version are exposed: :meth:`KeywordIndex.search` ranks chunks (sections —
the sharper signal; ``per_version=1`` gives the best chunk per version) and
:meth:`KeywordIndex.search_versions` ranks whole versions (title, every heading, the full body —
better recall). :func:`combine_signals` lines both up per version for the ranking layer.

Permission trimming is part of every search: an :class:`IndexFilter` names the readable
repositories with the highest classification readable in each, and the implementation must
apply it inside the search so ``limit`` is filled from permitted content only.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from types import MappingProxyType
from typing import Protocol

from domain.values import Classification
from projection.chunks import heading_path_text, split_into_chunks

CLASSIFICATION_RANKS: Mapping[str, int] = MappingProxyType(
    {level.value: level.rank for level in Classification}
)
"""Classification name → rank, from the one order (``domain.values.Classification``): the
index is written and queried with the same numbers the service compares clearances by."""


def classification_rank(classification: str) -> int:
    """Rank of a classification name (``public`` 0 < ``internal`` < ``confidential`` < 3)."""
    try:
        return CLASSIFICATION_RANKS[classification]
    except KeyError:
        raise ValueError(f"unknown classification {classification!r}") from None


MAX_QUERY_TERMS = 32
"""Words of a query searched at most (both engines)."""
QUESTION_WORDS = (
    "what", "why", "which", "who", "whom", "whose", "where",
    "does", "do", "did", "should", "would", "could",
)  # fmt: skip
"""Interrogatives and auxiliaries: how a question is asked, not what it asks about. Queries
leave them out (the index keeps every word). Measured on the real-corpus dev set: nDCG@10
0.670 → 0.685, what-is questions 0.737 → 0.804; "how" stays, as how-to pages are titled so."""
STOP_WORDS = (
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "for", "from", "have", "if", "in",
    "is", "it", "may", "not", "of", "on", "or", "tbd", "that", "the", "this", "to", "us", "we",
    "when", "will", "with", "yet", "you", "your",
)  # fmt: skip
"""Words neither engine indexes: Whoosh's ``StemmingAnalyzer`` list (a test checks they agree),
which the tantivy engine gives its analyser too."""


Gap = tuple[int, int, float]
"""Positions ``low`` to ``high`` (inclusive) not applied yet, first seen at epoch seconds."""


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """One chunk of one version, with the version attributes searches filter and rank on.

    All chunks of a version carry the same version attributes; a version's chunks are always
    written together. Times are epoch seconds; ``None`` means "never" / "unbounded".
    """

    chunk_id: str
    chunk_key: str
    heading_path: str
    title: str
    text: str
    start: int
    end: int
    repository_key: str
    element_id: str
    version_id: str
    classification_rank: int
    source_kind: str
    type_key: str
    recorded_at: float
    retired_at: float | None = None
    effective_from: float | None = None
    effective_to: float | None = None
    superseded: bool = False
    replaced_at: float | None = None
    """When the element's next version was recorded (``None``: none yet). Not a filter: the
    tantivy engine's statistics count the versions current at a read's instant."""

    def version_attributes(self) -> tuple[object, ...]:
        """The attributes every chunk of the same version must share."""
        found: tuple[object, ...] = _version_attributes(self)
        return found


_VERSION_ATTRIBUTES = (
    *("version_id", "title", "repository_key", "element_id", "classification_rank"),
    *("source_kind", "type_key", "recorded_at", "retired_at", "effective_from"),
    *("effective_to", "superseded", "replaced_at"),
)
_version_attributes = attrgetter(*_VERSION_ATTRIBUTES)  # one C call per chunk (rebuilds check each)


@dataclass(frozen=True, slots=True)
class IndexFilter:
    """What a search may see: built from the caller's permissions and the read's selection.

    ``max_rank_by_repository`` maps each readable repository key (``tenant/org/repo``) to the
    highest classification rank readable there (it is copied into a read-only mapping; filters
    are hashable because implementations cache the matching document sets). Every other
    criterion is optional and narrows further:

    - ``version_ids`` / ``element_ids``: allowlists (e.g. the versions a selector resolved to);
    - ``source_kinds`` / ``type_keys``: allowlists of those attributes;
    - ``as_of``: only versions recorded at or before that instant;
    - ``valid_at``: only versions whose ``[effective_from, effective_to)`` window contains it;
    - ``live_at``: drop versions whose element was retired at or before that instant;
    - ``exclude_superseded``: drop versions marked superseded.
    """

    max_rank_by_repository: Mapping[str, int]
    version_ids: frozenset[str] | None = None
    element_ids: frozenset[str] | None = None
    source_kinds: frozenset[str] | None = None
    type_keys: frozenset[str] | None = None
    as_of: float | None = None
    valid_at: float | None = None
    live_at: float | None = None
    exclude_superseded: bool = False

    def __post_init__(self) -> None:
        frozen = MappingProxyType(dict(sorted(self.max_rank_by_repository.items())))
        object.__setattr__(self, "max_rank_by_repository", frozen)

    def __hash__(self) -> int:
        narrowing = (getattr(self, field.name) for field in fields(self)[1:])
        return hash((tuple(self.max_rank_by_repository.items()), *narrowing))

    def admits_nothing(self) -> bool:
        """True when no document can pass (no readable repository, or an empty allowlist)."""
        allowlists = (self.version_ids, self.element_ids, self.source_kinds, self.type_keys)
        readable = any(rank >= 0 for rank in self.max_rank_by_repository.values())
        return not readable or any(allow is not None and not allow for allow in allowlists)


@dataclass(frozen=True, slots=True)
class Hit:
    """A chunk that matched, with what ranking and citing need (no chunk text: read the body)."""

    chunk_id: str
    chunk_key: str
    heading_path: str
    start: int
    end: int
    element_id: str
    version_id: str
    repository_key: str
    source_kind: str
    type_key: str
    recorded_at: float
    retired_at: float | None
    superseded: bool
    score: float


@dataclass(frozen=True, slots=True)
class VersionHit:
    """A whole version that matched (title, all headings and the full body as one document)."""

    element_id: str
    version_id: str
    repository_key: str
    title: str
    source_kind: str
    type_key: str
    recorded_at: float
    retired_at: float | None
    superseded: bool
    score: float


@dataclass(frozen=True, slots=True)
class VersionSignals:
    """Both BM25 signals for one version; a missing signal scores 0."""

    version_id: str
    element_id: str
    chunk_score: float
    version_score: float
    best_chunk: Hit | None = None
    chunks: tuple[Hit, ...] = field(default=())


class DerivedIndex(Protocol):
    """What outbox upkeep (``service.indexing.upkeep.IndexMaintainer``) needs of a derived,
    rebuildable projection of version chunks: the keyword index, or the embedding index."""

    def replace_versions(
        self,
        chunks: Iterable[IndexedChunk],
        *,
        version_ids: Collection[str] = (),
        position: int | None = None,
    ) -> None:
        """Replace everything indexed for the given versions and for those ``chunks`` belong to.

        A version named in ``version_ids`` without chunks ends up not indexed at all.
        """

    def delete_versions(self, version_ids: Collection[str], *, position: int | None = None) -> None:
        """Erase versions from the index, including their terms in the index files."""

    def last_applied_position(self) -> int | None:
        """The ``position`` given with the last durable write, or ``None`` if never given."""

    def open_gaps(self) -> list[Gap]:
        """Positions at or below the watermark that were not applied yet (their writers had not
        committed when later positions were applied), as ``(low, high, first_seen)`` ranges,
        kept with the watermark by :meth:`advance` and :meth:`rebuild`."""

    def advance(self, position: int, gaps: Sequence[Gap] = ()) -> None:
        """Durably set the watermark to ``position`` and the open gaps to ``gaps``."""

    def needs_rebuild(self) -> bool:
        """True when the index had to start empty (e.g. its files were of an older format), so
        only a :meth:`rebuild` can make it whole again; a rebuild resets it."""

    def is_intact(self) -> bool:
        """True while the index's files are where it keeps them. An open index can go on
        answering after its files were deleted (open files stay readable), so the owner asks
        this to notice; a :meth:`rebuild` restores them."""

    def clear(self, *, position: int | None = None) -> None:
        """Remove every document."""

    def rebuild(
        self,
        chunks: Iterable[IndexedChunk],
        *,
        position: int | None = None,
        gaps: Sequence[Gap] = (),
    ) -> None:
        """Replace the whole index with ``chunks`` (each version's chunks contiguous); the
        watermark becomes ``position`` with the open ``gaps``."""

    def doc_count(self) -> int:
        """Number of chunks indexed."""

    def version_count(self) -> int:
        """Number of versions indexed."""

    def close(self) -> None:
        """Release searchers and files."""


class KeywordIndex(DerivedIndex, Protocol):
    """A derived, rebuildable full-text index of version chunks (see the module docstring)."""

    def search(
        self,
        query_text: str,
        index_filter: IndexFilter,
        limit: int = 10,
        *,
        per_version: int | None = None,
    ) -> list[Hit]:
        """Best-scoring permitted chunks, at most ``per_version`` of each version if given."""

    def search_versions(
        self, query_text: str, index_filter: IndexFilter, limit: int = 10
    ) -> list[VersionHit]:
        """Best-scoring permitted whole versions."""

    def search_both(
        self, query_text: str, index_filter: IndexFilter, limit: int, per_version: int
    ) -> tuple[list[Hit], list[VersionHit]]:
        """``search`` and ``search_versions`` of one question, the same answers as the two
        calls (an engine that searches outside the GIL may run them at once)."""

    def words(self, text: str) -> list[str]:
        """The terms this engine indexes for ``text``, every occurrence in order (its analyser:
        lower-cased, stop words out, stemmed) — for fields scored outside the index, such as
        anchor text, to match exactly as the index's own fields do."""

    def query_words(self, text: str) -> list[str]:
        """The terms a search for ``text`` looks up: distinct, the words of how a question is
        asked left out (unless nothing else remains), at most ``MAX_QUERY_TERMS``."""


def indexed_chunks(
    *,
    body: str,
    title: str,
    repository_key: str,
    element_id: str,
    version_id: str,
    classification_rank: int,
    source_kind: str,
    type_key: str,
    recorded_at: float,
    retired_at: float | None = None,
    effective_from: float | None = None,
    effective_to: float | None = None,
    superseded: bool = False,
    replaced_at: float | None = None,
) -> list[IndexedChunk]:
    """Chunk a version body and attach the version attributes, ready for the index.

    Whitespace-only chunks are left out; a version with nothing else keeps one empty chunk so
    its title stays findable. Chunk ids are ``<version_id>#<chunk_key>``.
    """
    chunks = [chunk for chunk in split_into_chunks(body) if chunk.text.strip()]
    spans = [
        (c.chunk_key, heading_path_text(c.heading_path), c.text, c.start, c.end) for c in chunks
    ]
    if not spans:
        spans = [("_preamble", "", "", 0, 0)]
    return [
        IndexedChunk(
            chunk_id=f"{version_id}#{key}",
            chunk_key=key,
            heading_path=path,
            title=title,
            text=text,
            start=start,
            end=end,
            repository_key=repository_key,
            element_id=element_id,
            version_id=version_id,
            classification_rank=classification_rank,
            source_kind=source_kind,
            type_key=type_key,
            recorded_at=recorded_at,
            retired_at=retired_at,
            effective_from=effective_from,
            effective_to=effective_to,
            superseded=superseded,
            replaced_at=replaced_at,
        )
        for key, path, text, start, end in spans
    ]


def combine_signals(
    chunk_hits: Sequence[Hit], version_hits: Sequence[VersionHit]
) -> list[VersionSignals]:
    """Line up the best chunk score and the whole-version score per version.

    Ordered by ``chunk_score`` then ``version_score`` (both descending); versions found by only
    one signal get 0 for the other. Weighting the two is the ranking layer's job.
    """
    chunks_by_version: dict[str, list[Hit]] = {}
    for hit in chunk_hits:
        chunks_by_version.setdefault(hit.version_id, []).append(hit)
    version_scores = {hit.version_id: hit for hit in version_hits}
    element_ids = {hit.version_id: hit.element_id for hit in chunk_hits}
    element_ids.update((hit.version_id, hit.element_id) for hit in version_hits)
    signals = []
    for version_id, element_id in element_ids.items():
        hits = sorted(chunks_by_version.get(version_id, []), key=lambda h: -h.score)
        whole = version_scores.get(version_id)
        signals.append(
            VersionSignals(
                version_id=version_id,
                element_id=element_id,
                chunk_score=hits[0].score if hits else 0.0,
                version_score=whole.score if whole else 0.0,
                best_chunk=hits[0] if hits else None,
                chunks=tuple(hits),
            )
        )
    signals.sort(key=lambda s: (-s.chunk_score, -s.version_score, s.version_id))
    return signals


def chunks_by_version(chunks: Iterable[IndexedChunk]) -> dict[str, list[IndexedChunk]]:
    """Group chunks per version, checking that each version's attributes agree."""
    grouped: dict[str, list[IndexedChunk]] = {}
    for chunk in chunks:
        group = grouped.setdefault(chunk.version_id, [])
        _check_same_version(group, chunk)
        group.append(chunk)
    return grouped


def contiguous_versions(chunks: Iterable[IndexedChunk]) -> Iterator[list[IndexedChunk]]:
    """Yield each version's chunks from a stream where they come contiguously (for rebuilds)."""
    seen: set[str] = set()
    group: list[IndexedChunk] = []
    for chunk in chunks:
        if group and chunk.version_id != group[0].version_id:
            yield group
            group = []
        if not group:
            if chunk.version_id in seen:
                raise ValueError(f"chunks of version {chunk.version_id!r} are not contiguous")
            seen.add(chunk.version_id)
        _check_same_version(group, chunk)
        group.append(chunk)
    if group:
        yield group


def _check_same_version(group: list[IndexedChunk], chunk: IndexedChunk) -> None:
    if group and group[0].version_attributes() != chunk.version_attributes():
        raise ValueError(f"chunks of version {chunk.version_id!r} disagree on version attributes")
