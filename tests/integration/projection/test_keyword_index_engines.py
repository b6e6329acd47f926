"""The keyword index engines on a real index directory: the engine ``AMEIDE_INDEX_ENGINE``
names (Whoosh when unset; CI runs this file again with ``tantivy``). Tests of one engine's
internals skip on the other."""

from __future__ import annotations

import json
import math
import shutil
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projection import tantivy as tantivy_engine
from projection import whoosh as whoosh_engine
from projection.keyword_index import Hit, IndexedChunk, IndexFilter, VersionHit, indexed_chunks
from projection.tantivy import TantivyKeywordIndex
from projection.whoosh import WhooshKeywordIndex, scoring, writing
from projection.whoosh.schema import schema, stemmer
from tests.conftest import INDEX_ENGINE

ENGINE = INDEX_ENGINE
Index = TantivyKeywordIndex if ENGINE == "tantivy" else WhooshKeywordIndex
AnyIndex = WhooshKeywordIndex | TantivyKeywordIndex
FORMAT = (tantivy_engine if ENGINE == "tantivy" else whoosh_engine).FORMAT
pytestmark = pytest.mark.index_engine
whoosh_only = pytest.mark.skipif(ENGINE != "whoosh", reason="the Whoosh engine's internals")

PLATFORM = "acme/eng/platform"
SECRETS = "acme/eng/secrets"
INTERNAL = IndexFilter({PLATFORM: 1})


def doc(version_id: str, body: str, **overrides: object) -> list[IndexedChunk]:
    attributes: dict[str, object] = {
        "body": body,
        "title": f"Document {version_id}",
        "repository_key": PLATFORM,
        "element_id": f"el-{version_id}",
        "version_id": version_id,
        "classification_rank": 1,
        "source_kind": "CANONICAL",
        "type_key": "ameide:doc",
        "recorded_at": 1_000.0,
    }
    attributes.update(overrides)
    return indexed_chunks(**attributes)  # type: ignore[arg-type]


def versions_of(hits: Sequence[Hit | VersionHit]) -> list[str]:
    return [hit.version_id for hit in hits]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[AnyIndex]:
    keyword_index = Index(tmp_path / "index")
    yield keyword_index
    keyword_index.close()


def test_a_search_finds_the_matching_section_with_its_citation_span(
    index: AnyIndex,
) -> None:
    body = "# Testing SOP\nIntro.\n## Phases\nRun phase 0/1/2 tests with make.\n## Owners\nTeam.\n"
    index.replace_versions(doc("v1", body, title="Testing SOP"))
    (best, *_) = index.search("how do I run phase tests?", INTERNAL)
    assert (best.version_id, best.chunk_key) == ("v1", "testing-sop/phases")
    assert body[best.start : best.end].startswith("## Phases")
    assert best.heading_path == "Testing SOP > Phases"


def test_stemming_matches_other_forms_of_a_word(index: AnyIndex) -> None:
    index.replace_versions(doc("v1", "# Guide\nThe runner retries failed deployments.\n"))
    assert versions_of(index.search("running deployment retry", INTERNAL)) == ["v1"]


def test_content_above_the_clearance_or_in_unreadable_repositories_is_never_returned(
    index: AnyIndex,
) -> None:
    index.replace_versions(
        [
            *doc("public", "# Deploy\ndeploy steps\n", classification_rank=0),
            *doc("internal", "# Deploy\ndeploy steps\n", classification_rank=1),
            *doc("restricted", "# Deploy\ndeploy steps\n", classification_rank=3),
            *doc("other-repo", "# Deploy\ndeploy steps\n", repository_key=SECRETS),
        ]
    )
    assert sorted(versions_of(index.search("deploy", INTERNAL))) == ["internal", "public"]
    both = IndexFilter({PLATFORM: 3, SECRETS: 0})
    assert sorted(versions_of(index.search("deploy", both))) == ["internal", "public", "restricted"]
    assert index.search("deploy", IndexFilter({})) == []
    assert versions_of(index.search_versions("deploy", IndexFilter({SECRETS: 1}))) == ["other-repo"]


def test_the_limit_is_filled_from_permitted_content_even_when_forbidden_content_ranks_higher(
    index: AnyIndex,
) -> None:
    forbidden = [
        doc(f"r{n}", "# Rollback\nrollback rollback rollback\n", classification_rank=3)
        for n in range(30)
    ]
    permitted = [
        doc(f"p{n}", f"# Notes {n}\nsee the rollback notes and more text\n") for n in range(5)
    ]
    index.replace_versions([chunk for group in forbidden + permitted for chunk in group])
    hits = index.search("rollback", INTERNAL, limit=5)
    assert sorted(versions_of(hits)) == [f"p{n}" for n in range(5)]
    wholes = index.search_versions("rollback", INTERNAL, limit=5)
    assert sorted(versions_of(wholes)) == [f"p{n}" for n in range(5)]


def test_selection_filters_narrow_the_search(index: AnyIndex) -> None:
    index.replace_versions(
        [
            *doc("old", "# Cache\ncache ttl\n", recorded_at=100.0, superseded=True),
            *doc("new", "# Cache\ncache ttl\n", recorded_at=200.0, source_kind="INGESTED_EVIDENCE"),
            *doc(
                "gone",
                "# Cache\ncache ttl\n",
                retired_at=150.0,
                type_key="ameide:sop",
                recorded_at=120.0,
            ),
            *doc(
                "window",
                "# Cache\ncache ttl\n",
                effective_from=50.0,
                effective_to=120.0,
                recorded_at=130.0,
            ),
        ]
    )

    def found(**narrowing: object) -> list[str]:
        index_filter = IndexFilter({PLATFORM: 1}, **narrowing)  # type: ignore[arg-type]
        return sorted(versions_of(index.search("cache", index_filter)))

    assert found() == ["gone", "new", "old", "window"]
    assert found(version_ids=frozenset({"old", "new"})) == ["new", "old"]
    assert found(element_ids=frozenset({"el-gone"})) == ["gone"]
    assert found(source_kinds=frozenset({"INGESTED_EVIDENCE"})) == ["new"]
    assert found(type_keys=frozenset({"ameide:sop"})) == ["gone"]
    assert found(as_of=150.0) == ["gone", "old", "window"]
    assert found(valid_at=130.0) == ["gone", "new", "old"]
    assert found(valid_at=60.0) == ["gone", "new", "old", "window"]
    assert found(live_at=149.0) == ["gone", "new", "old", "window"]
    assert found(live_at=150.0) == ["new", "old", "window"]
    assert found(exclude_superseded=True) == ["gone", "new", "window"]
    assert found(version_ids=frozenset()) == []


@pytest.mark.parametrize(
    "query_text",
    [
        "title:secret",
        "secret AND NOT vault",
        "NOT vault secret",
        '"secret vault"',
        "(secret OR vault)",
        "secr* vault^5",
        "secret~2 vault",
        "heading:[a TO z] secret",
    ],
)
def test_query_syntax_in_user_text_is_treated_as_plain_words(
    index: AnyIndex, query_text: str
) -> None:
    index.replace_versions(
        [
            *doc("vault", "# Vault\nthe vault holds every secret\n"),
            *doc("title", "# Notes\nsecret title of something\n", title="Other"),
            *doc("unrelated", "# Other\nnothing to see\n"),
        ]
    )
    found = set(versions_of(index.search(query_text, INTERNAL)))
    assert "vault" in found or "title" in found
    assert "unrelated" not in found


def test_text_without_searchable_words_finds_nothing(index: AnyIndex) -> None:
    index.replace_versions(doc("v1", "# A\nthe words\n"))
    for query_text in ("", "   ", "*", "the and of", "()", "?"):
        assert index.search(query_text, INTERNAL) == []
        assert index.search_versions(query_text, INTERNAL) == []


def test_best_chunk_per_version_returns_one_chunk_of_each_version_and_fills_the_limit(
    index: AnyIndex,
) -> None:
    sections = "".join(f"## Part {n}\nbackup restore backup\n" for n in range(6))
    index.replace_versions(
        [chunk for n in range(4) for chunk in doc(f"v{n}", f"# Backups\n{sections}")]
    )
    hits = index.search("backup restore", INTERNAL, limit=3, per_version=1)
    assert len(hits) == 3
    assert len(set(versions_of(hits))) == 3
    assert len(index.search("backup restore", INTERNAL, limit=10, per_version=2)) == 8


def test_the_whole_version_search_ranks_versions_once_each(index: AnyIndex) -> None:
    index.replace_versions(
        [
            *doc("both", "# Alpha\nalpha notes\n## Beta\nbeta notes\n", title="Greek"),
            *doc("alpha", "# Alpha\nalpha only\n", title="Greek"),
        ]
    )
    whole = index.search_versions("alpha beta", INTERNAL)
    assert versions_of(whole) == ["both", "alpha"]
    assert whole[0].title == "Greek"
    assert index.version_count() == 2


def test_both_searches_at_once_answer_like_the_two_calls_even_from_many_threads(
    index: AnyIndex,
) -> None:
    index.replace_versions(
        [
            chunk
            for n in range(12)
            for chunk in doc(
                f"v{n}",
                f"# Deploy {n}\ncanary rollout step {n}\n## Rollback\nrollback {'canary ' * n}\n",
                repository_key=SECRETS if n % 4 == 0 else PLATFORM,
            )
        ]
    )
    questions = ["canary rollback", "rollout step", "deploy canary", "nothing matches this"]
    expected = {
        q: (index.search(q, INTERNAL, 5, per_version=1), index.search_versions(q, INTERNAL, 5))
        for q in questions
    }
    assert all(versions_of(expected[q][1]) for q in questions[:3])
    answers: list[tuple[str, Any]] = []

    def ask(worker: int) -> None:
        for n in range(10):
            q = questions[(worker + n) % len(questions)]
            answers.append((q, index.search_both(q, INTERNAL, 5, 1)))

    threads = [threading.Thread(target=ask, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 40
    for q, (chunks, versions) in answers:
        assert (chunks, versions) == expected[q]
        assert not {hit.repository_key for hit in [*chunks, *versions]} - {PLATFORM}


def test_replacing_a_version_replaces_all_of_its_chunks(index: AnyIndex) -> None:
    index.replace_versions(doc("v1", "# A\nobsolete wording\n## B\nmore obsolete\n"))
    index.replace_versions(doc("v1", "# A\nfresh wording\n", retired_at=5.0))
    assert index.search("obsolete", INTERNAL) == []
    (hit,) = index.search("fresh", INTERNAL)
    assert hit.retired_at == 5.0
    assert index.doc_count() == 1
    index.replace_versions([], version_ids=["v1"])
    assert index.doc_count() == 0


def test_erasing_a_version_removes_it_and_its_words_from_the_index_files(
    index: AnyIndex, tmp_path: Path
) -> None:
    index.replace_versions(doc("keep", "# Keep\nordinary words here\n"))
    index.replace_versions(doc("erase", "# Erase\nzanzibarquux personal data\n"))
    assert versions_of(index.search("zanzibarquux", INTERNAL)) == ["erase"]

    index.delete_versions(["erase"], position=9)

    assert index.search("zanzibarquux", INTERNAL) == []
    assert index.search_versions("zanzibarquux", INTERNAL) == []
    assert versions_of(index.search("ordinary", INTERNAL)) == ["keep"]
    files = [path for path in (tmp_path / "index").rglob("*") if path.is_file()]
    assert not [path for path in files if b"zanzibarquux" in path.read_bytes()]
    assert index.last_applied_position() == 9


def test_erasing_versions_the_index_does_not_hold_rewrites_nothing(index: AnyIndex) -> None:
    """The upkeep may pass versions erased long ago (an element's every version, when its
    retirement changes): the index stays in its generation, only the watermark moves."""
    index.replace_versions(doc("keep", "# Keep\nordinary words here\n"))
    generation = index._generation

    index.delete_versions(["never-indexed"], position=11)

    assert index._generation == generation
    assert versions_of(index.search("ordinary", INTERNAL)) == ["keep"]
    assert index.last_applied_position() == 11


def test_the_watermark_is_kept_across_reopening(tmp_path: Path) -> None:
    first = Index(tmp_path / "index")
    assert first.last_applied_position() is None
    first.replace_versions(doc("v1", "# A\nalpha\n"), position=41)
    first.replace_versions(doc("v2", "# B\nbeta\n"))  # no position: the watermark stays
    first.replace_versions([], position=42)  # nothing to index still moves the watermark
    first.close()

    reopened = Index(tmp_path / "index")
    assert reopened.last_applied_position() == 42
    assert reopened.doc_count() == 2
    reopened.clear(position=None)
    assert (reopened.last_applied_position(), reopened.doc_count()) == (None, 0)
    reopened.close()


def test_a_rebuild_answers_exactly_like_incremental_maintenance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writing, "_REBUILD_BATCH", 25)  # several commits per rebuild
    documents = [
        doc(f"v{n}", f"# Topic {n % 7}\nalpha beta {'gamma ' * (n % 5)}\n## Delta\ndelta {n}\n")
        for n in range(60)
    ]
    incremental = Index(tmp_path / "incremental")
    for start in range(0, 60, 7):
        incremental.replace_versions([c for group in documents[start : start + 7] for c in group])
    rebuilt = Index(tmp_path / "rebuilt")
    rebuilt.rebuild((chunk for group in documents for chunk in group), position=3)

    for query_text in ("alpha gamma", "topic 3 delta", "gamma gamma beta", "delta 17"):
        for mode in ("search", "search_versions"):
            expected = getattr(rebuilt, mode)(query_text, INTERNAL, limit=20)
            actual = getattr(incremental, mode)(query_text, INTERNAL, limit=20)
            assert [(h.version_id, round(h.score, 9)) for h in actual] == [
                (h.version_id, round(h.score, 9)) for h in expected
            ]
    assert rebuilt.last_applied_position() == 3
    incremental.close()
    rebuilt.close()


def test_searches_see_each_commit_and_survive_concurrent_writers(
    index: AnyIndex,
) -> None:
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            for n in range(5):
                index.replace_versions(doc(f"w{worker}-{n}", f"# Shared\nshared words {n}\n"))
                index.search("shared words", INTERNAL)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(index.search("shared", INTERNAL, limit=50)) == 15


def test_a_non_positive_limit_is_refused(index: AnyIndex) -> None:
    with pytest.raises(ValueError, match="positive"):
        index.search("x", INTERNAL, limit=0)
    with pytest.raises(ValueError, match="positive"):
        index.search("x", INTERNAL, per_version=0)


@whoosh_only
@settings(deadline=None)  # timing varies on a shared machine; no speed claim here
@given(st.text(max_size=200))
def test_the_one_pass_stemmer_indexes_the_same_words_as_the_stemming_analyzer(text: str) -> None:
    analyzer: Any = schema()["text"].analyzer  # the StemmingAnalyzer the index declares
    assert stemmer(analyzer)(text) == [token.text for token in analyzer(text)]


def test_a_failed_rebuild_leaves_the_previous_index_in_place(tmp_path: Path) -> None:
    index = Index(tmp_path / "index")
    index.replace_versions(doc("v1", "# Old\nolder content\n"), position=5)

    def failing() -> Iterator[IndexedChunk]:
        yield from doc("v2", "# New\nnewer content\n")
        raise RuntimeError("database went away")

    with pytest.raises(RuntimeError, match="went away"):
        index.rebuild(failing(), position=6)

    assert versions_of(index.search("content", INTERNAL)) == ["v1"]
    assert index.last_applied_position() == 5
    assert len(list((tmp_path / "index").glob("generation-*"))) == 1
    index.close()


def test_a_rebuilt_index_is_the_one_found_after_reopening(tmp_path: Path) -> None:
    index = Index(tmp_path / "index")
    index.replace_versions(doc("v1", "# Old\nolder content\n"))
    index.rebuild(doc("v2", "# New\nnewer content\n"), position=8)
    index.close()
    (tmp_path / "index" / "generation-99").mkdir()  # debris of a crashed rebuild

    reopened = Index(tmp_path / "index")
    assert versions_of(reopened.search("content", INTERNAL)) == ["v2"]
    assert reopened.last_applied_position() == 8
    assert [p.name for p in (tmp_path / "index").glob("generation-*")] == ["generation-2"]
    reopened.close()


def test_searches_running_during_rebuilds_see_the_old_or_the_new_index(
    index: AnyIndex,
) -> None:
    index.replace_versions(doc("old", "# Shared\nshared words\n"))
    stop = threading.Event()
    seen: set[tuple[str, ...]] = set()
    errors: list[BaseException] = []

    def search() -> None:
        try:
            while not stop.is_set():
                seen.add(tuple(versions_of(index.search("shared", INTERNAL))))
                index.doc_count()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=search) for _ in range(2)]
    for thread in threads:
        thread.start()
    for round_number in range(4):
        index.rebuild(doc(f"new{round_number}", "# Shared\nshared words\n"))
    stop.set()
    for thread in threads:
        thread.join()
    assert errors == []
    assert seen <= {("old",), *((f"new{n}",) for n in range(4))}
    assert versions_of(index.search("shared", INTERNAL)) == ["new3"]


def test_common_words_rank_documents_with_rarer_words_first_and_still_fill_the_limit(
    index: AnyIndex,
) -> None:
    everywhere = [doc(f"c{n}", f"# Note {n}\ndeploy notes number {n}\n") for n in range(40)]
    special = doc("special", "# Special\ndeploy the flamingo service\n")
    index.replace_versions([chunk for group in [*everywhere, special] for chunk in group])
    hits = index.search("how to deploy flamingo", INTERNAL, limit=5)
    assert len(hits) == 5
    assert hits[0].version_id == "special"
    assert len(index.search("deploy", INTERNAL, limit=50)) == 41


def test_searching_an_empty_index_finds_nothing(index: AnyIndex) -> None:
    assert index.search("deploy the service", INTERNAL) == []
    assert index.search_versions("deploy the service", INTERNAL) == []


@whoosh_only
def test_scores_are_bm25_over_the_weighted_title_heading_and_text(
    index: AnyIndex,
) -> None:
    """The chunk score, worked out by hand for a two-chunk index (k1 1.2, b 0.75)."""
    index.replace_versions(doc("v1", "# Deploy\ndeploy deploy now\n", title="Guide"))
    index.replace_versions(doc("v2", "# Other\nnothing here\n", title="Other"))

    def bm25(tf: float, df: int, length: int, average: float, boost: float) -> float:
        idf = math.log(2 / (df + 1)) + 1
        return boost * idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))

    # v1's chunk: heading "Deploy" (1 word), text "Deploy deploy deploy now" (4 words, the
    # heading line included); v2's: heading "Other", text "Other nothing here" ("here" is kept).
    expected = bm25(1, 1, 1, 1.0, 0.5) + bm25(3, 1, 4, 3.5, 1.0)  # heading weight 0.5
    (hit,) = index.search("deploy", INTERNAL)
    assert hit.version_id == "v1"
    assert hit.score == pytest.approx(expected)


@whoosh_only
def test_the_fallback_posting_and_length_readers_score_like_the_fast_ones(
    index: AnyIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enough documents for several posting blocks; the fallbacks serve other Whoosh codecs."""
    index.replace_versions(
        chunk
        for n in range(300)
        for chunk in doc(f"v{n:03d}", f"# Part {n % 9}\nshared {'word ' * (n % 4)}{n}\n")
    )
    fast = index.search("shared word part", INTERNAL, limit=40, per_version=1)

    monkeypatch.setattr(scoring, "_BLOCK_MATCHER", type(None))
    monkeypatch.setattr(scoring, "_COLUMN_READER", type(None))
    reopened = Index(index._directory)  # fresh caches
    assert reopened.search("shared word part", INTERNAL, limit=40, per_version=1) == fast
    reopened.close()


def test_an_index_of_an_older_format_is_set_aside_empty_until_rebuilt(tmp_path: Path) -> None:
    index = Index(tmp_path / "index")
    index.replace_versions(doc("v1", "# Old\nolder content\n"), position=5)
    assert not index.needs_rebuild()
    index.close()
    state_file = tmp_path / "index" / "state.json"
    state = json.loads(state_file.read_text())
    state_file.write_text(json.dumps({**state, "format": FORMAT - 1}))

    reopened = Index(tmp_path / "index")
    assert reopened.needs_rebuild()
    assert (reopened.doc_count(), reopened.last_applied_position()) == (0, None)
    assert reopened.search("content", INTERNAL) == []
    reopened.rebuild(doc("v1", "# Old\nolder content\n"), position=9)
    assert not reopened.needs_rebuild()
    assert versions_of(reopened.search("content", INTERNAL)) == ["v1"]
    reopened.close()
    again = Index(tmp_path / "index")
    assert (again.needs_rebuild(), again.last_applied_position()) == (False, 9)
    assert len(list((tmp_path / "index").glob("generation-*"))) == 1
    again.close()


@whoosh_only
@settings(deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_the_one_pass_stemmer_agrees_with_the_analyzer_on_ascii_text(text: str) -> None:
    analyzer: Any = schema()["text"].analyzer
    assert stemmer(analyzer)(text) == [token.text for token in analyzer(text)]


def test_an_index_reports_whether_its_files_are_on_disk_and_a_rebuild_restores_them(
    tmp_path: Path,
) -> None:
    index = Index(tmp_path / "index")
    assert index.is_intact()  # a new index writes its state file at once
    index.replace_versions(doc("v1", "# Kept\nkept content\n"), position=4)
    found = index.search("content", INTERNAL)
    shutil.rmtree(tmp_path / "index")
    assert not index.is_intact()
    assert index.search("content", INTERNAL) == found  # the open files still answer
    index.rebuild(doc("v1", "# Kept\nkept content\n"), position=4)
    assert index.is_intact()
    assert index.search("content", INTERNAL) == found
    index.close()
    reopened = Index(tmp_path / "index")
    assert (reopened.is_intact(), reopened.last_applied_position()) == (True, 4)
    reopened.close()


def test_an_index_follows_a_generation_another_process_published(tmp_path: Path) -> None:
    index = Index(tmp_path / "index")
    index.replace_versions(doc("v0", "# Old\nold content\n"), position=1)
    other = Index(tmp_path / "index")  # e.g. `ameide index rebuild` beside a server
    other.rebuild(doc("v1", "# Other\nother content\n"), position=2)
    assert other.is_intact()
    assert _generations(tmp_path) == [1, 2]  # the first one is still held by `index`
    assert index.is_intact()  # it follows the rebuild instead of rebuilding again
    assert [h.version_id for h in index.search("other content", INTERNAL)] == ["v1"]
    assert (index.last_applied_position(), index.version_count()) == (2, 1)
    assert _generations(tmp_path) == [2]  # released by both: removed
    index.replace_versions(doc("v2", "# Third\nthird content\n"), position=3)  # into the new one
    assert [h.version_id for h in other.search("third", INTERNAL)] == ["v2"]
    assert other.last_applied_position() == 3
    other.close()
    index.close()


def test_a_generation_is_removed_only_when_no_holder_is_left(tmp_path: Path) -> None:
    from projection import generations as g

    directory = tmp_path / "index"
    readers = [Index(directory) for _ in range(2)]
    builder = Index(directory)
    for n in range(3):
        builder.rebuild(doc(f"v{n}", f"# Doc\nround{n} words\n"), position=n + 1)
    assert _generations(tmp_path) == [1, 4]  # 2 and 3 nobody held; 1 the readers still do
    assert g.collect(directory, keep=4) == []
    assert readers[0].search("round2", INTERNAL)  # follows: releases 1, one reader left
    assert _generations(tmp_path) == [1, 4]
    readers[1].close()  # a process ending releases what it held
    assert g.collect(directory, keep=4) == [1]
    assert _generations(tmp_path) == [4]
    for index in (*readers, builder):
        index.close()


def test_hold_refuses_a_removed_generation_and_the_write_lock_excludes_others(
    tmp_path: Path,
) -> None:
    from projection import generations as g

    path = tmp_path / "generation-1"
    path.mkdir()
    held = g.hold(path)
    assert held is not None
    assert g.collect(tmp_path, keep=0) == []  # held: kept
    held.release()
    held.release()  # idempotent
    assert g.collect(tmp_path, keep=0) == [1]
    assert g.hold(path) is None  # gone: the caller re-reads state.json
    first, second = g.WriteLock(tmp_path), g.WriteLock(tmp_path)  # as two processes would
    with first.locked() as mine, first.locked() as again:  # re-entrant
        assert mine
        assert again
        with second.locked(blocking=False) as theirs:
            assert theirs is False
    with second.locked(blocking=False) as theirs:
        assert theirs is True


def test_a_rebuild_never_reuses_a_leftover_generation_number(tmp_path: Path) -> None:
    index = Index(tmp_path / "index")
    leftover = tmp_path / "index" / "generation-7"  # e.g. a rebuild that crashed mid-way
    leftover.mkdir()
    index.rebuild(doc("v1", "# A\nwords\n"), position=1)
    assert _generations(tmp_path) == [2]  # the unheld leftover was removed first
    assert index.is_intact()
    index.close()


def test_searches_in_two_objects_never_fail_while_one_rebuilds_and_the_other_writes(
    tmp_path: Path,
) -> None:
    """Like a server (threads searching) beside a CLI command writing and rebuilding."""
    server = Index(tmp_path / "index")
    server.replace_versions(doc("v0", "# Base\nbase words\n"), position=1)
    cli = Index(tmp_path / "index")
    failures: list[BaseException] = []
    found: list[int] = []
    stop = threading.Event()

    def search() -> None:
        while not stop.is_set():
            try:
                hits = server.search("base words", INTERNAL)
                found.append(len(hits))
                server.doc_count()
                assert server.is_intact()
            except BaseException as exc:  # collected for the assertion
                failures.append(exc)

    threads = [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for n in range(8):
        cli.rebuild(doc("v0", "# Base\nbase words\n"), position=n + 2)
        cli.replace_versions(doc(f"w{n}", f"# W\nextra{n} words\n"), position=n + 2)
    stop.set()
    for thread in threads:
        thread.join()
    assert failures == []
    assert found
    assert min(found) == 1
    assert [h.version_id for h in server.search("extra7", INTERNAL)] == ["w7"]
    server.close()
    cli.close()
    Index(tmp_path / "index").close()  # opening collects what nobody holds
    assert len(_generations(tmp_path)) == 1


def _generations(tmp_path: Path) -> list[int]:
    from projection.generations import generations

    return generations(tmp_path / "index")


def test_question_words_do_not_match_headings(index: AnyIndex) -> None:
    """ "Why" and "should" say how a question is asked: a page whose heading is "Why this
    matters" must not outrank the page about the asked topic because of them."""
    index.replace_versions(doc("v1", "# Why this matters\nwhy should we care\n", title="Intro"))
    index.replace_versions(doc("v2", "# Pinning\npin the image digest\n", title="Pinning"))
    hits = index.search("why should we pin the image digest?", INTERNAL)
    assert [h.version_id for h in hits] == ["v2"]
    only = index.search("why should", INTERNAL)  # nothing else asked: the words count again
    assert [h.version_id for h in only] == ["v1"]


@whoosh_only
def test_decoded_postings_are_kept_and_answer_exactly_like_a_fresh_decode(
    index: AnyIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    from projection.whoosh import segments

    for n in range(30):
        words = " ".join(["backup"] * (n % 4 + 1) + ["restore"] * (n % 3) + [f"word{n}"])
        index.replace_versions(doc(f"v{n}", f"# Part {n}\n{words}\n## More\nbackup notes\n"))
    queries = ("backup restore", "restore word7", "notes backup word12")
    first = [index.search(q, INTERNAL, limit=20) for q in queries]
    side = index._sides[0]
    assert side._postings, "the words searched are kept decoded"
    held = side._postings_held
    assert held == sum(len(ids) + 1 for ids, _ in side._postings.values())
    again = [index.search(q, INTERNAL, limit=20) for q in queries]
    assert again == first
    assert side._postings_held == held  # found in the cache, not decoded a second time
    # a tiny bound keeps evicting the least recently used words: the answers stay the same
    monkeypatch.setattr(segments, "_POSTINGS_CACHE_SIZE", 5)
    bounded = [index.search(q, INTERNAL, limit=20) for q in (*queries, "word3 word4")]
    assert bounded[:3] == first
    assert len(side._postings) == 1 or side._postings_held <= 5
    # a new commit adds a segment; the kept postings of the old ones still count correctly
    index.replace_versions(doc("late", "# Late\nbackup backup backup restore\n"))
    assert "late" in versions_of(index.search("backup restore", INTERNAL, limit=40))


@whoosh_only
def test_weighted_postings_and_stored_hits_kept_between_searches_answer_like_a_cold_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from projection.whoosh import segments

    warm = Index(tmp_path / "index")
    for n in range(30):
        words = " ".join(["backup"] * (n % 4 + 1) + ["restore"] * (n % 3) + [f"word{n}"])
        warm.replace_versions(doc(f"v{n}", f"# Part {n}\n{words}\n## More\nbackup notes\n"))
    narrow = IndexFilter({PLATFORM: 1}, version_ids=frozenset(f"v{n}" for n in range(0, 30, 3)))
    queries = ("backup restore", "restore word7", "notes backup word12")

    def answers(index: AnyIndex) -> list[object]:
        return [
            getattr(index, mode)(q, flt, limit=20)
            for q in queries
            for flt in (INTERNAL, narrow)
            for mode in ("search", "search_versions")
        ]

    def cold() -> list[object]:
        fresh = Index(tmp_path / "index")
        try:
            return answers(fresh)
        finally:
            fresh.close()

    first = answers(warm)
    assert warm._sides[0]._weighted, "the weighed postings are kept"
    assert warm._sides[0]._stored, "the stored hits are kept"
    assert answers(warm) == first == cold()
    # a commit changes the average lengths and idf; an erasure removes documents: what is
    # kept for the old segments never answers for the new state
    warm.replace_versions(doc("late", "# Late\nbackup backup backup restore notes\n"))
    assert answers(warm) == cold()
    warm.delete_versions(["v3", "v4"])
    assert answers(warm) == cold()
    warm.close()
    # tiny bounds keep evicting: the answers stay the same
    monkeypatch.setattr(segments, "_WEIGHTED_CACHE_SIZE", 5)
    monkeypatch.setattr(segments, "_STORED_CACHE_SIZE", 2)
    bounded = Index(tmp_path / "index")
    assert answers(bounded) == answers(bounded) == cold()
    side = bounded._sides[0]
    assert len(side._weighted) == 1 or side._weighted_held <= 5
    assert len(side._stored) <= 2
    bounded.close()


def test_both_engines_leave_out_the_same_stop_words() -> None:
    from whoosh.analysis import STOP_WORDS

    from projection.keyword_index import STOP_WORDS as PORT_STOP_WORDS

    assert set(PORT_STOP_WORDS) == set(STOP_WORDS)


@settings(deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_the_tantivy_analyser_splits_ascii_text_into_the_words_whoosh_does(text: str) -> None:
    """Same words, same stop words, same minimum length; only the stemmers differ (Porter2
    here, Porter there), so the counts agree word for word."""
    from projection.tantivy.schema import analyzer

    whoosh_words = stemmer(schema()["text"].analyzer)(text)
    assert len(analyzer().analyze(text)) == len(whoosh_words)


_PIECES = [
    *"aZ9_*.é中 \n",
    "\u0301",
    "\ufe0f",
    "\u2019",
    "\u2014",
    "\u00a0",
    "e.g.",
    "..",
    "v1.2",
    ".y",
]


@settings(deadline=None, max_examples=500)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet=st.characters(max_codepoint=127)),
        st.lists(st.sampled_from(_PIECES)).map("".join),
    )
)
def test_the_tantivy_index_gets_the_words_of_the_query_analyser(text: str) -> None:
    """Indexed text is analysed in Python (``Terms``), tantivy only splits the terms at
    spaces; they must be the query analyser's, term for term, on any text (twice: the second
    time from the terms remembered)."""
    from projection.tantivy.schema import Terms, analyzer, index_analyzer

    terms = Terms()
    expected = analyzer().analyze(text)
    assert index_analyzer().analyze(terms(text)) == expected
    assert index_analyzer().analyze(terms(text)) == expected


def test_a_long_allowlist_fills_the_limit_from_its_versions_even_when_others_rank_higher(
    index: AnyIndex,
) -> None:
    """Allowlists of hundreds of versions (a published selection) are checked on the hits by
    the tantivy engine, fetching more until the limit is filled: the same exact answer."""
    index.replace_versions(
        chunk
        for n in range(40)
        for chunk in doc(f"other{n}", "# Rollback\nrollback rollback rollback\n")
    )
    index.replace_versions(
        chunk for n in range(5) for chunk in doc(f"p{n}", f"# Notes {n}\nthe rollback notes\n")
    )
    allowed = frozenset({f"p{n}" for n in range(5)} | {f"absent{n}" for n in range(400)})
    index_filter = IndexFilter({PLATFORM: 1}, version_ids=allowed)
    assert sorted(versions_of(index.search("rollback", index_filter, limit=5))) == [
        f"p{n}" for n in range(5)
    ]
    assert len(index.search("rollback", index_filter, limit=3, per_version=1)) == 3
    assert sorted(versions_of(index.search_versions("rollback", index_filter, limit=10))) == [
        f"p{n}" for n in range(5)
    ]
    by_element = IndexFilter({PLATFORM: 1}, element_ids=frozenset({"el-p1", *map(str, range(300))}))
    assert versions_of(index.search("rollback", by_element)) == ["p1"]
