"""One file's content pipeline: bytes → text → front matter → signals → route → PII policy.

The stored body is the whole normalized file, front matter included, so its hash changes when
either the text or the front matter changes. When the policy masks something (``protect``, the
default: secrets, payment cards, IBANs; ``redact``: every finding), the masked text is what
everything else (metadata, title, links) is derived from, so no finding leaks through them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from ingest import lifecycle
from ingest.front_matter import FrontMatter, FrontMatterError, JsonValue
from ingest.markdown import (
    ContentError,
    LinkRef,
    content_hash,
    count_words,
    decode_text,
    extract_links,
    headings,
    normalize_body,
    outline,
    parse_front_matter,
    split_front_matter,
    title_for,
)
from ingest.routing.model import Classification, Policy
from ingest.routing.rules import RoutableFile, RouteDecision, RouteError, RouteExplanation, Router
from ingest.screening.pii import PROTECTED_KINDS, PiiScan, kind_of, redact, scan


class SkipCode(StrEnum):
    """Why a file was not ingested."""

    UNSAFE_PATH = "unsafe_path"
    PII_PATH = "pii_path"  # the path itself holds personal data: never stored, shown masked
    SYMLINK = "symlink"
    SUBMODULE = "submodule"
    TOO_LARGE = "too_large"
    BINARY = "binary"
    UNDECODABLE = "undecodable"
    FRONT_MATTER = "front_matter"
    ROUTING = "routing"
    REJECTED = "rejected"
    READ_ERROR = "read_error"
    UNPROCESSABLE = "unprocessable"  # an unexpected failure; reported, never fatal to the run


@dataclass(frozen=True)
class Skip:
    """A file left out of the run, with a machine code and a human reason."""

    code: SkipCode
    reason: str
    pii_counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedDocument:
    """A file ready to store: everything a new element version needs, plus routing results.

    ``tags`` are the front matter tags then the routing tags (also in ``metadata["tags"]``).
    """

    title: str
    body: str
    content_sha256: str
    metadata: dict[str, JsonValue]
    decision: RouteDecision
    tags: tuple[str, ...]
    links: tuple[LinkRef, ...]
    pii_counts: dict[str, int] = field(default_factory=dict)

    @property
    def classification(self) -> Classification:
        """The routed classification."""
        return self.decision.classification


@dataclass(frozen=True)
class _Parsed:
    text: str
    content: str
    front: FrontMatter
    found: PiiScan
    routable: RoutableFile
    links: tuple[LinkRef, ...]
    headings: list[tuple[int, str]]


def _parse(path: str, data: bytes) -> _Parsed | Skip:
    try:
        text = normalize_body(decode_text(data))
        raw_front, content = split_front_matter(text)
        front = parse_front_matter(raw_front)
    except ContentError as exc:
        return Skip(SkipCode(exc.code), str(exc))
    except FrontMatterError as exc:
        return Skip(SkipCode.FRONT_MATTER, str(exc))
    found = scan(text)
    found_links, found_headings = outline(path, content)
    links = tuple(found_links)
    signals = _signals(text, content, data, found, links, found_headings)
    routable = RoutableFile(path, front.model_dump(exclude_unset=True), signals)
    return _Parsed(text, content, front, found, routable, links, found_headings)


def routable_file(path: str, data: bytes) -> RoutableFile | Skip:
    """What routing rules see of a file: path, front matter and signals (or why it is skipped)."""
    parsed = _parse(path, data)
    return parsed if isinstance(parsed, Skip) else parsed.routable


def explain_file(path: str, data: bytes, router: Router) -> RouteExplanation | Skip:
    """Which rule routes this file and why, for ``ameide ingest explain``-style tooling."""
    routable = routable_file(path, data)
    return routable if isinstance(routable, Skip) else router.explain(routable)


def prepare_document(path: str, data: bytes, router: Router, mask: str) -> PreparedDocument | Skip:
    """Run one file's bytes through decoding, parsing, routing and the PII barrier."""
    parsed = _parse(path, data)
    if isinstance(parsed, Skip):
        return parsed
    found = parsed.found
    try:
        decision = router.route(parsed.routable)
    except RouteError as exc:
        return Skip(SkipCode.ROUTING, f"routing: {exc}")
    if decision.policy is Policy.REJECT:
        return Skip(SkipCode.REJECTED, _rejection(decision, found), dict(found.counts))
    masked = _masked(found, decision.policy)
    if masked.detected:
        text = redact(parsed.text, masked.spans, mask)
        return _redacted(path, text, decision, found, masked, mask)
    return _document(
        path,
        parsed.text,
        parsed.front,
        parsed.content,
        decision,
        found,
        (parsed.links, parsed.headings),
    )


def _masked(found: PiiScan, policy: Policy) -> PiiScan:
    """What ``policy`` masks of what the scan found (nothing for ``store``)."""
    if policy is Policy.REDACT:
        return found
    if policy is Policy.PROTECT:
        return found.only(PROTECTED_KINDS)
    return PiiScan()


def _redacted(
    path: str, text: str, decision: RouteDecision, found: PiiScan, masked: PiiScan, mask: str
) -> PreparedDocument | Skip:
    """Rebuild everything from the masked text, so nothing is derived from the original."""
    try:
        raw_front, content = split_front_matter(text)
        front = parse_front_matter(raw_front)
    except FrontMatterError as exc:
        return Skip(SkipCode.FRONT_MATTER, f"front matter is unusable once redacted: {exc}")
    document = _document(path, text, front, content, decision, found)
    # a file-name title is outside the scanned text: it is masked by the same policy
    in_title = _masked(scan(document.title), decision.policy)
    title = redact(document.title, in_title.spans, mask)
    redacted: dict[str, JsonValue] = dict(masked.counts.items())
    metadata = {**document.metadata, "pii_redacted": redacted}
    return replace(document, title=title, metadata=metadata)


def _document(
    path: str,
    text: str,
    front: FrontMatter,
    content: str,
    decision: RouteDecision,
    found: PiiScan,
    derived: tuple[tuple[LinkRef, ...], list[tuple[int, str]]] | None = None,
) -> PreparedDocument:
    """The document; ``derived`` are the links and headings of ``content`` if already known
    (never for redacted text, whose links and headings must come from the masked text)."""
    links, found_headings = derived or (tuple(extract_links(path, content)), headings(content))
    metadata = front.to_metadata()
    stated = lifecycle.derive(front.model_dump(exclude_unset=True), content).metadata()
    metadata.update(stated)  # type: ignore[arg-type]
    own_tags = front.tags or []
    tags = tuple(dict.fromkeys([*own_tags, *decision.tags]))
    if tags:
        metadata["tags"] = list(tags)
    return PreparedDocument(
        title=title_for(front, content, path, found_headings),
        body=text,
        content_sha256=content_hash(text),
        metadata=metadata,
        decision=decision,
        tags=tags,
        links=links,
        pii_counts=dict(found.counts),
    )


def _signals(
    text: str,
    content: str,
    data: bytes,
    found: PiiScan,
    links: tuple[LinkRef, ...],
    found_headings: list[tuple[int, str]],
) -> dict[str, JsonValue]:
    """Computed values rules can test as ``signals.<name>``."""
    return {
        "word_count": count_words(content),
        "heading_count": len(found_headings),
        "line_count": text.count("\n") + 1 if text else 0,
        "link_count": len(links),
        "size_bytes": len(data),
        "pii_detected": found.detected,
        "pii_count": len(found.findings),
        # each label and its kind: a rule on ``contains: secret`` catches ``secret:jwt`` too
        "pii_kinds": list[JsonValue](sorted({*found.counts, *map(kind_of, found.counts)})),
    }


def _rejection(decision: RouteDecision, found: PiiScan) -> str:
    by = decision.override_rule or decision.rule or "defaults"
    detail = ", ".join(f"{kind}: {n}" for kind, n in found.counts.items())
    return f"policy reject by rule {by}" + (f" (PII found: {detail})" if detail else "")
