"""Roles, the actions they allow, and clearance — the data behind the authorization gate."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from domain.errors import InvalidArgument
from domain.values import PRINCIPAL_RULE, Classification


class Action(StrEnum):
    """Things a principal may do in a repository."""

    READ = "read"
    PROPOSE = "propose"
    CURATE = "curate"
    PUBLISH = "publish"
    INGEST = "ingest"
    AUDIT = "audit"
    ADMIN = "admin"


class Role(StrEnum):
    """Roles granted per repository, organization or tenant."""

    READER = "reader"
    AGENT = "agent"
    CURATOR = "curator"
    PUBLISHER = "publisher"
    INGESTOR = "ingestor"
    AUDITOR = "auditor"
    ADMIN = "admin"

    @classmethod
    def parse(cls, value: str) -> Role:
        """Parse a role name or raise ``InvalidArgument`` listing the valid ones."""
        try:
            return cls(value.strip().lower())
        except ValueError:
            allowed = ", ".join(r.value for r in cls)
            raise InvalidArgument(
                f"unknown role {value!r}; use one of: {allowed}", field="role"
            ) from None


ROLE_NAMES: tuple[str, ...] = tuple(role.value for role in Role)
"""Every role name, in the order ``Role`` lists them."""
_ROLE_RULE = "(" + "|".join(ROLE_NAMES) + ")"
ROLE_LIST_PATTERN = f"^ *({_ROLE_RULE}( *, *{_ROLE_RULE})*)? *$"
"""Comma-separated role names (``reader, agent``), blanks around them allowed; empty is none
(the roles a REST caller claims in ``X-Ameide-Roles``)."""

ROLE_ACTIONS: dict[Role, frozenset[Action]] = {
    Role.READER: frozenset({Action.READ}),
    Role.AGENT: frozenset({Action.READ, Action.PROPOSE}),
    Role.CURATOR: frozenset({Action.READ, Action.CURATE}),
    Role.PUBLISHER: frozenset({Action.READ, Action.CURATE, Action.PUBLISH}),
    Role.INGESTOR: frozenset({Action.INGEST}),
    Role.AUDITOR: frozenset({Action.READ, Action.AUDIT}),
    Role.ADMIN: frozenset(Action),
}


def actions_of(roles: set[Role] | frozenset[Role]) -> frozenset[Action]:
    """Union of the actions the given roles allow."""
    out: set[Action] = set()
    for role in roles:
        out |= ROLE_ACTIONS[role]
    return frozenset(out)


DEFAULT_CLEARANCE = Classification.INTERNAL


def clearance_by_action(
    grants: Iterable[tuple[Role, Classification]], allowed: frozenset[Action]
) -> dict[Action, Classification]:
    """Clearance per allowed action: the highest clearance among the grants whose role allows
    that action. A grant never lends its clearance to an action its role does not allow (an
    ``ingestor`` grant at ``restricted`` gives no read clearance at all)."""
    out: dict[Action, Classification] = {}
    for role, level in grants:
        for action in ROLE_ACTIONS[role] & allowed:
            if action not in out or level.rank > out[action].rank:
                out[action] = level
    return out


def narrow_clearances(
    mine: Mapping[Action, Classification], other: Mapping[Action, Classification]
) -> dict[Action, Classification]:
    """Per action, the lower of two principals' clearances (acting on behalf of someone)."""
    return {
        action: min(level, other[action], key=lambda c: c.rank)
        for action, level in mine.items()
        if action in other
    }


def scope_matches(grant_scope: str, repo_key: str) -> bool:
    """Whether a grant scope (``*``, ``t``, ``t/o`` or ``t/o/r``) covers a repository."""
    if grant_scope == "*":
        return True
    return repo_key == grant_scope or repo_key.startswith(grant_scope + "/")


@dataclass(frozen=True)
class GrantRecord:
    """A role granted to a principal on a scope, with a clearance."""

    grant_id: str
    principal_id: str
    role: str
    scope_key: str
    clearance: str
    created_at: datetime
    created_by: str


DELEGATE = "delegate"
"""The grant that lets one principal act for another (``ameide grant X delegate --for Y``)."""

SUBJECT_PATTERN = rf"^({PRINCIPAL_RULE}|(user|agent|service):\*|\*)$"
"""Whom a delegation lets its holder act for: one principal, every principal of a kind
(``user:*``, for a gateway that acts for its users) or anyone (``*``)."""
_SUBJECT = re.compile(SUBJECT_PATTERN)


def validate_subject(value: str, field: str = "for") -> str:
    """A delegation's subject (:data:`SUBJECT_PATTERN`), or ``InvalidArgument``."""
    if not isinstance(value, str) or not _SUBJECT.fullmatch(value):
        raise InvalidArgument(
            f"malformed delegation subject {value!r}: expected a principal (user:ID, agent:ID, "
            "service:ID), every principal of a kind (user:*) or anyone (*)",
            field=field,
        )
    return value


def subject_matches(pattern: str, principal: str) -> bool:
    """Whether a delegation's subject pattern covers ``principal``."""
    if pattern == "*":
        return True
    if pattern.endswith(":*"):
        return principal.startswith(pattern[:-1])
    return pattern == principal


@dataclass(frozen=True)
class DelegationRecord:
    """``principal_id`` may act on behalf of ``on_behalf_of`` (a principal or a pattern) on
    repositories within ``scope_key``. Its effective permissions stay the intersection of both
    principals'; the delegation is what lets it name the other at all, and act as its owner
    (read, revise and withdraw the proposals made by or for it)."""

    delegation_id: str
    principal_id: str
    on_behalf_of: str
    scope_key: str
    created_at: datetime
    created_by: str

    def covers(self, subject: str, repo_key: str) -> bool:
        """Whether it lets its holder act for ``subject`` in ``repo_key``."""
        return subject_matches(self.on_behalf_of, subject) and scope_matches(
            self.scope_key, repo_key
        )


@dataclass(frozen=True)
class TokenRecord:
    """A bearer token (only its hash is stored)."""

    token_id: str
    principal_id: str
    created_at: datetime
    created_by: str
    revoked_at: datetime | None
    parent_token_id: str | None = None
    revoked_by: str | None = None
