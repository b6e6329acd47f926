"""The read_context request (product.md §4), validated at the edge of the service.

Every surface hands the service a plain dict (or this model); anything malformed becomes one
``InvalidArgument`` naming the field, before any work is done. Caps keep a single read bounded:
``budget.max_items`` 1–50, ``budget.max_chars`` 1–100,000, ``expand.hops`` 0–3,
``expand.max_nodes`` 1–100, a query of at most 1,000 characters, at most 100 element or
version ids.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from domain.errors import InvalidArgument
from domain.values import describe_problem, parse_instant, require_zone
from projection.selection import SELECTOR_KINDS
from service.read_limits import (
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
_UNPARSABLE = "unparsable instant {text!r}; use ISO-8601, e.g. 2026-01-01T00:00:00Z"


class Scope(BaseModel):
    """Tenant and organization, and the repository (omitted: every readable one of the org)."""

    model_config = _STRICT
    tenant_id: str
    organization_id: str
    repository_id: str | None = None

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


class PrincipalBlock(BaseModel):
    """Who asks, as the request states it (it can only narrow the authenticated caller)."""

    model_config = _STRICT
    principal_id: str | None = None
    roles: tuple[str, ...] = ()
    purpose: str | None = Field(default=None, max_length=500)
    on_behalf_of: str | None = None


class Selector(BaseModel):
    """Which canonical versions: the published baseline, a named one, heads, or listed ones."""

    model_config = _STRICT
    kind: str = "published"
    baseline_id: str | None = None
    version_ids: tuple[str, ...] = Field(default=(), max_length=MAX_IDS)

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
    hops: int = Field(default=DEFAULT_HOPS, ge=0, le=MAX_HOPS)
    relationship_types: tuple[str, ...] = Field(default=(), max_length=50)
    max_nodes: int = Field(default=DEFAULT_MAX_NODES, ge=1, le=MAX_NODES)


class Budget(BaseModel):
    """At most ``max_items`` items and ``max_chars`` characters of context block."""

    model_config = _STRICT
    max_items: int = Field(default=DEFAULT_MAX_ITEMS, ge=1, le=MAX_ITEMS)
    max_chars: int = Field(default=DEFAULT_MAX_CHARS, ge=1, le=MAX_CHARS)


class ReadRequest(BaseModel):
    """A read_context request (product.md §4)."""

    model_config = _STRICT
    scope: Scope
    principal: PrincipalBlock = PrincipalBlock()
    selector: Selector = Selector()
    query: str | None = Field(default=None, max_length=MAX_QUERY_CHARS)
    element_ids: tuple[str, ...] = Field(default=(), max_length=MAX_IDS)
    version_ids: tuple[str, ...] = Field(default=(), max_length=MAX_IDS)
    as_of: datetime | None = None
    valid_at: datetime | None = None
    include_evidence: bool = True
    expand: Expand = Expand()
    budget: Budget = Budget()
    detail_level: Literal["titles", "excerpt", "full"] = "excerpt"
    explain: bool = False

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
