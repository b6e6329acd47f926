"""YAML front matter: split it off a markdown text and validate it into version metadata.

Front matter is untrusted input. It is parsed with ``yaml.safe_load``, converted to plain JSON
values under a node and depth budget (alias bombs and self-referencing anchors are refused), and
the well-known fields are validated with Pydantic; unknown fields are kept as they are.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from domain.values import lone_surrogate_at

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

_MAX_CHARS = 64 * 1024  # front matter is metadata; a huge block is an attack or a mistake
_MAX_NODES = 10_000
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: much faster
_MAX_DEPTH = 32
_OPENERS = ("---",)
_CLOSERS = ("---", "...")


class FrontMatterError(ValueError):
    """The front matter is present but unusable (unclosed, invalid YAML, wrong field types)."""


class FrontMatter(BaseModel):
    """The front matter fields the product knows about; any other field is kept verbatim."""

    model_config = ConfigDict(extra="allow")

    title: str | None = None
    status: str | None = None
    supersedes: list[str] | None = None
    superseded_by: list[str] | None = None
    owners: list[str] | None = None
    effective_from: str | None = None
    effective_to: str | None = None
    tags: list[str] | None = None
    _repaired: bool = PrivateAttr(default=False)

    @field_validator("title", "status", mode="before")
    @classmethod
    def _scalar_to_text(cls, value: Any) -> Any:
        return _scalar_text(value)

    @field_validator("supersedes", "superseded_by", "owners", "tags", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        if isinstance(value, str) and info.field_name == "tags":
            return [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list):
            value = [value]
        return [_scalar_text(item) for item in value]

    @field_validator("effective_from", "effective_to", mode="before")
    @classmethod
    def _iso_instant(cls, value: Any) -> Any:
        if value is None:
            return None
        text = str(value)
        try:
            dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError("expected an ISO 8601 date or date-time") from None
        return text

    @property
    def is_superseded(self) -> bool:
        """``status: superseded`` or a non-empty ``superseded_by`` demotes the element."""
        status = (self.status or "").strip().lower()
        return status == "superseded" or bool(self.superseded_by)

    def to_metadata(self) -> dict[str, JsonValue]:
        """Version metadata: the fields that were given, extras kept, plus ``superseded``."""
        metadata: dict[str, JsonValue] = self.model_dump(exclude_unset=True)
        metadata["superseded"] = self.is_superseded
        if self._repaired:
            metadata["front_matter_repaired"] = True
        return metadata


def split_front_matter(text: str) -> tuple[str | None, str]:
    """Split normalized ``text`` into (front matter YAML or ``None``, the rest).

    Front matter is a first line ``---``, YAML, then a line ``---`` or ``...``.
    """
    lines = text.split("\n")
    if not lines or lines[0] not in _OPENERS:
        return None, text
    for index in range(1, len(lines)):
        if lines[index] in _CLOSERS:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise FrontMatterError("front matter starts with '---' but is never closed")


def parse_front_matter(raw: str | None) -> FrontMatter:
    """Parse and validate front matter YAML; ``None`` or an empty block gives empty front matter."""
    if raw is None or not raw.strip():
        return FrontMatter()
    if len(raw) > _MAX_CHARS:
        raise FrontMatterError(f"front matter is longer than {_MAX_CHARS} characters")
    repaired = False
    try:
        loaded = _load_yaml(raw)
    except FrontMatterError:
        fixed = _quote_colon_values(raw)
        if fixed is None:
            raise
        loaded, repaired = _load_yaml(fixed), True
    if loaded is None:
        return FrontMatter()
    if not isinstance(loaded, dict):
        raise FrontMatterError(f"front matter must be a mapping, not {type(loaded).__name__}")
    data = _to_json(loaded, _Budget(), 0)
    where = lone_surrogate_at(data, "front_matter")
    if where is not None:  # a YAML "\ud800" escape: it could be neither stored nor served
        raise FrontMatterError(f"{where} is not valid Unicode text (it holds a lone surrogate)")
    try:
        front = FrontMatter.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise FrontMatterError(f"front matter field {field!r}: {first['msg']}") from None
    front._repaired = repaired
    return front


def _load_yaml(raw: str) -> Any:
    try:
        return yaml.load(raw, Loader=_LOADER)  # noqa: S506 - a safe loader, C or Python
    except RecursionError:
        raise FrontMatterError("front matter is nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # a timestamp-looking value that is no date
        raise FrontMatterError(f"front matter holds an impossible date or number: {exc}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        raise FrontMatterError(f"front matter is not valid YAML{line}") from None


_TOP_LEVEL_PLAIN = re.compile(r"^([A-Za-z0-9_][\w.-]*):[ \t]+([^\s\"'\[\]{}|>&*!%@`#,?:-].*)$")


def _quote_colon_values(raw: str) -> str | None:
    """The front matter with the most common authoring slip fixed, or ``None`` if it has none.

    ``title: 496 – EDA (v3: Kafka)`` is invalid YAML: an unquoted value may not contain ``": "``.
    Editors and renderers mostly shrug it off, so such top-level plain values are quoted (and
    the version metadata says ``front_matter_repaired``); anything else stays an error.
    """
    lines = raw.split("\n")
    changed = False
    for index, line in enumerate(lines):
        match = _TOP_LEVEL_PLAIN.match(line.rstrip())
        if match is None:
            continue
        value = match.group(2)
        if ": " not in value and not value.endswith(":"):
            continue
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        lines[index] = f'{match.group(1)}: "{escaped}"'
        changed = True
    return "\n".join(lines) if changed else None


class _Budget:
    def __init__(self) -> None:
        self.nodes = _MAX_NODES

    def spend(self) -> None:
        """Account for one more value; refuse once the budget is used up."""
        self.nodes -= 1
        if self.nodes < 0:
            raise FrontMatterError("front matter is too large or self-referencing")


def _to_json(value: Any, budget: _Budget, depth: int) -> JsonValue:
    """Copy YAML values into JSON values; dates become ISO text, odd floats text."""
    budget.spend()
    if depth > _MAX_DEPTH:
        raise FrontMatterError("front matter is nested too deeply")
    if isinstance(value, dict):
        return {str(k): _to_json(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_to_json(v, budget, depth + 1) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # e.g. bytes from !!binary


def _scalar_text(value: Any) -> Any:
    """Numbers and booleans written in YAML become text; anything else is left to validation."""
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return value
