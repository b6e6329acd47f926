"""Chunking a version body by heading path: exact offsets, stable keys."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from projection.chunks import (
    MAX_KEY_LENGTH,
    PREAMBLE_KEY,
    Chunk,
    heading_path_text,
    slugify,
    split_into_chunks,
)

# Fragments that exercise headings, fences, blank lines and odd line endings.
_FRAGMENTS = st.sampled_from(
    [
        "# ",
        "## ",
        "### ",
        "#### ",
        "#",
        "    # ",
        "```",
        "```python",
        "~~~",
        "\n",
        "\n\n",
        "\r\n",
        " ",
        "Phases",
        "Testing SOP",
        "word ",
        "ü",
        "#tag",
        " ##",
        "`",
    ]
)
_BODIES = st.one_of(
    st.lists(st.one_of(_FRAGMENTS, st.text(max_size=12)), max_size=60).map("".join),
    st.text(max_size=300),
)

# Section text that can never look like a heading or a fence.
_SAFE_LINE = st.text(alphabet="abcdefg XYZ.,!?-0123", max_size=40)
_SAFE_TEXT = st.lists(_SAFE_LINE, max_size=5).map(lambda lines: "".join(f"{x}\n" for x in lines))
_HEADING_TEXT = st.text(alphabet="abcdef XYZ", min_size=1, max_size=15).filter(str.strip)
_SECTIONS = st.lists(
    st.tuples(st.integers(1, 4), _HEADING_TEXT, _SAFE_TEXT), min_size=1, max_size=8
)


def render(sections: list[tuple[int, str, str]], preamble: str = "") -> str:
    return preamble + "".join(f"{'#' * level} {title}\n{text}" for level, title, text in sections)


def assert_tiles(body: str, chunks: list[Chunk]) -> None:
    position = 0
    for chunk in chunks:
        assert chunk.start == position
        assert chunk.end > chunk.start
        assert body[chunk.start : chunk.end] == chunk.text
        position = chunk.end
    assert position == len(body)


@settings(deadline=None)  # timing varies on a shared machine; no speed claim here
@given(_BODIES, st.integers(min_value=5, max_value=300))
def test_chunks_tile_the_body_with_exact_offsets(body: str, max_chars: int) -> None:
    chunks = split_into_chunks(body, max_chars=max_chars)
    assert_tiles(body, chunks)
    assert all(len(chunk.text) <= max_chars for chunk in chunks)


@settings(deadline=None)  # timing varies on a shared machine; no speed claim here
@given(_BODIES)
def test_chunk_keys_are_unique_short_and_deterministic(body: str) -> None:
    chunks = split_into_chunks(body, max_chars=50)
    keys = [chunk.chunk_key for chunk in chunks]
    assert len(set(keys)) == len(keys)
    assert all(0 < len(key) <= MAX_KEY_LENGTH for key in keys)
    assert split_into_chunks(body, max_chars=50) == chunks


@settings(deadline=None)  # timing varies on a shared machine; no speed claim here
@given(_SECTIONS, st.data())
def test_editing_one_section_keeps_the_keys_and_text_of_the_others(
    sections: list[tuple[int, str, str]], data: st.DataObject
) -> None:
    edited_index = data.draw(st.integers(0, len(sections) - 1))
    new_text = data.draw(_SAFE_TEXT)
    edited = list(sections)
    level, title, _ = edited[edited_index]
    edited[edited_index] = (level, title, new_text)

    before = split_into_chunks(render(sections))
    after = split_into_chunks(render(edited))

    assert [(c.chunk_key, c.heading_path) for c in before] == [
        (c.chunk_key, c.heading_path) for c in after
    ]
    unchanged = [i for i in range(len(sections)) if i != edited_index]
    assert [before[i].text for i in unchanged] == [after[i].text for i in unchanged]


@settings(deadline=None)  # timing varies on a shared machine; no speed claim here
@given(_SECTIONS, _SECTIONS)
def test_appending_sections_keeps_every_existing_key(
    sections: list[tuple[int, str, str]], appended: list[tuple[int, str, str]]
) -> None:
    before = split_into_chunks(render(sections))
    after = split_into_chunks(render(sections + appended))
    assert [c.chunk_key for c in after[: len(before)]] == [c.chunk_key for c in before]


def test_text_before_the_first_heading_is_a_chunk_with_an_empty_heading_path() -> None:
    chunks = split_into_chunks("Intro line.\n\n# Title\nBody\n")
    assert chunks[0].heading_path == ()
    assert chunks[0].chunk_key == PREAMBLE_KEY
    assert chunks[0].text == "Intro line.\n\n"


def test_heading_paths_nest_by_level_and_pop_on_shallower_headings() -> None:
    body = "# Testing SOP\n## Phases\n### Phase 0\nrun\n## Rollback\n#### Deep\nx\n# Other\n"
    paths = [chunk.heading_path for chunk in split_into_chunks(body)]
    assert paths == [
        ("Testing SOP",),
        ("Testing SOP", "Phases"),
        ("Testing SOP", "Phases", "Phase 0"),
        ("Testing SOP", "Rollback"),
        ("Testing SOP", "Rollback", "Deep"),
        ("Other",),
    ]


def test_chunk_keys_are_readable_slugs_of_the_heading_path() -> None:
    chunks = split_into_chunks("# Testing SOP\n## Phases\nrun phase 0/1/2\n")
    assert [chunk.chunk_key for chunk in chunks] == ["testing-sop", "testing-sop/phases"]
    assert heading_path_text(chunks[1].heading_path) == "Testing SOP > Phases"


def test_a_repeated_heading_path_gets_an_ordinal_suffix() -> None:
    body = "# A\n## Notes\none\n## Notes\ntwo\n## Notes\nthree\n"
    keys = [chunk.chunk_key for chunk in split_into_chunks(body)]
    assert keys == ["a", "a/notes", "a/notes~2", "a/notes~3"]


def test_hash_lines_inside_fenced_code_are_not_headings() -> None:
    body = "# Setup\n```bash\n# install\nmake\n```\n~~~\n## still code\n~~~\n## Next\n"
    chunks = split_into_chunks(body)
    assert [chunk.heading_path for chunk in chunks] == [("Setup",), ("Setup", "Next")]


def test_an_unclosed_fence_hides_headings_to_the_end_of_the_body() -> None:
    chunks = split_into_chunks("# A\n````\n# not a heading\n```\n# still not\n")
    assert len(chunks) == 1


def test_lines_that_only_look_like_headings_are_text() -> None:
    body = "# Real\n#hashtag\n    # indented code\n####### seven\n\\# escaped\n"
    assert len(split_into_chunks(body)) == 1


def test_closing_hashes_and_extra_spaces_are_not_part_of_the_heading() -> None:
    chunks = split_into_chunks("#   Testing   SOP ##\n")
    assert chunks[0].heading_path == ("Testing SOP",)


def test_a_long_section_is_cut_at_paragraph_boundaries_with_part_suffixes() -> None:
    paragraph = "word " * 30 + "\n\n"  # 152 characters
    body = "# Long\n" + paragraph * 10
    chunks = split_into_chunks(body, max_chars=400)
    assert_tiles(body, chunks)
    assert [chunk.chunk_key for chunk in chunks] == ["long", "long@2", "long@3", "long@4", "long@5"]
    assert all(chunk.heading_path == ("Long",) for chunk in chunks)
    assert all(chunk.text.startswith("word") for chunk in chunks[1:])


def test_a_section_without_paragraph_breaks_is_cut_at_spaces() -> None:
    body = "# Long\n" + "abc " * 300
    chunks = split_into_chunks(body, max_chars=100)
    assert_tiles(body, chunks)
    assert all(chunk.text.endswith(" ") for chunk in chunks[:-1])
    assert chunks[0].text.startswith("# Long\nabc")


def test_very_long_heading_paths_give_bounded_distinct_keys() -> None:
    deep = "".join(f"{'#' * level} {'heading ' * 20}{level}\n" for level in range(1, 7))
    other = deep.replace("6\n", "7\n")
    key = split_into_chunks(deep)[-1].chunk_key
    assert len(key) <= MAX_KEY_LENGTH
    assert key != split_into_chunks(other)[-1].chunk_key


def test_slugs_fold_accents_and_punctuation() -> None:
    assert slugify("Phase 0/1/2 — Über Tests!") == "phase-0-1-2-uber-tests"
    assert slugify("") == "section"
    assert slugify("部署").startswith("h-")
    assert slugify("部署") != slugify("测试")


def test_an_empty_body_has_no_chunks() -> None:
    assert split_into_chunks("") == []


_MARKED = ("# a", "## b", "   ### c", "    # d", "# e #", "#tag", "```", "```py", "~~~", "~~~~")
_LINES = st.lists(
    st.sampled_from([*_MARKED, "   ~~~", "` x", "~ y", "text", "", "\r"]), max_size=20
).map("\n".join)


@settings(deadline=None, max_examples=300)
@given(st.one_of(_BODIES, _LINES))
def test_headings_read_from_the_marked_lines_alone_are_those_of_every_line(body: str) -> None:
    """Only lines beginning like a heading or a fence are read for headings; the lines every
    line's scan finds headings on must be the same."""
    from projection.chunks import _headings, _scan_lines

    every_line = [(line.start, line.heading) for line in _scan_lines(body) if line.heading]
    assert _headings(body) == every_line
