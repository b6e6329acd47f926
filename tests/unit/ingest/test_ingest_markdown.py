"""Markdown handling: decoding, normalization, hashing, front matter, titles, links."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.markdown import (
    ContentError,
    FrontMatterError,
    LinkKind,
    content_hash,
    count_headings,
    count_words,
    decode_text,
    extract_links,
    normalize_body,
    parse_front_matter,
    split_front_matter,
    title_for,
)


def test_normalizing_turns_crlf_and_cr_into_lf_and_trims_line_ends():
    assert normalize_body("a  \r\nb\t\rc \n") == "a\nb\nc"


def test_normalizing_drops_trailing_blank_lines_but_keeps_leading_ones():
    assert normalize_body("\n\nbody\n\n  \n\t\n") == "\n\nbody"


@given(st.text())
def test_normalizing_is_idempotent(text):
    once = normalize_body(text)
    assert normalize_body(once) == once


@given(st.lists(st.text(alphabet="abc #", max_size=8), max_size=6))
def test_the_hash_ignores_line_endings_and_trailing_whitespace(lines):
    unix = "\n".join(lines)
    windows = "\r\n".join(line + "  " for line in lines) + "\r\n\r\n"
    assert content_hash(unix) == content_hash(windows)


def test_the_hash_is_sha256_hex_of_the_normalized_text():
    assert content_hash("x\n") == "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"


def test_decoding_drops_a_utf8_byte_order_mark():
    assert decode_text("\ufeff# Hi".encode()) == "# Hi"


def test_a_file_with_nul_bytes_is_binary():
    with pytest.raises(ContentError) as caught:
        decode_text(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert caught.value.code == "binary"


def test_invalid_utf8_is_undecodable_and_names_the_byte():
    with pytest.raises(ContentError) as caught:
        decode_text(b"ok \xff\xfe bad")
    assert caught.value.code == "undecodable"
    assert "byte 3" in str(caught.value)


def test_front_matter_is_split_from_the_body():
    raw, body = split_front_matter("---\ntitle: T\n---\n# Body")
    assert raw == "title: T"
    assert body == "# Body"


def test_a_text_without_front_matter_is_all_body():
    assert split_front_matter("# Body\n---\nx") == (None, "# Body\n---\nx")


def test_front_matter_may_close_with_three_dots():
    assert split_front_matter("---\na: 1\n...\nbody") == ("a: 1", "body")


def test_unclosed_front_matter_is_malformed():
    with pytest.raises(FrontMatterError, match="never closed"):
        split_front_matter("---\ntitle: x\n# Body")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("title: [unclosed", "not valid YAML"),
        ("- a\n- b", "must be a mapping"),
        ("tags: {a: 1}", "field 'tags"),
        ("effective_from: next week", "ISO 8601"),
        ("a: &a [*a]", "nested too deeply"),
        ("notes: " + "x" * 70_000, "longer than"),
    ],
)
def test_malformed_front_matter_is_refused_with_a_reason(raw, message):
    with pytest.raises(FrontMatterError, match=message):
        parse_front_matter(raw)


def test_an_alias_bomb_is_refused_rather_than_expanded():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    with pytest.raises(FrontMatterError):
        parse_front_matter("\n".join(lines))


def test_known_front_matter_fields_are_normalized_and_others_kept():
    front = parse_front_matter(
        "title: 42\nowners: alice\ntags: a, b\neffective_from: 2024-05-01\n"
        "supersedes: ADR-1\npriority: high\nnested: {k: [1, 2]}"
    )
    assert front.to_metadata() == {
        "title": "42",
        "owners": ["alice"],
        "tags": ["a", "b"],
        "effective_from": "2024-05-01",
        "supersedes": ["ADR-1"],
        "priority": "high",
        "nested": {"k": [1, 2]},
        "superseded": False,
    }


@pytest.mark.parametrize(
    "raw", ["status: superseded", "status: Superseded", "superseded_by: ADR-9"]
)
def test_superseded_status_or_a_successor_marks_the_version_superseded(raw):
    assert parse_front_matter(raw).to_metadata()["superseded"] is True


def test_empty_front_matter_gives_empty_metadata():
    assert parse_front_matter("").to_metadata() == {"superseded": False}


def test_the_title_comes_from_front_matter_first():
    front = parse_front_matter("title: From front matter")
    assert title_for(front, "# Heading", "a/b.md") == "From front matter"


def test_the_title_falls_back_to_the_first_h1_outside_code():
    body = "intro\n```\n# not a title\n```\n## Sub\n# Real Title #\n# Later"
    assert title_for(parse_front_matter(None), body, "a/b.md") == "Real Title"


def test_a_setext_h1_is_a_title_too():
    assert title_for(parse_front_matter(None), "Setext Title\n====\n", "x.md") == "Setext Title"


def test_the_title_falls_back_to_the_file_name():
    assert title_for(parse_front_matter(None), "no heading", "backlog/0042-auth.md") == "0042-auth"


def test_headings_and_words_are_counted_outside_fences():
    body = "# A\n\ntext here\n\n~~~\n# no\n~~~\n\nSub\n---\n### C"
    assert count_headings(body) == 3
    assert count_words("one two\nthree") == 3


def test_relative_markdown_links_resolve_against_the_file_folder():
    refs = extract_links("backlog/epics/a.md", "[b](b.md) [up](../c.md#part) [root](/d.md)")
    assert [(r.raw, r.candidates) for r in refs] == [
        ("b.md", ("backlog/epics/b.md",)),
        ("../c.md#part", ("backlog/c.md",)),
        ("/d.md", ("d.md",)),
    ]


def test_external_links_anchors_images_and_code_are_not_references():
    body = (
        "[web](https://x.org/a.md) [mail](mailto:a@b.c) [here](#top) ![img](pic.md)\n"
        "```\n[code](code.md)\n```\n[ok](ok.md)"
    )
    assert [r.raw for r in extract_links("a.md", body)] == ["ok.md"]


def test_reference_definitions_and_percent_escapes_are_understood():
    refs = extract_links("a.md", '[x][1]\n\n[1]: <my%20file.md> "Title"')
    assert refs[0].candidates == ("my file.md",)


def test_bare_backlog_paths_are_path_references_preferring_the_root():
    refs = extract_links("backlog/a.md", "Depends on backlog/b.md and `c.md`.")
    assert [(r.kind, r.candidates) for r in refs] == [
        (LinkKind.PATH_REFERENCE, ("backlog/b.md", "backlog/backlog/b.md")),
        (LinkKind.PATH_REFERENCE, ("backlog/c.md", "c.md")),
    ]


def test_a_link_leaving_the_repository_has_no_candidate():
    (ref,) = extract_links("a.md", "[out](../../etc/passwd.md)")
    assert ref.candidates == ()


def test_links_to_the_file_itself_are_dropped():
    assert extract_links("backlog/a.md", "[me](a.md) [me too](./a.md)") == []


@pytest.mark.parametrize("unit", ["a", "[", "[a](", "(", "a/", "http:", "a\n=\n"])
def test_hostile_repetitive_markdown_is_parsed_without_blowing_up(unit):
    # Regression guard: unbounded backtracking once made link extraction quadratic.
    text = unit * (50_000 // len(unit))
    assert isinstance(extract_links("a.md", text), list)
    assert count_headings(text) >= 0
