"""The PII barrier: find personal data and secrets in text, count them, and mask them.

Detected kinds: e-mail addresses, phone numbers, payment card numbers (Luhn-checked, spaced,
dashed, dotted, slashed or unspaced), IBANs (mod-97-checked, upper or lower case) and
secrets (``ingest.screening.secret_rules``: the detect-secrets rule set and a few rules of
ours), each secret counted as ``secret:<kind>`` (``secret:aws``, ``secret:url_password``, …).
Detection is deliberately a little eager: a false positive costs a masked token, a false
negative leaks data.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from ingest.screening.secret_rules import find_secrets

DEFAULT_MASK = "█"


class PiiKind(StrEnum):
    """Kinds of sensitive data the barrier knows."""

    EMAIL = "email"
    PHONE = "phone"
    CARD = "payment_card"
    IBAN = "iban"
    SECRET = "secret"  # noqa: S105 - a label, not a password


PROTECTED_KINDS = frozenset({PiiKind.SECRET, PiiKind.CARD, PiiKind.IBAN})
"""What the default policy (``protect``) masks: secrets, payment card numbers and IBANs — data
that is dangerous in any hands and never needed to answer a question. E-mail addresses and phone
numbers are kept by default: backlogs name their owners and contacts, agents need them to route
work, and erasure removes them on request; a rule with ``policy: redact`` masks them too."""


def kind_of(label: str) -> str:
    """The kind a count's label is of: ``secret`` for ``secret:aws``, ``email`` for ``email``."""
    return label.partition(":")[0]


@dataclass(frozen=True, order=True)
class PiiFinding:
    """One match: ``text[start:end]`` is of ``kind`` (and, for a secret, of ``detail``, the
    rule's kind: ``aws``, ``jwt``, …)."""

    start: int
    end: int
    kind: PiiKind
    detail: str = ""

    @property
    def label(self) -> str:
        """What counts name it by: ``secret:aws``, ``email``."""
        return f"{self.kind.value}:{self.detail}" if self.detail else self.kind.value


@dataclass(frozen=True)
class PiiScan:
    """What a scan found.

    ``findings`` count each token once, as its most specific kind; ``spans`` are the merged
    character ranges of every match of every detector (what redaction masks); ``counts`` are
    findings per label (``email``, ``secret:jwt``; ``kind_of`` gives a label's kind).
    """

    findings: tuple[PiiFinding, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    matches: tuple[PiiFinding, ...] = ()
    """Every match of every detector, overlapping ones included."""

    @property
    def detected(self) -> bool:
        """Whether anything was found."""
        return bool(self.findings)

    def only(self, kinds: frozenset[PiiKind]) -> PiiScan:
        """What the scan found of ``kinds``: their findings, and spans covering every match of
        theirs, so masking them leaves no character of one visible (a token matched as a card
        and as a phone number is masked whole)."""
        findings = tuple(f for f in self.findings if f.kind in kinds)
        matches = tuple(m for m in self.matches if m.kind in kinds)
        spans = tuple(merge_spans((m.start, m.end) for m in matches))
        counts = Counter(f.label for f in findings)
        return PiiScan(findings, spans, dict(sorted(counts.items())), matches)


_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,}(?![\w-])"
)
_DIGIT_RUN = re.compile(r"(?<!\d)\d+(?:[ ./-]\d+)*(?!\d)")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,12}(?:[ .-]\d{1,12}){0,5}(?!\w)"
)
_NANP = re.compile(r"\(?\d{3}\)?[ .-]?\d{3}[ .-]\d{4}")
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}"
    r"(?:[A-Za-z0-9]{11,30}(?![A-Za-z0-9])|(?: [A-Za-z0-9]{1,4}){3,8})"
)
# The detectors above start with a lookbehind, which makes the regex engine try every position
# of the text. Their matches can only lie in short regions that a scan starting with a character
# class finds fast, so only those are searched, with the same results: a phone number is made
# of digits, spaces, dots, dashes, brackets and "+", starts with a digit, "(" or "+" and is only
# kept from 8 characters on; a card's digit run (digits, spaces, dots, slashes, dashes, from a
# digit) lies inside such a region (slashes included) and is only looked into from 13
# characters on; an IBAN starts with two letters and two digits. Tests compare each with the
# plain ``finditer`` over the whole text.
_PHONE_REGIONS = re.compile(r"[\d(+][\d .()+/-]{7,}")
_CARD_REGIONS = re.compile(r"\d[\d ./-]{12,}")
_IBAN_STARTS = re.compile(r"[A-Za-z][A-Za-z]\d\d")  # spelled out: scans twice as fast


def _number_regions(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of every ``_PHONE_REGIONS`` match: the only places numbers can hide."""
    return [m.span() for m in _PHONE_REGIONS.finditer(text)]


def _search_from(
    pattern: re.Pattern[str], text: str, start: int, end: int
) -> Iterator[re.Match[str]]:
    """``pattern.finditer`` over ``[start, end)``, a maximal run of the characters a match is
    made of: the search sees one character past it, so a lookahead sees what follows (a
    lookbehind always sees what precedes)."""
    return pattern.finditer(text, start, min(end + 1, len(text)))


def _iban_matches(text: str) -> Iterator[re.Match[str]]:
    """``_IBAN.finditer(text)``, trying only where two letters and two digits start (two such
    starts are never closer than four characters, so none is missed)."""
    end = 0
    for start in _IBAN_STARTS.finditer(text):
        if start.start() < end:
            continue
        match = _IBAN.match(text, start.start())
        if match is not None:
            end = match.end()
            yield match


def _on_lines_with(
    pattern: re.Pattern[str], needles: tuple[str, ...], text: str
) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose matches (lookarounds included) never cross
    a newline and always contain one of ``needles``: only the lines holding a needle are
    searched, in text order."""
    lines: set[tuple[int, int]] = set()
    for needle in needles:
        at = text.find(needle)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end == -1 else end
            lines.add((start, end))
            at = text.find(needle, end)
    for start, end in sorted(lines):
        yield from pattern.finditer(text, start, end)


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum used by payment card numbers."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """ISO 13616 mod-97 check of an IBAN (spaces ignored)."""
    compact = candidate.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    rotated = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rotated)) % 97 == 1


def _cards(text: str, numbers: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Card numbers: 13-19 Luhn-valid digits, unspaced or in groups of 3-6 digits separated by
    spaces, dashes, dots or slashes.

    Inside a longer run of numbers every start group is tried, so a card next to other numbers
    (``ref 12 4111 1111 1111 1111``) is still found.
    """
    for run in _digit_runs(text, numbers):
        groups = [
            (m.start() + run.start(), m.end() + run.start()) for m in _DIGITS.finditer(run.group())
        ]
        i = 0
        while i < len(groups):
            last = _longest_card_from(text, groups, i)
            if last is None:
                i += 1
                continue
            yield groups[i][0], groups[last][1]
            i = last + 1


_DIGITS = re.compile(r"\d+")


def _digit_runs(text: str, numbers: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The ``_DIGIT_RUN`` matches of ``text`` long enough to hold a card (13 characters)."""
    for start, end in numbers:
        if end - start < 13:
            continue
        for region in _CARD_REGIONS.finditer(text, start, end):
            for run in _search_from(_DIGIT_RUN, text, region.start(), region.end()):
                if run.end() - run.start() >= 13:  # fewer than 13 digits: no card hides in it
                    yield run


def _longest_card_from(text: str, groups: list[tuple[int, int]], first: int) -> int | None:
    """Index of the last group of the longest Luhn-valid card starting at group ``first``."""
    single = text[groups[first][0] : groups[first][1]]
    if 13 <= len(single) <= 19:
        return first if luhn_valid(single) else None
    best: int | None = None
    digits = ""
    for last in range(first, len(groups)):
        group = text[groups[last][0] : groups[last][1]]
        digits += group
        if not 3 <= len(group) <= 6 or len(digits) > 19:
            break
        if len(digits) >= 13 and luhn_valid(digits):
            best = last
    return best


def _phones(text: str, numbers: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Phone numbers: ``+`` and 8-15 digits, North-American ``(555) 123-4567`` shapes, or
    national numbers with a leading ``0`` in groups of at least two digits (10-12 digits)."""
    matches = (m for start, end in numbers for m in _search_from(_PHONE, text, start, end))
    for match in matches:
        token = match.group()
        if len(token) < 8:  # every accepted shape has at least 8 digits
            continue
        groups = _DIGITS.findall(token)
        digits = sum(len(g) for g in groups)
        if token.startswith("+"):
            ok = 8 <= digits <= 15
        elif _NANP.fullmatch(token):
            ok = True
        else:
            ok = (
                token.lstrip("(").startswith("0")
                and 10 <= digits <= 12
                and len(groups) >= 2
                and all(len(g) >= 2 for g in groups)
            )
        if ok:
            yield match.span()


def _ibans(text: str) -> Iterator[tuple[int, int]]:
    """IBANs, compact or in groups of four; trailing groups are dropped until mod-97 passes."""
    for match in _iban_matches(text):
        token = match.group()
        while token:
            if iban_valid(token):
                yield match.start(), match.start() + len(token)
                break
            cut = token.rfind(" ")
            token = token[:cut] if cut > 4 else ""


def _emails(text: str) -> Iterator[tuple[int, int]]:
    """E-mail addresses (only texts with an ``@`` are scanned)."""
    for match in _on_lines_with(_EMAIL, ("@",), text):
        yield match.span()


def scan(text: str) -> PiiScan:
    """Find every PII span in ``text``; a token matched by several kinds counts once."""
    numbers = _number_regions(text)
    # Earlier kinds win when spans overlap, so one token is counted once, as its most specific
    # kind.
    # The password of ``https://user:pw@host.example`` is a secret first, so the e-mail address
    # the detector sees in ``pw@host.example`` is not counted (nor, by default, masked).
    raw = [PiiFinding(start, end, PiiKind.SECRET, rule) for start, end, rule in find_secrets(text)]
    detected = [
        (PiiKind.CARD, _cards(text, numbers)),
        (PiiKind.IBAN, _ibans(text)),
        (PiiKind.EMAIL, _emails(text)),
        (PiiKind.PHONE, _phones(text, numbers)),
    ]
    raw += [PiiFinding(start, end, kind) for kind, spans in detected for start, end in spans]
    kept = _first_of_overlapping(raw)
    counts = Counter(f.label for f in kept)
    spans = merge_spans((f.start, f.end) for f in raw)
    matches = tuple(sorted(raw))
    return PiiScan(tuple(kept), tuple(spans), dict(sorted(counts.items())), matches)


def _first_of_overlapping(findings: list[PiiFinding]) -> list[PiiFinding]:
    """The findings that overlap none before them in the list, in text order.

    The kept ones never overlap each other, so ordered by start they are ordered by end too,
    and a new one need only be checked against its two neighbours: no quadratic loop on a file
    of thousands of findings."""
    kept: list[PiiFinding] = []
    starts: list[int] = []
    for finding in findings:
        at = bisect.bisect_left(starts, finding.start)
        if at > 0 and kept[at - 1].end > finding.start:
            continue
        if at < len(kept) and kept[at].start < finding.end:
            continue
        kept.insert(at, finding)
        starts.insert(at, finding.start)
    return kept


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping or touching ``[start, end)`` spans."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def redact(text: str, spans: Iterable[tuple[int, int]], mask: str = DEFAULT_MASK) -> str:
    """Replace every character inside the spans with ``mask``; the length is unchanged."""
    if len(mask) != 1:
        raise ValueError("mask must be a single character")
    pieces: list[str] = []
    cursor = 0
    for start, end in merge_spans(spans):
        pieces.append(text[cursor:start])
        pieces.append(mask * (end - start))
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def redact_pii(text: str, mask: str = DEFAULT_MASK) -> tuple[str, PiiScan]:
    """Scan ``text`` and mask every character of every finding, however findings overlap."""
    found = scan(text)
    return redact(text, found.spans, mask), found
