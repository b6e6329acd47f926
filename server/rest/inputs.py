"""The REST adapter's input types: the service's own input rules, published in OpenAPI.

Every rule here is the domain's (``domain.values``, ``domain.permissions``, ``domain.model``):
the regular expression a validator matches is the very ``pattern`` OpenAPI shows, the enums are
the service's enums, the length caps its ``MAX_*`` constants. A value that breaks a rule is
refused by FastAPI's validation (400 ``INVALID_ARGUMENT`` with ``problems``, see
``server.rest.errors``) with the service's own words, before the service runs; a value the
schema admits is one the service's validators admit too, so the document and the server cannot
drift apart.

Empty values: an optional **query** parameter, when sent, must be valid — ``?version_id=`` is
refused like any malformed id (the schema excludes it). The ``X-Ameide-*`` **headers** keep
their rule on every surface: an empty header counts as absent (the schema admits it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

from domain.errors import InvalidArgument
from domain.model import ChangeKind, ProposalStatus, RelationshipKind, SelectorKind
from domain.permissions import (
    ROLE_LIST_PATTERN,
    ROLE_NAMES,
    SUBJECT_PATTERN,
    Role,
    validate_subject,
)
from domain.values import (
    BODY_PATTERN,
    MAX_PURPOSE_CHARS,
    NOT_BLANK_PATTERN,
    PRINCIPAL_PATTERN,
    PRINCIPAL_RULE,
    REPOSITORY_PATTERN,
    SCOPE_PATTERN,
    SEGMENT_PATTERN,
    TYPE_KEY_PATTERN,
    Classification,
    ElementKind,
    RepoRef,
    id_pattern,
    parse_instant,
    parse_scope,
    validate_body,
    validate_id,
    validate_principal,
    validate_text,
    validate_type_key,
)


def _rule(check: Callable[[str], object]) -> AfterValidator:
    """Run a domain validator inside pydantic: its ``InvalidArgument`` becomes the problem."""

    def run(value: str) -> str:
        if value is not None:
            try:
                check(value)
            except InvalidArgument as refused:
                raise ValueError(refused.message) from None
        return value

    return AfterValidator(run)


def _matches(pattern: str, check: Callable[[str], object]) -> Callable[[str], object]:
    """``check`` (the domain's words), and the published pattern itself, exactly."""

    def run(value: str) -> None:
        check(value)
        if not re.fullmatch(pattern, value):  # same rule; guards a check that strips blanks
            raise InvalidArgument(f"{value!r} does not match {pattern}")

    return run


def _string(pattern: str | None = None, **schema: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", **schema}
    if pattern is not None:
        out["pattern"] = pattern
    return out


def constrained(check: Callable[[str], object], schema: dict[str, Any]) -> Any:
    """A string checked by ``check`` and documented as ``schema``."""
    return Annotated[str, _rule(check), WithJsonSchema(schema)]


def optional(check: Callable[[str], object], schema: dict[str, Any]) -> Any:
    """An optional parameter: absent is None; when sent, it must satisfy ``schema``.

    Its schema is the string's alone (no ``null``: a query string or header cannot send one)."""
    return Annotated[str | None, _rule(check), WithJsonSchema(schema)]


def identifier(prefix: str, what: str) -> dict[str, Any]:
    """The schema of an opaque id (``validate_id``)."""
    return _string(id_pattern(prefix), description=f"{what.capitalize()} id ({prefix}_…).")


def _id_check(prefix: str, what: str) -> Callable[[str], object]:
    return lambda value: validate_id(value, prefix, what)


def _id(prefix: str, what: str) -> Any:
    return constrained(_id_check(prefix, what), identifier(prefix, what))


ElementId = _id("el", "element")
VersionId = _id("ver", "version")
ProposalId = _id("prop", "proposal")
BaselineId = _id("bl", "baseline")
ContextId = _id("ctx", "context")
RelationshipId = _id("rel", "relationship")
TokenId = _id("tok", "token")
ElementIdParam = optional(_id_check("el", "element"), identifier("el", "element"))
VersionIdParam = optional(_id_check("ver", "version"), identifier("ver", "version"))
ProposalIdParam = optional(_id_check("prop", "proposal"), identifier("prop", "proposal"))

PRINCIPAL_SCHEMA = _string(PRINCIPAL_PATTERN, description="user:ID, agent:ID or service:ID.")
Principal = constrained(validate_principal, PRINCIPAL_SCHEMA)
PrincipalParam = optional(validate_principal, PRINCIPAL_SCHEMA)
SCOPE_SCHEMA = _string(SCOPE_PATTERN, description="*, TENANT, TENANT/ORG or TENANT/ORG/REPO.")
GrantScope = constrained(_matches(SCOPE_PATTERN, parse_scope), SCOPE_SCHEMA)
RepositoryId = constrained(
    _matches(REPOSITORY_PATTERN, RepoRef.parse),
    _string(REPOSITORY_PATTERN, description="TENANT/ORG/REPO, e.g. acme/eng/platform."),
)
TypeKey = constrained(
    validate_type_key, _string(TYPE_KEY_PATTERN, description="Namespaced, e.g. ameide:doc.")
)


def _segment(value: str) -> None:
    if not re.fullmatch(SEGMENT_PATTERN, value):
        RepoRef.parse(f"{value}/x/x")  # the repository rule's words
        raise InvalidArgument(f"malformed repository segment {value!r}", field="repository")


Segment = constrained(_segment, _string(SEGMENT_PATTERN))


def _enum_check(field: str, values: Iterable[str]) -> Callable[[str], object]:
    allowed = tuple(values)

    def run(value: str) -> None:
        if value not in allowed:
            raise InvalidArgument(
                f"unknown {field} {value!r}; use one of: {', '.join(allowed)}", field=field
            )

    return run


def one_of(field: str, enum: type[StrEnum], *, required: bool = True) -> Any:
    """One of an enum's values, exactly as the service spells them (``required=False``: an
    optional query parameter)."""
    values = [member.value for member in enum]
    schema = _string(enum=values)
    return (constrained if required else optional)(_enum_check(field, values), schema)


RoleName = one_of("role", Role)
DelegationSubject = constrained(
    lambda value: validate_subject(value, "on_behalf_of"),
    _string(
        SUBJECT_PATTERN,
        description="With the role delegate: whom the principal may act for — a principal, "
        "every principal of a kind (user:*) or anyone (*).",
    ),
)
ClassificationName = one_of("classification", Classification)
ElementKindName = one_of("element_kind", ElementKind)
RelationshipKindName = one_of("relationship_kind", RelationshipKind)
ProposalStatusParam = one_of("status", ProposalStatus, required=False)


class QueueOrder(StrEnum):
    """Which end of the queue comes first."""

    OLDEST = "oldest"
    NEWEST = "newest"


QueueOrderParam = one_of("order", QueueOrder, required=False)
ChangeKindName = one_of("change_kind", ChangeKind)
SelectorName = one_of("target selector", SelectorKind)


def _text_check(field: str, limit: int, *, required: bool) -> Callable[[str], object]:
    def run(value: str) -> None:
        if len(value) > limit:
            raise InvalidArgument(f"{field} is {len(value)} characters; the limit is {limit}")
        if required or value:  # an empty optional text is left out; a blank one is refused
            validate_text(value, field, limit)

    return run


def text_rule(field: str, limit: int, *, required: bool = True) -> AfterValidator:
    """Free text: at most ``limit`` characters, not blank (``required=False``: or empty, which
    the service reads as left out). ``validate_text`` is the rule."""
    return _rule(_text_check(field, limit, required=required))


def text_schema(limit: int, *, required: bool = True) -> WithJsonSchema:
    """The schema of :func:`text_rule`: ``NOT_BLANK_PATTERN`` is "a character ``strip`` keeps"."""
    pattern = NOT_BLANK_PATTERN if required else f"^$|{NOT_BLANK_PATTERN}"
    return WithJsonSchema(_string(pattern, maxLength=limit))


def note_rule(field: str, limit: int) -> AfterValidator:
    """Optional free text that may be blank (a reason, a rationale): only its length counts."""

    def run(value: str) -> None:
        if len(value) > limit:
            raise InvalidArgument(f"{field} is {len(value)} characters; the limit is {limit}")
        validate_text(value, field, limit, required=False)

    return _rule(run)


def note_schema(limit: int) -> WithJsonSchema:
    """The schema of :func:`note_rule`."""
    return WithJsonSchema(_string(maxLength=limit))


Body = constrained(
    validate_body, _string(BODY_PATTERN, description="Markdown/text, at most 2 MiB.")
)

ROLES_HEADER_SCHEMA = _string(ROLE_LIST_PATTERN)


def _roles(value: str) -> None:
    if re.fullmatch(ROLE_LIST_PATTERN, value):
        return
    for name in value.split(","):
        if name.strip() not in ROLE_NAMES:
            Role.parse(name)  # "unknown role 'x'; use one of: …" for a misspelt name
    raise InvalidArgument(f"malformed role list {value!r}: expected role, role, …", field="role")


def _empty_or(check: Callable[[str], object]) -> Callable[[str], object]:
    return lambda value: None if value == "" else check(value)


RolesHeader = optional(_roles, ROLES_HEADER_SCHEMA)
OnBehalfOfHeader = optional(
    _empty_or(lambda value: validate_principal(value, "on_behalf_of")),
    _string(f"^({PRINCIPAL_RULE})?$"),
)


def _purpose(value: str) -> None:
    if len(value) > MAX_PURPOSE_CHARS:
        raise InvalidArgument(
            f"purpose is longer than {MAX_PURPOSE_CHARS} characters", field="purpose"
        )


PurposeHeader = optional(_purpose, _string(maxLength=MAX_PURPOSE_CHARS))

_UNPARSABLE = "unparsable {name} {text!r}; use RFC 3339 with a zone, e.g. 2026-01-01T00:00:00Z"


def _instant(name: str) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return parse_instant(value, name, field=name, malformed=_UNPARSABLE)
        except InvalidArgument as refused:
            raise ValueError(refused.message) from None

    return run


_INSTANT_SCHEMA = WithJsonSchema(_string(format="date-time"))
"""An instant: RFC 3339 ``date-time`` with ``Z`` or an offset (``parse_instant``); a number is
not an instant."""
AsOf = Annotated[datetime | None, BeforeValidator(_instant("as_of")), _INSTANT_SCHEMA]
Since = Annotated[datetime | None, BeforeValidator(_instant("since")), _INSTANT_SCHEMA]
Until = Annotated[datetime | None, BeforeValidator(_instant("until")), _INSTANT_SCHEMA]
