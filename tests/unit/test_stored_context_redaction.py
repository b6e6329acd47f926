"""A stored read context loses an erased version's text, and nothing else (domain.erasure)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.erasure import erased_note, redact_stored_context
from domain.model import ERASED_TITLE
from projection.packaging import ItemSource, choose_pieces, pack

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOTE = erased_note(AT)


def source(n: int, title: str, body: str) -> ItemSource:
    return ItemSource(
        repository_key="acme/eng/platform",
        element_id=f"el_{n}",
        version_id=f"ver_{n}",
        title=title,
        source_kind="CANONICAL",
        body=body,
        pieces=tuple(choose_pieces(body, "full")),
    )


def response(sources: list[ItemSource]) -> dict[str, Any]:
    """A stored response shaped like read_context's (the fields erasure cares about)."""
    packed = pack(sources, max_items=20, max_chars=200_000)
    items = [
        {
            "element_id": p.source.element_id,
            "version_id": p.source.version_id,
            "title": p.source.title,
            "source_kind": p.source.source_kind,
            "content": p.content,
            "citations": [
                {
                    "version_id": p.source.version_id,
                    "excerpt": {"chunk_key": x.chunk_key, "start": x.start, "end": x.end},
                }
                for x in p.pieces
            ],
            "erased": p.source.note is not None,
        }
        for p in packed.items
    ]
    return {"context_id": "ctx_1", "items": items, "context_block": packed.context_block}


SOURCES = [
    source(1, "Contacts", "# Contacts\n\nCall zorblax at 555 0100.\n"),
    source(2, "Phones", "# Phones\n\nThe rota is on the wiki.\n"),
]


def test_the_erased_items_text_leaves_the_item_and_the_block_and_nothing_else_changes():
    stored = response(SOURCES)
    out = redact_stored_context(stored, {"ver_1": NOTE})
    assert out is not None
    assert "zorblax" not in json.dumps(out)
    first, second = out["items"]
    assert (first["content"], first["erased"]) == (NOTE, True)
    assert first["citations"] == stored["items"][0]["citations"]
    assert second == stored["items"][1]
    assert (
        out["context_block"]
        == response([replace(SOURCES[0], note=NOTE, title=ERASED_TITLE), SOURCES[1]])[
            "context_block"
        ]
    )
    assert "zorblax" in json.dumps(stored)  # the input is left as it was


def test_a_context_without_the_version_or_already_showing_the_note_is_left_alone():
    stored = response(SOURCES)
    assert redact_stored_context(stored, {"ver_9": NOTE}) is None
    erased_then = response(
        [replace(SOURCES[0], note=erased_note(datetime(2025, 1, 1, tzinfo=UTC)))]
    )
    assert redact_stored_context(erased_then, {"ver_1": NOTE}) is None


def test_an_unexpected_block_layout_still_loses_the_text():
    stored = response(SOURCES)
    stored["context_block"] = "preamble\n" + stored["items"][0]["content"] + "\nend"
    out = redact_stored_context(stored, {"ver_1": NOTE})
    assert out is not None
    assert out["context_block"] == f"preamble\n{NOTE}\nend"


def test_the_note_names_the_instant_in_utc():
    assert NOTE == "[erased: this version's content was erased at 2026-03-01T12:00:00Z]"


text = st.text(st.sampled_from("ab (),\n#[]-ver_1"), min_size=1, max_size=60)


@given(st.lists(st.tuples(text, text), min_size=1, max_size=4), st.data())
def test_redacting_equals_packing_the_erased_items_as_notes(entries, data):
    built = [source(n, title, body) for n, (title, body) in enumerate(entries, start=1)]
    sources = [s for s in built if s.pieces]  # an item with nothing to show is never packed
    stored = response(sources)
    erased = data.draw(st.sets(st.sampled_from([s.version_id for s in sources] or ["ver_0"])))
    out = redact_stored_context(stored, dict.fromkeys(erased, NOTE))
    shown = {i["version_id"] for i in stored["items"]}
    expected = response(
        [
            replace(s, note=NOTE, title=ERASED_TITLE) if s.version_id in erased else s
            for s in sources
        ]
    )
    if not erased & shown:
        assert out is None
        return
    assert out is not None
    assert out["context_block"] == expected["context_block"]
    for item, want in zip(out["items"], expected["items"], strict=True):
        assert item["content"] == want["content"]


def test_erasing_a_long_title_keeps_the_next_items_in_place() -> None:
    """Erasing a title longer than the marker used to leave the cursor past the next item's
    entry line, so that item fell back to replacing its text everywhere in the block."""
    sources = [source(1, "A rather long title of the first page", "1"), source(2, "2", "2")]
    out = redact_stored_context(response(sources), {"ver_1": NOTE, "ver_2": NOTE})
    expected = response([replace(s, note=NOTE, title=ERASED_TITLE) for s in sources])
    assert out is not None
    assert out["context_block"] == expected["context_block"]
