"""Guarantees of the ingest text pipeline that the apply path relies on (pure, no I/O):
the fast scanners find exactly what a whole-text scan finds, forgiving front matter repair,
path limits, id allocation after renames, and link resolution reasons."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest import markdown
from ingest.front_matter import FrontMatterError, parse_front_matter
from ingest.links.resolve import mirrored_after, resolve_links
from ingest.markdown import LinkKind
from ingest.paths import resolve_relative, unsafe_path_reason
from ingest.plan import element_id_for
from ingest.plan_model import ActionKind, FileAction, LinkCandidate
from ingest.screening import pii, secret_rules
from ingest.state import MirroredFile, MirrorState

TOKENS = [
    "key", "KEY", "api_key", "secret", "Token", "passwd", "auth", "=", ":", " ", "\n", "\t",
    "'", '"', "-", "_", "sk-", "AKIA", "xoxb-", "ghp_", "İ", "a", "Z", "9", "Q7x", "/", ".md",
    "docs/", "../", "x.md", "~", "[", "](", ")", "#",
    # needles and shapes of the secret rules
    "://", "@", "aws", "k_live_", "sk_live_", "eyJ", ".", "gl", "glpat-", "GR1348941", "xox",
    "hooks.slack.com", "PRIVATE KEY", "-----BEGIN ", "-----", "pypi-AgE", "SG.", "sq0csp-",
    "AccountKey=", "-us", "AIza", "github_pat_", "AC", "4eC39HqLyjWDarjtT1zd",
    "wJalrXUtnFEMI/K7MDENG", "bPxRfiCYEXAMPLEKEY", "eyJhbGciOiJIUzI1NiJ9", "1-2-",
]  # fmt: skip
texts = st.lists(st.sampled_from(TOKENS) | st.text(max_size=3), max_size=80).map("".join)


def reference_secrets(text: str) -> list[tuple[int, int, str]]:
    """The scan before needles and line filtering: every rule over the whole text."""
    return [
        (start, end, rule.kind)
        for rule in secret_rules.rules()
        for start, end in rule.find(text, 0, len(text))
    ]


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_secret_scanner_finds_exactly_what_a_whole_text_scan_finds(text):
    assert sorted(secret_rules.find_secrets(text)) == sorted(reference_secrets(text))


NUMBER_TOKENS = [
    "0", "1", "7", "4111", "4111 1111 1111 1111", "+49", "(555)", "030", " ", "-", ".", "(",
    ")", "+", "DE89", "GB82", "AB", "X", "x", "@", "a.b", "mail.example", "_", "\n", "\u0661",
]  # fmt: skip
number_texts = st.lists(st.sampled_from(NUMBER_TOKENS) | st.text(max_size=2), max_size=60).map(
    "".join
)


@settings(max_examples=400, deadline=None)
@given(number_texts)
def test_the_number_scanners_find_exactly_what_a_whole_text_scan_finds(text):
    numbers = pii._number_regions(text)
    phones = [m.span() for a, b in numbers for m in pii._search_from(pii._PHONE, text, a, b)]
    assert [span for span in phones if span[1] - span[0] >= 8] == [
        m.span() for m in pii._PHONE.finditer(text) if len(m.group()) >= 8
    ]
    assert [m.span() for m in pii._digit_runs(text, numbers)] == [
        m.span() for m in pii._DIGIT_RUN.finditer(text) if len(m.group()) >= 13
    ]
    assert [m.span() for m in pii._iban_matches(text)] == [
        m.span() for m in pii._IBAN.finditer(text)
    ]
    assert [m.span() for m in pii._on_lines_with(pii._EMAIL, ("@",), text)] == [
        m.span() for m in pii._EMAIL.finditer(text)
    ]


def reference_links(path: str, body: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """Link extraction before line filtering: every pattern over the whole text."""
    text = "\n".join(markdown._outside_fences(body))
    found: dict[tuple[LinkKind, str], markdown.LinkRef] = {}
    for match in markdown._INLINE_LINK.finditer(text):
        if not match.group(1):
            markdown._add_link(found, path, match.group(2))
    for match in markdown._REF_DEF.finditer(text):
        markdown._add_link(found, path, match.group(1))
    rest = markdown._URLISH.sub(
        " ", markdown._REF_DEF.sub(" ", markdown._INLINE_LINK.sub(" ", text))
    )
    for match in markdown._PATH_REF.finditer(rest):
        raw = match.group(1)
        options = [resolve_relative(path, raw), resolve_relative("", raw)]
        if "/" in raw:
            options.reverse()
        candidates = tuple(dict.fromkeys(c for c in options if c))
        found.setdefault(
            (LinkKind.PATH_REFERENCE, raw),
            markdown.LinkRef(raw, LinkKind.PATH_REFERENCE, candidates),
        )
    return [(r.raw, r.kind, r.candidates) for r in found.values() if path not in r.candidates]


def reference_headings(text: str) -> list[tuple[int, str]]:
    """Headings before the cheap pre-tests: every line through the regexes."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = markdown._FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            lines.append("")
        elif fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            lines.append("")
        else:
            lines.append(line)
    found: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        atx = markdown._ATX.match(line)
        if atx:
            found.append((len(atx.group(1)), (atx.group(2) or "").strip()))
            continue
        below = lines[index + 1] if index + 1 < len(lines) else ""
        if line.strip() and (
            markdown._SETEXT_H1.match(below) or (markdown._SETEXT_H2.match(below) and below)
        ):
            found.append((1 if markdown._SETEXT_H1.match(below) else 2, line.strip()))
    return found


MARKDOWN_TOKENS = [
    "[", "]", "(", ")", "](", "]:", "!", "x.md", "docs/a.md", "../c.md", " ", "\n", "```",
    "~~~", "#", "# T", "===", "---", "-", "=", "http://h/x.md", "<", ">", '"t"', "\t", "    ",
    "%20", "#frag", "?q", "/", ".", "`", "~",
]  # fmt: skip
markdown_texts = st.lists(st.sampled_from(MARKDOWN_TOKENS) | st.text(max_size=2), max_size=60).map(
    "".join
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["a.md", "docs/x.md", "d/e/f.md"]), markdown_texts)
def test_links_and_headings_are_found_exactly_as_a_whole_text_scan_finds_them(path, text):
    fast = [(r.raw, r.kind, r.candidates) for r in markdown.extract_links(path, text)]
    assert fast == reference_links(path, text)
    assert markdown.headings(text) == reference_headings(text)
    links, headings = markdown.outline(path, text)
    assert (links, headings) == (markdown.extract_links(path, text), markdown.headings(text))


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
    assert pii.scan(text).counts == {"secret:key_value": 1}


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
