"""The read_context request (docs/product.md §4), validated at the edge of the service.

Every surface hands the service a plain dict (or this model); anything malformed becomes one
``InvalidArgument`` naming the field, before any work is done. Caps keep a single read bounded:
``budget.max_items`` 1–50, ``budget.max_chars`` 1–100,000, ``expand.hops`` 0–3,
``expand.max_nodes`` 1–100, a query of at most 1,000 characters, at most 100 element or
version ids.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from domain.errors import InvalidArgument
from domain.permissions import ROLE_NAMES
from domain.values import (
    BLANK_PATTERN,
    MAX_PURPOSE_CHARS,
    NOT_BLANK_PATTERN,
    PRINCIPAL_PATTERN,
    SEGMENT_PATTERN,
    describe_problem,
    id_pattern,
    parse_instant,
    require_zone,
)
from projection.selection import SELECTOR_KINDS
from service.reading.limits import (
    DEFAULT_HOPS,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_NODES,
    MAX_CHARS,
    MAX_HOPS,
    MAX_IDS,
    MAX_ITEMS,
    MAX_NODES,
    MAX_QUERY_CHARS,
)

_STRICT = ConfigDict(extra="forbid", frozen=True)


def _json_integer(value: Any) -> Any:
    """A JSON integer (``8`` or ``8.0``), never a string or a boolean."""
    if isinstance(value, bool | str):
        raise ValueError("Input should be a valid integer")
    return value


JsonInt = Annotated[int, BeforeValidator(_json_integer)]
_UNPARSABLE = "unparsable instant {text!r}; use ISO-8601, e.g. 2026-01-01T00:00:00Z"


class Scope(BaseModel):
    """Tenant and organization, and the repository (omitted: every readable one of the org)."""

    model_config = _STRICT
    tenant_id: str = Field(json_schema_extra={"pattern": SEGMENT_PATTERN})
    organization_id: str = Field(json_schema_extra={"pattern": SEGMENT_PATTERN})
    repository_id: str | None = Field(default=None, json_schema_extra={"pattern": SEGMENT_PATTERN})

    @property
    def repo_key(self) -> str | None:
        """``tenant/org/repo`` or None for the whole organization."""
        if self.repository_id is None:
            return None
        return f"{self.tenant_id}/{self.organization_id}/{self.repository_id}"

    @property
    def org_key(self) -> str:
        """``tenant/org``."""
        return f"{self.tenant_id}/{self.organization_id}"


SELF_ONLY = (
    "Optional, and only ever the authenticated caller's own principal id (the token's, or the "
    "CLI's/MCP server's principal): it cannot name anyone else — to act for another principal "
    "use on_behalf_of with a delegation grant. Any other value is refused with 400 "
    "INVALID_ARGUMENT, details.field principal.principal_id. Leaving it out is the same as "
    "giving your own."
)
ON_BEHALF_OF = (
    "Act for this principal (a delegation grant is needed). When the request already acts on "
    "behalf of someone (X-Ameide-On-Behalf-Of, --on-behalf-of), only that same principal is "
    "accepted here; any other is 400 INVALID_ARGUMENT, details.field principal.on_behalf_of."
)


class PrincipalBlock(BaseModel):
    """Narrows the authenticated caller for this read; it never changes who the caller is.
    principal_id can only be the caller's own; roles only a subset of the roles the request
    claims; on_behalf_of only the delegation the request already states (or, when it states
    none, one the caller holds a grant for)."""

    model_config = _STRICT
    principal_id: str | None = Field(
        default=None, description=SELF_ONLY, json_schema_extra={"pattern": PRINCIPAL_PATTERN}
    )
    roles: tuple[str, ...] = Field(
        default=(),
        description="Read with only these of the roles the request claims (a subset: a role "
        "the request did not claim is 400 INVALID_ARGUMENT, details.field principal.roles).",
        json_schema_extra={"items": {"enum": list(ROLE_NAMES)}},
    )
    purpose: str | None = Field(
        default=None, max_length=MAX_PURPOSE_CHARS, description="Why you read (audited)."
    )
    on_behalf_of: str | None = Field(
        default=None, description=ON_BEHALF_OF, json_schema_extra={"pattern": PRINCIPAL_PATTERN}
    )


def _ids_of(prefix: str) -> dict[str, Any]:
    return {"items": {"type": "string", "pattern": id_pattern(prefix)}}


_INSTANT: dict[str, Any] = {  # what ReadRequest._instant reads: "" is left out
    "anyOf": [
        {"type": "string", "format": "date-time"},
        {"type": "string", "maxLength": 0},
        {"type": "null"},
    ]
}
_EMPTY: dict[str, Any] = {"type": "string", "maxLength": 0}
_BASELINE: dict[str, Any] = {  # an empty baseline_id is none, as Selector reads it
    "anyOf": [{"type": "string", "pattern": id_pattern("bl")}, _EMPTY, {"type": "null"}]
}
_ABSENT: dict[str, Any] = {"type": "null"}
_NO_BASELINE: dict[str, Any] = {"anyOf": [_ABSENT, _EMPTY]}
"""A JSON Schema ``properties`` entry for a field left out or ``null``."""
_NONE: dict[str, Any] = {"maxItems": 0}
_SOME: dict[str, Any] = {"minItems": 1}
SELECTOR_RULES: dict[str, Any] = {
    "anyOf": [  # the rules of Selector._baseline_only_for_baseline_ref, for OpenAPI
        {
            "properties": {
                "kind": {"enum": ["published", "head"]},
                "baseline_id": _NO_BASELINE,
                "version_ids": _NONE,
            }
        },
        {
            "required": ["kind", "baseline_id"],
            "properties": {
                "kind": {"const": "baseline_ref"},
                "baseline_id": {"type": "string", "pattern": id_pattern("bl")},
                "version_ids": _NONE,
            },
        },
        {
            "required": ["kind"],
            "properties": {"kind": {"const": "version_ref"}, "baseline_id": _NO_BASELINE},
        },
    ]
}


class Selector(BaseModel):
    """Which canonical versions: the published baseline, a named one, heads, or listed ones."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=SELECTOR_RULES)
    kind: str = Field(default="published", json_schema_extra={"enum": list(SELECTOR_KINDS)})
    baseline_id: str | None = Field(default=None, json_schema_extra=_BASELINE)
    version_ids: tuple[str, ...] = Field(
        default=(), max_length=MAX_IDS, json_schema_extra=_ids_of("ver")
    )

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in SELECTOR_KINDS:
            raise ValueError(f"unknown selector {kind!r}; use one of: {', '.join(SELECTOR_KINDS)}")
        return kind

    @model_validator(mode="after")
    def _baseline_only_for_baseline_ref(self) -> Selector:
        if self.kind == "baseline_ref" and not self.baseline_id:
            raise ValueError("selector baseline_ref needs a baseline_id")
        if self.kind != "baseline_ref" and self.baseline_id:
            raise ValueError(f"selector {self.kind} takes no baseline_id")
        if self.kind != "version_ref" and self.version_ids:
            raise ValueError(f"selector {self.kind} takes no version_ids")
        return self


class Expand(BaseModel):
    """Relationship expansion around the recalled elements."""

    model_config = _STRICT
    hops: JsonInt = Field(default=DEFAULT_HOPS, ge=0, le=MAX_HOPS)
    relationship_types: tuple[str, ...] = Field(default=(), max_length=50)
    max_nodes: JsonInt = Field(default=DEFAULT_MAX_NODES, ge=1, le=MAX_NODES)


class Budget(BaseModel):
    """At most ``max_items`` items and ``max_chars`` characters of context block."""

    model_config = _STRICT
    max_items: JsonInt = Field(default=DEFAULT_MAX_ITEMS, ge=1, le=MAX_ITEMS)
    max_chars: JsonInt = Field(default=DEFAULT_MAX_CHARS, ge=1, le=MAX_CHARS)


def _driving(driver: str | None) -> dict[str, Any]:
    """The request's recall is driven by ``driver`` alone (None: by ``selector.version_ids``)."""
    given = {
        "query": {"type": "string", "pattern": NOT_BLANK_PATTERN},
        "element_ids": _SOME,
        "version_ids": _SOME,
    }
    left_out = {
        "query": {"anyOf": [_ABSENT, {"type": "string", "pattern": BLANK_PATTERN}]},
        "element_ids": _NONE,
        "version_ids": _NONE,
    }
    properties = {name: given[name] if name == driver else left_out[name] for name in given}
    if driver is None:  # the version_ref selector's own version_ids drive it
        properties["selector"] = {"required": ["version_ids"], "properties": {"version_ids": _SOME}}
    elif driver != "version_ids":  # a version_ref selector needs version_ids somewhere
        properties["selector"] = {
            "anyOf": [
                {"properties": {"kind": {"enum": ["published", "baseline_ref", "head"]}}},
                {"required": ["version_ids"], "properties": {"version_ids": _SOME}},
            ]
        }
    required = [driver] if driver else ["selector"]
    return {"required": required, "properties": properties}


READ_RULES: dict[str, Any] = {
    "anyOf": [_driving(name) for name in ("query", "element_ids", "version_ids", None)]
}
"""The rules of ``ReadRequest._one_recall_driver`` for OpenAPI: exactly one of a non-blank
``query``, ``element_ids`` or ``version_ids`` (or only a version_ref selector's version_ids)."""


class ReadRequest(BaseModel):
    """A read_context request (docs/product.md §4)."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=READ_RULES)
    scope: Scope
    principal: PrincipalBlock = PrincipalBlock()
    selector: Selector = Selector()
    query: str | None = Field(default=None, max_length=MAX_QUERY_CHARS)
    element_ids: tuple[str, ...] = Field(
        default=(), max_length=MAX_IDS, json_schema_extra=_ids_of("el")
    )
    version_ids: tuple[str, ...] = Field(
        default=(), max_length=MAX_IDS, json_schema_extra=_ids_of("ver")
    )
    as_of: datetime | None = Field(default=None, json_schema_extra=_INSTANT)
    valid_at: datetime | None = Field(default=None, json_schema_extra=_INSTANT)
    include_evidence: StrictBool = True
    expand: Expand = Expand()
    budget: Budget = Budget()
    detail_level: Literal["titles", "excerpt", "full"] = "excerpt"
    explain: StrictBool = False

    @field_validator("as_of", "valid_at", mode="before")
    @classmethod
    def _instant(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        try:  # the one instant rule (domain.values), worded as this request always was
            if isinstance(value, str):
                return parse_instant(value, "the instant", field="", malformed=_UNPARSABLE)
            if isinstance(value, datetime):
                return require_zone(value, "the instant", field="")
        except InvalidArgument as refused:
            raise ValueError(refused.message) from None
        raise ValueError("expected an ISO-8601 instant")

    @model_validator(mode="after")
    def _one_recall_driver(self) -> ReadRequest:
        query = (self.query or "").strip()
        drivers = [
            name
            for name, given in (
                ("query", query),
                ("element_ids", self.element_ids),
                ("version_ids", self.version_ids),
            )
            if given
        ]
        if len(drivers) > 1:
            raise ValueError(
                f"give exactly one of query, element_ids, version_ids (got {', '.join(drivers)})"
            )
        if not drivers and not self.selector.version_ids:
            raise ValueError("empty query: give a query, element_ids or version_ids")
        if self.selector.kind == "version_ref" and not self.wanted_version_ids:
            raise ValueError("selector version_ref needs version_ids")
        return self

    @property
    def recall(self) -> str:
        """What drives recall: ``query``, ``element_ids`` or ``version_ids``."""
        if self.element_ids:
            return "element_ids"
        if self.version_ids or not (self.query or "").strip():
            return "version_ids"
        return "query"

    @property
    def wanted_version_ids(self) -> tuple[str, ...]:
        """The versions named for direct fetch (top-level, else the version_ref selector's)."""
        return self.version_ids or self.selector.version_ids


def parse_request(request: ReadRequest | dict[str, Any]) -> ReadRequest:
    """Validate a request, or raise one ``InvalidArgument`` listing every problem."""
    if isinstance(request, ReadRequest):
        return request
    if not isinstance(request, dict):
        raise InvalidArgument("the request must be a JSON object")
    try:
        return ReadRequest.model_validate(request)
    except ValidationError as exc:
        problems = [_problem(error) for error in exc.errors()]
        raise InvalidArgument(
            "invalid read_context request: " + "; ".join(problems),
            problems=problems,
            caps={
                "max_items": MAX_ITEMS,
                "max_chars": MAX_CHARS,
                "hops": MAX_HOPS,
                "max_nodes": MAX_NODES,
            },
        ) from None


def _problem(error: Any) -> str:
    if error.get("type") == "extra_forbidden":
        error = {**error, "msg": "unknown field"}
    return describe_problem(error)
