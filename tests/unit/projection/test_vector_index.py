"""The embedding index's bookkeeping on a real SQLite file, with a small deterministic encoder
(the real model is covered by tests/integration/semantic): searches stay inside the versions
given, vectors are cached by text, erasure removes a text's vector, a rebuild reuses the cache,
another model or format starts over, and another file's cache can be imported."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from projection.keyword_index import IndexedChunk, indexed_chunks  # noqa: E402
from projection.semantic.vectors import VectorIndex  # noqa: E402


class WordEncoder:
    """Bag of hashed words, normalised: texts sharing words are near; counts its calls."""

    name = "words-v1"
    dimensions = 64

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str]):  # type: ignore[no-untyped-def]
        self.encoded += texts
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


def _chunks(version: str, body: str, title: str = "Doc") -> list[IndexedChunk]:
    return indexed_chunks(
        body=body, title=title, repository_key="t/o/r", element_id=f"el-{version}",
        version_id=version, classification_rank=0, source_kind="EVIDENCE", type_key="doc",
        recorded_at=0.0,
    )  # fmt: skip


def _index(path: Path, encoder: WordEncoder, model: str = "words-v1") -> VectorIndex:
    return VectorIndex(path, lambda: encoder, model)


def test_search_ranks_only_the_versions_given(tmp_path: Path) -> None:
    enc = WordEncoder()
    index = _index(tmp_path, enc)
    index.replace_versions(
        _chunks("v1", "kubernetes cluster upgrade") + _chunks("v2", "coffee machine descaling"),
        position=3,
    )
    hits, scores = index.search("kubernetes cluster", ["v1", "v2"], limit=1)
    assert [h.version_id for h in hits] == ["v1"]
    assert set(scores) == {"v1", "v2"}
    hits, scores = index.search("kubernetes cluster", ["v2", "unknown"], limit=5)
    assert [h.version_id for h in hits] == ["v2"]  # v1 is not admitted: never scored
    assert set(scores) == {"v2"}
    assert index.last_applied_position() == 3


def test_a_question_is_encoded_once_until_the_kept_vectors_are_forgotten(tmp_path: Path) -> None:
    enc = WordEncoder()
    index = _index(tmp_path, enc)
    index.replace_versions(_chunks("v1", "kubernetes cluster upgrade"), position=1)
    for _ in range(3):
        index.search("cluster upgrade", ["v1"], limit=1)
    assert enc.encoded.count("cluster upgrade") == 1
    index.forget_queries()
    index.search("cluster upgrade", ["v1"], limit=1)
    assert enc.encoded.count("cluster upgrade") == 2


def test_deleting_a_version_removes_its_texts_vectors_but_not_shared_ones(tmp_path: Path) -> None:
    index = _index(tmp_path, WordEncoder())
    index.replace_versions(_chunks("v1", "shared text") + _chunks("v2", "shared text"))
    index.replace_versions(_chunks("v3", "secret personal text"))
    cached = lambda: index._db.execute("SELECT count(*) FROM cache").fetchone()[0]  # noqa: E731
    assert cached() == 2
    index.delete_versions(["v1", "v3"])
    assert cached() == 1  # v3's text is gone; v2 still uses the shared one
    assert index.version_count() == 1
    _, scores = index.search("secret personal", ["v1", "v2", "v3"], limit=3)
    assert set(scores) == {"v2"}


def test_a_rebuild_reuses_cached_vectors(tmp_path: Path) -> None:
    enc = WordEncoder()
    index = _index(tmp_path, enc)
    chunks = _chunks("v1", "alpha beta") + _chunks("v2", "gamma delta")
    index.replace_versions(chunks)
    calls = len(enc.encoded)
    index.rebuild(chunks, position=9, gaps=[(4, 5, 1.0)])
    assert len(enc.encoded) == calls  # nothing embedded again
    assert (index.doc_count(), index.last_applied_position(), index.open_gaps()) == (
        2, 9, [(4, 5, 1.0)]
    )  # fmt: skip


def test_another_model_starts_over_and_a_cache_imports_only_for_the_same_model(
    tmp_path: Path,
) -> None:
    first = _index(tmp_path / "a", WordEncoder())
    first.replace_versions(_chunks("v1", "alpha beta"), position=2)
    first.close()
    reopened = _index(tmp_path / "a", WordEncoder(), model="words-v2")
    assert reopened.needs_rebuild()
    assert reopened.doc_count() == 0
    assert reopened.last_applied_position() is None
    reopened.close()

    source = _index(tmp_path / "b", WordEncoder())
    source.replace_versions(_chunks("v1", "alpha beta"))
    source.close()
    enc = WordEncoder()
    target = _index(tmp_path / "c", enc)
    assert target.import_cache(tmp_path / "b" / "vectors.sqlite") == 1
    target.replace_versions(_chunks("v9", "alpha beta"))
    assert enc.encoded == []  # the imported vector was used
    assert target.doc_count() == 1
    other = _index(tmp_path / "d", WordEncoder(), model="words-v2")
    assert other.import_cache(tmp_path / "b" / "vectors.sqlite") == 0


def test_stopping_interrupts_between_batches_and_keeps_what_was_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from projection.semantic import vectors

    monkeypatch.setattr(vectors, "ENCODE_BATCH", 2)
    enc = WordEncoder()
    index = _index(tmp_path, enc)
    chunks = [c for i in range(5) for c in _chunks(f"v{i}", f"text number {i}")]
    original = enc.encode

    def encode_then_stop(texts):  # type: ignore[no-untyped-def]
        index.stopping.set()  # shutdown arrives while the first batch is being embedded
        return original(texts)

    enc.encode = encode_then_stop  # type: ignore[method-assign]
    with pytest.raises(vectors.Stopped):
        index.replace_versions(chunks, position=7)
    assert index._db.execute("SELECT count(*) FROM cache").fetchone()[0] == 2  # batch 1 kept
    assert index.doc_count() == 0  # no chunk row without its vector; the watermark did not move
    assert index.last_applied_position() is None
