"""Ranking, duplicate collapse, evaluation metrics and stored-context checks (all pure)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from projection.contexts import differences, verify
from projection.dedup import collapse, duplicate_rate, shingles
from projection.eval_metrics import (
    mean_metrics,
    ndcg_at_k,
    parse_dataset,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from projection.ranking import (
    WHY_KEYWORD,
    WHY_RELATIONSHIP,
    Candidate,
    RankingWeights,
    recency_anchor,
    represent,
    score,
)
from projection.selection import SelectedVersion, Selection, is_superseded, valid_at
from service.reading.recall import Trace, expand
from service.reading.request import Expand

NOW = 1_800_000_000.0


def _c(vid: str, chunk: float, kind: str = "CANONICAL", **kw: object) -> Candidate:
    return Candidate(
        vid,
        "el_" + vid,
        "t/o/r",
        kind,
        NOW,
        WHY_KEYWORD,
        chunk_score=chunk,
        version_score=chunk,
        **kw,
    )


def test_canonical_outranks_evidence_that_matches_about_as_well() -> None:
    ranked = score([_c("ev", 10.0, "INGESTED_EVIDENCE"), _c("can", 8.0)], RankingWeights(), NOW)
    assert [s.candidate.version_id for s in ranked] == ["can", "ev"]


def test_superseded_and_retired_content_is_demoted() -> None:
    ranked = score(
        [_c("old", 10.0, superseded=True), _c("gone", 10.0, retired=True), _c("new", 9.0)],
        RankingWeights(),
        NOW,
    )
    assert ranked[0].candidate.version_id == "new"


def test_superseded_content_is_demoted_by_a_share_of_its_relevance_not_buried() -> None:
    ranked = score(
        [
            _c("old", 10.0, "INGESTED_EVIDENCE", superseded=True),
            _c("new", 6.0, "INGESTED_EVIDENCE"),
            _c("weak", 3.0, "INGESTED_EVIDENCE"),
        ],
        RankingWeights(),
        NOW,
    )
    assert [s.candidate.version_id for s in ranked] == ["new", "old", "weak"]
    assert ranked[1].breakdown["superseded"]["value"] == pytest.approx(1.0)
    assert ranked[1].breakdown["superseded"]["contribution"] == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="superseded"):
        RankingWeights.from_mapping({"superseded": 1.5})


def test_a_representative_is_ranked_with_the_best_relevance_of_its_mirrors() -> None:
    copy, original = score(
        [_c("copy", 10.0, "INGESTED_EVIDENCE"), _c("original", 5.0, "INGESTED_EVIDENCE")],
        RankingWeights(),
        NOW,
    )
    lifted = represent(original, [copy], RankingWeights(), NOW)
    assert lifted.breakdown["relevance"]["value"] == pytest.approx(1.0)
    assert lifted.score == pytest.approx(copy.score)
    assert represent(copy, [original], RankingWeights(), NOW) is copy


def test_the_breakdown_sums_to_the_score() -> None:
    for s in score([_c("a", 3.0), _c("b", 1.0, "INGESTED_EVIDENCE")], RankingWeights(), NOW):
        assert abs(sum(t["contribution"] for t in s.breakdown.values()) - s.score) < 1e-6


def test_an_expanded_candidate_inherits_a_decayed_relevance_from_its_seed() -> None:
    seed = _c("seed", 10.0)
    near = Candidate(
        "near",
        "el_near",
        "t/o/r",
        "CANONICAL",
        NOW,
        WHY_RELATIONSHIP,
        hops=1,
        seed_element_id="el_seed",
    )
    by_id = {s.candidate.version_id: s for s in score([seed, near], RankingWeights(), NOW)}
    assert by_id["near"].breakdown["relevance"]["value"] == pytest.approx(0.5)
    assert by_id["near"].breakdown["graph_distance"]["contribution"] == pytest.approx(-0.15)


def test_weights_come_from_config_and_reject_nonsense() -> None:
    assert RankingWeights.from_mapping({"trust": 1}).trust == 1.0
    for bad in ({"trust": -1}, {"nope": 1}, {"trust": "x"}, {"chunk_share": 2}):
        with pytest.raises(ValueError):  # noqa: PT011
            RankingWeights.from_mapping(bad)


def test_a_mirror_is_collapsed_into_the_better_item_and_look_alikes_kept() -> None:
    section = " ".join(f"word{i}" for i in range(40))
    items = ["orig", "mirror", "other"]
    texts = {
        "orig": "intro text " + section,
        "mirror": section,
        "other": "entirely different words here",
    }
    kept, collapsed = collapse(items, texts.__getitem__, lambda i: shingles(texts[i]))
    assert [k.item for k in kept] == ["orig", "other"]
    assert [(c.item, c.duplicate_of) for c in collapsed] == [("mirror", "orig")]
    assert duplicate_rate([texts[i] for i in items], [texts[i] for i in items]) == pytest.approx(
        1 / 3
    )


def test_the_original_represents_a_mirror_that_ranked_above_it() -> None:
    section = " ".join(f"word{i}" for i in range(40))
    items = ["copy", "other", "orig"]
    texts = {
        "copy": section,
        "other": "entirely different words here",
        "orig": "intro text with more words " + section + " and an outro of its own here",
    }
    kept, collapsed = collapse(items, texts.__getitem__, lambda i: shingles(texts[i]))
    assert [k.item for k in kept] == ["orig", "other"]  # at the copy's slot
    assert [(c.item, c.duplicate_of) for c in collapsed] == [("copy", "orig")]
    # higher standing (e.g. canonical over evidence) is never replaced by the original; the
    # original stays a look-alike (its intro and outro are not in the copy)
    kept, collapsed = collapse(
        items,
        texts.__getitem__,
        lambda i: shingles(texts[i]),
        standing=lambda i: 1.0 if i == "copy" else 0.0,
    )
    assert not collapsed
    assert [k.item for k in kept] == ["copy", "other", "orig"]
    assert (kept[2].similar_to, kept[0].similarity) == ("copy", 0.0)


def test_of_two_look_alikes_the_copy_is_marked_for_demotion() -> None:
    section = " ".join(f"word{i}" for i in range(40))
    extra = " ".join(f"own{i}" for i in range(15))
    rest = " ".join(f"more{i}" for i in range(40))
    texts = {"copy": section + " " + extra, "orig": "intro " + section + " " + rest}
    kept, collapsed = collapse(["copy", "orig"], texts.__getitem__, lambda i: shingles(texts[i]))
    assert not collapsed
    by_item = {k.item: k for k in kept}
    assert by_item["orig"].similarity == 0.0
    assert 0.5 <= by_item["copy"].similarity < 0.8
    assert by_item["copy"].similar_to == "orig"


def test_metrics_on_a_small_ranking() -> None:
    relevant = {"a": 3, "b": 1, "c": 2}
    keys = ["x", "a", "a", "c"]
    assert precision_at_k(keys, relevant, 4) == 0.5
    assert recall_at_k(keys, relevant, 4) == pytest.approx(2 / 3)
    assert reciprocal_rank(keys, relevant, 4) == 0.5
    assert ndcg_at_k(["a", "c", "b"], relevant, 3) == pytest.approx(1.0)
    assert 0 < ndcg_at_k(keys, relevant, 4) < 1
    assert mean_metrics([])["ndcg"] == 0.0


def test_a_same_answer_group_counts_once_in_every_metric() -> None:
    grades = {"orig": 3, "copy": 2, "b": 1}
    (q,) = parse_dataset(
        [json.dumps({"query": "q", "relevant": grades, "same_answer": [["orig", "copy"]]})]
    )
    relevant, same = q.relevant, q.same_answer
    assert same == {"orig": "orig", "copy": "orig"}
    assert ndcg_at_k(["orig", "b"], relevant, 10, same) == pytest.approx(1.0)
    assert ndcg_at_k(["orig", "copy", "b"], relevant, 10, same) < 1.0  # the copy gains nothing
    worse = ndcg_at_k(["copy", "b"], relevant, 10, same)
    assert worse < ndcg_at_k(["orig", "b"], relevant, 10, same)
    assert recall_at_k(["copy", "orig"], relevant, 10, same) == pytest.approx(0.5)
    assert precision_at_k(["copy", "orig"], relevant, 2, same) == pytest.approx(0.5)
    assert reciprocal_rank(["x", "copy"], relevant, 10, same) == pytest.approx(0.5)
    for bad in ([["orig"]], [["orig", "nope"]], [["orig", "copy"], ["copy", "b"]], "x"):
        line = json.dumps({"query": "q", "relevant": grades, "same_answer": bad})
        with pytest.raises(ValueError, match="same_answer"):
            parse_dataset([line])


def test_datasets_are_parsed_with_line_numbers_in_errors() -> None:
    (q,) = parse_dataset(['{"query": "q", "relevant": {"a": 2}}', ""])
    assert q.relevant == {"a": 2}
    for bad in ('{"query": ""}', "not json", '{"query": "q", "relevant": {"a": true}}'):
        with pytest.raises(ValueError, match="line 1"):
            parse_dataset([bad])


def test_validity_windows_and_superseded_markers() -> None:
    window = {"effective_from": "2025-01-01", "effective_to": "2025-06-01T00:00:00Z"}
    assert valid_at(window, 1_740_000_000)  # 2025-02-19
    assert not valid_at(window, 1_748_736_000)  # 2025-06-01: the end is exclusive
    assert valid_at({"effective_from": "garbage"}, 0)
    assert is_superseded({"status": "Superseded"})
    assert is_superseded({"superseded_by": ["x"]})
    assert not is_superseded({"status": "active"})


def test_the_id_set_of_a_selection_follows_every_change_to_it() -> None:
    def selected(version_id: str, element_id: str) -> SelectedVersion:
        return SelectedVersion(version_id, element_id, "t/o/r", "CANONICAL", "internal")

    selection = Selection()
    selection.add([selected("v1", "e1"), selected("v2", "e2")])
    first = selection.version_ids()
    assert first == {"v1", "v2"}
    assert selection.version_ids() is first  # made once
    selection.add([selected("v3", "e3"), selected("v1b", "e1")])  # e1 keeps its first version
    assert selection.version_ids() == {"v1", "v2", "v3"}
    selection.keep(["v2", "v3"])
    assert selection.version_ids() == {"v2", "v3"} == set(selection.versions)


def test_verdicts_and_differences_of_stored_items() -> None:
    cite = {
        "version_id": "v1",
        "element_id": "e1",
        "repository_id": "r",
        "excerpt": {"chunk_key": "k", "start": 0, "end": 10},
    }
    items = [
        {
            "version_id": "v1",
            "element_id": "e1",
            "repository_id": "r",
            "citations": [cite],
            "content": "x",
        }
    ]
    assert [r["reason"] for r in verify(items, [cite, {**cite, "repository_id": "s"}])] == [
        "in_context",
        "mismatched_ids",
    ]
    after = [{**items[0], "version_id": "v2"}, {**items[0], "element_id": "e2"}]
    assert [d["change"] for d in differences(items, after)] == ["version_changed", "added"]


def test_recency_counts_back_from_the_freshest_candidate_not_from_the_read_instant() -> None:
    day = 86_400.0
    old = Candidate("old", "el_old", "t/o/r", "INGESTED_EVIDENCE", NOW - 400 * day, WHY_KEYWORD)
    new = Candidate("new", "el_new", "t/o/r", "INGESTED_EVIDENCE", NOW - 35 * day, WHY_KEYWORD)
    # a backlog last touched a month ago: its freshest page still counts as fresh
    anchor = recency_anchor([old, new], NOW)
    assert anchor == NOW - 35 * day
    by_id = {s.candidate.version_id: s for s in score([old, new], RankingWeights(), anchor)}
    assert by_id["new"].breakdown["recency"]["value"] == 1.0
    assert by_id["old"].breakdown["recency"]["value"] == pytest.approx(0.5 ** (365 / 365))
    # a later read of the same candidates scores them alike
    assert recency_anchor([old, new], NOW + 90 * day) == anchor
    assert recency_anchor([], NOW) == NOW
    # a candidate recorded after the read's instant (clock skew) never lifts the anchor past it
    skewed = Candidate("f", "el_f", "t/o/r", "X", NOW + day, WHY_KEYWORD)
    assert recency_anchor([skewed], NOW) == NOW


def test_a_question_about_the_current_state_weighs_recency_more() -> None:
    weights = RankingWeights()
    current = weights.for_query("which runner setup is current today?")
    assert (current.recency, current.recency_half_life_days) == (
        weights.recency_current,
        weights.recency_current_half_life_days,
    )
    assert current.recency > weights.recency
    other = weights.for_query("why did we choose this runner setup?")
    assert (other.recency, other.recency_half_life_days) == (0.05, 365.0)
    with pytest.raises(ValueError, match="half_life"):
        RankingWeights.from_mapping({"recency_current_half_life_days": 0})


def test_expansion_keeps_the_neighbours_of_better_ranked_seeds_when_it_must_choose() -> None:
    # the store returns relationships ordered by element id; the seeds come best first
    rows = [
        {"relationship_id": "r1", "type_key": "t", "from": "el-a", "to": "el-a-near"},
        {"relationship_id": "r2", "type_key": "t", "from": "el-z", "to": "el-z-near"},
    ]

    class Store:
        def neighbours(self, *_args: object) -> list[dict[str, str]]:
            return [dict(row) for row in rows]

    class Uow:
        store = Store()

    selection = Selection()
    selection.add(
        SelectedVersion(f"v-{e}", e, "t/o/r", "CANONICAL", "internal")
        for e in ("el-a", "el-z", "el-a-near", "el-z-near")
    )
    settings = Expand(hops=1, max_nodes=1)
    for seeds, kept in ((["el-z", "el-a"], "el-z-near"), (["el-a", "el-z"], "el-a-near")):
        trace = Trace()
        added = expand(Uow(), {}, None, selection, seeds, seeds, settings, trace)  # type: ignore[arg-type]
        assert [r.version_id for r in added] == [f"v-{kept}"]
        assert [d["reason"] for d in trace.drops] == ["max_nodes"]


@given(st.text(alphabet="abcXYZ019 -_.,\n\tÄéİKß日本\ud800", max_size=80))
def test_shingles_are_those_of_the_ascii_word_runs_of_the_lower_cased_text(text: str) -> None:
    # the definition: the runs of [0-9a-z] in text.lower() (non-ASCII letters, lone surrogates
    # and punctuation separate words), hashed in windows of four
    words = tuple(re.findall(r"[0-9a-z]+", text.lower()))
    as_bytes = tuple(w.encode() for w in words)
    if len(words) <= 4:
        expected = frozenset([hash(as_bytes)]) if words else frozenset()
    else:
        expected = frozenset(hash(as_bytes[i : i + 4]) for i in range(len(words) - 3))
    assert shingles(text) == expected
