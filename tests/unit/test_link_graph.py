"""The link graph's parts on their own: anchor text extraction, the anchor field's BM25,
in-links, and supersession chains (issue 32 §1)."""

from __future__ import annotations

import math

from ingest.links.anchor_text import MAX_ANCHORS_PER_LINK, anchor_texts
from projection.link_graph import K1, Anchor, B, LinkGraph
from projection.ranking import Candidate, PathStep, RankingWeights, score


def test_a_link_gives_its_text_and_sentence_but_not_its_target() -> None:
    body = (
        "# Guide\n\n"
        "Intro line. Releases go out through [our delivery tool](../argo-cd.md#sync) nightly. "
        "Another sentence.\n"
        "See 681-argocd-ui-performance.md for the slow dashboard story.\n"
        "```\n[in code](ignored.md)\n```\n"
        "![a picture](diagram.md)\n"
        "[label]: other.md\n"
    )
    found = anchor_texts(body)
    assert found["../argo-cd.md#sync"] == ["our delivery tool Releases go out through nightly."]
    # a bare path: its sentence, without the file name
    assert found["681-argocd-ui-performance.md"] == ["See for the slow dashboard story."]
    assert found["other.md"] == ["label"]
    assert "ignored.md" not in found
    assert "diagram.md" not in found


def test_a_long_line_is_cut_around_the_link_and_repeats_are_capped() -> None:
    words = " ".join(f"w{n}" for n in range(100))
    found = anchor_texts(f"{words} [x](t.md) {words}\n")
    assert len(found["t.md"][0].split()) == 1 + 2 * 24
    many = "\n".join("- [again](t.md)" for _ in range(20))
    assert len(anchor_texts(many)["t.md"]) == MAX_ANCHORS_PER_LINK


def test_the_anchor_field_is_bm25_over_each_targets_anchor_text() -> None:
    graph = LinkGraph.build(
        [
            Anchor("s1", "argo", ("deliveri", "tool")),
            Anchor("s2", "argo", ("deliveri",)),
            Anchor("s1", "kafka", ("event", "bus")),
        ]
    )
    assert graph.lengths == {"argo": 3, "kafka": 2}
    got = graph.search(["deliveri"])
    average = 2.5
    idf = math.log(2 / (1 + 1)) + 1
    expected = idf * 2 * (K1 + 1) / (2 + K1 * (1 - B + B * 3 / average))
    assert set(got) == {"argo"}
    assert math.isclose(got["argo"], expected)
    assert graph.search(["nothing"]) == {}
    assert LinkGraph().search(["deliveri"]) == {}
    assert graph.search(["deliveri", "event"], limit=1) == {"argo": got["argo"]}


def test_in_links_count_distinct_current_linking_versions() -> None:
    graph = LinkGraph.build(
        [
            Anchor("s1", "t", ("a",)),
            Anchor("s1", "t", ("b",)),
            Anchor("s2", "t", ()),
            Anchor("old", "t", ("c",), current=False),
        ]
    )
    assert graph.in_links == {"t": 2}


def test_a_chain_leads_to_its_head_and_a_cycle_stops() -> None:
    step = {n: PathStep(f"rel{n}", "ameide:lifecycle.supersedes", "x", "y") for n in range(4)}
    graph = LinkGraph(replaced_by={"v1": ("v2", step[1]), "v2": ("v3", step[2])})
    assert graph.head("v1") == ("v3", (step[1], step[2]))
    assert graph.head("v3") is None
    loop = LinkGraph(replaced_by={"a": ("b", step[1]), "b": ("a", step[2])})
    assert loop.head("a") == ("b", (step[1],))


def _candidate(version: str, chunk: float, anchor: float = 0.0, in_links: int = 0) -> Candidate:
    return Candidate(
        version_id=version,
        element_id=f"el-{version}",
        repository_key="t/o/r",
        source_kind="EVIDENCE",
        recorded_at=0.0,
        why_included="keyword_match",
        chunk_score=chunk,
        version_score=chunk,
        anchor_score=anchor,
        in_links=in_links,
    )


def test_anchor_relevance_adds_to_keyword_relevance_and_in_links_add_a_prior() -> None:
    weights = RankingWeights(anchor=0.3, in_links=0.1, recency=0.0)
    scored = {
        s.candidate.version_id: s
        for s in score(
            [_candidate("a", 2.0, anchor=0.0, in_links=0), _candidate("b", 1.0, 4.0, 3)],
            weights,
            0.0,
        )
    }
    assert scored["a"].breakdown["relevance"]["value"] == 1.0  # anchors only add
    assert scored["b"].breakdown["relevance"]["value"] == 0.65  # 0.5 + 0.3 * 1.0 * (1 - 0.5)
    assert scored["b"].breakdown["in_links"]["contribution"] == 0.1
    assert scored["a"].breakdown["in_links"]["contribution"] == 0.0
    # without anchors among the candidates, keyword relevance is what it was
    plain = score([_candidate("a", 2.0), _candidate("b", 1.0)], weights, 0.0)
    assert [s.breakdown["relevance"]["value"] for s in plain] == [1.0, 0.5]
