"""Guarantees of the ingest text pipeline that the apply path relies on (pure, no I/O):
the fast scanners find exactly what a whole-text scan finds, forgiving front matter repair,
path limits, id allocation after renames, and link resolution reasons."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest import markdown, pii
from ingest.front_matter import FrontMatterError, parse_front_matter
from ingest.links import mirrored_after, resolve_links
from ingest.markdown import LinkKind
from ingest.paths import unsafe_path_reason
from ingest.plan import element_id_for
from ingest.plan_model import ActionKind, FileAction, LinkCandidate
from ingest.state import MirroredFile, MirrorState

TOKENS = [
    "key", "KEY", "api_key", "secret", "Token", "passwd", "auth", "=", ":", " ", "\n", "\t",
    "'", '"', "-", "_", "sk-", "AKIA", "xoxb-", "ghp_", "İ", "a", "Z", "9", "Q7x", "/", ".md",
    "docs/", "../", "x.md", "~", "[", "](", ")", "#",
]  # fmt: skip
texts = st.lists(st.sampled_from(TOKENS) | st.text(max_size=3), max_size=80).map("".join)


def reference_secrets(text: str) -> list[tuple[int, int]]:
    """The scan before needles and line filtering: every pattern over the whole text."""
    spans = [m.span() for pattern, _ in pii._SECRETS for m in pattern.finditer(text)]
    for match in pii._KEY_VALUE.finditer(text):
        value = match.group(1)
        classes = sum(any(test(c) for c in value) for test in pii._CHAR_CLASSES)
        if classes >= 2 and pii.shannon_entropy(value) >= 3.5:
            spans.append(match.span(1))
    return spans


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_secret_scanner_finds_exactly_what_a_whole_text_scan_finds(text):
    assert sorted(pii._secrets(text)) == sorted(reference_secrets(text))


@settings(max_examples=400, deadline=None)
@given(texts)
def test_path_references_are_found_exactly_as_a_whole_text_scan_finds_them(text):
    fast = [(m.span(), m.group(1)) for m in markdown._path_refs(text)]
    assert fast == [(m.span(), m.group(1)) for m in markdown._PATH_REF.finditer(text)]


@pytest.mark.parametrize(
    "line",
    [
        "db_secret_value: Zx9Kq2LmP4sT8vW1yB6nQ",
        "my-api-key = 'Zx9Kq2LmP4sT8vW1yB6nQ'",
        "PASSWORD:Zx9Kq2LmP4sT8vW1yB6nQ",
    ],
)
def test_key_value_secrets_are_still_found_on_any_line(line):
    text = f"# Title\n\nintro\n{line}\nmore\n"
    assert pii.scan(text).counts == {"secret": 1}


def test_a_colon_in_a_plain_front_matter_value_is_repaired_and_marked():
    front = parse_front_matter('title: 496 – EDA (v3: Kafka)\nnote: say "hi": now\nstatus: draft')
    metadata = front.to_metadata()
    assert metadata["title"] == "496 – EDA (v3: Kafka)"
    assert metadata["note"] == 'say "hi": now'
    assert metadata["front_matter_repaired"] is True
    assert "front_matter_repaired" not in parse_front_matter("title: fine").to_metadata()


@pytest.mark.parametrize("raw", ["title: [unclosed", "title: a: b\nlist: [oops", "- a: b"])
def test_front_matter_that_quoting_cannot_fix_stays_an_error(raw):
    with pytest.raises(FrontMatterError):
        parse_front_matter(raw)


def test_paths_longer_than_the_store_keeps_are_unsafe():
    assert unsafe_path_reason("a/" * 499 + "b.md") == "path is longer than 1000 characters"
    assert unsafe_path_reason("a/" * 400 + "b.md") is None


def test_a_new_file_at_a_moved_files_old_path_gets_the_next_derived_id():
    source, repo = "/src", "t/o/r"
    moved = element_id_for(repo, source, "old.md")
    state = MirrorState(source, [MirroredFile(repo, "new.md", moved, True, "h")])
    assert state.locate(repo, "new.md") == moved
    assert state.locate(repo, "old.md") == element_id_for(repo, source, "old.md\x001")
    assert state.locate(repo, "other.md") == element_id_for(repo, source, "other.md")
    assert state.current_hash(moved) == "h"


def _doc(path: str, element: str, repo: str = "t/o/r", links: tuple[str, ...] = ()) -> FileAction:
    return FileAction(
        ActionKind.NEW,
        path,
        element,
        repo,
        body="x",
        links=tuple(LinkCandidate(t, LinkKind.MARKDOWN_LINK, t, True) for t in links),
    )


def test_links_resolve_within_one_repository_and_say_why_when_they_do_not():
    state = MirrorState("/src", [MirroredFile("t/o/r", "kept.md", "el_kept", True, "h")])
    actions = [
        _doc("a.md", "el_a", links=("kept.md", "b.md", "c.md", "gone.md", "a.md")),
        _doc("b.md", "el_b"),
        _doc("c.md", "el_c", repo="t/o/other"),
    ]
    links = resolve_links(actions, mirrored_after(actions, state))
    assert [t.element_id for t in links["a.md"].targets] == ["el_kept", "el_b"]
    assert links["a.md"].unresolved == (
        {"raw": "c.md", "target_path": "c.md", "reason": "mirrored in another repository"},
        {"raw": "gone.md", "target_path": "gone.md", "reason": "not mirrored"},
    )
