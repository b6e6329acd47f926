"""Anchor text: what a page's links say about the pages they point at.

The words a page uses to point at another — the link text and the sentence it stands in —
describe the target in its readers' vocabulary (classic anchor text, the standard remedy for
vocabulary mismatch in linked collections). :func:`anchor_texts` reads them from one version's
body, keyed by the link exactly as written (``raw``), which is what ingest stores on the
``REFERENCE`` relationship the link became; the read side joins the two, so an anchor always
comes from the linking *version* a read selected (see ``service.reading.links``).

Only what a reader of the linking page sees counts: link text and its sentence, never the link
target itself (a file name such as ``681-argocd-ui-performance.md`` names the target's own
file, which is no reader's word for it); a bare path mention contributes its sentence without
the path. Links in fenced code and images are ignored, as :func:`ingest.markdown.extract_links`
ignores them.
"""

from __future__ import annotations

import re

from ingest.markdown import _INLINE_LINK, _PATH_REF, _REF_DEF, _URLISH, _outside_fences

MAX_SENTENCE_WORDS = 24
"""Words of the sentence kept on each side of a link (a table row or a long paragraph line is
cut around the link, so one link does not carry a whole section's words)."""
MAX_ANCHORS_PER_LINK = 8
"""Occurrences of one link target in one page that count (a page repeating a link in every
row of a table says nothing new after a few)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*_`\[(])")
_MARKUP = re.compile(r"[*_`>#|]+")
_WORDS = re.compile(r"\S+")


def anchor_texts(body: str) -> dict[str, list[str]]:
    """Link as written → the anchor texts of its occurrences in ``body``, in order: for a
    markdown link its text and the sentence around it, for a reference definition its label,
    for a bare ``*.md`` path the sentence around it (without the path)."""
    out: dict[str, list[str]] = {}
    for line in _outside_fences(body):
        if "](" in line:
            for match in _INLINE_LINK.finditer(line):
                if match.group(1):  # an image
                    continue
                raw = _unbracket(match.group(2))
                text = _text_of(match)
                sentence = _sentence(line, match.start(), match.end())
                _add(out, raw, _clean(f"{text} {sentence}"))
        if "]:" in line:
            for match in _REF_DEF.finditer(line):
                label = line[line.index("[") + 1 : line.index("]:")]
                _add(out, _unbracket(match.group(1)), _clean(label))
        if ".md" in line:
            rest = _URLISH.sub(" ", _REF_DEF.sub(" ", _INLINE_LINK.sub(" ", line)))
            for match in _PATH_REF.finditer(rest):
                sentence = _sentence(rest, match.start(1), match.end(1))
                _add(out, match.group(1), _clean(sentence))
    return out


def _unbracket(target: str) -> str:
    return target[1:-1] if target.startswith("<") and target.endswith(">") else target


def _add(out: dict[str, list[str]], raw: str, text: str) -> None:
    found = out.setdefault(raw, [])
    if text and len(found) < MAX_ANCHORS_PER_LINK:
        found.append(text)


def _sentence(line: str, start: int, end: int) -> str:
    """The sentence of ``line`` around ``[start, end)`` without that span: up to
    :data:`MAX_SENTENCE_WORDS` words each side, other links reduced to their text."""
    before, after = line[:start], line[end:]
    before = _SENTENCE_END.split(before)[-1]
    after = _SENTENCE_END.split(after, maxsplit=1)[0]
    before_words = _WORDS.findall(_link_text(before))[-MAX_SENTENCE_WORDS:]
    after_words = _WORDS.findall(_link_text(after))[:MAX_SENTENCE_WORDS]
    return " ".join((*before_words, *after_words))


def _link_text(text: str) -> str:
    """``text`` with markdown links replaced by their text and bare paths left out."""
    text = _INLINE_LINK.sub(lambda m: "" if m.group(1) else _text_of(m), text)
    return _PATH_REF.sub(" ", _URLISH.sub(" ", text))


def _text_of(match: re.Match[str]) -> str:
    """A markdown link's text, without file names (``[433-codex-cli-057.md](…)`` says no
    more than the target's own file name)."""
    whole = match.group(0)
    return _PATH_REF.sub(" ", whole[1 : whole.rfind("](", 0, match.start(2) - match.start() + 1)])


def _clean(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).split())
