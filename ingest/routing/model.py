"""The ``routing.yaml`` schema (Pydantic), validated on load with errors that name the rule.

A rule file::

    version: 1
    defaults: {classification: internal, policy: store, tags: [backlog]}
    rules:
      - name: secrets-never-stored          # compliance rule: always wins when it matches
        override: true
        match: {all: [{field: signals.pii_kinds, contains: secret}]}
        actions: {policy: reject}
      - name: security-team
        priority: 10                        # higher first; ties keep file order
        match:
          any:
            - {field: path, glob: "backlog/security/**"}
            - {field: front_matter.tags, contains: security}
          none:
            - {field: front_matter.status, in: [draft]}
        actions:
          repository: "team-{front_matter.owner}"
          classification: confidential
          tags: [security]

A condition is either a field test (``field`` plus exactly one operator) or a group with any of
``all`` / ``any`` / ``none`` (several keys in one group are AND-ed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from ingest.screening.pii import PROTECTED_KINDS, kind_of

SIGNALS = frozenset(
    {"word_count", "heading_count", "line_count", "link_count", "size_bytes"}
    | {"pii_detected", "pii_count", "pii_kinds"}
)
NUMERIC_SIGNALS = frozenset(
    {"word_count", "heading_count", "line_count", "link_count", "size_bytes", "pii_count"}
)
_FIELD = re.compile(r"^(path|front_matter(\.[A-Za-z0-9_-]+)+|signals\.[a-z_]+)$")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
OPERATORS = ("equals", "in_", "gt", "gte", "lt", "lte", "glob", "contains", "present", "absent")


class Classification(StrEnum):
    """Who may see an element: ``public`` < ``internal`` < ``confidential`` < ``restricted``."""

    PUBLIC = "public"
    INTERNAL = "internal"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


class Policy(StrEnum):
    """What ingest does with a file: keep it with secrets, payment cards and IBANs masked (the
    default, ``protect``), keep it as is (``store``: someone chose to), keep it with every PII
    finding masked (``redact``), or skip it (``reject``)."""

    PROTECT = "protect"
    STORE = "store"
    REDACT = "redact"
    REJECT = "reject"

    def masked(self, counts: Mapping[str, int]) -> dict[str, int]:
        """Of a file's findings per label (``secret:aws``), those this policy masks."""
        if self is Policy.REDACT:
            return dict(counts)
        if self is Policy.PROTECT:
            protected = {kind.value for kind in PROTECTED_KINDS}
            return {label: n for label, n in counts.items() if kind_of(label) in protected}
        return {}


def check_field_ref(ref: str) -> str:
    """Validate a field reference: ``path``, ``front_matter.<key>[.<key>…]``, ``signals.<name>``."""
    if not _FIELD.match(ref):
        raise ValueError(f"unknown field {ref!r} (use path, front_matter.<key> or signals.<name>)")
    if ref.startswith("signals.") and ref.removeprefix("signals.") not in SIGNALS:
        raise ValueError(f"unknown signal {ref!r}; known: {', '.join(sorted(SIGNALS))}")
    return ref


def parse_template(template: str) -> list[str | tuple[str]]:
    """Split ``"team-{front_matter.owner}"`` into literal text and ``(field_ref,)`` parts.

    ``{{`` and ``}}`` are literal braces; a lone brace or an unknown field is an error.
    """
    parts: list[str | tuple[str]] = []
    cursor = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append(template[cursor : match.start()])
        token = match.group()
        if token in ("{{", "}}"):
            parts.append(token[0])
        elif match.group(1) is None:
            raise ValueError(f"unbalanced {token!r} in template {template!r}")
        else:
            parts.append((check_field_ref(match.group(1).strip()),))
        cursor = match.end()
    parts.append(template[cursor:])
    return [p for p in parts if p != ""]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class FieldCondition(_Strict):
    """A test of one field with exactly one operator."""

    field: str
    equals: Any = None
    in_: list[Any] | None = Field(default=None, alias="in")
    gt: int | float | str | None = None
    gte: int | float | str | None = None
    lt: int | float | str | None = None
    lte: int | float | str | None = None
    glob: str | None = None
    contains: Any = None
    present: bool | None = None
    absent: bool | None = None

    @field_validator("field")
    @classmethod
    def _known_field(cls, value: str) -> str:
        return check_field_ref(value)

    @model_validator(mode="after")
    def _one_operator(self) -> FieldCondition:
        given = [op for op in OPERATORS if op in self.model_fields_set]
        if len(given) != 1:
            names = ", ".join(op.rstrip("_") for op in OPERATORS)
            raise ValueError(f"needs exactly one operator of {names}; got {len(given)}")
        numeric = self.field.removeprefix("signals.") in NUMERIC_SIGNALS
        if numeric and given[0] in ("gt", "gte", "lt", "lte") and isinstance(self.operand, str):
            raise ValueError(f"{self.field} is a number; {given[0]} needs a number")
        return self

    @property
    def operator(self) -> str:
        """The operator's name as written in YAML (``in``, not ``in_``)."""
        return next(op for op in OPERATORS if op in self.model_fields_set).rstrip("_")

    @property
    def operand(self) -> Any:
        """The operator's argument."""
        return getattr(self, "in_" if self.operator == "in" else self.operator)


class GroupCondition(_Strict):
    """``all`` (every one), ``any`` (at least one), ``none`` (not one); given keys are AND-ed."""

    all: list[Condition] | None = None
    any: list[Condition] | None = None
    none: list[Condition] | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> GroupCondition:
        if not self.model_fields_set & {"all", "any", "none"}:
            raise ValueError("a condition needs 'field' or one of all / any / none")
        return self


def _condition_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "field_condition" if "field" in value else "group_condition"
    return "field_condition" if isinstance(value, FieldCondition) else "group_condition"


Condition = Annotated[
    Annotated[FieldCondition, Tag("field_condition")]
    | Annotated[GroupCondition, Tag("group_condition")],
    Discriminator(_condition_tag),
]
CONDITION_TAGS = frozenset({"field_condition", "group_condition"})


class Actions(_Strict):
    """What a matching rule decides; unset fields leave the decision to others/defaults."""

    repository: str | None = None
    tags: list[str] = []
    classification: Classification | None = None
    policy: Policy | None = None

    @field_validator("repository")
    @classmethod
    def _valid_template(cls, value: str | None) -> str | None:
        if value is not None:
            if not value.strip():
                raise ValueError("repository must not be empty")
            parse_template(value)
        return value


class Rule(_Strict):
    """One routing rule: when ``match`` holds (no ``match``: always), apply ``actions``."""

    name: str | None = Field(default=None, min_length=1)
    description: str | None = None
    priority: int = 0
    override: bool = False
    match: Condition | None = None
    actions: Actions = Actions()


class Defaults(_Strict):
    """What applies when no rule sets a value."""

    classification: Classification = Classification.INTERNAL
    policy: Policy = Policy.PROTECT
    tags: list[str] = []


class RoutingConfig(_Strict):
    """A whole ``routing.yaml``."""

    version: Literal[1] = 1
    defaults: Defaults = Defaults()
    rules: list[Rule] = []

    @model_validator(mode="after")
    def _unique_names(self) -> RoutingConfig:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.name is None:
                continue
            if rule.name in seen:
                raise ValueError(f"rule name {rule.name!r} is used twice")
            seen.add(rule.name)
        return self


GroupCondition.model_rebuild()
Rule.model_rebuild()
RoutingConfig.model_rebuild()
