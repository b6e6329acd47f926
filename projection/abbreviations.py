"""Abbreviations a backlog defines, used to widen a question that spells one out.

Technical pages define their abbreviations in place — "Event-Driven Architecture (EDA)",
"KEDA (Kubernetes Event-Driven Autoscaling)" — and elsewhere use only one of the two forms. A
question that says "event-driven architecture" shares no word with a page that only says "EDA",
and the other way round. A read therefore collects the definitions that its best candidates'
bodies state (text the caller may read: candidates are already trimmed and selected, so nothing
is learnt from content the caller cannot see) and, when the question spells out a defined
abbreviation but does not use its short form, searches again with the short form added
(``service.reading.pipeline``; ``explain`` shows it under ``query_rewrite``).

Only that direction: a short form is already a rare, telling word, while the words of its long
form are common ones that pull in unrelated pages (measured on the real backlog: adding
"kubernetes event driven autoscaling" to a question about KEDA put pages on event-driven
architecture into its top 5).

A definition is recognised by the usual rule (after Schwartz & Hearst, 2003, simplified): the
letters of the short form, in order, are the initials of the words just before the parentheses
("Azure Front Door (AFD)") or of the words inside them ("AFD (Azure Front Door)"), small words
such as "of" and "and" left out and hyphenated words counted as their parts. A short form has
2–8 letters or digits, at least two of them capitals, an optional plural "s" ("ADRs"). In the
question the long form counts in any case, hyphens as spaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_ADDITIONS = 4
"""At most this many definitions widen one question."""

_SKIPPED = frozenset({"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "the", "to"})
_SHORT = re.compile(r"[A-Z][A-Za-z0-9]{1,8}")
_SHORT_BEFORE = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Z0-9]{1,7})(s?)\s+$")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_LOOK_BACK = 120  # characters before "(SHORT)" searched for the long form


@dataclass(frozen=True, slots=True)
class Definition:
    """One abbreviation: its short form and the words it stands for (both lower-case)."""

    short: str
    words: tuple[str, ...]

    @property
    def long(self) -> str:
        """The long form as one string ("event driven architecture")."""
        return " ".join(self.words)


def definitions(text: str) -> list[Definition]:
    """The abbreviations ``text`` defines, each short form once (its first definition)."""
    found: dict[str, Definition] = {}
    start = text.find("(")
    while start != -1:  # each parenthesis (finding them is most of the work: done in C)
        end = text.find(")", start + 1, start + 102)
        if end != -1:
            inside = text[start + 1 : end]
            if _SHORT.fullmatch(inside):  # "Long Form (SHORT)"
                short = _singular(inside)
                before = _words(text[max(0, start - _LOOK_BACK) : start])
                words = before[-len(short) :] if short and len(before) >= len(short) else []
                if short and words and _initials(words) == short.lower():
                    found.setdefault(short.lower(), Definition(short.lower(), tuple(words)))
            elif len(inside) >= 3 and "(" not in inside:  # "SHORT (Long Form)"
                match = _SHORT_BEFORE.search(text, max(0, start - 12), start)
                short = _singular(match.group(1) + match.group(2)) if match else None
                words = _words(inside)
                if short and len(words) == len(short) and _initials(words) == short.lower():
                    found.setdefault(short.lower(), Definition(short.lower(), tuple(words)))
        start = text.find("(", start + 1)
    return list(found.values())


def additions(query: str, known: Iterable[Definition]) -> list[tuple[Definition, str]]:
    """For each definition whose long form the question spells out without its short form: the
    definition and the word to add (the short form), at most :data:`MAX_ADDITIONS`."""
    spoken = f" {' '.join(w.lower() for w in _WORD.findall(query))} "
    out: list[tuple[Definition, str]] = []
    for d in known:
        if f" {d.long} " in spoken and f" {d.short} " not in spoken:
            out.append((d, d.short))
        if len(out) == MAX_ADDITIONS:
            break
    return out


def _singular(short: str) -> str | None:
    """The short form without a plural "s", or ``None`` when it is not one."""
    if short.endswith("s") and len(short) > 2 and short[:-1].isupper():
        short = short[:-1]
    if not 2 <= len(short) <= 8 or sum(c.isupper() for c in short) < 2:
        return None
    return short


def _words(text: str) -> list[str]:
    """Lower-case words, hyphenated ones split, small words left out."""
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in _SKIPPED]


def _initials(words: Iterable[str]) -> str:
    return "".join(w[0] for w in words)
