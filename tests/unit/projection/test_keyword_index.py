"""The keyword index port: filters, indexed chunks and signal combination (no index needed)."""

from __future__ import annotations

import dataclasses

import pytest

from projection.keyword_index import (
    Hit,
    IndexedChunk,
    IndexFilter,
    VersionHit,
    chunks_by_version,
    classification_rank,
    combine_signals,
    contiguous_versions,
    indexed_chunks,
)

REPO = "acme/eng/platform"


def version_chunks(
    version_id: str, body: str = "# A\none\n## B\ntwo\n", **overrides: object
) -> list[IndexedChunk]:
    attributes: dict[str, object] = {
        "body": body,
        "title": "Doc",
        "repository_key": REPO,
        "element_id": f"el-{version_id}",
        "version_id": version_id,
        "classification_rank": 1,
        "source_kind": "CANONICAL",
        "type_key": "ameide:doc",
        "recorded_at": 100.0,
    }
    attributes.update(overrides)
    return indexed_chunks(**attributes)  # type: ignore[arg-type]


def chunk_hit(version_id: str, score: float, key: str = "a") -> Hit:
    return Hit(
        chunk_id=f"{version_id}#{key}",
        chunk_key=key,
        heading_path="A",
        start=0,
        end=1,
        element_id=f"el-{version_id}",
        version_id=version_id,
        repository_key=REPO,
        source_kind="CANONICAL",
        type_key="ameide:doc",
        recorded_at=1.0,
        retired_at=None,
        superseded=False,
        score=score,
    )


def version_hit(version_id: str, score: float) -> VersionHit:
    return VersionHit(
        element_id=f"el-{version_id}",
        version_id=version_id,
        repository_key=REPO,
        title="Doc",
        source_kind="CANONICAL",
        type_key="ameide:doc",
        recorded_at=1.0,
        retired_at=None,
        superseded=False,
        score=score,
    )


def test_classifications_rank_from_public_to_restricted() -> None:
    ranks = [classification_rank(name) for name in ("public", "internal", "confidential")]
    assert [*ranks, classification_rank("restricted")] == [0, 1, 2, 3]


def test_an_unknown_classification_is_refused() -> None:
    with pytest.raises(ValueError, match="secret"):
        classification_rank("secret")


def test_filters_with_the_same_content_are_equal_and_hash_alike() -> None:
    first = IndexFilter({"b/b/b": 1, "a/a/a": 2}, version_ids=frozenset({"v1"}))
    second = IndexFilter({"a/a/a": 2, "b/b/b": 1}, version_ids=frozenset({"v1"}))
    assert first == second
    assert hash(first) == hash(second)
    assert len({first, second}) == 1


def test_a_filter_does_not_change_when_the_callers_mapping_does() -> None:
    clearances = {REPO: 1}
    index_filter = IndexFilter(clearances)
    clearances[REPO] = 3
    assert index_filter.max_rank_by_repository[REPO] == 1
    with pytest.raises(TypeError):
        index_filter.max_rank_by_repository[REPO] = 3  # type: ignore[index]


@pytest.mark.parametrize(
    ("index_filter", "expected"),
    [
        (IndexFilter({}), True),
        (IndexFilter({REPO: -1}), True),
        (IndexFilter({REPO: 0}), False),
        (IndexFilter({REPO: 1}, version_ids=frozenset()), True),
        (IndexFilter({REPO: 1}, source_kinds=frozenset({"CANONICAL"})), False),
    ],
)
def test_a_filter_knows_when_it_admits_nothing(index_filter: IndexFilter, expected: bool) -> None:
    assert index_filter.admits_nothing() is expected


def test_indexed_chunks_carry_the_version_attributes_and_exact_spans() -> None:
    body = "Intro\n# Testing SOP\n## Phases\nrun them\n"
    chunks = version_chunks("v1", body, retired_at=5.0, superseded=True)
    assert [chunk.chunk_id for chunk in chunks] == [
        "v1#_preamble",
        "v1#testing-sop",
        "v1#testing-sop/phases",
    ]
    assert all(body[c.start : c.end] == c.text for c in chunks)
    assert chunks[2].heading_path == "Testing SOP > Phases"
    assert {(c.version_id, c.retired_at, c.superseded) for c in chunks} == {("v1", 5.0, True)}


def test_blank_chunks_are_left_out_but_an_empty_version_keeps_its_title_findable() -> None:
    assert [c.chunk_key for c in version_chunks("v1", "\n\n# A\nx\n")] == ["a"]
    (only,) = version_chunks("v2", "  \n")
    assert (only.text, only.start, only.end, only.title) == ("", 0, 0, "Doc")


def test_chunks_of_one_version_must_agree_on_the_version_attributes() -> None:
    good = version_chunks("v1")
    bad = dataclasses.replace(good[1], classification_rank=3)
    assert list(chunks_by_version([*good, *version_chunks("v2")])) == ["v1", "v2"]
    with pytest.raises(ValueError, match="v1"):
        chunks_by_version([good[0], bad])


def test_a_rebuild_stream_must_keep_each_versions_chunks_together() -> None:
    first, second = version_chunks("v1"), version_chunks("v2")
    groups = list(contiguous_versions([*first, *second]))
    assert [[c.version_id for c in group] for group in groups] == [["v1", "v1"], ["v2", "v2"]]
    with pytest.raises(ValueError, match="not contiguous"):
        list(contiguous_versions([first[0], second[0], first[1]]))


def test_combining_signals_lines_up_best_chunk_and_whole_version_per_version() -> None:
    chunks = [chunk_hit("v1", 3.0, "a"), chunk_hit("v1", 5.0, "b"), chunk_hit("v2", 4.0)]
    versions = [version_hit("v2", 9.0), version_hit("v3", 1.0)]
    signals = combine_signals(chunks, versions)
    assert [(s.version_id, s.chunk_score, s.version_score) for s in signals] == [
        ("v1", 5.0, 0.0),
        ("v2", 4.0, 9.0),
        ("v3", 0.0, 1.0),
    ]
    assert signals[0].best_chunk is not None
    assert signals[0].best_chunk.chunk_key == "b"
    assert [hit.chunk_key for hit in signals[0].chunks] == ["b", "a"]
    assert signals[2].best_chunk is None
    assert signals[2].element_id == "el-v3"
