"""Packaging: pieces slice the body exactly, budgets hold for every input, detail levels."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from projection.chunks import split_into_chunks
from projection.packaging import (
    ItemSource,
    Piece,
    choose_pieces,
    first_sentence,
    pack,
    query_terms,
)

BODY = """---
title: Testing
status: active
---
# Testing SOP

Run the tests in three phases. Each must pass.

## Phase 0

Lint and unit tests run first.

## Phase 1

Integration tests need Postgres and Kafka.
"""


def _item(body: str, detail: str = "excerpt", terms: tuple[str, ...] = ()) -> ItemSource:
    return ItemSource(
        "t/o/r",
        "el_1",
        "ver_1",
        "Title",
        "CANONICAL",
        body,
        tuple(choose_pieces(body, detail, (), terms)),
    )


def test_titles_detail_is_the_first_sentence_after_front_matter_and_headings() -> None:
    (piece,) = choose_pieces(BODY, "titles")
    assert BODY[piece.start : piece.end] == "Run the tests in three phases."
    assert piece.chunk_key == "testing-sop"


def test_excerpt_without_hits_prefers_the_chunk_sharing_most_query_words() -> None:
    (piece,) = choose_pieces(BODY, "excerpt", terms=query_terms("kafka integration"))
    assert BODY[piece.start : piece.end].startswith("## Phase 1")


def test_full_detail_tiles_every_chunk_of_real_content() -> None:
    pieces = choose_pieces(BODY, "full")
    chunks = [c for c in split_into_chunks(BODY) if c.text.strip()]
    assert [p.chunk_key for p in pieces] == [c.chunk_key for c in chunks]


def test_query_terms_are_plain_words_without_syntax() -> None:
    assert query_terms("title:Secret AND (vault* OR keys) how do I") == [
        "title",
        "secret",
        "vault",
        "keys",
    ]


def test_an_item_that_does_not_fit_ends_the_packing() -> None:
    items = [_item(BODY, "full"), _item("# Short\n\nA short note that fits in any budget.\n")]
    packed = pack(items, max_items=5, max_chars=30)
    assert packed.items == ()
    assert packed.truncated
    assert packed.context_block == ""


def test_first_sentence_of_a_body_without_text_is_none() -> None:
    assert first_sentence("# Only a heading\n") is None


@settings(max_examples=150, deadline=None)
@given(
    bodies=st.lists(
        st.text(alphabet=st.sampled_from("ab #\n.!?"), min_size=1, max_size=300),
        min_size=1,
        max_size=5,
    ),
    detail=st.sampled_from(["titles", "excerpt", "full"]),
    max_items=st.integers(1, 6),
    max_chars=st.integers(1, 800),
)
def test_budgets_hold_and_citations_slice_exactly(
    bodies: list[str], detail: str, max_items: int, max_chars: int
) -> None:
    items = [_item(body, detail) for body in bodies if body.strip()]
    packed = pack(items, max_items, max_chars)
    assert len(packed.context_block) <= max_chars
    assert len(packed.items) <= max_items
    assert sum(len(p.content) for p in packed.items) <= max_chars
    for p in packed.items:
        chunks = split_into_chunks(p.source.body)
        for piece in p.pieces:
            text = p.source.body[piece.start : piece.end]
            assert text
            assert text in p.content
            assert any(c.start <= piece.start and piece.end <= c.end for c in chunks)
    if len(packed.items) < min(len(items), max_items):
        assert packed.truncated


def test_a_hit_outside_the_body_is_ignored() -> None:
    hits = [Piece("x", "", 5000, 6000)]
    assert choose_pieces(BODY, "excerpt", hits) == choose_pieces(BODY, "excerpt")
