"""The embedding index: one unit vector per indexed chunk, derived state like the keyword index.

Kept in one SQLite file (``HOME/vectors/vectors.sqlite``) by the same outbox upkeep as the
keyword index (``service.indexing.upkeep.IndexMaintainer``, run off the request path): it has its
own watermark and open gaps, rebuilds from the database, and starts over when its format or model
changes (:data:`FORMAT`). Vectors are cached by the SHA-256 of the text they embed, so a rebuild,
a re-ingest or an unchanged chunk of a new version never embeds the same text twice; cached
vectors that no chunk uses any more are deleted when versions are deleted (erasure), so no
vector of erased text survives.

Searching takes the versions a read may see (its selection, already permission-trimmed) and
scores only their chunks: trimming happens before anything is ranked or fused.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from projection.keyword_index import Gap, IndexedChunk, contiguous_versions

FORMAT = "1"
RELOAD_SECONDS = 5.0
ENCODE_BATCH = 32
"""Chunks embedded per step (the encoder's own batch): each step is committed, so an interrupted
build resumes, and a closing process waits for at most one step. Steps of 256 made `ameide test`
wait ~35 s at its end, on 2 busy cores, for the smoke instance's batch in progress; the texts are
ordered by length first, so small steps pad no more than large ones did."""


class Stopped(Exception):
    """Embedding was interrupted because the process is shutting down
    (:attr:`VectorIndex.stopping`); everything embedded before is kept (cached), and the next
    catch-up goes on from there."""


class Encoder(Protocol):
    """Turns texts into unit vectors (``len(texts)`` × ``dimensions`` float32 rows)."""

    name: str
    dimensions: int

    def encode(self, texts: Sequence[str]) -> Any: ...


@dataclass(frozen=True, slots=True)
class _Loaded:
    """The vectors in memory: rows grouped by version (``starts``/``ends`` per segment)."""

    generation: int
    deleted: int
    at: float
    matrix: Any
    meta: list[tuple[Any, ...]]
    versions: list[str]
    starts: Any
    ends: Any
    segment: dict[str, int]


@dataclass(frozen=True, slots=True)
class SemanticHit:
    """A version's best chunk for a query vector: cosine similarity in [-1, 1]."""

    version_id: str
    element_id: str
    chunk_key: str
    heading_path: str
    start: int
    end: int
    score: float


def embedded_text(chunk: IndexedChunk) -> str:
    """What is embedded for a chunk: the page title, its heading path, then the section."""
    return "\n".join(part for part in (chunk.title, chunk.heading_path, chunk.text) if part)


class VectorIndex:
    """Vectors of chunks in SQLite, searched in memory with NumPy (see the module docstring)."""

    def __init__(
        self,
        directory: Path,
        encoder: Callable[[], Encoder],
        model: str,
        progress: Callable[[int, int], None] | None = None,
        stopping: threading.Event | None = None,
    ) -> None:
        import numpy as np

        self._np = np
        self.directory = directory
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = directory / "vectors.sqlite"
        self._make_encoder = encoder
        self._encoder: Encoder | None = None
        self.progress = progress
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.path.chmod(0o600)
        self._db.execute("PRAGMA journal_mode=WAL")
        self.model = model
        # set at shutdown (by whoever owns the event, even before this index was opened):
        # embedding stops between batches
        self.stopping = stopping or threading.Event()
        # a read that widens its window searches again with the same question: embed it once
        self._query_vector = functools.lru_cache(maxsize=128)(self._encode_query)
        self._started_empty = self._ensure_schema()
        self._loaded: _Loaded | None = None

    # -- schema and metadata -------------------------------------------------------------------
    def _ensure_schema(self) -> bool:
        """Create the tables; start over when the format differs. True when it started empty."""
        with self._lock:
            db = self._db
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            found = self._meta("format")
            if found is not None and (found != FORMAT or self._meta("model") != self.model):
                for table in ("chunks", "cache"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                db.execute("DELETE FROM meta")
            db.execute(
                "CREATE TABLE IF NOT EXISTS cache (text_sha TEXT PRIMARY KEY, vector BLOB NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS chunks (chunk_id TEXT PRIMARY KEY, version_id TEXT "
                "NOT NULL, element_id TEXT NOT NULL, chunk_key TEXT NOT NULL, heading_path TEXT "
                'NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, text_sha TEXT NOT NULL)'
            )
            db.execute("CREATE INDEX IF NOT EXISTS chunks_version ON chunks (version_id)")
            db.execute("CREATE INDEX IF NOT EXISTS chunks_sha ON chunks (text_sha)")
            empty = found != FORMAT or self._meta("model") != self.model
            self._set_meta("format", FORMAT)
            self._set_meta("model", self.model)
            return empty

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self._db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def _touch(self, *, deleted: bool = False) -> None:
        """Mark the vectors changed (every process reloads them; see :meth:`_vectors`)."""
        self._set_meta("generation", str(int(self._meta("generation") or 0) + 1))
        if deleted:
            self._set_meta("deleted", str(int(self._meta("deleted") or 0) + 1))

    @property
    def encoder(self) -> Encoder:
        """The model, loaded on first use (vectors of two models never mix: a file of another
        model starts over, see :meth:`_ensure_schema`)."""
        if self._encoder is None:
            encoder = self._make_encoder()
            if encoder.name != self.model:
                raise RuntimeError(f"the encoder is {encoder.name}, not {self.model}")
            self._encoder = encoder
        return self._encoder

    # -- projection.keyword_index.DerivedIndex: what IndexMaintainer upkeep calls ----------
    def replace_versions(
        self,
        chunks: Iterable[IndexedChunk],
        *,
        version_ids: Collection[str] = (),
        position: int | None = None,
    ) -> None:
        """Replace the vectors of the given versions and of those ``chunks`` belong to."""
        chunks = list(chunks)
        self._embed(chunks)  # slow: outside the lock, so searches go on meanwhile
        with self._lock:
            versions = set(version_ids) | {c.version_id for c in chunks}
            self._db.execute("BEGIN")
            self._delete_rows(versions)
            self._db.executemany(
                "INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (c.chunk_id, c.version_id, c.element_id, c.chunk_key, c.heading_path, c.start,
                     c.end, _sha(embedded_text(c)))
                    for c in chunks
                ],
            )  # fmt: skip
            if position is not None:
                self._set_meta("position", str(position))
            self._touch()
            self._db.execute("COMMIT")

    def delete_versions(self, version_ids: Collection[str], *, position: int | None = None) -> None:
        """Remove versions' vectors, and the cached vectors of their texts that no other chunk
        uses (erased text leaves nothing behind)."""
        if not version_ids and position is None:
            return
        with self._lock:
            self._db.execute("BEGIN")
            shas = {
                row[0]
                for v in set(version_ids)
                for row in self._db.execute(
                    "SELECT text_sha FROM chunks WHERE version_id = ?", (v,)
                )
            }
            self._delete_rows(set(version_ids))
            self._db.executemany(
                "DELETE FROM cache WHERE text_sha = ? AND NOT EXISTS "
                "(SELECT 1 FROM chunks WHERE chunks.text_sha = cache.text_sha)",
                [(sha,) for sha in sorted(shas)],
            )
            if position is not None:
                self._set_meta("position", str(position))
            self._touch(deleted=True)
            self._db.execute("COMMIT")

    def last_applied_position(self) -> int | None:
        with self._lock:
            value = self._meta("position")
        return None if value is None else int(value)

    def open_gaps(self) -> list[Gap]:
        with self._lock:
            value = self._meta("gaps")
        return [(int(a), int(b), float(c)) for a, b, c in json.loads(value)] if value else []

    def advance(self, position: int, gaps: Sequence[Gap] = ()) -> None:
        with self._lock:
            self._set_meta("position", str(position))
            self._set_meta("gaps", json.dumps([list(g) for g in gaps]))

    def needs_rebuild(self) -> bool:
        return self._started_empty and self.last_applied_position() is None

    def is_intact(self) -> bool:
        return self.path.is_file()

    def clear(self, *, position: int | None = None) -> None:
        with self._lock:
            self._db.execute("DELETE FROM chunks")
            self._prune_cache()
            self._set_meta("position", None if position is None else str(position))
            self._touch(deleted=True)

    def rebuild(
        self,
        chunks: Iterable[IndexedChunk],
        *,
        position: int | None = None,
        gaps: Sequence[Gap] = (),
    ) -> None:
        """Replace everything with ``chunks`` (cached vectors are reused, not re-embedded)."""
        with self._lock:
            self._db.execute("DELETE FROM chunks")
            self._touch(deleted=True)
        for group in _batches(chunks, ENCODE_BATCH):  # each group locks only to write
            self.replace_versions(group)
        with self._lock:
            self._prune_cache()
            self._set_meta("position", None if position is None else str(position))
            self._set_meta("gaps", json.dumps([list(g) for g in gaps]))
            self._started_empty = False

    def doc_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def version_count(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT count(DISTINCT version_id) FROM chunks").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def import_cache(self, other: Path) -> int:
        """Take the cached vectors of another embedding index file (same format and model) as a
        seed: a text found there is not embedded again; returns how many were new. The seed
        is for benchmark reruns of one corpus: it is kept apart from the cache (which sweeps
        unused vectors) and only read; which chunks are indexed always comes from this
        database."""
        with self._lock:
            before = self._seeded()
            self._db.execute("ATTACH DATABASE ? AS other", (str(other),))
            try:
                found = self._db.execute("SELECT key, value FROM other.meta").fetchall()
                meta = dict(found)
                if meta.get("format") == FORMAT and meta.get("model") == self.model:
                    self._db.execute(
                        "CREATE TABLE IF NOT EXISTS main.seed "
                        "(text_sha TEXT PRIMARY KEY, vector BLOB NOT NULL)"
                    )
                    self._db.execute("INSERT OR IGNORE INTO main.seed SELECT * FROM other.cache")
            finally:
                self._db.execute("DETACH DATABASE other")
            after = self._seeded()
        return after - before

    def _seeded(self) -> int:
        exists = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seed'"
        ).fetchone()
        return int(self._db.execute("SELECT count(*) FROM seed").fetchone()[0]) if exists else 0

    # -- searching -----------------------------------------------------------------------------
    def search(
        self, query: str, version_ids: Collection[str], limit: int
    ) -> tuple[list[SemanticHit], dict[str, float]]:
        """The ``limit`` best versions among ``version_ids`` by their best chunk's cosine with
        the query, and that cosine for every one of ``version_ids`` that has vectors (the
        others were not embedded yet: a read scores them by keywords alone). Only those
        versions' chunks count: the caller's selection trims before anything is ranked."""
        np = self._np
        loaded = self._vectors()
        segments = [loaded.segment[v] for v in version_ids if v in loaded.segment]
        if not segments:
            return [], {}
        sims = loaded.matrix @ self._query_vector(query)
        best = np.maximum.reduceat(sims, loaded.starts)
        picked = np.asarray(segments, dtype=np.int64)
        scores = dict(
            zip([loaded.versions[i] for i in segments], best[picked].tolist(), strict=True)
        )
        order = picked[np.argsort(-best[picked], kind="stable")[: max(limit, 0)]]
        hits = []
        for seg in order.tolist():
            low, high = int(loaded.starts[seg]), int(loaded.ends[seg])
            row = low + int(sims[low:high].argmax())
            version_id, element_id, chunk_key, heading_path, start, end = loaded.meta[row]
            hits.append(
                SemanticHit(
                    version_id, element_id, chunk_key, heading_path, start, end, float(sims[row])
                )
            )
        return hits, scores

    def forget_queries(self) -> None:
        """Drop the kept question vectors (a benchmark times each read as a new question)."""
        self._query_vector.cache_clear()

    def _encode_query(self, query: str) -> Any:
        return self.encoder.encode([query])[0]

    def _vectors(self) -> _Loaded:
        """The vectors in memory, reloaded after another write changed them: at once after a
        deletion (erased text must stop counting), at most every :data:`RELOAD_SECONDS` while
        vectors are only being added (a background build must not slow every read)."""
        np = self._np
        with self._lock:
            generation = int(self._meta("generation") or 0)
            deleted = int(self._meta("deleted") or 0)
            loaded = self._loaded
            if loaded is not None and (
                loaded.generation == generation
                or (loaded.deleted == deleted and time.monotonic() - loaded.at < RELOAD_SECONDS)
            ):
                return loaded
            rows = self._db.execute(
                'SELECT c.version_id, c.element_id, c.chunk_key, c.heading_path, c.start, c."end",'
                " v.vector FROM chunks c JOIN cache v ON v.text_sha = c.text_sha"
                " ORDER BY c.version_id, c.chunk_id"
            ).fetchall()
        dims = len(rows[0][6]) // 4 if rows else 1
        matrix = np.frombuffer(b"".join(r[6] for r in rows), dtype=np.float32)
        matrix = matrix.reshape(len(rows), dims) if rows else np.zeros((0, dims), np.float32)
        versions: list[str] = []
        starts: list[int] = []
        for i, r in enumerate(rows):
            if not versions or versions[-1] != r[0]:
                versions.append(r[0])
                starts.append(i)
        self._loaded = _Loaded(
            generation,
            deleted,
            time.monotonic(),
            matrix,
            [tuple(r[:6]) for r in rows],
            versions,
            np.asarray(starts, dtype=np.int64),
            np.asarray([*starts[1:], len(rows)], dtype=np.int64),
            {v: i for i, v in enumerate(versions)},
        )
        return self._loaded

    # -- internals -------------------------------------------------------------------------------
    def _embed(self, chunks: list[IndexedChunk]) -> None:
        """Embed (and cache) the texts of ``chunks`` not cached yet, a batch at a time."""
        texts = {_sha(embedded_text(c)): embedded_text(c) for c in chunks}
        if not texts:
            return
        with self._lock:
            seeded = self._seeded() > 0
            missing = []
            for sha in texts:
                if self._db.execute("SELECT 1 FROM cache WHERE text_sha = ?", (sha,)).fetchone():
                    continue
                if (
                    seeded
                    and self._db.execute(
                        "INSERT INTO cache SELECT * FROM seed WHERE text_sha = ?", (sha,)
                    ).rowcount
                ):
                    continue
                missing.append(sha)
        missing.sort(key=lambda sha: len(texts[sha]))  # similar lengths share a step's padding
        for start in range(0, len(missing), ENCODE_BATCH):
            if self.stopping.is_set():
                raise Stopped("the process is shutting down")
            part = missing[start : start + ENCODE_BATCH]
            vectors = self.encoder.encode([texts[sha] for sha in part])
            with self._lock:
                self._db.executemany(
                    "INSERT OR REPLACE INTO cache VALUES (?, ?)",
                    [(sha, vectors[i].astype("float32").tobytes()) for i, sha in enumerate(part)],
                )
            if self.progress is not None:
                self.progress(min(start + len(part), len(missing)), len(missing))

    def _delete_rows(self, version_ids: set[str]) -> None:
        self._db.executemany(
            "DELETE FROM chunks WHERE version_id = ?", [(v,) for v in sorted(version_ids)]
        )

    def _prune_cache(self) -> None:
        self._db.execute("DELETE FROM cache WHERE text_sha NOT IN (SELECT text_sha FROM chunks)")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _batches(chunks: Iterable[IndexedChunk], size: int) -> Iterable[list[IndexedChunk]]:
    """Groups of about ``size`` chunks, never splitting a version."""
    group: list[IndexedChunk] = []
    for version in contiguous_versions(chunks):
        group += version
        if len(group) >= size:
            yield group
            group = []
    if group:
        yield group
