"""Value objects and input rules shared by the whole domain."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from domain.errors import InvalidArgument

MAX_BODY_BYTES = 2 * 1024 * 1024
"""Largest accepted version body, in UTF-8 bytes (2 MiB)."""
MAX_TITLE_CHARS = 300
MAX_SUMMARY_CHARS = 2_000
MAX_RATIONALE_CHARS = 10_000

MAX_PURPOSE_CHARS = 500
"""Longest ``purpose`` a caller may state (recorded with every read and write)."""

# The input rules as regular expressions. They are the one definition: the validators below
# match them with ``re.fullmatch`` and the REST adapter publishes them in OpenAPI, so keep them
# plain ECMA-262 (JSON Schema's dialect): no lookbehind, no inline flags, no Python-only syntax.
_SEGMENT_RULE = r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}"
SEGMENT_PATTERN = f"^{_SEGMENT_RULE}$"
"""One segment of a repository id (tenant, organization or repository)."""
REPOSITORY_PATTERN = f"^{_SEGMENT_RULE}/{_SEGMENT_RULE}/{_SEGMENT_RULE}$"
"""``TENANT/ORG/REPO``."""
SCOPE_PATTERN = rf"^(\*|{_SEGMENT_RULE}(/{_SEGMENT_RULE}){{0,2}})$"
"""A grant's scope: ``*``, ``TENANT``, ``TENANT/ORG`` or ``TENANT/ORG/REPO``."""
PRINCIPAL_RULE = r"(user|agent|service):[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}"
"""A principal (``user:ID``, ``agent:ID`` or ``service:ID``), unanchored."""
PRINCIPAL_PATTERN = f"^{PRINCIPAL_RULE}$"
TYPE_KEY_PATTERN = r"^[a-z][a-z0-9_-]*:[a-z0-9_.-]+$"
"""A namespaced key such as ``ameide:doc``."""


def id_pattern(prefix: str) -> str:
    """The shape of an opaque id with ``prefix`` (``el``, ``ver``, ``prop``, ``tok``, …)."""
    return f"^{prefix}_[0-9a-f]{{8,64}}$"


BLANK_CHARACTERS = (
    "\\u0009-\\u000d\\u001c-\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028-\\u2029"
    "\\u202f\\u205f\\u3000"
)
"""A regex class body of every character ``str.strip()`` removes (``str.isspace``), written out:
scanning all 1.1 M code points at import cost every command ~0.2 s of start-up. A unit test
derives it again from ``str.isspace`` on the running Python."""


NOT_BLANK_PATTERN = f"[^{BLANK_CHARACTERS}]"
"""Unanchored: the text has a character ``str.strip()`` keeps (``validate_text`` requires one)."""
BLANK_PATTERN = f"^[{BLANK_CHARACTERS}]*$"
"""The whole text is blank (``str.strip()`` leaves nothing)."""
BODY_PATTERN = f"^[^\\u0000]*[^\\u0000{BLANK_CHARACTERS}][^\\u0000]*$"
"""A version body: not blank and no NUL (see :func:`validate_body`)."""

_SEGMENT = re.compile(SEGMENT_PATTERN)
_PRINCIPAL = re.compile(PRINCIPAL_PATTERN)
_TYPE_KEY = re.compile(TYPE_KEY_PATTERN)
_SCOPE = re.compile(SCOPE_PATTERN)


class SourceKind(StrEnum):
    """Trust marker of an element."""

    CANONICAL = "CANONICAL"
    INGESTED_EVIDENCE = "INGESTED_EVIDENCE"
    PROPOSAL = "PROPOSAL"
    DECISION = "DECISION"


class ElementKind(StrEnum):
    """What an element is."""

    DOCUMENT = "DOCUMENT"
    MODEL = "MODEL"
    VIEW = "VIEW"
    NOTE = "NOTE"


class Classification(StrEnum):
    """Sensitivity, ordered public < internal < confidential < restricted."""

    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"

    @property
    def rank(self) -> int:
        """Position in the order (0 = public)."""
        return _CLASSIFICATION_ORDER.index(self)

    @classmethod
    def parse(cls, value: str) -> Classification:
        """Parse a classification name or raise ``InvalidArgument`` listing the valid ones."""
        try:
            return cls(value.strip().lower())
        except ValueError:
            allowed = ", ".join(c.value for c in _CLASSIFICATION_ORDER)
            raise InvalidArgument(
                f"unknown classification {value!r}; use one of: {allowed}", field="classification"
            ) from None


_CLASSIFICATION_ORDER = list(Classification)


def higher_classification(a: Classification, b: Classification | None) -> Classification:
    """The more sensitive of two levels (``None`` is no level)."""
    return a if b is None or a.rank >= b.rank else b


@dataclass(frozen=True, order=True)
class RepoRef:
    """``tenant/organization/repository`` — the scope of every operation."""

    tenant_id: str
    organization_id: str
    repository_id: str

    @classmethod
    def parse(cls, text: str) -> RepoRef:
        """Parse ``TENANT/ORG/REPO`` with a clear error for anything else."""
        parts = text.strip().split("/") if isinstance(text, str) else []
        if len(parts) != 3 or not all(_SEGMENT.fullmatch(p) for p in parts):
            raise InvalidArgument(
                f"malformed repository {text!r}: expected TENANT/ORG/REPO, each segment 1-63 of "
                "letters, digits, '.', '_' or '-', starting with a letter or digit",
                field="repository",
            )
        return cls(parts[0], parts[1], parts[2])

    @property
    def key(self) -> str:
        """The canonical string form, used as the storage key."""
        return f"{self.tenant_id}/{self.organization_id}/{self.repository_id}"

    @property
    def org_key(self) -> str:
        """``tenant/org`` of this repository."""
        return f"{self.tenant_id}/{self.organization_id}"

    def __str__(self) -> str:
        return self.key


def validate_principal(value: str, field: str = "principal") -> str:
    """Return ``value`` if it is ``user:…``, ``agent:…`` or ``service:…``."""
    if not isinstance(value, str) or not _PRINCIPAL.fullmatch(value):
        raise InvalidArgument(
            f"malformed principal {value!r}: expected user:ID, agent:ID or service:ID", field=field
        )
    return value


def principal_type(principal_id: str) -> str:
    """``user`` / ``agent`` / ``service`` of a principal id."""
    return principal_id.split(":", 1)[0]


def validate_type_key(value: str) -> str:
    """A namespaced key such as ``ameide:doc``."""
    if not isinstance(value, str) or not _TYPE_KEY.fullmatch(value):
        raise InvalidArgument(
            f"malformed type_key {value!r}: expected namespace:name, e.g. ameide:doc",
            field="type_key",
        )
    return value


def validate_id(value: str, prefix: str, what: str) -> str:
    """Check the shape of an opaque id; a malformed one can never exist, so it is NOT_FOUND-safe."""
    if not isinstance(value, str) or not re.fullmatch(id_pattern(prefix), value):
        raise InvalidArgument(f"malformed {what} id {value!r}", field=what)
    return value


def new_id(prefix: str) -> str:
    """A new opaque, globally unique id such as ``el_1f…``."""
    return f"{prefix}_{secrets.token_hex(12)}"


def normalize_line_endings(text: str) -> str:
    """CRLF and CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalized_body(text: str) -> str:
    """Line endings normalized, trailing whitespace trimmed on every line and at the end."""
    lines = [line.rstrip() for line in normalize_line_endings(text).split("\n")]
    return "\n".join(lines).rstrip("\n")


def content_sha256(body: str) -> str:
    """SHA-256 of the normalized body, hex."""
    return hashlib.sha256(normalized_body(body).encode("utf-8")).hexdigest()


def require_unicode(value: str, field: str) -> str:
    """``value`` if it is valid Unicode text: a lone surrogate (``\\ud800`` in JSON) is not a
    character, cannot be stored or encoded, and is refused as ``INVALID_ARGUMENT``."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(
            f"{field} is not valid Unicode text (it holds a lone surrogate)", field=field
        ) from None
    return value


def lone_surrogate_at(value: Any, field: str) -> str | None:
    """The path (``metadata.tags[0]``, ``metadata.<key>``) of the first text in a JSON-like
    ``value`` — a string, or any key or string inside its dicts and lists — that holds a lone
    surrogate, or ``None`` when all of it is valid Unicode text."""
    if isinstance(value, str):
        return None if _is_unicode(value) else field
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not _is_unicode(key):
                return f"{field} key {key!r}"
            found = lone_surrogate_at(item, f"{field}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = lone_surrogate_at(item, f"{field}[{index}]")
            if found is not None:
                return found
    return None


def require_unicode_tree(value: Any, field: str) -> Any:
    """``value`` if every text in it is valid Unicode (see :func:`lone_surrogate_at`), else
    ``INVALID_ARGUMENT`` naming the place: nothing that cannot be encoded may be stored."""
    where = lone_surrogate_at(value, field)
    if where is not None:
        raise InvalidArgument(
            f"{where} is not valid Unicode text (it holds a lone surrogate)", field=where
        )
    return value


_LONE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` (a string, or JSON-like dicts and lists) with every lone surrogate replaced by
    U+FFFD: how text that should never have been stored is still served, printed or encoded."""
    if isinstance(value, str):
        return value if _is_unicode(value) else _LONE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {replace_lone_surrogates(k): replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [replace_lone_surrogates(item) for item in value]
    return value


def _is_unicode(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def validate_body(body: str, field: str = "body") -> str:
    """Non-empty, valid text, at most ``MAX_BODY_BYTES``; returns it with LF line endings."""
    if not isinstance(body, str):
        raise InvalidArgument(f"{field} must be text", field=field)
    require_unicode(body, field)
    size = len(body.encode("utf-8", errors="surrogatepass"))
    if size > MAX_BODY_BYTES:
        raise InvalidArgument(
            f"{field} is {size} bytes; the limit is {MAX_BODY_BYTES} bytes (2 MiB)", field=field
        )
    if "\x00" in body:
        raise InvalidArgument(f"{field} contains NUL characters", field=field)
    if not body.strip():
        raise InvalidArgument(f"{field} is empty", field=field)
    return normalize_line_endings(body)


def validate_text(value: str | None, field: str, limit: int, *, required: bool = True) -> str:
    """A single piece of free text: trimmed, within ``limit`` characters."""
    text = require_unicode((value or "").strip(), field)
    if required and not text:
        raise InvalidArgument(f"{field} is required", field=field)
    if len(text) > limit:
        raise InvalidArgument(
            f"{field} is {len(text)} characters; the limit is {limit}", field=field
        )
    return text


def validate_metadata(value: object, field: str = "metadata") -> dict[str, Any]:
    """A JSON object (string keys, JSON values only, every key and text valid Unicode: a lone
    surrogate is refused, naming its place); ``None`` is the empty object."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise InvalidArgument(f"{field} must be a JSON object with string keys", field=field)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"{field} must hold JSON values only: {exc}", field=field) from None
    return dict(require_unicode_tree(value, field))


def validate_instant(value: datetime | None, field: str) -> datetime | None:
    """A timezone-aware instant (``as_of``, ``since``, …); a naive one is ambiguous."""
    if value is None:
        return None
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise InvalidArgument(
            f"{field} must be a timezone-aware instant, e.g. 2026-01-01T00:00:00Z", field=field
        )
    return value


def parse_instant(text: str, name: str, *, field: str, malformed: str) -> datetime:
    """The one reading of an instant a client sends (``as_of``, ``since``, ``valid_at``, …).

    ISO-8601 / RFC 3339 with ``Z`` or an offset, surrounding blanks ignored, → an aware datetime
    in UTC. **A time without a zone is refused** (``INVALID_ARGUMENT``, "``name`` needs a time
    zone"): it means a different instant on every machine, and a date alone is no exception.
    ``malformed`` words an unreadable value for the surface that asked (it is formatted with
    ``name`` and ``text``); ``field`` goes into the error's details.
    """
    try:
        value = datetime.fromisoformat(text.strip())  # Python 3.11 reads "Z" itself
    except ValueError:
        raise InvalidArgument(malformed.format(name=name, text=text), field=field) from None
    return require_zone(value, name, field=field)


def require_zone(value: datetime, name: str, *, field: str) -> datetime:
    """``value`` in UTC, or ``InvalidArgument`` when it has no zone (see :func:`parse_instant`)."""
    if value.utcoffset() is None:
        raise InvalidArgument(f"{name} needs a time zone (Z or an offset)", field=field)
    return value.astimezone(UTC)


def parse_scope(scope: str) -> str:
    """A grant's scope: ``*``, ``TENANT``, ``TENANT/ORG`` or ``TENANT/ORG/REPO``
    (:data:`SCOPE_PATTERN`; surrounding blanks ignored)."""
    text = scope.strip() if isinstance(scope, str) else ""
    if _SCOPE.fullmatch(text):
        return text
    raise InvalidArgument(
        f"malformed scope {scope!r}: expected *, TENANT, TENANT/ORG or TENANT/ORG/REPO",
        field="scope",
    )


def describe_problem(error: Mapping[str, Any], where: str = "") -> str:
    """One validation problem (an entry of pydantic's ``errors()``) as ``location: message``.

    ``where`` stands for an empty location (nothing is prefixed when it is empty too).
    """
    place = ".".join(str(part) for part in error.get("loc", ()) if part != "__root__") or where
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{place}: {message}" if place else message
